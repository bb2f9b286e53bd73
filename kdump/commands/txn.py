"""``kdump txn``: why is a ``read_committed`` consumer stuck?  Per partition: the last stable offset as the
broker computes it, the open transactions, the aborted ranges, commit/abort counts and durations, and the
hanging transactions with the command that ends each one.

The rules are Kafka's:

* open transactions and the first unstable offset: the broker's producer state (``ProducerStateManager``),
  rebuilt from the latest producer snapshot and the batch headers after it
  (:func:`kdump.analysis.consumer_view.ongoing_transactions`, the one place kdump computes it);
* last stable offset: ``UnifiedLog.lastStableOffset`` = the first unstable offset capped by the high watermark
  (``replication-offset-checkpoint``), the high watermark (or the log end offset when unknown) when nothing
  is open;
* aborted ranges: the ``.txnindex`` entries (``AbortedTxn``);
* hanging: a transaction open on the partition that its coordinator (``__transaction_state`` in the same
  data directory, replayed as ``TransactionStateManager`` loads it) does not have open for this partition
  (no transactional id with that producer id, or it is Empty/CompleteCommit/CompleteAbort/Dead, or a newer
  epoch, or the partition is not among its partitions), as ``kafka-transactions.sh find-hanging`` decides;
  without the coordinator's partition, a transaction open longer than ``transaction.max.timeout.ms``
  (``--max-timeout-ms``, default 15 minutes) counted from the newest record (or ``--now``).
"""

from __future__ import annotations

import os
from typing import TYPE_CHECKING

from kdump.analysis.consumer_view import (
    OngoingScan,
    OngoingTransaction,
    is_abort_marker,
    read_aborted_txns,
)
from kdump.analysis.header_run import HeaderRun, RunLimits
from kdump.analysis.log_summary import read_log_dir_checkpoints
from kdump.analysis.segment_walk import SegmentVisitor, walk_segments
from kdump.commands.coordinator import TRANSACTION_STATE, read_transaction_states
from kdump.commands.ls import numbered
from kdump.errors import KdumpError
from kdump.exit_status import ExitStatus
from kdump.facts.coordinator import TransactionMetadata
from kdump.facts.report import ReportSink, hand_over
from kdump.facts.txn import (
    CLOSED_AT_COORDINATOR,
    NEWER_EPOCH_AT_COORDINATOR,
    NO_COORDINATOR,
    NO_TRANSACTIONAL_ID,
    OLDER_THAN_MAX_TIMEOUT,
    OPEN_AT_COORDINATOR,
    PARTITION_NOT_AT_COORDINATOR,
    AbortTarget,
    CompletedStats,
    OpenTransactionFact,
    PartitionTxnFacts,
)
from kdump.problem import UNREADABLE_DIRECTORY, Problem, problem, problem_of
from kdump.storage import locations, naming
from kdump.storage.file_records import RecordBatch
from kdump.storage.local_log import LocalLog, find_partition_dirs
from kdump.storage.log_segment import LogSegment
from kdump.storage.record_batch import DefaultRecordBatch
from kdump.storage.regular_file import walk_error
from kdump.storage.transaction_index import AbortedTxn

if TYPE_CHECKING:
    from kdump.commands.remote_tier import RemoteChecks

#: Kafka's default ``transaction.max.timeout.ms``.
DEFAULT_MAX_TIMEOUT_MS = 900_000
#: Coordinator states in which a transaction is not open.
_CLOSED_STATES = {"Empty", "CompleteCommit", "CompleteAbort", "Dead", "Removed"}


class TxnCommand:
    def __init__(
        self,
        paths: list[str],
        *,
        now: int | None = None,
        max_timeout_ms: int = DEFAULT_MAX_TIMEOUT_MS,
        bootstrap_server: str = "BROKER:9092",
        remote: RemoteChecks | None = None,
        listed: bool = False,
    ) -> None:
        """``listed``: ``paths`` are the partition directories, already found by the caller (``kdump report``
        walks the paths once for every command it runs), not walked again."""
        #: Tiered partitions are read as one log, their remote segments first (``--remote-root``).
        self.remote = remote
        self.directories: list[str] = list(paths) if listed else []
        #: Directories the walk could not read, with the reason (reported, and status 1).
        self.walk_errors: list[Problem] = []
        for path in [] if listed else paths:
            found = [d for d in find_partition_dirs([path], on_error=self._walk_error) if not _is_internal(d)]
            if not found and locations.isdir(path):
                found = list(find_partition_dirs([path]))
            if not found:
                raise ValueError(f"{path}: no partition directory in it or below it")
            found.sort(key=numbered)  # orders-2 before orders-10, as ls
            self.directories.extend(found)
        self.now = now
        self.max_timeout_ms = max_timeout_ms
        self.bootstrap_server = bootstrap_server
        self._coordinators: dict[str, tuple[str | None, dict[str, TransactionMetadata], list[Problem]]] = {}

    def _coordinator(self, log_dir: str) -> tuple[str | None, dict[str, TransactionMetadata], list[Problem]]:
        cached = self._coordinators.get(log_dir)
        if cached is None:
            states: dict[str, TransactionMetadata] = {}
            problems: list[Problem] = []
            dirs = []
            try:
                names = sorted(locations.listdir(log_dir))
            except OSError:
                names = []
            for name in names:
                prefix, _, number = name.rpartition("-")
                if prefix == TRANSACTION_STATE and number.isdigit():
                    d = os.path.join(log_dir, name)
                    dirs.append(d)
                    states.update(read_transaction_states(d, problems))
            cached = (", ".join(dirs) or None, states, problems)
            self._coordinators[log_dir] = cached
        return cached

    def facts(self) -> list[PartitionTxnFacts]:
        return [self.partition_facts(d) for d in self.directories]

    def run(self, sink: ReportSink[PartitionTxnFacts]) -> ExitStatus:
        """Each partition's facts, then each directory the walk could not read, to ``sink``; the status of
        :meth:`status`."""
        return self.status(hand_over(sink, map(self.partition_facts, self.directories), self.walk_errors))

    def partition_facts(self, directory: str) -> PartitionTxnFacts:
        scan = self.partition_scan(directory)
        walk_segments(scan.log.log_segments, scan.visitors)
        return scan.finish()

    def partition_scan(self, directory: str, log: LocalLog | None = None) -> TxnScan:
        """:meth:`partition_facts`' passes over the batch headers (the producer state's replay and the
        history), ready to walk ``log``'s segments (``log``: the directory already scanned; else it is scanned
        here, a tiered partition as one log with ``--remote-root``)."""
        if log is None:
            log = LocalLog.scan(directory)
            if self.remote is not None:
                one = self.remote.one_log(log)
                if one is not None:
                    log = one[0]
        return TxnScan(self, directory, log)

    def _facts(
        self,
        directory: str,
        log: LocalLog,
        problems: list[Problem],
        hw: int | None,
        lso_ckpt: int | None,
        ongoing: list[OngoingTransaction],
        aborted: list[AbortedTxn],
        history: _History,
    ) -> PartitionTxnFacts:
        stats, newest, log_end, first_ts = history.stats, history.newest, history.log_end, history.first_ts
        log_dir = os.path.dirname(locations.abspath(directory))
        segments = log.log_segments
        log_start = log.log_start_offset(lso_ckpt)
        if segments:
            if log_end is None:
                log_end = segments[-1].base_offset

        first_unstable = min((t.first_offset for t in ongoing), default=None)
        upper = hw if hw is not None else log_end
        if first_unstable is None:
            lso = upper
        else:
            lso = first_unstable if upper is None else min(first_unstable, upper)

        coordinator_source, states, more = self._coordinator(log_dir)
        problems.extend(more)
        by_producer: dict[int, TransactionMetadata] = {}
        for meta in sorted(states.values(), key=lambda m: m.record_offset):
            by_producer[meta.producer_id] = meta
        reference = self.now if self.now is not None else newest
        facts = [
            self._open_fact(log, t, first_ts.get(t.first_offset), reference, coordinator_source, by_producer)
            for t in ongoing
        ]
        return PartitionTxnFacts(
            directory,
            log.topic,
            log.partition,
            log_start,
            log_end,
            hw,
            first_unstable,
            lso,
            newest,
            self.now,
            facts,
            aborted,
            stats,
            coordinator_source,
            problems,
        )

    def _open_fact(
        self,
        log: LocalLog,
        t: OngoingTransaction,
        first_ts: int | None,
        reference: int | None,
        coordinator_source: str | None,
        by_producer: dict[int, TransactionMetadata],
    ) -> OpenTransactionFact:
        first = t.first_timestamp if t.first_timestamp is not None else first_ts
        start = first if first is not None else t.last_timestamp
        age = None if reference is None or start < 0 else reference - start
        meta = by_producer.get(t.producer_id)
        if coordinator_source is not None:
            if meta is None:
                hanging, verdict = True, NO_TRANSACTIONAL_ID
            elif meta.state in _CLOSED_STATES:
                hanging, verdict = True, CLOSED_AT_COORDINATOR
            elif meta.producer_epoch > t.producer_epoch:
                hanging, verdict = True, NEWER_EPOCH_AT_COORDINATOR
            elif log.topic is not None and (log.topic, log.partition) not in meta.partitions:
                hanging, verdict = True, PARTITION_NOT_AT_COORDINATOR
            else:
                hanging, verdict = False, OPEN_AT_COORDINATOR
        elif age is not None and age > self.max_timeout_ms:
            hanging, verdict = True, OLDER_THAN_MAX_TIMEOUT
        else:
            hanging, verdict = False, NO_COORDINATOR
        abort = None
        if hanging and log.topic is not None:
            abort = AbortTarget(self.bootstrap_server, log.topic, log.partition, t.first_offset)
        return OpenTransactionFact(
            t.producer_id,
            t.producer_epoch,
            t.first_offset,
            t.last_offset,
            first,
            t.last_timestamp,
            age,
            meta,
            hanging,
            verdict,
            self.max_timeout_ms,
            abort,
        )

    def _walk_error(self, path: str, error: OSError) -> None:
        self.walk_errors.append(problem(UNREADABLE_DIRECTORY, path, reason=walk_error(error)))

    def status(self, facts: list[PartitionTxnFacts]) -> ExitStatus:
        """1 when a transaction hangs, or a file or directory could not be read (a partition's problem, a
        directory of the walk)."""
        unreadable = any(p.unreadable for f in facts for p in f.problems)
        if any(f.hanging for f in facts) or unreadable or self.walk_errors:
            return ExitStatus.PROBLEMS
        return ExitStatus.OK


def _is_internal(directory: str) -> bool:
    name = os.path.basename(os.path.normpath(directory))
    return name.startswith("__")


class TxnScan:
    """One partition's ``kdump txn`` facts in the making: its :attr:`visitors` walk the segments (alone, or in
    ``kdump report``'s one shared walk), then :meth:`finish` gives the facts."""

    def __init__(self, command: TxnCommand, directory: str, log: LocalLog) -> None:
        self.command = command
        self.directory = directory
        self.log = log
        self.problems: list[Problem] = []
        log_dir = os.path.dirname(locations.abspath(directory))
        checkpoints = read_log_dir_checkpoints(log_dir, self.problems)
        key = None if log.name is None else (log.name.topic, log.name.partition)
        self.hw = checkpoints.get("replication-offset-checkpoint", {}).get(key) if key else None
        self.lso_ckpt = checkpoints.get("log-start-offset-checkpoint", {}).get(key) if key else None
        self.ongoing = OngoingScan(log)
        # the first offsets whose timestamp the history is asked for: the open transactions' that the producer
        # snapshot gives without one (those the replay opens carry their first batch's own)
        self.history = _History({t.first_offset for t in self.ongoing.tracker.ongoing.values()})
        self.visitors: list[SegmentVisitor] = [self.ongoing, self.history]

    def finish(self) -> PartitionTxnFacts:
        ongoing, more = self.ongoing.result()
        problems = self.problems
        problems.extend(more)
        aborted, more = read_aborted_txns(self.log)
        problems.extend(more)
        problems.extend(self.history.problems)
        return self.command._facts(
            self.directory, self.log, problems, self.hw, self.lso_ckpt, ongoing, aborted, self.history
        )


class _History(SegmentVisitor):
    """One pass over the batch headers: completed transactions (marker count and duration), the newest
    timestamp, the log end offset, and the base timestamp of the batches at ``wanted_first_offsets``."""

    def __init__(self, wanted_first_offsets: set[int]) -> None:
        self.wanted = wanted_first_offsets
        self.stats = CompletedStats()
        #: producer id -> base timestamp of the first batch of its current transaction
        self.started: dict[int, int] = {}
        self.newest: int | None = None
        self.log_end: int | None = None
        self.first_ts: dict[int, int] = {}
        self.problems: list[Problem] = []
        self.log_path = ""

    def start(self, segment: LogSegment) -> bool:
        self.log_path = segment.log_path
        return segment.has(naming.LOG_FILE_SUFFIX)

    #: Runs of plain batches (:mod:`kdump.analysis.header_run`): none transactional, none at a wanted offset.
    runs = True

    def limit(self, limits: RunLimits) -> None:
        limits.wanted_base = self.wanted

    def run(self, run: HeaderRun) -> None:
        self.log_end = run.last_offset + 1
        if run.max_timestamp >= 0 and (self.newest is None or run.max_timestamp > self.newest):
            self.newest = run.max_timestamp

    def batch(self, batch: RecordBatch) -> None:
        self.log_end = batch.last_offset + 1
        if batch.max_timestamp >= 0 and (self.newest is None or batch.max_timestamp > self.newest):
            self.newest = batch.max_timestamp
        if not isinstance(batch, DefaultRecordBatch) or batch.producer_id < 0:
            return
        if batch.base_offset in self.wanted:
            self.first_ts[batch.base_offset] = batch.base_timestamp
        pid = batch.producer_id
        started = self.started
        if batch.is_control_batch:
            begin = started.pop(pid, None)
            try:
                abort = is_abort_marker(batch)
            except KdumpError as e:
                self.problems.append(problem_of(e.located(self.log_path, batch.position)))
                return
            stats = self.stats
            if abort:
                stats.aborts += 1
            else:
                stats.commits += 1
            if begin is not None and begin >= 0:
                (stats.abort_durations if abort else stats.commit_durations).append(
                    batch.max_timestamp - begin
                )
        elif batch.is_transactional and pid not in started:
            started[pid] = batch.base_timestamp

    def failed(self, error: KdumpError) -> None:
        self.problems.append(problem_of(error))
