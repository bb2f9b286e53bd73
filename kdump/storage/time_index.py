"""The time index (``<base offset>.timeindex``): Kafka's ``TimeIndex``.

A flat array of 12-byte slots: a timestamp (int64) and a relative offset (int32), no header.  An entry
(T, O) says that the largest timestamp seen up to offset O is T.  Like the offset index the file is
preallocated and trimmed on roll or clean close, and Kafka counts a zero tail as entries when it opens the file
(``length // 12``).  The time index keeps its last slot free for the entry written on roll; that only matters
for writers.

Read through a guarded read-only map, in pieces; see :mod:`kdump.storage.offset_index` for the shared slot search.
"""

from __future__ import annotations

import struct
from collections.abc import Iterable, Iterator
from typing import TYPE_CHECKING, NamedTuple

from kdump.errors import CorruptIndexError
from kdump.storage.abstract_index import AbstractIndex, largest_lower_bound_slot, wrap_int64

if TYPE_CHECKING:
    from kdump.storage.record import Record

__all__ = [
    "NO_TIMESTAMP",
    "RULE_LAST_OFFSET",
    "RULE_MAX_TIMESTAMP_RECORD",
    "TimeIndex",
    "TimestampOffset",
    "entry_rule",
    "first_record_with_timestamp",
]

ENTRY_SIZE = 12
"""Bytes per time-index slot: timestamp int64, relative offset int32."""

NO_TIMESTAMP = -1
"""Kafka's ``RecordBatch.NO_TIMESTAMP``."""

_SLOT = struct.Struct(">qi")

#: Which offset a broker writes beside a batch's max timestamp.  Kafka 3.8 and later (KAFKA-16310) write the
#: last offset of the batch (its "shallow" offset), as did every broker for compressed or re-built batches.
RULE_LAST_OFFSET = "last-offset"
#: Before 3.8, a leader appending an uncompressed batch wrote the offset of the *first record holding the
#: batch's max timestamp* (``LogValidator.assignOffsetsNonCompressed``: ``record.timestamp() > max`` keeps the
#: first of equal timestamps; with LogAppendTime every record holds it, so the base offset).  Both name an
#: offset inside the batch whose max timestamp the entry records; a broker's lookup
#: (``LogSegment.findOffsetByTimestamp``) only uses the entry's offset to find a position to scan from, so both
#: answer lookups correctly.
RULE_MAX_TIMESTAMP_RECORD = "max-timestamp-record"


def entry_rule(
    entry_offset: int, entry_timestamp: int, base_offset: int, last_offset: int, max_timestamp: int
) -> str | None:
    """Which rule a time-index entry ``(entry_timestamp, entry_offset)`` follows for the batch holding
    ``entry_offset`` (offsets ``base_offset..last_offset``, max timestamp ``max_timestamp``): one of
    :data:`RULE_LAST_OFFSET` and :data:`RULE_MAX_TIMESTAMP_RECORD`, or None when it follows neither (the
    timestamp is not the batch's max, or the offset is outside it).  Whether the record at a mid-batch offset
    really is the first to hold the max timestamp needs the records: :func:`first_record_with_timestamp`."""
    if entry_timestamp != max_timestamp:
        return None
    if entry_offset == last_offset:
        return RULE_LAST_OFFSET
    if base_offset <= entry_offset < last_offset:
        return RULE_MAX_TIMESTAMP_RECORD
    return None


def first_record_with_timestamp(records: Iterable[Record], timestamp: int) -> int | None:
    """The offset of the first of ``records`` (a batch's decoded records) whose timestamp is ``timestamp``."""
    for record in records:
        if record.timestamp == timestamp:
            return int(record.offset)
    return None


class TimestampOffset(NamedTuple):
    """One time-index entry (Kafka's ``TimestampOffset``): a timestamp and an absolute offset."""

    timestamp: int
    offset: int


class TimeIndex(AbstractIndex):
    """A read-only view of a ``.timeindex`` file with Kafka's ``TimeIndex`` semantics.

    ``entry_count`` is ``length // 12`` (zero tail included), ``entry(i)``/iteration cover every slot and
    :meth:`dump_entries` stops where DumpLogSegments stops (first later slot whose relative offset is 0).
    I/O errors (e.g. a missing file) propagate as :class:`OSError`.
    """

    ENTRY_SIZE = ENTRY_SIZE

    # -- entries -------------------------------------------------------------------------------------------

    def _timestamp_at(self, n: int) -> int:
        timestamp: int = _SLOT.unpack_from(self._data, n * ENTRY_SIZE)[0]  # unpack_from's values are Any
        return timestamp

    def entry(self, n: int) -> TimestampOffset:
        """Slot ``n`` as (timestamp, absolute offset) (Kafka's ``TimeIndex.entry``); IndexError when out of range."""
        if not 0 <= n < self.entry_count:
            raise IndexError(
                f"Attempt to fetch the {n}th entry from time index {self.absolute_path} "
                f"which has size {self.entry_count}"
            )
        timestamp, relative = _SLOT.unpack_from(self._data, n * ENTRY_SIZE)
        return TimestampOffset(timestamp, wrap_int64(self.base_offset + relative))

    def __iter__(self) -> Iterator[TimestampOffset]:
        """Every slot in file order, zero tail included."""
        base = self.base_offset
        for _first, view in self.pieces():
            for timestamp, relative in _SLOT.iter_unpack(view):
                yield TimestampOffset(timestamp, wrap_int64(base + relative))

    @property
    def last_entry(self) -> TimestampOffset:
        """The last slot, or (-1, base offset) when there is none (Kafka's ``lastEntry``).  For an untrimmed
        index this is the zero slot (0, base offset)."""
        if self.entry_count == 0:
            return TimestampOffset(NO_TIMESTAMP, self.base_offset)
        return self.entry(self.entry_count - 1)

    # -- lookups -------------------------------------------------------------------------------------------

    def lookup(self, target_timestamp: int) -> TimestampOffset:
        """Largest entry with timestamp <= ``target_timestamp``, else (-1, base offset) (Kafka's
        ``TimeIndex.lookup``, with its exact warm-section binary search)."""
        slot = largest_lower_bound_slot(self.entry_count, self._timestamp_at, target_timestamp, ENTRY_SIZE)
        if slot == -1:
            return TimestampOffset(NO_TIMESTAMP, self.base_offset)
        return self.entry(slot)

    # -- checks --------------------------------------------------------------------------------------------

    def sanity_check(self) -> None:
        """Kafka 4.0's ``TimeIndex.sanityCheck``, same checks, order and message text.

        1. last timestamp < first timestamp (an untrimmed index whose first timestamp is > 0 fails here);
        2. last offset < base offset;
        3. length not a multiple of 12.
        """
        if self.entry_count != 0:
            last = self.last_entry
            first_timestamp = self._timestamp_at(0)
            last_position = (self.entry_count - 1) * ENTRY_SIZE
            if last.timestamp < first_timestamp:
                raise CorruptIndexError(
                    f"Corrupt time index found, time index file ({self.absolute_path}) has non-zero size but "
                    f"the last timestamp is {last.timestamp} which is less than the first timestamp "
                    f"{first_timestamp}",
                    path=self.path,
                    position=last_position,
                )
            if last.offset < self.base_offset:
                raise CorruptIndexError(
                    f"Corrupt time index found, time index file ({self.absolute_path}) has non-zero size but "
                    f"the last offset is {last.offset} which is less than the first offset {self.base_offset}",
                    path=self.path,
                    position=last_position,
                )
        if self.length % ENTRY_SIZE != 0:
            raise CorruptIndexError(
                f"Time index file {self.absolute_path} is corrupt, found {self.length} bytes which is neither "
                f"positive nor a multiple of {ENTRY_SIZE}",
                path=self.path,
                position=self.entry_count * ENTRY_SIZE,
            )

    def __repr__(self) -> str:
        return f"TimeIndex(path={self.path!r}, base_offset={self.base_offset}, entries={self.entry_count})"
