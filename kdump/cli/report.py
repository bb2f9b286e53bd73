"""``kdump report``: one self-contained HTML page of data directories (or their facts as JSON lines)."""

from __future__ import annotations

import sys

import click

from kdump.cli.path_args import LocalOutput, Location
from kdump.cli.time_options import max_timeout_option, now_option


@click.command("report")
@click.argument("paths", nargs=-1, type=Location(exists=True, file_okay=True, dir_okay=True))
@click.option(
    "-o",
    "--output",
    metavar="FILE",
    type=LocalOutput(dir_okay=False, allow_dash=True),
    help="Write the page (or, with --json, the JSON lines) to FILE; '-' is standard output "
    "[default: standard output with --json; required without].",
)
@click.option(
    "--json", "as_json", is_flag=True, help="Write the report's facts as JSON lines instead of the page."
)
@now_option("Ages and retention's prediction at", "the current time")
@max_timeout_option()
@click.option(
    "--config",
    "config_items",
    multiple=True,
    metavar="NAME=VALUE",
    help="A topic configuration for retention's prediction instead of __cluster_metadata's (repeatable).",
)
@click.option(
    "--max-partitions",
    type=click.IntRange(min=0),
    default=200,
    show_default=True,
    help="Partitions drawn in full on the page (the others are rows of its tables).",
)
@click.option(
    "--crc",
    is_flag=True,
    help="Also check every batch's CRC, as kdump verify does (reads every byte of the logs; without it the "
    "report reads the batch headers and the indexes only, and says the CRCs were not checked).",
)
def command(
    paths: tuple[str, ...],
    output: str | None,
    as_json: bool,
    now: int | None,
    max_timeout_ms: int,
    config_items: tuple[str, ...],
    max_partitions: int,
    crc: bool,
) -> None:
    """An incident report of data directories (PATH: log or partition directories; default the current
    directory): one self-contained HTML file (no script, no network) with an overview (log directories,
    topics, sizes, time ranges, verify's problems by kind, what could not be checked), per partition its
    offsets against time with segments, leader epochs, retention's predicted deletions and transactions, and
    the consumer groups' lag and the transaction coordinator's states. Built from the facts of ls, verify,
    txn, retention and find --group: one pass over the batch headers and the indexes (record CRCs are checked
    with --crc only; records are decoded only where a chart needs them). Exits 1 when verify finds problems,
    a transaction hangs or something cannot be read.
    """
    from kdump.cli import directory_arguments, make_parents, run_guarded
    from kdump.commands.report import ReportCommand
    from kdump.commands.retention import parse_config_overrides
    from kdump.facts.output import Output

    if output is None and not as_json:
        raise click.UsageError("the page needs a file: -o report.html (or --json for the facts)")
    dirs = directory_arguments(paths)
    try:
        cmd = ReportCommand(
            dirs,
            now=now,
            config=parse_config_overrides(list(config_items)),
            max_timeout_ms=max_timeout_ms,
            crc=crc,
        )
    except ValueError as e:
        raise click.UsageError(str(e)) from None

    def body(out: Output, err: Output) -> int:
        target = out
        stream = None
        if output is not None and output != "-":
            make_parents(output)
            stream = open(output, "wb")  # noqa: SIM115 - closed below, after the sink's end
            target = Output(stream, name=output)
        try:
            if as_json:
                from kdump.render.incident import json_lines
                from kdump.render.report import JsonSink

                status = cmd.run(JsonSink(target, json_lines))
            else:
                from kdump.render.html_report import HtmlSink

                status = cmd.run(HtmlSink(target, paths=dirs, max_partitions=max_partitions))
            target.flush()
        finally:
            if stream is not None:
                stream.close()
        if stream is not None and not as_json:
            err.write(f"kdump: wrote {output}\n")
        return int(status)

    sys.exit(run_guarded(body))
