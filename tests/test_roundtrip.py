"""Property tests: random records × every magic × every codec → build → decode.

Each built batch is decoded twice, by kdump (``FileRecords``) and by kafka-python (an independent
implementation), and both must give back the records and batch fields that the test computes on its own
(offsets from the gaps it drew, sequences with Kafka's wrap after ``Integer.MAX_VALUE``, LogAppendTime
timestamps, ...).  Single-byte corruption in the CRC-covered range must be detected by both.
"""

from __future__ import annotations

import zlib

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from kafka.record.memory_records import MemoryRecords

from kdump.storage.compression import GZIP, LZ4, NONE, SNAPPY, ZSTD
from kdump.storage.control_record import ControlRecordType, control_key
from kdump.storage.file_records import FileRecords
from kdump.storage.record import Header
from tests.builder import (
    SimpleRecord,
    build_legacy_message_set,
    build_segment,
    build_v2_batch,
)
from tests.xxhash_oracle import install_xxhash_shim

install_xxhash_shim()  # kafka-python needs xxhash for magic-0 LZ4

INT_MAX = 2**31 - 1
SETTINGS = settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
COMBOS = [(2, c) for c in (NONE, GZIP, SNAPPY, LZ4, ZSTD)] + [
    (m, c) for m in (1, 0) for c in (NONE, GZIP, SNAPPY, LZ4)
]

# -- strategies ----------------------------------------------------------------------------------------------

payloads = st.one_of(
    st.none(),
    st.just(b""),
    st.binary(max_size=64),
    st.binary(min_size=100, max_size=400),
    st.sampled_from([b"a" * 1000, bytes(range(256)) * 4]),  # compressible
)
header_keys = st.one_of(
    st.text(st.characters(exclude_categories=("Cs",)), max_size=8),
    st.text(st.characters(exclude_categories=("Cs",)), max_size=8).map(str.encode),
)
headers = st.lists(st.tuples(header_keys, payloads), max_size=4).map(tuple)
timestamps = st.one_of(st.just(-1), st.integers(0, 2**45), st.just(1_700_000_000_000))
gaps = st.one_of(st.just(0), st.just(0), st.integers(0, 5), st.integers(0, 2**20))  # extra offsets skipped


@st.composite
def record_lists(draw, *, with_headers: bool, min_size: int = 1, max_size: int = 12):
    """Records with explicit or implicit offsets; returns (records, expected absolute offsets)."""
    base_offset = draw(st.one_of(st.just(0), st.integers(0, 2**40)))
    n = draw(st.integers(min_size, max_size))
    records, offsets = [], []
    next_offset = base_offset
    for i in range(n):
        gap = draw(gaps) if i else 0
        offset = next_offset + gap
        explicit = gap > 0 or draw(st.booleans())
        records.append(
            SimpleRecord(
                value=draw(payloads),
                key=draw(payloads),
                headers=draw(headers) if with_headers else (),
                timestamp=draw(timestamps),
                offset=offset if explicit else None,
            )
        )
        offsets.append(offset)
        next_offset = offset + 1
    return base_offset, records, offsets


sequences = st.one_of(st.just(-1), st.integers(0, 1000), st.integers(INT_MAX - 40, INT_MAX))


def _header_key(k: bytes | str) -> bytes:
    return k.encode() if isinstance(k, str) else k


def _expected_sequence(base_sequence: int, offset_delta: int) -> int:
    return -1 if base_sequence < 0 else (base_sequence + offset_delta) % 2**31


# -- v2 -------------------------------------------------------------------------------------------------------


@pytest.mark.parametrize("codec", [NONE, GZIP, SNAPPY, LZ4, ZSTD])
@SETTINGS
@given(
    data=record_lists(with_headers=True),
    producer_id=st.one_of(st.just(-1), st.integers(0, 2**62)),
    producer_epoch=st.one_of(st.just(-1), st.integers(0, 32767)),
    base_sequence=sequences,
    ple=st.one_of(st.just(-1), st.integers(0, INT_MAX)),
    log_append_time=st.one_of(st.none(), st.integers(0, 2**45)),
    delete_horizon=st.one_of(st.none(), st.none(), st.integers(0, 2**45)),
    transactional=st.booleans(),
    control=st.one_of(st.none(), st.none(), st.sampled_from(list(ControlRecordType)[:-1])),
)
def test_v2_roundtrip(
    codec,
    data,
    producer_id,
    producer_epoch,
    base_sequence,
    ple,
    log_append_time,
    delete_horizon,
    transactional,
    control,
) -> None:
    base_offset, records, offsets = data
    if control is not None:  # control records have a 4-byte key: version 0, type
        records = [
            SimpleRecord(r.value, control_key(control), r.headers, r.timestamp, r.offset) for r in records
        ]
    batch_bytes = build_v2_batch(
        records,
        base_offset=base_offset,
        compression=codec,
        log_append_time=log_append_time,
        producer_id=producer_id,
        producer_epoch=producer_epoch,
        base_sequence=base_sequence,
        partition_leader_epoch=ple,
        is_transactional=transactional,
        is_control=control is not None,
        delete_horizon_ms=delete_horizon,
    )
    n = len(records)
    last_delta = offsets[-1] - base_offset
    expected_ts = [log_append_time if log_append_time is not None else r.timestamp for r in records]
    expected_max = log_append_time if log_append_time is not None else max(r.timestamp for r in records)
    expected_records = [
        (
            o,
            ts,
            _expected_sequence(base_sequence, o - base_offset),
            r.key,
            r.value,
            tuple(Header(_header_key(k), v) for k, v in r.headers),
        )
        for r, o, ts in zip(records, offsets, expected_ts, strict=True)
    ]

    # kdump
    (batch,) = list(FileRecords.from_bytes(batch_bytes).batches())
    assert batch.is_valid()
    assert batch.size_in_bytes == len(batch_bytes)
    assert (batch.magic, batch.base_offset, batch.last_offset, batch.records_count) == (
        2,
        base_offset,
        offsets[-1],
        n,
    )
    assert (batch.producer_id, batch.producer_epoch, batch.base_sequence) == (
        producer_id,
        producer_epoch,
        base_sequence,
    )
    assert batch.partition_leader_epoch == ple
    assert batch.compression_type_id == codec
    assert batch.is_transactional == transactional
    assert batch.is_control_batch == (control is not None)
    assert batch.delete_horizon_ms == delete_horizon
    assert batch.timestamp_type == ("LogAppendTime" if log_append_time is not None else "CreateTime")
    assert batch.max_timestamp == expected_max
    assert batch.last_sequence == _expected_sequence(base_sequence, last_delta)
    got = [(r.offset, r.timestamp, r.sequence, r.key, r.value, r.headers) for r in batch.records()]
    assert got == expected_records

    # kafka-python
    (kpy,) = list(MemoryRecords(batch_bytes))
    assert kpy.validate_crc()
    assert (kpy.base_offset, kpy.last_offset, kpy.records_count, kpy.leader_epoch) == (
        base_offset,
        offsets[-1],
        n,
        ple,
    )
    assert (kpy.producer_id, kpy.producer_epoch, kpy.base_sequence) == (
        producer_id,
        producer_epoch,
        base_sequence,
    )
    assert (kpy.compression_type, kpy.is_transactional, kpy.is_control_batch) == (
        codec,
        transactional,
        control is not None,
    )
    assert kpy.timestamp_type == (1 if log_append_time is not None else 0)
    assert kpy.max_timestamp == expected_max
    assert kpy.last_sequence == _expected_sequence(base_sequence, last_delta)
    assert kpy.first_timestamp == (delete_horizon if delete_horizon is not None else records[0].timestamp)
    got = [(r.offset, r.timestamp, r.key, r.value, [(k.encode(), v) for k, v in r.headers]) for r in kpy]
    assert got == [(o, ts, k, v, [(h.key, h.value) for h in hs]) for o, ts, _, k, v, hs in expected_records]


def test_v2_empty_uncompressed_roundtrip() -> None:
    data = build_v2_batch([], base_offset=5, producer_id=3, producer_epoch=0, base_sequence=9)
    (batch,) = list(FileRecords.from_bytes(data).batches())
    assert batch.is_valid() and batch.records_count == 0 and list(batch.records()) == []
    (kpy,) = list(MemoryRecords(data))
    assert kpy.validate_crc() and list(kpy) == []


# -- legacy ---------------------------------------------------------------------------------------------------


@pytest.mark.parametrize(("magic", "codec"), [(m, c) for m in (0, 1) for c in (NONE, GZIP, SNAPPY, LZ4)])
@SETTINGS
@given(data=record_lists(with_headers=False), log_append_time=st.one_of(st.none(), st.integers(0, 2**45)))
def test_legacy_roundtrip(magic, codec, data, log_append_time) -> None:
    base_offset, records, offsets = data
    if magic == 0:
        log_append_time = None  # v0 has no timestamps
    built = build_legacy_message_set(
        records, magic=magic, base_offset=base_offset, compression=codec, log_append_time=log_append_time
    )
    if magic == 0:
        expected_ts = [-1] * len(records)
    elif log_append_time is not None:
        expected_ts = [log_append_time] * len(records)
    else:
        expected_ts = [r.timestamp for r in records]
    expected = [(o, ts, r.key, r.value) for r, o, ts in zip(records, offsets, expected_ts, strict=True)]

    # kdump
    batches = list(FileRecords.from_bytes(built).batches())
    assert len(batches) == (1 if codec != NONE else len(records))
    assert sum(b.size_in_bytes for b in batches) == len(built)
    got = []
    for b in batches:
        assert b.magic == magic and b.is_valid() and b.compression_type_id == codec
        assert b.timestamp_type == (
            "NoTimestampType"
            if magic == 0
            else "LogAppendTime"
            if log_append_time is not None
            else "CreateTime"
        )
        for r in b.records():
            assert r.valid and r.crc is not None and r.magic == magic and r.headers == ()
            got.append((r.offset, r.timestamp, r.key, r.value))
    assert got == expected
    if codec != NONE:
        wrapper = batches[0]
        assert wrapper.offset == offsets[-1]
        assert wrapper.key is None
        if magic == 1:
            assert wrapper.timestamp == (
                log_append_time if log_append_time is not None else max(-1, *(r.timestamp for r in records))
            )

    # kafka-python
    got = []
    for b in MemoryRecords(built):
        assert b.validate_crc() and b.magic == magic and b.compression_type == codec
        for r in b:
            assert r.validate_crc()
            got.append((r.offset, -1 if r.timestamp is None else r.timestamp, r.key, r.value))
    assert got == expected


# -- mixed segments -------------------------------------------------------------------------------------------


@SETTINGS
@given(
    st.lists(
        st.tuples(st.sampled_from(COMBOS), record_lists(with_headers=False, max_size=4)),
        min_size=1,
        max_size=6,
    )
)
def test_segment_of_mixed_batches(parts) -> None:
    next_offset = 0
    batches, expected = [], []
    for (magic, codec), (_, records, offsets) in parts:
        shift = next_offset - offsets[0]  # place each batch after the previous one
        records = [
            SimpleRecord(r.value, r.key, (), r.timestamp, o + shift)
            for r, o in zip(records, offsets, strict=True)
        ]
        offsets = [o + shift for o in offsets]
        if magic == 2:
            batches.append(build_v2_batch(records, base_offset=offsets[0], compression=codec))
        else:
            batches.append(
                build_legacy_message_set(records, magic=magic, base_offset=offsets[0], compression=codec)
            )
        expected += [(o, r.key, r.value) for r, o in zip(records, offsets, strict=True)]
        next_offset = offsets[-1] + 1
    segment = build_segment(batches)
    got = [(r.offset, r.key, r.value) for b in FileRecords.from_bytes(segment).batches() for r in b.records()]
    assert got == expected
    got = [(r.offset, r.key, r.value) for b in MemoryRecords(segment) for r in b]
    assert got == expected


# -- corruption -----------------------------------------------------------------------------------------------


@st.composite
def v2_and_position(draw):
    codec = draw(st.sampled_from([NONE, GZIP, SNAPPY, LZ4, ZSTD]))
    base_offset, records, _ = draw(record_lists(with_headers=True, max_size=5))
    data = build_v2_batch(
        records, base_offset=base_offset, compression=codec, producer_id=1, producer_epoch=0, base_sequence=0
    )
    position = draw(st.integers(17, len(data) - 1))  # the CRC itself (17..20) and everything it covers
    flip = draw(st.integers(1, 255))
    return data, position, flip


@SETTINGS
@given(v2_and_position())
def test_v2_single_byte_corruption_detected(case) -> None:
    data, position, flip = case
    corrupt = bytearray(data)
    corrupt[position] ^= flip
    (batch,) = list(FileRecords.from_bytes(bytes(corrupt)).batches())
    assert not batch.is_valid()
    (kpy,) = list(MemoryRecords(bytes(corrupt)))
    assert not kpy.validate_crc()


def test_v2_every_byte_corruption_detected() -> None:
    data = build_v2_batch([SimpleRecord(b"value", b"key", (("h", None),), 1_700_000_000_000)] * 3)
    for position in range(len(data)):
        corrupt = bytearray(data)
        corrupt[position] ^= 0x01
        if position in range(8, 12) or position == 16:
            continue  # batchLength and magic frame the batch; they are not checksummed
        (batch,) = list(FileRecords.from_bytes(bytes(corrupt)).batches())
        # baseOffset and partitionLeaderEpoch are outside the CRC (the broker rewrites them)
        assert batch.is_valid() == (position < 17), position


@pytest.mark.parametrize("magic", [0, 1])
@SETTINGS
@given(data=record_lists(with_headers=False, max_size=1), codec=st.sampled_from([NONE, GZIP]), pos=st.data())
def test_legacy_single_byte_corruption_detected(magic, data, codec, pos) -> None:
    base_offset, records, _ = data
    built = build_legacy_message_set(records, magic=magic, base_offset=base_offset, compression=codec)
    # the CRC itself, or attributes .. end of the message (the magic byte would change the format)
    position = pos.draw(st.one_of(st.integers(12, 15), st.integers(17, len(built) - 1)))
    corrupt = bytearray(built)
    corrupt[position] ^= pos.draw(st.integers(1, 255))
    (batch,) = list(FileRecords.from_bytes(bytes(corrupt)).batches())
    assert not batch.is_valid()
    assert batch.checksum != zlib.crc32(bytes(corrupt[16:]))
    (kpy,) = list(MemoryRecords(bytes(corrupt)))
    assert not kpy.validate_crc()
