"""The writer of Kafka's generated protocol messages: values as bytes of any
:class:`~kdump.storage.message_schema.MessageSchema` at any version, as the generated Java ``write`` makes them
(tests and the builder of test segments use it; ``kdump files`` never writes a message)."""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

from kdump.storage.message_schema import (
    FIXED,
    Field,
    MessageSchema,
    Struct,
    Versions,
    is_default,
    version_condition,
)
from kdump.storage.varint import encode_unsigned_varint

_INT16 = FIXED["int16"]
_INT32 = FIXED["int32"]


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
    fmt = FIXED.get(t)
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
