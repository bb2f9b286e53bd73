"""``kdump verify``: check logs, indexes and partition state below the given paths."""

from __future__ import annotations

import sys
from typing import TYPE_CHECKING

import click

from kdump.cli.path_args import Location

if TYPE_CHECKING:
    from kdump.commands.remote_tier import RemoteChecks


@click.command("verify")
@click.argument("paths", nargs=-1, type=Location(exists=True, file_okay=True, dir_okay=True))
@click.option(
    "--json", "as_json", is_flag=True, help="One JSON object per fact (problem, unchecked, note, summary)."
)
@click.option("--deep", is_flag=True, help="Also decode every record of every batch.")
@click.option("--gaps", is_flag=True, help="Report offset gaps even where the topic may be compacted.")
@click.option(
    "--indexes-only", is_flag=True, help="Check the indexes only: exactly what `kdump verify-index` does."
)
@click.option("--no-progress", is_flag=True, help="Never show a progress bar.")
@click.option(
    "--remote-root",
    type=Location(exists=True, file_okay=False, dir_okay=True),
    help="Also check tiered partitions' remote segments (as `kdump tiered --deep`) under this root: "
    "LocalTieredStorage's dir, its kafka-tiered-storage directory, or Aiven's prefix; a local path or a URL.",
)
@click.option(
    "--layout",
    type=click.Choice(["kafka", "aiven"]),
    default=None,
    help="With --remote-root: the RemoteStorageManager's object layout [default: kafka].",
)
@click.option(
    "--metadata",
    "metadata",
    multiple=True,
    type=Location(exists=True, file_okay=False, dir_okay=True),
    help="With --remote-root: a log directory holding __remote_log_metadata partitions, or one of them "
    "(repeatable) [default: each partition's own log directory].",
)
@click.option(
    "--metadata-partitions",
    type=click.IntRange(min=1),
    default=None,
    metavar="N",
    help="With --remote-root: remote.log.metadata.topic.num.partitions [default: 50].",
)
def command(
    paths: tuple[str, ...],
    as_json: bool,
    deep: bool,
    gaps: bool,
    indexes_only: bool,
    no_progress: bool,
    remote_root: str | None,
    layout: str | None,
    metadata: tuple[str, ...],
    metadata_partitions: int | None,
) -> None:
    """Check every partition below PATH...: batch framing and CRCs, offsets, segment names, indexes,
    producer snapshots, .txnindex entries, checkpoints and leader epochs against the log.

    PATH is a segment file, a partition directory or a log directory (searched recursively; default: the
    current directory). Prints one line
    per problem, what could not be checked, and a summary; exits 0 when everything is clean, 1 when problems
    were found, 2 on usage errors (including no Kafka data below PATH).

    With --remote-root, each tiered partition's segments in remote storage are checked too (the checks of
    `kdump tiered --deep`: missing objects, orphans, sizes, offsets and leader epochs against the batches, gaps
    and overlaps, segments stuck in COPY_SEGMENT_STARTED or DELETE_SEGMENT_STARTED), as remote-... problems.
    """
    from kdump.cli import run_guarded

    if remote_root is None and (layout or metadata or metadata_partitions):
        raise click.UsageError("--layout, --metadata and --metadata-partitions go with --remote-root")
    if indexes_only:
        if deep or gaps or remote_root:
            raise click.UsageError(
                "--deep, --gaps and --remote-root check the log, not the indexes: not with --indexes-only"
            )
        from kdump.cli import verify_index

        verify_index.run(paths or (".",), as_json=as_json, no_progress=no_progress)
    from kdump.commands.verify import Verify, select
    from kdump.render.progress import progress_bars
    from kdump.render.verify_report import JsonSink, TextSink

    try:
        unreadable: list = []
        partitions_, log_dirs = select(paths or (".",), unreadable)
    except ValueError as e:
        raise click.UsageError(str(e)) from None
    remote: RemoteChecks | None = None
    if remote_root is not None:  # the tiered checks are loaded only when asked for
        from kdump.commands.remote_tier import RemoteChecks, RemoteOptions

        remote = RemoteChecks(
            RemoteOptions(remote_root, layout or "kafka", metadata, metadata_partitions or 50)
        )
    sys.exit(
        run_guarded(
            lambda out, err: int(
                Verify(
                    partitions_,
                    JsonSink(out) if as_json else TextSink(out),
                    deep=deep,
                    gaps=gaps,
                    log_dirs=log_dirs,
                    unreadable=unreadable,
                    progress=progress_bars(enabled=not no_progress and not as_json),
                    remote=remote,
                ).run()
            ),
            fit_lines=not as_json,
        )
    )
