"""Hostile schema-registry payloads (issue 27): what a payload decoder may build is bounded
(:mod:`kdump.payload.bounds`) for Avro, Protobuf and JSON; a payload past a bound is one note, the run goes on,
memory stays flat, and payloads within the bounds decode as before.

Payloads are encoded here by hand from the Avro spec ("Binary Encoding": zig-zag varints, array blocks with a
negative count followed by the block's byte size) and the Protobuf encoding; those within the bounds are
checked against what fastavro, the protobuf runtime and ``json`` decode from the same bytes.  Before the
bounds: an array block of 2^62 ``null`` items appended without end (24 GB, killed), a recursive record 1,000
deep was ``internal error (RecursionError ...)``, 5,000 deep or more a SIGSEGV (exit 139, no line).
"""

from __future__ import annotations

import io
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from kdump.payload import bounds, wire
from kdump.payload.decoder import PayloadDecoder
from kdump.payload.registry import Schema, SchemaStore, load_source
from tests.test_schema_registry import schema_key, schema_value, write_segment

fastavro = pytest.importorskip("fastavro", reason="the schema-registry extra is not installed")

NODE = {"type": "record", "name": "Node", "fields": [{"name": "next", "type": ["null", "Node"]}]}
AVRO_SCHEMAS = {
    1: {"type": "array", "items": "null"},
    2: NODE,
    3: {"type": "array", "items": {"type": "fixed", "name": "Empty", "size": 0}},
    4: {"type": "array", "items": {"type": "array", "items": "null"}},
    5: {"type": "array", "items": {"type": "record", "name": "R", "fields": [{"name": "a", "type": "int"}]}},
    7: {
        "type": "record",
        "name": "Blob",
        "fields": [{"name": "s", "type": "string"}, {"name": "b", "type": ["null", "bytes"]}],
    },
    8: {"type": "array", "items": "long"},
}
JSON_ID = 6
BOUND = "(kdump's bound on a decoded payload)"
TOO_MANY = f"more than {bounds.MAX_VALUES:,} values {BOUND}"
TOO_DEEP = f"nested more than {bounds.MAX_DEPTH} levels deep {BOUND}"


def zz(n: int) -> bytes:
    """An Avro long: zig-zag, then a base-128 varint (any size: a hostile count may pass 64 bits)."""
    z = (n << 1) if n >= 0 else ((-n) << 1) - 1
    out = bytearray()
    while z > 0x7F:
        out.append((z & 0x7F) | 0x80)
        z >>= 7
    out.append(z)
    return bytes(out)


def node_chain(depth: int) -> bytes:
    """A ``Node`` whose ``next`` is a Node ``depth - 1`` times, then null: branch 1 (0x02) each level, 0."""
    return b"\x02" * (depth - 1) + b"\x00"


def nested_node(depth: int) -> dict:
    value: dict = {"next": None}
    for _ in range(depth - 1):
        value = {"next": value}
    return value


#: name -> (schema id, payload body, the note or None when it decodes)
HOSTILE = {
    "array of 2^62 nulls": (1, zz(2**62) + b"\x00", TOO_MANY),
    "array block of -2^40 nulls": (1, zz(-(2**40)) + zz(0) + b"\x00", TOO_MANY),
    "array of 2^62 zero-size fixed": (3, zz(2**62) + b"\x00", TOO_MANY),
    "a count past 64 bits": (1, zz(2**70) + b"\x00", TOO_MANY),
    "arrays of arrays of null": (4, zz(2**31) + zz(2**31) + b"\x00" + b"\x00", TOO_MANY),
    "recursion 102 levels": (2, node_chain(bounds.MAX_DEPTH + 2), TOO_DEEP),
    "recursion 1,000 deep": (2, node_chain(1000), TOO_DEEP),
    "recursion 5,000 deep": (2, node_chain(5000), TOO_DEEP),
    "recursion 1,000,000 deep": (2, node_chain(1_000_000), TOO_DEEP),
    "JSON nested 102 levels": (JSON_ID, b"[" * 102 + b"]" * 102, TOO_DEEP),
    "JSON nested 1,000,000 deep": (JSON_ID, b"[" * 1_000_000 + b"]" * 1_000_000, TOO_DEEP),
    "JSON of too many values": (JSON_ID, b"[" + b"0," * bounds.MAX_VALUES + b"0]", TOO_MANY),
}


def _store(tmp_path: Path) -> Path:
    records = [
        (schema_key(f"s{i}-value", 1), schema_value(f"s{i}-value", 1, i, json.dumps(s)))
        for i, s in AVRO_SCHEMAS.items()
    ]
    records.append(
        (
            schema_key("j-value", 1),
            schema_value("j-value", 1, JSON_ID, '{"type": "array"}', schemaType="JSON"),
        )
    )
    write_segment(tmp_path / "_schemas-0", records)
    return tmp_path / "_schemas-0"


@pytest.fixture
def decoder(tmp_path: Path) -> PayloadDecoder:
    store = SchemaStore()
    load_source(str(_store(tmp_path)), store)
    assert store.problems == []
    return PayloadDecoder(store)


@pytest.mark.parametrize("case", list(HOSTILE))
def test_a_payload_past_a_bound_is_one_note(decoder: PayloadDecoder, case: str) -> None:
    schema_id, body, note = HOSTILE[case]
    d = decoder.decode(wire.frame(schema_id, body))
    assert not d.has_value
    kind = "JSON" if schema_id == JSON_ID else "AVRO"
    assert d.note == f"schema id {schema_id} ({kind}): {note}"


def _fastavro(schema: dict, body: bytes) -> object:
    return fastavro.schemaless_reader(io.BytesIO(body), fastavro.parse_schema(schema), None)


def test_payloads_at_the_bounds_decode_as_fastavro_and_json_do(decoder: PayloadDecoder) -> None:
    at_the_bound = [
        (2, node_chain(bounds.MAX_DEPTH + 1)),  # a record and 100 records nested in it
        (1, zz(bounds.MAX_VALUES - 1) + b"\x00"),  # the array and its items: MAX_VALUES values
        (1, zz(-(bounds.MAX_VALUES - 1)) + zz(0) + b"\x00"),  # the same in a block with a byte size
        (3, zz(bounds.MAX_VALUES - 1) + b"\x00"),
        (
            5,
            zz(bounds.MAX_VALUES // 2 - 1) + b"\x02" * (bounds.MAX_VALUES // 2 - 1) + b"\x00",
        ),  # records of an int
    ]
    for schema_id, body in at_the_bound:
        d = decoder.decode(wire.frame(schema_id, body))
        assert d.note is None and d.has_value, (schema_id, d.note)
        assert d.value == _fastavro(AVRO_SCHEMAS[schema_id], body)
    assert decoder.decode(wire.frame(2, node_chain(101))).value == nested_node(101)
    one_more = decoder.decode(
        wire.frame(5, zz(bounds.MAX_VALUES // 2) + b"\x02" * (bounds.MAX_VALUES // 2) + b"\x00")
    )
    assert one_more.note == f"schema id 5 (AVRO): {TOO_MANY}"
    for text in (
        b"[" * (bounds.MAX_DEPTH + 1) + b"]" * (bounds.MAX_DEPTH + 1),
        b"[" + b"0," * (bounds.MAX_VALUES - 2) + b"0]",
        json.dumps([{"k": "[[[{,,"} for _ in range(200)]).encode(),  # brackets in strings are not structure
        json.dumps({"a": [1, "x"] * 300}).encode("utf-16"),  # json.loads reads UTF-16 too
    ):
        d = decoder.decode(wire.frame(JSON_ID, text))
        assert d.note is None and d.value == json.loads(text)


def test_bad_bytes_found_by_the_scan_are_notes(decoder: PayloadDecoder) -> None:
    notes = [
        decoder.decode(wire.frame(2, b"\x02" * 50)).note,  # truncated inside the recursion
        decoder.decode(wire.frame(2, b"\x02" * 10 + b"\x04")).note,  # union branch 2 of 2
        decoder.decode(wire.frame(5, zz(-(2**40)))).note,  # a block without its byte size
    ]
    assert notes[0] is not None and notes[0].startswith("truncated or not AVRO of schema id 2 (truncated")
    assert notes[1] == "does not fit schema id 2 (AVRO): union branch 2 at payload byte 15, the schema has 2"
    assert notes[2] is not None and notes[2].startswith("truncated or not AVRO of schema id 5")


def test_a_payload_larger_than_the_byte_bound(decoder: PayloadDecoder) -> None:
    body = b"\x00" * (bounds.MAX_PAYLOAD_BYTES + 1)
    d = decoder.decode(wire.frame(2, body))
    assert d.note == (
        f"schema id 2 (AVRO): {bounds.MAX_PAYLOAD_BYTES + 1:,} bytes, more than "
        f"{bounds.MAX_PAYLOAD_BYTES:,} {BOUND}"
    )


def test_a_schema_without_arrays_or_maps_decodes_long_payloads_without_a_scan(
    decoder: PayloadDecoder,
) -> None:
    """No array and no map: the schema's own values whatever the length of its strings and bytes, so a payload
    up to the byte bound goes straight to fastavro (it was scanned first past ~250 KB, at half the speed); with
    an array the limit stays the product of the bytes and the widest item."""
    from kdump.payload.avro_bounds import AvroShape

    blob = AVRO_SCHEMAS[7]
    assert AvroShape(fastavro.parse_schema(blob), {}).fast_limit == bounds.MAX_PAYLOAD_BYTES
    with_array = {"type": "array", "items": blob}
    # an item builds 3 values (the record and its two fields)
    assert AvroShape(fastavro.parse_schema(with_array), {}).fast_limit == bounds.MAX_VALUES // 3 - 1
    text = ("é" * (1 << 20)).encode()
    body = zz(len(text)) + text + b"\x02" + zz(3) + b"xyz"
    d = decoder.decode(wire.frame(7, body))
    assert d.note is None and d.value == _fastavro(blob, body) == {"s": text.decode(), "b": b"xyz"}
    over = decoder.decode(wire.frame(7, b"\x00" * (bounds.MAX_PAYLOAD_BYTES + 1)))
    assert over.note == (
        f"schema id 7 (AVRO): {bounds.MAX_PAYLOAD_BYTES + 1:,} bytes, more than "
        f"{bounds.MAX_PAYLOAD_BYTES:,} {BOUND}"
    )


def test_long_arrays_of_longs_are_scanned_a_block_at_a_time(decoder: PayloadDecoder) -> None:
    """An array of ints or longs past the schema-only proof: the scan finds a block's end by a byte search
    instead of an item loop; the values, the bound and the truncated block are what they were."""
    longs = [(i * 7919) % 100_000 - 50_000 for i in range(400_000)]  # 1 to 3 bytes each

    def block(items: list[int], sized: bool) -> bytes:
        encoded = b"".join(zz(v) for v in items)
        return (zz(-len(items)) + zz(len(encoded)) if sized else zz(len(items))) + encoded

    body = block(longs[:100_000], False) + block(longs[100_000:300_000], True) + block(longs[300_000:], False)
    assert len(body) > 500_000  # past the proof: scanned
    d = decoder.decode(wire.frame(8, body + b"\x00"))
    assert d.note is None and d.value == longs == _fastavro(AVRO_SCHEMAS[8], body + b"\x00")
    too_many = decoder.decode(wire.frame(8, block([300] * bounds.MAX_VALUES, False) + b"\x00"))
    assert too_many.note == f"schema id 8 (AVRO): {TOO_MANY}"
    cut = decoder.decode(wire.frame(8, body[:-1]))
    assert cut.note is not None and cut.note.startswith(
        "truncated or not AVRO of schema id 8 (truncated: a varint"
    )


# -- the whole command, in a child process under an address-space limit -------------------------------------

_CHILD = """
import resource, sys
limit = 1 << 30
resource.setrlimit(resource.RLIMIT_AS, (limit, limit))
from kdump.cli import main
sys.argv = ["kdump", *sys.argv[2:]]
try:
    main()
finally:
    # this process's own peak (VmHWM: ru_maxrss would start from the forking parent's, pytest's, size)
    try:
        with open("/proc/self/status") as status:
            peak = next(line.split()[1] for line in status if line.startswith("VmHWM:"))
    except OSError:
        peak = str(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss)
    with open({rss!r}, "w") as f:
        f.write(peak)
"""

GOOD = nested_node(3)
#: records of one int: the array and each record and its field, MAX_VALUES values (the most memory per value
#: of the shapes tried: a dict per two values)
AT_THE_BOUND = zz(bounds.MAX_VALUES // 2 - 1) + b"\x02" * (bounds.MAX_VALUES // 2 - 1) + b"\x00"


@pytest.fixture
def hostile_log(tmp_path: Path) -> Path:
    _store(tmp_path)
    records = [(b"k", wire.frame(schema_id, body)) for schema_id, body, _ in HOSTILE.values()]
    records.append((b"at the bound", wire.frame(5, AT_THE_BOUND)))
    records.append((b"good", wire.frame(2, node_chain(3))))
    return write_segment(tmp_path / "bombs-0", records)


def _run_limited(tmp_path: Path, *argv: str) -> tuple[int, bytes, bytes, int]:
    rss = tmp_path / "rss"
    r = subprocess.run(
        [sys.executable, "-c", _CHILD.format(rss=str(rss)), "-", *argv],
        capture_output=True,
        timeout=120,
        check=False,
    )
    return r.returncode, r.stdout, r.stderr, int(rss.read_text())


@pytest.mark.parametrize("as_json", [False, True], ids=["text", "json"])
def test_files_on_hostile_payloads_notes_each_and_goes_on(
    tmp_path: Path, hostile_log: Path, as_json: bool
) -> None:
    argv = ["files", "--files", str(hostile_log), "--decode-values", "schema-registry"]
    code, out, err, peak_kib = _run_limited(tmp_path, *argv, *(["--json"] if as_json else []))
    assert (code, err) == (0, b"")
    assert peak_kib < 150 * 1024, f"peak RSS {peak_kib} KiB"
    expected = [
        f"value not decoded: schema id {i} ({'JSON' if i == JSON_ID else 'AVRO'}): {n}"
        for i, _, n in HOSTILE.values()
    ]
    if as_json:
        objs = [json.loads(line) for line in out.decode().splitlines()]
        recs = [o for o in objs if o.get("type") == "record"]
        assert [r.get("decodeNotes") for r in recs[:-2]] == [[e] for e in expected]
        assert recs[-2]["decodedValue"] == [{"a": 1}] * (bounds.MAX_VALUES // 2 - 1)
        assert recs[-1]["decodedValue"] == GOOD and "decodeNotes" not in recs[-1]
    else:
        lines = [line for line in out.decode().split("\n") if line.startswith("| offset: ")]
        assert [line.count("kdumpNote:") for line in lines] == [1] * len(HOSTILE) + [0, 0]
        assert [line.split(" kdumpNote: ", 1)[1] for line in lines[:-2]] == expected
        assert ' valueSchemaId: 5 decodedValue: [{"a":1},' in lines[-2] and lines[-2].endswith(',{"a":1}]')
        assert lines[-2].count('{"a":1}') == bounds.MAX_VALUES // 2 - 1
        assert lines[-1].endswith(
            " valueSchemaId: 2 decodedValue: " + json.dumps(GOOD, separators=(",", ":"))
        )


def test_find_on_a_hostile_payload(tmp_path: Path, hostile_log: Path) -> None:
    deepest = list(HOSTILE).index("recursion 1,000,000 deep")
    argv = ["find", "--offset", str(deepest), "--decode-values", "schema-registry", str(hostile_log.parent)]
    code, out, err, peak_kib = _run_limited(tmp_path, *argv)
    assert code == 0
    assert err.decode().startswith("kdump: note: ") and err.decode().endswith(
        ".index is missing: scanned the segment from its first byte\n"
    )
    assert peak_kib < 150 * 1024
    last = out.decode().splitlines()[-1]
    assert last.count("kdumpNote:") == 1 and last.endswith(
        f"kdumpNote: value not decoded: schema id 2 (AVRO): {TOO_DEEP}"
    )


# -- Protobuf ------------------------------------------------------------------------------------------------

NODE_PROTO = 'syntax = "proto3";\npackage t;\nmessage Node { Node next = 1; repeated int32 v = 2; }\n'


def _pb_varint(n: int) -> bytes:
    out = bytearray()
    while n > 0x7F:
        out.append((n & 0x7F) | 0x80)
        n >>= 7
    out.append(n)
    return bytes(out)


def _pb_nested(depth: int) -> bytes:
    """A Node with ``next`` set ``depth - 1`` times (field 1, wire type 2: tag 0x0a, length, message)."""
    body = b""
    for _ in range(depth - 1):
        body = b"\x0a" + _pb_varint(len(body)) + body
    return body


def _pb_packed(n: int) -> bytes:
    """A Node whose ``v`` holds ``n`` ones, packed (field 2, wire type 2: tag 0x12)."""
    return b"\x12" + _pb_varint(n) + b"\x01" * n


def test_protobuf_payloads_past_a_bound(tmp_path: Path) -> None:
    pytest.importorskip("grpc_tools", reason="the schema-registry extra is not installed")
    from google.protobuf import json_format

    (tmp_path / "9.proto").write_text(NODE_PROTO)
    store = SchemaStore()
    load_source(str(tmp_path), store)
    decoder = PayloadDecoder(store)
    node_class = decoder.function_for(9)
    assert node_class is not None

    def runtime(body: bytes) -> object:  # the protobuf runtime itself, on the same bytes
        from google.protobuf import descriptor_pb2, descriptor_pool, message_factory

        file = descriptor_pb2.FileDescriptorProto(name="n.proto", package="t", syntax="proto3")
        message = file.message_type.add(name="Node")
        message.field.add(name="next", number=1, type=11, label=1, type_name=".t.Node")
        message.field.add(name="v", number=2, type=5, label=3)
        pool = descriptor_pool.DescriptorPool()
        pool.Add(file)
        cls = message_factory.GetMessageClass(pool.FindMessageTypeByName("t.Node"))
        return json_format.MessageToDict(cls.FromString(body), preserving_proto_field_name=True)

    for body in (_pb_nested(bounds.MAX_DEPTH + 1), _pb_packed(bounds.MAX_VALUES - 1)):
        d = decoder.decode(wire.frame(9, body, [0]))
        assert d.note is None and d.value == runtime(body)
    past = {
        "deep": _pb_nested(bounds.MAX_DEPTH + 2),  # past the runtime's own limit: 100 nested messages
        "very deep": _pb_nested(100_000),
        "many": _pb_packed(bounds.MAX_VALUES + 1),  # longer than MAX_VALUES bytes: scanned first
    }
    notes = {name: decoder.decode(wire.frame(9, body, [0])).note for name, body in past.items()}
    assert notes == {
        "deep": f"schema id 9 (PROTOBUF): {TOO_DEEP}",
        "very deep": f"schema id 9 (PROTOBUF): {TOO_DEEP}",
        "many": f"schema id 9 (PROTOBUF): {TOO_MANY}",
    }


def test_a_schema_nested_too_deep_is_a_note() -> None:
    """The schema comes from disk too: one nested past what json and fastavro parse is an unusable schema (was a
    RecursionError out of the decoder); one that parses but nests past the bound decodes shallow payloads."""
    store = SchemaStore()
    deep = mid = '"null"'
    for _ in range(5000):
        deep = '{"type": "array", "items": ' + deep + "}"
    for _ in range(300):
        mid = '{"type": "array", "items": ' + mid + "}"
    store.add(Schema(1, "AVRO", deep, origin="deep.avsc"))
    store.add(Schema(2, "AVRO", mid, origin="mid.avsc"))
    decoder = PayloadDecoder(store)
    assert (
        decoder.decode(wire.frame(1, b"\x00")).note
        == "schema id 1 (AVRO, deep.avsc): the schema is nested too deep"
    )
    assert decoder.decode(wire.frame(2, b"\x02" * 100 + b"\x00" * 101)).has_value  # 101 levels
    assert (
        decoder.decode(wire.frame(2, b"\x02" * 101 + b"\x00" * 102)).note == f"schema id 2 (AVRO): {TOO_DEEP}"
    )


def test_sigint_stops_a_run_of_payloads_at_the_bound(tmp_path: Path) -> None:
    """Ctrl-C (SIGINT to the process group) ends the run within a payload's bounded time: exit 130 and one
    line.  Before: fastavro appending 2^62 nulls did not return to Python, and the run went on past 60 s."""
    import signal
    import time

    _store(tmp_path)
    log = write_segment(tmp_path / "many-0", [(b"k", wire.frame(5, AT_THE_BOUND))] * 12)
    process = subprocess.Popen(
        [sys.executable, "-m", "kdump", "files", "--files", str(log), "--decode-values", "schema-registry"],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        start_new_session=True,
        preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL),  # noqa: PLW1509 -- as a shell's child
    )
    time.sleep(2)
    assert process.poll() is None  # still decoding (12 payloads of 500,000 values take longer)
    sent = time.monotonic()
    os.killpg(process.pid, signal.SIGINT)
    _, err = process.communicate(timeout=60)
    assert time.monotonic() - sent < 5
    assert (process.returncode, err) == (130, b"kdump: interrupted\n")
