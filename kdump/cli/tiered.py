"""``kdump tiered``: a tiered partition (KIP-405) as one log, its remote part checked against the metadata."""

from __future__ import annotations

import click

from kdump.cli.path_args import Location


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
@click.option(
    "--layout",
    type=click.Choice(["kafka", "aiven"]),
    default="kafka",
    show_default=True,
    help="The RemoteStorageManager's object layout: Kafka's LocalTieredStorage (RemoteLogSegmentFileset), or "
    "Aiven's tiered-storage plugin (.log chunks, .indexes, .rsm-manifest; encrypted ones with --aiven-private-key).",
)
@click.option(
    "--layout-template",
    metavar="TEMPLATE",
    help="Another plugin's layout: each object's key under --remote-root, e.g. "
    "'{topic}-{partition}-{topicId}/{startOffset:020d}-{segmentId}.log' (fields: topic, partition, topicId, "
    "topicUuid, startOffset, endOffset, segmentId, segmentUuid, brokerId, suffix; see man kdump-tiered).",
)
@click.option(
    "--aiven-key-prefix",
    metavar="PREFIX",
    help="The Aiven plugin's key.prefix: --remote-root is then the storage root (bucket or directory), and "
    "segments whose custom metadata names another prefix or key are found there.",
)
@click.option(
    "--aiven-private-key",
    "private_keys",
    multiple=True,
    metavar="[ID=]PEM",
    help="The RSA private key (PEM) of the Aiven plugin's key pair ID (encryption.key.pairs), to read encrypted "
    "segments; without ID=, for every key pair (repeatable; needs pip install 'kdump[aiven]').",
)
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
    from kdump.storage import aiven_segment

    try:
        aiven_segment.KEYRING = aiven_segment.Keyring.load(private_keys) if private_keys else None
    except ValueError as e:
        raise click.BadParameter(str(e), param_hint="'--aiven-private-key'") from None
    from kdump.storage.remote_layout import Layout, parse_template

    chosen = Layout(layout, aiven_prefix=aiven_key_prefix or "")
    if layout_template is not None:
        if layout != "kafka" or aiven_key_prefix is not None:
            raise click.UsageError("--layout-template is a layout of its own: not with --layout aiven")
        try:
            chosen = Layout("template", parse_template(layout_template))
        except ValueError as e:
            raise click.BadParameter(str(e), param_hint="'--layout-template'") from None
    elif aiven_key_prefix is not None and layout != "aiven":
        raise click.UsageError("--aiven-key-prefix is for --layout aiven")
    try:
        cmd = TieredCommand(
            partition,
            remote_root,
            list(metadata),
            metadata_partitions=metadata_partitions,
            deep=deep,
            layout=chosen,
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
