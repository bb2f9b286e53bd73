"""Kafka's generated JSON converters (``*JsonConverter.write``) as the dump tool prints them.

Compact Jackson output: no spaces; fields in schema order, named with the first letter lower-cased; fields
absent at the message version are left out; tagged fields only when they differ from their default.  Strings
escape ``"``, ``\\`` and control characters (``\\b \\f \\n \\r \\t`` short forms, others ``\\u00XX`` with upper-case
hex); everything else, non-ASCII included, is written raw.  UUIDs use Kafka's ``Uuid.toString`` (URL-safe
base64 without padding); byte fields use standard base64.
"""

from __future__ import annotations

import base64
import re
import uuid as _uuid
from typing import Any

from kdump.storage.kafka_uuid import encode_uuid
from kdump.storage.message_schema import Field, Struct, is_default

_ESCAPE = re.compile(r'[\x00-\x1f"\\]')
_SHORT = {"\b": "\\b", "\f": "\\f", "\n": "\\n", "\r": "\\r", "\t": "\\t", '"': '\\"', "\\": "\\\\"}


def _escape_char(m: re.Match[str]) -> str:
    c = m.group()
    return _SHORT.get(c) or f"\\u{ord(c):04X}"


def json_string(s: str) -> str:
    return '"' + _ESCAPE.sub(_escape_char, s) + '"'


def kafka_uuid(u: _uuid.UUID) -> str:
    """Kafka's ``Uuid.toString`` of a decoded uuid field."""
    return encode_uuid(u.bytes)


def struct_to_json(s: Struct) -> str:
    """Render a decoded message as Kafka's JSON converter does.

    A value that is itself a :class:`Struct` where the schema has bytes (the consumer-protocol bytes of a group
    member that a decoder has expanded) is rendered as that struct.
    """
    parts = []
    for f in s.fields:
        if f.name not in s.values:
            continue
        value = s.values[f.name]
        if f.tag is not None and f.tagged_in(s.version) and is_default(f, value):
            continue
        parts.append(f'"{f.json_name}":{_value_json(f, value)}')
    return "{" + ",".join(parts) + "}"


def struct_to_jsonable(s: Struct) -> dict[str, Any]:
    """The same content as :func:`struct_to_json` as plain Python data (for ``json.dumps``, JSON output modes
    and data frames): field names as Kafka writes them, UUIDs as Kafka's strings, bytes as base64 strings."""
    out: dict[str, Any] = {}
    for f in s.fields:
        if f.name not in s.values:
            continue
        value = s.values[f.name]
        if f.tag is not None and f.tagged_in(s.version) and is_default(f, value):
            continue
        out[f.json_name] = (
            [_jsonable(v) for v in value] if f.is_array and value is not None else _jsonable(value)
        )
    return out


def _jsonable(value: Any) -> Any:
    if isinstance(value, Struct):
        return struct_to_jsonable(value)
    if isinstance(value, _uuid.UUID):
        return kafka_uuid(value)
    if isinstance(value, (bytes, bytearray)):
        return base64.b64encode(value).decode("ascii")
    return value


def _value_json(f: Field, value: Any) -> str:
    if value is None:
        return "null"
    if f.is_array:
        return "[" + ",".join(_element_json(f, v) for v in value) + "]"
    return _element_json(f, value)


def _element_json(f: Field, value: Any) -> str:
    if value is None:
        return "null"
    if isinstance(value, Struct):
        return struct_to_json(value)
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, int):
        return str(value)
    if isinstance(value, float):
        return _java_double(value)
    if isinstance(value, str):
        return json_string(value)
    if isinstance(value, _uuid.UUID):
        return json_string(kafka_uuid(value))
    if isinstance(value, (bytes, bytearray)):
        return json_string(base64.b64encode(value).decode("ascii"))
    raise TypeError(f"cannot render {type(value).__name__} as Kafka JSON")


def _java_double(x: float) -> str:
    """Jackson writes doubles with Java's ``Double.toString``."""
    if x != x:
        return '"NaN"'
    if x in (float("inf"), float("-inf")):
        return '"Infinity"' if x > 0 else '"-Infinity"'
    r = repr(x)
    if "e" in r or "E" in r:
        mant, exp = r.split("e")
        if "." not in mant:
            mant += ".0"
        return f"{mant}E{int(exp)}"
    if abs(x) >= 1e7 or (x != 0 and abs(x) < 1e-3):
        mant, exp = f"{x:.16e}".split("e")
        mant = mant.rstrip("0")
        if mant.endswith("."):
            mant += "0"
        return f"{mant}E{int(exp)}"
    return r
