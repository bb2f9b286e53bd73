"""A partition's ``partition.metadata`` (Kafka's ``PartitionMetadataFile`` and ``PartitionMetadataReadBuffer``):
``version: 0`` and ``topic_id: <Uuid>``."""

from __future__ import annotations

import os
import re
from dataclasses import dataclass

from kdump.errors import CheckpointFormatError
from kdump.jdk.text import string_split
from kdump.storage.byte_source import ByteSource, location_of
from kdump.storage.checkpoint_file import (
    Line,
    absolute_path,
    decode_utf8_line,
    java_parse_int,
    read_whole,
    split_lines,
    state_file_error,
)
from kdump.storage.kafka_uuid import decode_uuid, encode_uuid

PARTITION_METADATA_VERSION = 0


@dataclass(frozen=True)
class PartitionMetadata:
    """A ``partition.metadata`` file (Kafka's ``PartitionMetadata``): version and topic id.

    ``topic_id`` is Kafka's canonical rendering (22-character base64url) of ``topic_id_bytes``.
    """

    version: int
    topic_id: str
    topic_id_bytes: bytes
    path: str | None = None


_COLON_WHITESPACE = re.compile(r":[ \t\n\x0b\f\r]+")


def parse_partition_metadata(data: bytes, path: str | os.PathLike[str] | None = None) -> PartitionMetadata:
    """Decode ``partition.metadata`` like Kafka's ``PartitionMetadataReadBuffer``.

    Each of the first two lines is split on ``:\\s+`` and must give two pieces (the labels themselves are not
    checked, as in Kafka); the version must be a non-negative int and the topic id a non-zero base64url UUID.
    Lines after the second are ignored.
    """
    where = None if path is None else os.fspath(path)
    location = absolute_path(where)
    lines = split_lines(data)

    def malformed(line: Line, text: str) -> CheckpointFormatError:
        return state_file_error(
            f"Malformed line in checkpoint file [{location}]: {text}", where, line.number, line.position
        )

    if not lines:
        raise state_file_error(
            f"missing version line in partition metadata file ({location})",
            where,
            1,
            0,
            kafka_message="NullPointerException",
        )
    first = lines[0]
    text = decode_utf8_line(first, where, "partition metadata file")
    pieces = string_split(_COLON_WHITESPACE, text)
    if len(pieces) != 2:
        raise malformed(first, text)
    version = java_parse_int(pieces[1])
    if version is None:
        raise malformed(first, text)
    if version < PARTITION_METADATA_VERSION:
        raise state_file_error(
            f"Unrecognized version of partition metadata file + ({location}): {version}",
            where,
            first.number,
            first.position,
        )
    if len(lines) < 2:
        raise state_file_error(
            f"missing topic_id line in partition metadata file ({location})",
            where,
            2,
            len(data),
            kafka_message="NullPointerException",
        )
    second = lines[1]
    text = decode_utf8_line(second, where, "partition metadata file")
    pieces = string_split(_COLON_WHITESPACE, text)
    if len(pieces) != 2:
        raise malformed(second, text)
    try:
        raw = decode_uuid(pieces[1])
    except ValueError as exc:
        raise state_file_error(str(exc), where, second.number, second.position) from None
    if raw == bytes(16):
        raise state_file_error(
            f"Invalid topic ID in partition metadata file ({location})", where, second.number, second.position
        )
    return PartitionMetadata(version, encode_uuid(raw), raw, where)


def read_partition_metadata(path: str | os.PathLike[str] | ByteSource) -> PartitionMetadata:
    """Read and decode a ``partition.metadata`` file."""
    return parse_partition_metadata(read_whole(path), location_of(path))


def encode_partition_metadata(topic_id: str, *, version: int = PARTITION_METADATA_VERSION) -> bytes:
    """Kafka's ``PartitionMetadata.encode``: ``version: <v>\\ntopic_id: <id>`` with no final newline."""
    return f"version: {version}\ntopic_id: {topic_id}".encode()
