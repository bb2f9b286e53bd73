"""What a Kafka consumer sees of a partition: ``isolation.level=read_committed`` over the files alone.

A ``read_committed`` consumer never returns control records, never returns the records of aborted
transactions, and reads no further than the *last stable offset* (LSO), the first offset of the earliest
transaction that is still open.  The broker hands it the aborted transactions of each fetch (from the
``.txnindex`` files, Kafka's ``collectAbortedTxns``) and the consumer filters batch by batch
(``CompletedFetch.nextFetchedRecord`` in Kafka's client):

* before a batch that has a producer id, every aborted transaction whose first offset is <= the batch's last
  offset makes its producer "aborted";
* a control batch whose first record is an ABORT marker clears its producer;
* a transactional batch of an aborted producer is skipped;
* control batches are never returned.

:class:`ReadCommittedFilter` is that state machine; :func:`transaction_state` reads what it needs from a
partition directory: every ``.txnindex`` entry and the LSO.  The LSO is recovered as a broker recovers its
producer state on start-up: from the latest readable producer snapshot (``<offset>.snapshot``; its entries'
``currentTxnFirstOffset``), then a replay of the batch headers written after it (or of the whole log when
there is no usable snapshot).  No record is decoded for that except the first record of control batches.
"""

from __future__ import annotations

import heapq
from collections.abc import Iterable
from dataclasses import dataclass, field

from kdump.analysis.header_run import HeaderRun, RunLimits
from kdump.analysis.segment_walk import SegmentVisitor, walk_segments
from kdump.errors import KdumpError
from kdump.problem import Problem, problem_of
from kdump.storage import naming
from kdump.storage.control_record_type import ControlRecordType, parse_type_id
from kdump.storage.file_records import RecordBatch
from kdump.storage.local_log import LocalLog
from kdump.storage.log_segment import LogSegment
from kdump.storage.producer_snapshot import ProducerSnapshot, read_producer_snapshot
from kdump.storage.record_batch import DefaultRecordBatch
from kdump.storage.transaction_index import AbortedTxn, TransactionIndex

__all__ = [
    "READ_COMMITTED",
    "READ_UNCOMMITTED",
    "OngoingTransaction",
    "ReadCommittedFilter",
    "TransactionTracker",
    "TransactionState",
    "aborted_in_range",
    "is_abort_marker",
    "ongoing_transactions",
    "open_transactions",
    "read_aborted_txns",
    "transaction_state",
]

READ_UNCOMMITTED = "read_uncommitted"
READ_COMMITTED = "read_committed"


@dataclass(frozen=True)
class TransactionState:
    """What a ``read_committed`` read of one partition needs.

    ``aborted``: every aborted transaction of the partition's ``.txnindex`` files, by first offset.
    ``last_stable_offset``: the first offset of the earliest open transaction, or None when none is open (a
    consumer then reads to the end of the log).  ``problems``: files that could not be (fully) read.
    """

    aborted: tuple[AbortedTxn, ...]
    last_stable_offset: int | None
    problems: tuple[Problem, ...] = field(default=())


def read_aborted_txns(log: LocalLog) -> tuple[list[AbortedTxn], list[Problem]]:
    """Every entry of every ``.txnindex`` of ``log``, sorted by first offset, and the problems met.

    A partial last entry is ignored (as Kafka does); an entry with an unknown version stops that file (Kafka
    fails there) and is reported.
    """
    found: list[AbortedTxn] = []
    problems: list[Problem] = []
    for segment in log.segments:
        if not segment.has(naming.TXN_INDEX_FILE_SUFFIX):
            continue
        try:
            index = TransactionIndex.open(segment.source(naming.TXN_INDEX_FILE_SUFFIX), segment.base_offset)
            for entry in index:
                found.append(entry)
        except (OSError, KdumpError) as e:
            problems.append(problem_of(e, segment.txn_index_path))
    found.sort(key=lambda t: (t.first_offset, t.last_offset))
    return found, problems


def is_abort_marker(batch: RecordBatch) -> bool:
    """True when ``batch`` is a control batch whose first record is an ABORT marker (Kafka's
    ``containsAbortMarker``).  Raises :class:`KdumpError` when that record cannot be decoded."""
    if batch.magic < 2 or not batch.is_control_batch:
        return False
    for record in batch.records():
        return ControlRecordType.from_type_id(parse_type_id(record.key)) is ControlRecordType.ABORT
    return False


@dataclass
class OngoingTransaction:
    """A transaction still open at the end of a log, as a broker's producer state holds it.

    ``first_timestamp`` is None when the transaction started before the producer snapshot it was loaded from
    (the snapshot keeps its first offset and the producer's last timestamp only).
    """

    producer_id: int
    producer_epoch: int
    first_offset: int
    last_offset: int
    first_timestamp: int | None
    last_timestamp: int


class TransactionTracker:
    """The ongoing transactions of a partition's producers, by the rules of Kafka's ``ProducerAppendInfo``
    (the one place kdump applies them): a batch with a producer id (>= 0) that is transactional opens its
    producer's transaction when none is open (its first offset is the transaction's), later ones update its
    epoch, last offset and timestamps; a control batch of that producer ends it; other batches change nothing.
    Feed it batches in log order with :meth:`append`, after :meth:`load_snapshot` when replaying from a producer
    snapshot."""

    __slots__ = ("ongoing",)

    def __init__(self) -> None:
        self.ongoing: dict[int, OngoingTransaction] = {}

    def load_snapshot(self, snapshot: ProducerSnapshot) -> None:
        """Start from a producer snapshot's state: its entries with a ``currentTxnFirstOffset``."""
        for entry in snapshot.entries:
            if entry.txn_first_offset is not None:
                self.ongoing[entry.producer_id] = OngoingTransaction(
                    entry.producer_id,
                    entry.producer_epoch,
                    entry.txn_first_offset,
                    entry.last_offset,
                    None,
                    entry.timestamp,
                )

    def append(self, batch: RecordBatch) -> None:
        pid = batch.producer_id
        if pid < 0 or not isinstance(batch, DefaultRecordBatch):
            return  # no producer id (v0/v1 batches have none: they answer -1)
        if batch.is_control_batch:
            self.ongoing.pop(pid, None)
        elif batch.is_transactional:
            txn = self.ongoing.get(pid)
            if txn is None:
                self.ongoing[pid] = OngoingTransaction(
                    pid,
                    batch.producer_epoch,
                    batch.base_offset,
                    batch.last_offset,
                    batch.base_timestamp,
                    batch.max_timestamp,
                )
            else:
                if txn.first_timestamp is None and batch.base_offset <= txn.first_offset:
                    txn.first_timestamp = batch.base_timestamp
                txn.producer_epoch = batch.producer_epoch
                txn.last_offset = batch.last_offset
                txn.last_timestamp = max(txn.last_timestamp, batch.max_timestamp)

    def transactions(self) -> list[OngoingTransaction]:
        """The open transactions, by first offset."""
        return sorted(self.ongoing.values(), key=lambda t: t.first_offset)


def ongoing_transactions(log: LocalLog) -> tuple[list[OngoingTransaction], list[Problem]]:
    """The transactions still open at the end of ``log`` (by first offset), and the problems met.

    Starts from the latest producer snapshot that reads cleanly (its ``currentTxnFirstOffset`` entries), then
    replays the batch headers at and after the snapshot's offset through a :class:`TransactionTracker`, as a
    broker rebuilding its producer state does (``ProducerStateManager``).  This is the broker's view, what the
    last stable offset is computed from.  ``kdump ls`` applies the same tracker to every batch from byte 0 in
    its one header pass (the transactions left open in the files on disk): the two differ only where retention
    deleted a transaction's start or a snapshot disagrees with the batches after it.
    """
    scan = OngoingScan(log)
    walk_segments(log.log_segments, [scan])
    return scan.result()


class OngoingScan(SegmentVisitor):
    """:func:`ongoing_transactions`' replay as a :class:`~kdump.analysis.segment_walk.SegmentVisitor`: the
    latest producer snapshot that reads cleanly is loaded here, the segments wholly before it are not wanted,
    the batch headers at and after its offset go through the tracker.  :meth:`result` after the last segment."""

    def __init__(self, log: LocalLog) -> None:
        self.problems: list[Problem] = []
        self.tracker = TransactionTracker()
        self.replay_from = 0
        for offset, path in reversed(log.producer_snapshots):
            try:
                snapshot = read_producer_snapshot(path)
            except (OSError, KdumpError) as e:
                self.problems.append(problem_of(e, path))
                continue
            self.tracker.load_snapshot(snapshot)
            self.replay_from = offset
            break
        segments = log.log_segments
        #: Base offsets of the segments wholly before the snapshot.
        self.before = {
            s.base_offset
            for i, s in enumerate(segments)
            if i + 1 < len(segments) and segments[i + 1].base_offset <= self.replay_from
        }

    def start(self, segment: LogSegment) -> bool:
        return segment.has(naming.LOG_FILE_SUFFIX) and segment.base_offset not in self.before

    def batch(self, batch: RecordBatch) -> None:
        if batch.last_offset >= self.replay_from:
            self.tracker.append(batch)

    #: A run of plain batches (:mod:`kdump.analysis.header_run`) has no transactional batch: nothing to do.
    runs = True

    def limit(self, limits: RunLimits) -> None:
        pass

    def run(self, run: HeaderRun) -> None:
        pass

    def failed(self, error: KdumpError) -> None:
        self.problems.append(problem_of(error))

    def result(self) -> tuple[list[OngoingTransaction], list[Problem]]:
        return self.tracker.transactions(), self.problems


def open_transactions(log: LocalLog) -> tuple[dict[int, int], list[Problem]]:
    """Producer id -> first offset of each transaction still open at the end of ``log``, and the problems met
    (see :func:`ongoing_transactions`)."""
    ongoing, problems = ongoing_transactions(log)
    return {t.producer_id: t.first_offset for t in ongoing}, problems


def transaction_state(log: LocalLog) -> TransactionState:
    """The aborted transactions and the last stable offset of the partition in ``log``."""
    aborted, problems = read_aborted_txns(log)
    ongoing, more = open_transactions(log)
    lso = min(ongoing.values()) if ongoing else None
    return TransactionState(tuple(aborted), lso, tuple(problems + more))


def aborted_in_range(
    aborted: Iterable[AbortedTxn], fetch_offset: int, upper_bound_offset: int | None = None
) -> list[AbortedTxn]:
    """The entries a fetch of ``[fetch_offset, upper_bound_offset)`` is given (Kafka's ``collectAbortedTxns``
    filter): last offset >= fetch offset and first offset < upper bound (no upper bound when None)."""
    return [
        t
        for t in aborted
        if t.last_offset >= fetch_offset
        and (upper_bound_offset is None or t.first_offset < upper_bound_offset)
    ]


class ReadCommittedFilter:
    """Kafka's consumer-side ``read_committed`` filter, one batch at a time, in offset order.

    ``aborted`` are the aborted transactions the fetch was given (see :func:`aborted_in_range`);
    ``last_stable_offset`` (None: no limit) hides every batch at or after it.  Call :meth:`accept` for each
    batch in log order; it returns whether the batch's records are delivered.
    """

    def __init__(self, aborted: Iterable[AbortedTxn], last_stable_offset: int | None = None) -> None:
        self._pending = [(t.first_offset, t.last_offset, t.producer_id) for t in aborted]
        heapq.heapify(self._pending)
        self._aborted_producers: set[int] = set()
        self.last_stable_offset = last_stable_offset

    def _consume_up_to(self, offset: int) -> None:
        pending = self._pending
        while pending and pending[0][0] <= offset:
            self._aborted_producers.add(heapq.heappop(pending)[2])

    def accept(self, batch: RecordBatch) -> bool:
        """Whether a ``read_committed`` consumer returns the records of ``batch`` (updates the state)."""
        lso = self.last_stable_offset
        if lso is not None and batch.base_offset >= lso:
            return False
        if batch.producer_id >= 0:  # Kafka's hasProducerId (v0/v1 batches answer -1)
            self._consume_up_to(batch.last_offset)
            pid = batch.producer_id
            if batch.is_control_batch:
                if is_abort_marker(batch):
                    self._aborted_producers.discard(pid)
            elif batch.is_transactional and pid in self._aborted_producers:
                return False
        return not batch.is_control_batch
