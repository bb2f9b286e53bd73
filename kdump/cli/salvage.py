"""``kdump salvage``: copy every intact batch of a damaged segment into a clean new segment with fresh indexes."""

from __future__ import annotations

import os
import sys

import click

from kdump.cli.path_args import LocalOutput, Location


@click.command("salvage")
@click.argument("segment", type=Location(exists=True, dir_okay=False))
@click.option(
    "--out",
    "out_dir",
    required=True,
    type=LocalOutput(file_okay=False),
    help="Directory for the new segment and its indexes (created if needed; never the input's own directory).",
)
@click.option(
    "--json", "as_json", is_flag=True, help="One JSON object per lost range and gap, then a summary object."
)
@click.option(
    "--index-interval-bytes",
    type=click.IntRange(min=0),
    default=4096,
    show_default=True,
    metavar="N",
    help="Bytes between entries of the new offset index (the topic's index.interval.bytes).",
)
def command(segment: str, out_dir: str, as_json: bool, index_interval_bytes: int) -> None:
    """Salvage SEGMENT (a .log or a KRaft .checkpoint): skip corrupt regions, resynchronising on the next batch
    whose CRC verifies, and write every intact batch into OUT/<same name> with a fresh .index and .timeindex.

    Prints each lost byte range and offset gap, then a summary. The input is never modified. Exits 0 when
    nothing was lost, 1 when something was lost (the new segment is still written) or on an error, 2 on
    usage errors (including an output directory that is the input's own, or output files that exist).
    """
    from kdump.cli import run_guarded
    from kdump.commands import salvage
    from kdump.render.salvage_report import report

    try:
        salvage.check_output_dir(segment, out_dir)
    except salvage.SalvageError as e:
        raise click.UsageError(e.message) from None
    target = salvage.output_path_for(segment, out_dir)
    if os.path.lexists(target):
        raise click.UsageError(f"{target} exists; salvage does not overwrite files")

    def body(out, err) -> int:  # noqa: ANN001
        return salvage.run(
            segment,
            out_dir,
            lambda result: out.write(report(result, as_json=as_json)),
            index_interval_bytes=index_interval_bytes,
        )

    sys.exit(run_guarded(body, fit_lines=not as_json))
