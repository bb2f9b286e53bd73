"""JSON Schema payloads: the data after the header is JSON text; it is parsed, not validated (the schema
says what the producer promised; the bytes on disk are the evidence, shown as they are).

The bounds of :mod:`kdump.payload.bounds` hold before ``json.loads`` runs: every JSON value takes at least one
character of the text, so a payload of at most ``MAX_VALUES`` bytes builds at most that many values, and one
with at most ``MAX_DEPTH + 1`` opening brackets cannot nest deeper.  Other payloads are measured first on the text
with its strings blanked out (a bracket or comma inside a string is not structure): the values are at most the
commas plus the brackets plus one, the depth the deepest running count of brackets.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable
from itertools import accumulate
from typing import Any

from kdump.payload.bounds import MAX_DEPTH, MAX_VALUES, check_size, too_deep, too_many
from kdump.payload.registry import Schema, SchemaStore

#: A JSON string (RFC 8259 section 7), unrolled so that long strings are one step of the matcher.
_STRING = re.compile(r'"[^"\\]*(?:\\.[^"\\]*)*"', re.DOTALL)
#: What a bracket adds to the depth; everything else is deleted before.
_DELTA = {ord("["): 1, ord("{"): 1, ord("]"): -1, ord("}"): -1}
_BRACKETS = re.compile(r"[^\[\]{}]+")


def compile_json(schema: Schema, store: SchemaStore) -> Callable[[bytes, int], Any]:
    loads = json.loads

    def decode(data: bytes, start: int) -> Any:
        body = data[start:]
        if len(body) > MAX_VALUES or body.count(b"[") + body.count(b"{") > MAX_DEPTH + 1:
            check_size(len(body))
            # json.loads' own decoding of bytes (UTF-8, -16 or -32, told by the first bytes)
            text = body.decode(json.detect_encoding(body), "surrogatepass")
            _check_shape(text)
            return loads(text)
        return loads(body)

    return decode


def _check_shape(text: str) -> None:
    """Raise :class:`~kdump.payload.bounds.PayloadBound` when the JSON ``text`` would build more values than
    the bound or nest deeper (bad JSON is left to ``json.loads`` to name)."""
    structure = _STRING.sub('""', text)
    brackets = _BRACKETS.sub("", structure)
    if len(brackets) > MAX_DEPTH and any(
        d > MAX_DEPTH + 1 for d in accumulate(_DELTA[ord(c)] for c in brackets)
    ):
        raise too_deep()
    if structure.count(",") + structure.count("[") + structure.count("{") + 1 > MAX_VALUES:
        raise too_many()
