"""Decoding of batches, records and framing, checked against the spec's test vectors (which were cross-checked
with kafka-python) and against kafka-python itself as an independent decoder."""

from __future__ import annotations

import struct

import pytest
from kafka.record.default_records import DefaultRecordBatch as KpDefaultRecordBatch
from kafka.record.legacy_records import LegacyRecordBatch as KpLegacyRecordBatch
from kafka.record.util import decode_varint as kp_decode_varint

from kdump.errors import CorruptRecordError, InvalidRecordError
from kdump.render.kafka_text import batch_line_head, batch_line_tail, control_description, record_metadata
from kdump.storage.file_records import FileRecords
from kdump.storage.record_batch import decrement_sequence, increment_sequence
from kdump.storage.varint import encode_varint, encode_varlong, read_varint, read_varlong
from tests.spec_vectors import CONTROL_VECTOR, V0_VECTOR, V1_VECTOR, V2_VECTOR

# Spec §3.3: the batch line Kafka prints for V2_VECTOR.
V2_LINE = (
    "baseOffset: 0 lastOffset: 0 count: 1 baseSequence: -1 lastSequence: -1 producerId: -1 producerEpoch: -1 "
    "partitionLeaderEpoch: 0 isTransactional: false isControl: false deleteHorizonMs: OptionalLong.empty "
    "position: 0 CreateTime: 1700000000000 size: 75 magic: 2 compresscodec: none crc: 3524596019 isvalid: true\n"
)


def batches(data: bytes) -> list:
    return list(FileRecords.from_bytes(data).batches())


def test_v2_vector_batch_line_and_record() -> None:
    (batch,) = batches(V2_VECTOR)
    assert batch_line_head(batch) + batch_line_tail(batch, 0) == V2_LINE
    (record,) = batch.records()
    assert (record.key, record.value, record.timestamp, record.offset) == (b"k", b"v", 1700000000000, 0)
    assert record_metadata(record, batch) == (
        "| offset: 0 CreateTime: 1700000000000 keySize: 1 valueSize: 1 sequence: -1 headerKeys: [h1]"
    )
    assert [(h.key, h.value) for h in record.headers] == [(b"h1", b"x")]


def test_v2_vector_agrees_with_kafka_python() -> None:
    (batch,) = batches(V2_VECTOR)
    kp = KpDefaultRecordBatch(bytearray(V2_VECTOR))
    assert kp.validate_crc()
    assert (kp.base_offset, kp.producer_id, kp.max_timestamp) == (
        batch.base_offset,
        batch.producer_id,
        batch.max_timestamp,
    )
    ours = [
        (r.offset, r.timestamp, r.key, r.value, [(h.key.decode(), h.value) for h in r.headers])
        for r in batch.records()
    ]
    theirs = [(r.offset, r.timestamp, r.key, r.value, list(r.headers)) for r in kp]
    assert ours == theirs


def test_control_vector() -> None:
    (batch,) = batches(CONTROL_VECTOR)
    assert batch.is_control_batch and batch.is_transactional and batch.is_valid()
    (record,) = batch.records()
    line = record_metadata(record, batch) + control_description(record)
    assert line == (
        "| offset: 10 CreateTime: 1700000000000 keySize: 4 valueSize: 6 sequence: -1 headerKeys: [] "
        "endTxnMarker: COMMIT coordinatorEpoch: 5"
    )
    assert batch.checksum == 3909730912


@pytest.mark.parametrize(("vector", "crc", "magic"), [(V1_VECTOR, 958827571, 1), (V0_VECTOR, 535615242, 0)])
def test_legacy_vectors(vector: bytes, crc: int, magic: int) -> None:
    (batch,) = batches(vector)
    assert (batch.magic, batch.checksum, batch.is_valid()) == (magic, crc, True)
    (record,) = batch.records()
    assert (record.key, record.value, record.crc, record.valid) == (b"k", b"v", crc, True)
    kp = KpLegacyRecordBatch(bytearray(vector), magic)
    (kp_record,) = list(kp)
    assert (kp_record.key, kp_record.value) == (record.key, record.value)
    # kafka-python reports a v0 message's missing timestamp as None; Kafka (and kdump) as -1.
    assert (kp_record.timestamp if magic else -1) == record.timestamp
    if magic == 1:
        assert batch_line_head(batch) + batch_line_tail(batch, 0) == (
            "offset: 0 position: 0 CreateTime: 1700000000000 size: 36 magic: 1 compresscodec: none "
            "crc: 958827571 isvalid: true\n"
        )


def test_crc_flip_is_reported_not_fatal() -> None:
    damaged = bytearray(V2_VECTOR)
    damaged[-1] ^= 0x20
    (batch,) = batches(bytes(damaged))
    assert not batch.is_valid()
    assert [r.value for r in batch.records()] == [b"v"]


# -- framing (FileLogInputStream rules) ----------------------------------------------------------------------


def test_stops_when_17_bytes_or_fewer_remain() -> None:
    for extra in range(0, 18):
        data = V2_VECTOR + bytes(range(extra))
        with FileRecords.from_bytes(data) as fr:
            assert len(list(fr.batches())) == 1
            assert fr.size_in_bytes - fr.valid_bytes() == extra
            assert fr.invalid_bytes(fr.valid_bytes()) == extra == len(data) - len(V2_VECTOR)
        with FileRecords.from_bytes(data, max_bytes=len(V2_VECTOR) + 5) as fr:  # measured to the slice's end
            assert fr.invalid_bytes(fr.valid_bytes()) == min(extra, 5)
            assert fr.invalid_bytes(0, len(V2_VECTOR)) == len(V2_VECTOR)


def test_size_below_14_is_fatal_with_kafkas_message() -> None:
    data = V2_VECTOR + struct.pack(">qi", 1, 13) + bytes(10)
    fr = FileRecords.from_bytes(data, "x/00.log")
    with pytest.raises(CorruptRecordError) as e:
        list(fr.batches())
    assert (
        e.value.message == "Found record size 13 smaller than minimum record overhead (14) in file x/00.log."
    )
    assert e.value.position == len(V2_VECTOR)


def test_torn_tail_ends_iteration() -> None:
    data = V2_VECTOR + V2_VECTOR[:50]
    assert len(batches(data)) == 1


def test_max_bytes_slices() -> None:
    with FileRecords.from_bytes(V2_VECTOR * 3, max_bytes=160) as fr:
        assert [b.position for b in fr.batches()] == [0, 75]


def test_magic_above_2_is_read_as_v2() -> None:
    data = bytearray(V2_VECTOR)
    data[16] = 3
    (batch,) = batches(bytes(data))
    assert batch.magic == 3 and batch.is_valid()  # the magic byte is outside the CRC-32C range


def test_negative_record_count() -> None:
    data = bytearray(V2_VECTOR)
    data[57:61] = struct.pack(">i", -1)
    (batch,) = batches(bytes(data))
    with pytest.raises(InvalidRecordError, match="Found invalid record count -1 in magic v2 batch"):
        list(batch.records())


def test_records_remaining_after_count() -> None:
    data = bytearray(V2_VECTOR)
    data[57:61] = struct.pack(">i", 0)
    (batch,) = batches(bytes(data))
    assert list(batch.records()) == []  # Kafka: a zero count yields nothing, whatever follows


# -- varints and sequences ------------------------------------------------------------------------------------


@pytest.mark.parametrize("value", [0, 1, -1, 63, -64, 64, 300, -300, 2**31 - 1, -(2**31)])
def test_varint_matches_kafka_python(value: int) -> None:
    encoded = encode_varint(value)
    assert kp_decode_varint(bytearray(encoded), 0) == (value, len(encoded))
    assert read_varint(encoded, 0, len(encoded)) == (value, len(encoded))


@pytest.mark.parametrize("value", [0, -1, 2**40, -(2**63), 2**63 - 1])
def test_varlong_round_trip(value: int) -> None:
    encoded = encode_varlong(value)
    assert read_varlong(encoded, 0, len(encoded)) == (value, len(encoded))


def test_overlong_varint_is_rejected() -> None:
    from kdump.storage.varint import VarintError

    with pytest.raises(VarintError):
        read_varint(b"\xff\xff\xff\xff\xff\x01", 0, 6)


def test_sequence_wraps_like_kafka() -> None:
    int_max = 2**31 - 1
    assert increment_sequence(int_max, 1) == 0
    assert increment_sequence(int_max - 2, 5) == 2
    assert increment_sequence(5, 3) == 8
    assert decrement_sequence(0, 1) == int_max
    assert decrement_sequence(2, 5) == int_max - 2


def test_plain_records_is_the_stream_records_decodes_or_none() -> None:
    """``DefaultRecordBatch.plain_records`` (the decompressed stream the whole-batch record lines are made from)
    is the stream kafka-python decompresses for every codec; None (the caller takes ``records()``, which gives
    Kafka's errors) for an uncompressed batch, an unknown codec id, a stream cut short, one past the
    decompression bound and one bigger than ``STREAMED_RECORDS_BYTES`` (read a window at a time instead)."""
    from kdump.storage import compression, record_batch
    from tests.builder import SimpleRecord, build_v2_batch, encode_v2_records

    records = [SimpleRecord(b"value %d" % i, b"k%d" % i, timestamp=1000 + i) for i in range(50)]
    stream = encode_v2_records(records, base_offset=0, base_timestamp=1000)
    for codec in (1, 2, 3, 4):
        data = build_v2_batch(records, compression=codec)
        (batch,) = FileRecords.from_bytes(data).batches()
        assert batch.plain_records() == stream
        assert [r.value for r in KpDefaultRecordBatch(data)] == [r.value for r in records]
        cut = build_v2_batch(records, compression=codec, payload=compression.compress(codec, stream)[:-9])
        (batch,) = FileRecords.from_bytes(cut).batches()
        assert batch.plain_records() is None
        (batch,) = FileRecords.from_bytes(data, decompression_limit=len(stream) - 1).batches()
        assert batch.plain_records() is None
    (plain,) = FileRecords.from_bytes(build_v2_batch(records)).batches()
    assert plain.plain_records() is None
    (unknown,) = FileRecords.from_bytes(build_v2_batch(records, attributes=5)).batches()
    assert unknown.plain_records() is None
    big = [SimpleRecord(bytes(1 << 20)) for _ in range(record_batch.STREAMED_RECORDS_BYTES >> 20)]
    (batch,) = FileRecords.from_bytes(build_v2_batch(big, compression=4)).batches()
    assert batch.plain_records() is None
    assert sum(len(r.value) for r in batch.records()) == record_batch.STREAMED_RECORDS_BYTES
