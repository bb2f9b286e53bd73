"""``kdump retention``: what time/size retention and the cleaner would do (a prediction)."""

from __future__ import annotations

import click

from kdump.cli.path_args import Location
from kdump.cli.time_options import now_option


@click.command("retention")
@click.argument("paths", nargs=-1, type=Location(exists=True, file_okay=True, dir_okay=True))
@now_option("Predict at", "the current time")
@click.option(
    "--config",
    "config_items",
    multiple=True,
    metavar="NAME=VALUE",
    help="A topic configuration to use instead of __cluster_metadata's (repeatable), e.g. retention.ms=3600000.",
)
@click.option("--json", "as_json", is_flag=True, help="One JSON object per partition.")
@click.option(
    "--all",
    "show_all",
    is_flag=True,
    help="On a terminal, a prediction for every partition without records too (by default one line names them).",
)
@click.option("--wide", is_flag=True, help="On a terminal, every column, however wide the table gets.")
def command(
    paths: tuple[str, ...],
    now: int | None,
    config_items: tuple[str, ...],
    as_json: bool,
    show_all: bool,
    wide: bool,
) -> None:
    """Predict which segments time and size retention would delete and when, the log start offset after
    that, and for compacted topics the dirty ratio as the cleaner computes it, distinct keys, superseded
    records and tombstones. The configuration comes from __cluster_metadata in the data directory, --config,
    or Kafka's defaults; the output says which.
    """
    from kdump.cli import directory_arguments, run_report
    from kdump.commands.retention import RetentionCommand, parse_config_overrides
    from kdump.render import retention as render

    try:
        cmd = RetentionCommand(
            directory_arguments(paths), now=now, overrides=parse_config_overrides(list(config_items))
        )
    except ValueError as e:
        raise click.UsageError(str(e)) from None
    run_report(
        cmd.run,
        as_json=as_json,
        wide=wide,
        sections=lambda facts, human: render.sections(
            facts, human=human, now_given=cmd.now_given, fold_empty=human and not show_all
        ),
        json_lines=render.json_lines,
    )
