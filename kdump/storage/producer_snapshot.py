"""Producer-state snapshots (``<offset>.snapshot``): Kafka's ``ProducerStateManager.readSnapshot``.

Layout (all big-endian; the generated ``ProducerSnapshot`` message of Kafka 4.0, byte-identical to the older
hand-written schema)::

    version int16 (must be 1) | crc uint32 | count int32 | count x 46-byte entries

    entry: producerId int64, epoch int16, lastSequence int32, lastOffset int64, offsetDelta int32,
           timestamp int64, coordinatorEpoch int32, currentTxnFirstOffset int64 (-1 = none)

The CRC is CRC-32C over bytes ``[6, end of file)`` -- the count, the entries and any trailing bytes.  The number
in the file name is the log end offset the snapshot covers.

Kafka 4.0 validates in this order, and this module raises :class:`CorruptSnapshotError` with the same text:

1. parse, inside one ``catch (Exception e)`` that reports ``Snapshot failed schema validation: <message>``:
   the version (an unknown one gives ``...: Snapshot contained an unknown file version <v>``), then the
   generated reader (a read past the end is a ``BufferUnderflowException`` whose message is ``null``; a
   negative count and a count larger than the remaining bytes have their own generated messages);
2. then the CRC: ``Snapshot is corrupt (CRC is no longer valid). Stored crc: <s>. Computed crc: <c>``.

A count is never trusted for allocation: it is checked against the bytes actually present first.
"""

from __future__ import annotations

import os
import struct
from collections.abc import Iterable
from dataclasses import dataclass

from kdump.errors import CorruptSnapshotError, KdumpError
from kdump.storage.byte_source import ByteSource, location_of, read_all
from kdump.storage.checksum import crc32c
from kdump.storage.naming import offset_from_file
from kdump.storage.record_batch import decrement_sequence

__all__ = [
    "ENTRY_SIZE",
    "SNAPSHOT_VERSION",
    "ProducerSnapshot",
    "ProducerSnapshotEntry",
    "decrement_sequence",
    "encode_producer_snapshot",
    "parse_producer_snapshot",
    "read_producer_snapshot",
]

SNAPSHOT_VERSION = 1
"""The only version Kafka reads or writes."""

ENTRY_SIZE = 46
"""Bytes per producer entry."""

CRC_OFFSET = 2
PRODUCER_ENTRIES_OFFSET = 6
"""The CRC covers the file from this byte on (Kafka's ``PRODUCER_ENTRIES_OFFSET``)."""

_HEADER_SIZE = 10
_ENTRY = struct.Struct(">qhiqiqiq")
_INT32_MAX = (1 << 31) - 1
_INT64_MIN = -(1 << 63)
_INT64_MAX = (1 << 63) - 1


@dataclass(frozen=True, slots=True)
class ProducerSnapshotEntry:
    """One producer's state (Kafka's ``ProducerStateEntry`` as loaded from a snapshot), fields in file order.

    Kafka keeps batch metadata (sequence numbers, last offset, offset delta) only when ``last_offset >= 0``;
    ``timestamp`` is both the entry's ``lastTimestamp`` and the batch's timestamp.
    """

    producer_id: int
    producer_epoch: int
    last_sequence: int
    last_offset: int
    offset_delta: int
    timestamp: int
    coordinator_epoch: int
    current_txn_first_offset: int = -1
    """The first offset of the producer's open transaction, or -1 (Kafka: ``OptionalLong.empty``)."""

    @property
    def has_batch_metadata(self) -> bool:
        """Whether Kafka builds ``BatchMetadata`` for this entry (``last_offset >= 0``)."""
        return self.last_offset >= 0

    @property
    def first_sequence(self) -> int:
        """``last_sequence - offset_delta`` with Kafka's sequence wrap (``BatchMetadata.firstSeq``)."""
        return decrement_sequence(self.last_sequence, self.offset_delta)

    @property
    def first_offset(self) -> int:
        """``last_offset - offset_delta`` in Java ``long`` arithmetic (``BatchMetadata.firstOffset``)."""
        value = self.last_offset - self.offset_delta
        return (value + (1 << 63)) % (1 << 64) - (1 << 63)

    @property
    def last_timestamp(self) -> int:
        """Same stored field as ``timestamp`` (Kafka prints it twice)."""
        return self.timestamp

    @property
    def txn_first_offset(self) -> int | None:
        """``current_txn_first_offset`` when it is >= 0 (Kafka's ``OptionalLong``), else None."""
        return self.current_txn_first_offset if self.current_txn_first_offset >= 0 else None

    def encode(self) -> bytes:
        """The 46 bytes of this entry."""
        return _ENTRY.pack(
            self.producer_id,
            self.producer_epoch,
            self.last_sequence,
            self.last_offset,
            self.offset_delta,
            self.timestamp,
            self.coordinator_epoch,
            self.current_txn_first_offset,
        )


@dataclass(frozen=True, slots=True)
class ProducerSnapshot:
    """A decoded, CRC-checked producer snapshot."""

    version: int
    crc: int
    """The stored CRC (equal to the computed one, or reading would have failed)."""
    entries: tuple[ProducerSnapshotEntry, ...]
    trailing_bytes: int = 0
    """Bytes after the last entry: not a parse error in Kafka, and covered by the CRC."""
    path: str | None = None
    offset: int | None = None
    """The offset in the file name (the exclusive end offset the snapshot covers), if the name has one."""

    def encode(self) -> bytes:
        """The snapshot's bytes as Kafka writes them (entries only, CRC recomputed, no trailing bytes)."""
        return encode_producer_snapshot(self.entries, version=self.version)


def _schema_error(detail: str, path: str | None, position: int) -> CorruptSnapshotError:
    return CorruptSnapshotError(f"Snapshot failed schema validation: {detail}", path=path, position=position)


def parse_producer_snapshot(data: bytes, path: str | os.PathLike[str] | None = None) -> ProducerSnapshot:
    """Decode and validate the bytes of a snapshot file exactly like Kafka 4.0 (see the module docstring).

    ``path`` is only used to locate errors and to read the offset from the file name.
    """
    where = None if path is None else os.fspath(path)
    # A read past the end throws BufferUnderflowException, whose message is null.
    if len(data) < 2:
        raise _schema_error("null", where, 0)
    version = struct.unpack_from(">h", data, 0)[0]
    if version != SNAPSHOT_VERSION:
        raise _schema_error(f"Snapshot contained an unknown file version {version}", where, 0)
    if len(data) < PRODUCER_ENTRIES_OFFSET:
        raise _schema_error("null", where, CRC_OFFSET)
    stored_crc = struct.unpack_from(">I", data, CRC_OFFSET)[0]
    if len(data) < _HEADER_SIZE:
        raise _schema_error("null", where, PRODUCER_ENTRIES_OFFSET)
    count = struct.unpack_from(">i", data, PRODUCER_ENTRIES_OFFSET)[0]
    remaining = len(data) - _HEADER_SIZE
    if count < 0:
        raise _schema_error(
            "non-nullable field producerEntries was serialized as null", where, PRODUCER_ENTRIES_OFFSET
        )
    if count > remaining:
        raise _schema_error(
            f"Tried to allocate a collection of size {count}, but there are only {remaining} bytes remaining.",
            where,
            PRODUCER_ENTRIES_OFFSET,
        )
    whole = remaining // ENTRY_SIZE
    if count > whole:
        raise _schema_error("null", where, _HEADER_SIZE + whole * ENTRY_SIZE)
    end = _HEADER_SIZE + count * ENTRY_SIZE
    entries = tuple(
        ProducerSnapshotEntry(*fields) for fields in _ENTRY.iter_unpack(memoryview(data)[_HEADER_SIZE:end])
    )

    computed_crc = crc32c(memoryview(data)[PRODUCER_ENTRIES_OFFSET:])
    if stored_crc != computed_crc:
        raise CorruptSnapshotError(
            f"Snapshot is corrupt (CRC is no longer valid). Stored crc: {stored_crc}. Computed crc: {computed_crc}",
            path=where,
            position=CRC_OFFSET,
        )

    offset = None
    if where is not None:
        try:
            offset = offset_from_file(where)
        except KdumpError:
            offset = None
    return ProducerSnapshot(
        version=version,
        crc=stored_crc,
        entries=entries,
        trailing_bytes=len(data) - end,
        path=where,
        offset=offset,
    )


def read_producer_snapshot(path: str | os.PathLike[str] | ByteSource) -> ProducerSnapshot:
    """Read a ``.snapshot`` file whole and decode it (:func:`parse_producer_snapshot`).

    I/O errors (e.g. a missing file) propagate as :class:`OSError`, as they are fatal in Kafka too.
    """
    return parse_producer_snapshot(read_all(path), location_of(path))


def encode_producer_snapshot(
    entries: Iterable[ProducerSnapshotEntry],
    *,
    version: int = SNAPSHOT_VERSION,
    crc: int | None = None,
    trailing: bytes = b"",
) -> bytes:
    """The bytes of a snapshot file holding ``entries`` (Kafka's ``writeSnapshot`` layout).

    ``crc`` overrides the computed CRC and ``trailing`` appends bytes after the entries (covered by the
    computed CRC) -- both only to build damaged files for tests.
    """
    body_entries = [entry.encode() for entry in entries]
    body = struct.pack(">i", len(body_entries)) + b"".join(body_entries) + trailing
    if crc is None:
        crc = crc32c(body)
    return struct.pack(">hI", version, crc) + body
