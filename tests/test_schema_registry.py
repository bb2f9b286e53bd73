"""Schema-registry payloads (``--decode-values``/``--decode-keys schema-registry``).

The ``_schemas`` topic is written with kdump's own segment writer, records shaped as the Schema Registry writes
them (JSON keys and values, tombstones, other key types); payloads are framed by hand from Confluent's wire
format and their bodies encoded by independent encoders: fastavro for Avro, the protobuf runtime with a
descriptor built here by hand (not from the ``.proto`` text kdump compiles) for Protobuf, ``json`` for JSON.
"""

from __future__ import annotations

import base64
import io
import json
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

from kdump.payload import wire
from kdump.render.json_schema import validate
from tests.builder import SimpleRecord, build_v2_batch
from tests.replay import run_kdump

fastavro = pytest.importorskip("fastavro", reason="the schema-registry extra is not installed")

ORDER_AVSC = {
    "type": "record",
    "name": "Order",
    "namespace": "shop",
    "fields": [
        {"name": "id", "type": "long"},
        {"name": "customer", "type": "string"},
        {"name": "amount", "type": "double"},
        {"name": "status", "type": {"type": "enum", "name": "Status", "symbols": ["NEW", "PAID"]}},
        {"name": "note", "type": ["null", "string"], "default": None},
        {"name": "raw", "type": "bytes", "default": ""},
    ],
}
ITEM_AVSC = {
    "type": "record",
    "name": "Item",
    "namespace": "shop",
    "fields": [{"name": "sku", "type": "string"}],
}
BASKET_AVSC = {
    "type": "record",
    "name": "Basket",
    "namespace": "shop",
    "fields": [{"name": "items", "type": {"type": "array", "items": "shop.Item"}}],
}
COMMON_PROTO = 'syntax = "proto3";\npackage shop;\nmessage Money { string currency = 1; int64 units = 2; }\n'
PAYMENT_PROTO = (
    'syntax = "proto3";\npackage shop;\nimport "shop/common.proto";\n'
    "message Header { string source = 1; }\n"
    "message Payment {\n  string id = 1;\n  shop.Money amount = 2;\n"
    "  message Refund { string reason = 1; int32 count = 2; }\n}\n"
)
ORDER_JSON_SCHEMA = {"type": "object", "properties": {"id": {"type": "integer"}}}

ORDER = {
    "id": 42,
    "customer": "Ærøskøbing",
    "amount": 12.5,
    "status": "PAID",
    "note": None,
    "raw": b"\x00\xff",
}


def avro_bytes(schema: dict, value: dict, named: dict | None = None) -> bytes:
    parsed = fastavro.parse_schema(schema, named_schemas=named if named is not None else {})
    out = io.BytesIO()
    fastavro.schemaless_writer(out, parsed, value)
    return out.getvalue()


def payment_classes():
    """Message classes of PAYMENT_PROTO from descriptors written here field by field (an encoder independent
    of the .proto text that kdump compiles with protoc)."""
    from google.protobuf import descriptor_pb2, descriptor_pool, message_factory

    pool = descriptor_pool.DescriptorPool()
    common = descriptor_pb2.FileDescriptorProto(name="shop/common.proto", package="shop", syntax="proto3")
    money = common.message_type.add(name="Money")
    money.field.add(name="currency", number=1, type=9, label=1)
    money.field.add(name="units", number=2, type=3, label=1)
    pool.Add(common)
    payment_file = descriptor_pb2.FileDescriptorProto(
        name="payment.proto", package="shop", syntax="proto3", dependency=["shop/common.proto"]
    )
    header = payment_file.message_type.add(name="Header")
    header.field.add(name="source", number=1, type=9, label=1)
    payment = payment_file.message_type.add(name="Payment")
    payment.field.add(name="id", number=1, type=9, label=1)
    payment.field.add(name="amount", number=2, type=11, label=1, type_name=".shop.Money")
    refund = payment.nested_type.add(name="Refund")
    refund.field.add(name="reason", number=1, type=9, label=1)
    refund.field.add(name="count", number=2, type=5, label=1)
    pool.Add(payment_file)
    get = message_factory.GetMessageClass
    return (
        get(pool.FindMessageTypeByName("shop.Header")),
        get(pool.FindMessageTypeByName("shop.Payment")),
        get(pool.FindMessageTypeByName("shop.Payment.Refund")),
    )


def schema_key(subject: str, version: int) -> bytes:
    return json.dumps({"keytype": "SCHEMA", "subject": subject, "version": version, "magic": 1}).encode()


def schema_value(subject: str, version: int, schema_id: int, text: str, **extra: object) -> bytes:
    obj = {"subject": subject, "version": version, "id": schema_id, "schema": text, "deleted": False}
    obj.update(extra)
    return json.dumps(obj).encode()


def write_segment(directory: Path, records: list[tuple[bytes | None, bytes | None]]) -> Path:
    directory.mkdir(parents=True, exist_ok=True)
    batches = [
        build_v2_batch([SimpleRecord(value, key=key, timestamp=1_700_000_000_000 + i)], base_offset=i)
        for i, (key, value) in enumerate(records)
    ]
    path = directory / "00000000000000000000.log"
    path.write_bytes(b"".join(batches))
    return path


def schemas_records() -> list[tuple[bytes | None, bytes | None]]:
    """The ``_schemas`` topic of a registry that registered these subjects, in the order it writes them."""
    return [
        (json.dumps({"keytype": "NOOP", "magic": 0}).encode(), None),
        (
            json.dumps({"keytype": "CONFIG", "subject": None, "magic": 0}).encode(),
            b'{"compatibilityLevel":"BACKWARD"}',
        ),
        (schema_key("orders-value", 1), schema_value("orders-value", 1, 1, json.dumps(ORDER_AVSC))),
        (schema_key("shop.Item", 1), schema_value("shop.Item", 1, 2, json.dumps(ITEM_AVSC))),
        (
            schema_key("baskets-value", 1),
            schema_value(
                "baskets-value",
                1,
                3,
                json.dumps(BASKET_AVSC),
                references=[{"name": "shop.Item", "subject": "shop.Item", "version": 1}],
            ),
        ),
        (
            schema_key("shop/common.proto", 1),
            schema_value("shop/common.proto", 1, 4, COMMON_PROTO, schemaType="PROTOBUF"),
        ),
        (
            schema_key("payments-value", 1),
            schema_value(
                "payments-value",
                1,
                5,
                PAYMENT_PROTO,
                schemaType="PROTOBUF",
                references=[{"name": "shop/common.proto", "subject": "shop/common.proto", "version": 1}],
            ),
        ),
        (
            schema_key("events-value", 1),
            schema_value("events-value", 1, 6, json.dumps(ORDER_JSON_SCHEMA), schemaType="JSON"),
        ),
        # a schema registered, soft-deleted, then hard-deleted (tombstone): its id still decodes old records
        (schema_key("old-value", 1), schema_value("old-value", 1, 7, '"string"')),
        (schema_key("old-value", 1), schema_value("old-value", 1, 7, '"string"', deleted=True)),
        (schema_key("old-value", 1), None),
        (
            json.dumps({"keytype": "DELETE_SUBJECT", "subject": "old-value", "magic": 0}).encode(),
            b'{"subject":"old-value","version":1}',
        ),
    ]


@pytest.fixture
def data_dir(tmp_path: Path) -> Path:
    write_segment(tmp_path / "_schemas-0", schemas_records())
    return tmp_path


def topic_records() -> list[tuple[bytes | None, bytes | None]]:
    header_cls, payment_cls, refund_cls = payment_classes()
    payment = payment_cls(id="p-1")
    payment.amount.currency = "EUR"
    payment.amount.units = 1250
    refund = refund_cls(reason="damaged", count=2)
    return [
        (b"k0", wire.frame(1, avro_bytes(ORDER_AVSC, ORDER))),
        (
            b"k1",
            wire.frame(3, avro_bytes(BASKET_AVSC, {"items": [{"sku": "A"}, {"sku": "B"}]}, _item_named())),
        ),
        (b"k2", wire.frame(5, payment.SerializeToString(), [1])),  # Payment: the second top-level message
        (b"k3", wire.frame(5, refund.SerializeToString(), [1, 0])),  # Payment.Refund
        (b"k4", wire.frame(5, header_cls(source="web").SerializeToString(), [0])),  # one 0 byte: [0]
        (b"k5", wire.frame(6, json.dumps({"id": 7, "extra": [1, 2]}).encode())),
        (b"k6", wire.frame(7, avro_bytes({"type": "string"}, "from a deleted schema"))),
        (b"k7", wire.frame(99, b"\x02a")),  # unknown schema id
        (b"k8", b"plain text, not framed"),  # wrong magic
        (b"k9", b"\x00\x00\x00"),  # truncated header
        (b"k10", wire.frame(1, avro_bytes(ORDER_AVSC, ORDER)[:5])),  # truncated Avro
        (b"k11", wire.frame(1, avro_bytes(ORDER_AVSC, ORDER) + b"\x00\x00")),  # trailing bytes: mismatch
        (b"k12", None),  # tombstone: nothing to decode
    ]


def _item_named() -> dict:
    named: dict = {}
    fastavro.parse_schema(ITEM_AVSC, named_schemas=named)
    return named


def expected_order() -> dict:
    return {**ORDER, "raw": "\x00\xff"}  # Avro's JSON encoding of bytes: code points 0-255


@pytest.fixture
def topic_log(data_dir: Path) -> Path:
    return write_segment(data_dir / "orders-0", topic_records())


def _run(*argv: str) -> tuple[int, str, str]:
    code, out, err = run_kdump(list(argv))
    return code, out.decode("utf-8"), err.decode("utf-8")


def _record_lines(text: str) -> list[str]:
    """The record lines of Kafka's text (a payload may hold newlines: lines are cut where one starts)."""
    assert text.endswith("\n")
    return [
        line
        for line in re.split(r"\n(?=\| offset: |baseOffset: )", text[:-1])
        if line.startswith("| offset: ")
    ]


def _field(line: str, label: str) -> str:
    """The text after ``label: `` up to the next kdump field."""
    rest = line.split(f" {label}: ", 1)[1]
    for nxt in (" kdumpNote: ", " valueSchemaId: ", " decodedValue: "):
        if nxt in rest and label != "kdumpNote":
            rest = rest.split(nxt, 1)[0]
    return rest


# -- the framing -------------------------------------------------------------------------------------------


def test_wire_format() -> None:
    assert wire.schema_id_of(b"\x00\x00\x00\x01\x02rest") == 258
    with pytest.raises(wire.FramingError, match="magic byte 1"):
        wire.schema_id_of(b"\x01\x00\x00\x00\x01")
    with pytest.raises(wire.FramingError, match="truncated"):
        wire.schema_id_of(b"\x00\x00")
    # Confluent's message-index encoding: [0] is one 0 byte; otherwise a zig-zag count then zig-zag indexes
    assert wire.message_indexes(b"\x00" * 5 + b"\x00body") == ([0], 6)
    assert wire.message_indexes(b"\x00" * 5 + b"\x04\x02\x06body") == ([1, 3], 8)
    assert wire.frame(1, b"m", [1, 3]) == b"\x00\x00\x00\x00\x01\x04\x02\x06m"
    with pytest.raises(wire.FramingError):
        wire.message_indexes(b"\x00" * 5 + b"\x04\x02")  # count 2, one index, then the end
    with pytest.raises(wire.FramingError):
        wire.message_indexes(b"\x00" * 5 + b"\xff\xff\xff\xff\xff\xff")


# -- kdump files -------------------------------------------------------------------------------------------


def test_default_output_unchanged_and_decoding_only_appends(topic_log: Path) -> None:
    code, plain, _ = _run("--files", str(topic_log), "--print-data-log")
    code2, decoded, err = _run("--files", str(topic_log), "--decode-values", "schema-registry")
    assert code == code2 == 0 and err == ""
    plain_lines, decoded_lines = _record_lines(plain), _record_lines(decoded)
    assert len(plain_lines) == len(decoded_lines) == 13
    for a, b in zip(plain_lines, decoded_lines, strict=True):
        assert b.startswith(a)
        assert (b == a) == ("payload: " not in a)
    assert plain.split("| offset: ")[0] == decoded.split("| offset: ")[0]  # the head lines


def test_text_decodes_avro_protobuf_json(topic_log: Path) -> None:
    _, out, _ = _run("--files", str(topic_log), "--decode-values", "schema-registry")
    lines = _record_lines(out)
    values = {}
    for line in lines:
        offset = int(line.split()[2])
        if " decodedValue: " in line:
            values[offset] = (
                int(_field(line, "valueSchemaId")),
                json.loads(line.split(" decodedValue: ", 1)[1]),
            )
    assert values[0] == (1, expected_order())
    assert values[1] == (3, {"items": [{"sku": "A"}, {"sku": "B"}]})
    assert values[2] == (5, {"id": "p-1", "amount": {"currency": "EUR", "units": "1250"}})
    assert values[3] == (5, {"reason": "damaged", "count": 2})
    assert values[4] == (5, {"source": "web"})
    assert values[5] == (6, {"id": 7, "extra": [1, 2]})
    assert values[6] == (7, "from a deleted schema")
    assert set(values) == {0, 1, 2, 3, 4, 5, 6}


def test_bad_payloads_get_one_note_and_nothing_fails(topic_log: Path) -> None:
    code, out, err = _run("--files", str(topic_log), "--decode-values", "schema-registry")
    assert code == 0 and err == ""
    lines = {int(line.split()[2]): line for line in _record_lines(out)}
    notes = {o: line.split(" kdumpNote: ", 1)[1] for o, line in lines.items() if " kdumpNote: " in line}
    assert all(line.count("kdumpNote:") <= 1 for line in lines.values())
    assert notes[7].startswith("value not decoded: schema id 99 is not known")
    assert "_schemas-0" in notes[7]
    assert notes[8] == "value not decoded: not schema-registry framed (magic byte 112, expected 0)"
    assert notes[9].startswith("value not decoded: truncated")
    assert "truncated" in notes[10] and "schema id 1" in notes[10]
    assert (
        notes[11] == "value not decoded: does not fit schema id 1 (AVRO): 2 bytes left after a complete datum"
    )
    assert set(notes) == {7, 8, 9, 10, 11}
    assert "payload" not in lines[12] and "kdump" not in lines[12]


def test_keys(data_dir: Path) -> None:
    log = write_segment(
        data_dir / "keyed-0",
        [
            (wire.frame(7, avro_bytes({"type": "string"}, "customer-9")), wire.frame(6, b'{"a": 1}')),
            (b"x", None),
        ],
    )
    _, out, _ = _run("--files", str(log), "--decode-keys", "schema-registry")
    first, second = _record_lines(out)
    assert first.endswith(' keySchemaId: 7 decodedKey: "customer-9"')
    assert (
        second.endswith(
            "payload: x kdumpNote: key not decoded: not schema-registry framed (magic byte 120, expected 0)"
        )
        is False
    )
    assert second.endswith(
        " kdumpNote: key not decoded: not schema-registry framed (magic byte 120, expected 0)"
    )
    _, both, _ = _run(
        "--files", str(log), "--decode-keys", "schema-registry", "--decode-values", "schema-registry"
    )
    assert _record_lines(both)[0].endswith(
        ' keySchemaId: 7 decodedKey: "customer-9" valueSchemaId: 6 decodedValue: {"a":1}'
    )


def test_json_output(topic_log: Path) -> None:
    code, out, _ = _run("--files", str(topic_log), "--json", "--decode-values", "schema-registry")
    assert code == 0
    objects = [json.loads(line) for line in out.splitlines()]
    for obj in objects:
        assert validate(obj) == [], obj
    records = {o["offset"]: o for o in objects if o["type"] == "record"}
    assert records[0]["decodedValue"] == expected_order() and records[0]["valueSchemaId"] == 1
    assert base64.b64decode(records[0]["payload"]) == topic_records()[0][1]  # the raw bytes are still there
    assert records[2]["decodedValue"]["amount"] == {"currency": "EUR", "units": "1250"}
    assert records[7]["valueSchemaId"] == 99 and "decodedValue" not in records[7]
    assert records[7]["decodeNotes"][0].startswith("value not decoded: schema id 99 is not known")
    assert "valueSchemaId" not in records[8] and len(records[8]["decodeNotes"]) == 1


def test_filters_and_parallel_paths_decode_too(topic_log: Path) -> None:
    _, out, _ = _run(
        "--files",
        str(topic_log),
        "--decode-values",
        "schema-registry",
        "--from-offset",
        "5",
        "--to-offset",
        "5",
    )
    (line,) = _record_lines(out)
    assert line.endswith(' valueSchemaId: 6 decodedValue: {"id":7,"extra":[1,2]}')
    _, sequential, _ = _run("--files", str(topic_log), "--decode-values", "schema-registry")
    # the ordered parallel renderer (forked workers) gives the same bytes
    result = subprocess.run(
        [
            sys.executable,
            "-m",
            "kdump",
            "files",
            "--files",
            str(topic_log),
            "--decode-values",
            "schema-registry",
        ],
        capture_output=True,
        env={**os.environ, "KDUMP_PARALLEL_MIN_BYTES": "1", "KDUMP_WORKERS": "2"},
    )
    assert result.returncode == 0 and result.stdout.decode() == sequential


# -- schema sources ----------------------------------------------------------------------------------------


def test_schema_directory_and_id_map(tmp_path: Path) -> None:
    schemas = tmp_path / "schemas"
    schemas.mkdir()
    (schemas / "1.avsc").write_text(json.dumps(ORDER_AVSC))
    (schemas / "2.avsc").write_text(json.dumps(ITEM_AVSC))
    (schemas / "3.avsc").write_text(json.dumps(BASKET_AVSC))  # names shop.Item, defined by 2.avsc
    (schemas / "shop").mkdir()
    (schemas / "shop" / "common.proto").write_text(COMMON_PROTO)  # found by its import path
    (schemas / "5.proto").write_text(PAYMENT_PROTO)
    (schemas / "6.json").write_text(json.dumps(ORDER_JSON_SCHEMA))
    elsewhere = tmp_path / "string.avsc"
    elsewhere.write_text('"string"')
    log = write_segment(tmp_path / "data" / "orders-0", topic_records())
    code, out, _ = _run(
        "--files",
        str(log),
        "--decode-values",
        "schema-registry",
        "--schemas",
        str(schemas),
        "--schema-id-map",
        f"7={elsewhere}",
    )
    assert code == 0
    decoded = [line for line in _record_lines(out) if " decodedValue: " in line]
    assert len(decoded) == 7
    assert json.loads(decoded[1].split(" decodedValue: ")[1]) == {"items": [{"sku": "A"}, {"sku": "B"}]}
    assert json.loads(decoded[6].split(" decodedValue: ")[1]) == "from a deleted schema"
    # the map as a JSON file, paths relative to it
    (tmp_path / "map.json").write_text(json.dumps({"7": "string.avsc"}))
    _, out2, _ = _run(
        "--files",
        str(log),
        "--decode-values",
        "schema-registry",
        "--schemas",
        str(schemas),
        "--schema-id-map",
        str(tmp_path / "map.json"),
    )
    assert out2 == out


def test_registry_export(tmp_path: Path) -> None:
    """The registry's ``GET /schemas`` answer, as a file."""
    export = []
    for key, value in schemas_records():
        if value is not None and json.loads(key).get("keytype") == "SCHEMA":
            obj = json.loads(value)
            obj.pop("deleted")
            export.append(obj)
    (tmp_path / "export.json").write_text(json.dumps(export))
    log = write_segment(tmp_path / "data" / "orders-0", topic_records())
    _, out, _ = _run(
        "--files", str(log), "--decode-values", "schema-registry", "--schemas", str(tmp_path / "export.json")
    )
    assert sum(" decodedValue: " in line for line in _record_lines(out)) == 7


def test_no_schemas_anywhere(tmp_path: Path) -> None:
    log = write_segment(tmp_path / "orders-0", topic_records()[:1])
    code, out, err = _run("--files", str(log), "--decode-values", "schema-registry")
    assert code == 0 and err == ""
    (line,) = _record_lines(out)
    assert " kdumpNote: value not decoded: schema id 1 is not known (looked in: " in line


def test_usage_errors(topic_log: Path) -> None:
    code, _, err = _run("--files", str(topic_log), "--decode-values", "avro")
    assert code == 2 and "unknown payload decoder" in err
    code, _, err = _run("--files", str(topic_log), "--schemas", "x")
    assert code == 2 and "--decode-values" in err
    code, _, err = _run(
        "--files", str(topic_log), "--decode-values", "schema-registry", "--schema-id-map", "x=y"
    )
    assert code == 2 and "schema id" in err


def test_corrupt_schemas_topic_is_a_note_not_a_failure(tmp_path: Path) -> None:
    path = write_segment(tmp_path / "_schemas-0", schemas_records())
    data = bytearray(path.read_bytes())
    data[-3] ^= 0xFF  # the last batch (a DELETE_SUBJECT) no longer passes its CRC... or decodes oddly
    path.write_bytes(bytes(data[: len(data) - 1]))  # and the file ends inside it
    log = write_segment(tmp_path / "orders-0", topic_records())
    code, out, err = _run("--files", str(log), "--decode-values", "schema-registry")
    assert code == 0 and err == ""
    assert sum(" decodedValue: " in line for line in _record_lines(out)) == 7


def test_unknown_protobuf_fields_are_noted(data_dir: Path) -> None:
    _, payment_cls, _ = payment_classes()
    body = payment_cls(id="p").SerializeToString() + b"\xa0\x06\x01"  # field 100, varint 1
    log = write_segment(data_dir / "pay-0", [(None, wire.frame(5, body, [1]))])
    _, out, _ = _run("--files", str(log), "--decode-values", "schema-registry")
    (line,) = _record_lines(out)
    assert (
        ' valueSchemaId: 5 decodedValue: {"id":"p"} kdumpNote: value: fields not in the schema: 100' in line
    )


# -- kdump find --------------------------------------------------------------------------------------------


def test_find_decodes_the_record(topic_log: Path) -> None:
    from click.testing import CliRunner

    from kdump.cli import cli

    partition = str(topic_log.parent)
    plain = CliRunner().invoke(cli, ["find", "--offset", "0", "--print-data-log", partition])
    result = CliRunner().invoke(
        cli, ["find", "--offset", "0", "--decode-values", "schema-registry", partition]
    )
    assert result.exit_code == plain.exit_code == 0
    record_line = result.stdout.splitlines()[-1]
    plain_line = plain.stdout.splitlines()[-1]
    assert record_line.startswith(plain_line)
    assert json.loads(record_line.split(" decodedValue: ", 1)[1]) == expected_order()
    as_json = CliRunner().invoke(
        cli, ["find", "--offset", "7", "--json", "--decode-values", "schema-registry", partition]
    )
    obj = json.loads(as_json.stdout)
    assert validate(obj) == []
    assert (
        obj["record"]["valueSchemaId"] == 99
        and "schema id 99 is not known" in obj["record"]["decodeNotes"][0]
    )
    bad = CliRunner().invoke(cli, ["find", "--offset", "0", "--schemas", "x", partition])
    assert bad.exit_code == 2 and "--decode-values" in bad.output


# -- the Spark source (its task code, without a JVM; tests/test_spark.py runs Spark itself) -----------------


def _spark_read(options: dict[str, str]) -> list:
    pytest.importorskip("pyarrow")
    from kdump.spark.options import parse_options
    from kdump.spark.planning import plan
    from kdump.spark.reader import read_split

    selection = parse_options(options)
    return [b for split in plan(selection).splits for b in read_split(split, selection.read)]


def test_spark_decoded_value_json_column(topic_log: Path) -> None:
    from kdump.spark.schema import arrow_schema, payload_columns

    data_dir = str(topic_log.parent.parent)
    batches = _spark_read({"path": data_dir, "topics": "orders", "decodeValues": "schema-registry"})
    assert batches[0].schema == arrow_schema(False, False, payload_columns(False, True))
    rows = [r for b in batches for r in b.to_pylist()]
    by_offset = {r["offset"]: r for r in rows}
    assert json.loads(by_offset[0]["decodedValue"]) == expected_order()
    assert json.loads(by_offset[2]["decodedValue"]) == {
        "id": "p-1",
        "amount": {"currency": "EUR", "units": "1250"},
    }
    assert by_offset[0]["decodeNotes"] is None
    assert by_offset[7]["decodedValue"] is None and "schema id 99 is not known" in by_offset[7]["decodeNotes"]
    assert by_offset[12]["decodedValue"] is None and by_offset[12]["decodeNotes"] is None  # tombstone


def test_spark_avro_struct_column(topic_log: Path) -> None:
    pytest.importorskip("pyspark")
    from pyspark.sql.pandas.types import to_arrow_schema

    from kdump.spark.options import parse_options
    from kdump.spark.schema import arrow_schema, spark_schema

    data_dir = str(topic_log.parent.parent)
    options = {"path": data_dir, "topics": "orders", "decodeValues": "schema-registry", "valueSchemaId": "1"}
    read = parse_options(options).read
    spark = spark_schema(False, False, read.payload_columns, read.value_kind)
    assert [f.name for f in spark["decodedValue"].dataType.fields] == [
        f["name"] for f in ORDER_AVSC["fields"]
    ]
    assert to_arrow_schema(spark, timezone="UTC") == arrow_schema(
        False, False, read.payload_columns, read.value_kind
    )
    rows = {r["offset"]: r for b in _spark_read(options) for r in b.to_pylist()}
    assert rows[0]["decodedValue"] == {**ORDER, "raw": b"\x00\xff"}
    assert rows[1]["decodedValue"] is None and "not the valueSchemaId 1" in rows[1]["decodeNotes"]
    with pytest.raises(ValueError, match="PROTOBUF, not Avro"):
        parse_options({**options, "valueSchemaId": "5"})


def test_json_text_of_unusual_values() -> None:
    """Whichever encoder is used (orjson or the standard library), the text is the JSON of the value:
    integers beyond 64 bits, Avro bytes, timestamps, decimals."""
    import datetime
    import decimal

    from kdump.render.decoded_payload import to_json

    value = {
        "big": 2**70,
        "raw": b"\x00\xff",
        "at": datetime.datetime(2026, 11, 23, 8, 0, tzinfo=datetime.UTC),
        "price": decimal.Decimal("12.50"),
        "text": "zürich\n",
        "nested": [{"k": None}],
    }
    text = to_json(value)
    assert "\n" not in text
    assert json.loads(text) == {
        "big": 2**70,
        "raw": "\x00\xff",
        "at": "2026-11-23T08:00:00+00:00",
        "price": "12.50",
        "text": "zürich\n",
        "nested": [{"k": None}],
    }


def test_decoding_loads_only_what_it_uses(data_dir: Path) -> None:
    """Without the options nothing of kdump.payload loads; Avro-only data loads neither protobuf nor grpc."""
    avro_only = write_segment(data_dir / "avro-0", topic_records()[:1])
    probe = (
        "import io, sys\n"
        "from kdump.cli import files\n"
        "out = io.BytesIO()\n"
        "from kdump.facts.output import Output\n"
        "files.run(sys.argv[1:], Output(out), Output(io.BytesIO()))\n"
        "print(sorted(m for m in sys.modules if m.startswith(('kdump.payload', 'google.protobuf', 'grpc', "
        "'fastavro'))))\n"
    )

    def loaded(*argv: str) -> list[str]:
        result = subprocess.run(
            [sys.executable, "-c", probe, *argv], capture_output=True, text=True, check=True
        )
        return json.loads(result.stdout.replace("'", '"'))

    assert loaded("--files", str(avro_only), "--print-data-log") == []
    with_decoding = loaded("--files", str(avro_only), "--decode-values", "schema-registry")
    assert "kdump.payload.avro" in with_decoding and "fastavro" in with_decoding
    assert not any(m.startswith(("google.protobuf", "grpc", "kdump.payload.protobuf")) for m in with_decoding)
