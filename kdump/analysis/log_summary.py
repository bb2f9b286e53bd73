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
from kdump.analysis.timeline import Timeline
from kdump.errors import KdumpError, UnreadableFileError
from kdump.problem import Problem, problem, problem_of
from kdump.storage import locations, naming
from kdump.storage.local_log import LocalLog
from kdump.storage.offset_checkpoint import CheckpointOffsets, read_offset_checkpoint
from kdump.storage.record_batch import RecordBatch
from kdump.storage.regular_file import walk_error

#: The offset checkpoints of a log directory and the summary field each one feeds.
LOG_DIR_CHECKPOINTS = {
    "log-start-offset-checkpoint": "log_start_offset_checkpoint",
    "replication-offset-checkpoint": "high_watermark",
    "recovery-point-offset-checkpoint": "recovery_point",
    "cleaner-offset-checkpoint": "cleaner_checkpoint",
}


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


def read_log_dir_checkpoints(
    log_dir: str, anomalies: list[Problem] | None = None
) -> dict[str, CheckpointOffsets]:
    """``{file name: {(topic, partition): offset}}`` for the offset checkpoints present in ``log_dir``.  A file
    that cannot be read is left out and, when ``anomalies`` is given, reported there."""
    found: dict[str, CheckpointOffsets] = {}
    for name in LOG_DIR_CHECKPOINTS:
        path = os.path.join(log_dir, name)
        if not locations.isfile(path):
            continue
        try:
            found[name] = read_offset_checkpoint(path).offsets()
        except (KdumpError, OSError) as e:
            if anomalies is not None:
                anomalies.append(problem_of(e, path))
    return found


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
    try:
        if log is None:
            log = LocalLog.scan(directory)
    except OSError as e:
        s = PartitionSummary(directory, None, None)
        s.anomalies.append(problem(pk.UNREADABLE_DIRECTORY, reason=walk_error(e)))
        s.unreadable.append(directory)
        return s
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
    codecs: set[str] = set()
    producers: set[int] = set()
    transactions = TransactionTracker()
    previous_last: int | None = None
    for segment in log.segments:
        name = naming.offset_to_filename(segment.base_offset, "")
        if not segment.has(naming.LOG_FILE_SUFFIX):
            anomalies.append(
                problem(pk.ORPHANED_INDEXES, segment=name, suffixes=tuple(sorted(segment.files)))
            )
            continue
        missing = [x for x in (naming.INDEX_FILE_SUFFIX, naming.TIME_INDEX_FILE_SUFFIX) if not segment.has(x)]
        if missing:
            anomalies.append(problem(pk.MISSING_INDEX, segment=name, missing=tuple(missing)))
        s.segments += 1
        if s.first_segment_base_offset is None:
            s.first_segment_base_offset = segment.base_offset
        first_in_segment = True
        if timeline is not None:
            timeline.start_segment(segment.base_offset)
        try:
            with segment.open_log() as records:
                s.size_bytes += records.file_size
                if records.file_size > records.size_in_bytes:
                    anomalies.append(
                        problem(
                            pk.OVERSIZED_SEGMENT,
                            f"{name}.log",
                            size=records.file_size,
                            read=records.size_in_bytes,
                        )
                    )
                valid = 0
                for batch in records.batches():
                    if first_in_segment:
                        first_in_segment = False
                        if batch.base_offset < segment.base_offset:
                            anomalies.append(
                                problem(pk.SEGMENT_STARTS_BELOW_NAME, segment=name, offset=batch.base_offset)
                            )
                    if previous_last is not None and batch.base_offset <= previous_last:
                        anomalies.append(
                            problem(
                                pk.OFFSET_OUT_OF_ORDER,
                                f"{name}.log",
                                batch.position,
                                segment=name,
                                offset=batch.base_offset,
                                previous=previous_last,
                            )
                        )
                    previous_last = batch.last_offset
                    s.batches += 1
                    count = _record_count(batch)
                    s.records += count
                    if timeline is not None:
                        timeline.add(batch, count)
                    codecs.add(batch.compression_name)
                    ts = batch.max_timestamp
                    if ts >= 0:
                        s.min_timestamp = ts if s.min_timestamp is None else min(s.min_timestamp, ts)
                        s.max_timestamp = ts if s.max_timestamp is None else max(s.max_timestamp, ts)
                    producer_id = batch.producer_id
                    if producer_id >= 0:
                        producers.add(producer_id)
                        transactions.append(batch)
                    valid = batch.position + batch.size_in_bytes
                invalid = records.invalid_bytes(valid)
                if invalid > 0:
                    anomalies.append(problem(pk.PARTIAL_BATCH, f"{name}.log", valid, bytes=invalid))
        except UnreadableFileError as e:
            anomalies.append(problem_of(e))
            s.unreadable.append(e.path or name)
        except KdumpError as e:
            anomalies.append(problem_of(e, f"{name}.log"))
        if progress is not None:
            progress(segment.log_size)
    if timeline is not None:
        timeline.end_segment()
    if previous_last is not None:
        s.log_end_offset = previous_last + 1
    elif log.log_segments:
        s.log_end_offset = log.log_segments[-1].base_offset
    s.log_start_offset = log.log_start_offset(s.log_start_offset_checkpoint)
    s.codecs = sorted(codecs)
    s.producers = sorted(producers)
    s.open_transactions = transactions.transactions()
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
