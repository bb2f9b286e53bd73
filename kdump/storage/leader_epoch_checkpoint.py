"""A partition's ``leader-epoch-checkpoint`` (Kafka's ``LeaderEpochCheckpointFile`` over ``CheckpointFile``):
a version line (0), a count line and ``<epoch> <startOffset>`` lines, the broker's ``LeaderEpochFileCache``."""

from __future__ import annotations

import os
from collections.abc import Iterable
from dataclasses import dataclass

from kdump.jdk.text import string_split
from kdump.storage.byte_source import ByteSource, location_of
from kdump.storage.checkpoint_file import (
    INT32,
    INT64,
    JAVA_WHITESPACE,
    encode_checkpoint,
    java_parse_int,
    number_format_message,
    parse_checkpoint,
    read_whole,
)

LEADER_EPOCH_CHECKPOINT_VERSION = 0


@dataclass(frozen=True)
class EpochEntry:
    """One line of a ``leader-epoch-checkpoint``: ``<epoch> <startOffset>`` (Kafka's ``EpochEntry``)."""

    epoch: int
    start_offset: int


@dataclass(frozen=True)
class LeaderEpochCheckpoint:
    """A ``leader-epoch-checkpoint`` file.  ``version`` is None for an empty file."""

    version: int | None
    entries: tuple[EpochEntry, ...]
    path: str | None = None


def _parse_epoch_entry(text: str) -> EpochEntry | None:
    parts = string_split(JAVA_WHITESPACE, text)
    if len(parts) != 2:
        return None
    epoch = java_parse_int(parts[0], INT32)
    start_offset = java_parse_int(parts[1], INT64)
    if epoch is None or start_offset is None:
        return None
    return EpochEntry(epoch, start_offset)


def _epoch_entry_kafka_error(text: str) -> str | None:
    parts = string_split(JAVA_WHITESPACE, text)
    return number_format_message(parts, [INT32, INT64]) if len(parts) == 2 else None


def parse_leader_epoch_checkpoint(
    data: bytes, path: str | os.PathLike[str] | None = None
) -> LeaderEpochCheckpoint:
    """Decode a ``leader-epoch-checkpoint`` (version 0, ``<epoch> <startOffset>`` lines), Kafka semantics."""
    where = None if path is None else os.fspath(path)
    version, entries = parse_checkpoint(
        data, where, LEADER_EPOCH_CHECKPOINT_VERSION, _parse_epoch_entry, _epoch_entry_kafka_error
    )
    return LeaderEpochCheckpoint(version, tuple(entries), where)


def read_leader_epoch_checkpoint(path: str | os.PathLike[str] | ByteSource) -> LeaderEpochCheckpoint:
    """Read and decode a ``leader-epoch-checkpoint`` file."""
    return parse_leader_epoch_checkpoint(read_whole(path), location_of(path))


def encode_leader_epoch_checkpoint(
    entries: Iterable[EpochEntry], *, version: int = LEADER_EPOCH_CHECKPOINT_VERSION
) -> bytes:
    """The bytes Kafka writes for a ``leader-epoch-checkpoint``."""
    return encode_checkpoint(version, [f"{e.epoch} {e.start_offset}" for e in entries])
