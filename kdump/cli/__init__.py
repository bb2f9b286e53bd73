"""The ``kdump`` command line: a thin layer over the storage core and the renderers.

This package's top level imports no click: ``kdump files`` (the kafka-dump-log.sh replacement, run in
pipelines many times over) goes straight to its own jopt-simple parser; every other command goes through the
click group in :mod:`kdump.cli.commands`, imported on first use (``kdump.cli.cli`` is that group).
"""

from __future__ import annotations

import os
import sys
from collections.abc import Callable
from typing import BinaryIO

from kdump.errors import KdumpError
from kdump.exit_status import ExitStatus
from kdump.render.output import Output, OutputError


def run_guarded(
    body: Callable[[Output, Output], int], stdout: BinaryIO | None = None, stderr: BinaryIO | None = None
) -> int:
    """Run a command with buffered stdout/stderr; turn every error into one line on stderr and exit 1.

    A closed pipe (``kdump files ... | head``) ends the run quietly with status 0, as Kafka's tool (which
    ignores write errors) would also end with 0.
    """
    out = Output(stdout if stdout is not None else sys.stdout.buffer)
    err = Output(stderr if stderr is not None else sys.stderr.buffer, chunk=1, name="standard error")
    try:
        status = body(out, err)
        out.flush()
        err.flush()
        return status
    except BrokenPipeError:
        _silence_stdout()
        return ExitStatus.OK
    except OutputError as e:
        out.parts.clear()  # the output cannot take them; report the failure once, on the other stream
        out.pending = 0
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
        out.parts.clear()  # the pending text may be what exhausted memory: writing it would fail again
        out.pending = 0
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


def table_width(as_json: bool = False) -> int | None:
    """The width tables are fitted to: the terminal's when standard output is one (and not ``--json``), else
    None (plain text for a pipe)."""
    if as_json or not sys.stdout.isatty():
        return None
    import shutil

    return shutil.get_terminal_size().columns


def _flush_quietly(out: Output) -> None:
    try:
        out.flush()
    except BrokenPipeError:
        _silence_stdout()
    except OutputError:
        out.parts.clear()
        out.pending = 0


def _report(err: Output, message: str) -> None:
    try:
        err.write(f"kdump: {message}\n")
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
        from kdump.cli import files

        sys.exit(run_guarded(lambda out, err: files.run(argv[1:], out, err)))
    from kdump.cli.commands import cli

    cli.main(prog_name="kdump")


def __getattr__(name: str) -> object:
    if name in ("cli", "SUBCOMMAND_MODULES"):
        from kdump.cli import commands

        return getattr(commands, name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
