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

from kdump.errors import KdumpError
from kdump.storage import naming
from kdump.storage.control_record import ControlRecordType, parse_type_id
from kdump.storage.file_records import RecordBatch
from kdump.storage.local_log import LocalLog
from kdump.storage.producer_snapshot import read_producer_snapshot
from kdump.storage.record_batch import DefaultRecordBatch
from kdump.storage.transaction_index import AbortedTxn, TransactionIndex

__all__ = [
    "READ_COMMITTED",
    "READ_UNCOMMITTED",
    "OngoingTransaction",
    "ReadCommittedFilter",
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
NO_PRODUCER_ID = -1


@dataclass(frozen=True)
class TransactionState:
    """What a ``read_committed`` read of one partition needs.

    ``aborted``: every aborted transaction of the partition's ``.txnindex`` files, by first offset.
    ``last_stable_offset``: the first offset of the earliest open transaction, or None when none is open (a
    consumer then reads to the end of the log).  ``problems``: files that could not be (fully) read, as text.
    """

    aborted: tuple[AbortedTxn, ...]
    last_stable_offset: int | None
    problems: tuple[str, ...] = field(default=())


def read_aborted_txns(log: LocalLog) -> tuple[list[AbortedTxn], list[str]]:
    """Every entry of every ``.txnindex`` of ``log``, sorted by first offset, and the problems met.

    A partial last entry is ignored (as Kafka does); an entry with an unknown version stops that file (Kafka
    fails there) and is reported.
    """
    found: list[AbortedTxn] = []
    problems: list[str] = []
    for segment in log.segments:
        if not segment.has(naming.TXN_INDEX_FILE_SUFFIX):
            continue
        try:
            index = TransactionIndex(segment.txn_index_path, segment.base_offset)
            for entry in index:
                found.append(entry)
        except (OSError, KdumpError) as e:
            problems.append(f"{segment.txn_index_path}: {getattr(e, 'message', None) or e}")
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


def ongoing_transactions(log: LocalLog) -> tuple[list[OngoingTransaction], list[str]]:
    """The transactions still open at the end of ``log`` (by first offset), and the problems met.

    Starts from the latest producer snapshot that reads cleanly (its ``currentTxnFirstOffset`` entries), then
    replays the batch headers at and after the snapshot's offset, as a broker rebuilding its producer state
    does (``ProducerStateManager``): a transactional batch opens its producer's transaction (if none is open),
    a control batch closes it.  This is the broker's view, what the last stable offset is computed from; ``kdump
    ls`` answers another question, the transactions left open in the segments on disk read from byte 0 in its one
    header pass (:class:`kdump.storage.log_summary.OpenTransaction`), and can differ where retention deleted a
    transaction's start or a snapshot disagrees with the batches.
    """
    problems: list[str] = []
    ongoing: dict[int, OngoingTransaction] = {}
    replay_from = 0
    for offset, path in reversed(log.producer_snapshots):
        try:
            snapshot = read_producer_snapshot(path)
        except (OSError, KdumpError) as e:
            problems.append(f"{path}: {getattr(e, 'message', None) or e}")
            continue
        for entry in snapshot.entries:
            if entry.txn_first_offset is not None:
                ongoing[entry.producer_id] = OngoingTransaction(
                    entry.producer_id,
                    entry.producer_epoch,
                    entry.txn_first_offset,
                    entry.last_offset,
                    None,
                    entry.timestamp,
                )
        replay_from = offset
        break
    segments = log.log_segments
    for i, segment in enumerate(segments):
        if i + 1 < len(segments) and segments[i + 1].base_offset <= replay_from:
            continue  # wholly before the snapshot
        try:
            with segment.open_log() as records:
                for batch in records.batches():
                    if batch.last_offset < replay_from or not isinstance(batch, DefaultRecordBatch):
                        continue  # before the snapshot, or a v0/v1 batch (no producer id)
                    pid = batch.producer_id
                    if pid == NO_PRODUCER_ID:
                        continue
                    if batch.is_control_batch:
                        ongoing.pop(pid, None)
                    elif batch.is_transactional:
                        txn = ongoing.get(pid)
                        if txn is None:
                            ongoing[pid] = OngoingTransaction(
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
        except KdumpError as e:
            problems.append(e.describe())
    return sorted(ongoing.values(), key=lambda t: t.first_offset), problems


def open_transactions(log: LocalLog) -> tuple[dict[int, int], list[str]]:
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
        if batch.magic >= 2 and batch.producer_id != NO_PRODUCER_ID:
            self._consume_up_to(batch.last_offset)
            pid = batch.producer_id
            if batch.is_control_batch:
                if is_abort_marker(batch):
                    self._aborted_producers.discard(pid)
            elif batch.is_transactional and pid in self._aborted_producers:
                return False
        return not batch.is_control_batch
