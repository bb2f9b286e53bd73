"""The click group of every ``kdump`` command (``kdump files`` is also reachable without it: see
:func:`kdump.cli.main`)."""

from __future__ import annotations

import importlib
import sys

import click

from kdump import KAFKA_COMPAT_VERSION, __version__
from kdump.cli import run_guarded

_PASSTHROUGH = {"ignore_unknown_options": True, "allow_extra_args": True, "help_option_names": []}


EPILOG = """\b
More help:
  kdump help files     kafka-dump-log.sh's options and kdump's own
                       (kdump files --help: Kafka's table alone, as Kafka)
  kdump help COMMAND   the options of COMMAND (or kdump COMMAND -h)
  man kdump            the manual (man kdump-files, man kdump-ls, ...)

\b
Shell completion (click's), e.g. in ~/.bashrc:
  eval "$(_KDUMP_COMPLETE=bash_source kdump)"     (zsh_source, fish_source)
"""


@click.group(context_settings={"help_option_names": ["-h", "--help"]}, epilog=EPILOG)
@click.version_option(
    __version__, prog_name="kdump", message=f"%(prog)s %(version)s (Kafka {KAFKA_COMPAT_VERSION} compatible)"
)
@click.option(
    "--color",
    type=click.Choice(("auto", "always", "never")),
    default=None,
    help="Colour on terminals: auto (default; never with NO_COLOR set), always, never.",
)
def cli(color: str | None) -> None:
    """kdump: an offline forensic inspector for Apache Kafka's on-disk data.

    `kdump files` is a drop-in replacement for kafka-dump-log.sh: same options, byte-identical output.
    """
    if color is not None:
        from kdump.render import color as colors

        colors.mode = color


@cli.command("files", context_settings=_PASSTHROUGH, add_help_option=False)
@click.argument("args", nargs=-1, type=click.UNPROCESSED)
def files_command(args: tuple[str, ...]) -> None:
    """Dump segments, indexes, snapshots and checkpoints exactly as kafka-dump-log.sh does.

    Takes kafka-dump-log.sh's options and kdump's own (see `kdump help files`, `kdump files -h` or man
    kdump-files); paths may also be given as arguments.
    """
    from kdump.cli import files

    sys.exit(run_guarded(lambda out, err: files.run(list(args), out, err)))


#: Modules of kdump/cli that each define ``command`` (a click command or group), added to ``cli`` in this
#: order.  They import only click at module level, so ``kdump files`` starts as fast as before.
SUBCOMMAND_MODULES = (
    "verify",
    "verify_index",
    "ls",
    "find",
    "rebuild_index",
    "spark",
    "salvage",
    "txn",
    "retention",
    "diff",
    "help",
)


def _register_subcommands() -> None:
    for name in SUBCOMMAND_MODULES:
        cli.add_command(importlib.import_module(f"kdump.cli.{name}").command)


_register_subcommands()
