"""The schema model of Kafka's generated protocol messages, and kdump's compact text form of it.

Kafka describes its control records, KRaft metadata records and coordinator records with JSON message
schemas; the Java classes are generated from them.  kdump keeps those schemas as data (:class:`MessageSchema`
and :class:`Field` values, written directly or in the compact text form read by :func:`parse_schemas`) and
reads and writes every message with one reader (:mod:`kdump.storage.message_reader`) and one writer
(:mod:`kdump.storage.message_writer`), for every version, flexible (compact strings/arrays and tagged fields) or
not.  Adding a record type or a version is a data change.

Decoded messages are :class:`Struct` values: the fields present at the decoded version, in schema order,
together with the schema, so that renderers (Kafka's JSON converters) need nothing else.  :func:`is_default` is
the generated code's non-default check, which the writer (tagged fields) and the JSON converters share;
:func:`version_condition` the generator's version test, which the reader and the writer share.
"""

from __future__ import annotations

import re
import struct
import uuid as _uuid
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from functools import cached_property
from typing import Any

from kdump.storage.kafka_uuid import decode_uuid

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

#: The fixed-size types and their big-endian layouts.
FIXED = {
    "int8": struct.Struct(">b"),
    "int16": struct.Struct(">h"),
    "uint16": struct.Struct(">H"),
    "int32": struct.Struct(">i"),
    "uint32": struct.Struct(">I"),
    "int64": struct.Struct(">q"),
    "float64": struct.Struct(">d"),
}
_MAX_VERSION = 0x7FFF


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
    if t in FIXED:
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
        return _uuid.UUID(int=0) if not text else _uuid.UUID(bytes=decode_uuid(text))
    return {}  # a struct with every field at its default


@dataclass(frozen=True)
class MessageSchema:
    """A message (or record) schema: its name, versions, flexible versions and fields."""

    name: str
    valid_versions: str
    flexible_versions: str
    fields: tuple[Field, ...]
    api_key: int | None = None
    type: str = "data"

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
        """The values with nested structs as dicts (the form :func:`~kdump.storage.message_writer.write_message` takes)."""
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
