"""Kafka's ``CheckpointFile`` and the text machinery every small state file shares.

A checkpoint (:mod:`~kdump.storage.offset_checkpoint`, :mod:`~kdump.storage.leader_epoch_checkpoint`) is a
version line, a count line and one line per entry (Kafka's ``CheckpointFile.CheckpointReadBuffer`` and
``CheckpointWriteBuffer``): :func:`parse_checkpoint` and :func:`encode_checkpoint` are those two, given how to
read and write one entry.  The other state files (:mod:`~kdump.storage.partition_metadata`,
:mod:`~kdump.storage.meta_properties`, :mod:`~kdump.storage.quorum_state`, :mod:`~kdump.storage.clean_shutdown`)
use the primitives here too: lines as ``BufferedReader.readLine`` sees them (ended by ``\\n``, ``\\r`` or
``\\r\\n``), numbers as ``Integer.parseInt`` / ``Long.parseLong`` read them (optional sign, digits only, no
blanks), fields split on Java's ``\\s+``, strict UTF-8, one JSON value as Jackson's ``readTree`` reads it, and
the one error, :class:`~kdump.errors.CheckpointFormatError`, whose message starts with ``line <n>:`` (1-based)
followed by Kafka's own text when it has one; the error also carries ``path``, the byte ``position`` of the
line, a ``line`` attribute and ``kafka_message``.
"""

from __future__ import annotations

import json
import os
import re
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, TypeVar

from kdump.errors import CheckpointFormatError
from kdump.storage.byte_source import ByteSource, read_all
from kdump.storage.naming import NumberFormatError, java_absolute_path, parse_java_long

INT32 = (-(1 << 31), (1 << 31) - 1)
INT64 = (-(1 << 63), (1 << 63) - 1)

_T = TypeVar("_T")


# ---------------------------------------------------------------------------------------------------------------
# Java-compatible primitives


def absolute_path(path: str | None) -> str:
    return "<memory>" if path is None else java_absolute_path(path)


def java_parse_int(text: str, bounds: tuple[int, int] = INT32) -> int | None:
    """``Integer.parseInt`` / ``Long.parseLong`` within ``bounds``; None where Java throws NumberFormatException."""
    try:
        value = parse_java_long(text)
    except NumberFormatError:
        return None
    return value if bounds[0] <= value <= bounds[1] else None


JAVA_WHITESPACE = re.compile(r"[ \t\n\x0b\f\r]+")


_LINE_END = re.compile(rb"\r\n|\r|\n")


@dataclass(frozen=True)
class Line:
    number: int
    """1-based line number."""
    position: int
    """Byte offset of the line's first byte."""
    raw: bytes


def split_lines(data: bytes) -> list[Line]:
    """Natural lines as ``BufferedReader.readLine`` sees them (terminated by LF, CR or CRLF; a final line
    without terminator counts, an empty remainder after the last terminator does not)."""
    lines: list[Line] = []
    start = 0
    for match in _LINE_END.finditer(data):
        lines.append(Line(len(lines) + 1, start, data[start : match.start()]))
        start = match.end()
    if start < len(data):
        lines.append(Line(len(lines) + 1, start, data[start:]))
    return lines


def state_file_error(
    text: str, path: str | None, line: int, position: int | None, kafka_message: str | None = None
) -> CheckpointFormatError:
    error = CheckpointFormatError(f"line {line}: {text}", path=path, position=position)
    error.line = line  # type: ignore[attr-defined]
    error.kafka_message = text if kafka_message is None else kafka_message  # type: ignore[attr-defined]
    return error


def decode_utf8_line(line: Line, path: str | None, what: str) -> str:
    """Strict UTF-8, like Kafka's ``Files.newBufferedReader(path, UTF_8)`` (malformed input is an error)."""
    try:
        return line.raw.decode("utf-8")
    except UnicodeDecodeError as exc:
        error = state_file_error(
            f"invalid UTF-8 at byte {line.position + exc.start} in {what} [{absolute_path(path)}]",
            path,
            line.number,
            line.position + exc.start,
            kafka_message=f"Input length = {exc.end - exc.start}",
        )
    raise error


def read_whole(path: str | os.PathLike[str] | ByteSource) -> bytes:
    """A state file's bytes, from a local path or any :class:`~kdump.storage.byte_source.ByteSource`."""
    return read_all(path)


# ---------------------------------------------------------------------------------------------------------------
# Jackson (the JSON state files)


def _reject_constant(name: str) -> Any:
    raise ValueError(f"unexpected JSON constant {name}")


def parse_json_value(text: str) -> tuple[Any, int]:
    """One JSON value from the start of ``text`` (Jackson's ``readTree`` ignores whatever follows it)."""
    decoder = json.JSONDecoder(parse_constant=_reject_constant)
    start = len(text) - len(text.lstrip(" \t\r\n"))
    return decoder.raw_decode(text, start)


def jackson_text(node: Any) -> str:
    return json.dumps(node, separators=(",", ":"), ensure_ascii=False)


# ---------------------------------------------------------------------------------------------------------------
# Generic CheckpointFile (CheckpointReadBuffer.read, CheckpointWriteBuffer.write)


def parse_checkpoint(
    data: bytes,
    path: str | None,
    expected_version: int,
    parse_entry: Callable[[str], _T | None],
    entry_kafka_error: Callable[[str], str | None],
) -> tuple[int | None, list[_T]]:
    """Kafka's ``CheckpointFile.CheckpointReadBuffer.read``."""
    where = absolute_path(path)
    lines = split_lines(data)

    def malformed(line: Line, text: str, kafka_message: str | None = None) -> CheckpointFormatError:
        return state_file_error(
            f"Malformed line in checkpoint file [{where}]: {text}",
            path,
            line.number,
            line.position,
            kafka_message,
        )

    if not lines:
        return None, []
    first = lines[0]
    text = decode_utf8_line(first, path, "checkpoint file")
    version = java_parse_int(text)
    if version is None:
        raise malformed(first, text)
    if version != expected_version:
        raise state_file_error(
            f"Unrecognised version:{version}, expected version: {expected_version} in checkpoint file at: {where}",
            path,
            first.number,
            first.position,
        )
    if len(lines) < 2:
        return version, []  # Kafka returns no entries when the count line is missing
    second = lines[1]
    text = decode_utf8_line(second, path, "checkpoint file")
    expected_size = java_parse_int(text)
    if expected_size is None:
        raise malformed(second, text)
    if expected_size < 0:
        raise state_file_error(
            f"negative entry count {expected_size} in checkpoint file [{where}]",
            path,
            second.number,
            second.position,
            kafka_message=f"Illegal Capacity: {expected_size}",
        )
    entries: list[_T] = []
    for line in lines[2:]:
        text = decode_utf8_line(line, path, "checkpoint file")
        entry = parse_entry(text)
        if entry is None:
            raise malformed(line, text, entry_kafka_error(text))
        entries.append(entry)
    if len(entries) != expected_size:
        raise state_file_error(
            f"Expected [{expected_size}] entries in checkpoint file [{where}], but found only [{len(entries)}]",
            path,
            second.number,
            second.position,
        )
    return version, entries


def number_format_message(parts: list[str], kinds: list[tuple[int, int]]) -> str | None:
    """The NumberFormatException Kafka's entry formatter would throw for a line with the right field count."""
    for text, bounds in zip(parts, kinds, strict=False):
        if java_parse_int(text, bounds) is None:
            return f'For input string: "{text}"'
    return None


def encode_checkpoint(version: int, lines: list[str]) -> bytes:
    """``CheckpointWriteBuffer.write``: version, count, one line per entry, each ended by ``\\n``."""
    return "".join(f"{line}\n" for line in [str(version), str(len(lines)), *lines]).encode("utf-8")
