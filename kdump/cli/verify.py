"""``kdump verify``: check logs, indexes and partition state below the given paths."""

from __future__ import annotations

import sys

import click

from kdump.cli.path_args import Location
from kdump.cli.remote_options import RemoteArgs, remote_options


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
@remote_options(
    "Also check tiered partitions' remote segments (as `kdump tiered --deep`) under this root: "
    "LocalTieredStorage's dir, its kafka-tiered-storage directory, or Aiven's prefix; a local path or a URL.",
)
def command(
    paths: tuple[str, ...],
    as_json: bool,
    deep: bool,
    gaps: bool,
    indexes_only: bool,
    no_progress: bool,
    remote_args: RemoteArgs,
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

    remote = remote_args.checks()
    if indexes_only:
        if deep or gaps or remote_args.remote_root:
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
