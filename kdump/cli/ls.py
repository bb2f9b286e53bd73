"""``kdump ls``: a data directory at a glance, one row per partition."""

from __future__ import annotations

import shutil
import sys

import click

from kdump.cli.path_args import Location
from kdump.cli.remote_options import RemoteArgs, remote_options
from kdump.render.color import CHOICES as COLOR_CHOICES


@click.command("ls")
@click.argument("paths", nargs=-1, type=Location(exists=True, file_okay=True, dir_okay=True))
@click.option("--json", "as_json", is_flag=True, help="One JSON object per partition.")
@click.option("--wide", is_flag=True, help="On a terminal, every column, however wide the table gets.")
@click.option(
    "--columns",
    metavar="A,B,...",
    help="Only these columns, in this order (names as in the header, any case; e.g. topic,partition,log-end).",
)
@click.option(
    "--human-time", is_flag=True, help="Add ISO-8601 times beside the epoch milliseconds (plain text)."
)
@click.option(
    "--tz", metavar="ZONE", help="Time zone of ISO-8601 times: UTC (default), +02:00, Europe/Berlin."
)
@click.option(
    "--color",
    type=click.Choice(COLOR_CHOICES),
    default=None,
    help="Colour the terminal table: auto (default; not with NO_COLOR set), always, never.",
)
@click.option(
    "--topic",
    "topics",
    multiple=True,
    metavar="NAME",
    help="Only the partitions of this topic (repeatable, or NAME,NAME,...).",
)
@click.option(
    "--exclude-internal",
    is_flag=True,
    help="Leave out Kafka's internal topics (__consumer_offsets, __transaction_state, __cluster_metadata, ...).",
)
@click.option(
    "--all",
    "show_all",
    is_flag=True,
    help="On a terminal, a row for every empty partition too (by default they are folded into one line).",
)
@click.option(
    "-v",
    "--verbose",
    is_flag=True,
    help="List every left-over .deleted/.cleaned/.swap file, not their count.",
)
@click.option("--no-progress", is_flag=True, help="Never show a progress bar.")
@remote_options(
    "Read tiered partitions as one log: their segments in remote storage under this root (Kafka's "
    "RemoteLogSegmentFileset layout, as `kdump tiered`), then their local ones; a local path or a URL."
)
def command(
    paths: tuple[str, ...],
    as_json: bool,
    wide: bool,
    columns: str | None,
    human_time: bool,
    tz: str | None,
    color: str | None,
    topics: tuple[str, ...],
    exclude_internal: bool,
    show_all: bool,
    verbose: bool,
    no_progress: bool,
    remote_args: RemoteArgs,
) -> None:
    """Summarise every partition of a log directory or partition directory (default: the current directory).

    Partitions are sorted by topic, then partition number. On a terminal, partitions without records (and
    without anomalies) are folded into one line (--all lists them); left-over .deleted files are counted per
    partition (-v lists them).

    Per partition: segments, size, log start and end offsets, high watermark and recovery point (from the
    checkpoint files), records, time range, codecs, producers, open transactions and anomalies. A table fitted
    to the terminal's width (columns left out to fit are named under it; --wide, --columns), aligned plain text
    in a pipe, JSON lines with --json. Over several log directories the log directory and its broker id tell
    identical partitions apart.

    With --remote-root a tiered partition is one log: its segments in remote storage (those
    __remote_log_metadata says were copied, below the first local segment) then its local ones, so its
    segments, size, log start offset and records are the whole partition's.
    """
    from kdump.cli import directory_arguments, run_guarded
    from kdump.commands.ls import ListPartitions
    from kdump.render import color as colors
    from kdump.render.human_time import parse_tz
    from kdump.render.ls_table import parse_columns

    if color is not None:
        colors.mode = color
    remote = remote_args.checks()
    try:
        wanted = {t.strip() for item in topics for t in item.split(",") if t.strip()} if topics else None
        lister = ListPartitions(
            directory_arguments(paths), topics=wanted, exclude_internal=exclude_internal, remote=remote
        )
        chosen = parse_columns(columns) if columns else None
        zone = parse_tz(tz) if tz else None
    except ValueError as e:
        raise click.UsageError(str(e)) from None
    interactive = sys.stdout.isatty()
    width = shutil.get_terminal_size().columns
    from kdump.facts.ls import LsSink
    from kdump.facts.output import Output
    from kdump.render import ls_report

    def sink(out: Output) -> LsSink:
        if as_json:
            return ls_report.JsonSink(out)
        if interactive:
            return ls_report.TerminalSink(
                out,
                width=width,
                wide=wide,
                columns=chosen,
                use_color=colors.enabled(sys.stdout),
                tz=zone,
                fold_empty=not show_all,
                verbose=verbose,
            )
        return ls_report.PlainSink(out, columns=chosen, human_time=human_time, tz=zone, verbose=verbose)

    from kdump.render.progress import progress_bars

    progress = progress_bars(enabled=not no_progress)
    sys.exit(run_guarded(lambda out, err: int(lister.run(sink(out), progress=progress))))
