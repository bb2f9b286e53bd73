"""``kdump diff``: compare copies of a partition (replicas) batch by batch."""

from __future__ import annotations

import sys

import click


@click.command("diff")
@click.argument(
    "paths", nargs=-1, required=True, type=click.Path(exists=True, file_okay=False, dir_okay=True)
)
@click.option("--json", "as_json", is_flag=True, help="One JSON object per partition.")
@click.option("--wide", is_flag=True, help="On a terminal, every column, however wide the table gets.")
def command(paths: tuple[str, ...], as_json: bool, wide: bool) -> None:
    """Did replicas diverge? Compare two or more copies of a partition (partition directories, or log
    directories whose partitions are matched by name) batch by batch from their headers (offsets, CRCs,
    leader epochs): the first divergence, each copy's leader-epoch lineage, the truncation each copy would do
    as a follower of each other one, and the offsets present on one copy only. Exits 1 when copies differ.
    """
    from kdump.cli import run_guarded, table_width
    from kdump.commands.diff import DiffCommand
    from kdump.exit_status import ExitStatus
    from kdump.render import diff as render
    from kdump.render import tables

    try:
        cmd = DiffCommand(list(paths))
    except ValueError as e:
        raise click.UsageError(str(e)) from None
    width = table_width(as_json)

    def body(out, err) -> int:  # type: ignore[no-untyped-def]
        facts = cmd.facts()
        if as_json:
            out.write(render.json_lines(facts))
        else:
            tables.write(out, render.sections(facts), terminal_width=width, wide=wide)
        return int(ExitStatus.PROBLEMS if any(p.diverged for p in facts) else ExitStatus.OK)

    sys.exit(run_guarded(body))
