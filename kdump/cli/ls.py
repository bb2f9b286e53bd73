"""``kdump ls``: a data directory at a glance, one row per partition."""

from __future__ import annotations

import sys

import click


@click.command("ls")
@click.argument("paths", nargs=-1, type=click.Path(exists=True, file_okay=False, dir_okay=True))
@click.option("--json", "as_json", is_flag=True, help="One JSON object per partition.")
@click.option("--no-progress", is_flag=True, help="Never show a progress bar.")
def command(paths: tuple[str, ...], as_json: bool, no_progress: bool) -> None:
    """Summarise every partition of a log directory or partition directory (default: the current directory).

    Per partition: segments, size, log start and end offsets, high watermark and recovery point (from the
    checkpoint files), records, time range, codecs, producers, open transactions and anomalies. A table on a
    terminal, aligned plain text in a pipe, JSON lines with --json.
    """
    from kdump.cli import run_guarded
    from kdump.commands.ls import ListPartitions

    try:
        lister = ListPartitions(list(paths) or ["."])
    except ValueError as e:
        raise click.UsageError(str(e)) from None
    interactive = sys.stdout.isatty()
    progress = not no_progress and sys.stderr.isatty()
    sys.exit(
        run_guarded(
            lambda out, err: lister.run(
                out, as_json=as_json, rich_table=interactive and not as_json, progress=progress
            )
        )
    )
