"""JSON Schema payloads: the data after the header is JSON text; it is parsed, not validated (the schema
says what the producer promised; the bytes on disk are the evidence, shown as they are)."""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any

from kdump.payload.registry import Schema, SchemaStore


def compile_json(schema: Schema, store: SchemaStore) -> Callable[[bytes, int], Any]:
    loads = json.loads

    def decode(data: bytes, start: int) -> Any:
        return loads(data[start:])

    return decode
