"""The options that give a command a tiered partition's remote part (``verify``, ``ls``, ``txn``, ``find``), as
``kdump tiered`` takes them: ``--remote-root``, ``--metadata``, ``--metadata-partitions``, and the object layout
(:func:`layout_options`: ``--layout``, ``--layout-template``, ``--aiven-key-prefix``, ``--aiven-private-key``).
The layout and the keyring are made here, once, and handed down: options -> command -> byte source."""

from __future__ import annotations

import functools
from collections.abc import Callable
from dataclasses import dataclass, field, fields
from typing import TYPE_CHECKING, Any, TypeVar

import click

from kdump.cli.path_args import Location

if TYPE_CHECKING:
    from kdump.commands.remote_tier import RemoteChecks, RemoteOptions
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


@dataclass(frozen=True)
class RemoteArgs:
    """The remote options of a command as one value: what :func:`remote_options` adds, handed to the command as
    its ``remote_args`` parameter (``kdump files`` makes one of its own options).  A new remote option is a field
    here and its ``click.option`` in :func:`remote_options`; each field's metadata names its option and the
    ``kafka-log`` source's option (``kdump spark``).  The fields are in the order a usage error names them."""

    remote_root: str | None = field(
        default=None, metadata={"option": "--remote-root", "source": "remoteRoot"}
    )
    layout: str | None = field(default=None, metadata={"option": "--layout", "source": "layout"})
    layout_template: str | None = field(
        default=None, metadata={"option": "--layout-template", "source": "layoutTemplate"}
    )
    aiven_key_prefix: str | None = field(
        default=None, metadata={"option": "--aiven-key-prefix", "source": "aivenKeyPrefix"}
    )
    private_keys: tuple[str, ...] = field(
        default=(), metadata={"option": "--aiven-private-key", "source": "aivenPrivateKey", "path": "key"}
    )
    metadata: tuple[str, ...] = field(
        default=(), metadata={"option": "--metadata", "source": "metadata", "path": "directory"}
    )
    metadata_partitions: int | None = field(
        default=None, metadata={"option": "--metadata-partitions", "source": "metadataPartitions"}
    )

    def without_root(self) -> list[str]:
        """The options given that go with ``--remote-root`` when it is not given (none when it is)."""
        if self.remote_root is not None:
            return []
        return [
            f.metadata["option"] for f in fields(self) if f.name != "remote_root" and getattr(self, f.name)
        ]

    def options(self) -> RemoteOptions | None:
        """The run's :class:`~kdump.commands.remote_tier.RemoteOptions` (None without ``--remote-root``): a usage
        error for options given without it, options that do not go together, a bad template or a key file that
        is not a key."""
        given = self.without_root()
        if given:
            raise click.UsageError(
                f"{', '.join(given)} go{'es' if len(given) == 1 else ''} with --remote-root"
            )
        if self.remote_root is None:
            return None
        chosen, keyring = layout_and_keyring(
            self.layout, self.layout_template, self.aiven_key_prefix, self.private_keys
        )
        from kdump.analysis.remote_log_metadata import (
            DEFAULT_METADATA_PARTITIONS,
        )  # loaded only when asked for
        from kdump.commands.remote_tier import RemoteOptions

        partitions = self.metadata_partitions or DEFAULT_METADATA_PARTITIONS
        return RemoteOptions(self.remote_root, chosen, self.metadata, partitions, keyring)

    def checks(self) -> RemoteChecks | None:
        """The run's :class:`~kdump.commands.remote_tier.RemoteChecks` (None without ``--remote-root``)."""
        options = self.options()
        if options is None:
            return None
        from kdump.commands.remote_tier import RemoteChecks

        return RemoteChecks(options)

    def source_options(self, paths: dict[str, Callable[[str], str]]) -> dict[str, str]:
        """The options as the ``kafka-log`` source takes them (``kdump spark``): each given one by its source
        name, repeated ones joined with commas, paths made absolute by ``paths`` (by kind: ``directory`` for
        ``--metadata``, ``key`` for ``--aiven-private-key``'s ``[ID=]PEM``): the planner may run elsewhere."""
        out = {}
        for f in fields(self):
            value = getattr(self, f.name)
            if value is None or value == ():
                continue
            values = value if isinstance(value, tuple) else (value,)
            kind = f.metadata.get("path")
            out[f.metadata["source"]] = ",".join(str(v) if kind is None else paths[kind](v) for v in values)
        return out


def remote_options(help_text: str, *, layouts: bool = True) -> Callable[[F], F]:
    """``--remote-root`` (with ``help_text``), ``--metadata``, ``--metadata-partitions`` and, with ``layouts``,
    the layout (:func:`layout_options`); a reader of Kafka's layout only leaves them out.  The command gets
    them as one :class:`RemoteArgs`, its ``remote_args`` parameter."""

    def wrap(f: F) -> F:
        @functools.wraps(f)
        def command(*args: Any, **kwargs: Any) -> Any:
            values = {name: kwargs.pop(name) for name in _FIELDS if name in kwargs}
            return f(*args, remote_args=RemoteArgs(**values), **kwargs)

        c: Any = command
        if layouts:
            c = layout_options()(c)
        c = click.option(
            "--metadata-partitions",
            type=click.IntRange(min=1),
            default=None,
            metavar="N",
            help="With --remote-root: remote.log.metadata.topic.num.partitions [default: 50].",
        )(c)
        c = click.option(
            "--metadata",
            "metadata",
            multiple=True,
            type=Location(exists=True, file_okay=False, dir_okay=True),
            help="With --remote-root: a log directory holding __remote_log_metadata partitions, or one of them "
            "(repeatable) [default: each partition's own log directory].",
        )(c)
        return click.option(  # type: ignore[no-any-return]
            "--remote-root", type=Location(exists=True, file_okay=False, dir_okay=True), help=help_text
        )(c)

    return wrap


_FIELDS = tuple(f.name for f in fields(RemoteArgs))
