"""Checking a segment's indexes against its log: everything a broker relies on when it uses an index.

For each segment (:class:`~kdump.storage.log_segment.LogSegment`) :func:`verify_segment` runs Kafka's own sanity
checks (the ones a broker runs at start-up to decide whether to rebuild an index), then checks every entry of
the offset and time indexes against the batches of the ``.log``, in one shallow pass over the log:

* an offset-index entry ``(offset, position)`` must name a position where a batch starts, and ``offset`` must be
  the last offset of that batch, or of a later batch of the same append (Kafka 4.0's ``LogSegment.append`` indexes
  an append of several batches, a follower's fetch or the cleaner's copy, once: its largest offset at the
  position of its first batch; 4.1 and ``LogSegment.recover`` index each batch), that starts before the next
  entry's position; of a batch the cleaner rewrote (fewer records than offsets) the entry names its last
  record's offset (``MemoryRecords.filterTo``'s ``maxOffset``);
* a time-index entry ``(timestamp, offset)`` must name an offset of a batch whose max timestamp is
  ``timestamp``: its last offset (Kafka 3.8+, KAFKA-16310) or, as brokers before 3.8 wrote for uncompressed
  batches, the first record holding that timestamp (checked by decoding that one batch); which rule each
  segment follows is counted in :attr:`SegmentVerification.time_index_rules`.  No earlier batch may have a
  later timestamp (the index records the max so far);
* offsets and positions strictly increase, time-index timestamps strictly increase and offsets never decrease;
* nothing points past the end of the log; a zero-filled tail (a preallocated index never trimmed) is reported;
* a ``.log`` without its ``.index``/``.timeindex``, or index files without a ``.log``, are reported;
* a ``.txnindex`` must be whole 34-byte entries that pass Kafka's sanity check.

Only the index entries are held in memory (an index file is at most ``segment.index.bytes``, 10 MiB by
default); the log is streamed, batch headers only, so checking runs at the speed of a shallow dump.
"""

from __future__ import annotations

import struct
from array import array
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, field
from itertools import islice
from operator import le, lt
from typing import Any, overload

from kdump.analysis.header_run import HeaderRun, IndexEntries, RunLimits, run_walk
from kdump.analysis.segment_walk import SegmentVisitor
from kdump.errors import KdumpError, UnreadableFileError
from kdump.problem import UNREADABLE, Problem, problem
from kdump.storage import naming
from kdump.storage.file_records import RecordBatch
from kdump.storage.log_segment import LogSegment
from kdump.storage.offset_index import ENTRY_SIZE as OFFSET_ENTRY_SIZE
from kdump.storage.offset_index import OffsetIndex, OffsetPosition
from kdump.storage.record import Record
from kdump.storage.time_index import ENTRY_SIZE as TIME_ENTRY_SIZE
from kdump.storage.time_index import (
    NO_TIMESTAMP,
    RULE_LAST_OFFSET,
    RULE_MAX_TIMESTAMP_RECORD,
    TimeIndex,
    TimestampOffset,
    entry_rule,
    first_record_with_timestamp,
)
from kdump.storage.transaction_index import ENTRY_SIZE as TXN_ENTRY_SIZE
from kdump.storage.transaction_index import TransactionIndex

#: Every problem kind, with what it means (the man page lists the same).
PROBLEM_KINDS = {
    "sanity-check": "Kafka's start-up sanity check fails (a broker would rebuild this index)",
    "bad-length": "the file length is not a multiple of the entry size",
    "zero-tail": "zero-filled slots after the last entry (a preallocated index that was never trimmed)",
    "out-of-order": "an entry's offset, position or timestamp does not increase",
    "not-batch-start": "an offset-index position where no batch starts",
    "offset-mismatch": "an entry's offset is not the last offset of the batch it points at",
    "timestamp-mismatch": "a time-index timestamp is not the max timestamp of its batch, or an earlier batch "
    "has a later one",
    "past-end": "an entry points beyond the last batch of the log",
    "missing-index": "a .log without its .index or .timeindex",
    "orphaned-index": "index files without a .log",
    "txn-index": "a .txnindex with a partial entry or an entry Kafka's sanity check rejects",
    "log": "the .log itself cannot be read to its end (torn tail or corrupt batch framing)",
    "unreadable": "a file that cannot be opened or read",
}

#: The kind of the active segment's notes (not problems: a running broker's indexes look like this); its data:
#: ``about``, the kind of problem it would be elsewhere (``zero-tail`` or ``sanity-check``), and that kind's data.
ACTIVE_SEGMENT = "active-segment"


@dataclass
class SegmentVerification:
    """The result of :func:`verify_segment`."""

    segment: LogSegment
    problems: list[Problem] = field(default_factory=list)
    #: Findings that are not damage: the active segment's preallocated index files (kind ``active-segment``).
    notes: list[Problem] = field(default_factory=list)
    index_files: int = 0
    entries: int = 0
    log_bytes: int = 0
    #: Time-index entries on batches of more than one record, by the rule they follow (``time_index.RULE_*``).
    time_index_rules: dict[str, int] = field(default_factory=dict)
    #: The ``.log`` could not be opened (permissions, an I/O error): one ``unreadable`` problem, and nothing
    #: compared with it (no index entry is "beyond the end" of a log that was not read).
    unreadable_log: bool = False

    @property
    def time_index_rule(self) -> str | None:
        """``"pre-3.8"`` when some entry names the first record holding its batch's max timestamp before the
        batch's end (only brokers before Kafka 3.8 wrote those), ``"last-offset"`` when every entry names a
        batch's last offset (what 3.8+ writes, and what older brokers wrote for compressed batches or when the
        max was on the last record: the two rules cannot be told apart without the records), None when the
        segment has no entry on a batch of more than one record."""
        if self.time_index_rules.get(RULE_MAX_TIMESTAMP_RECORD):
            return "pre-3.8"
        if self.time_index_rules.get(RULE_LAST_OFFSET):
            return "last-offset"
        return None


@dataclass
class _Batch:
    position: int
    size: int
    base_offset: int
    last_offset: int
    max_timestamp: int
    magic: int
    #: Decodes the batch's records (used only for an index entry in the middle of the batch).
    records: Callable[[], Iterator[Record]] | None = None
    #: The v2 header's record count (None for v0/v1).
    count: int | None = None

    def last_record_offset(self) -> int | None:
        """The offset of the batch's last record when the cleaner rewrote it: a v2 batch that holds fewer
        records than its offset range (``MemoryRecords.filterTo`` keeps the original base and last offsets);
        None otherwise, or when its records cannot be read."""
        if (
            self.count is None
            or self.records is None
            or self.count >= self.last_offset - self.base_offset + 1
        ):
            return None
        last = None
        try:
            for record in self.records():
                last = record.offset
        except KdumpError:
            return None
        return last


def verify_segment(
    segment: LogSegment,
    *,
    progress: Callable[[int], None] | None = None,
    visit: Callable[[RecordBatch], None] | None = None,
    active: bool = False,
    also: Sequence[SegmentVisitor] = (),
) -> SegmentVerification:
    """Check the index files of ``segment`` against its log.  Never raises for bad content: every finding is
    a :class:`~kdump.problem.Problem` (its words: :mod:`kdump.render.problem_text`).  ``progress(n)`` is called with the number of log bytes read so far;
    ``visit(batch)`` with every batch of the log's one pass (how ``kdump verify`` checks the log itself in
    the same pass).  ``active``: the segment is its partition's active one (the highest base offset), whose
    zero-filled index tail is a running broker's preallocation: noted in ``notes``, not a problem.  ``also``:
    other readers of the same pass (:mod:`kdump.analysis.segment_walk`; their ``start`` and ``end`` are the
    caller's to call), ``kdump report``'s one walk."""
    result = SegmentVerification(segment)
    problems = result.problems
    index_suffixes = [
        s
        for s in (naming.INDEX_FILE_SUFFIX, naming.TIME_INDEX_FILE_SUFFIX, naming.TXN_INDEX_FILE_SUFFIX)
        if segment.has(s)
    ]
    result.index_files = len(index_suffixes)
    offset_index = _load(segment, naming.INDEX_FILE_SUFFIX, problems)
    time_index = _load(segment, naming.TIME_INDEX_FILE_SUFFIX, problems)
    if segment.has(naming.TXN_INDEX_FILE_SUFFIX):
        result.entries += _check_txn_index(segment, problems)
    if not segment.has(naming.LOG_FILE_SUFFIX):
        _report_orphans(segment, index_suffixes, problems)
        return result
    _report_missing_indexes(segment, problems)
    checks: list[_Checker] = []
    if isinstance(offset_index, OffsetIndex):
        checks.append(offset_checker := _OffsetIndexChecker(offset_index, problems))
        result.entries += len(offset_checker.pending)  # the written entries (a zero tail is reported)
    if isinstance(time_index, TimeIndex):
        checks.append(time_checker := _TimeIndexChecker(time_index, problems, result.time_index_rules))
        result.entries += len(time_checker.pending)
    if active and _preallocated(offset_index, time_index):
        _note_preallocation(result)
    walked = _walk_log(segment, checks, result, progress, visit, also)
    if walked is None:
        return result
    valid, end_offset = walked
    result.log_bytes = valid
    for check in checks:
        check.finish(valid, end_offset)
    if progress is not None:
        progress(valid)
    return result


def _report_orphans(segment: LogSegment, index_suffixes: list[str], problems: list[Problem]) -> None:
    for suffix in index_suffixes:
        problems.append(problem("orphaned-index", segment.path(suffix), base_offset=segment.base_offset))


def _report_missing_indexes(segment: LogSegment, problems: list[Problem]) -> None:
    for suffix in (naming.INDEX_FILE_SUFFIX, naming.TIME_INDEX_FILE_SUFFIX):
        if not segment.has(suffix):
            problems.append(
                problem("missing-index", segment.path(suffix), base_offset=segment.base_offset, suffix=suffix)
            )


def _walk_log(
    segment: LogSegment,
    checks: list[_Checker],
    result: SegmentVerification,
    progress: Callable[[int], None] | None,
    visit: Callable[[RecordBatch], None] | None,
    also: Sequence[SegmentVisitor] = (),
) -> tuple[int, int | None] | None:
    """The log's one pass: every batch to every check (and to ``visit``); a torn tail or a batch that cannot
    be read is a problem of the log.  Returns the valid bytes and the last offset read, or None when the log
    cannot be read at all (its indexes are then not compared with it)."""
    problems = result.problems
    # the indexes alone (verify-index, rebuild-index, the index half of a segment verify splits in two): no
    # reader judges a batch's CRC, so runs read the batch headers alone
    tail = _Tail(progress, crc=visit is not None or bool(also))
    try:
        with segment.open_log() as records:
            for v in also:
                v.opened(records)
            calls = [v.batch for v in also]
            readers: list[Any] = [*checks, *([] if visit is None else [visit]), *also, tail]
            for batch in records.batches(runs=run_walk(readers)):
                b = _Batch(
                    batch.position,
                    batch.size_in_bytes,
                    batch.base_offset,
                    batch.last_offset,
                    batch.max_timestamp,
                    batch.magic,
                    batch.records,
                    batch.count_or_none,
                )
                for check in checks:
                    check.batch(b)
                if visit is not None:
                    visit(batch)
                for call in calls:
                    call(batch)
                tail.last = b
                tail.epoch = batch.partition_leader_epoch if b.magic >= 2 else None
                if progress is not None and b.position >= tail.next_report:
                    progress(b.position)
                    tail.next_report = b.position + (64 << 20)
            last = tail.last
            valid = 0 if last is None else last.position + last.size
            invalid = records.invalid_bytes(valid)
            if invalid > 0:
                problems.append(problem("log", segment.log_path, valid, case="torn", bytes=invalid))
            for v in also:
                v.done(records, valid)
    except UnreadableFileError as e:
        for v in also:
            v.failed(e)
        problems.append(problem(UNREADABLE, segment.log_path, case="log", reason=e.message))
        result.unreadable_log = True
        return None
    except KdumpError as e:
        for v in also:
            v.failed(e)
        last = tail.last
        valid = 0 if last is None else last.position + last.size
        problems.append(problem("log", segment.log_path, e.position, message=e.message))
    return valid, None if last is None else last.last_offset


class _Tail:
    """The log pass's own reader of runs (:mod:`kdump.analysis.header_run`): the last batch read, and progress."""

    runs = True

    def __init__(self, progress: Callable[[int], None] | None, *, crc: bool = True) -> None:
        self.last: _Batch | None = None
        self.progress = progress
        self.next_report = 64 << 20
        #: False: no reader of the pass judges CRCs (the index checks alone), so runs check none.
        self.crc = crc
        #: The partition leader epoch of the last batch read (None: a legacy batch, or none read yet).
        self.epoch: int | None = None

    def limit(self, limits: RunLimits) -> None:
        if not self.crc:
            limits.crc = False
            # The index checks alone have no log checker to say where the previous batch ended and under which
            # leader epoch (a run needs both): the tail says it, so these passes too read runs, not one batch
            # at a time in Python (the bench segment's verify-index: 0.13 s in Python, see the commit).
            limits.previous(None if self.last is None else self.last.last_offset)
            limits.leader_epoch(self.epoch)

    def run(self, run: HeaderRun) -> None:
        self.last = _Batch(
            run.last_position,
            run.last_size,
            run.last_base,
            run.last_offset,
            run.last_max_timestamp,
            2,
            None,
            run.last_count,
        )
        if self.progress is not None and run.last_position >= self.next_report:
            self.progress(run.last_position)
            self.next_report = run.last_position + (64 << 20)


def _load(segment: LogSegment, suffix: str, problems: list[Problem]) -> OffsetIndex | TimeIndex | None:
    if not segment.has(suffix):
        return None
    path = segment.path(suffix)
    cls = OffsetIndex if suffix == naming.INDEX_FILE_SUFFIX else TimeIndex
    try:
        index: OffsetIndex | TimeIndex = cls.open(segment.source(suffix), segment.base_offset)
    except OSError as e:
        problems.append(problem(UNREADABLE, path, reason=e.strerror or str(e)))
        return None
    try:
        index.sanity_check()
    except KdumpError as e:
        problems.append(problem("sanity-check", path, e.position, message=e.message))
    if index.length % index.ENTRY_SIZE:
        problems.append(
            problem(
                "bad-length",
                path,
                index.entry_count * index.ENTRY_SIZE,
                length=index.length,
                entry_size=index.ENTRY_SIZE,
            )
        )
    return index


#: The smallest maximum index size taken for a broker's preallocation (one page: Kafka maps index files, and
#: its default ``segment.index.bytes`` is 10 MiB); a zero tail on smaller files is reported as damage.
MIN_PREALLOCATION = 4096


def _preallocated(
    offset_index: OffsetIndex | TimeIndex | None, time_index: OffsetIndex | TimeIndex | None
) -> bool:
    """Whether the index files' lengths are what ``LogSegment`` leaves when it opens an active segment: each
    file resized to one maximum size (``segment.index.bytes``) rounded down to whole entries, the same size for
    both (``AbstractIndex.resize``)."""
    low, high = MIN_PREALLOCATION, 1 << 31
    present = False
    for index in (offset_index, time_index):
        if index is None:
            continue
        present = True
        size = index.ENTRY_SIZE
        if index.length % size:
            return False
        # the maximum sizes that round down to this length
        low, high = max(low, index.length), min(high, index.length + size - 1)
    return present and low <= high


def _note_preallocation(result: SegmentVerification) -> None:
    """Move what the active segment's preallocation explains from ``problems`` to ``notes``: an index's
    zero-filled tail, and Kafka's start-up sanity check failing on it (it reads the last slot, a zero one)."""
    preallocated = {p.file for p in result.problems if p.kind == "zero-tail"}
    kept = []
    for p in result.problems:
        if p.file in preallocated and p.kind in ("zero-tail", "sanity-check"):
            result.notes.append(Problem(ACTIVE_SEGMENT, p.file, p.position, (("about", p.kind), *p.data)))
        else:
            kept.append(p)
    result.problems[:] = kept


def _check_txn_index(segment: LogSegment, problems: list[Problem]) -> int:
    path = segment.txn_index_path
    try:
        index = TransactionIndex.open(segment.source(naming.TXN_INDEX_FILE_SUFFIX), segment.base_offset)
    except OSError as e:
        problems.append(problem(UNREADABLE, path, reason=e.strerror or str(e)))
        return 0
    if index.partial_tail_length:
        problems.append(
            problem(
                "txn-index",
                path,
                index.entry_count * TXN_ENTRY_SIZE,
                case="partial",
                entry=index.entry_count,
                bytes=index.partial_tail_length,
                entry_size=TXN_ENTRY_SIZE,
            )
        )
    try:
        index.sanity_check()
    except KdumpError as e:
        entry = None if e.position is None else e.position // TXN_ENTRY_SIZE
        problems.append(problem("txn-index", path, e.position, entry=entry, message=e.message))
    return index.entry_count


def _zero_tail_start(
    entries: Sequence[OffsetPosition] | Sequence[TimestampOffset],
    base_offset: int,
    is_zero: Callable[[int], bool],
) -> int | None:
    """The first slot of a zero-filled tail (DumpLogSegments' rule: a slot i > 0 naming the base offset starts
    it), if every slot from there on is all zeros."""
    for i in range(1, len(entries)):
        if entries[i].offset == base_offset:
            if all(is_zero(j) for j in range(i, len(entries))):
                return i
            return None
    return None


@overload
def _without_zero_tail(
    index: OffsetIndex, entry_size: int, path: str, problems: list[Problem]
) -> list[OffsetPosition]: ...


@overload
def _without_zero_tail(
    index: TimeIndex, entry_size: int, path: str, problems: list[Problem]
) -> list[TimestampOffset]: ...


def _without_zero_tail(
    index: OffsetIndex | TimeIndex, entry_size: int, path: str, problems: list[Problem]
) -> list[OffsetPosition] | list[TimestampOffset]:
    """The index's entries up to a zero-filled tail, which is reported.  The tail is found from the end of the
    file in pieces first, so a huge preallocated (or sparse) index costs only its written entries."""
    count = index.entry_count
    zero_from = index.zero_tail_start()
    head_end = min(max(zero_from, 1), count)
    entries: list[Any] = list(islice(index, head_end))  # OffsetPosition or TimestampOffset
    tail: int | None
    if zero_from == 0 and (count > 1 or (count == 1 and isinstance(index, OffsetIndex))):
        # Every slot is zero: no entry was written.  Slot 0's zeros would read (base offset, position 0), an
        # entry Kafka never writes: LogSegment.append indexes only once more than index.interval.bytes were
        # appended since the last entry (the count starts at 0, so a segment's first batch is never indexed),
        # and LogSegment.recover the same.  A time index of one slot may hold one: the entry
        # LogSegment.onBecomeInactiveSegment appends when the segment rolls, (max timestamp, its offset), all
        # zeros for timestamp 0 at the base offset (two such slots cannot both be entries: timestamps increase).
        tail = 0
    elif head_end < count and not any(e.offset == index.base_offset for e in islice(entries, 1, None)):
        tail = head_end
    else:
        if head_end < count:
            entries = list(index)
        tail = _zero_tail_start(entries, index.base_offset, index.slot_is_zero)
    if tail is None:
        return entries
    problems.append(
        problem("zero-tail", path, tail * entry_size, entry=tail, slots=count, entry_size=entry_size)
    )
    return entries[:tail]


#: Base offsets to which every int32 relative offset adds without leaving the int64 range (no wrap).
_NO_WRAP = (-(1 << 63) + (1 << 31), (1 << 63) - 1 - (1 << 31))


def index_columns_py(buf: Any, entry_size: int, base: int) -> tuple[bytes, bytes, bool, int] | None:
    """The pure-Python twin of ``kdump._speedups.index_columns`` (its comment says what it returns): the whole
    slots of an offset index (``entry_size`` 8) or a time index (12) as two native int64 columns, whether the
    first strictly increases, and the second's order (2 strictly increasing, 1 never decreasing, 0 neither)."""
    if entry_size not in (8, 12):
        return None
    n = len(buf) // entry_size
    values = struct.unpack(">" + ("ii" if entry_size == 8 else "qi") * n, buf[: n * entry_size])
    x: Sequence[int] = values[0::2]
    y: Sequence[int] = values[1::2]
    if entry_size == 8:
        x = list(map(base.__add__, x))
    else:
        y = list(map(base.__add__, y))
    order = 2 if all(map(lt, y, y[1:])) else 1 if all(map(le, y, y[1:])) else 0
    return array("q", x).tobytes(), array("q", y).tobytes(), all(map(lt, x, x[1:])), order


def _index_columns_function() -> Callable[[Any, int, int], tuple[bytes, bytes, bool, int] | None]:
    from kdump.storage import record_batch

    fast = getattr(record_batch._SPEEDUPS, "index_columns", None)
    return fast if fast is not None else index_columns_py


#: ``kdump._speedups.index_columns`` where it is built (and ``KDUMP_PURE_PYTHON`` is not set), else the twin.
index_columns = _index_columns_function()


def _columns(index: OffsetIndex | TimeIndex, relative: int) -> tuple[array[int], array[int], bool] | None:
    """The index's two columns (offset, position / timestamp, offset: absolute offsets) read in bulk as int64
    arrays, and whether they are in order (the first strictly increasing; the second strictly increasing for an
    offset index, never decreasing for a time index: a broker's index), for an index without a zero tail (its
    last slot not zero: then :func:`_without_zero_tail` keeps every entry and says nothing) whose base offset
    cannot wrap; None otherwise (the caller goes entry by entry)."""
    count = index.entry_count
    base = index.base_offset
    if count < 1 or not _NO_WRAP[0] <= base <= _NO_WRAP[1] or index.zero_tail_start() != count:
        return None
    first: array[int] = array("q")
    second: array[int] = array("q")
    ordered = True
    needed = 2 if relative == 0 else 1
    for _, view in index.pieces():  # a piece's slots in one reading: no object a slot
        found = index_columns(view, index.ENTRY_SIZE, base)
        assert found is not None  # 8 or 12
        x, y, increasing, order = found
        at = len(first)
        first.frombytes(x)
        second.frombytes(y)
        ordered = ordered and increasing and order >= needed
        if ordered and 0 < at < len(first):  # the pieces' boundary
            ordered = first[at - 1] < first[at] and (
                second[at - 1] < second[at] if needed == 2 else second[at - 1] <= second[at]
            )
    return first, second, ordered


class _Checker:
    def batch(self, b: _Batch) -> None:  # pragma: no cover - interface
        raise NotImplementedError

    def finish(self, valid_bytes: int, end_offset: int | None) -> None:  # pragma: no cover - interface
        raise NotImplementedError


class _OffsetIndexChecker(_Checker):
    """Streams the log's batches past the offset-index entries sorted by position."""

    def __init__(self, index: OffsetIndex, problems: list[Problem]) -> None:
        self.index = index
        self.path = index.path or "<memory>"
        self.problems = problems
        #: An entry naming a later batch of the append that starts at its position: (slot, offset, position,
        #: the next entry's position), until that batch is reached.
        self.open_append: tuple[int, int, int, int] | None = None
        columns = _columns(index, 0)
        if columns is None:
            entries = _without_zero_tail(index, OFFSET_ENTRY_SIZE, self.path, problems)
            offsets = array("q", [e[0] for e in entries])
            positions = array("q", [e[1] for e in entries])
            ordered = all(map(lt, offsets, offsets[1:])) and all(map(lt, positions, positions[1:]))
        else:
            offsets, positions, ordered = columns
        if ordered:
            # in order (a broker's index): no problem, and sorted by position already
            self.pending = IndexEntries(positions, offsets)
            return
        if columns is not None:
            entries = _without_zero_tail(index, OFFSET_ENTRY_SIZE, self.path, problems)
        for i in range(1, len(entries)):
            prev, cur = entries[i - 1], entries[i]
            if cur.offset <= prev.offset or cur.position <= prev.position:
                self._problem(
                    i,
                    "out-of-order",
                    cur.offset,
                    what="offset" if cur.offset <= prev.offset else "position",
                    log_position=cur.position,
                    previous_offset=prev.offset,
                    previous_log_position=prev.position,
                )
        self.pending = IndexEntries.of(sorted((e.position, i, e.offset) for i, e in enumerate(entries)))

    def _problem(self, i: int, kind: str, offset: int, **data: Any) -> None:
        self.problems.append(problem(kind, self.path, i * OFFSET_ENTRY_SIZE, entry=i, offset=offset, **data))

    runs = True

    def limit(self, limits: RunLimits) -> None:
        if self.open_append is not None:
            limits.ok = False
        limits.offset_pending = self.pending

    def run(self, run: HeaderRun) -> None:
        self.pending.next += run.offset_entries

    def batch(self, b: _Batch) -> None:
        pending = self.pending
        opened = self.open_append
        if opened is not None:
            i, offset, position, limit = opened
            if b.last_offset >= offset or b.position >= limit:
                self.open_append = None
                if b.position >= limit or not _names(b, offset):
                    self._append_mismatch(i, offset, position, b)
        while pending and pending.first_key() < b.position + b.size:
            position, i, offset = pending.pop()
            if position != b.position:
                self._problem(i, "not-batch-start", offset, log_position=position, **_around(b))
            elif offset > b.last_offset:
                # One append of several batches (a follower's fetch, the cleaner, a produce request carrying
                # several batches, a v0/v1 message set) gets one entry: the append's largest offset at the
                # position of its first batch (Kafka 4.0's LogSegment.append).  The entry must then name the
                # last offset of a later batch that starts before the next entry's position.
                limit = pending.first_key() if pending else 1 << 63
                self.open_append = (i, offset, position, limit)
            elif not _names(b, offset):
                self._problem(i, "offset-mismatch", offset, case="batch", log_position=position, **_around(b))

    def _append_mismatch(self, i: int, offset: int, position: int, b: _Batch | None) -> None:
        self._problem(
            i,
            "offset-mismatch",
            offset,
            case="append",
            log_position=position,
            **({} if b is None else _around(b)),
        )

    def finish(self, valid_bytes: int, end_offset: int | None) -> None:
        if self.open_append is not None:
            i, offset, position, _ = self.open_append
            self.open_append = None
            self._append_mismatch(i, offset, position, None)
        for position, i, offset in self.pending.rest():
            self._problem(
                i, "past-end", offset, log_position=position, log_end=valid_bytes, end_offset=end_offset
            )


def _around(b: _Batch) -> dict[str, int]:
    """The data of a problem that names the batch ``b`` (where it is, its offsets)."""
    return {"batch_position": b.position, "base_offset": b.base_offset, "last_offset": b.last_offset}


def _names(b: _Batch, offset: int) -> bool:
    """An offset-index entry may name ``b`` by ``offset``: its last offset or, for a batch the cleaner rewrote,
    its last record's (the cleaner's append is indexed at ``FilterResult.maxOffset``, the largest offset of the
    records it kept: ``MemoryRecords.filterTo``, ``Cleaner.cleanInto``; the rewritten batch keeps its original
    last offset)."""
    return offset == b.last_offset or (
        b.base_offset <= offset < b.last_offset and b.last_record_offset() == offset
    )


class _TimeIndexChecker(_Checker):
    """Streams the log's batches past the time-index entries sorted by offset."""

    def __init__(self, index: TimeIndex, problems: list[Problem], rules: dict[str, int]) -> None:
        self.path = index.path or "<memory>"
        self.problems = problems
        self.rules = rules
        self.max_so_far = NO_TIMESTAMP
        self.offset_of_max: int | None = None
        columns = _columns(index, 1)
        if columns is None:
            entries = _without_zero_tail(index, TIME_ENTRY_SIZE, self.path, problems)
            timestamps = array("q", [e[0] for e in entries])
            offsets = array("q", [e[1] for e in entries])
            ordered = all(map(lt, timestamps, timestamps[1:])) and all(map(le, offsets, offsets[1:]))
        else:
            timestamps, offsets, ordered = columns
        if ordered:
            # in order (a broker's index): no problem, and sorted by offset already
            self.pending = IndexEntries(offsets, timestamps)
            return
        if columns is not None:
            entries = _without_zero_tail(index, TIME_ENTRY_SIZE, self.path, problems)
        for i in range(1, len(entries)):
            prev, cur = entries[i - 1], entries[i]
            if cur.timestamp <= prev.timestamp or cur.offset < prev.offset:
                self._problem(
                    i,
                    "out-of-order",
                    cur.timestamp,
                    cur.offset,
                    what="timestamp" if cur.timestamp <= prev.timestamp else "offset",
                    previous_timestamp=prev.timestamp,
                    previous_offset=prev.offset,
                )
        self.pending = IndexEntries.of(sorted((e.offset, i, e.timestamp) for i, e in enumerate(entries)))

    def _problem(self, i: int, kind: str, timestamp: int, offset: int, **data: Any) -> None:
        self.problems.append(
            problem(kind, self.path, i * TIME_ENTRY_SIZE, entry=i, offset=offset, timestamp=timestamp, **data)
        )

    runs = True

    def limit(self, limits: RunLimits) -> None:
        limits.time_pending = self.pending
        limits.max_so_far = self.max_so_far

    def run(self, run: HeaderRun) -> None:
        self.pending.next += run.time_entries
        if run.time_rules:
            self.rules[RULE_LAST_OFFSET] = self.rules.get(RULE_LAST_OFFSET, 0) + run.time_rules
        if run.max_so_far > self.max_so_far:
            self.max_so_far = run.max_so_far
            self.offset_of_max = run.offset_of_max

    def batch(self, b: _Batch) -> None:
        if b.max_timestamp > self.max_so_far:
            self.max_so_far = b.max_timestamp
            self.offset_of_max = b.last_offset
        pending = self.pending
        while pending and pending.first_key() <= b.last_offset:
            offset, i, timestamp = pending.pop()
            rule = entry_rule(offset, timestamp, b.base_offset, b.last_offset, b.max_timestamp)
            if rule == RULE_MAX_TIMESTAMP_RECORD:
                rule = self._check_record(i, offset, timestamp, b)
                if rule is None:
                    continue
            if rule is None and offset == b.last_offset:
                self._problem(
                    i, "timestamp-mismatch", timestamp, offset, case="batch", max_timestamp=b.max_timestamp
                )
            elif rule is None and offset >= b.base_offset:
                self._problem(
                    i,
                    "offset-mismatch",
                    timestamp,
                    offset,
                    case="not-last",
                    max_timestamp=b.max_timestamp,
                    **_around(b),
                )
            elif rule is None:
                self._problem(i, "offset-mismatch", timestamp, offset, case="no-batch")
            elif self.max_so_far > timestamp:
                self._problem(
                    i,
                    "timestamp-mismatch",
                    timestamp,
                    offset,
                    case="earlier",
                    max_timestamp=self.max_so_far,
                    earlier_last_offset=self.offset_of_max,
                )
            elif b.last_offset > b.base_offset:
                self.rules[rule] = self.rules.get(rule, 0) + 1

    def _check_record(self, i: int, offset: int, timestamp: int, b: _Batch) -> str | None:
        """An entry inside batch ``b`` (the pre-3.8 rule): the record at ``offset`` must be the first to hold
        the batch's max timestamp.  Returns the rule, or None after reporting a problem."""
        if b.records is None:
            return RULE_MAX_TIMESTAMP_RECORD
        try:
            first = first_record_with_timestamp(b.records(), timestamp)
        except KdumpError as e:
            self._problem(
                i, "offset-mismatch", timestamp, offset, case="undecodable", message=e.message, **_around(b)
            )
            return None
        if first == offset:
            return RULE_MAX_TIMESTAMP_RECORD
        self._problem(
            i, "offset-mismatch", timestamp, offset, case="not-first-record", first_record=first, **_around(b)
        )
        return None

    def finish(self, valid_bytes: int, end_offset: int | None) -> None:
        for offset, i, timestamp in self.pending.rest():
            self._problem(i, "past-end", timestamp, offset, end_offset=end_offset)
