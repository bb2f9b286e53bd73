"""A partition at a glance (what ``kdump ls`` shows): offsets as a broker would load them, the log directory's
checkpoints, and what one header-only pass over every segment finds.

Kafka's names are kept: the log start offset is ``max(log-start-offset-checkpoint, first segment's base offset)``
(``UnifiedLog`` on load), the log end offset is the next offset after the last batch, the high watermark and
recovery point are the log directory's ``replication-offset-checkpoint`` and
``recovery-point-offset-checkpoint`` entries.  Nothing here prints.
"""

from __future__ import annotations

import os
from collections.abc import Callable
from dataclasses import dataclass, field

from kdump import problem as pk
from kdump.analysis.consumer_view import OngoingTransaction, TransactionTracker
from kdump.analysis.header_run import HeaderRun, RunLimits
from kdump.analysis.log_dir_checkpoints import LOG_DIR_CHECKPOINTS
from kdump.analysis.log_dir_checkpoints import (
    read_log_dir_checkpoints as read_log_dir_checkpoints,  # re-exported: its callers import it from here
)
from kdump.analysis.segment_walk import SegmentVisitor, walk_segments
from kdump.analysis.timeline import Timeline
from kdump.errors import KdumpError, UnreadableFileError
from kdump.problem import Problem, problem, problem_of
from kdump.storage import locations, naming
from kdump.storage.file_records import FileRecords
from kdump.storage.local_log import LocalLog
from kdump.storage.log_segment import LogSegment
from kdump.storage.offset_checkpoint import CheckpointOffsets
from kdump.storage.record_batch import RecordBatch, compression_name
from kdump.storage.regular_file import walk_error


@dataclass
class PartitionSummary:
    """Everything ``kdump ls`` reports for one partition directory."""

    directory: str
    topic: str | None
    partition: int | None
    segments: int = 0
    size_bytes: int = 0
    #: Base offset of the first segment with a ``.log`` (None without segments).
    first_segment_base_offset: int | None = None
    log_start_offset: int | None = None
    log_start_offset_checkpoint: int | None = None
    log_end_offset: int | None = None
    high_watermark: int | None = None
    recovery_point: int | None = None
    cleaner_checkpoint: int | None = None
    batches: int = 0
    records: int = 0
    #: Smallest and largest batch max-timestamp (-1, "no timestamp", left out).
    min_timestamp: int | None = None
    max_timestamp: int | None = None
    codecs: list[str] = field(default_factory=list)
    producers: list[int] = field(default_factory=list)
    #: Transactions left open in the segments on disk: the producer-state rules
    #: (:class:`~kdump.analysis.consumer_view.TransactionTracker`) applied to every batch from byte 0, not from
    #: the latest producer snapshot as a broker (and ``kdump txn``) does; a transaction whose start retention
    #: deleted is not seen here.
    open_transactions: list[OngoingTransaction] = field(default_factory=list)
    anomalies: list[Problem] = field(default_factory=list)
    #: Files and directories of the partition that could not be read (also among the anomalies).
    unreadable: list[str] = field(default_factory=list)
    #: Of :attr:`segments`, how many are in remote storage (a tiered partition read as one log: ``ls
    #: --remote-root``); None when the partition was read without its remote part.
    remote_segments: int | None = None
    #: Of :attr:`size_bytes`, how many are those remote segments' (their ``.log`` sizes).
    remote_bytes: int | None = None


def summarize_partition(
    directory: str,
    *,
    checkpoints: dict[str, CheckpointOffsets] | None = None,
    progress: Callable[[int], None] | None = None,
    timeline: Timeline | None = None,
    log: LocalLog | None = None,
) -> PartitionSummary:
    """Scan one partition directory.  ``checkpoints`` are its log directory's (read from the parent directory
    when not given).  ``progress(n)`` gets the number of log bytes read, segment by segment.  ``timeline``, when
    given, is fed every batch of the same pass (``kdump report``'s offsets against time).  ``log``: the
    directory's log already scanned (a tiered partition's one log, its remote segments first)."""
    scan = partition_scan(directory, log=log, checkpoints=checkpoints, progress=progress, timeline=timeline)
    if scan.log is not None:
        walk_segments(scan.log.segments, [scan])
    return scan.finish()


def partition_scan(
    directory: str,
    *,
    log: LocalLog | None = None,
    checkpoints: dict[str, CheckpointOffsets] | None = None,
    progress: Callable[[int], None] | None = None,
    timeline: Timeline | None = None,
) -> PartitionScan:
    """:func:`summarize_partition`'s pass, ready to walk ``log.segments`` (``log``: the directory already
    scanned); a directory that cannot be listed gives a scan with no log (its summary says why)."""
    if log is None:
        try:
            log = LocalLog.scan(directory)
        except OSError as e:
            s = PartitionSummary(directory, None, None)
            s.anomalies.append(problem(pk.UNREADABLE_DIRECTORY, reason=walk_error(e)))
            s.unreadable.append(directory)
            return PartitionScan(s, None)
    s = PartitionSummary(directory, log.topic, log.partition)
    anomalies = s.anomalies
    if checkpoints is None:
        parent = os.path.dirname(locations.abspath(directory))
        checkpoints = read_log_dir_checkpoints(parent, anomalies)
    if log.name is not None:
        key = (log.name.topic, log.name.partition)
        for name, attribute in LOG_DIR_CHECKPOINTS.items():
            value = checkpoints.get(name, {}).get(key)
            if value is not None:
                setattr(s, attribute, value)
        if log.name.kind is not None:
            anomalies.append(
                problem(pk.MARKED_DIRECTORY, marker=log.name.kind, name=os.path.basename(directory))
            )
    else:
        anomalies.append(problem(pk.NOT_A_PARTITION_NAME))

    for path in log.transient_files:
        anomalies.append(problem(pk.LEFT_OVER_FILE, name=os.path.basename(path)))
    return PartitionScan(s, log, progress=progress, timeline=timeline)


class PartitionScan(SegmentVisitor):
    """``kdump ls``'s header pass over a partition's segments, as a :class:`SegmentVisitor`
    (:func:`summarize_partition` walks it alone; ``kdump report`` hands it to its one shared walk).  Call
    :meth:`finish` after the last segment."""

    def __init__(
        self,
        summary: PartitionSummary,
        log: LocalLog | None,
        *,
        progress: Callable[[int], None] | None = None,
        timeline: Timeline | None = None,
    ) -> None:
        self.s = summary
        self.log = log
        self.progress = progress
        self.timeline = timeline
        self.codecs: set[str] = set()
        self.producers: set[int] = set()
        self.transactions = TransactionTracker()
        self.previous_last: int | None = None
        self.first_in_segment = True
        self.name = ""
        self.base_offset = 0
        self.valid = 0

    def start(self, segment: LogSegment) -> bool:
        s = self.s
        anomalies = s.anomalies
        name = self.name = naming.offset_to_filename(segment.base_offset, "")
        if not segment.has(naming.LOG_FILE_SUFFIX):
            anomalies.append(
                problem(pk.ORPHANED_INDEXES, segment=name, suffixes=tuple(sorted(segment.files)))
            )
            return False
        missing = [x for x in (naming.INDEX_FILE_SUFFIX, naming.TIME_INDEX_FILE_SUFFIX) if not segment.has(x)]
        if missing:
            anomalies.append(problem(pk.MISSING_INDEX, segment=name, missing=tuple(missing)))
        s.segments += 1
        if s.first_segment_base_offset is None:
            s.first_segment_base_offset = segment.base_offset
        self.first_in_segment = True
        self.base_offset = segment.base_offset
        if self.timeline is not None:
            self.timeline.start_segment(segment.base_offset)
        return True

    def opened(self, records: FileRecords) -> None:
        s = self.s
        s.size_bytes += records.file_size
        if records.file_size > records.size_in_bytes:
            s.anomalies.append(
                problem(
                    pk.OVERSIZED_SEGMENT,
                    f"{self.name}.log",
                    size=records.file_size,
                    read=records.size_in_bytes,
                )
            )

    #: Runs of plain batches (:mod:`kdump.analysis.header_run`): no anomaly, no transaction, only sums.
    runs = True

    def limit(self, limits: RunLimits) -> None:
        if self.first_in_segment:
            limits.ok = False
            return
        limits.previous(self.previous_last)
        if self.timeline is not None:
            self.timeline.limit(limits)

    def run(self, run: HeaderRun) -> None:
        s = self.s
        self.previous_last = run.last_offset
        s.batches += run.batches
        s.records += run.records
        if self.timeline is not None:
            self.timeline.run(run)
        codecs = run.codecs
        for codec in range(5):
            if codecs >> codec & 1:
                self.codecs.add(compression_name(codec))
        if run.min_timestamp >= 0:
            s.min_timestamp = (
                run.min_timestamp if s.min_timestamp is None else min(s.min_timestamp, run.min_timestamp)
            )
        if run.max_timestamp >= 0:
            s.max_timestamp = (
                run.max_timestamp if s.max_timestamp is None else max(s.max_timestamp, run.max_timestamp)
            )
        for producer in run.producers:  # not transactional: the tracker has nothing to do
            self.producers.add(producer[0])

    def batch(self, batch: RecordBatch) -> None:
        s = self.s
        if self.first_in_segment:
            self.first_in_segment = False
            if batch.base_offset < self.base_offset:
                s.anomalies.append(
                    problem(pk.SEGMENT_STARTS_BELOW_NAME, segment=self.name, offset=batch.base_offset)
                )
        previous_last = self.previous_last
        if previous_last is not None and batch.base_offset <= previous_last:
            s.anomalies.append(
                problem(
                    pk.OFFSET_OUT_OF_ORDER,
                    f"{self.name}.log",
                    batch.position,
                    segment=self.name,
                    offset=batch.base_offset,
                    previous=previous_last,
                )
            )
        self.previous_last = batch.last_offset
        s.batches += 1
        count = _record_count(batch)
        s.records += count
        if self.timeline is not None:
            self.timeline.add(batch, count)
        self.codecs.add(batch.compression_name)
        ts = batch.max_timestamp
        if ts >= 0:
            s.min_timestamp = ts if s.min_timestamp is None else min(s.min_timestamp, ts)
            s.max_timestamp = ts if s.max_timestamp is None else max(s.max_timestamp, ts)
        producer_id = batch.producer_id
        if producer_id >= 0:
            self.producers.add(producer_id)
            self.transactions.append(batch)

    def done(self, records: FileRecords, valid: int) -> None:
        invalid = records.invalid_bytes(valid)
        if invalid > 0:
            self.s.anomalies.append(problem(pk.PARTIAL_BATCH, f"{self.name}.log", valid, bytes=invalid))

    def failed(self, error: KdumpError) -> None:
        if isinstance(error, UnreadableFileError):
            self.s.anomalies.append(problem_of(error))
            self.s.unreadable.append(error.path or self.name)
        else:
            self.s.anomalies.append(problem_of(error, f"{self.name}.log"))

    def end(self, segment: LogSegment) -> None:
        if self.progress is not None:
            self.progress(segment.log_size)

    def finish(self) -> PartitionSummary:
        """The summary, once every segment was walked."""
        s = self.s
        log = self.log
        if log is None:
            return s
        if self.timeline is not None:
            self.timeline.end_segment()
        if self.previous_last is not None:
            s.log_end_offset = self.previous_last + 1
        elif log.log_segments:
            s.log_end_offset = log.log_segments[-1].base_offset
        s.log_start_offset = log.log_start_offset(s.log_start_offset_checkpoint)
        s.codecs = sorted(self.codecs)
        s.producers = sorted(self.producers)
        s.open_transactions = self.transactions.transactions()
        return s


def _record_count(batch: RecordBatch) -> int:
    count = batch.count_or_none
    if count is not None:
        return count
    if not batch.is_compressed:
        return 1
    try:
        return sum(1 for _ in batch.records())
    except KdumpError:
        return 0
