"""An Avro schema as a Spark column type (PySpark ``DataType`` and the pyarrow type PySpark derives from it),
for the ``kafka-log`` data source's ``decodedValue`` column when one value schema is named.

Records are structs, enums strings, arrays arrays, maps maps of strings, ``bytes``/``fixed`` binary, a union of
``null`` and one type that type (nullable), other unions their JSON text (a string); logical types: dates,
timestamps (UTC), decimals, UUIDs as strings.  Every field is nullable, as Spark's Avro reader makes them.
"""

from __future__ import annotations

from typing import Any

PRIMITIVES = ("boolean", "int", "long", "float", "double", "bytes", "string")


class AvroToSpark:
    """Converts one parsed (fastavro) Avro schema; ``json_fields`` collects the paths shown as JSON text."""

    def __init__(self, named: dict[str, Any]) -> None:
        self.named = named

    def _resolve(self, schema: Any) -> Any:
        if isinstance(schema, str) and schema not in PRIMITIVES and schema != "null":
            return self.named.get(schema, schema)
        return schema

    def kind(self, schema: Any, depth: int = 0) -> tuple[str, Any]:
        """A neutral description: (kind, detail) -- turned into Spark or Arrow types by the two builders."""
        if depth > 32:
            return ("json", None)
        schema = self._resolve(schema)
        if isinstance(schema, list):
            others = [s for s in schema if s != "null"]
            if len(others) == 1:
                return self.kind(others[0], depth + 1)
            return ("json", None)
        if isinstance(schema, str):
            return (schema if schema in PRIMITIVES else "json", None)
        logical = schema.get("logicalType")
        t = schema.get("type")
        if logical in ("timestamp-millis", "timestamp-micros") and t == "long":
            return ("timestamp", None)
        if logical == "date" and t == "int":
            return ("date", None)
        if logical == "decimal" and t in ("bytes", "fixed"):
            precision = int(schema.get("precision", 38))
            if precision <= 38:
                return ("decimal", (precision, int(schema.get("scale", 0))))
        if logical == "uuid":
            return ("string", None)
        if t == "record":
            return ("struct", [(f["name"], self.kind(f["type"], depth + 1)) for f in schema["fields"]])
        if t == "enum":
            return ("string", None)
        if t == "array":
            return ("array", self.kind(schema["items"], depth + 1))
        if t == "map":
            return ("map", self.kind(schema["values"], depth + 1))
        if t == "fixed":
            return ("bytes", None)
        if isinstance(t, str | list | dict):
            return self.kind(t, depth + 1)
        return ("json", None)


def spark_type(kind: tuple[str, Any]) -> Any:
    from pyspark.sql import types as t

    name, detail = kind
    simple = {
        "boolean": t.BooleanType(),
        "int": t.IntegerType(),
        "long": t.LongType(),
        "float": t.FloatType(),
        "double": t.DoubleType(),
        "bytes": t.BinaryType(),
        "string": t.StringType(),
        "json": t.StringType(),
        "timestamp": t.TimestampType(),
        "date": t.DateType(),
    }
    if name in simple:
        return simple[name]
    if name == "decimal":
        return t.DecimalType(*detail)
    if name == "struct":
        return t.StructType([t.StructField(n, spark_type(k), True) for n, k in detail])
    if name == "array":
        return t.ArrayType(spark_type(detail), True)
    return t.MapType(t.StringType(), spark_type(detail), True)


def arrow_type(kind: tuple[str, Any]) -> Any:
    """What PySpark's ``to_arrow_type`` gives for :func:`spark_type` (timestamps in UTC)."""
    import pyarrow as pa

    name, detail = kind
    simple = {
        "boolean": pa.bool_(),
        "int": pa.int32(),
        "long": pa.int64(),
        "float": pa.float32(),
        "double": pa.float64(),
        "bytes": pa.binary(),
        "string": pa.string(),
        "json": pa.string(),
        "timestamp": pa.timestamp("us", tz="UTC"),
        "date": pa.date32(),
    }
    if name in simple:
        return simple[name]
    if name == "decimal":
        return pa.decimal128(*detail)
    if name == "struct":
        return pa.struct([pa.field(n, arrow_type(k)) for n, k in detail])
    if name == "array":
        return pa.list_(pa.field("element", arrow_type(detail)))
    return pa.map_(pa.string(), arrow_type(detail))


def to_column_value(kind: tuple[str, Any], value: Any, to_json: Any) -> Any:
    """A decoded Avro value shaped for the Arrow type of ``kind`` (JSON text where the kind is ``json``)."""
    if value is None:
        return None
    name, detail = kind
    if name == "json":
        return to_json(value)
    if name == "struct":
        if not isinstance(value, dict):
            return None
        return {n: to_column_value(k, value.get(n), to_json) for n, k in detail}
    if name == "array":
        return [to_column_value(detail, v, to_json) for v in value]
    if name == "map":
        return [(k, to_column_value(detail, v, to_json)) for k, v in value.items()]
    if name == "string" and not isinstance(value, str):
        return str(value)
    return value


def avro_kind(text: str) -> tuple[str, Any]:
    """The kind of an Avro schema's text (with its named types)."""
    import json

    import fastavro

    named: dict[str, Any] = {}
    parsed = fastavro.parse_schema(json.loads(text), named_schemas=named, _write_hint=False)
    return AvroToSpark(named).kind(parsed)
