"""``kdump rebuild-index``: rebuild .index and .timeindex files from their .log, as a broker's recovery does."""

from __future__ import annotations

import sys
from typing import TYPE_CHECKING

import click

from kdump.cli.path_args import LocalOutput

if TYPE_CHECKING:
    from kdump.facts.output import Output


@click.command("rebuild-index")
@click.argument(
    "paths", nargs=-1, required=True, type=LocalOutput(exists=True, file_okay=True, dir_okay=True)
)
@click.option(
    "--index-interval-bytes",
    type=click.IntRange(min=0),
    metavar="N",
    help="Bytes between offset-index entries [default: the topic's index.interval.bytes from the cluster "
    "metadata in the log directory, else 4096].",
)
@click.option("--dry-run", is_flag=True, help="Report what would change, entry by entry; write nothing.")
@click.option("--no-backup", is_flag=True, help="Do not keep the old index files as <name>.bak.")
@click.option(
    "--force",
    is_flag=True,
    help="Also rewrite index files that are sound but differ from a rebuild, and write even when a running "
    "broker holds the log directory's .lock.",
)
@click.option("-v", "--verbose", is_flag=True, help="Also list the index files that are already right.")
@click.option(
    "--json", "as_json", is_flag=True, help="One JSON object per fact (problems too), then a summary object."
)
def command(
    paths: tuple[str, ...],
    index_interval_bytes: int | None,
    dry_run: bool,
    no_backup: bool,
    force: bool,
    verbose: bool,
    as_json: bool,
) -> None:
    """Rebuild .index and .timeindex files from their .log with Kafka's recovery algorithm.

    PATH is a .log (or one of its index files), a partition directory or a log directory (searched
    recursively). Index files are replaced atomically; the old ones are kept as <name>.bak unless --no-backup.
    A .log is never changed. Exits 0 when everything was rebuilt, 1 when a problem was found (a torn or
    corrupt log tail, a log that cannot be indexed, a locked log directory, a write error), 2 on usage errors.
    """
    from kdump.cli import run_guarded
    from kdump.commands.rebuild_index import RebuildIndex, RebuildOptions, select_targets

    try:
        targets = select_targets(paths)
    except ValueError as e:
        raise click.UsageError(str(e)) from None
    options = RebuildOptions(
        index_interval_bytes=index_interval_bytes,
        dry_run=dry_run,
        backup=not no_backup,
        force=force,
        verbose=verbose,
    )
    from kdump.render.rebuild_report import JsonSink, TextSink

    def body(out: Output, err: Output) -> int:
        sink = JsonSink(out) if as_json else TextSink(out, err)
        return int(RebuildIndex(targets, options, sink).run())

    sys.exit(run_guarded(body, fit_lines=not as_json))
