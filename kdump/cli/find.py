"""``kdump find``: which segment, index entry and batch hold an offset, or the first offset at or after a
timestamp, resolved the way a broker does."""

from __future__ import annotations

import sys

import click

from kdump.cli.path_args import Location
from kdump.cli.remote_options import RemoteArgs, remote_options


@click.command("find")
@click.argument(
    "path", required=False, default=".", type=Location(exists=True, file_okay=True, dir_okay=True)
)
@click.option("--offset", type=click.IntRange(min=0), metavar="N", help="The offset to look for.")
@click.option(
    "--timestamp",
    "timestamp_text",
    metavar="T",
    help="Find the first offset whose timestamp is at or after T (epoch milliseconds or ISO-8601; no zone "
    "means UTC), as Kafka's ListOffsets does.",
)
@click.option(
    "--topic", help="With --partition: PATH is a log directory and the partition is <topic>-<partition>."
)
@click.option("--partition", type=click.IntRange(min=0), help="The partition number (with --topic).")
@click.option("--print-data-log", is_flag=True, help="Also print the record, with its key and payload.")
@click.option("--json", "as_json", is_flag=True, help="Print one JSON object instead of text.")
@click.option(
    "--wide", is_flag=True, help="With --group/--transactional-id on a terminal: every column of the table."
)
@click.option(
    "--group",
    metavar="G",
    help="Find the __consumer_offsets partition of group G (PATH: the data directory) and its committed offsets.",
)
@click.option(
    "--transactional-id",
    metavar="T",
    help="Find the __transaction_state partition of transactional id T (PATH: the data directory) and its state.",
)
@click.option(
    "--partitions",
    type=click.IntRange(min=1),
    metavar="N",
    help="With --group/--transactional-id: the internal topic's partition count [default: from the metadata "
    "log, else 50].",
)
@click.option(
    "--log-start-offset",
    type=click.IntRange(min=0),
    metavar="N",
    help="Use N as the log start offset [default: from log-start-offset-checkpoint, else the first segment].",
)
@click.option(
    "--decode-values",
    type=click.Choice(["schema-registry"]),
    help="Decode the record's value from the schema registry's wire format (implies --print-data-log).",
)
@click.option(
    "--decode-keys",
    type=click.Choice(["schema-registry"]),
    help="Decode the record's key from the schema registry's wire format (implies --print-data-log).",
)
@click.option(
    "--schemas",
    multiple=True,
    metavar="PATH",
    help="Where the schemas are [default: the _schemas topic of the log directory]; repeatable.",
)
@click.option("--schema-id-map", metavar="ID=FILE,...", help="Schema files by schema id.")
@remote_options(
    "A tiered partition is one log: its segments in remote storage under this root (Kafka's "
    "RemoteLogSegmentFileset layout; local or URL) in front of its local ones, as a broker serves them."
)
def command(
    path: str,
    offset: int | None,
    timestamp_text: str | None,
    topic: str | None,
    partition: int | None,
    print_data_log: bool,
    as_json: bool,
    log_start_offset: int | None,
    decode_values: str | None,
    decode_keys: str | None,
    schemas: tuple[str, ...],
    schema_id_map: str | None,
    group: str | None,
    transactional_id: str | None,
    partitions: int | None,
    wide: bool,
    remote_args: RemoteArgs,
) -> None:
    """Find the segment, index entry and batch that hold an offset, or the first offset at or after a timestamp.

    PATH is a partition directory (default: the current directory), or a log directory with --topic and
    --partition. Prints the segment, the index entry used and the batch line as kafka-dump-log.sh prints it.
    Exits 0 when found, 1 when the offset is below the log start, beyond the log end or in a gap (or no record
    is at or after the timestamp), 2 on usage errors.
    """
    from kdump.cli import run_guarded
    from kdump.commands.find import Find, resolve_partition_dir
    from kdump.errors import UsageError
    from kdump.storage.timestamp_type import parse_timestamp

    if group is not None or transactional_id is not None:
        if sum(x is not None for x in (group, transactional_id, offset, timestamp_text)) != 1:
            raise click.UsageError(
                "give exactly one of --offset, --timestamp, --group and --transactional-id"
            )
        _find_coordinator(path, group, transactional_id, partitions, as_json, wide)
    if partitions is not None:
        raise click.UsageError("--partitions goes with --group or --transactional-id")
    if (offset is None) == (timestamp_text is None):
        raise click.UsageError("give exactly one of --offset and --timestamp")
    timestamp = None
    if timestamp_text is not None:
        try:
            timestamp = parse_timestamp(timestamp_text)
        except ValueError as e:
            raise click.BadParameter(str(e), param_hint="'--timestamp'") from None
    from kdump.payload.sources import payload_decoding

    try:
        decoding = payload_decoding(decode_keys, decode_values, list(schemas), schema_id_map)
    except ValueError as e:
        raise click.UsageError(str(e)) from None
    try:
        directory = resolve_partition_dir(path, topic, partition)
    except UsageError as e:
        raise click.UsageError(e.message) from None
    from kdump.render.find_report import JsonSink, TextSink

    remote = remote_args.checks()

    sink = JsonSink if as_json else TextSink
    sys.exit(
        run_guarded(
            lambda out, err: int(
                Find(
                    directory,
                    sink(out, err, decoding),
                    offset=offset,
                    timestamp=timestamp,
                    print_data_log=print_data_log or decoding is not None,
                    log_start_offset=log_start_offset,
                    remote=remote,
                ).run()
            ),
            fit_lines=not as_json,
        )
    )


def _find_coordinator(
    path: str,
    group: str | None,
    transactional_id: str | None,
    partitions: int | None,
    as_json: bool,
    wide: bool,
) -> None:
    from functools import partial

    from kdump.cli import run_report
    from kdump.commands import coordinator
    from kdump.render import coordinator as render

    run_report(
        partial(
            coordinator.run, path=path, group=group, transactional_id=transactional_id, partitions=partitions
        ),
        as_json=as_json,
        wide=wide,
        sections=lambda facts, human: render.sections(facts[0], human=human),
        json_lines=lambda facts: render.json_lines(facts[0]),
    )
