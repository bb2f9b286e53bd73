"""The options that give a command a tiered partition's remote part (``verify``, ``ls``, ``txn``), as ``kdump
tiered`` takes them: ``--remote-root``, ``--metadata``, ``--metadata-partitions`` (and ``--layout`` where the
command can read Aiven's layout)."""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Any, TypeVar

import click

from kdump.cli.path_args import Location

if TYPE_CHECKING:
    from kdump.commands.remote_tier import RemoteChecks

F = TypeVar("F", bound=Callable[..., Any])


def remote_options(help_text: str, *, layout: bool = False) -> Callable[[F], F]:
    """``--remote-root`` (with ``help_text``), ``--metadata``, ``--metadata-partitions`` and, with ``layout``,
    ``--layout``."""

    def wrap(f: F) -> F:
        f = click.option(
            "--metadata-partitions",
            type=click.IntRange(min=1),
            default=None,
            metavar="N",
            help="With --remote-root: remote.log.metadata.topic.num.partitions [default: 50].",
        )(f)
        f = click.option(
            "--metadata",
            "metadata",
            multiple=True,
            type=Location(exists=True, file_okay=False, dir_okay=True),
            help="With --remote-root: a log directory holding __remote_log_metadata partitions, or one of them "
            "(repeatable) [default: each partition's own log directory].",
        )(f)
        if layout:
            f = click.option(
                "--layout",
                type=click.Choice(["kafka", "aiven"]),
                default=None,
                help="With --remote-root: the RemoteStorageManager's object layout [default: kafka].",
            )(f)
        return click.option(
            "--remote-root", type=Location(exists=True, file_okay=False, dir_okay=True), help=help_text
        )(f)

    return wrap


def remote_checks(
    remote_root: str | None,
    metadata: tuple[str, ...],
    metadata_partitions: int | None,
    layout: str | None = None,
) -> RemoteChecks | None:
    """The run's :class:`~kdump.commands.remote_tier.RemoteChecks` (None without ``--remote-root``; the others
    alone are a usage error)."""
    if remote_root is None:
        if metadata or metadata_partitions or layout:
            given = (
                "--layout, --metadata and --metadata-partitions"
                if layout
                else "--metadata and --metadata-partitions"
            )
            raise click.UsageError(f"{given} go with --remote-root")
        return None
    from kdump.commands.remote_tier import RemoteChecks, RemoteOptions  # loaded only when asked for

    return RemoteChecks(RemoteOptions(remote_root, layout or "kafka", metadata, metadata_partitions or 50))
