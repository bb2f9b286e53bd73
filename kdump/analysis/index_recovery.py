"""Rebuilding a segment's offset and time indexes from its ``.log``: the index half of Kafka's
``LogSegment.recover``.

Kafka 4.0 rebuilds the indexes of a segment (missing ``.index``, ``CorruptIndexException``, or a segment after the
recovery point of an unclean shutdown) with this loop over the batches from byte 0:

1. ``batch.ensureValid()``: a v2 batch must be at least 61 bytes and its CRC-32C must match; a v0/v1 message
   at least 14 bytes with a matching CRC-32.  A batch that fails, a torn tail (a batch that does not fit in the
   file) or a size field below 14 ends the loop; the valid part is everything before it.
2. ``lastOffset - baseOffset`` must fit in an int (else Kafka fails to load the log and splits the segment).
3. The largest batch ``maxTimestamp`` so far and the batch's last offset are remembered (records are not
   read; the header's max timestamp is enough).
4. When **more than** ``index.interval.bytes`` have been read since the last entry (``validBytes -
   lastIndexEntry > indexIntervalBytes``, with ``validBytes`` the start of this batch), an offset-index entry
   ``(batch last offset, batch position)`` is appended, and a time-index entry ``(max timestamp so far, its
   offset)`` if that timestamp is greater than the last time-index entry's.
5. After the loop, the entry a segment gets when it is rolled or closed cleanly: ``(max timestamp, its
   offset)`` if greater than the last entry (``TimeIndex.maybeAppend(..., skipFullCheck=true)``).

The broker writes the same entries on its append path as long as each append is one batch (a leader appends
one producer batch at a time) and it was not restarted in the middle of the segment; see the man page
``kdump-rebuild-index(1)`` for when the two differ.  Nothing here writes files: :func:`recover_indexes` returns
the entries and :meth:`RecoveredIndexes.offset_index_bytes` / :meth:`~RecoveredIndexes.time_index_bytes` their
on-disk form.  The ``.log`` is never modified (Kafka would truncate it to the valid part).
"""

from __future__ import annotations

import struct
from collections.abc import Callable
from dataclasses import dataclass, field

from kdump.errors import KdumpError
from kdump.storage.file_records import FileRecords, RecordBatch
from kdump.storage.offset_index import OffsetPosition
from kdump.storage.time_index import NO_TIMESTAMP, TimestampOffset

__all__ = [
    "DEFAULT_INDEX_INTERVAL_BYTES",
    "IndexRecoveryError",
    "RecoveredIndexes",
    "encode_offset_index",
    "encode_time_index",
    "recover_indexes",
]

#: Kafka's default ``index.interval.bytes`` (``log.index.interval.bytes``).
DEFAULT_INDEX_INTERVAL_BYTES = 4096

_INT_MAX = 0x7FFFFFFF
_OFFSET_ENTRY = struct.Struct(">ii")
_TIME_ENTRY = struct.Struct(">qi")
_PROGRESS_EVERY = 64 << 20


class IndexRecoveryError(KdumpError):
    """The log cannot be indexed the way Kafka would (Kafka fails to load the log in the same situations):
    an offset too far from the segment's base offset, or offsets that do not increase."""


@dataclass
class RecoveredIndexes:
    """What :func:`recover_indexes` found: the index entries and how much of the log is valid."""

    base_offset: int
    offset_entries: list[OffsetPosition] = field(default_factory=list)
    time_entries: list[TimestampOffset] = field(default_factory=list)
    #: Bytes from the start of the log covered by valid batches (Kafka truncates the log to this).
    valid_bytes: int = 0
    #: Size of the ``.log``.
    log_size: int = 0
    #: Number of valid batches.
    batches: int = 0
    #: The largest batch max timestamp (-1 when none) and the last offset of the batch that holds it.
    max_timestamp: int = NO_TIMESTAMP
    offset_of_max_timestamp: int = 0
    #: Why the valid part ends before the end of the file (None when the whole file is valid).
    stop_reason: str | None = None

    @property
    def invalid_bytes(self) -> int:
        """Bytes after the valid part (a torn write or corruption); a broker would truncate them."""
        return self.log_size - self.valid_bytes

    def offset_index_bytes(self) -> bytes:
        return encode_offset_index(self.offset_entries, self.base_offset)

    def time_index_bytes(self) -> bytes:
        return encode_time_index(self.time_entries, self.base_offset)


def encode_offset_index(entries: list[OffsetPosition], base_offset: int) -> bytes:
    """The ``.index`` file holding ``entries``: (relative offset int32, position int32) per entry, trimmed."""
    out = bytearray(len(entries) * _OFFSET_ENTRY.size)
    pack = _OFFSET_ENTRY.pack_into
    for i, (offset, position) in enumerate(entries):
        pack(out, i * 8, offset - base_offset, position)
    return bytes(out)


def encode_time_index(entries: list[TimestampOffset], base_offset: int) -> bytes:
    """The ``.timeindex`` file holding ``entries``: (timestamp int64, relative offset int32) per entry."""
    out = bytearray(len(entries) * _TIME_ENTRY.size)
    pack = _TIME_ENTRY.pack_into
    for i, (timestamp, offset) in enumerate(entries):
        pack(out, i * 12, timestamp, offset - base_offset)
    return bytes(out)


def recover_indexes(
    records: FileRecords,
    base_offset: int,
    index_interval_bytes: int = DEFAULT_INDEX_INTERVAL_BYTES,
    *,
    rolled: bool = True,
    progress: Callable[[int], None] | None = None,
) -> RecoveredIndexes:
    """Rebuild the offset and time index entries of the segment in ``records`` as Kafka's
    ``LogSegment.recover`` does (see the module docstring).

    ``rolled`` adds the entry Kafka appends when a segment is rolled or closed cleanly (and at the end of every
    recovery); pass False to get only the interval entries, as an active segment has them before it is closed.
    ``progress(n)`` is called now and then with the number of log bytes read.

    Raises :class:`IndexRecoveryError` where Kafka would fail to load the log; a corrupt or torn tail is not an
    error: the result covers the valid part and says why it ends (:attr:`RecoveredIndexes.stop_reason`).
    """
    if index_interval_bytes < 0:
        raise ValueError(f"index.interval.bytes must be >= 0, not {index_interval_bytes}")
    path = records.path
    result = RecoveredIndexes(base_offset, log_size=records.size_in_bytes)
    relative_offsets: list[int] = []
    positions: list[int] = []
    time_entries: list[tuple[int, int]] = []
    valid = 0
    last_index_entry = 0
    max_timestamp = NO_TIMESTAMP
    offset_of_max = base_offset
    last_time_timestamp = NO_TIMESTAMP
    last_time_offset = base_offset
    next_progress = _PROGRESS_EVERY
    batches = 0
    try:
        for batch in records.batches():
            if not batch.is_valid():
                result.stop_reason = _invalid_reason(batch)
                break
            last_offset = batch.last_offset
            relative = last_offset - base_offset
            if relative < 0 or relative > _INT_MAX:
                raise IndexRecoveryError(
                    f"batch at byte {valid} has last offset {last_offset}, which does not fit in an index of "
                    f"base offset {base_offset} (Kafka: LogSegmentOffsetOverflowException; a broker splits "
                    "the segment)",
                    path=path,
                    position=valid,
                )
            timestamp = batch.max_timestamp
            if timestamp > max_timestamp:
                max_timestamp = timestamp
                offset_of_max = last_offset
            if valid - last_index_entry > index_interval_bytes:
                if relative_offsets and relative <= relative_offsets[-1]:
                    raise IndexRecoveryError(
                        f"batch at byte {valid} has last offset {last_offset}, not above the last indexed "
                        f"offset {relative_offsets[-1] + base_offset} (Kafka: InvalidOffsetException)",
                        path=path,
                        position=valid,
                    )
                if valid > _INT_MAX:
                    raise IndexRecoveryError(
                        f"byte position {valid} does not fit in an offset index", path=path, position=valid
                    )
                relative_offsets.append(relative)
                positions.append(valid)
                if max_timestamp > last_time_timestamp:
                    _check_time_offset(offset_of_max, last_time_offset, time_entries, path, valid)
                    time_entries.append((max_timestamp, offset_of_max))
                    last_time_timestamp = max_timestamp
                    last_time_offset = offset_of_max
                last_index_entry = valid
            valid += batch.size_in_bytes
            batches += 1
            if progress is not None and valid >= next_progress:
                progress(valid)
                next_progress = valid + _PROGRESS_EVERY
    except IndexRecoveryError:
        raise
    except KdumpError as e:
        # A size field below 14, or a batch header cut by the end of the file: Kafka's iterator throws
        # CorruptRecordException, which recovery catches as the end of the valid part.
        result.stop_reason = e.message
    if rolled and max_timestamp > last_time_timestamp:
        _check_time_offset(offset_of_max, last_time_offset, time_entries, path, valid)
        time_entries.append((max_timestamp, offset_of_max))
    if result.stop_reason is None and records.invalid_bytes(valid) > 0:
        result.stop_reason = f"the last {records.invalid_bytes(valid)} bytes are not a whole batch (a torn write, or a damaged length field)"
    result.offset_entries = [
        OffsetPosition(base_offset + r, p) for r, p in zip(relative_offsets, positions, strict=True)
    ]
    result.time_entries = [TimestampOffset(t, o) for t, o in time_entries]
    result.valid_bytes = valid
    result.batches = batches
    result.max_timestamp = max_timestamp
    result.offset_of_max_timestamp = offset_of_max
    if progress is not None:
        progress(valid)
    return result


def _check_time_offset(
    offset: int, last_offset: int, entries: list[tuple[int, int]], path: str, position: int
) -> None:
    if entries and offset < last_offset:
        raise IndexRecoveryError(
            f"the batch with the largest timestamp so far has last offset {offset}, below the last time-index "
            f"offset {last_offset} (offsets go backwards; Kafka: InvalidOffsetException)",
            path=path,
            position=position,
        )


def _invalid_reason(batch: RecordBatch) -> str:
    """Kafka's ``ensureValid`` message for a batch that failed ``is_valid``."""
    size = batch.size_in_bytes
    if batch.magic >= 2:
        if size < 61:
            return (
                f"the batch is corrupt: Record batch is corrupt (the size {size} is smaller than "
                "the minimum allowed overhead 61)"
            )
    elif size - 12 < 14:
        return (
            "the message is corrupt: Record is corrupt (crc could not be retrieved as the record "
            f"is too small, size = {size - 12})"
        )
    what = "batch" if batch.magic >= 2 else "message"
    return (
        f"the {what} is corrupt: Record is corrupt (stored crc = {batch.checksum}, "
        f"computed crc = {batch.compute_checksum()})"
    )
