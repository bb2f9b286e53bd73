"""The columns of the ``kafka-log`` data source.

The first seven are spark-sql-kafka's own (``key``, ``value``, ``topic``, ``partition``, ``offset``,
``timestamp``, ``timestampType``), then ``headers`` when ``includeHeaders`` is true, so code written against
Kafka's Spark source carries over unchanged; then the forensic columns, which say where each record lies on
disk and what its batch looked like.  Every column is nullable, as in spark-sql-kafka.

The Arrow schema is written out here (pyarrow only, no PySpark needed) and is exactly what PySpark derives
from the Spark schema (``to_arrow_schema(schema, timezone="UTC")``): a Python data source's Arrow batches must
match it field for field.
"""

from __future__ import annotations

from typing import Any

#: (name, Spark type name, description); the Spark and Arrow schemas are built from this list.
KAFKA_COLUMNS: tuple[tuple[str, str, str], ...] = (
    ("key", "binary", "the record key (null for a null key)"),
    ("value", "binary", "the record value (null for a tombstone)"),
    ("topic", "string", "topic, from the partition directory name"),
    ("partition", "int", "partition, from the partition directory name (-1 when the name has none)"),
    ("offset", "long", "the record's offset"),
    ("timestamp", "timestamp", "the record's timestamp (milliseconds on disk; -1 ms for magic 0)"),
    ("timestampType", "int", "0 CreateTime, 1 LogAppendTime, -1 none (magic 0)"),
)
HEADERS_COLUMN: tuple[str, str, str] = (
    "headers",
    "array<struct<key:string,value:binary>>",
    "the record headers (keys decoded as UTF-8 like the JVM does), null when the record has none",
)
DECODED_COLUMN: tuple[str, str, str] = (
    "decoded",
    "string",
    "with the decoder option: the key and value decoded by that internal-topic decoder, as JSON (the same "
    "data as kdump files --json's decoded field)",
)
FORENSIC_COLUMNS: tuple[tuple[str, str, str], ...] = (
    ("segment", "string", "path of the .log segment file"),
    ("batchPosition", "long", "byte position of the record's batch in the segment"),
    ("batchBaseOffset", "long", "base offset of the record's batch"),
    ("magic", "int", "message format of the batch (0, 1 or 2)"),
    ("producerId", "long", "producer id of the batch (-1: none)"),
    ("producerEpoch", "int", "producer epoch of the batch (-1: none)"),
    ("baseSequence", "int", "base sequence of the batch (-1: none)"),
    ("isTransactional", "boolean", "the batch belongs to a transaction"),
    ("isControl", "boolean", "the batch is a control batch (transaction markers, KRaft control records)"),
    ("compression", "string", "compression codec of the batch: none, gzip, snappy, lz4 or zstd"),
    ("crcValid", "boolean", "the batch CRC matches its bytes"),
    ("partitionLeaderEpoch", "int", "partition leader epoch of the batch (-1: none)"),
)


DECODED_KEY_COLUMN: tuple[str, str, str] = (
    "decodedKey",
    "string",
    "with decodeKeys=schema-registry: the key decoded from the schema registry's wire format, as JSON",
)
DECODED_VALUE_COLUMN: tuple[str, str, str] = (
    "decodedValue",
    "string",
    "with decodeValues=schema-registry: the value decoded from the schema registry's wire format, as JSON "
    "(with valueSchemaId: a struct of that Avro schema)",
)
DECODE_NOTES_COLUMN: tuple[str, str, str] = (
    "decodeNotes",
    "string",
    "with decodeKeys/decodeValues: why a key or value was not decoded (null when both were)",
)
#: The kind of ``decodedValue`` when it is a struct (see :mod:`kdump.payload.spark_types`).
AVRO_KIND = "avro"


def payload_columns(keys: bool, values: bool, value_struct: bool = False) -> tuple[tuple[str, str, str], ...]:
    """The schema-registry columns: ``decodedKey``, ``decodedValue`` (a struct when ``value_struct``),
    ``decodeNotes``."""
    out: list[tuple[str, str, str]] = []
    if keys:
        out.append(DECODED_KEY_COLUMN)
    if values:
        name, _, description = DECODED_VALUE_COLUMN
        out.append((name, AVRO_KIND if value_struct else "string", description))
    if keys or values:
        out.append(DECODE_NOTES_COLUMN)
    return tuple(out)


def columns(
    include_headers: bool, decoded: bool = False, payload: tuple[tuple[str, str, str], ...] = ()
) -> tuple[tuple[str, str, str], ...]:
    """The columns in order, ``headers``, ``decoded`` and the :func:`payload_columns` included or not."""
    return (
        KAFKA_COLUMNS
        + ((HEADERS_COLUMN,) if include_headers else ())
        + ((DECODED_COLUMN,) if decoded else ())
        + payload
        + FORENSIC_COLUMNS
    )


def column_names(
    include_headers: bool, decoded: bool = False, payload: tuple[tuple[str, str, str], ...] = ()
) -> list[str]:
    return [name for name, _, _ in columns(include_headers, decoded, payload)]


def spark_schema(
    include_headers: bool,
    decoded: bool = False,
    payload: tuple[tuple[str, str, str], ...] = (),
    value_kind: Any = None,
) -> Any:
    """The schema as a ``pyspark.sql.types.StructType`` (built without a JVM).  ``value_kind``: the Avro
    schema's kind when ``decodedValue`` is a struct."""
    from pyspark.sql import types as t

    return t.StructType(list(_struct(columns(include_headers, decoded, payload), value_kind)))


def _struct(chosen: Any, value_kind: Any) -> Any:
    """The ``StructField`` of each (name, kind, description) of ``chosen``."""
    from pyspark.sql import types as t

    simple = {
        "binary": t.BinaryType(),
        "string": t.StringType(),
        "int": t.IntegerType(),
        "long": t.LongType(),
        "timestamp": t.TimestampType(),
        "boolean": t.BooleanType(),
    }
    header = t.ArrayType(
        t.StructType([t.StructField("key", t.StringType()), t.StructField("value", t.BinaryType())])
    )
    if value_kind is not None:
        from kdump.payload.spark_types import spark_type

        simple[AVRO_KIND] = spark_type(value_kind)
    for name, kind, _ in chosen:
        yield t.StructField(name, header if name == "headers" else simple[kind], True)


def arrow_schema(
    include_headers: bool,
    decoded: bool = False,
    payload: tuple[tuple[str, str, str], ...] = (),
    value_kind: Any = None,
) -> Any:
    """The ``pyarrow.Schema`` the reader's batches have (equal to PySpark's ``to_arrow_schema``)."""
    import pyarrow as pa

    simple = {
        "binary": pa.binary(),
        "string": pa.string(),
        "int": pa.int32(),
        "long": pa.int64(),
        "timestamp": pa.timestamp("us", tz="UTC"),
        "boolean": pa.bool_(),
    }
    header = pa.list_(pa.field("element", pa.struct([("key", pa.string()), ("value", pa.binary())])))
    if value_kind is not None:
        from kdump.payload.spark_types import arrow_type

        simple[AVRO_KIND] = arrow_type(value_kind)
    return pa.schema(
        [
            pa.field(name, header if name == "headers" else simple[kind])
            for name, kind, _ in columns(include_headers, decoded, payload)
        ]
    )


def _source_columns(options: Any) -> tuple[list[tuple[str, str, str]], Any]:
    """The columns a read's options give (``decoded`` and the schema-registry columns included, narrowed to the
    ``columns`` option, in its order) and ``decodedValue``'s Avro kind (None: a string)."""
    from kdump.spark.options import (
        OptionError,
        ReadOptions,
        decoder,
        include_headers,
        payload_options,
        selected_columns,
    )

    read = ReadOptions(**payload_options(options))
    every = list(columns(include_headers(options), decoder(options) is not None, read.payload_columns))
    wanted = selected_columns(options)
    if wanted is None:
        return every, read.value_kind
    names = [name for name, _, _ in every]
    unknown = [c for c in wanted if c not in names]
    if unknown:
        raise OptionError(
            f"columns: no column {', '.join(map(repr, unknown))} (the columns are {', '.join(names)})"
        )
    return [every[names.index(c)] for c in wanted], read.value_kind


def source_schema(options: Any) -> Any:
    """The ``kafka-log`` source's schema for a read's options (both engines'): :func:`spark_schema`'s columns
    with the ``decoded`` and schema-registry columns the options ask for, narrowed to the ``columns`` option."""
    from pyspark.sql.types import StructType

    chosen, value_kind = _source_columns(options)
    return StructType(list(_struct(chosen, value_kind)))


#: The Spark JSON of each simple kind (``DataType.json``), for :func:`source_schema_json`.
_SPARK_JSON: dict[str, Any] = {
    "binary": "binary",
    "string": "string",
    "int": "integer",
    "long": "long",
    "timestamp": "timestamp",
    "boolean": "boolean",
}
_HEADERS_JSON = {
    "type": "array",
    "elementType": {
        "type": "struct",
        "fields": [
            {"name": "key", "type": "string", "nullable": True, "metadata": {}},
            {"name": "value", "type": "binary", "nullable": True, "metadata": {}},
        ],
    },
    "containsNull": True,
}


def source_schema_json(options: Any) -> str:
    """:func:`source_schema` as Spark's JSON (what the JVM source reads), written without importing PySpark
    unless ``decodedValue`` is a struct (``valueSchemaId``): the JVM planner starts for every query."""
    import json

    chosen, value_kind = _source_columns(options)
    if value_kind is not None:
        from pyspark.sql.types import StructType

        return str(StructType(list(_struct(chosen, value_kind))).json())
    fields = [
        {
            "name": name,
            "type": _HEADERS_JSON if name == "headers" else _SPARK_JSON[kind],
            "nullable": True,
            "metadata": {},
        }
        for name, kind, _ in chosen
    ]
    return json.dumps({"type": "struct", "fields": fields}, separators=(",", ":"))
