"""How decoded schema-registry payloads (:class:`kdump.payload.decoder.Decoded`) are shown: kdump-only fields
after Kafka's ``payload:`` in the text, fields of the record object in JSON lines.

Text (appended to the record line, after everything Kafka prints, keys first)::

    ... payload: <Kafka's text> keySchemaId: 3 decodedKey: {...} valueSchemaId: 7 decodedValue: {...}
    ... payload: <Kafka's text> kdumpNote: value not decoded: schema id 42 is not known (looked in: ...)

The JSON text is orjson's when it is installed, else the standard library's (the same JSON values; NaN
and infinities are ``null`` with orjson).

JSON: ``keySchemaId``/``decodedKey``, ``valueSchemaId``/``decodedValue`` (the value as a JSON object or
other JSON value), ``decodeNotes`` (a list of the same notes).  Avro ``bytes``/``fixed`` become strings of
code points 0-255 (Avro's JSON encoding), timestamps ISO-8601, decimals and UUIDs strings.
"""

from __future__ import annotations

import datetime
import decimal
import json
import uuid
from collections.abc import Callable
from typing import Any

from kdump.payload.decoder import Decoded, PayloadDecoder
from kdump.render.safe_text import safe_text
from kdump.storage.record import Record


def _jsonable(o: object) -> Any:
    if isinstance(o, bytes | bytearray | memoryview):
        return bytes(o).decode("latin-1")
    if isinstance(o, datetime.datetime | datetime.date | datetime.time):
        return o.isoformat()
    if isinstance(o, decimal.Decimal | uuid.UUID):
        return str(o)
    if isinstance(o, set | frozenset | tuple):
        return list(o)
    return str(o)


def _make_to_json() -> Callable[[Any], str]:
    """Compact JSON on one line (control characters escaped), non-ASCII kept.  The C encoder is made once
    (``JSONEncoder.encode`` makes one per call, which costs as much as the encoding of a small record);
    decoded payloads hold no reference cycles, so there are no markers."""
    from json import encoder as std

    encoder = json.JSONEncoder(ensure_ascii=False, separators=(",", ":"), default=_jsonable)
    c_make = getattr(std, "c_make_encoder", None)
    c_basestring = getattr(std, "c_encode_basestring", None)
    if c_make is None or c_basestring is None:
        return encoder.encode
    chunks = c_make(None, _jsonable, c_basestring, None, ":", ",", False, False, True)
    join = "".join

    def to_json(o: Any) -> str:
        if isinstance(o, str):
            return c_basestring(o)
        return join(chunks(o, 0))

    return to_json


def _with_orjson(fallback: Callable[[Any], str]) -> Callable[[Any], str]:
    """orjson when installed (the schema-registry extra brings it): about 7x faster than the standard C
    encoder on a small record, which is most of what decoding costs besides the decoder itself.  What it
    refuses (integers beyond 64 bits) goes to the standard encoder."""
    try:
        import orjson
    except ImportError:
        return fallback
    dumps = orjson.dumps
    option = orjson.OPT_NON_STR_KEYS

    def to_json(o: Any) -> str:
        try:
            return dumps(o, default=_jsonable, option=option).decode()
        except TypeError:
            return fallback(o)

    return to_json


to_json = _with_orjson(_make_to_json())

_LABELS = {"key": ("keySchemaId", "decodedKey"), "value": ("valueSchemaId", "decodedValue")}


def text_fields(part: str, d: Decoded) -> str:
    """The text added for one decoded part (``"key"`` or ``"value"``)."""
    out = ""
    if d.has_value:
        id_label, value_label = _LABELS[part]
        out = f" {id_label}: {d.schema_id} {value_label}: {to_json(d.value)}"
        if d.note is not None:
            out += f" kdumpNote: {part}: {safe_text(d.note)}"
        return out
    return f" kdumpNote: {part} not decoded: {safe_text(d.note or '')}"


def json_fields(obj: dict[str, Any], part: str, d: Decoded) -> None:
    """Put one decoded part into a JSON record object."""
    id_label, value_label = _LABELS[part]
    if d.schema_id is not None:
        obj[id_label] = d.schema_id
    if d.has_value:
        obj[value_label] = json.loads(to_json(d.value))
        if d.note is not None:
            obj.setdefault("decodeNotes", []).append(f"{part}: {d.note}")
    else:
        obj.setdefault("decodeNotes", []).append(f"{part} not decoded: {d.note}")


def text_hook(decoder: PayloadDecoder, keys: bool, values: bool) -> Callable[[Record], str]:
    """What the Kafka-text record renderer appends to a record line."""
    decode = decoder.decode
    function_for = decoder.function_for
    #: by the 5 header bytes: the text before the JSON and the compiled decoder (None: the careful path)
    by_header: dict[bytes, tuple[str, Callable[[bytes, int], Any] | None]] = {}

    def known(header: bytes) -> tuple[str, Callable[[bytes, int], Any] | None]:
        schema_id = int.from_bytes(header[1:5], "big", signed=True)
        found = by_header[header] = (
            f" valueSchemaId: {schema_id} decodedValue: ",
            function_for(schema_id) if header[0] == 0 else None,
        )
        return found

    def value_fast(v: bytes) -> str:
        """The common case without building a :class:`Decoded`: framed, a usable schema, data that fits."""
        if len(v) >= 5:
            header = v[:5]
            prefix, fn = by_header.get(header) or known(header)
            if fn is not None:
                try:
                    return prefix + to_json(fn(v, 5))
                except Exception:  # noqa: BLE001, S110 -- the careful path says what went wrong
                    pass
        return text_fields("value", decode(v))

    if values and not keys:

        def value_only(r: Record) -> str:
            v = r.value
            return "" if v is None else value_fast(v)

        return value_only

    def both(r: Record) -> str:
        out = ""
        if keys and r.key is not None:
            out += text_fields("key", decode(r.key))
        if values and r.value is not None:
            out += value_fast(r.value)
        return out

    return both


def json_hook(decoder: PayloadDecoder, keys: bool, values: bool) -> Callable[[Record, dict[str, Any]], None]:
    """What the JSON record renderer adds to a record object."""
    decode = decoder.decode

    def add(r: Record, obj: dict[str, Any]) -> None:
        if keys and r.key is not None:
            json_fields(obj, "key", decode(r.key))
        if values and r.value is not None:
            json_fields(obj, "value", decode(r.value))

    return add
