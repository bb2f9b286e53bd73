"""A generic, schema-driven reader and writer for Kafka's generated protocol messages.

Kafka describes its control records, KRaft metadata records and coordinator records with JSON message
schemas; the Java classes are generated from them.  kdump keeps those schemas as data (:class:`MessageSchema`
and :class:`Field` values) and reads and writes every message with the one reader here, for every version,
flexible (compact strings/arrays and tagged fields) or not.  Adding a record type or a version is a data
change.

Decoded messages are :class:`Struct` values: the fields present at the decoded version, in schema order,
together with the schema, so that renderers (Kafka's JSON converters) need nothing else.
"""

from __future__ import annotations

import struct
import uuid as _uuid
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from typing import Any

from kdump.storage.varint import VarintError, encode_unsigned_varint, read_unsigned_varint

PRIMITIVES = {
    "bool",
    "int8",
    "int16",
    "uint16",
    "int32",
    "uint32",
    "int64",
    "float64",
    "string",
    "bytes",
    "uuid",
}

_FIXED = {
    "int8": struct.Struct(">b"),
    "int16": struct.Struct(">h"),
    "uint16": struct.Struct(">H"),
    "int32": struct.Struct(">i"),
    "uint32": struct.Struct(">I"),
    "int64": struct.Struct(">q"),
    "float64": struct.Struct(">d"),
}


class MessageFormatError(ValueError):
    """The bytes do not match the message schema."""


@dataclass(frozen=True)
class Versions:
    """A Kafka version range such as ``0+``, ``1-3`` or ``none``."""

    low: int
    high: int  # inclusive; -1 means empty

    @classmethod
    def parse(cls, text: str | None) -> Versions:
        if text is None or text == "none" or text == "":
            return cls(0, -1)
        if text.endswith("+"):
            return cls(int(text[:-1]), 0x7FFF)
        if "-" in text:
            lo, hi = text.split("-", 1)
            return cls(int(lo), int(hi))
        v = int(text)
        return cls(v, v)

    def __contains__(self, version: object) -> bool:
        return isinstance(version, int) and self.low <= version <= self.high


@dataclass(frozen=True)
class Field:
    """One field of a message schema, as in Kafka's JSON schema files."""

    name: str
    type: str
    versions: str = "0+"
    nullable_versions: str | None = None
    tag: int | None = None
    tagged_versions: str | None = None
    default: Any = None
    fields: tuple[Field, ...] = ()

    @property
    def json_name(self) -> str:
        """Field name as Kafka's JSON converters write it: the first letter lower-cased."""
        return self.name[:1].lower() + self.name[1:]

    @property
    def is_array(self) -> bool:
        return self.type.startswith("[]")

    @property
    def element_type(self) -> str:
        return self.type[2:] if self.is_array else self.type

    @property
    def is_struct(self) -> bool:
        return self.element_type not in PRIMITIVES

    def valid_in(self, version: int) -> bool:
        return version in Versions.parse(self.versions)

    def nullable_in(self, version: int) -> bool:
        return version in Versions.parse(self.nullable_versions)

    def tagged_in(self, version: int) -> bool:
        return self.tag is not None and version in Versions.parse(self.tagged_versions or self.versions)

    def default_value(self) -> Any:
        """The value a tagged field has when absent (Kafka's schema default rules)."""
        if self.default is not None:
            return self.default
        t = self.type
        if self.is_array:
            return []
        if t == "bool":
            return False
        if t in _FIXED:
            return 0.0 if t == "float64" else 0
        if t == "string":
            return ""
        if t == "bytes":
            return b""
        if t == "uuid":
            return _uuid.UUID(int=0)
        return None


@dataclass(frozen=True)
class MessageSchema:
    """A message (or record) schema: its name, versions, flexible versions and fields."""

    name: str
    valid_versions: str
    flexible_versions: str
    fields: tuple[Field, ...]
    api_key: int | None = None
    type: str = "data"

    def is_flexible(self, version: int) -> bool:
        return version in Versions.parse(self.flexible_versions)


@dataclass
class Struct:
    """A decoded message or nested struct: ``values`` maps field name to value, in schema order."""

    fields: tuple[Field, ...]
    version: int
    values: dict[str, Any] = field(default_factory=dict)
    unknown_tagged: list[tuple[int, bytes]] = field(default_factory=list)

    def __getitem__(self, name: str) -> Any:
        return self.values[name]

    def get(self, name: str, default: Any = None) -> Any:
        return self.values.get(name, default)


class _Reader:
    __slots__ = ("buf", "pos", "end")

    def __init__(self, buf: bytes, pos: int, end: int) -> None:
        self.buf = buf
        self.pos = pos
        self.end = end

    def take(self, n: int) -> bytes:
        if n < 0 or self.pos + n > self.end:
            raise MessageFormatError(
                f"Error reading byte array of {n} byte(s): only {max(self.end - self.pos, 0)} byte(s) available"
            )
        out = bytes(self.buf[self.pos : self.pos + n])
        self.pos += n
        return out

    def fixed(self, fmt: struct.Struct) -> Any:
        if self.pos + fmt.size > self.end:
            raise MessageFormatError("Tried to read past the end of the buffer")
        value = fmt.unpack_from(self.buf, self.pos)[0]
        self.pos += fmt.size
        return value

    def uvarint(self) -> int:
        try:
            value, self.pos = read_unsigned_varint(self.buf, self.pos, self.end)
        except VarintError as e:
            raise MessageFormatError(str(e)) from None
        return value


def read_message(
    schema: MessageSchema, buf: bytes, version: int, pos: int = 0, end: int | None = None
) -> Struct:
    """Decode ``buf[pos:end]`` as ``schema`` at ``version``; bytes left over are an error."""
    reader = _Reader(buf, pos, len(buf) if end is None else end)
    result = _read_struct(reader, schema.fields, version, schema.is_flexible(version))
    if reader.pos != reader.end:
        raise MessageFormatError(f"Found {reader.end - reader.pos} byte(s) of garbage after {schema.name}")
    return result


def read_message_prefix(schema: MessageSchema, buf: bytes, version: int, pos: int = 0) -> tuple[Struct, int]:
    """Decode a message at ``pos`` and return it with the position after it (trailing bytes allowed)."""
    reader = _Reader(buf, pos, len(buf))
    result = _read_struct(reader, schema.fields, version, schema.is_flexible(version))
    return result, reader.pos


def _read_struct(r: _Reader, fields: Sequence[Field], version: int, flexible: bool) -> Struct:
    out = Struct(tuple(fields), version)
    tagged: dict[int, Field] = {}
    for f in fields:
        if not f.valid_in(version):
            continue
        if flexible and f.tagged_in(version):
            tagged[f.tag] = f  # type: ignore[index]
            continue
        out.values[f.name] = _read_value(r, f, version, flexible)
    if flexible:
        count = r.uvarint()
        for _ in range(count):
            tag = r.uvarint()
            size = r.uvarint()
            f = tagged.get(tag)
            if f is None:
                out.unknown_tagged.append((tag, r.take(size)))
                continue
            sub = _Reader(r.buf, r.pos, r.pos + size)
            if sub.end > r.end:
                raise MessageFormatError(f"Tagged field {tag} runs past the end of the buffer")
            out.values[f.name] = _read_value(sub, f, version, flexible)
            r.pos += size
    return out


def _read_value(r: _Reader, f: Field, version: int, flexible: bool) -> Any:
    if f.is_array:
        if flexible:
            n = r.uvarint() - 1
        else:
            n = r.fixed(_FIXED["int32"])
        if n < 0:
            if not f.nullable_in(version):
                raise MessageFormatError(f"non-nullable field {f.json_name} was serialized as null")
            return None
        if n > r.end - r.pos:
            raise MessageFormatError(
                f"Tried to allocate a collection of size {n}, but there are only {r.end - r.pos} bytes remaining."
            )
        return [_read_element(r, f, version, flexible) for _ in range(n)]
    return _read_element(r, f, version, flexible)


def _read_element(r: _Reader, f: Field, version: int, flexible: bool) -> Any:
    t = f.element_type
    fmt = _FIXED.get(t)
    if fmt is not None:
        return r.fixed(fmt)
    if t == "bool":
        return r.take(1)[0] != 0
    if t == "uuid":
        return _uuid.UUID(bytes=r.take(16))
    if t in ("string", "bytes"):
        if flexible:
            n = r.uvarint() - 1
        elif t == "string":
            n = r.fixed(_FIXED["int16"])
        else:
            n = r.fixed(_FIXED["int32"])
        if n < 0:
            if not f.nullable_in(version) and not f.is_array:
                raise MessageFormatError(f"non-nullable field {f.json_name} was serialized as null")
            return None
        data = r.take(n)
        return data if t == "bytes" else _decode_string(data)
    return _read_struct(r, f.fields, version, flexible)


def _decode_string(data: bytes) -> str:
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError:
        from kdump.render.jdk_text import decode_utf8_jdk

        return decode_utf8_jdk(data)


# -- writing -----------------------------------------------------------------------------------------------


def write_message(schema: MessageSchema, values: dict[str, Any], version: int) -> bytes:
    """Encode ``values`` (field name → value; nested structs as dicts) as ``schema`` at ``version``."""
    out = bytearray()
    _write_struct(out, schema.fields, values, version, schema.is_flexible(version))
    return bytes(out)


def _write_struct(
    out: bytearray, fields: Iterable[Field], values: dict[str, Any], version: int, flexible: bool
) -> None:
    tagged: list[tuple[int, bytes]] = []
    for f in fields:
        if not f.valid_in(version):
            continue
        value = values.get(f.name, f.default_value())
        if flexible and f.tagged_in(version):
            if value != f.default_value():
                buf = bytearray()
                _write_value(buf, f, value, version, flexible)
                tagged.append((f.tag, bytes(buf)))  # type: ignore[arg-type]
            continue
        _write_value(out, f, value, version, flexible)
    if flexible:
        out += encode_unsigned_varint(len(tagged))
        for tag, data in sorted(tagged):
            out += encode_unsigned_varint(tag)
            out += encode_unsigned_varint(len(data))
            out += data


def _write_value(out: bytearray, f: Field, value: Any, version: int, flexible: bool) -> None:
    if f.is_array:
        if value is None:
            out += encode_unsigned_varint(0) if flexible else _FIXED["int32"].pack(-1)
            return
        out += encode_unsigned_varint(len(value) + 1) if flexible else _FIXED["int32"].pack(len(value))
        for item in value:
            _write_element(out, f, item, version, flexible)
        return
    _write_element(out, f, value, version, flexible)


def _write_element(out: bytearray, f: Field, value: Any, version: int, flexible: bool) -> None:
    t = f.element_type
    fmt = _FIXED.get(t)
    if fmt is not None:
        out += fmt.pack(value)
    elif t == "bool":
        out.append(1 if value else 0)
    elif t == "uuid":
        out += value.bytes
    elif t in ("string", "bytes"):
        if value is None:
            out += (
                encode_unsigned_varint(0)
                if flexible
                else (_FIXED["int16" if t == "string" else "int32"].pack(-1))
            )
            return
        data = value.encode("utf-8") if t == "string" else bytes(value)
        if flexible:
            out += encode_unsigned_varint(len(data) + 1)
        else:
            out += _FIXED["int16" if t == "string" else "int32"].pack(len(data))
        out += data
    else:
        _write_struct(out, f.fields, value, version, flexible)
