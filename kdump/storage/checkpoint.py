"""Kafka's small text state files: checkpoints, ``meta.properties``, ``partition.metadata``, ``quorum-state``,
``.kafka_cleanshutdown``.

Each reader mirrors the Kafka class that reads the file and, where Kafka has an error text, uses it verbatim:

=================================== ============================================== ==========================
file                                Kafka reader                                   decoded as
=================================== ============================================== ==========================
``recovery-point-offset-checkpoint`` ``CheckpointFile`` + ``OffsetCheckpointFile``  :class:`OffsetCheckpoint`
``replication-offset-checkpoint``
``log-start-offset-checkpoint``
``cleaner-offset-checkpoint``
``leader-epoch-checkpoint``          ``CheckpointFile`` + ``LeaderEpochCheckpointFile`` :class:`LeaderEpochCheckpoint`
``partition.metadata``               ``PartitionMetadataReadBuffer``                 :class:`PartitionMetadata`
``meta.properties``                  ``java.util.Properties`` + ``MetaProperties``   :class:`MetaProperties`
``quorum-state``                     ``FileQuorumStateStore``                        :class:`QuorumState`
``.kafka_cleanshutdown``             ``CleanShutdownFileHandler``                    :class:`CleanShutdown`
=================================== ============================================== ==========================

Every problem is a :class:`CheckpointFormatError` whose message starts with ``line <n>:`` (1-based) followed by
Kafka's own text when it has one (e.g. ``Malformed line in checkpoint file [<abs path>]: <line>``); the error
also carries ``path``, the byte ``position`` of the line and a ``line`` attribute.  Lines end at ``\\n``,
``\\r`` or ``\\r\\n`` (Java's ``BufferedReader.readLine``); numbers follow ``Integer.parseInt`` /
``Long.parseLong`` (optional sign, digits only, no blanks); fields split on Java's ``\\s+``.  Encoders write
the same formats, for tests and for tools that repair files.
"""

from __future__ import annotations

import base64
import json
import os
import re
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any, TypeVar

from kdump.errors import CheckpointFormatError
from kdump.jdk.text import string_split
from kdump.storage.naming import NumberFormatError, java_absolute_path, parse_java_long

__all__ = [
    "OFFSET_CHECKPOINT_FILES",
    "CleanShutdown",
    "EpochEntry",
    "LeaderEpochCheckpoint",
    "MetaProperties",
    "OffsetCheckpoint",
    "PartitionMetadata",
    "QuorumState",
    "TopicPartitionOffset",
    "decode_uuid",
    "encode_clean_shutdown",
    "encode_leader_epoch_checkpoint",
    "encode_meta_properties",
    "encode_offset_checkpoint",
    "encode_partition_metadata",
    "encode_quorum_state",
    "encode_uuid",
    "parse_clean_shutdown",
    "parse_leader_epoch_checkpoint",
    "parse_meta_properties",
    "parse_offset_checkpoint",
    "parse_partition_metadata",
    "parse_quorum_state",
    "read_checkpoint",
    "read_clean_shutdown",
    "read_leader_epoch_checkpoint",
    "read_meta_properties",
    "read_offset_checkpoint",
    "read_partition_metadata",
    "read_quorum_state",
]

OFFSET_CHECKPOINT_FILES = (
    "recovery-point-offset-checkpoint",
    "replication-offset-checkpoint",
    "log-start-offset-checkpoint",
    "cleaner-offset-checkpoint",
)
"""Log-dir files in the generic ``<topic> <partition> <offset>`` checkpoint format."""

LEADER_EPOCH_CHECKPOINT_FILE = "leader-epoch-checkpoint"
PARTITION_METADATA_FILE = "partition.metadata"
META_PROPERTIES_FILE = "meta.properties"
QUORUM_STATE_FILE = "quorum-state"
CLEAN_SHUTDOWN_FILE = ".kafka_cleanshutdown"

OFFSET_CHECKPOINT_VERSION = 0
LEADER_EPOCH_CHECKPOINT_VERSION = 0
PARTITION_METADATA_VERSION = 0

_INT32 = (-(1 << 31), (1 << 31) - 1)
_INT64 = (-(1 << 63), (1 << 63) - 1)

_T = TypeVar("_T")


# ---------------------------------------------------------------------------------------------------------------
# Java-compatible primitives


def _absolute_path(path: str | None) -> str:
    return "<memory>" if path is None else java_absolute_path(path)


def _java_parse_int(text: str, bounds: tuple[int, int] = _INT32) -> int | None:
    """``Integer.parseInt`` / ``Long.parseLong`` within ``bounds``; None where Java throws NumberFormatException."""
    try:
        value = parse_java_long(text)
    except NumberFormatError:
        return None
    return value if bounds[0] <= value <= bounds[1] else None


_JAVA_WHITESPACE = re.compile(r"[ \t\n\x0b\f\r]+")


_LINE_END = re.compile(rb"\r\n|\r|\n")


@dataclass(frozen=True)
class _Line:
    number: int
    """1-based line number."""
    position: int
    """Byte offset of the line's first byte."""
    raw: bytes


def _split_lines(data: bytes) -> list[_Line]:
    """Natural lines as ``BufferedReader.readLine`` sees them (terminated by LF, CR or CRLF; a final line
    without terminator counts, an empty remainder after the last terminator does not)."""
    lines: list[_Line] = []
    start = 0
    for match in _LINE_END.finditer(data):
        lines.append(_Line(len(lines) + 1, start, data[start : match.start()]))
        start = match.end()
    if start < len(data):
        lines.append(_Line(len(lines) + 1, start, data[start:]))
    return lines


def _error(
    text: str, path: str | None, line: int, position: int | None, kafka_message: str | None = None
) -> CheckpointFormatError:
    error = CheckpointFormatError(f"line {line}: {text}", path=path, position=position)
    error.line = line  # type: ignore[attr-defined]
    error.kafka_message = text if kafka_message is None else kafka_message  # type: ignore[attr-defined]
    return error


def _decode_utf8(line: _Line, path: str | None, what: str) -> str:
    """Strict UTF-8, like Kafka's ``Files.newBufferedReader(path, UTF_8)`` (malformed input is an error)."""
    try:
        return line.raw.decode("utf-8")
    except UnicodeDecodeError as exc:
        error = _error(
            f"invalid UTF-8 at byte {line.position + exc.start} in {what} [{_absolute_path(path)}]",
            path,
            line.number,
            line.position + exc.start,
            kafka_message=f"Input length = {exc.end - exc.start}",
        )
    raise error


def _read_whole(path: str | os.PathLike[str]) -> bytes:
    with open(path, "rb") as handle:
        return handle.read()


# ---------------------------------------------------------------------------------------------------------------
# Base64 URL-safe UUIDs (Kafka's Uuid.toString / Uuid.fromString with java.util.Base64 rules)

_URL_ALPHABET = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_"
_URL_VALUES = {ord(ch): i for i, ch in enumerate(_URL_ALPHABET)}


def _java_base64url_decode(text: str) -> bytes:
    """``Base64.getUrlDecoder().decode(String)`` including its error messages (raised as ValueError)."""
    src = text.encode("latin-1", errors="replace")  # String.getBytes(ISO_8859_1): unmappable -> '?'
    length = len(src)
    if length == 0:
        return b""
    if length < 2:
        raise ValueError("Input byte[] should at least have 2 bytes for base64 bytes")
    out = bytearray()
    bits = 0
    shift = 18
    sp = 0
    while sp < length:
        byte = src[sp]
        sp += 1
        value = _URL_VALUES.get(byte)
        if value is None:
            if byte == 0x3D:  # '='
                if (shift == 6 and (sp == length or src[sp] != 0x3D)) or shift == 18:
                    raise ValueError("Input byte array has wrong 4-byte ending unit")
                if shift == 6:
                    sp += 1
                break
            signed = byte - 256 if byte >= 128 else byte
            raise ValueError(
                f"Illegal base64 character {format(signed, 'x') if signed >= 0 else '-' + format(-signed, 'x')}"
            )
        bits |= value << shift
        shift -= 6
        if shift < 0:
            out += bytes(((bits >> 16) & 0xFF, (bits >> 8) & 0xFF, bits & 0xFF))
            shift = 18
            bits = 0
    if shift == 6:
        out.append((bits >> 16) & 0xFF)
    elif shift == 0:
        out += bytes(((bits >> 16) & 0xFF, (bits >> 8) & 0xFF))
    elif shift == 12:
        raise ValueError("Last unit does not have enough valid bits")
    if sp < length:
        raise ValueError(f"Input byte array has incorrect ending byte at {sp}")
    return bytes(out)


def decode_uuid(text: str) -> bytes:
    """Kafka's ``Uuid.fromString``: 16 bytes from unpadded (or padded) base64url; ValueError with Kafka's text."""
    java_length = len(text) + sum(1 for ch in text if ord(ch) > 0xFFFF)
    if java_length > 24:
        raise ValueError(f"Input string with prefix `{text[:24]}` is too long to be decoded as a base64 UUID")
    raw = _java_base64url_decode(text)
    if len(raw) != 16:
        raise ValueError(
            f"Input string `{text}` decoded as {len(raw)} bytes, which is not equal to the expected 16 bytes "
            "of a base64-encoded UUID"
        )
    return raw


def encode_uuid(raw: bytes) -> str:
    """Kafka's ``Uuid.toString``: the 16 bytes as unpadded base64url (22 characters)."""
    if len(raw) != 16:
        raise ValueError("a Kafka Uuid has 16 bytes")
    return base64.urlsafe_b64encode(raw).decode("ascii").rstrip("=")


ZERO_UUID = "AAAAAAAAAAAAAAAAAAAAAA"


# ---------------------------------------------------------------------------------------------------------------
# Generic CheckpointFile


@dataclass(frozen=True)
class TopicPartitionOffset:
    """One line of an offset checkpoint: ``<topic> <partition> <offset>``."""

    topic: str
    partition: int
    offset: int


@dataclass(frozen=True)
class EpochEntry:
    """One line of a ``leader-epoch-checkpoint``: ``<epoch> <startOffset>`` (Kafka's ``EpochEntry``)."""

    epoch: int
    start_offset: int


@dataclass(frozen=True)
class OffsetCheckpoint:
    """An offset checkpoint file.  ``version`` is None for an empty file (Kafka reads no entries)."""

    version: int | None
    entries: tuple[TopicPartitionOffset, ...]
    path: str | None = None

    def offsets(self) -> dict[tuple[str, int], int]:
        """``{(topic, partition): offset}`` as Kafka's ``OffsetCheckpointFile.read`` builds it (last line wins)."""
        return {(entry.topic, entry.partition): entry.offset for entry in self.entries}


@dataclass(frozen=True)
class LeaderEpochCheckpoint:
    """A ``leader-epoch-checkpoint`` file.  ``version`` is None for an empty file."""

    version: int | None
    entries: tuple[EpochEntry, ...]
    path: str | None = None


def _parse_checkpoint(
    data: bytes,
    path: str | None,
    expected_version: int,
    parse_entry: Callable[[str], _T | None],
    entry_kafka_error: Callable[[str], str | None],
) -> tuple[int | None, list[_T]]:
    """Kafka's ``CheckpointFile.CheckpointReadBuffer.read``."""
    where = _absolute_path(path)
    lines = _split_lines(data)

    def malformed(line: _Line, text: str, kafka_message: str | None = None) -> CheckpointFormatError:
        return _error(
            f"Malformed line in checkpoint file [{where}]: {text}",
            path,
            line.number,
            line.position,
            kafka_message,
        )

    if not lines:
        return None, []
    first = lines[0]
    text = _decode_utf8(first, path, "checkpoint file")
    version = _java_parse_int(text)
    if version is None:
        raise malformed(first, text)
    if version != expected_version:
        raise _error(
            f"Unrecognised version:{version}, expected version: {expected_version} in checkpoint file at: {where}",
            path,
            first.number,
            first.position,
        )
    if len(lines) < 2:
        return version, []  # Kafka returns no entries when the count line is missing
    second = lines[1]
    text = _decode_utf8(second, path, "checkpoint file")
    expected_size = _java_parse_int(text)
    if expected_size is None:
        raise malformed(second, text)
    if expected_size < 0:
        raise _error(
            f"negative entry count {expected_size} in checkpoint file [{where}]",
            path,
            second.number,
            second.position,
            kafka_message=f"Illegal Capacity: {expected_size}",
        )
    entries: list[_T] = []
    for line in lines[2:]:
        text = _decode_utf8(line, path, "checkpoint file")
        entry = parse_entry(text)
        if entry is None:
            raise malformed(line, text, entry_kafka_error(text))
        entries.append(entry)
    if len(entries) != expected_size:
        raise _error(
            f"Expected [{expected_size}] entries in checkpoint file [{where}], but found only [{len(entries)}]",
            path,
            second.number,
            second.position,
        )
    return version, entries


def _number_format_message(parts: list[str], kinds: list[tuple[int, int]]) -> str | None:
    """The NumberFormatException Kafka's entry formatter would throw for a line with the right field count."""
    for text, bounds in zip(parts, kinds, strict=False):
        if _java_parse_int(text, bounds) is None:
            return f'For input string: "{text}"'
    return None


def _parse_offset_entry(text: str) -> TopicPartitionOffset | None:
    parts = string_split(_JAVA_WHITESPACE, text)
    if len(parts) != 3:
        return None
    partition = _java_parse_int(parts[1], _INT32)
    offset = _java_parse_int(parts[2], _INT64)
    if partition is None or offset is None:
        return None
    return TopicPartitionOffset(parts[0], partition, offset)


def _offset_entry_kafka_error(text: str) -> str | None:
    parts = string_split(_JAVA_WHITESPACE, text)
    return _number_format_message(parts[1:], [_INT32, _INT64]) if len(parts) == 3 else None


def _parse_epoch_entry(text: str) -> EpochEntry | None:
    parts = string_split(_JAVA_WHITESPACE, text)
    if len(parts) != 2:
        return None
    epoch = _java_parse_int(parts[0], _INT32)
    start_offset = _java_parse_int(parts[1], _INT64)
    if epoch is None or start_offset is None:
        return None
    return EpochEntry(epoch, start_offset)


def _epoch_entry_kafka_error(text: str) -> str | None:
    parts = string_split(_JAVA_WHITESPACE, text)
    return _number_format_message(parts, [_INT32, _INT64]) if len(parts) == 2 else None


def parse_offset_checkpoint(data: bytes, path: str | os.PathLike[str] | None = None) -> OffsetCheckpoint:
    """Decode an offset checkpoint (version 0, ``<topic> <partition> <offset>`` lines).

    Kafka semantics: an empty file, or one with only the version line, has no entries; the count must match
    the number of entry lines.  A bad number in an entry is reported as a malformed line (Kafka itself lets
    the ``NumberFormatException`` escape; its text is kept in the error's ``kafka_message``).
    """
    where = None if path is None else os.fspath(path)
    version, entries = _parse_checkpoint(
        data, where, OFFSET_CHECKPOINT_VERSION, _parse_offset_entry, _offset_entry_kafka_error
    )
    return OffsetCheckpoint(version, tuple(entries), where)


def parse_leader_epoch_checkpoint(
    data: bytes, path: str | os.PathLike[str] | None = None
) -> LeaderEpochCheckpoint:
    """Decode a ``leader-epoch-checkpoint`` (version 0, ``<epoch> <startOffset>`` lines), Kafka semantics."""
    where = None if path is None else os.fspath(path)
    version, entries = _parse_checkpoint(
        data, where, LEADER_EPOCH_CHECKPOINT_VERSION, _parse_epoch_entry, _epoch_entry_kafka_error
    )
    return LeaderEpochCheckpoint(version, tuple(entries), where)


def read_offset_checkpoint(path: str | os.PathLike[str]) -> OffsetCheckpoint:
    """Read and decode an offset checkpoint file (I/O errors propagate as :class:`OSError`)."""
    return parse_offset_checkpoint(_read_whole(path), path)


def read_leader_epoch_checkpoint(path: str | os.PathLike[str]) -> LeaderEpochCheckpoint:
    """Read and decode a ``leader-epoch-checkpoint`` file."""
    return parse_leader_epoch_checkpoint(_read_whole(path), path)


def _encode_checkpoint(version: int, lines: list[str]) -> bytes:
    """``CheckpointWriteBuffer.write``: version, count, one line per entry, each ended by ``\\n``."""
    return "".join(f"{line}\n" for line in [str(version), str(len(lines)), *lines]).encode("utf-8")


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
    return _encode_checkpoint(version, [f"{e.topic} {e.partition} {e.offset}" for e in items])


def encode_leader_epoch_checkpoint(
    entries: Iterable[EpochEntry], *, version: int = LEADER_EPOCH_CHECKPOINT_VERSION
) -> bytes:
    """The bytes Kafka writes for a ``leader-epoch-checkpoint``."""
    return _encode_checkpoint(version, [f"{e.epoch} {e.start_offset}" for e in entries])


# ---------------------------------------------------------------------------------------------------------------
# partition.metadata


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
    location = _absolute_path(where)
    lines = _split_lines(data)

    def malformed(line: _Line, text: str) -> CheckpointFormatError:
        return _error(
            f"Malformed line in checkpoint file [{location}]: {text}", where, line.number, line.position
        )

    if not lines:
        raise _error(
            f"missing version line in partition metadata file ({location})",
            where,
            1,
            0,
            kafka_message="NullPointerException",
        )
    first = lines[0]
    text = _decode_utf8(first, where, "partition metadata file")
    pieces = string_split(_COLON_WHITESPACE, text)
    if len(pieces) != 2:
        raise malformed(first, text)
    version = _java_parse_int(pieces[1])
    if version is None:
        raise malformed(first, text)
    if version < PARTITION_METADATA_VERSION:
        raise _error(
            f"Unrecognized version of partition metadata file + ({location}): {version}",
            where,
            first.number,
            first.position,
        )
    if len(lines) < 2:
        raise _error(
            f"missing topic_id line in partition metadata file ({location})",
            where,
            2,
            len(data),
            kafka_message="NullPointerException",
        )
    second = lines[1]
    text = _decode_utf8(second, where, "partition metadata file")
    pieces = string_split(_COLON_WHITESPACE, text)
    if len(pieces) != 2:
        raise malformed(second, text)
    try:
        raw = decode_uuid(pieces[1])
    except ValueError as exc:
        raise _error(str(exc), where, second.number, second.position) from None
    if raw == bytes(16):
        raise _error(
            f"Invalid topic ID in partition metadata file ({location})", where, second.number, second.position
        )
    return PartitionMetadata(version, encode_uuid(raw), raw, where)


def read_partition_metadata(path: str | os.PathLike[str]) -> PartitionMetadata:
    """Read and decode a ``partition.metadata`` file."""
    return parse_partition_metadata(_read_whole(path), path)


def encode_partition_metadata(topic_id: str, *, version: int = PARTITION_METADATA_VERSION) -> bytes:
    """Kafka's ``PartitionMetadata.encode``: ``version: <v>\\ntopic_id: <id>`` with no final newline."""
    return f"version: {version}\ntopic_id: {topic_id}".encode()


# ---------------------------------------------------------------------------------------------------------------
# meta.properties (java.util.Properties.load + MetaProperties.Builder)


@dataclass(frozen=True)
class MetaProperties:
    """A ``meta.properties`` file (Kafka's ``MetaProperties``).

    ``version`` 0 is a ZooKeeper-era file (``broker.id``), 1 a KRaft one (``node.id``, maybe ``directory.id``);
    ``node_id`` holds whichever applies.  ``properties`` has every key in file order (last value wins, as in
    Java) and ``comments`` the comment lines (Kafka writes an empty one and a date).
    """

    version: int
    cluster_id: str | None
    node_id: int | None
    directory_id: str | None
    properties: dict[str, str] = field(default_factory=dict)
    comments: tuple[str, ...] = ()
    path: str | None = None


_PROPERTY_BLANKS = " \t\f"
_JAVA_TRIM = "".join(chr(c) for c in range(0x21))  # String.trim strips every char <= U+0020


def _unescape_property(text: str, line: _Line, path: str | None) -> str:
    """``Properties.loadConvert``: ``\\uXXXX``, ``\\t \\n \\r \\f`` and ``\\<c>`` -> ``c``."""
    out: list[str] = []
    i = 0
    while i < len(text):
        ch = text[i]
        i += 1
        if ch != "\\" or i >= len(text):
            out.append(ch)
            continue
        ch = text[i]
        i += 1
        if ch == "u":
            digits = text[i : i + 4]
            if len(digits) < 4 or any(c not in "0123456789abcdefABCDEF" for c in digits):
                raise _error("Malformed \\uxxxx encoding.", path, line.number, line.position)
            out.append(chr(int(digits, 16)))
            i += 4
        else:
            out.append({"t": "\t", "r": "\r", "n": "\n", "f": "\f"}.get(ch, ch))
    return "".join(out)


def _load_properties(data: bytes, path: str | None) -> tuple[dict[str, str], dict[str, _Line], list[str]]:
    """``java.util.Properties.load(InputStream)``: ISO-8859-1 text, ``#``/``!`` comments, ``key=value``,
    ``key: value`` or ``key value``, backslash line continuation and escapes."""
    values: dict[str, str] = {}
    origin: dict[str, _Line] = {}
    comments: list[str] = []
    lines = _split_lines(data)
    i = 0
    while i < len(lines):
        start = lines[i]
        text = start.raw.decode("latin-1").lstrip(_PROPERTY_BLANKS)
        i += 1
        if not text:
            continue
        if text[0] in "#!":
            comments.append(text)
            continue
        # join continuation lines: an odd number of trailing backslashes continues the logical line
        while (len(text) - len(text.rstrip("\\"))) % 2 == 1 and i < len(lines):
            text = text[:-1] + lines[i].raw.decode("latin-1").lstrip(_PROPERTY_BLANKS)
            i += 1
        if (len(text) - len(text.rstrip("\\"))) % 2 == 1:
            text = text[:-1]  # a continuation at end of file is dropped
        key_end = 0
        separator = False
        while key_end < len(text):
            ch = text[key_end]
            if ch == "\\":
                key_end += 2
                continue
            if ch in "=:":
                separator = True
                break
            if ch in _PROPERTY_BLANKS:
                break
            key_end += 1
        key_end = min(key_end, len(text))
        value_start = key_end + 1 if separator else key_end
        while value_start < len(text) and text[value_start] in _PROPERTY_BLANKS:
            value_start += 1
        if not separator and value_start < len(text) and text[value_start] in "=:":
            value_start += 1
            while value_start < len(text) and text[value_start] in _PROPERTY_BLANKS:
                value_start += 1
        key = _unescape_property(text[:key_end], start, path)
        values.pop(key, None)
        values[key] = _unescape_property(text[value_start:], start, path)
        origin[key] = start
    return values, origin, comments


def parse_meta_properties(data: bytes, path: str | os.PathLike[str] | None = None) -> MetaProperties:
    """Decode ``meta.properties`` like Kafka's ``MetaProperties.Builder(Properties)`` + ``build()``.

    Errors use Kafka's texts: ``Invalid meta.properties version string '<s>'``, ``Unknown meta.properties
    version number <n>``, ``Failed to find node.id``, ``Unable to read <key> as a base-10 number.``,
    ``Unable to read directory.id as a Uuid: <reason>``, ``cluster.id was not found.``  A missing key is
    reported at the line after the last one.
    """
    where = None if path is None else os.fspath(path)
    values, origin, comments = _load_properties(data, where)

    def fail(text: str, key: str | None) -> CheckpointFormatError:
        line = origin.get(key) if key is not None else None
        if line is None:  # a missing key: point past the end of the file
            return _error(text, where, len(_split_lines(data)) + 1, len(data))
        return _error(text, where, line.number, line.position)

    version_text = values.get("version", "0")
    version = _java_parse_int(version_text.strip(_JAVA_TRIM))
    if version is None:
        raise fail(f"Invalid meta.properties version string '{version_text}'", "version")
    if version not in (0, 1):
        raise fail(f"Unknown meta.properties version number {version}", "version")

    def required_int(key: str) -> int:
        if key not in values:
            raise fail(f"Failed to find {key}", None)
        number = _java_parse_int(values[key])
        if number is None:
            raise fail(f"Unable to read {key} as a base-10 number.", key)
        return number

    node_id: int | None = None
    if version == 0:
        if "broker.id" in values:
            node_id = required_int("broker.id")
    else:
        node_id = required_int("node.id")
    cluster_id = values.get("cluster.id")
    directory_id = None
    if "directory.id" in values:
        try:
            directory_id = encode_uuid(decode_uuid(values["directory.id"]))
        except ValueError as exc:
            raise fail(f"Unable to read directory.id as a Uuid: {exc}", "directory.id") from None
    if version != 0:
        if cluster_id is None:
            raise fail("cluster.id was not found.", None)
    return MetaProperties(version, cluster_id, node_id, directory_id, values, tuple(comments), where)


def read_meta_properties(path: str | os.PathLike[str]) -> MetaProperties:
    """Read and decode a ``meta.properties`` file."""
    return parse_meta_properties(_read_whole(path), path)


def _escape_property(text: str, is_key: bool) -> str:
    """``Properties.saveConvert`` as used by ``store(Writer)`` (non-ASCII is written as is)."""
    out: list[str] = []
    for i, ch in enumerate(text):
        if ch == " " and (i == 0 or is_key):
            out.append("\\ ")
        elif ch in "\t\n\r\f":
            out.append({"\t": "\\t", "\n": "\\n", "\r": "\\r", "\f": "\\f"}[ch])
        elif ch in "=:#!\\":
            out.append("\\" + ch)
        elif ord(ch) < 0x20 or ord(ch) == 0x7F:
            out.append(f"\\u{ord(ch):04X}")
        else:
            out.append(ch)
    return "".join(out)


def encode_meta_properties(
    properties: Mapping[str, str], *, date: str = "Thu Jan 01 00:00:00 UTC 1970"
) -> bytes:
    """What Kafka's ``PropertiesUtils.writePropertiesFile`` writes: an empty ``#`` comment, a ``#<date>``
    comment, then ``key=value`` lines (in the mapping's order; Java's own order is a hash order)."""
    lines = ["#", f"#{date}"]
    lines += [f"{_escape_property(k, True)}={_escape_property(v, False)}" for k, v in properties.items()]
    return "".join(f"{line}\n" for line in lines).encode("utf-8")


# ---------------------------------------------------------------------------------------------------------------
# quorum-state (FileQuorumStateStore + generated QuorumStateDataJsonConverter)


@dataclass(frozen=True)
class QuorumState:
    """A KRaft ``quorum-state`` file (Kafka's ``QuorumStateData``).

    ``data_version`` 0 files have ``cluster_id``, ``applied_offset`` and ``current_voters``; version 1 files
    have ``voted_directory_id`` instead.  Absent fields are None.
    """

    data_version: int
    leader_id: int
    leader_epoch: int
    voted_id: int
    voted_directory_id: str | None = None
    cluster_id: str | None = None
    applied_offset: int | None = None
    current_voters: tuple[int, ...] | None = None
    path: str | None = None


def _reject_constant(name: str) -> Any:
    raise ValueError(f"unexpected JSON constant {name}")


def _parse_json_value(text: str) -> tuple[Any, int]:
    """One JSON value from the start of ``text`` (Jackson's ``readTree`` ignores whatever follows it)."""
    decoder = json.JSONDecoder(parse_constant=_reject_constant)
    start = len(text) - len(text.lstrip(" \t\r\n"))
    return decoder.raw_decode(text, start)


def _jackson_text(node: Any) -> str:
    return json.dumps(node, separators=(",", ":"), ensure_ascii=False)


def _jackson_as_text(node: Any) -> str:
    """``JsonNode.asText()`` for the node kinds JSON can produce."""
    if node is None:
        return "null"
    if isinstance(node, bool):
        return "true" if node else "false"
    if isinstance(node, (dict, list)):
        return ""
    if isinstance(node, float):
        return repr(node)
    return str(node)


def _json_int(node: Any, bounds: tuple[int, int]) -> int:
    """``MessageUtil.jsonNodeToInt``/``jsonNodeToLong``; ValueError with Kafka's text."""
    about = "QuorumStateData"
    if isinstance(node, int) and not isinstance(node, bool) and bounds[0] <= node <= bounds[1]:
        return node
    if isinstance(node, str):
        raise ValueError(f"{about}: expected an integer or string type, but got STRING")
    text = _jackson_as_text(node)
    value = _java_parse_int(text, bounds)
    if value is None:
        raise ValueError(f'{about}: failed to parse number: For input string: "{text}"')
    return value


def _json_short_value(node: Any) -> int:
    """``JsonNode.shortValue()``: numbers are cast to a Java short, anything else is 0."""
    if isinstance(node, bool) or not isinstance(node, (int, float)):
        return 0
    if isinstance(node, float):  # Java: double -> int saturates (NaN -> 0), then int -> short wraps
        if node != node:
            node = 0
        elif node >= _INT32[1]:
            node = _INT32[1]
        elif node <= _INT32[0]:
            node = _INT32[0]
        else:
            node = int(node)
    return (node + (1 << 15)) % (1 << 16) - (1 << 15)


def parse_quorum_state(data: bytes, path: str | os.PathLike[str] | None = None) -> QuorumState:
    """Decode ``quorum-state`` like Kafka's ``FileQuorumStateStore``: only the first line is read, it must be
    a JSON object with a ``data_version`` in 0..1, then the generated converter demands the fields of that
    version (``QuorumStateData: unable to locate field '<f>', which is mandatory in version <v>``)."""
    where = None if path is None else os.fspath(path)
    lines = _split_lines(data)
    if not lines:
        raise _error("File ended prematurely.", where, 1, 0)
    first = lines[0]

    def fail(text: str) -> CheckpointFormatError:
        return _error(text, where, 1, first.position)

    text = _decode_utf8(first, where, "quorum state file")
    try:
        node, _ = _parse_json_value(text)
    except ValueError as exc:
        raise fail(f"invalid JSON: {exc}") from None
    except RecursionError:
        raise fail("invalid JSON: nested too deeply") from None
    if not isinstance(node, dict):
        raise fail(f"Deserialized node {_jackson_text(node)} is not an object node")
    if "data_version" not in node:
        raise fail(f"Deserialized node {_jackson_text(node)} does not have data_version field")
    version = _json_short_value(node["data_version"])
    if not 0 <= version <= 1:
        raise fail(f"data_version ({version}) is not within the min (0) and max (1) supported version")

    def mandatory(name: str) -> Any:
        if name not in node:
            raise fail(
                f"QuorumStateData: unable to locate field '{name}', which is mandatory in version {version}"
            )
        return node[name]

    try:
        cluster_id = applied_offset = voters = directory_id = None
        if version == 0:
            cluster_node = mandatory("clusterId")
            if not isinstance(cluster_node, str):
                raise ValueError("QuorumStateData expected a string type, but got OBJECT")
            cluster_id = cluster_node
        leader_id = _json_int(mandatory("leaderId"), _INT32)
        leader_epoch = _json_int(mandatory("leaderEpoch"), _INT32)
        voted_id = _json_int(mandatory("votedId"), _INT32)
        if version == 1:
            directory_node = mandatory("votedDirectoryId")
            if not isinstance(directory_node, str):
                raise ValueError("QuorumStateData expected a JSON string type, but got OBJECT")
            directory_id = encode_uuid(decode_uuid(directory_node))
        if version == 0:
            applied_offset = _json_int(mandatory("appliedOffset"), _INT64)
            voters_node = mandatory("currentVoters")
            if voters_node is not None:
                if not isinstance(voters_node, list):
                    raise ValueError("QuorumStateData expected a JSON array, but got OBJECT")
                parsed: list[int] = []
                for voter in voters_node:
                    if not isinstance(voter, dict) or "voterId" not in voter:
                        raise ValueError(
                            "Voter: unable to locate field 'voterId', which is mandatory in version 0"
                        )
                    parsed.append(_json_int(voter["voterId"], _INT32))
                voters = tuple(parsed)
    except ValueError as exc:
        raise fail(str(exc)) from None
    return QuorumState(
        data_version=version,
        leader_id=leader_id,
        leader_epoch=leader_epoch,
        voted_id=voted_id,
        voted_directory_id=directory_id,
        cluster_id=cluster_id,
        applied_offset=applied_offset,
        current_voters=voters,
        path=where,
    )


def read_quorum_state(path: str | os.PathLike[str]) -> QuorumState:
    """Read and decode a ``quorum-state`` file."""
    return parse_quorum_state(_read_whole(path), path)


def encode_quorum_state(state: QuorumState) -> bytes:
    """The single JSON line Kafka writes (generated converter field order, then ``data_version``)."""
    doc: dict[str, Any] = {}
    if state.data_version == 0:
        doc["clusterId"] = state.cluster_id or ""
    doc["leaderId"] = state.leader_id
    doc["leaderEpoch"] = state.leader_epoch
    doc["votedId"] = state.voted_id
    if state.data_version >= 1:
        doc["votedDirectoryId"] = state.voted_directory_id or ZERO_UUID
    if state.data_version == 0:
        doc["appliedOffset"] = state.applied_offset if state.applied_offset is not None else 0
        doc["currentVoters"] = (
            None if state.current_voters is None else [{"voterId": v} for v in state.current_voters]
        )
    doc["data_version"] = state.data_version
    return json.dumps(doc, separators=(",", ":")).encode("utf-8")


# ---------------------------------------------------------------------------------------------------------------
# .kafka_cleanshutdown


@dataclass(frozen=True)
class CleanShutdown:
    """The clean-shutdown marker.  Empty before 3.7 (``version``/``broker_epoch`` None); since 3.7
    ``{"version":0,"brokerEpoch":<n>}``."""

    version: int | None
    broker_epoch: int | None
    path: str | None = None

    @property
    def is_empty(self) -> bool:
        return self.version is None and self.broker_epoch is None


def parse_clean_shutdown(data: bytes, path: str | os.PathLike[str] | None = None) -> CleanShutdown:
    """Decode ``.kafka_cleanshutdown``.

    Kafka's ``CleanShutdownFileHandler.read`` never fails: anything it cannot read just means "broker epoch
    unknown".  kdump is stricter and reports non-JSON content, so a damaged marker is visible; an empty (or
    blank) file is the old-style marker.
    """
    where = None if path is None else os.fspath(path)
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as exc:
        line = data.count(b"\n", 0, exc.start) + 1
        raise _error(f"invalid UTF-8 at byte {exc.start}", where, line, exc.start) from None
    if not text.strip():
        return CleanShutdown(None, None, where)
    try:
        node, _ = _parse_json_value(text)
    except ValueError as exc:
        pos = getattr(exc, "pos", 0)
        raise _error(
            f"invalid JSON: {exc}", where, getattr(exc, "lineno", 1), len(text[:pos].encode("utf-8"))
        ) from None
    except RecursionError:
        raise _error("invalid JSON: nested too deeply", where, 1, 0) from None
    if not isinstance(node, dict):
        raise _error(f"expected a JSON object, found {_jackson_text(node)}", where, 1, 0)
    values: dict[str, int | None] = {}
    for key in ("version", "brokerEpoch"):
        value = node.get(key)
        if value is not None and (isinstance(value, bool) or not isinstance(value, int)):
            raise _error(f"field '{key}' is not an integer: {_jackson_text(value)}", where, 1, 0)
        values[key] = value
    return CleanShutdown(values["version"], values["brokerEpoch"], where)


def read_clean_shutdown(path: str | os.PathLike[str]) -> CleanShutdown:
    """Read and decode a ``.kafka_cleanshutdown`` file."""
    return parse_clean_shutdown(_read_whole(path), path)


def encode_clean_shutdown(broker_epoch: int, *, version: int = 0) -> bytes:
    """What Kafka 3.7+ writes: ``{"version":<v>,"brokerEpoch":<n>}``."""
    return json.dumps({"version": version, "brokerEpoch": broker_epoch}, separators=(",", ":")).encode(
        "utf-8"
    )


# ---------------------------------------------------------------------------------------------------------------


_READERS: dict[str, Callable[[str | os.PathLike[str]], Any]] = {
    **{name: read_offset_checkpoint for name in OFFSET_CHECKPOINT_FILES},
    LEADER_EPOCH_CHECKPOINT_FILE: read_leader_epoch_checkpoint,
    PARTITION_METADATA_FILE: read_partition_metadata,
    META_PROPERTIES_FILE: read_meta_properties,
    QUORUM_STATE_FILE: read_quorum_state,
    CLEAN_SHUTDOWN_FILE: read_clean_shutdown,
}


def read_checkpoint(
    path: str | os.PathLike[str],
) -> (
    OffsetCheckpoint
    | LeaderEpochCheckpoint
    | PartitionMetadata
    | MetaProperties
    | QuorumState
    | CleanShutdown
):
    """Read any of the files above, chosen by file name; ValueError for a name that is none of them."""
    name = os.path.basename(os.fspath(path))
    reader = _READERS.get(name)
    if reader is None:
        raise ValueError(f"{name!r} is not a Kafka checkpoint or state file kdump knows")
    return reader(path)
