"""The click group of every ``kdump`` command (``kdump files`` is also reachable without it: see
:func:`kdump.cli.main`)."""

from __future__ import annotations

import importlib
import sys

import click
from click.shell_completion import CompletionItem

from kdump import KAFKA_COMPAT_VERSION, __version__
from kdump.cli import run_guarded

_PASSTHROUGH = {"ignore_unknown_options": True, "allow_extra_args": True, "help_option_names": []}


EPILOG = """\b
More help:
  kdump help files      kafka-dump-log.sh's options and kdump's own
                        (kdump files --help: Kafka's table alone, as Kafka)
  kdump help COMMAND    the options of COMMAND (or kdump COMMAND -h)
  kdump help --man [COMMAND]
                        the manual page, after any install
  man kdump             the manual (man kdump-files, ...) after either install
                        in an activated environment (pip install . or -e .)

\b
Shell completion (click's), e.g. in ~/.bashrc:
  eval "$(_KDUMP_COMPLETE=bash_source kdump)"     (zsh_source, fish_source)
"""


#: Modules of kdump/cli that each define ``command`` (a click command or group), by the command's name.  They
#: import only click at module level, so ``kdump files`` starts as fast as before.
SUBCOMMANDS = {
    "verify": "verify",
    "verify-index": "verify_index",
    "ls": "ls",
    "find": "find",
    "rebuild-index": "rebuild_index",
    "spark": "spark",
    "salvage": "salvage",
    "txn": "txn",
    "retention": "retention",
    "diff": "diff",
    "report": "report",
    "tiered": "tiered",
    "help": "help",
}
SUBCOMMAND_MODULES = tuple(SUBCOMMANDS.values())


class _LazyGroup(click.Group):
    """The ``kdump`` group: a command's module (its options, their types and help) is imported when that
    command is asked for, so ``kdump verify`` loads no other command's module; ``kdump --help`` and completion
    ask for every one (the same listing as with all of them registered up front)."""

    def get_command(self, ctx: click.Context, cmd_name: str) -> click.Command | None:
        if cmd_name not in self.commands and cmd_name in SUBCOMMANDS:
            self.add_command(importlib.import_module(f"kdump.cli.{SUBCOMMANDS[cmd_name]}").command)
        return self.commands.get(cmd_name)

    def list_commands(self, ctx: click.Context) -> list[str]:
        return sorted({*self.commands, *SUBCOMMANDS})


@click.group(cls=_LazyGroup, context_settings={"help_option_names": ["-h", "--help"]}, epilog=EPILOG)
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


#: Options of ``kdump files`` whose value is a path (``--files`` a comma-separated list of them).
_PATH_OPTIONS = ("--files", "--schemas", "--schema-id-map")


class _FilesCommand(click.Command):
    """``kdump files`` is parsed by its own jopt-simple parser (:mod:`kdump.cli.jopt`), not click: its options
    are completed here from that parser's tables (Kafka's and kdump's own)."""

    def shell_complete(self, ctx: click.Context, incomplete: str) -> list[CompletionItem]:
        from kdump.cli.files import KDUMP_OPTIONS, OPTIONS

        names = [f"--{o.name}" for o in (*OPTIONS, *KDUMP_OPTIONS)] + ["-h"]
        return [CompletionItem(n) for n in names if n.startswith(incomplete)]


def _complete_files_argument(
    ctx: click.Context, param: click.Parameter, incomplete: str
) -> list[CompletionItem]:
    """A path after ``--files`` (or as an argument): the shell's own file completion; after a comma of
    ``--files a.log,b<TAB>``, the names that complete the last item."""
    from kdump.cli.files import KDUMP_OPTIONS, OPTIONS

    words = list(ctx.params.get("args") or ())
    previous = words[-1] if words else ""
    takes_value = {f"--{o.name}" for o in (*OPTIONS, *KDUMP_OPTIONS) if o.arg == "required"}
    if previous in takes_value and previous not in _PATH_OPTIONS:
        return []  # a number, a time, a key: nothing to complete
    if "," not in incomplete:
        return [CompletionItem(incomplete, type="file")]
    import glob
    import os

    head, _, last = incomplete.rpartition(",")
    return [
        CompletionItem(f"{head},{m}{'/' if os.path.isdir(m) else ''}")
        for m in sorted(glob.glob(glob.escape(last) + "*"))
    ]


@cli.command("files", cls=_FilesCommand, context_settings=_PASSTHROUGH, add_help_option=False)
@click.argument("args", nargs=-1, type=click.UNPROCESSED, shell_complete=_complete_files_argument)
def files_command(args: tuple[str, ...]) -> None:
    """Dump segments, indexes, snapshots and checkpoints exactly as kafka-dump-log.sh does.

    Takes kafka-dump-log.sh's options and kdump's own (see `kdump help files`, `kdump files -h` or man
    kdump-files); paths may also be given as arguments.
    """
    from kdump.cli import files

    sys.exit(run_guarded(lambda out, err: files.run(list(args), out, err)))


def all_commands() -> dict[str, click.Command]:
    """Every command of ``kdump``, by name (their modules imported)."""
    ctx = click.Context(cli)
    found = {name: cli.get_command(ctx, name) for name in cli.list_commands(ctx)}
    return {name: command for name, command in found.items() if command is not None}
