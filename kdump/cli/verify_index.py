"""``kdump verify-index``: check every index of the given segments, partitions or log directories."""

from __future__ import annotations

import sys
from typing import NoReturn

import click

from kdump.cli.path_args import Location


@click.command("verify-index")
@click.argument("paths", nargs=-1, type=Location(exists=True, file_okay=True, dir_okay=True))
@click.option("--json", "as_json", is_flag=True, help="One JSON object per problem, then a summary object.")
@click.option("--no-progress", is_flag=True, help="Never show a progress bar.")
def command(paths: tuple[str, ...], as_json: bool, no_progress: bool) -> None:
    """Check .index, .timeindex and .txnindex files against their .log.

    PATH is an index file, a .log, a partition directory or a log directory (searched recursively; default:
    the current directory). Prints
    one line per problem and a summary; exits 0 when everything is clean, 1 when problems were found, 2 on
    usage errors.
    """
    run(paths or (".",), as_json=as_json, no_progress=no_progress)


def run(paths: tuple[str, ...], *, as_json: bool, no_progress: bool) -> NoReturn:
    """Check the indexes below ``paths`` and exit with the status (also ``kdump verify --indexes-only``)."""
    from kdump.cli import run_guarded
    from kdump.commands.verify_index import VerifyIndex, select_segments
    from kdump.render import problems

    walk_problems: list = []
    try:
        targets, partitions = select_segments(paths, walk_problems)
    except ValueError as e:
        raise click.UsageError(str(e)) from None
    from kdump.render.progress import progress_bars

    show_progress = progress_bars(enabled=not no_progress and not as_json)
    sys.exit(
        run_guarded(
            lambda out, err: int(
                VerifyIndex(
                    targets,
                    partitions,
                    problems.JsonSink(out) if as_json else problems.TextSink(out),
                    show_progress,
                    walk_problems=walk_problems,
                ).run()
            ),
            fit_lines=not as_json,
        )
    )
