"""Offset checkpoints (Kafka's ``OffsetCheckpointFile`` over ``CheckpointFile``): the log directory's
``recovery-point-offset-checkpoint``, ``replication-offset-checkpoint``, ``log-start-offset-checkpoint`` and
``cleaner-offset-checkpoint``, each a version line (0), a count line and ``<topic> <partition> <offset>`` lines.
"""

from __future__ import annotations

import os
from collections.abc import Iterable, Mapping
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

OFFSET_CHECKPOINT_VERSION = 0

#: An offset checkpoint file's content as Kafka reads it: ``{(topic, partition): offset}``.
CheckpointOffsets = dict[tuple[str, int], int]


@dataclass(frozen=True)
class TopicPartitionOffset:
    """One line of an offset checkpoint: ``<topic> <partition> <offset>``."""

    topic: str
    partition: int
    offset: int


@dataclass(frozen=True)
class OffsetCheckpoint:
    """An offset checkpoint file.  ``version`` is None for an empty file (Kafka reads no entries)."""

    version: int | None
    entries: tuple[TopicPartitionOffset, ...]
    path: str | None = None

    def offsets(self) -> CheckpointOffsets:
        """``{(topic, partition): offset}`` as Kafka's ``OffsetCheckpointFile.read`` builds it (last line wins)."""
        return {(entry.topic, entry.partition): entry.offset for entry in self.entries}


def _parse_offset_entry(text: str) -> TopicPartitionOffset | None:
    parts = string_split(JAVA_WHITESPACE, text)
    if len(parts) != 3:
        return None
    partition = java_parse_int(parts[1], INT32)
    offset = java_parse_int(parts[2], INT64)
    if partition is None or offset is None:
        return None
    return TopicPartitionOffset(parts[0], partition, offset)


def _offset_entry_kafka_error(text: str) -> str | None:
    parts = string_split(JAVA_WHITESPACE, text)
    return number_format_message(parts[1:], [INT32, INT64]) if len(parts) == 3 else None


def parse_offset_checkpoint(data: bytes, path: str | os.PathLike[str] | None = None) -> OffsetCheckpoint:
    """Decode an offset checkpoint (version 0, ``<topic> <partition> <offset>`` lines).

    Kafka semantics: an empty file, or one with only the version line, has no entries; the count must match
    the number of entry lines.  A bad number in an entry is reported as a malformed line (Kafka itself lets
    the ``NumberFormatException`` escape; its text is kept in the error's ``kafka_message``).
    """
    where = None if path is None else os.fspath(path)
    version, entries = parse_checkpoint(
        data, where, OFFSET_CHECKPOINT_VERSION, _parse_offset_entry, _offset_entry_kafka_error
    )
    return OffsetCheckpoint(version, tuple(entries), where)


def read_offset_checkpoint(path: str | os.PathLike[str] | ByteSource) -> OffsetCheckpoint:
    """Read and decode an offset checkpoint file (I/O errors propagate as :class:`OSError`)."""
    return parse_offset_checkpoint(read_whole(path), location_of(path))


def encode_offset_checkpoint(
    entries: Iterable[TopicPartitionOffset] | Mapping[tuple[str, int], int],
    *,
    version: int = OFFSET_CHECKPOINT_VERSION,
) -> bytes:
    """The bytes Kafka writes for an offset checkpoint with these entries (in the given order)."""
    if isinstance(entries, Mapping):
        items = [
            TopicPartitionOffset(topic, partition, offset) for (topic, partition), offset in entries.items()
        ]
    else:
        items = list(entries)
    return encode_checkpoint(version, [f"{e.topic} {e.partition} {e.offset}" for e in items])
