"""``kdump diff``: compare copies of a partition (replicas) batch by batch."""

from __future__ import annotations

import click

from kdump.cli.path_args import Location


@click.command("diff")
@click.argument("paths", nargs=-1, required=True, type=Location(exists=True, file_okay=True, dir_okay=True))
@click.option("--json", "as_json", is_flag=True, help="One JSON object per partition.")
@click.option("--wide", is_flag=True, help="On a terminal, every column, however wide the table gets.")
def command(paths: tuple[str, ...], as_json: bool, wide: bool) -> None:
    """Did replicas diverge? Compare two or more copies of a partition (partition directories, or log
    directories whose partitions are matched by name) batch by batch from their headers (offsets, CRCs,
    leader epochs): the first divergence, each copy's leader-epoch lineage, the truncation each copy would do
    as a follower of each other one, and the offsets present on one copy only. Exits 1 when copies differ.
    """
    from kdump.cli import directory_arguments, run_report
    from kdump.commands.diff import DiffCommand
    from kdump.render import diff as render

    try:
        cmd = DiffCommand(directory_arguments(paths))
    except ValueError as e:
        raise click.UsageError(str(e)) from None
    run_report(
        cmd.run,
        as_json=as_json,
        wide=wide,
        sections=lambda facts, human: render.sections(facts),
        json_lines=render.json_lines,
    )
