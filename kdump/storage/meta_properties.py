"""A log directory's ``meta.properties`` (``java.util.Properties.load`` / ``store`` + Kafka's
``MetaProperties.Builder``): version 0 (ZooKeeper era, ``broker.id``) or 1 (KRaft, ``node.id``, maybe
``directory.id``), with ``cluster.id``."""

from __future__ import annotations

import os
from collections.abc import Mapping
from dataclasses import dataclass, field

from kdump.errors import CheckpointFormatError
from kdump.storage.byte_source import ByteSource, location_of
from kdump.storage.checkpoint_file import Line, java_parse_int, read_whole, split_lines, state_file_error
from kdump.storage.kafka_uuid import decode_uuid, encode_uuid


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


def _unescape_property(text: str, line: Line, path: str | None) -> str:
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
                raise state_file_error("Malformed \\uxxxx encoding.", path, line.number, line.position)
            out.append(chr(int(digits, 16)))
            i += 4
        else:
            out.append({"t": "\t", "r": "\r", "n": "\n", "f": "\f"}.get(ch, ch))
    return "".join(out)


def _load_properties(data: bytes, path: str | None) -> tuple[dict[str, str], dict[str, Line], list[str]]:
    """``java.util.Properties.load(InputStream)``: ISO-8859-1 text, ``#``/``!`` comments, ``key=value``,
    ``key: value`` or ``key value``, backslash line continuation and escapes."""
    values: dict[str, str] = {}
    origin: dict[str, Line] = {}
    comments: list[str] = []
    lines = split_lines(data)
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
            return state_file_error(text, where, len(split_lines(data)) + 1, len(data))
        return state_file_error(text, where, line.number, line.position)

    version_text = values.get("version", "0")
    version = java_parse_int(version_text.strip(_JAVA_TRIM))
    if version is None:
        raise fail(f"Invalid meta.properties version string '{version_text}'", "version")
    if version not in (0, 1):
        raise fail(f"Unknown meta.properties version number {version}", "version")

    def required_int(key: str) -> int:
        if key not in values:
            raise fail(f"Failed to find {key}", None)
        number = java_parse_int(values[key])
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


def read_meta_properties(path: str | os.PathLike[str] | ByteSource) -> MetaProperties:
    """Read and decode a ``meta.properties`` file."""
    return parse_meta_properties(read_whole(path), location_of(path))


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
