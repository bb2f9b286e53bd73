"""The options that give a command a tiered partition's remote part (``verify``, ``ls``, ``txn``, ``find``), as
``kdump tiered`` takes them: ``--remote-root``, ``--metadata``, ``--metadata-partitions``, and the object layout
(:func:`layout_options`: ``--layout``, ``--layout-template``, ``--aiven-key-prefix``, ``--aiven-private-key``).
The layout and the keyring are made here, once, and handed down: options -> command -> byte source."""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Any, TypeVar

import click

from kdump.cli.path_args import Location

if TYPE_CHECKING:
    from kdump.commands.remote_tier import RemoteChecks
    from kdump.storage.aiven_segment import Keyring
    from kdump.storage.remote_layout import Layout

F = TypeVar("F", bound=Callable[..., Any])

LAYOUT_HELP = (
    "The RemoteStorageManager's object layout: Kafka's LocalTieredStorage (RemoteLogSegmentFileset), or "
    "Aiven's tiered-storage plugin (.log chunks, .indexes, .rsm-manifest; encrypted ones with --aiven-private-key)."
)


def layout_options(*, default_shown: bool = False) -> Callable[[F], F]:
    """``--layout``, ``--layout-template``, ``--aiven-key-prefix`` and ``--aiven-private-key`` (the parameters
    ``layout``, ``layout_template``, ``aiven_key_prefix``, ``private_keys``; :func:`layout_and_keyring` makes
    them one :class:`~kdump.storage.remote_layout.Layout` and one keyring)."""

    def wrap(f: F) -> F:
        f = click.option(
            "--aiven-private-key",
            "private_keys",
            multiple=True,
            metavar="[ID=]PEM",
            help="The RSA private key (PEM) of the Aiven plugin's key pair ID (encryption.key.pairs), to read "
            "encrypted segments; without ID=, for every key pair (repeatable; needs pip install 'kdump[aiven]').",
        )(f)
        f = click.option(
            "--aiven-key-prefix",
            metavar="PREFIX",
            help="The Aiven plugin's key.prefix: --remote-root is then the storage root (bucket or directory), "
            "and segments whose custom metadata names another prefix or key are found there.",
        )(f)
        f = click.option(
            "--layout-template",
            metavar="TEMPLATE",
            help="Another plugin's layout: each object's key under --remote-root, e.g. "
            "'{topic}-{partition}-{topicId}/{startOffset:020d}-{segmentId}.log' (fields: topic, partition, "
            "topicId, topicUuid, startOffset, endOffset, segmentId, segmentUuid, brokerId, suffix; see man "
            "kdump-tiered).",
        )(f)
        return click.option(
            "--layout",
            type=click.Choice(["kafka", "aiven"]),
            default="kafka" if default_shown else None,
            show_default=default_shown,
            help=LAYOUT_HELP if default_shown else LAYOUT_HELP[:-1] + " [default: kafka].",
        )(f)

    return wrap


def layout_and_keyring(
    layout: str | None,
    layout_template: str | None,
    aiven_key_prefix: str | None,
    private_keys: tuple[str, ...],
) -> tuple[Layout, Keyring | None]:
    """The run's layout and keyring from :func:`layout_options`' values; a usage error for options that do not
    go together, a bad template or a key file that is not a key."""
    from kdump.storage.remote_layout import Layout, parse_template

    chosen = Layout(layout or "kafka", aiven_prefix=aiven_key_prefix or "")
    if layout_template is not None:
        if layout not in (None, "kafka") or aiven_key_prefix is not None:
            raise click.UsageError("--layout-template is a layout of its own: not with --layout aiven")
        try:
            chosen = Layout("template", parse_template(layout_template))
        except ValueError as e:
            raise click.BadParameter(str(e), param_hint="'--layout-template'") from None
    elif aiven_key_prefix is not None and layout != "aiven":
        raise click.UsageError("--aiven-key-prefix is for --layout aiven")
    keyring = None
    if private_keys:
        from kdump.storage.aiven_segment import Keyring

        try:
            keyring = Keyring.load(private_keys)
        except ValueError as e:
            raise click.BadParameter(str(e), param_hint="'--aiven-private-key'") from None
    return chosen, keyring


def remote_options(help_text: str, *, layouts: bool = True) -> Callable[[F], F]:
    """``--remote-root`` (with ``help_text``), ``--metadata``, ``--metadata-partitions`` and, with ``layouts``,
    the layout (:func:`layout_options`); a reader of Kafka's layout only (``kdump spark``) leaves them out."""

    def wrap(f: F) -> F:
        if layouts:
            f = layout_options()(f)
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
        return click.option(
            "--remote-root", type=Location(exists=True, file_okay=False, dir_okay=True), help=help_text
        )(f)

    return wrap


def remote_checks(
    remote_root: str | None,
    metadata: tuple[str, ...],
    metadata_partitions: int | None,
    layout: str | None = None,
    layout_template: str | None = None,
    aiven_key_prefix: str | None = None,
    private_keys: tuple[str, ...] = (),
) -> RemoteChecks | None:
    """The run's :class:`~kdump.commands.remote_tier.RemoteChecks` (None without ``--remote-root``; the others
    alone are a usage error)."""
    if remote_root is None:
        given = [
            name
            for name, value in (
                ("--layout", layout),
                ("--layout-template", layout_template),
                ("--aiven-key-prefix", aiven_key_prefix),
                ("--aiven-private-key", private_keys),
                ("--metadata", metadata),
                ("--metadata-partitions", metadata_partitions),
            )
            if value
        ]
        if given:
            raise click.UsageError(
                f"{', '.join(given)} go{'es' if len(given) == 1 else ''} with --remote-root"
            )
        return None
    chosen, keyring = layout_and_keyring(layout, layout_template, aiven_key_prefix, private_keys)
    from kdump.commands.remote_tier import RemoteChecks, RemoteOptions  # loaded only when asked for

    return RemoteChecks(RemoteOptions(remote_root, chosen, metadata, metadata_partitions or 50, keyring))
