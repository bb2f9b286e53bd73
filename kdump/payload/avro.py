"""Avro payloads with fastavro: the writer's schema (and the schemas it references) parsed once per id, each
payload read with ``schemaless_reader`` (the Confluent serializer writes one datum, no container header), once
:mod:`kdump.payload.avro_bounds` has shown that what it builds stays within :mod:`kdump.payload.bounds`."""

from __future__ import annotations

import io
import json
from collections.abc import Callable
from typing import Any

from kdump.payload.avro_bounds import AvroShape
from kdump.payload.bounds import check_size
from kdump.payload.registry import AVRO, Schema, SchemaStore


class SchemaMismatch(Exception):
    """The bytes are not a datum of the schema (trailing bytes after a complete datum)."""


def compile_avro(schema: Schema, store: SchemaStore) -> Callable[[bytes, int], Any]:
    """A function ``(data, start) -> value`` for ``schema``; raises ValueError when the schema is unusable."""
    import fastavro

    named: dict[str, Any] = {}
    for dependency in _dependencies(schema, store):
        try:
            fastavro.parse_schema(json.loads(dependency.text), named_schemas=named)
        except Exception as e:  # noqa: BLE001 -- fastavro raises many kinds on a bad schema
            raise ValueError(
                f"referenced schema id {dependency.id} is not a usable Avro schema: {e}"
            ) from None
    try:
        text = json.loads(schema.text)
    except ValueError as e:
        raise ValueError(f"not a usable Avro schema: {e}") from None
    parse_named = dict(named)
    try:
        parsed = fastavro.parse_schema(text, named_schemas=parse_named)
    except Exception as e:  # noqa: BLE001
        siblings = _siblings(schema, store)
        if not siblings:
            raise ValueError(f"not a usable Avro schema: {e}") from None
        for sibling in siblings:  # named types of the directory's other files, as far as they parse
            try:
                fastavro.parse_schema(json.loads(sibling.text), named_schemas=named)
            except Exception:  # noqa: BLE001, S112
                continue
        try:
            parsed = fastavro.parse_schema(text, named_schemas=named)
        except Exception as e2:  # noqa: BLE001
            raise ValueError(f"not a usable Avro schema: {e2}") from None
        parse_named = named
    shape = AvroShape(parsed, parse_named)
    fast_limit = shape.fast_limit
    scan = shape.scan
    reader = fastavro.schemaless_reader
    BytesIO = io.BytesIO

    def decode(data: bytes, start: int) -> Any:
        if len(data) - start > fast_limit:
            check_size(len(data) - start)
            scan(data, start)
        body = data[start:]
        stream = BytesIO(body)
        value = reader(stream, parsed, None)
        left = len(body) - stream.tell()
        if left:
            raise SchemaMismatch(f"{left} bytes left after a complete datum")
        return value

    return decode


def _dependencies(schema: Schema, store: SchemaStore) -> list[Schema]:
    """The schemas ``schema`` refers to through registry references, dependencies first."""
    ordered: list[Schema] = []
    seen: set[int] = {schema.id}

    def visit(s: Schema) -> None:
        for ref in s.references:
            target = store.resolve(ref)
            if target is None:
                raise ValueError(f"reference {ref.name!r} ({ref.subject} version {ref.version}) is not known")
            if target.id in seen:
                continue
            seen.add(target.id)
            visit(target)
            ordered.append(target)

    visit(schema)
    return ordered


def _siblings(schema: Schema, store: SchemaStore) -> list[Schema]:
    """The other Avro schema files of a schema file's directory (references by name)."""
    if schema.search_dir is None:
        return []
    return [
        other
        for other in store.by_id.values()
        if other.id != schema.id and other.schema_type == AVRO and other.search_dir == schema.search_dir
    ]
