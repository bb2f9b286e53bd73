"""A generic, schema-driven reader and writer for Kafka's generated protocol messages.

Kafka describes its control records, KRaft metadata records and coordinator records with JSON message
schemas; the Java classes are generated from them.  kdump keeps those schemas as data (:class:`MessageSchema`
and :class:`Field` values, written directly or in the compact text form read by :func:`parse_schemas`) and
reads and writes every message with the one reader here, for every version, flexible (compact strings/arrays
and tagged fields) or not.  Adding a record type or a version is a data change.

The reader follows the generated Java code closely, down to its error messages (which Kafka's dump tool prints
inside its output) and to how it behaves at versions outside a schema's range: each field is read under the
generator's version condition, which equals plain range membership for supported versions.

Decoded messages are :class:`Struct` values: the fields present at the decoded version, in schema order,
together with the schema, so that renderers (Kafka's JSON converters) need nothing else.
"""

from __future__ import annotations

import base64
import re
import struct
import uuid as _uuid
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from functools import cached_property
from typing import Any

from kdump.storage.varint import encode_unsigned_varint

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
_INT16 = _FIXED["int16"]
_INT32 = _FIXED["int32"]
_INT8 = _FIXED["int8"]
_MAX_VERSION = 0x7FFF


_SAME = object()


class MessageFormatError(ValueError):
    """The bytes do not match the message schema.

    ``java_message`` is what the generated Java reader's exception would return from ``getMessage()``
    (``None`` where Java throws an exception without message, such as ``BufferUnderflowException``); Kafka's
    dump tool prints it inside some of its output lines.
    """

    def __init__(self, message: str, java_message: str | None | object = _SAME) -> None:
        super().__init__(message)
        self.java_message: str | None = message if java_message is _SAME else java_message  # type: ignore[assignment]

    @property
    def java_text(self) -> str:
        """``String.valueOf(e.getMessage())``: the message, or ``null``."""
        return "null" if self.java_message is None else self.java_message


class UnsupportedVersionError(MessageFormatError):
    """A nested structure does not exist at the requested version (Kafka: UnsupportedVersionException)."""


def _underflow() -> MessageFormatError:
    return MessageFormatError(
        "Tried to read past the end of the buffer (java.nio.BufferUnderflowException)", None
    )


@dataclass(frozen=True)
class Versions:
    """A Kafka version range such as ``0+``, ``1-3`` or ``none``."""

    low: int
    high: int  # inclusive; -1 means empty

    @classmethod
    def parse(cls, text: str | None) -> Versions:
        if text is None or text == "none" or text == "":
            return NONE
        if text.endswith("+"):
            return cls(int(text[:-1]), _MAX_VERSION)
        if "-" in text:
            lo, hi = text.split("-", 1)
            return cls(int(lo), int(hi))
        v = int(text)
        return cls(v, v)

    @property
    def empty(self) -> bool:
        return self.low > self.high

    def __contains__(self, version: object) -> bool:
        return isinstance(version, int) and self.low <= version <= self.high

    def intersect(self, other: Versions) -> Versions:
        low, high = max(self.low, other.low), min(self.high, other.high)
        return NONE if low > high else Versions(low, high)

    def subtract(self, other: Versions) -> Versions | None:
        """Kafka's ``Versions.subtract``; ``None`` when the difference would be two ranges."""
        if other.low <= self.low:
            if other.high >= self.high:
                return NONE
            if other.high < self.low:
                return self
            return Versions(other.high + 1, self.high)
        if other.high >= self.high:
            new_high = other.low - 1
            if new_high < 0:
                return self
            if new_high < self.high:
                return Versions(self.low, new_high)
            return self
        return None

    def __str__(self) -> str:
        if self.empty:
            return "none"
        if self.high == _MAX_VERSION:
            return f"{self.low}+"
        return str(self.low) if self.low == self.high else f"{self.low}-{self.high}"


NONE = Versions(0, -1)


def version_condition(containing: Versions, possible: Versions, version: int) -> bool:
    """Whether generated code takes the "member" branch of ``VersionConditional(containing, possible)``.

    The generator only emits the comparisons needed for the versions it considers possible, so outside
    ``possible`` the answer can differ from ``version in containing`` — which is what Kafka does when it reads a
    message at a version newer than its schema (a future metadata record, say).
    """
    if possible.low < containing.low:
        if possible.high > containing.high:
            return containing.low <= version <= containing.high
        if possible.high >= containing.low:
            return version >= containing.low
        return False
    if possible.high >= containing.low and possible.low <= containing.high:
        if possible.high > containing.high:
            return version <= containing.high
        return True
    return False


@dataclass(frozen=True)
class Field:
    """One field of a message schema, as in Kafka's JSON schema files.

    ``default`` is Kafka's default text (``"-1"``, ``"true"``, ``"null"``, ...; ``None`` = not given).
    ``struct_versions`` is set for fields whose type is one of the schema's common structs (Kafka's
    ``commonStructs``): the versions declared for that struct.
    """

    name: str
    type: str
    versions: str = "0+"
    nullable_versions: str | None = None
    tag: int | None = None
    tagged_versions: str | None = None
    default: str | None = None
    fields: tuple[Field, ...] = ()
    struct_versions: str | None = None

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

    @cached_property
    def version_range(self) -> Versions:
        return Versions.parse(self.versions)

    @cached_property
    def nullable_range(self) -> Versions:
        return Versions.parse(self.nullable_versions)

    @cached_property
    def tagged_range(self) -> Versions:
        if self.tag is None:
            return NONE
        return Versions.parse(self.tagged_versions or self.versions)

    @cached_property
    def mandatory_range(self) -> Versions:
        """Versions in which the field is present and not tagged."""
        return self.version_range.subtract(self.tagged_range) or self.version_range

    def valid_in(self, version: int) -> bool:
        return version in self.version_range

    def nullable_in(self, version: int) -> bool:
        return version in self.nullable_range

    def tagged_in(self, version: int) -> bool:
        return self.tag is not None and version in self.tagged_range

    @cached_property
    def default_is_null(self) -> bool:
        return self.default == "null"

    def default_value(self) -> Any:
        """The field's default as the generated Java class has it (Kafka's schema default rules)."""
        return _default_value(self)


def _default_value(f: Field) -> Any:
    text = f.default
    if text == "null":
        return None
    t = f.type
    if f.is_array:
        return []
    if t == "bool":
        return text is not None and text.lower() == "true"
    if t in _FIXED:
        if t == "float64":
            return float(text) if text else 0.0
        if not text:
            return 0
        return int(text[2:], 16) if text.startswith("0x") else int(text)
    if t == "string":
        return text or ""
    if t == "bytes":
        return b""
    if t == "uuid":
        return _uuid.UUID(int=0) if not text else kafka_uuid_from_string(text)
    return {}  # a struct with every field at its default


def kafka_uuid_from_string(text: str) -> _uuid.UUID:
    """Kafka's ``Uuid.fromString``: URL-safe base64 of the 16 bytes, without padding."""
    return _uuid.UUID(bytes=base64.urlsafe_b64decode(text + "=" * (-len(text) % 4)))


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

    @cached_property
    def version_range(self) -> Versions:
        return Versions.parse(self.valid_versions)

    @cached_property
    def flexible_range(self) -> Versions:
        return Versions.parse(self.flexible_versions)


@dataclass
class Struct:
    """A decoded message or nested struct: ``values`` maps field name to value, in schema order.

    Fields absent at the decoded version, and tagged fields that were not on the wire, are not in ``values``.
    """

    fields: tuple[Field, ...]
    version: int
    values: dict[str, Any] = field(default_factory=dict)
    unknown_tagged: list[tuple[int, bytes]] = field(default_factory=list)

    def __getitem__(self, name: str) -> Any:
        return self.values[name]

    def get(self, name: str, default: Any = None) -> Any:
        return self.values.get(name, default)

    def to_dict(self) -> dict[str, Any]:
        """The values with nested structs as dicts (the form :func:`write_message` takes)."""
        return {k: _plain(v) for k, v in self.values.items()}


def _plain(value: Any) -> Any:
    if isinstance(value, Struct):
        return value.to_dict()
    if isinstance(value, list):
        return [_plain(v) for v in value]
    return value


def is_default(f: Field, value: Any) -> bool:
    """Whether ``value`` equals ``f``'s default, as the generated code's non-default checks decide."""
    if f.default_is_null:
        return value is None
    if value is None:
        return False
    if f.is_array or f.type == "bytes":
        return len(value) == 0
    if f.is_struct:
        return _struct_is_default(f.fields, value)
    return bool(value == f.default_value())


def _struct_is_default(fields: Sequence[Field], value: Struct | Mapping[str, Any]) -> bool:
    if isinstance(value, Struct):
        if value.unknown_tagged:
            return False
        values: Mapping[str, Any] = value.values
    else:
        values = value
    for f in fields:
        if f.name in values and not _equals_default(f, values[f.name]):
            return False
    return True


def _equals_default(f: Field, value: Any) -> bool:
    default = f.default_value()
    if f.is_struct and not f.is_array:
        return value is not None and default is not None and _struct_is_default(f.fields, value)
    if f.type == "bytes" and value is not None and default is not None:
        return bytes(value) == bytes(default)
    return bool(value == default)


# -- reading -----------------------------------------------------------------------------------------------


class _Reader:
    """A ``ByteBuffer`` over ``buf[pos:end]`` with the failure behaviour of Kafka's ``ByteBufferAccessor``."""

    __slots__ = ("buf", "pos", "end")

    def __init__(self, buf: bytes, pos: int, end: int) -> None:
        self.buf = buf
        self.pos = pos
        self.end = end

    @property
    def remaining(self) -> int:
        return self.end - self.pos

    def take(self, n: int) -> bytes:
        """``readArray(n)``."""
        remaining = self.end - self.pos
        if n > remaining:
            raise MessageFormatError(
                f"Error reading byte array of {n} byte(s): only {remaining} byte(s) available"
            )
        if n < 0:
            raise MessageFormatError(
                f"negative array size {n} (java.lang.NegativeArraySizeException)", str(n)
            )
        out = bytes(self.buf[self.pos : self.pos + n])
        self.pos += n
        return out

    def fixed(self, fmt: struct.Struct) -> Any:
        if self.pos + fmt.size > self.end:
            raise _underflow()
        value = fmt.unpack_from(self.buf, self.pos)[0]
        self.pos += fmt.size
        return value

    def byte(self) -> int:
        if self.pos >= self.end:
            raise _underflow()
        b = self.buf[self.pos]
        self.pos += 1
        return b - 256 if b >= 128 else b

    def uvarint(self) -> int:
        """``ByteUtils.readUnsignedVarint``: at most 5 bytes, the result as a Java ``int``."""
        result = 0
        for shift in (0, 7, 14, 21):
            b = self.byte()
            if b >= 0:
                return _int32(result | (b << shift))
            result |= (b & 0x7F) << shift
        b = self.byte()
        result = _int32(result | ((b << 28) & 0xFFFFFFFF))
        if b < 0:
            raise MessageFormatError(
                "Varint is too long, the most significant bit in the 5th byte is set, "
                f"converted value: {result & 0xFFFFFFFF:x}"
            )
        return result


def read_unsigned_varint_java(buf: bytes, pos: int = 0) -> tuple[int, int]:
    """Kafka's ``ByteUtils.readUnsignedVarint`` at ``pos``: at most 5 bytes, the value as a Java ``int`` (it can
    be negative); returns ``(value, next_pos)``, raises :class:`MessageFormatError` as Java throws."""
    reader = _Reader(buf, pos, len(buf))
    return reader.uvarint(), reader.pos


def _int32(v: int) -> int:
    v &= 0xFFFFFFFF
    return v - 0x100000000 if v >= 0x80000000 else v


def read_message(
    schema: MessageSchema, buf: bytes, version: int, pos: int = 0, end: int | None = None
) -> Struct:
    """Decode ``buf[pos:end]`` as ``schema`` at ``version``; bytes left over are an error."""
    reader = _Reader(buf, pos, len(buf) if end is None else end)
    result = _read_top(reader, schema, version)
    if reader.pos != reader.end:
        raise MessageFormatError(f"Found {reader.end - reader.pos} byte(s) of garbage after {schema.name}")
    return result


def read_message_prefix(
    schema: MessageSchema, buf: bytes, version: int, pos: int = 0, end: int | None = None
) -> tuple[Struct, int]:
    """Decode a message at ``pos`` and return it with the position after it (trailing bytes allowed), as
    Kafka's generated ``read`` does."""
    reader = _Reader(buf, pos, len(buf) if end is None else end)
    result = _read_top(reader, schema, version)
    return result, reader.pos


def _read_top(r: _Reader, schema: MessageSchema, version: int) -> Struct:
    return _read_struct(r, schema.fields, version, schema.version_range, schema.flexible_range)


def _read_struct(
    r: _Reader, fields: Sequence[Field], version: int, possible: Versions, flexible_versions: Versions
) -> Struct:
    out = Struct(tuple(fields), version)
    values = out.values
    for f in fields:
        mandatory = f.mandatory_range
        if version_condition(mandatory, possible, version):
            present = possible.intersect(mandatory)
            flexible = version_condition(flexible_versions, present, version)
            values[f.name] = _read_value(r, f, version, possible, present, flexible_versions, flexible, False)
    if version_condition(flexible_versions, possible, version):
        cur_flexible = possible.intersect(flexible_versions)
        count = r.uvarint()
        for _ in range(count):
            tag = r.uvarint()
            size = r.uvarint()
            f = _tagged_field(fields, tag)
            if f is None:
                out.unknown_tagged.append((tag, r.take(size)))
                continue
            valid_tagged = f.version_range.intersect(f.tagged_range)
            if not version_condition(valid_tagged, cur_flexible, version):
                raise MessageFormatError(f"Tag {tag} is not valid for version {version}")
            present = cur_flexible.intersect(valid_tagged)
            # Like the generated code, a known tagged field is read from the stream itself; its size is not used.
            values[f.name] = _read_value(r, f, version, possible, present, flexible_versions, True, True)
    # keep schema order for tagged fields read out of order
    if any(f.tag is not None for f in fields):
        out.values = {f.name: values[f.name] for f in fields if f.name in values}
    return out


def _tagged_field(fields: Sequence[Field], tag: int) -> Field | None:
    for f in fields:
        if f.tag == tag and not f.version_range.intersect(f.tagged_range).empty:
            return f
    return None


def _read_value(
    r: _Reader,
    f: Field,
    version: int,
    possible: Versions,
    present: Versions,
    flexible_versions: Versions,
    flexible: bool,
    tagged: bool,
) -> Any:
    """One field; ``possible`` are the enclosing struct's possible versions, ``present`` those in which the
    field is present (in the way it is being read: untagged or tagged)."""
    if f.is_array:
        n = _int32(r.uvarint() - 1) if flexible else r.fixed(_INT32)
        if n < 0:
            if not version_condition(f.nullable_range, present, version):
                raise MessageFormatError(f"non-nullable field {f.json_name} was serialized as null")
            return None
        if n > r.remaining:
            raise MessageFormatError(
                f"Tried to allocate a collection of size {n}, but there are only {r.remaining} bytes remaining."
            )
        t = f.element_type
        if t in ("string", "bytes"):
            return [_read_variable(r, t, f"{f.json_name} element", flexible, False) for _ in range(n)]
        if t in PRIMITIVES:
            return [_read_primitive(r, t) for _ in range(n)]
        return [_read_nested(r, f, version, possible, flexible_versions) for _ in range(n)]
    t = f.type
    if t in ("string", "bytes"):
        return _read_variable(
            r, t, f.json_name, flexible, version_condition(f.nullable_range, present, version)
        )
    if t in PRIMITIVES:
        return _read_primitive(r, t)
    if version_condition(f.nullable_range, present, version):
        if (r.uvarint() <= 0) if tagged else (r.byte() < 0):
            return None
    return _read_nested(r, f, version, possible, flexible_versions)


def _read_primitive(r: _Reader, t: str) -> Any:
    fmt = _FIXED.get(t)
    if fmt is not None:
        return r.fixed(fmt)
    if t == "bool":
        return r.byte() != 0
    if t == "uuid":
        if r.remaining < 16:
            raise _underflow()
        return _uuid.UUID(bytes=r.take(16))
    raise MessageFormatError(f"unsupported type {t}")


def _read_variable(r: _Reader, t: str, name: str, flexible: bool, nullable: bool) -> Any:
    if flexible:
        n = _int32(r.uvarint() - 1)
    elif t == "string":
        n = r.fixed(_INT16)
    else:
        n = r.fixed(_INT32)
    if n < 0:
        if not nullable:
            raise MessageFormatError(f"non-nullable field {name} was serialized as null")
        return None
    if t == "string":
        if n > 0x7FFF:
            raise MessageFormatError(f"string field {name} had invalid length {n}")
        return _decode_string(r.take(n))
    return r.take(n)


def _read_nested(
    r: _Reader, f: Field, version: int, enclosing: Versions, flexible_versions: Versions
) -> Struct:
    if f.struct_versions is not None:  # a common struct: generated with its own versions, no version check
        possible = Versions.parse(f.struct_versions)
    else:
        struct_versions = f.version_range
        if not version_condition(enclosing, struct_versions, version):
            raise UnsupportedVersionError(f"Can't read version {version} of {f.element_type}")
        possible = enclosing.intersect(struct_versions)
    return _read_struct(r, f.fields, version, possible, flexible_versions)


def _decode_string(data: bytes) -> str:
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError:
        from kdump.jdk.text import decode_utf8_jdk

        return decode_utf8_jdk(data)


# -- writing -----------------------------------------------------------------------------------------------


def write_message(schema: MessageSchema, values: Mapping[str, Any] | Struct, version: int) -> bytes:
    """Encode ``values`` (field name → value; nested structs as dicts or :class:`Struct`) as ``schema`` at
    ``version``, as Kafka's generated ``write`` does.  Missing fields take their defaults."""
    out = bytearray()
    _write_struct(out, schema.fields, values, version, schema.version_range, schema.flexible_range)
    return bytes(out)


def _write_struct(
    out: bytearray,
    fields: Iterable[Field],
    values: Mapping[str, Any] | Struct,
    version: int,
    possible: Versions,
    flexible_versions: Versions,
) -> None:
    unknown: list[tuple[int, bytes]] = []
    if isinstance(values, Struct):
        unknown = values.unknown_tagged
        values = values.values
    tagged: list[tuple[int, bytes]] = []
    for f in fields:
        if not version_condition(f.version_range, possible, version):
            continue
        present = possible.intersect(f.version_range)
        value = values[f.name] if f.name in values else f.default_value()
        if version_condition(f.tagged_range, present, version):
            if is_default(f, value):
                continue
            buf = bytearray()
            if value is None:
                buf += encode_unsigned_varint(0)
            else:
                if f.is_struct and not f.is_array and version_condition(f.nullable_range, present, version):
                    buf += encode_unsigned_varint(1)
                _write_value(buf, f, value, version, present, flexible_versions, True)
            tagged.append((f.tag, bytes(buf)))  # type: ignore[arg-type]
            continue
        flexible = version_condition(flexible_versions, present, version)
        if f.is_struct and not f.is_array and version_condition(f.nullable_range, present, version):
            out.append(0xFF if value is None else 1)
            if value is None:
                continue
        _write_value(out, f, value, version, present, flexible_versions, flexible)
    if version_condition(flexible_versions, possible, version):
        all_tagged = sorted(tagged + list(unknown))
        out += encode_unsigned_varint(len(all_tagged))
        for tag, data in all_tagged:
            out += encode_unsigned_varint(tag)
            out += encode_unsigned_varint(len(data))
            out += data


def _write_value(
    out: bytearray,
    f: Field,
    value: Any,
    version: int,
    present: Versions,
    flexible_versions: Versions,
    flexible: bool,
) -> None:
    if f.is_array:
        if value is None:
            out += encode_unsigned_varint(0) if flexible else _INT32.pack(-1)
            return
        out += encode_unsigned_varint(len(value) + 1) if flexible else _INT32.pack(len(value))
        for item in value:
            _write_element(out, f, item, version, present, flexible_versions, flexible)
        return
    _write_element(out, f, value, version, present, flexible_versions, flexible)


def _write_element(
    out: bytearray,
    f: Field,
    value: Any,
    version: int,
    present: Versions,
    flexible_versions: Versions,
    flexible: bool,
) -> None:
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
            out += encode_unsigned_varint(0) if flexible else (_INT16 if t == "string" else _INT32).pack(-1)
            return
        data = value.encode("utf-8") if t == "string" else bytes(value)
        if flexible:
            out += encode_unsigned_varint(len(data) + 1)
        else:
            out += (_INT16 if t == "string" else _INT32).pack(len(data))
        out += data
    else:
        if f.struct_versions is not None:
            possible = Versions.parse(f.struct_versions)
        else:
            possible = present.intersect(f.version_range)
        _write_struct(out, f.fields, value, version, possible, flexible_versions)


# -- the compact schema text -------------------------------------------------------------------------------

_HEADER = re.compile(r"^(\w+) (\S+)((?: \w+=\S+)*)$")
_FIELD = re.compile(r"^(\w+) (\[\]\w+|\w+) (\S+)((?: \w+=\S+)*)$")
_STRUCT = re.compile(r"^struct (\w+) (\S+)$")
_FIELD_OPTIONS = {"nullable", "tag", "tagged", "default"}


def parse_schemas(text: str) -> dict[str, MessageSchema]:
    """Parse kdump's compact schema text into :class:`MessageSchema` values, keyed by name.

    One message per block; two spaces of indentation per nesting level::

        # comment
        <MessageName> <validVersions> flexible=<versions> [apiKey=<n>]
          <FieldName> <type> <versions> [nullable=<versions>] [tag=<n>] [tagged=<versions>] [default=<text>]
            <fields of a struct or struct-array field, one level deeper>
          struct <StructName> <versions>
            <fields of a common struct that fields of this message refer to by type name>

    Version ranges and defaults use Kafka's spelling (``0+``, ``1-3``, ``none``; ``-1``, ``true``, ``null``).
    """
    lines = []
    for number, raw in enumerate(text.splitlines(), start=1):
        stripped = raw.split("#", 1)[0].rstrip()
        if stripped:
            indent = len(stripped) - len(stripped.lstrip(" "))
            if indent % 2:
                raise ValueError(f"schema line {number}: odd indentation")
            lines.append((indent // 2, stripped.strip(), number))
    schemas: dict[str, MessageSchema] = {}
    i = 0
    while i < len(lines):
        depth, content, number = lines[i]
        m = _HEADER.match(content)
        if depth != 0 or m is None:
            raise ValueError(f"schema line {number}: expected a message header, got {content!r}")
        options = _options(m.group(3), {"flexible", "apiKey"}, number)
        i, raw_fields, commons = _parse_block(lines, i + 1, 1)
        resolved = tuple(_resolve(f, commons) for f in raw_fields)
        api_key = options.get("apiKey")
        schemas[m.group(1)] = MessageSchema(
            m.group(1),
            m.group(2),
            options.get("flexible", "none"),
            resolved,
            api_key=None if api_key is None else int(api_key),
        )
    return schemas


def _options(text: str, allowed: set[str], number: int) -> dict[str, str]:
    out = {}
    for item in text.split():
        key, _, value = item.partition("=")
        if key not in allowed:
            raise ValueError(f"schema line {number}: unknown option {key!r}")
        out[key] = value
    return out


def _parse_block(
    lines: list[tuple[int, str, int]], i: int, depth: int
) -> tuple[int, list[Field], dict[str, tuple[str, list[Field]]]]:
    fields: list[Field] = []
    commons: dict[str, tuple[str, list[Field]]] = {}
    while i < len(lines) and lines[i][0] >= depth:
        d, content, number = lines[i]
        if d != depth:
            raise ValueError(f"schema line {number}: unexpected indentation")
        s = _STRUCT.match(content)
        if s is not None:
            i, sub, nested = _parse_block(lines, i + 1, depth + 1)
            commons.update(nested)
            commons[s.group(1)] = (s.group(2), sub)
            continue
        m = _FIELD.match(content)
        if m is None:
            raise ValueError(f"schema line {number}: cannot parse field {content!r}")
        options = _options(m.group(4), _FIELD_OPTIONS, number)
        i, sub, nested = _parse_block(lines, i + 1, depth + 1)
        commons.update(nested)
        tag = options.get("tag")
        fields.append(
            Field(
                m.group(1),
                m.group(2),
                m.group(3),
                nullable_versions=options.get("nullable"),
                tag=None if tag is None else int(tag),
                tagged_versions=options.get("tagged", m.group(3) if tag is not None else None),
                default=options.get("default"),
                fields=tuple(sub),
            )
        )
    return i, fields, commons


def _resolve(f: Field, commons: dict[str, tuple[str, list[Field]]]) -> Field:
    nested = tuple(_resolve(sub, commons) for sub in f.fields)
    if f.is_struct and not nested:
        common = commons.get(f.element_type)
        if common is None:
            raise ValueError(f"field {f.name}: struct type {f.element_type} has no fields")
        versions, sub = common
        return Field(
            f.name,
            f.type,
            f.versions,
            f.nullable_versions,
            f.tag,
            f.tagged_versions,
            f.default,
            tuple(_resolve(s, commons) for s in sub),
            struct_versions=versions,
        )
    return Field(f.name, f.type, f.versions, f.nullable_versions, f.tag, f.tagged_versions, f.default, nested)
