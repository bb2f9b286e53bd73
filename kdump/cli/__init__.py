"""The ``kdump`` command line: a thin layer over the storage core and the renderers.

This package's top level imports no click: ``kdump files`` (the kafka-dump-log.sh replacement, run in
pipelines many times over) goes straight to its own jopt-simple parser; every other command goes through the
click group in :mod:`kdump.cli.commands`, imported on first use (``kdump.cli.cli`` is that group).
"""

from __future__ import annotations

import os
import sys
from collections.abc import Callable
from typing import TYPE_CHECKING, BinaryIO, NoReturn, TypeVar

from kdump.errors import KdumpError
from kdump.exit_status import ExitStatus
from kdump.facts.output import Output, OutputError
from kdump.render.safe_text import safe_text
from kdump.storage import locations

if TYPE_CHECKING:
    from kdump.facts.report import ReportSink
    from kdump.render.tables import Section

F = TypeVar("F")


def run_guarded(
    body: Callable[[Output, Output], int],
    stdout: BinaryIO | None = None,
    stderr: BinaryIO | None = None,
    *,
    fit_lines: bool = False,
) -> int:
    """Run a command with buffered stdout/stderr; turn every error into one line on stderr and exit 1.

    A closed pipe (``kdump files ... | head``) ends the run quietly with status 0, as Kafka's tool (which
    ignores write errors) would also end with 0.  ``fit_lines`` (kdump's own text, never ``kdump files`` nor
    JSON): on a terminal, lines wider than it are broken between words (:mod:`kdump.render.line_fit`).
    """
    out_stream = stdout if stdout is not None else sys.stdout.buffer
    err_stream = stderr if stderr is not None else sys.stderr.buffer
    width = _terminal_columns() if fit_lines else None
    out: Output
    err: Output
    if width is not None:
        from kdump.render.line_fit import FittedOutput

        out = FittedOutput(out_stream, width) if _isatty(out_stream) else Output(out_stream)
        err = (
            FittedOutput(err_stream, width, chunk=1, name="standard error")
            if _isatty(err_stream)
            else Output(err_stream, chunk=1, name="standard error")
        )
    else:
        out = Output(out_stream)
        err = Output(err_stream, chunk=1, name="standard error")
    try:
        return _run(body, out, err)
    finally:
        _store_stats(err)


def _store_stats(err: Output) -> None:
    """``KDUMP_STORE_STATS=1``: what the run fetched from object stores, one line on standard error.  What
    the run fetched and was told of the stores is then given up (the next run in this process asks again)."""
    store = sys.modules.get("kdump.storage.object_store")
    if store is None:
        return
    store.end_of_run()
    if not os.environ.get("KDUMP_STORE_STATS"):
        return
    try:
        err.write(store.STATS.line() + "\n")
        err.flush()
    except (BrokenPipeError, OutputError):
        pass


def _run(body: Callable[[Output, Output], int], out: Output, err: Output) -> int:
    try:
        status = body(out, err)
        out.flush()
        err.flush()
        return status
    except BrokenPipeError:
        _silence_stdout()
        return ExitStatus.OK
    except OutputError as e:
        out.discard()  # the output cannot take them; report the failure once, on the other stream
        _report(err, e.describe())
        return ExitStatus.PROBLEMS
    except KdumpError as e:
        _flush_quietly(out)
        _report(err, e.describe())
        return int(e.exit_status)
    except KeyboardInterrupt:
        _flush_quietly(out)
        _report(err, "interrupted")
        return ExitStatus.INTERRUPTED
    except MemoryError:
        out.discard()  # the pending text may be what exhausted memory: writing it would fail again
        _flush_quietly(out)
        _report(err, "out of memory")
        return ExitStatus.PROBLEMS
    except Exception as e:  # noqa: BLE001 - the last line of defence: one line, never a traceback
        if os.environ.get("KDUMP_DEBUG"):
            raise
        _flush_quietly(out)
        _report(
            err, f"internal error ({type(e).__name__}: {e}); please report it (KDUMP_DEBUG=1 shows where)"
        )
        return ExitStatus.PROBLEMS


def _isatty(stream: BinaryIO) -> bool:
    try:
        return stream.isatty()
    except (AttributeError, ValueError):
        return False


def _terminal_columns() -> int | None:
    """The terminal's width when standard output or standard error is one, else None."""
    if not (_isatty(sys.stdout.buffer) or _isatty(sys.stderr.buffer)):
        return None
    import shutil

    return shutil.get_terminal_size().columns


def table_width(as_json: bool = False) -> int | None:
    """The width tables are fitted to: the terminal's when standard output is one (and not ``--json``), else
    None (plain text for a pipe)."""
    if as_json or not sys.stdout.isatty():
        return None
    import shutil

    return shutil.get_terminal_size().columns


def directory_arguments(paths: tuple[str, ...] | list[str]) -> list[str]:
    """The one rule for the PATH arguments of the commands that read directories (``ls``, ``txn``,
    ``retention``, ``diff``): none means the current directory; a plain file among them (a shell glob such as
    ``DIR/[a-z]*`` catching ``bootstrap.checkpoint``) is skipped with one line on standard error, and the run
    goes on over the directories; only plain files is a usage error (status 2)."""
    import click

    if not paths:
        paths = ["."]
    # `.` or `..` as its absolute path, so that a partition directory named so still has its name
    kept = [
        locations.abspath(p) if os.path.basename(os.path.normpath(p)) in (".", "..", "") else p
        for p in paths
        if locations.isdir(p)
    ]
    for p in paths:
        if not locations.isdir(p):
            sys.stderr.write(
                fit_for_stderr(
                    f"kdump: {p}: not a directory (a partition or log directory is expected); skipped\n"
                )
            )
    if not kept:
        raise click.UsageError("no directory among the paths given")
    return kept


def make_parents(output: str) -> None:
    """The one rule for output paths of every command (``salvage --out``, ``spark export -o``, ``spark verify
    -o``): the missing parent directories of ``output`` are created.  OSError (with the path) when one cannot be."""
    parent = os.path.dirname(os.path.abspath(output))
    try:
        os.makedirs(parent, exist_ok=True)
    except OSError as e:
        raise OSError(e.errno, f"{parent}: cannot create the directory for {output}: {e.strerror}") from None


def run_report(
    run: Callable[[ReportSink[F]], int],
    *,
    as_json: bool,
    sections: Callable[[list[F], bool], list[Section]],
    json_lines: Callable[[list[F]], str],
    wide: bool = False,
) -> NoReturn:
    """Run a reporting command (``run(sink)`` hands its facts to the sink and returns its exit status) with
    the sink the output asks for: JSON lines with ``--json``; else its sections as a table (``sections(facts,
    human)``), fitted to the terminal and in human units on one (``wide``: never leave a column out), plain in a
    pipe."""
    from kdump.render.report import JsonSink, TableSink

    width = table_width(as_json)

    def body(out: Output, err: Output) -> int:
        sink: ReportSink[F] = (
            JsonSink(out, json_lines)
            if as_json
            else TableSink(
                out, lambda facts: sections(facts, width is not None), terminal_width=width, wide=wide
            )
        )
        return int(run(sink))

    sys.exit(run_guarded(body, fit_lines=not as_json))


def _flush_quietly(out: Output) -> None:
    try:
        out.flush()
    except BrokenPipeError:
        _silence_stdout()
    except OutputError:
        out.discard()


def _report(err: Output, message: str) -> None:
    try:
        err.write(f"kdump: {safe_text(message)}\n")  # names from disk never reach a terminal raw
        err.flush()
    except (BrokenPipeError, OutputError):
        pass


def _silence_stdout() -> None:
    try:
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
    except OSError:
        pass


def main() -> None:
    """Console-script entry point."""
    argv = sys.argv[1:]
    if argv[:1] == ["files"]:
        import gc

        # kafka-dump-log.sh's replacement starts in pipelines many times over: its imports make thousands of
        # objects that live as long as the process and hold no garbage, so the collector neither runs while
        # they are made nor looks through them afterwards (frozen; it still collects what the run makes).
        gc.disable()
        from kdump.cli import files

        gc.freeze()
        gc.enable()
        sys.exit(run_guarded(lambda out, err: files.run(argv[1:], out, err)))
    import click

    from kdump.cli.commands import cli

    try:
        status = cli.main(prog_name="kdump", standalone_mode=False)
    except click.ClickException as e:  # a usage error: click's text, fitted to a terminal
        import io

        text = io.StringIO()
        e.show(file=text)
        sys.stderr.write(fit_for_stderr(text.getvalue()))
        sys.exit(e.exit_code)
    except click.exceptions.Abort:
        sys.stderr.write("Aborted!\n")
        sys.exit(1)  # as click's standalone mode
    sys.exit(status if isinstance(status, int) else 0)


def fit_for_stderr(text: str) -> str:
    """``text`` (whole lines) fitted to the terminal when standard error is one (:mod:`kdump.render.line_fit`),
    else itself: for the lines written to standard error outside :func:`run_guarded` (usage errors, skipped
    paths)."""
    if not _isatty(sys.stderr):  # type: ignore[arg-type]
        return text
    import shutil

    from kdump.render.line_fit import fit_line

    width = shutil.get_terminal_size().columns
    return "".join("\n".join(fit_line(line, width)) + "\n" for line in text.splitlines())


def __getattr__(name: str) -> object:
    if name in ("cli", "SUBCOMMAND_MODULES"):
        from kdump.cli import commands

        return getattr(commands, name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
