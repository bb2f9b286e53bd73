"""Tests of tests/builder.py, the record encoders.

Every expectation comes from outside kdump's encoder: the spec's test vectors, kafka-python's independent
implementation (its builders and decoders), bytes Kafka itself wrote (the reference corpus), or fields read
back by hand with ``struct``.
"""

from __future__ import annotations

import gzip
import struct
import zlib
from collections import Counter
from dataclasses import dataclass, field
from functools import cache
from pathlib import Path

import crc32c
import pytest
from kafka.record.default_records import DefaultRecordBatch as KpyDefaultBatch
from kafka.record.default_records import DefaultRecordBatchBuilder as KpyDefaultBuilder
from kafka.record.legacy_records import LegacyRecordBatch as KpyLegacyBatch
from kafka.record.legacy_records import LegacyRecordBatchBuilder as KpyLegacyBuilder
from kafka.record.memory_records import MemoryRecords

from kdump.storage import compression
from kdump.storage.compression import GZIP, LZ4, NONE, SNAPPY, ZSTD
from kdump.storage.control_record import (
    SNAPSHOT_FOOTER_RECORD,
    SNAPSHOT_HEADER_RECORD,
    ControlRecordType,
)
from kdump.storage.file_records import FileRecords
from kdump.storage.legacy_record import LegacyRecordBatch
from kdump.storage.message_writer import write_message
from kdump.storage.record_batch import DefaultRecordBatch
from tests.builder import (
    SimpleRecord,
    build_control_batch,
    build_end_txn_marker_batch,
    build_legacy_message,
    build_legacy_message_set,
    build_segment,
    build_v2_batch,
    encode_legacy_entries,
    encode_v2_records,
)
from tests.corpus import CORPUS
from tests.spec_vectors import CONTROL_VECTOR, V0_VECTOR, V1_VECTOR, V2_VECTOR
from tests.xxhash_oracle import install_xxhash_shim, xxh32_reference

CORPUS_DIRS = ("data", "data-kafka39-zk", "synthetic-legacy")

TS = 1_700_000_000_000
V2_CODECS = (NONE, GZIP, SNAPPY, LZ4, ZSTD)
LEGACY_CODECS = (NONE, GZIP, SNAPPY, LZ4)

# -- kafka-python needs the `xxhash` package for magic-0 LZ4 (Kafka's pre-0.10 header checksum); when it is not
# installed, give it this small, independent XXH32 (checked below against lz4.frame's own header checksum).

install_xxhash_shim()


def test_xxh32_reference() -> None:
    import lz4.frame

    assert xxh32_reference(b"") == 0x02CC5D05
    assert xxh32_reference(b"abc") == 0x32D153FF
    assert xxh32_reference(bytes(range(100))) == xxh32_reference(bytes(range(100)))
    # lz4.frame's header checksum byte for a 64 KiB, independent-block frame is (xxh32(FLG BD) >> 8) & 0xFF
    frame = lz4.frame.compress(
        b"", block_size=lz4.frame.BLOCKSIZE_MAX64KB, content_checksum=False, block_linked=False
    )
    assert frame[6] == (xxh32_reference(frame[4:6]) >> 8) & 0xFF


# -- spec §3.2 / §3.3 test vectors ---------------------------------------------------------------------------


def test_checksum_check_values() -> None:
    # spec §3.3: the two CRCs the formats use, on their standard check string
    assert crc32c.crc32c(b"123456789") == 0xE3069283
    assert zlib.crc32(b"123456789") == 0xCBF43926


def test_v2_spec_vector() -> None:
    batch = build_v2_batch([SimpleRecord(b"v", b"k", (("h1", b"x"),), TS)])
    assert batch == V2_VECTOR
    assert len(batch) == 75
    assert struct.unpack_from(">I", batch, 17)[0] == 3524596019


def test_v2_spec_vector_bytes_header_key() -> None:
    assert build_v2_batch([SimpleRecord(b"v", b"k", ((b"h1", b"x"),), TS)]) == V2_VECTOR


def test_control_spec_vector() -> None:
    batch = build_end_txn_marker_batch(
        ControlRecordType.COMMIT,
        coordinator_epoch=5,
        producer_id=4000,
        producer_epoch=3,
        base_offset=10,
        timestamp=TS,
        partition_leader_epoch=7,
    )
    assert batch == CONTROL_VECTOR
    assert len(batch) == 78


@pytest.mark.parametrize(("magic", "vector", "crc"), [(1, V1_VECTOR, 958827571), (0, V0_VECTOR, 535615242)])
def test_legacy_spec_vectors(magic: int, vector: bytes, crc: int) -> None:
    record = SimpleRecord(b"v", b"k", timestamp=TS)
    assert build_legacy_message(record, magic=magic, offset=0) == vector
    assert build_legacy_message_set([record], magic=magic) == vector
    assert struct.unpack_from(">I", vector, 12)[0] == crc


def test_spec_vectors_decode_in_kafka_python() -> None:
    batch = KpyDefaultBatch(V2_VECTOR)
    assert batch.validate_crc()
    (rec,) = list(batch)
    assert (rec.offset, rec.timestamp, rec.key, rec.value, rec.headers) == (0, TS, b"k", b"v", [("h1", b"x")])
    control = KpyDefaultBatch(CONTROL_VECTOR)
    assert control.validate_crc() and control.is_control_batch and control.is_transactional
    (marker,) = list(control)
    assert marker.commit and marker.offset == 10
    for magic, vector in ((1, V1_VECTOR), (0, V0_VECTOR)):
        legacy = KpyLegacyBatch(vector, magic)
        assert legacy.validate_crc()
        (rec,) = list(legacy)
        assert (rec.key, rec.value, rec.timestamp) == (b"k", b"v", TS if magic else None)


# -- field layout read back by hand ---------------------------------------------------------------------------

_V2 = struct.Struct(">qiiBIhiqqqhii")


def _v2_header(batch: bytes) -> dict[str, int]:
    names = (
        "base_offset batch_length ple magic crc attributes last_offset_delta base_timestamp max_timestamp "
        "producer_id producer_epoch base_sequence count"
    ).split()
    return dict(zip(names, _V2.unpack_from(batch), strict=True))


def test_v2_header_fields() -> None:
    records = [
        SimpleRecord(b"a", timestamp=TS + 5, offset=100),
        SimpleRecord(b"b", timestamp=TS + 9, offset=103),
        SimpleRecord(b"c", timestamp=TS + 1, offset=107),
    ]
    batch = build_v2_batch(
        records,
        base_offset=100,
        producer_id=77,
        producer_epoch=4,
        base_sequence=12,
        partition_leader_epoch=9,
        is_transactional=True,
    )
    h = _v2_header(batch)
    assert h == {
        "base_offset": 100,
        "batch_length": len(batch) - 12,
        "ple": 9,
        "magic": 2,
        "crc": crc32c.crc32c(batch[21:]),
        "attributes": 0x10,
        "last_offset_delta": 7,
        "base_timestamp": TS + 5,
        "max_timestamp": TS + 9,
        "producer_id": 77,
        "producer_epoch": 4,
        "base_sequence": 12,
        "count": 3,
    }


def test_v2_log_append_time_and_delete_horizon() -> None:
    records = [SimpleRecord(b"a", timestamp=TS + 5), SimpleRecord(b"b", timestamp=TS + 2)]
    lat = _v2_header(build_v2_batch(records, log_append_time=TS + 1000))
    assert (lat["attributes"], lat["base_timestamp"], lat["max_timestamp"]) == (0x08, TS + 5, TS + 1000)
    dh = build_v2_batch(records, delete_horizon_ms=TS + 86_400_000)
    h = _v2_header(dh)
    assert (h["attributes"], h["base_timestamp"], h["max_timestamp"]) == (0x40, TS + 86_400_000, TS + 5)
    # record timestamps are still right: deltas are relative to the horizon (kafka-python ignores bit 6)
    assert [r.timestamp for r in KpyDefaultBatch(dh)] == [TS + 5, TS + 2]


def test_v2_empty_batch_and_overrides() -> None:
    empty = build_v2_batch([], base_offset=40, last_offset_delta=3, max_timestamp=TS, producer_id=5)
    h = _v2_header(empty)
    assert len(empty) == 61
    assert (h["count"], h["last_offset_delta"], h["base_timestamp"], h["max_timestamp"]) == (0, 3, -1, TS)
    assert KpyDefaultBatch(empty).validate_crc()
    corrupt = build_v2_batch([SimpleRecord(b"x")], records_count=-2, crc=0x1234)
    h = _v2_header(corrupt)
    assert (h["count"], h["crc"]) == (-2, 0x1234)


def test_v2_offsets_must_increase() -> None:
    with pytest.raises(ValueError, match="Illegal offset"):
        build_v2_batch([SimpleRecord(b"a", offset=5), SimpleRecord(b"b", offset=5)], base_offset=5)
    with pytest.raises(ValueError, match="Illegal offset"):
        build_v2_batch([SimpleRecord(b"a", offset=4)], base_offset=5)
    with pytest.raises(ValueError, match="int32"):
        build_v2_batch([SimpleRecord(b"a"), SimpleRecord(b"b", offset=2**31)])


def test_v2_payload_written_as_given() -> None:
    import kafka.codec as kc

    records = [SimpleRecord(b"value-%d" % i, timestamp=TS + i) for i in range(10)]
    plain = encode_v2_records(records, base_offset=0, base_timestamp=TS)
    packed = kc.zstd_encode(plain)  # another compressor's output, as a broker might have stored it
    batch = build_v2_batch(records, compression=ZSTD, payload=packed)
    assert batch[61:] == packed
    assert struct.unpack_from(">i", batch, 8)[0] == 49 + len(packed)
    kpy = KpyDefaultBatch(batch)
    assert kpy.validate_crc()
    assert [r.value for r in kpy] == [r.value for r in records]


@pytest.mark.parametrize("codec", [GZIP, SNAPPY, LZ4, ZSTD])
def test_v2_compressed_region_is_compressed_records(codec: int) -> None:
    records = [SimpleRecord(b"value-%d" % i * 20, b"key-%d" % i, timestamp=TS + i) for i in range(50)]
    plain = build_v2_batch(records, base_offset=7)
    packed = build_v2_batch(records, base_offset=7, compression=codec)
    assert _v2_header(packed)["attributes"] == codec
    assert packed[21 + 2 : 61] == plain[21 + 2 : 61]  # same header apart from attributes
    assert _independent_decompress(codec, packed[61:]) == plain[61:]


def _independent_decompress(codec: int, data: bytes) -> bytes:
    """Decompress with kafka-python's codec functions (python-snappy, lz4.frame, zstandard, gzip)."""
    import kafka.codec as kc

    if codec == GZIP:
        return gzip.decompress(data)
    if codec == SNAPPY:
        return kc.snappy_decode(data)
    if codec == LZ4:
        return kc.lz4_decode(data)
    if codec == ZSTD:
        return kc.zstd_decode(data)
    raise AssertionError(codec)


def test_v2_varint_boundaries() -> None:
    # lengths and deltas that need 1, 2, 3 byte varints; a negative timestamp delta; a 10-byte varlong
    records = [
        SimpleRecord(b"x" * 63, b"k" * 64, timestamp=TS),
        SimpleRecord(b"y" * 8191, None, timestamp=TS - 1, offset=63),
        SimpleRecord(None, b"z" * 8192, timestamp=TS + 2**20, offset=64 + 8192),
        SimpleRecord(b"", b"", timestamp=-(2**62)),
    ]
    batch = build_v2_batch(records)
    got = [(r.offset, r.timestamp, r.key, r.value) for r in KpyDefaultBatch(batch)]
    assert got == [
        (0, TS, b"k" * 64, b"x" * 63),
        (63, TS - 1, None, b"y" * 8191),
        (8256, TS + 2**20, b"z" * 8192, None),
        (8257, -(2**62), b"", b""),
    ]


# -- kafka-python's builders produce the same bytes ---------------------------------------------------------

SAMPLE_RECORDS = [
    SimpleRecord(b"hello", b"k1", (("h1", b"v1"), ("h2", None)), TS),
    SimpleRecord(None, None, (), TS + 3),
    SimpleRecord(b"", b"", (("", b""),), TS - 2),
    SimpleRecord(bytes(range(256)) * 3, b"\x00\xff", (("ü-key", bytes(200)),), TS + 10**6),
    SimpleRecord(b"last", b"k5", (), 0),
]


def _kpy_v2(records, *, producer=(-1, -1, -1), transactional=False, codec=NONE) -> bytes:
    builder = KpyDefaultBuilder(2, codec, transactional, *producer, batch_size=1 << 30)
    for i, r in enumerate(records):
        headers = [(k if isinstance(k, str) else k.decode(), v) for k, v in r.headers]
        assert builder.append(i if r.offset is None else r.offset, r.timestamp, r.key, r.value, headers)
    return bytes(builder.build())


@pytest.mark.parametrize("n", [1, 2, 5])
def test_v2_bytes_equal_kafka_python_builder(n: int) -> None:
    records = SAMPLE_RECORDS[:n]
    assert build_v2_batch(records) == _kpy_v2(records)


def test_v2_idempotent_transactional_bytes_equal_kafka_python_builder() -> None:
    records = SAMPLE_RECORDS
    ours = build_v2_batch(
        records, producer_id=123456789, producer_epoch=7, base_sequence=2**31 - 3, is_transactional=True
    )
    assert ours == _kpy_v2(records, producer=(123456789, 7, 2**31 - 3), transactional=True)
    assert KpyDefaultBatch(ours).last_sequence == 1  # wrapped past Integer.MAX_VALUE


def test_v2_offset_gaps_bytes_equal_kafka_python_builder() -> None:
    records = [SimpleRecord(b"v%d" % o, timestamp=TS + o, offset=o) for o in (0, 3, 4, 90, 1000)]
    assert build_v2_batch(records) == _kpy_v2(records)


@pytest.mark.parametrize("codec", [GZIP, SNAPPY, LZ4, ZSTD])
def test_v2_compressed_same_content_as_kafka_python(codec: int) -> None:
    records = SAMPLE_RECORDS * 20
    ours = KpyDefaultBatch(build_v2_batch(records, compression=codec))
    theirs = KpyDefaultBatch(_kpy_v2(records, codec=codec))
    assert ours.validate_crc() and theirs.validate_crc()
    assert ours.compression_type == theirs.compression_type == codec
    assert _kpy_records(ours) == _kpy_records(theirs)


def _kpy_records(batch) -> list[tuple]:
    return [(r.offset, r.timestamp, r.timestamp_type, r.key, r.value, list(r.headers)) for r in batch]


def _kpy_legacy(records, *, magic: int, codec: int = NONE, base_offset: int = 0) -> bytes:
    builder = KpyLegacyBuilder(magic, codec, batch_size=1 << 30)
    for i, r in enumerate(records):
        assert builder.append(base_offset + i, r.timestamp, r.key, r.value)
    return bytes(builder.build())


LEGACY_SAMPLE = [
    SimpleRecord(b"hello", b"k1", timestamp=TS),
    SimpleRecord(None, None, timestamp=TS + 3),
    SimpleRecord(b"", b"", timestamp=-1),
    SimpleRecord(bytes(range(256)) * 3, b"\x00\xff", timestamp=TS + 10**6),
]


@pytest.mark.parametrize("magic", [0, 1])
@pytest.mark.parametrize("base_offset", [0, 1234567])
def test_legacy_bytes_equal_kafka_python_builder(magic: int, base_offset: int) -> None:
    ours = build_legacy_message_set(LEGACY_SAMPLE, magic=magic, base_offset=base_offset)
    assert ours == _kpy_legacy(LEGACY_SAMPLE, magic=magic, base_offset=base_offset)


@pytest.mark.parametrize("magic", [0, 1])
@pytest.mark.parametrize("codec", [GZIP, SNAPPY, LZ4])
def test_legacy_compressed_same_content_as_kafka_python(magic: int, codec: int) -> None:
    records = LEGACY_SAMPLE * 10
    ours = _kpy_legacy_records(build_legacy_message_set(records, magic=magic, compression=codec))
    theirs = _kpy_legacy_records(_kpy_legacy(records, magic=magic, codec=codec))
    assert ours == theirs
    assert len(ours) == 40


def _kpy_legacy_records(data: bytes) -> list[tuple]:
    out = []
    for batch in MemoryRecords(data):
        assert batch.validate_crc()
        for r in batch:
            assert r.validate_crc()
            out.append((r.offset, r.timestamp, r.key, r.value))
    return out


# -- legacy wrapper layout, read back by hand -----------------------------------------------------------------


def _entries(data: bytes) -> list[tuple[int, int, int, int, bytes]]:
    """(offset, crc, magic, attributes, message) of each log entry in ``data``, parsed with struct."""
    out, pos = [], 0
    while pos < len(data):
        offset, size = struct.unpack_from(">qi", data, pos)
        message = data[pos + 12 : pos + 12 + size]
        crc, magic, attributes = struct.unpack_from(">IBB", message)
        assert crc == zlib.crc32(message[4:])
        out.append((offset, crc, magic, attributes, message))
        pos += 12 + size
    return out


def test_v1_compressed_wrapper_layout() -> None:
    records = [
        SimpleRecord(b"a", timestamp=TS + 7, offset=500),
        SimpleRecord(b"b", timestamp=TS + 9, offset=502),
        SimpleRecord(b"c", timestamp=TS + 8, offset=505),
    ]
    data = build_legacy_message_set(records, magic=1, base_offset=500, compression=GZIP)
    ((offset, _, magic, attributes, message),) = _entries(data)
    assert (offset, magic, attributes) == (505, 1, GZIP)  # wrapper at the last absolute offset
    timestamp, key_len, value_len = struct.unpack_from(">qii", message, 6)
    assert (timestamp, key_len) == (TS + 9, -1)  # max timestamp, null key
    inner = _entries(gzip.decompress(message[22 : 22 + value_len]))
    assert [e[0] for e in inner] == [0, 2, 5]  # relative to the base offset
    assert [struct.unpack_from(">q", e[4], 6)[0] for e in inner] == [TS + 7, TS + 9, TS + 8]
    assert [e[3] for e in inner] == [0, 0, 0]
    # kafka-python (and kdump) put the records back at their absolute offsets
    assert [r[0] for r in _kpy_legacy_records(data)] == [500, 502, 505]


def test_v1_log_append_time_wrapper() -> None:
    records = [SimpleRecord(b"a", timestamp=TS + 7), SimpleRecord(b"b", timestamp=TS + 9)]
    data = build_legacy_message_set(records, magic=1, base_offset=3, compression=LZ4, log_append_time=TS + 99)
    ((offset, _, _, attributes, message),) = _entries(data)
    assert (offset, attributes, struct.unpack_from(">q", message, 6)[0]) == (4, LZ4 | 0x08, TS + 99)
    assert [(r[0], r[1]) for r in _kpy_legacy_records(data)] == [(3, TS + 99), (4, TS + 99)]
    plain = build_legacy_message_set(records, magic=1, log_append_time=TS + 99)
    assert [(e[3], struct.unpack_from(">q", e[4], 6)[0]) for e in _entries(plain)] == [(8, TS + 99)] * 2


def test_v0_compressed_wrapper_layout() -> None:
    records = [SimpleRecord(b"a", b"k"), SimpleRecord(b"b", offset=12)]
    data = build_legacy_message_set(records, magic=0, base_offset=10, compression=SNAPPY)
    ((offset, _, magic, attributes, message),) = _entries(data)
    assert (offset, magic, attributes, len(message)) == (
        12,
        0,
        SNAPPY,
        14 + struct.unpack_from(">i", message, 10)[0],
    )
    import kafka.codec as kc

    inner = _entries(kc.snappy_decode(message[14:]))
    assert [e[0] for e in inner] == [10, 12]  # absolute
    assert _kpy_legacy_records(data) == [(10, None, b"k", b"a"), (12, None, None, b"b")]


def test_legacy_rejects_headers_and_zstd() -> None:
    with pytest.raises(ValueError, match="headers"):
        build_legacy_message(SimpleRecord(b"v", headers=(("h", b"x"),)), magic=1, offset=0)
    with pytest.raises(ValueError):
        build_legacy_message_set([SimpleRecord(b"v")], magic=1, compression=ZSTD)
    with pytest.raises(ValueError):
        build_legacy_message_set([SimpleRecord(b"v")], magic=2)


def test_legacy_overrides() -> None:
    entry = build_legacy_message(SimpleRecord(b"v"), magic=1, offset=3, attributes=0x7F, crc=1)
    assert struct.unpack_from(">qiIBB", entry) == (3, 22 + 1, 1, 1, 0x7F)


# -- control batches -----------------------------------------------------------------------------------------


@pytest.mark.parametrize("control_type", [ControlRecordType.ABORT, ControlRecordType.COMMIT])
def test_end_txn_marker_decodes_in_kafka_python(control_type: ControlRecordType) -> None:
    data = build_end_txn_marker_batch(
        control_type, coordinator_epoch=9, producer_id=42, producer_epoch=1, base_offset=77, timestamp=TS
    )
    batch = KpyDefaultBatch(data)
    assert batch.validate_crc()
    assert (batch.is_control_batch, batch.is_transactional, batch.producer_id, batch.producer_epoch) == (
        True,
        True,
        42,
        1,
    )
    assert batch.base_sequence == -1
    (record,) = list(batch)
    assert (record.type, record.version, record.offset, record.timestamp) == (control_type.value, 0, 77, TS)
    assert record.value == struct.pack(">hi", 0, 9)


def test_end_txn_marker_rejects_other_types() -> None:
    with pytest.raises(ValueError):
        build_end_txn_marker_batch(
            ControlRecordType.SNAPSHOT_HEADER,
            coordinator_epoch=0,
            producer_id=1,
            producer_epoch=0,
            base_offset=0,
            timestamp=0,
        )


def test_kraft_control_batch_layout() -> None:
    value = write_message(SNAPSHOT_HEADER_RECORD, {"Version": 0, "LastContainedLogTimestamp": TS}, 0)
    assert value == b"\x00\x00" + struct.pack(">q", TS) + b"\x00"  # int16, int64, no tagged fields
    data = build_control_batch(ControlRecordType.SNAPSHOT_HEADER, value, base_offset=0, timestamp=TS)
    h = _v2_header(data)
    assert (h["attributes"], h["producer_id"], h["producer_epoch"], h["base_sequence"]) == (0x20, -1, -1, -1)
    (record,) = list(KpyDefaultBatch(data))
    assert (record.type, record.key, record.value) == (3, b"\x00\x00\x00\x03", value)


@pytest.fixture(scope="module")
def corpus() -> Path:
    if not (CORPUS / "data").is_dir():
        pytest.skip(f"reference corpus not found at {CORPUS}")
    return CORPUS


def test_kraft_control_batches_equal_kafka_written(corpus: Path) -> None:
    data = (corpus / "data" / "bootstrap.checkpoint").read_bytes()
    batches = list(FileRecords.from_bytes(data).batches())
    header, footer = batches[0], batches[-1]
    (hrec,) = list(header.records())
    ts = header.max_timestamp
    header_value = write_message(SNAPSHOT_HEADER_RECORD, {"Version": 0, "LastContainedLogTimestamp": 0}, 0)
    assert hrec.value == header_value
    rebuilt = build_control_batch(
        ControlRecordType.SNAPSHOT_HEADER, header_value, base_offset=0, timestamp=ts
    )
    assert rebuilt == data[: header.size_in_bytes]
    footer_value = write_message(SNAPSHOT_FOOTER_RECORD, {"Version": 0}, 0)
    rebuilt = build_control_batch(
        ControlRecordType.SNAPSHOT_FOOTER,
        footer_value,
        base_offset=footer.base_offset,
        timestamp=footer.max_timestamp,
    )
    assert rebuilt == data[footer.position :]
    # a snapshot's first batch: SnapshotHeader + KRaftVersion + Voters records in one control batch
    snap = (
        corpus / "data" / "__cluster_metadata-0" / "00000000000000000090-0000000002.checkpoint"
    ).read_bytes()
    first = next(FileRecords.from_bytes(snap).batches())
    recs = list(first.records())
    rebuilt = build_control_batch(
        ControlRecordType.SNAPSHOT_HEADER,
        recs[0].value,
        base_offset=0,
        timestamp=first.max_timestamp,
        partition_leader_epoch=first.partition_leader_epoch,
        extra_records=[(ControlRecordType(struct.unpack(">h", r.key[2:])[0]), r.value) for r in recs[1:]],
    )
    assert rebuilt == snap[: first.size_in_bytes]


# -- the corpus: rebuild every batch Kafka wrote from its decoded fields -------------------------------------


@dataclass
class RebuildStats:
    batches: Counter = field(default_factory=Counter)  # (format, codec) -> count
    identical: Counter = field(default_factory=Counter)  # byte-identical rebuilds
    plain_identical: Counter = field(default_factory=Counter)  # compressed: decompressed records identical
    verbatim_identical: Counter = field(default_factory=Counter)  # legacy wrappers with their original value
    last_offset_overrides: int = 0  # v2 batches whose lastOffsetDelta is not the last record's


def _corpus_files() -> list[Path]:
    if not CORPUS.is_dir():
        return [pytest.param(None, marks=pytest.mark.skip(reason=f"reference corpus not found at {CORPUS}"))]
    return sorted(
        p
        for d in CORPUS_DIRS
        if (CORPUS / d).is_dir()
        for p in (CORPUS / d).rglob("*")
        if p.suffix in (".log", ".checkpoint") and p.is_file()
    )


def _simple(records, timestamps=None) -> list[SimpleRecord]:
    return [
        SimpleRecord(
            r.value,
            r.key,
            tuple((h.key, h.value) for h in r.headers),
            r.timestamp if timestamps is None else timestamps[i],
            r.offset,
        )
        for i, r in enumerate(records)
    ]


def _rebuild_v2(orig: bytes, batch: DefaultRecordBatch, stats: RebuildStats) -> None:
    codec = batch.compression_type_id
    kind = ("v2", compression.CODEC_NAMES[codec])
    stats.batches[kind] += 1
    records = list(batch.records())
    lat = batch.timestamp_type == "LogAppendTime"
    timestamps = None
    if lat:
        # a LogAppendTime batch reports maxTimestamp for every record; the stored deltas are the records' own
        # create times, which kafka-python's reader gives when the timestamp-type bit is cleared
        raw = bytearray(orig)
        raw[22] &= ~0x08
        timestamps = [r.timestamp for r in KpyDefaultBatch(bytes(raw))]
    simple = _simple(records, timestamps)
    keeps_last = bool(records) and records[-1].offset == batch.last_offset
    if not keeps_last:
        assert not records or batch.last_offset > records[-1].offset
        stats.last_offset_overrides += 1
    rebuilt = build_v2_batch(
        simple,
        base_offset=batch.base_offset,
        compression=codec,
        log_append_time=batch.max_timestamp if lat else None,
        producer_id=batch.producer_id,
        producer_epoch=batch.producer_epoch,
        base_sequence=batch.base_sequence,
        partition_leader_epoch=batch.partition_leader_epoch,
        is_transactional=batch.is_transactional,
        is_control=batch.is_control_batch,
        delete_horizon_ms=batch.delete_horizon_ms,
        # derived from the records, except where compaction removed the last record(s): Kafka then keeps the
        # original last offset (MemoryRecordsBuilder.overrideLastOffset); empty batches keep their maxTimestamp
        last_offset_delta=None if keeps_last else batch.last_offset_delta,
        **({} if records else {"max_timestamp": batch.max_timestamp}),
    )
    if codec == NONE:
        assert rebuilt == orig, f"v2 batch at {batch.position} differs"
        stats.identical[kind] += 1
        return
    if rebuilt == orig:
        stats.identical[kind] += 1
    # header identical apart from batchLength and CRC (compressors differ), records identical once decoded
    assert rebuilt[:8] == orig[:8] and rebuilt[12:17] == orig[12:17] and rebuilt[21:61] == orig[21:61]
    got = [
        (r.offset, r.timestamp, r.key, r.value, r.headers)
        for r in next(FileRecords.from_bytes(rebuilt).batches()).records()
    ]
    assert got == [(r.offset, r.timestamp, r.key, r.value, r.headers) for r in records]
    assert KpyDefaultBatch(rebuilt).validate_crc()
    plain = _independent_decompress(codec, batch.payload())
    assert (
        encode_v2_records(simple, base_offset=batch.base_offset, base_timestamp=batch.base_timestamp) == plain
    )
    stats.plain_identical[kind] += 1


def _rebuild_legacy(orig: bytes, batch: LegacyRecordBatch, stats: RebuildStats) -> None:
    codec = batch.compression_type_id
    kind = (f"v{batch.magic}", compression.CODEC_NAMES[codec])
    stats.batches[kind] += 1
    lat = batch.timestamp_type == "LogAppendTime"
    lat_ts = batch.timestamp if lat else None
    if codec == NONE:
        record = SimpleRecord(batch.value, batch.key, timestamp=batch.timestamp)
        assert (
            build_legacy_message(record, magic=batch.magic, offset=batch.offset, log_append_time=lat_ts)
            == orig
        )
        assert (
            build_legacy_message_set(
                [record], magic=batch.magic, base_offset=batch.offset, log_append_time=lat_ts
            )
            == orig
        )
        stats.identical[kind] += 1
        return
    # the wrapper itself, with its stored (compressed) value: byte-identical
    wrapper = SimpleRecord(batch.value, batch.key, timestamp=batch.timestamp)
    assert (
        build_legacy_message(
            wrapper, magic=batch.magic, offset=batch.offset, compression=codec, log_append_time=lat_ts
        )
        == orig
    )
    stats.verbatim_identical[kind] += 1
    # the whole set from the decoded records
    records = list(batch.records())
    plain = compression.decompress(codec, batch.value, magic=batch.magic)
    inner = [(e[0], e[4]) for e in _entries(plain)]  # (stored offset, message) parsed by hand
    inner_ts = [struct.unpack_from(">q", m, 6)[0] if batch.magic else -1 for _, m in inner]
    base = records[0].offset - inner[0][0] if batch.magic == 1 else records[0].offset
    simple = [
        SimpleRecord(r.value, r.key, timestamp=t, offset=r.offset)
        for r, t in zip(records, inner_ts, strict=True)
    ]
    entries = encode_legacy_entries(
        simple, magic=batch.magic, base_offset=base, log_append_time=lat_ts, relative_offsets=batch.magic == 1
    )
    assert entries == plain
    stats.plain_identical[kind] += 1
    rebuilt = build_legacy_message_set(
        simple, magic=batch.magic, base_offset=base, compression=codec, log_append_time=lat_ts
    )
    if rebuilt == orig:
        stats.identical[kind] += 1
    (new,) = list(FileRecords.from_bytes(rebuilt).batches())
    assert (new.offset, new.magic, new.attributes, new.timestamp, new.key) == (
        batch.offset,
        batch.magic,
        batch.attributes,
        batch.timestamp,
        batch.key,
    )
    assert [(r.offset, r.timestamp, r.key, r.value) for r in new.records()] == [
        (r.offset, r.timestamp, r.key, r.value) for r in records
    ]
    assert _kpy_legacy_records(rebuilt) == _kpy_legacy_records(orig)


@cache
def _rebuild_file(path: Path) -> RebuildStats:
    stats = RebuildStats()
    data = path.read_bytes()
    for batch in FileRecords.from_bytes(data, str(path)).batches():
        orig = data[batch.position : batch.position + batch.size_in_bytes]
        if isinstance(batch, DefaultRecordBatch):
            _rebuild_v2(orig, batch, stats)
        else:
            _rebuild_legacy(orig, batch, stats)
    return stats


@pytest.mark.corpus
@pytest.mark.parametrize("path", _corpus_files(), ids=lambda p: str(p.relative_to(CORPUS)) if p else "absent")
def test_corpus_rebuild(path: Path) -> None:
    stats = _rebuild_file(path)
    assert sum(stats.batches.values()) > 0


@pytest.mark.corpus
def test_corpus_rebuild_summary(corpus: Path, capsys: pytest.CaptureFixture[str]) -> None:
    total = RebuildStats()
    files = _corpus_files()
    assert all(isinstance(p, Path) for p in files)
    for path in files:
        stats = _rebuild_file(path)
        for name in ("batches", "identical", "plain_identical", "verbatim_identical"):
            getattr(total, name).update(getattr(stats, name))
        total.last_offset_overrides += stats.last_offset_overrides
    uncompressed = sum(n for (fmt, codec), n in total.batches.items() if codec == "none")
    assert uncompressed > 1500 and total.batches[("v0", "none")] and total.batches[("v1", "none")]
    assert sum(total.identical[k] for k in total.batches if k[1] == "none") == uncompressed
    compressed = {k: n for k, n in total.batches.items() if k[1] != "none"}
    assert all(total.plain_identical[k] == n for k, n in compressed.items())
    with capsys.disabled():
        print(
            f"\ncorpus rebuild: {len(files)} files, {sum(total.batches.values())} batches "
            f"({total.last_offset_overrides} with a lastOffsetDelta kept from before compaction)"
        )
        for k in sorted(total.batches):
            print(
                f"  {k[0]:>2} {k[1]:<6} batches {total.batches[k]:5d}  byte-identical {total.identical[k]:5d}"
                + (f"  decompressed-identical {total.plain_identical[k]:3d}" if k[1] != "none" else "")
                + (
                    f"  wrapper-verbatim-identical {total.verbatim_identical[k]:3d}"
                    if k in total.verbatim_identical
                    else ""
                )
            )


def test_build_segment_concatenates_and_decodes() -> None:
    parts = [
        build_legacy_message_set(LEGACY_SAMPLE[:2], magic=0, base_offset=0),
        build_legacy_message_set(LEGACY_SAMPLE[:2], magic=1, base_offset=2, compression=GZIP),
        build_v2_batch(SAMPLE_RECORDS, base_offset=4, compression=ZSTD),
        build_end_txn_marker_batch(
            ControlRecordType.ABORT,
            coordinator_epoch=0,
            producer_id=1,
            producer_epoch=0,
            base_offset=9,
            timestamp=TS,
        ),
    ]
    segment = build_segment(parts)
    assert segment == b"".join(parts)
    kpy = [(type(b).__name__, b.validate_crc()) for b in MemoryRecords(segment)]
    assert kpy == [("LegacyRecordBatch", True)] * 3 + [("DefaultRecordBatch", True)] * 2
    offsets = [r.offset for b in FileRecords.from_bytes(segment).batches() for r in b.records()]
    assert offsets == list(range(10))
