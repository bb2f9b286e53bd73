"""``kdump tiered``: a tiered partition (KIP-405) as one log, its remote part checked against the metadata."""

from __future__ import annotations

import click

from kdump.cli.path_args import Location
from kdump.cli.remote_options import layout_and_keyring, layout_options


@click.command("tiered")
@click.argument("partition", type=Location(exists=True, file_okay=False, dir_okay=True))
@click.option(
    "--remote-root",
    required=True,
    type=Location(exists=True, file_okay=False, dir_okay=True),
    help="Where the remote segments are: LocalTieredStorage's dir (or its kafka-tiered-storage directory, or the "
    "partition's own <topic>-<partition>-<topic id> directory); a local path or a URL.",
)
@click.option(
    "--metadata",
    "metadata",
    multiple=True,
    type=Location(exists=True, file_okay=False, dir_okay=True),
    help="A log directory holding __remote_log_metadata partitions, or one of them (repeatable) "
    "[default: the partition's own log directory].",
)
@click.option(
    "--metadata-partitions",
    type=click.IntRange(min=1),
    default=50,
    show_default=True,
    metavar="N",
    help="remote.log.metadata.topic.num.partitions: which metadata partition holds this partition's records.",
)
@layout_options(default_shown=True)
@click.option("--deep", is_flag=True, help="Also read every copied .log: offsets, leader epochs, bytes.")
@click.option(
    "--json", "as_json", is_flag=True, help="One JSON object per partition (its segments and problems)."
)
@click.option("--wide", is_flag=True, help="On a terminal, every column, however wide the table gets.")
def command(
    partition: str,
    remote_root: str,
    metadata: tuple[str, ...],
    metadata_partitions: int,
    layout: str,
    layout_template: str | None,
    aiven_key_prefix: str | None,
    private_keys: tuple[str, ...],
    deep: bool,
    as_json: bool,
    wide: bool,
) -> None:
    """Show PARTITION (a local partition directory) and its segments in tiered storage as one log, and check
    the remote part: each copied segment's objects (Kafka's RemoteLogSegmentFileset layout), their sizes,
    segments stuck in COPY_SEGMENT_STARTED or DELETE_SEGMENT_STARTED, objects the metadata does not know, gaps
    and overlaps, and with --deep the offsets and leader epochs of every remote .log. Exits 0 when nothing is
    wrong, 1 when a problem was found, 2 on usage errors.
    """
    from kdump.cli import run_report
    from kdump.commands.tiered import TieredCommand
    from kdump.render import tiered as render

    chosen, keyring = layout_and_keyring(layout, layout_template, aiven_key_prefix, private_keys)
    try:
        cmd = TieredCommand(
            partition,
            remote_root,
            list(metadata),
            metadata_partitions=metadata_partitions,
            deep=deep,
            layout=chosen,
            keyring=keyring,
        )
    except ValueError as e:
        raise click.UsageError(str(e)) from None
    run_report(
        cmd.run,
        as_json=as_json,
        wide=wide,
        sections=lambda facts, human: render.sections(facts, human=human),
        json_lines=render.json_lines,
    )
