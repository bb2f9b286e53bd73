"""The ``kdump`` command line: a thin layer over the storage core and the renderers."""

from __future__ import annotations

import os
import sys
from collections.abc import Callable
from typing import BinaryIO

import click

from kdump import KAFKA_COMPAT_VERSION, __version__
from kdump.errors import KdumpError
from kdump.render.output import Output

EXIT_OK = 0
EXIT_ERROR = 1


def run_guarded(
    body: Callable[[Output, Output], int], stdout: BinaryIO | None = None, stderr: BinaryIO | None = None
) -> int:
    """Run a command with buffered stdout/stderr; turn every error into one line on stderr and exit 1.

    A closed pipe (``kdump files ... | head``) ends the run quietly with status 0, as Kafka's tool (which
    ignores write errors) would also end with 0.
    """
    out = Output(stdout if stdout is not None else sys.stdout.buffer)
    err = Output(stderr if stderr is not None else sys.stderr.buffer, chunk=1)
    try:
        status = body(out, err)
        out.flush()
        err.flush()
        return status
    except BrokenPipeError:
        _silence_stdout()
        return EXIT_OK
    except KdumpError as e:
        _flush_quietly(out)
        _report(err, e.describe())
        return EXIT_ERROR
    except KeyboardInterrupt:
        _flush_quietly(out)
        _report(err, "interrupted")
        return 130
    except MemoryError:
        out.parts.clear()  # the pending text may be what exhausted memory: writing it would fail again
        out.pending = 0
        _flush_quietly(out)
        _report(err, "out of memory")
        return EXIT_ERROR
    except Exception as e:  # noqa: BLE001 - the last line of defence: one line, never a traceback
        if os.environ.get("KDUMP_DEBUG"):
            raise
        _flush_quietly(out)
        _report(
            err, f"internal error ({type(e).__name__}: {e}); please report it (KDUMP_DEBUG=1 shows where)"
        )
        return EXIT_ERROR


def _flush_quietly(out: Output) -> None:
    try:
        out.flush()
    except BrokenPipeError:
        _silence_stdout()


def _report(err: Output, message: str) -> None:
    try:
        err.write(f"kdump: {message}\n")
        err.flush()
    except BrokenPipeError:
        pass


def _silence_stdout() -> None:
    try:
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
    except OSError:
        pass


_PASSTHROUGH = {"ignore_unknown_options": True, "allow_extra_args": True, "help_option_names": []}


@click.group(context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(
    __version__, prog_name="kdump", message=f"%(prog)s %(version)s (Kafka {KAFKA_COMPAT_VERSION} compatible)"
)
def cli() -> None:
    """kdump: an offline forensic inspector for Apache Kafka's on-disk data.

    `kdump files` is a drop-in replacement for kafka-dump-log.sh: same options, byte-identical output.
    """


@cli.command("files", context_settings=_PASSTHROUGH, add_help_option=False)
@click.argument("args", nargs=-1, type=click.UNPROCESSED)
def files_command(args: tuple[str, ...]) -> None:
    """Dump segments, indexes, snapshots and checkpoints exactly as kafka-dump-log.sh does.

    Takes kafka-dump-log.sh's options (see `kdump files --help` or man kdump-files); paths may also be given
    as arguments.
    """
    from kdump.cli import files

    sys.exit(run_guarded(lambda out, err: files.run(list(args), out, err)))


#: Modules of kdump/cli that each define ``command`` (a click command or group), added to ``cli`` in this
#: order.  They import only click at module level, so ``kdump files`` starts as fast as before.
SUBCOMMAND_MODULES = ("verify_index", "ls", "find", "rebuild_index", "spark", "salvage")


def _register_subcommands() -> None:
    import importlib

    for name in SUBCOMMAND_MODULES:
        cli.add_command(importlib.import_module(f"kdump.cli.{name}").command)


_register_subcommands()


def main() -> None:
    """Console-script entry point."""
    cli.main(prog_name="kdump")
