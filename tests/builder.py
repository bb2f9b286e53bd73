"""Encoders for every record format: the write side of Kafka's ``MemoryRecordsBuilder``.

kdump itself never writes segments; these encoders exist to make test fixtures, round-trip tests and
benchmark data.  They write what Kafka 4.0's ``MemoryRecordsBuilder`` writes for the same input, byte for byte
when the batch is uncompressed (compressed payloads come from :func:`kdump.storage.compression.compress`, whose
output need not match Java's compressors bit for bit, but decodes to the same records).

* **v2** (:func:`build_v2_batch`): one ``DefaultRecordBatch`` — 61-byte header, then the records, compressed as
  one stream when a codec is given; CRC-32C over bytes 21..end.
* **v0/v1** (:func:`build_legacy_message`, :func:`build_legacy_message_set`): one log entry per message, or
  for a compressed set one wrapper message whose value is the compressed inner entries (v1: relative inner
  offsets; v0: absolute), with the wrapper at the last offset.
* **control batches** (:func:`build_end_txn_marker_batch`, :func:`build_control_batch`): transaction markers
  and the KRaft control records (snapshot header/footer, voters, ...).

Every function returns ``bytes`` ready to be concatenated into a segment (:func:`build_segment`).
"""

from __future__ import annotations

import struct
import zlib
from collections.abc import Iterable, Sequence
from dataclasses import dataclass

from kdump.storage import compression
from kdump.storage.checksum import crc32c
from kdump.storage.compression import GZIP, LZ4, NONE, SNAPPY
from kdump.storage.control_record import ControlRecordType, EndTransactionMarker, control_key
from kdump.storage.varint import encode_varint, encode_varlong

__all__ = [
    "SimpleRecord",
    "build_v2_batch",
    "encode_v2_record",
    "encode_v2_records",
    "build_legacy_message",
    "build_legacy_message_set",
    "encode_legacy_entries",
    "legacy_attributes",
    "build_end_txn_marker_batch",
    "build_control_batch",
    "build_segment",
    "v2_attributes",
]

NO_TIMESTAMP = -1
_INT_MAX = 0x7FFFFFFF
#: Codecs of compressed legacy wrappers (zstd exists only for v2).
LEGACY_CODECS = (GZIP, SNAPPY, LZ4)
LOG_OVERHEAD = 12
RECORD_BATCH_OVERHEAD = 61

COMPRESSION_CODEC_MASK = 0x07
TIMESTAMP_TYPE_MASK = 0x08
TRANSACTIONAL_FLAG_MASK = 0x10
CONTROL_FLAG_MASK = 0x20
DELETE_HORIZON_FLAG_MASK = 0x40

_V2_AFTER_CRC = struct.Struct(">hiqqqhii")  # attributes .. recordsCount (bytes 21..60)
_V2_BEFORE_CRC = struct.Struct(">qiiBI")  # baseOffset .. crc (bytes 0..20)
_LOG_HEADER = struct.Struct(">qi")
_INT = struct.Struct(">i")
_V0_PREFIX = struct.Struct(">BB")  # magic, attributes
_V1_PREFIX = struct.Struct(">BBq")  # magic, attributes, timestamp
_UINT = struct.Struct(">I")

# Zigzag varints of small values, the common case for lengths and deltas: one byte each.
_SMALL_VARINT = [bytes([(n << 1) ^ (n >> 31)]) for n in range(-64, 64)]


def _varint(n: int) -> bytes:
    if -64 <= n < 64:
        return _SMALL_VARINT[n + 64]
    return encode_varint(n)


def _varlong(n: int) -> bytes:
    if -64 <= n < 64:
        return _SMALL_VARINT[n + 64]
    return encode_varlong(n)


@dataclass(frozen=True)
class SimpleRecord:
    """A record to encode (Kafka's ``SimpleRecord``).

    ``headers`` are ``(key, value)`` pairs; a ``str`` key is encoded as UTF-8, a value may be None (v2 only —
    legacy formats have no headers).  ``timestamp`` is the record's own (create) timestamp, -1 for none.
    ``offset`` is the absolute offset; when None the record takes the offset after the previous one (the first
    takes the batch's ``base_offset``).  Set it to leave gaps, as compaction does.
    """

    value: bytes | None
    key: bytes | None = None
    headers: tuple[tuple[bytes | str, bytes | None], ...] = ()
    timestamp: int = NO_TIMESTAMP
    offset: int | None = None


def _offsets(records: Sequence[SimpleRecord], base_offset: int) -> list[int]:
    """Absolute offsets of ``records``: explicit ones kept, the others consecutive from the previous.

    As in Kafka's ``MemoryRecordsBuilder.appendWithOffset``, offsets must increase and not precede
    ``base_offset``; deltas must fit the int32 fields that hold them.
    """
    out = []
    next_offset = base_offset
    for r in records:
        offset = next_offset if r.offset is None else r.offset
        if offset < next_offset:
            raise ValueError(
                f"Illegal offset {offset} following previous offset {next_offset - 1} (base offset {base_offset})"
            )
        if offset - base_offset > _INT_MAX:
            raise ValueError(f"offset {offset} is too far from base offset {base_offset} for an int32 delta")
        out.append(offset)
        next_offset = offset + 1
    return out


def _header_key(key: bytes | str) -> bytes:
    return key.encode("utf-8") if isinstance(key, str) else bytes(key)


def encode_v2_record(
    offset_delta: int,
    timestamp_delta: int,
    key: bytes | None,
    value: bytes | None,
    headers: Iterable[tuple[bytes | str, bytes | None]] = (),
) -> bytes:
    """One v2 record (Kafka's ``DefaultRecord.writeTo``): length varint, then attributes 0 and the body."""
    parts = [b"\x00", _varlong(timestamp_delta), _varint(offset_delta)]
    if key is None:
        parts.append(b"\x01")
    else:
        parts += (_varint(len(key)), key)
    if value is None:
        parts.append(b"\x01")
    else:
        parts += (_varint(len(value)), value)
    headers = tuple(headers)
    parts.append(_varint(len(headers)))
    for hkey, hvalue in headers:
        kb = _header_key(hkey)
        parts += (_varint(len(kb)), kb)
        if hvalue is None:
            parts.append(b"\x01")
        else:
            parts += (_varint(len(hvalue)), hvalue)
    body = b"".join(parts)
    return _varint(len(body)) + body


def encode_v2_records(records: Sequence[SimpleRecord], *, base_offset: int, base_timestamp: int) -> bytes:
    """The uncompressed records region of a v2 batch (what follows the 61-byte header, before compression).

    Offset deltas are relative to ``base_offset``, timestamp deltas to ``base_timestamp`` (the first record's
    timestamp, or the delete horizon).
    """
    offsets = _offsets(records, base_offset)
    return b"".join(
        encode_v2_record(o - base_offset, r.timestamp - base_timestamp, r.key, r.value, r.headers)
        for r, o in zip(records, offsets, strict=True)
    )


def v2_attributes(
    compression_type: int = NONE,
    *,
    log_append_time: bool = False,
    is_transactional: bool = False,
    is_control: bool = False,
    has_delete_horizon: bool = False,
) -> int:
    """The attributes field of a v2 batch (Kafka's ``DefaultRecordBatch.computeAttributes``)."""
    if not 0 <= compression_type <= COMPRESSION_CODEC_MASK:
        raise ValueError(f"compression type {compression_type} does not fit in 3 bits")
    attributes = compression_type
    if log_append_time:
        attributes |= TIMESTAMP_TYPE_MASK
    if is_transactional:
        attributes |= TRANSACTIONAL_FLAG_MASK
    if is_control:
        attributes |= CONTROL_FLAG_MASK
    if has_delete_horizon:
        attributes |= DELETE_HORIZON_FLAG_MASK
    return attributes


def build_v2_batch(
    records: Sequence[SimpleRecord],
    *,
    base_offset: int = 0,
    compression: int = NONE,
    log_append_time: int | None = None,
    producer_id: int = -1,
    producer_epoch: int = -1,
    base_sequence: int = -1,
    partition_leader_epoch: int = 0,
    is_transactional: bool = False,
    is_control: bool = False,
    delete_horizon_ms: int | None = None,
    records_count: int | None = None,
    last_offset_delta: int | None = None,
    base_timestamp: int | None = None,
    max_timestamp: int | None = None,
    attributes: int | None = None,
    crc: int | None = None,
    payload: bytes | None = None,
) -> bytes:
    """Encode one v2 record batch as Kafka's ``MemoryRecordsBuilder`` does.

    * baseTimestamp: ``delete_horizon_ms`` when given (attribute bit 6), else the first record's timestamp
      (-1 for an empty batch); record timestamp deltas are relative to it.
    * maxTimestamp: ``log_append_time`` when given (attribute bit 3, a LogAppendTime batch), else the largest
      record timestamp (-1 when empty).
    * lastOffsetDelta: last record offset − ``base_offset`` (0 when empty).
    * ``compression``: the records region is ``compress(compression, records, magic=2)``.

    The remaining keywords override what would be derived, to reproduce batches exactly as found on disk
    (``last_offset_delta``: Kafka's ``overrideLastOffset`` after compaction, ``base_timestamp`` /
    ``max_timestamp``: empty batches written by the cleaner) or to make corrupt fixtures (``records_count``,
    ``attributes`` — the whole 16-bit field, replacing the flags above — ``crc``).  ``payload`` is written
    after the header as is, instead of encoding (and compressing) ``records``, which then only supply the
    derived header fields: pass records already encoded with :func:`encode_v2_records` and compressed with
    ``compression``, or arbitrary bytes for a corrupt fixture.
    """
    offsets = _offsets(records, base_offset)
    if base_timestamp is None:
        if delete_horizon_ms is not None:
            base_timestamp = delete_horizon_ms
        else:
            base_timestamp = records[0].timestamp if records else NO_TIMESTAMP
    if max_timestamp is None:
        if log_append_time is not None:
            max_timestamp = log_append_time
        else:
            max_timestamp = max((r.timestamp for r in records), default=NO_TIMESTAMP)
    if last_offset_delta is None:
        last_offset_delta = offsets[-1] - base_offset if offsets else 0
    if records_count is None:
        records_count = len(records)
    if attributes is None:
        attributes = v2_attributes(
            compression,
            log_append_time=log_append_time is not None,
            is_transactional=is_transactional,
            is_control=is_control,
            has_delete_horizon=delete_horizon_ms is not None,
        )
    if payload is None:
        payload = encode_v2_records(records, base_offset=base_offset, base_timestamp=base_timestamp)
        if compression != NONE:
            payload = _compress(compression, payload, magic=2)
    after_crc = _V2_AFTER_CRC.pack(
        attributes,
        last_offset_delta,
        base_timestamp,
        max_timestamp,
        producer_id,
        producer_epoch,
        base_sequence,
        records_count,
    )
    if crc is None:
        crc = crc32c(payload, crc32c(after_crc))
    batch_length = RECORD_BATCH_OVERHEAD - LOG_OVERHEAD + len(payload)
    return (
        _V2_BEFORE_CRC.pack(base_offset, batch_length, partition_leader_epoch, 2, crc) + after_crc + payload
    )


def _compress(codec: int, data: bytes, *, magic: int) -> bytes:
    if codec not in compression.CODEC_NAMES:
        raise ValueError(f"Unknown compression type id: {codec}")
    return compression.compress(codec, data, magic=magic)


# -- legacy (magic 0 and 1) -----------------------------------------------------------------------------------


def legacy_attributes(magic: int, compression_type: int = NONE, *, log_append_time: bool = False) -> int:
    """Kafka's ``LegacyRecord.computeAttributes``: codec bits, plus the LogAppendTime bit for v1."""
    attributes = compression_type & COMPRESSION_CODEC_MASK
    if magic > 0 and log_append_time:
        attributes |= TIMESTAMP_TYPE_MASK
    return attributes


def _legacy_message(
    magic: int, attributes: int, timestamp: int, key: bytes | None, value: bytes | None
) -> bytes:
    """A legacy message without its log header: CRC-32, magic, attributes, [timestamp], key, value."""
    if magic == 0:
        parts = [_V0_PREFIX.pack(0, attributes & 0xFF)]
    elif magic == 1:
        parts = [_V1_PREFIX.pack(1, attributes & 0xFF, timestamp)]
    else:
        raise ValueError(f"legacy messages have magic 0 or 1, not {magic}")
    for field in (key, value):
        if field is None:
            parts.append(b"\xff\xff\xff\xff")
        else:
            parts += (_INT.pack(len(field)), field)
    body = b"".join(parts)
    return _UINT.pack(zlib.crc32(body)) + body


def build_legacy_message(
    record: SimpleRecord,
    *,
    magic: int,
    offset: int,
    compression: int = NONE,
    log_append_time: int | None = None,
    attributes: int | None = None,
    crc: int | None = None,
) -> bytes:
    """One legacy log entry: ``offset int64, size int32`` and one message (Kafka's ``LegacyRecord.write``).

    ``compression`` only sets the codec bits of the attributes; the value is written as given, so for a
    wrapper pass the already-compressed inner entries (see :func:`build_legacy_message_set`).  With
    ``log_append_time`` (v1) the timestamp is that time and the timestamp-type bit is set.  ``attributes``
    replaces the whole attributes byte and ``crc`` the computed CRC-32, for fixtures.  Legacy messages have no
    headers: a record with headers is refused.  v0 messages carry no timestamp.
    """
    if record.headers:
        raise ValueError("Magic v0 and v1 messages do not support record headers")
    if attributes is None:
        attributes = legacy_attributes(magic, compression, log_append_time=log_append_time is not None)
    timestamp = log_append_time if log_append_time is not None else record.timestamp
    message = _legacy_message(magic, attributes, timestamp, record.key, record.value)
    if crc is not None:
        message = _UINT.pack(crc) + message[4:]
    return _LOG_HEADER.pack(offset, len(message)) + message


def encode_legacy_entries(
    records: Sequence[SimpleRecord],
    *,
    magic: int,
    base_offset: int = 0,
    log_append_time: int | None = None,
    relative_offsets: bool = False,
) -> bytes:
    """Uncompressed legacy log entries, one per record (the inner entries of a wrapper when compressed).

    ``relative_offsets`` writes offset − ``base_offset`` (v1 inner messages), otherwise absolute offsets.
    """
    offsets = _offsets(records, base_offset)
    shift = base_offset if relative_offsets else 0
    return b"".join(
        build_legacy_message(r, magic=magic, offset=o - shift, log_append_time=log_append_time)
        for r, o in zip(records, offsets, strict=True)
    )


def build_legacy_message_set(
    records: Sequence[SimpleRecord],
    *,
    magic: int,
    base_offset: int = 0,
    compression: int = NONE,
    log_append_time: int | None = None,
) -> bytes:
    """A legacy message set as Kafka's ``MemoryRecordsBuilder`` writes it for magic 0 or 1.

    Uncompressed: one entry per record.  Compressed: one wrapper message (null key) at the last absolute
    offset whose value is the compressed inner entries; v1 inner offsets are relative to ``base_offset``
    (0..n−1 without gaps) and v0 inner offsets absolute; inner timestamps are the records' own (or
    ``log_append_time``), the wrapper timestamp is the largest of them (or ``log_append_time``, with the
    LogAppendTime bit set on wrapper and inner messages).  zstd is not a legacy codec.
    """
    if magic not in (0, 1):
        raise ValueError(f"legacy message sets have magic 0 or 1, not {magic}")
    if compression == NONE:
        return encode_legacy_entries(
            records, magic=magic, base_offset=base_offset, log_append_time=log_append_time
        )
    if compression not in LEGACY_CODECS:
        raise ValueError(f"compression type {compression} is not supported by magic v{magic}")
    if not records:
        raise ValueError("a compressed legacy message set needs at least one record")
    offsets = _offsets(records, base_offset)
    inner = encode_legacy_entries(
        records,
        magic=magic,
        base_offset=base_offset,
        log_append_time=log_append_time,
        relative_offsets=magic > 0,
    )
    if log_append_time is not None:
        wrapper_ts = log_append_time
    else:
        wrapper_ts = max(NO_TIMESTAMP, *(r.timestamp for r in records)) if magic > 0 else NO_TIMESTAMP
    wrapper = SimpleRecord(value=_compress(compression, inner, magic=magic), timestamp=wrapper_ts)
    return build_legacy_message(
        wrapper, magic=magic, offset=offsets[-1], compression=compression, log_append_time=log_append_time
    )


# -- control batches ------------------------------------------------------------------------------------------


def build_end_txn_marker_batch(
    control_type: ControlRecordType,
    *,
    coordinator_epoch: int,
    producer_id: int,
    producer_epoch: int,
    base_offset: int,
    timestamp: int,
    partition_leader_epoch: int = 0,
    version: int = 0,
) -> bytes:
    """A transaction marker batch (Kafka's ``MemoryRecords.withEndTransactionMarker``).

    One control record, key ``(0, type)``, value ``(version, coordinatorEpoch)``; the batch is control and
    transactional (attributes 0x30), with the transaction's producer id/epoch and no sequence.
    """
    if control_type not in (ControlRecordType.ABORT, ControlRecordType.COMMIT):
        raise ValueError(f"Invalid control record type for end transaction marker {control_type.name}")
    value = EndTransactionMarker(control_type, coordinator_epoch, version).serialize_value()
    return build_v2_batch(
        [SimpleRecord(value=value, key=control_key(control_type), timestamp=timestamp)],
        base_offset=base_offset,
        producer_id=producer_id,
        producer_epoch=producer_epoch,
        partition_leader_epoch=partition_leader_epoch,
        is_transactional=True,
        is_control=True,
    )


def build_control_batch(
    control_type: ControlRecordType,
    value: bytes,
    *,
    base_offset: int,
    timestamp: int,
    partition_leader_epoch: int = 0,
    producer_id: int = -1,
    producer_epoch: int = -1,
    is_transactional: bool = False,
    compression: int = NONE,
    key_version: int = 0,
    extra_records: Sequence[tuple[ControlRecordType, bytes]] = (),
) -> bytes:
    """A batch holding one control record of ``control_type`` with the given (already encoded) value.

    ``extra_records`` are further ``(type, value)`` control records at the following offsets, with the same
    timestamp (the first batch of a KRaft snapshot holds SnapshotHeader, KRaftVersion and Voters records).

    For the KRaft control records (``SnapshotHeaderRecord``, ``SnapshotFooterRecord``, ``LeaderChangeMessage``,
    ``KRaftVersionRecord``, ``VotersRecord``; encode values with
    :func:`kdump.storage.message_writer.write_message` and the schemas in :mod:`kdump.storage.control_record`), as
    ``MemoryRecords.withSnapshotHeaderRecord`` and friends write them: control bit set, no producer.
    """
    records = [
        SimpleRecord(value=v, key=control_key(t, key_version), timestamp=timestamp)
        for t, v in ((control_type, value), *extra_records)
    ]
    return build_v2_batch(
        records,
        base_offset=base_offset,
        compression=compression,
        producer_id=producer_id,
        producer_epoch=producer_epoch,
        partition_leader_epoch=partition_leader_epoch,
        is_transactional=is_transactional,
        is_control=True,
    )


def build_segment(batches: Iterable[bytes]) -> bytes:
    """A segment file's content: the batches back to back (``.log`` files have no file header)."""
    return b"".join(batches)
