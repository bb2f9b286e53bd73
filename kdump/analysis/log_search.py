"""Finding an offset or a timestamp in a partition the way a broker does, reading as little as it does.

The searches are functions of a :class:`~kdump.storage.local_log.LocalLog` (the partition directory as listed
by ``LocalLog.scan_segments``, or ``LocalLog.scan``: its names only, no file opened): :func:`find_offset`,
:func:`find_timestamp`, and :func:`log_start` for the log start offset they use.

**Offset** (the fetch path: ``LocalLog.read`` → ``LogSegment.read`` → ``translateOffset``):

1. the segment is the one with the greatest base offset at or below the offset (a binary search over the
   segments with a ``.log``; no file is opened to choose it);
2. the segment's offset index gives the largest entry at or below the offset (``OffsetIndex.lookup``, a
   binary search touching O(log n) entries of the memory-mapped ``.index``);
3. batch headers are read from that entry's position until the first batch whose last offset is at or above
   the offset (``FileRecords.searchForOffsetWithSize``) -- at most about ``index.interval.bytes`` plus one
   batch when the index is sound;
4. when the segment has no such batch, the next segment's first batch is the answer (the broker's read loop
   moves on the same way), which is how an offset in a gap at the end of a segment resolves.

**Timestamp** (``ListOffsets``: ``UnifiedLog.fetchOffsetByTimestamp`` → ``LogSegment.findOffsetByTimestamp``):
the first segment, in offset order, whose largest timestamp (its time index's last entry, 12 bytes read per
segment) is at or after the target; in it, the time index's largest entry at or below the target, the offset
index's entry for ``max(that offset, log start offset)``, and a scan from there for the first batch whose max
timestamp is at or after the target and, inside it, the first record with a timestamp at or after the target
and an offset at or after the log start offset.

Indexes are trusted only as far as they can be checked cheaply: an index that is missing, fails Kafka's sanity
check, is not a whole number of entries or ends in never-trimmed zero slots is not used (the scan starts at
the segment's first byte), and an index entry whose position does not hold a valid batch ending at or before
the entry's offset is discarded the same way.  Every such fallback is recorded in :attr:`SearchResult.notes`.

The answer's batch is decoded from a private copy of its bytes, so the result stays usable after the files
are closed (``batch.position`` is then 0; :attr:`SearchResult.position` is the position in the segment).
"""

from __future__ import annotations

import bisect
import os
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, NamedTuple, TypeVar

from kdump.errors import KdumpError
from kdump.storage import locations, naming
from kdump.storage.abstract_index import largest_lower_bound_slot
from kdump.storage.byte_source import source_of
from kdump.storage.checkpoint import LOG_START_OFFSET_CHECKPOINT_FILE
from kdump.storage.file_records import FileRecords, RecordBatch
from kdump.storage.log_segment import LogSegment
from kdump.storage.offset_index import ENTRY_SIZE as OFFSET_ENTRY_SIZE
from kdump.storage.offset_index import OffsetIndex
from kdump.storage.record import Record
from kdump.storage.record_batch import RECORD_BATCH_OVERHEAD
from kdump.storage.time_index import ENTRY_SIZE as TIME_ENTRY_SIZE
from kdump.storage.time_index import NO_TIMESTAMP, TimeIndex, entry_rule

if TYPE_CHECKING:
    from kdump.storage.local_log import LocalLog

__all__ = [
    "FOUND",
    "GAP",
    "BELOW_START",
    "BEYOND_END",
    "NOT_FOUND",
    "EMPTY",
    "IndexEntryUsed",
    "LogStart",
    "SearchResult",
    "TimeIndexEntryUsed",
    "find_offset",
    "find_timestamp",
    "log_start",
    "offset_start_position",
    "timestamp_start_position",
]

FOUND = "found"
#: No record has the offset; the answer is the next record (compacted away, or never written).
GAP = "gap"
BELOW_START = "below-log-start"
BEYOND_END = "beyond-log-end"
#: ``--timestamp``: no record at or after the timestamp.
NOT_FOUND = "not-found"
#: The directory holds no ``.log``.
EMPTY = "empty"

LOG_START_OFFSET_CHECKPOINT = LOG_START_OFFSET_CHECKPOINT_FILE

_EMPTY_TIME_INDEX = "it is empty"


@dataclass(frozen=True)
class IndexEntryUsed:
    """The offset-index entry a lookup used; ``slot`` -1 is the lookup's "no entry" answer (base offset, 0)."""

    slot: int
    offset: int
    position: int


@dataclass(frozen=True)
class TimeIndexEntryUsed:
    """The time-index entry a lookup used; ``slot`` -1 is the "no entry" answer (-1, base offset)."""

    slot: int
    timestamp: int
    offset: int


@dataclass
class SearchResult:
    """The outcome of :func:`find_offset` or :func:`find_timestamp`."""

    #: "offset" or "timestamp", and the value searched for.
    kind: str
    target: int
    #: One of FOUND, GAP, BELOW_START, BEYOND_END, NOT_FOUND, EMPTY.
    status: str
    log_start_offset: int
    #: Where the log start offset came from.
    log_start_source: str
    segment: LogSegment | None = None
    index_entry: IndexEntryUsed | None = None
    time_index_entry: TimeIndexEntryUsed | None = None
    #: Byte position of the answer's batch in its segment.
    position: int | None = None
    batch: RecordBatch | None = None
    #: The record with the offset (FOUND), the first record after the gap (GAP), or the timestamp's record.
    record: Record | None = None
    #: The log end offset, when the search had to find it (BEYOND_END).
    log_end_offset: int | None = None
    #: The largest timestamp in the log (NOT_FOUND for a timestamp).
    largest_timestamp: int | None = None
    #: Log bytes read by the scans (batch headers, plus the answer's batch).
    scanned_bytes: int = 0
    #: Fallbacks taken (an index not used, an entry discarded) and other remarks, as sentences.
    notes: list[str] = field(default_factory=list)

    @property
    def found(self) -> bool:
        return self.status == FOUND


class LogStart(NamedTuple):
    """The log start offset a search uses, and where it comes from (as the messages say it)."""

    offset: int
    source: str


def log_start(log: LocalLog) -> LogStart:
    """The partition's log start offset as a broker computes it when it loads the log: the greater of the first
    segment's base offset and the partition's entry in ``../log-start-offset-checkpoint``."""
    bases = log.log_base_offsets
    first = bases[0] if bases else 0
    source = "the first segment's base offset"
    # The name of the directory as given ("." included), as Kafka's File.getAbsoluteFile would see it.
    name = naming.parse_partition_dir(os.path.basename(os.path.abspath(log.directory)))
    if name is None:
        return LogStart(first, source)
    parent = os.path.dirname(os.path.abspath(log.directory))
    path = os.path.join(parent, LOG_START_OFFSET_CHECKPOINT)
    if not locations.exists(path):
        return LogStart(first, source)
    from kdump.storage.offset_checkpoint import read_offset_checkpoint  # needed only here

    try:
        offsets = read_offset_checkpoint(path).offsets()
    except (KdumpError, OSError, ValueError):
        return LogStart(first, source + f" ({path} is unreadable)")
    checkpointed = offsets.get((name.topic, name.partition))
    start = log.log_start_offset(checkpointed)
    if start is None and checkpointed is not None and checkpointed > 0:
        start = checkpointed  # no segment yet: the checkpoint's entry alone
    if start is None or start == first:
        return LogStart(first, source)
    return LogStart(start, LOG_START_OFFSET_CHECKPOINT)


# -- offset -----------------------------------------------------------------------------------------------------


def find_offset(log: LocalLog, offset: int, start: LogStart | None = None) -> SearchResult:
    """Where ``offset`` is in the partition ``log`` (see the module docstring), with the log start offset
    ``start`` (default: :func:`log_start`).  Corrupt batches met on the way raise :class:`KdumpError` naming the
    file and position."""
    start = log_start(log) if start is None else start
    result = SearchResult("offset", offset, EMPTY, start.offset, start.source)
    bases = log.log_base_offsets
    if not bases:
        return result
    if offset < start.offset:
        result.status = BELOW_START
        return result
    # the segment that can hold it; the first one for an offset below every segment (a log start offset given
    # below the first base offset): the next records are there
    k = max(0, bisect.bisect_right(bases, offset) - 1)
    log_end = bases[-1]
    for i in range(k, len(bases)):
        segment = log.log_segment(i)
        with segment.open_log() as records:
            if i == k:
                position, entry = _offset_index_position(segment, records, offset, result)
                result.index_entry = entry
            else:
                position = 0
            batch, last = _scan_for_offset(records, position, offset, result)
            if last is not None:
                log_end = max(log_end, last + 1)
            if batch is not None:
                result.segment = segment
                _take_batch(records, batch, result)
                _pick_offset_record(result, offset)
                return result
    result.status = BEYOND_END
    result.log_end_offset = log_end
    return result


def _offset_index_position(
    segment: LogSegment, records: FileRecords, target: int, result: SearchResult
) -> tuple[int, IndexEntryUsed | None]:
    """The position to scan from for ``target`` and the index entry that gave it (None: no usable index)."""
    if not segment.has(naming.INDEX_FILE_SUFFIX):
        result.notes.append(f"{segment.index_path} is missing: scanned the segment from its first byte")
        return 0, None
    index = _map_index(OffsetIndex, segment, naming.INDEX_FILE_SUFFIX)
    reason = _unusable(index, OFFSET_ENTRY_SIZE)
    if reason is not None:
        result.notes.append(f"{segment.index_path} is not used ({reason}): scanned from the first byte")
        return 0, None
    slot = largest_lower_bound_slot(index.entry_count, index._offset_at, target, OFFSET_ENTRY_SIZE)
    if slot == -1:
        return 0, IndexEntryUsed(-1, segment.base_offset, 0)
    entry = index.entry(slot)
    used = IndexEntryUsed(slot, entry.offset, entry.position)
    if not _entry_holds_batch(records, entry.position, entry.offset):
        result.notes.append(
            f"{segment.index_path} entry {slot} (offset {entry.offset} position {entry.position}) does not "
            "point at a valid batch ending at or before its offset: scanned from the first byte instead"
        )
        return 0, None
    return entry.position, used


def _scan_for_offset(
    records: FileRecords, start: int, target: int, result: SearchResult
) -> tuple[RecordBatch | None, int | None]:
    """First batch from ``start`` whose last offset is >= ``target``, and the last offset seen."""
    last = None
    batch = None
    try:
        for batch in records.batches(start):
            result.scanned_bytes += batch.size_in_bytes
            if batch.last_offset >= target:
                return batch, batch.last_offset
            last = batch.last_offset
    except KdumpError as e:
        raise e.located(records.path, batch.position if batch is not None else start) from None
    return None, last


def _take_batch(records: FileRecords, batch: RecordBatch, result: SearchResult) -> None:
    position = batch.position
    length = min(records.file_size - position, max(batch.size_in_bytes, RECORD_BATCH_OVERHEAD))
    copy = bytes(records.buf[position : position + length])
    result.position = position
    try:
        result.batch = next(FileRecords.from_bytes(copy, records.path).batches())
    except KdumpError as e:
        raise e.located(records.path, position) from None


def _records(result: SearchResult) -> list[Record]:
    assert result.batch is not None and result.segment is not None
    try:
        return list(result.batch.records())
    except KdumpError as e:
        raise KdumpError(
            f"cannot read the records of the batch there: {e.message}",
            path=result.segment.log_path,
            position=result.position,
        ) from None


def _pick_offset_record(result: SearchResult, offset: int) -> None:
    for record in _records(result):
        if record.offset == offset:
            result.record = record
            result.status = FOUND
            return
        if record.offset > offset:
            result.record = record
            result.status = GAP
            return
    result.status = GAP


# -- timestamp --------------------------------------------------------------------------------------------------


def find_timestamp(log: LocalLog, timestamp: int, start: LogStart | None = None) -> SearchResult:
    """The first offset of the partition ``log`` whose record timestamp is at or after ``timestamp``, with the
    semantics of Kafka's ListOffsets (see the module docstring) and the log start offset ``start`` (default:
    :func:`log_start`).  Segments wholly below the log start offset are skipped (a broker deletes them)."""
    start = log_start(log) if start is None else start
    result = SearchResult("timestamp", timestamp, EMPTY, start.offset, start.source)
    bases = log.log_base_offsets
    if not bases:
        return result
    first = max(0, bisect.bisect_right(bases, start.offset) - 1)
    largest = NO_TIMESTAMP
    dir_fd = _open_dir(log.directory)
    try:
        for i in range(first, len(bases)):
            held = log.log_segment(i)
            if held.directory != log.directory:  # a tiered partition's remote segment: its objects' names
                segment_largest, reason = _held_largest_timestamp(held)
            else:
                segment_largest, reason = _indexed_largest_timestamp(log.directory, dir_fd, bases[i])
            if reason is not None:
                segment_largest = _largest_timestamp_from_log(log.log_segment(i), reason, result)
            largest = max(largest, segment_largest)
            if segment_largest >= timestamp:
                segment = result.segment = log.log_segment(i)
                _find_in_segment(segment, timestamp, start.offset, result)
                return result
    finally:
        if dir_fd is not None:
            os.close(dir_fd)
    result.status = NOT_FOUND
    result.largest_timestamp = largest
    return result


def _largest_timestamp_from_log(segment: LogSegment, reason: str, result: SearchResult) -> int:
    """The largest batch max timestamp of a segment whose time index cannot tell it."""
    largest = NO_TIMESTAMP
    with segment.open_log() as records:
        batch = None
        try:
            for batch in records.batches():
                result.scanned_bytes += batch.size_in_bytes
                largest = max(largest, batch.max_timestamp)
        except KdumpError as e:
            raise e.located(records.path, batch.position if batch is not None else 0) from None
    if largest != NO_TIMESTAMP or reason != _EMPTY_TIME_INDEX:
        result.notes.append(
            f"{segment.time_index_path} is not used ({reason}): read the batch headers of "
            f"{segment.log_path} for its largest timestamp"
        )
    return largest


def _find_in_segment(segment: LogSegment, timestamp: int, start_offset: int, result: SearchResult) -> None:
    time_entry = _time_index_entry(segment, timestamp, result)
    result.time_index_entry = time_entry
    with segment.open_log() as records:
        position = 0
        check = None
        if time_entry is not None:
            position, result.index_entry = _offset_index_position(
                segment, records, max(time_entry.offset, start_offset), result
            )
            # The scan passes the entry's batch only when it starts at or before it.
            if time_entry.slot >= 0 and time_entry.offset >= start_offset:
                check = time_entry
        found, contradicted = _scan_for_timestamp(records, position, timestamp, start_offset, check, result)
        if contradicted and time_entry is not None:
            result.notes.append(
                f"{segment.time_index_path} entry {time_entry.slot} (timestamp {time_entry.timestamp} "
                f"offset {time_entry.offset}) does not match the log: scanned from the first byte instead"
            )
            result.index_entry = None
            result.time_index_entry = None
            found, _ = _scan_for_timestamp(records, 0, timestamp, start_offset, None, result)
        if found is None:
            result.status = NOT_FOUND
            return
        batch, record = found
        _take_batch(records, batch, result)
    # The record of the private copy: the one found reads the map (a legacy record lazily), closed by now.
    result.record = next((r for r in _records(result) if r.offset == record.offset), record)
    result.status = FOUND


def _time_index_entry(segment: LogSegment, timestamp: int, result: SearchResult) -> TimeIndexEntryUsed | None:
    if not segment.has(naming.TIME_INDEX_FILE_SUFFIX):
        return None
    index = _map_index(TimeIndex, segment, naming.TIME_INDEX_FILE_SUFFIX)
    reason = _unusable(index, TIME_ENTRY_SIZE)
    if reason is not None:
        result.notes.append(f"{segment.time_index_path} is not used ({reason}): scanned from the first byte")
        return None
    slot = largest_lower_bound_slot(index.entry_count, index._timestamp_at, timestamp, TIME_ENTRY_SIZE)
    if slot == -1:
        return TimeIndexEntryUsed(-1, NO_TIMESTAMP, segment.base_offset)
    entry = index.entry(slot)
    return TimeIndexEntryUsed(slot, entry.timestamp, entry.offset)


def _scan_for_timestamp(
    records: FileRecords,
    start: int,
    timestamp: int,
    start_offset: int,
    entry: TimeIndexEntryUsed | None,
    result: SearchResult,
) -> tuple[tuple[RecordBatch, Record] | None, bool]:
    """Kafka's ``FileRecords.searchForTimestamp`` from ``start``: the first record, in a batch whose max
    timestamp is at or after ``timestamp``, with a timestamp at or after it and an offset at or after
    ``start_offset``.  The second value says the batches contradict the time-index ``entry`` (which says
    the batch holding its offset, at its end or (before Kafka 3.8) at the first record with the batch's max
    timestamp, is the first to reach its timestamp); the scan then stops with nothing."""
    batch = None
    try:
        for batch in records.batches(start):
            result.scanned_bytes += batch.size_in_bytes
            if entry is not None and batch.last_offset >= entry.offset:
                if (
                    entry_rule(
                        entry.offset,
                        entry.timestamp,
                        batch.base_offset,
                        batch.last_offset,
                        batch.max_timestamp,
                    )
                    is None
                ):
                    return None, True
                entry = None
            if batch.max_timestamp >= timestamp:
                if entry is not None:
                    return None, True  # a batch before the entry's already reaches its timestamp
                for record in batch.records():
                    if record.timestamp >= timestamp and record.offset >= start_offset:
                        return (batch, record), False
    except KdumpError as e:
        raise e.located(records.path, batch.position if batch is not None else start) from None
    return None, False


# -- per-segment seeks (for readers that scan forward from an offset or a timestamp) -----------------------------


def offset_start_position(segment: LogSegment, records: FileRecords, offset: int) -> int:
    """Where a forward scan for ``offset`` may start in ``segment``: the position of the offset-index entry a
    broker would use, when that entry is checked to name a valid batch ending at or before its offset; else 0."""
    scratch = SearchResult("offset", offset, EMPTY, 0, "")
    return _offset_index_position(segment, records, offset, scratch)[0]


def timestamp_start_position(segment: LogSegment, records: FileRecords, timestamp: int) -> int:
    """Where a forward scan for the first record at or after ``timestamp`` may start in ``segment``: the time
    index's largest entry at or below it, then the offset index's position for that entry's offset, used only
    when the batch holding the entry's offset (as its last offset or, before Kafka 3.8, as the first record with
    the max timestamp) has the entry's timestamp as its max (the time index records
    the largest timestamp so far, so no earlier batch can hold a later one); else 0."""
    scratch = SearchResult("timestamp", timestamp, EMPTY, 0, "")
    entry = _time_index_entry(segment, timestamp, scratch)
    if entry is None or entry.slot < 0:
        return 0
    position, _ = _offset_index_position(segment, records, entry.offset, scratch)
    if position == 0:
        return 0
    try:
        for batch in records.batches(position):
            if batch.last_offset >= entry.offset:
                rule = entry_rule(
                    entry.offset, entry.timestamp, batch.base_offset, batch.last_offset, batch.max_timestamp
                )
                return 0 if rule is None else position
    except KdumpError:
        return 0
    return 0


# -- helpers -------------------------------------------------------------------------------------------------

_Index = TypeVar("_Index", OffsetIndex, TimeIndex)


def _map_index(cls: type[_Index], segment: LogSegment, suffix: str) -> _Index:
    """An index over a read-only memory map of the file (through the SIGBUS guard: a broker may trim it while
    it is read): a lookup reads only the pages its probes touch.  A segment's index kept elsewhere (its
    :meth:`~kdump.storage.log_segment.LogSegment.source`: a tiered segment's) is read whole."""
    try:
        index: _Index = cls.open(segment.source(suffix), segment.base_offset)
        return index
    except OSError as e:
        raise KdumpError(e.strerror or str(e), path=segment.path(suffix)) from None


def _unusable(index: OffsetIndex | TimeIndex, entry_size: int) -> str | None:
    """Why an index cannot be trusted for a lookup, or None."""
    if index.length % entry_size:
        return f"{index.length} bytes is not a whole number of {entry_size}-byte entries"
    count = index.entry_count
    if count > 1 and index.slot_is_zero(count - 1):
        return "it ends in zero-filled slots (never trimmed)"
    try:
        index.sanity_check()
    except KdumpError as e:
        return f"it fails Kafka's sanity check: {e.message}"
    return None


def _entry_holds_batch(records: FileRecords, position: int, offset: int) -> bool:
    """An offset-index entry is usable when a valid batch starts at its position and ends at or before its
    offset (a follower's multi-batch append indexes the last offset of a later batch)."""
    if position < 0 or position >= records.file_size:
        return False
    try:
        for batch in records.batches(position):
            return batch.last_offset <= offset and batch.is_valid()
    except KdumpError:
        return False
    return False


def _open_dir(directory: str) -> int | None:
    """A descriptor of the directory, to open its files without resolving its path each time (None where
    the platform cannot)."""
    if os.open not in os.supports_dir_fd:
        return None
    try:
        return os.open(directory, os.O_RDONLY | getattr(os, "O_DIRECTORY", 0))
    except OSError:
        return None


def _stored_largest_timestamp(directory: str, base_offset: int) -> tuple[int, str | None]:
    """:func:`_indexed_largest_timestamp` of a segment in a store: the time index's size, then its last entry
    (one ranged read of 12 bytes)."""
    url = os.path.join(directory, naming.offset_to_filename(base_offset, naming.TIME_INDEX_FILE_SUFFIX))
    try:
        if not locations.exists(url):
            return NO_TIMESTAMP, "it is missing"
        size = locations.getsize(url)
        if size % TIME_ENTRY_SIZE:
            return NO_TIMESTAMP, f"{size} bytes is not a whole number of {TIME_ENTRY_SIZE}-byte entries"
        if size == 0:
            log_url = os.path.join(directory, naming.offset_to_filename(base_offset, naming.LOG_FILE_SUFFIX))
            return (
                (NO_TIMESTAMP, None) if locations.getsize(log_url) == 0 else (NO_TIMESTAMP, _EMPTY_TIME_INDEX)
            )
        last = source_of(url).read(size - TIME_ENTRY_SIZE, size)
    except OSError as e:
        return NO_TIMESTAMP, e.strerror or str(e)
    return _last_time_entry(last, size, base_offset)


def _held_largest_timestamp(segment: LogSegment) -> tuple[int, str | None]:
    """:func:`_indexed_largest_timestamp` of a segment kept elsewhere (a tiered partition's remote segment,
    its time index an object or part of one: its :meth:`~kdump.storage.log_segment.LogSegment.source`), read
    whole (an index is small)."""
    from kdump.storage.byte_source import read_all

    if not segment.has(naming.TIME_INDEX_FILE_SUFFIX):
        return NO_TIMESTAMP, "it is missing"
    try:
        data = read_all(segment.source(naming.TIME_INDEX_FILE_SUFFIX))
    except (OSError, KdumpError) as e:
        return NO_TIMESTAMP, getattr(e, "strerror", None) or str(e)
    size = len(data)
    if size % TIME_ENTRY_SIZE:
        return NO_TIMESTAMP, f"{size} bytes is not a whole number of {TIME_ENTRY_SIZE}-byte entries"
    if size == 0:
        return (NO_TIMESTAMP, None) if segment.log_size == 0 else (NO_TIMESTAMP, _EMPTY_TIME_INDEX)
    return _last_time_entry(data[size - TIME_ENTRY_SIZE :], size, segment.base_offset)


def _indexed_largest_timestamp(
    directory: str, dir_fd: int | None, base_offset: int
) -> tuple[int, str | None]:
    """A segment's largest timestamp from the last entry of its time index (the entry written when the segment
    was rolled or closed), reading 12 bytes; or (-1, why) when the index cannot be trusted for it."""
    name = naming.offset_to_filename(base_offset, naming.TIME_INDEX_FILE_SUFFIX)
    if locations.is_url(directory):
        return _stored_largest_timestamp(directory, base_offset)
    try:
        if dir_fd is not None:
            fd = os.open(name, os.O_RDONLY, dir_fd=dir_fd)
        else:
            fd = os.open(os.path.join(directory, name), os.O_RDONLY)
    except FileNotFoundError:
        return NO_TIMESTAMP, "it is missing"
    except OSError as e:
        return NO_TIMESTAMP, e.strerror or str(e)
    try:
        size = os.lseek(fd, 0, os.SEEK_END)
        if size % TIME_ENTRY_SIZE:
            return NO_TIMESTAMP, f"{size} bytes is not a whole number of {TIME_ENTRY_SIZE}-byte entries"
        if size == 0:
            log_name = naming.offset_to_filename(base_offset, naming.LOG_FILE_SUFFIX)
            log_size = (
                os.stat(log_name, dir_fd=dir_fd).st_size
                if dir_fd is not None
                else os.path.getsize(os.path.join(directory, log_name))
            )
            return (NO_TIMESTAMP, None) if log_size == 0 else (NO_TIMESTAMP, _EMPTY_TIME_INDEX)
        last = os.pread(fd, TIME_ENTRY_SIZE, size - TIME_ENTRY_SIZE)
    except OSError as e:
        return NO_TIMESTAMP, e.strerror or str(e)
    finally:
        os.close(fd)
    return _last_time_entry(last, size, base_offset)


def _last_time_entry(last: bytes, size: int, base_offset: int) -> tuple[int, str | None]:
    """The largest timestamp a time index of ``size`` bytes ending in ``last`` (its last entry) holds, or (-1,
    why) when that entry cannot be trusted."""
    if len(last) < TIME_ENTRY_SIZE:
        return NO_TIMESTAMP, "it could not be read"
    timestamp, offset = TimeIndex.from_bytes(last, base_offset).entry(0)
    if size > TIME_ENTRY_SIZE and not any(last):
        return NO_TIMESTAMP, "it ends in zero-filled slots (never trimmed)"
    if offset < base_offset:
        return NO_TIMESTAMP, "it fails Kafka's sanity check (its last offset is below the base offset)"
    return timestamp, None
