"""Checking a partition's log and state against each other: what ``kdump verify`` (and ``kdump spark verify``)
check, beyond the indexes.

The work is cut in two so that it runs the same way in one process, over a pool of processes or as Spark
tasks:

* :func:`verify_log_segment` checks one segment, in the one pass over its log that
  :func:`kdump.analysis.index_verification.verify_segment` makes for the index checks: every batch's framing,
  magic and CRC (the CRC covers the batch's bytes after the header fields it excludes; no record is decoded
  unless ``deep``), the offset order of the batches, and that every batch lies inside the offsets the segment's
  name gives it.  It also collects the few facts the partition-level checks need (ABORT markers, the batches
  producer snapshots name, the leader-epoch changes): a :class:`SegmentFacts`, small and picklable.
* :func:`check_partition` then checks what spans segments: offset order and gaps between segments, producer
  snapshots against the log, ``.txnindex`` entries against the ABORT markers, the log directory's checkpoints
  (recovery point, high watermark, log start, cleaner) against the log end, ``leader-epoch-checkpoint``
  against the batches' epochs, and KRaft snapshots (``.checkpoint``) batch by batch.

Every finding is a :class:`~kdump.problem.Problem` (kind, file, byte position, the kind's data; its words are
:mod:`kdump.render.problem_text`'s); what could not be checked is an :class:`Unchecked`.  Nothing here prints.
"""

from __future__ import annotations

import os
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, TypeAlias, cast

from kdump.analysis.header_run import HeaderRun, RunLimits
from kdump.analysis.index_verification import SegmentVerification, verify_segment
from kdump.analysis.segment_walk import SegmentVisitor
from kdump.errors import KdumpError
from kdump.problem import UNREADABLE, Problem, problem
from kdump.storage import locations, naming
from kdump.storage.checkpoint import (
    LOG_START_OFFSET_CHECKPOINT_FILE,
    OFFSET_CHECKPOINT_FILES,
    RECOVERY_POINT_CHECKPOINT_FILE,
)
from kdump.storage.checksum import crc32c
from kdump.storage.control_record_type import ControlRecordType, parse_type_id
from kdump.storage.file_records import INT_MAX, FileRecords, RecordBatch
from kdump.storage.leader_epoch_checkpoint import read_leader_epoch_checkpoint
from kdump.storage.local_log import LocalLog
from kdump.storage.log_segment import LogSegment
from kdump.storage.producer_snapshot import read_producer_snapshot
from kdump.storage.record_batch import (
    ATTRIBUTES_OFFSET,
    CONTROL_FLAG_MASK,
    DELETE_HORIZON_FLAG_MASK,
    RECORD_BATCH_OVERHEAD,
    TRANSACTIONAL_FLAG_MASK,
    DefaultRecordBatch,
)
from kdump.storage.transaction_index import ENTRY_SIZE as TXN_ENTRY_SIZE
from kdump.storage.transaction_index import AbortedTxn, TransactionIndex

if TYPE_CHECKING:  # read only where a log directory has them (kdump verify loads them then)
    from kdump.analysis.topic_config import ClusterConfig
    from kdump.storage.offset_checkpoint import CheckpointOffsets

#: Problem kinds found here (those of the index checks are in ``index_verification.PROBLEM_KINDS``).
PROBLEM_KINDS = {
    "crc": "a batch whose stored CRC does not match its bytes",
    "magic": "a batch whose magic byte is not 0, 1 or 2",
    "offset-order": "a batch whose offsets do not follow the previous batch's, in its segment or across segments",
    "segment-name": "a batch outside its segment's offsets: below the base offset in the file name, or at or "
    "beyond the next segment's",
    "segment-size": "a .log larger than any segment Kafka writes (2147483647 bytes): only that much is checked",
    "offset-gap": "offsets missing between batches of a topic that is not compacted (or with --gaps)",
    "decode": "a batch whose records cannot be decoded (with --deep)",
    "producer-snapshot": "a producer snapshot that cannot be read, lies beyond the log end, or names a batch the "
    "log contradicts",
    "txn-index-mismatch": "a .txnindex entry without its ABORT marker in the log, or an ABORT marker of a transaction that wrote here without a "
    ".txnindex entry",
    "checkpoint": "a log-directory checkpoint (recovery point, high watermark, log start, cleaner) beyond the "
    "log end",
    "leader-epoch": "a leader-epoch-checkpoint that cannot be read, whose entries do not increase or point beyond "
    "the log end, or that lacks an epoch the batches carry",
    "kraft-snapshot": "a KRaft snapshot (.checkpoint) with a corrupt batch or not readable to its end",
    "bootstrap-checkpoint": "a bootstrap.checkpoint (the metadata kafka-storage format writes) with a corrupt batch "
    "or not readable to its end",
    "absent-partition": "a partition the log directory's recovery-point or log-start checkpoint names, whose "
    "directory is absent",
}

#: ``{file name: {(topic, partition): offset}}``: a log directory's offset checkpoints, as read.
LogDirCheckpoints: TypeAlias = "Mapping[str, CheckpointOffsets]"

#: Log-directory checkpoints compared with a partition's log end offset (what their values are called:
#: ``kdump.render.problem_text.CHECKPOINT_VALUES``).
LOG_DIR_CHECKPOINTS = OFFSET_CHECKPOINT_FILES
#: Topics Kafka creates compacted.
COMPACTED_INTERNAL_TOPICS = ("__consumer_offsets", "__transaction_state", "__share_group_state")


@dataclass(frozen=True, slots=True)
class Unchecked(Problem):
    """Something that could not be checked: ``file`` (a partition or log directory), ``kind`` why (the
    constants below), ``data`` the kind's values.  A :class:`~kdump.problem.Problem` in form, not one in meaning:
    verify counts it apart and its sinks say ``not checked``."""


def unchecked(kind: str, path: str, **data: Any) -> Unchecked:
    return Unchecked(kind, path, None, tuple(data.items()))


# Why something was not checked (the kinds of Unchecked):
#: Only some segments of the partition were given.
SOME_SEGMENTS = "some-segments"
#: A ``-delete`` directory: its leader-epoch-checkpoint is not compared.
PENDING_DELETION = "pending-deletion"
#: Offset gaps not judged.  Data: count, gaps (the first three, (first, last) missing), policy, compacted.
GAPS_NOT_JUDGED = "gaps-not-judged"
#: The last segment has index files but no ``.log``.  Data: base_offset.
NO_LAST_LOG = "no-last-log"
#: ``.log`` files that could not be read.  Data: count.
UNREAD_LOGS = "unread-logs"
#: Producer-snapshot entries whose batches are gone.  Data: count, log_start (None when not known).
SNAPSHOT_BATCHES_GONE = "snapshot-batches-gone"
#: ``.txnindex`` entries whose ABORT markers are outside the segments read.  Data: count.
TXN_MARKERS_GONE = "txn-markers-gone"
#: ABORT markers without an entry whose transaction's start is gone.  Data: count, log_start.
ABORTS_NOT_JUDGED = "aborts-not-judged"
#: No log directory above the partition.
NO_LOG_DIR = "no-log-dir"
#: A directory name that is not ``<topic>-<partition>``.
NO_PARTITION_NAME = "no-partition-name"
#: Checkpoint entries of partitions without a directory in a log directory holding none.  Data: count, entries
#: (the first three: (topic, partition, checkpoint file name, value)).
STALE_CHECKPOINT_ENTRIES = "stale-checkpoint-entries"
UNCHECKED_KINDS = frozenset(
    {
        SOME_SEGMENTS,
        PENDING_DELETION,
        GAPS_NOT_JUDGED,
        NO_LAST_LOG,
        UNREAD_LOGS,
        SNAPSHOT_BATCHES_GONE,
        TXN_MARKERS_GONE,
        ABORTS_NOT_JUDGED,
        NO_LOG_DIR,
        NO_PARTITION_NAME,
        STALE_CHECKPOINT_ENTRIES,
    }
)


#: What :attr:`SegmentFacts.txn_events` records.
TXN_DATA, TXN_COMMIT, TXN_ABORT = 0, 1, 2


@dataclass(slots=True)
class SegmentFacts:
    """What :func:`verify_log_segment` found in one segment: its problems, counts, and the facts the
    partition-level checks need."""

    directory: str
    base_offset: int
    has_log: bool
    problems: list[Problem] = field(default_factory=list)
    #: Findings that are not damage: the active segment's preallocated index files, records newer than kdump knows.
    notes: list[Problem] = field(default_factory=list)
    #: Records of an internal topic newer than kdump knows (``--deep``; each kind is one of ``notes``).
    newer_records: int = 0
    index_files: int = 0
    index_entries: int = 0
    time_index_rule: str | None = None
    log_bytes: int = 0
    batches: int = 0
    records: int = 0
    first_offset: int | None = None
    #: False when the first batch is a compressed v0/v1 wrapper (``first_offset`` is then its last offset).
    first_offset_exact: bool = True
    last_offset: int | None = None
    #: Offset gaps between batches inside the segment: (first missing, last missing).
    gaps: list[tuple[int, int]] = field(default_factory=list)
    #: ABORT markers: (producer id, offset).
    aborts: list[tuple[int, int]] = field(default_factory=list)
    #: The transactions' course, in log order: (offset, producer id, what), ``what`` one of ``TXN_DATA`` (the
    #: first transactional batch of a producer after its last marker in this segment), ``TXN_COMMIT``,
    #: ``TXN_ABORT`` (its markers).
    txn_events: list[tuple[int, int, int]] = field(default_factory=list)
    #: Batches that producer snapshots name, by last offset: (producer id, epoch, last sequence).
    wanted_batches: dict[int, tuple[int, int, int]] = field(default_factory=dict)
    #: The ``.log`` could not be read (reported once, as ``unreadable``): the log end offset is not known.
    unreadable_log: bool = False
    #: Where the batches' partition leader epoch changes: (epoch, first offset).
    epochs: list[tuple[int, int]] = field(default_factory=list)
    #: Whether a batch carries a delete horizon (written by the log cleaner: the topic is compacted).
    cleaned: bool = False

    def settled(self) -> SegmentFacts:
        """These facts, complete, as a partition keeps them until its checks across segments: their empty lists
        and dict are one shared, read-only empty list and dict (a partition of 100,000 segments held 34 MiB of
        empty containers, most of its facts)."""
        for name in ("problems", "notes", "gaps", "aborts", "txn_events", "epochs"):
            if not getattr(self, name):
                setattr(self, name, _NO_ITEMS)
        if not self.wanted_batches:
            self.wanted_batches = _NO_ENTRIES
        return self


def _read_only(*args: object, **kwargs: object) -> None:
    raise TypeError("settled segment facts are read-only")


class _NoItems(list[Any]):
    """The empty list settled facts share (:meth:`SegmentFacts.settled`); it refuses to change."""

    __slots__ = ()
    append = extend = insert = __setitem__ = __delitem__ = __iadd__ = __imul__ = _read_only  # type: ignore[assignment]
    sort = reverse = pop = remove = clear = _read_only


class _NoEntries(dict[Any, Any]):
    """The empty dict settled facts share; it refuses to change."""

    __slots__ = ()
    __setitem__ = __delitem__ = update = setdefault = pop = popitem = clear = __ior__ = _read_only  # type: ignore[assignment]


_NO_ITEMS: list[Any] = _NoItems()
_NO_ENTRIES: dict[Any, Any] = _NoEntries()


class _LogChecker:
    """Visits the batches of one segment (called by ``verify_segment``'s pass)."""

    def __init__(
        self, segment: LogSegment, facts: SegmentFacts, deep: bool, wanted: frozenset[int], crc: bool = True
    ) -> None:
        self.path = segment.log_path
        #: False: no batch's CRC is checked (``kdump report``'s header pass reads no record bytes).
        self.crc = crc
        self.base = segment.base_offset
        self.next_base: int | None = None
        self.facts = facts
        self.deep = deep
        self.wanted = wanted
        self.previous_last: int | None = None
        self.epoch = -2
        #: ``--deep`` on an internal topic: its records are decoded with the newest schemas kdump holds, and
        #: those newer than that are counted by what they are: message -> [count, first offset, position].
        name = naming.parse_partition_dir(os.path.basename(os.path.normpath(segment.directory)))
        self.decoder: str | None = None
        if deep and name is not None:  # the schemas are imported only for a deep walk
            from kdump.storage.internal_topics import TOPIC_DECODERS

            self.decoder = TOPIC_DECODERS.get(name.topic)
        self.newer: dict[str, list[int]] = {}
        #: Producers with transactional data after their last marker in this segment.
        self.open_producers: set[int] = set()

    #: Runs of plain batches (:mod:`kdump.analysis.header_run`): counted, the last offset moved on.
    runs = True

    def limit(self, limits: RunLimits) -> None:
        if self.deep:
            limits.ok = False
            return
        if not self.crc:
            limits.crc = False
        limits.previous(self.previous_last)
        limits.leader_epoch(self.epoch)
        limits.segment_base = self.base
        limits.wanted_last = self.wanted

    def run(self, run: HeaderRun) -> None:
        self.facts.batches += run.batches
        self.previous_last = self.facts.last_offset = run.last_offset

    def _problem(self, kind: str, batch: RecordBatch, **data: Any) -> None:
        self.facts.problems.append(problem(kind, self.path, batch.position, offset=batch.base_offset, **data))

    def __call__(self, batch: RecordBatch) -> None:
        facts = self.facts
        facts.batches += 1
        magic = batch.magic
        if magic == 2:
            batch = cast(DefaultRecordBatch, batch)
            # DefaultRecordBatch.is_valid, inlined: this runs for every batch of every segment.
            position = batch.position
            size = batch.size_in_bytes
            if size < RECORD_BATCH_OVERHEAD or (
                self.crc
                and batch.checksum
                != crc32c(memoryview(batch.buf)[position + ATTRIBUTES_OFFSET : position + size])
            ):
                self._crc(batch)
            base = batch.base_offset
            last = base + batch.last_offset_delta
            inexact = False
        elif magic == 0 or magic == 1:
            if self.crc and not batch.is_valid():
                self._crc(batch)
            base, last = batch.base_offset, batch.last_offset
            # A compressed v0/v1 wrapper carries the offset of its last inner message only: where it starts is
            # not known without decompressing, so no gap is judged before it.
            inexact = batch.is_compressed
        else:
            self._problem("magic", batch, magic=magic)
            return
        if base < self.base:
            self._problem("segment-name", batch, case="below", last_offset=last, segment_base=self.base)
        previous = self.previous_last
        if previous is not None:
            if base <= previous:
                self._problem("offset-order", batch, case="batch", last_offset=last, previous=previous)
            elif base > previous + 1 and not inexact:
                facts.gaps.append((previous + 1, base - 1))
        elif facts.first_offset is None:
            facts.first_offset = base
            facts.first_offset_exact = not inexact
        if previous is None or last > previous:
            self.previous_last = last
            facts.last_offset = last
        if magic == 2:
            if batch.partition_leader_epoch != self.epoch:
                self.epoch = batch.partition_leader_epoch
                facts.epochs.append((self.epoch, base))
            attributes = batch.attributes
            if attributes & DELETE_HORIZON_FLAG_MASK:
                facts.cleaned = True
            batch = cast(DefaultRecordBatch, batch)
            if last in self.wanted and batch.producer_id >= 0:
                facts.wanted_batches[last] = (batch.producer_id, batch.producer_epoch, batch.last_sequence)
            if attributes & CONTROL_FLAG_MASK:
                self._control(batch)
            elif attributes & TRANSACTIONAL_FLAG_MASK:
                pid = batch.producer_id
                if pid not in self.open_producers:
                    self.open_producers.add(pid)
                    facts.txn_events.append((base, pid, TXN_DATA))
        if self.deep:
            try:
                if self.decoder is not None and not batch.is_control_batch:
                    facts.records += self._decode_internal(batch)
                else:
                    facts.records += sum(1 for _ in batch.records())
            except KdumpError as e:
                self._problem("decode", batch, message=e.message)

    def _decode_internal(self, batch: RecordBatch) -> int:
        """Decode an internal topic's records with the newest schemas; count those newer than kdump knows
        (other decoding failures are not judged here: ``kdump files`` with the topic's decoder shows them)."""
        from kdump.storage.internal_topics import NewerThanKdumpError, decode_key_value

        decoder = self.decoder
        assert decoder is not None
        n = 0
        for record in batch.records():
            n += 1
            try:
                decode_key_value(decoder, record.key, record.value, newest=True)
            except NewerThanKdumpError as e:
                seen = self.newer.get(e.message)
                if seen is None:
                    self.newer[e.message] = [1, record.offset, batch.position]
                else:
                    seen[0] += 1
            except KdumpError:
                pass
        return n

    def add_newer_notes(self) -> None:
        """One note per kind of record newer than kdump knows, with how many and where the first is, and their
        number in all."""
        self.facts.newer_records = sum(count for count, _, _ in self.newer.values())
        self.facts.notes = [
            problem("newer-record", self.path, position, offset=offset, count=count, message=message)
            for message, (count, offset, position) in self.newer.items()
        ]

    def _crc(self, batch: RecordBatch) -> None:
        if batch.size_in_bytes < RECORD_BATCH_OVERHEAD:
            self._problem("crc", batch, case="short", size=batch.size_in_bytes, header=RECORD_BATCH_OVERHEAD)
        else:
            self._problem("crc", batch, stored=batch.checksum, computed=batch.compute_checksum())

    def _control(self, batch: RecordBatch) -> None:
        try:
            for record in batch.records():
                kind = ControlRecordType.from_type_id(parse_type_id(record.key))
                if kind is ControlRecordType.ABORT:
                    self.facts.aborts.append((batch.producer_id, record.offset))
                    self.facts.txn_events.append((record.offset, batch.producer_id, TXN_ABORT))
                elif kind is ControlRecordType.COMMIT:
                    self.facts.txn_events.append((record.offset, batch.producer_id, TXN_COMMIT))
                else:
                    continue
                self.open_producers.discard(batch.producer_id)
        except KdumpError as e:
            self._problem("decode", batch, case="control", message=e.message)


def verify_log_segment(
    segment: LogSegment,
    *,
    deep: bool = False,
    wanted: frozenset[int] = frozenset(),
    active: bool = False,
    also: Sequence[SegmentVisitor] = (),
    crc: bool = True,
) -> SegmentFacts:
    """Every check of one segment: its indexes (``verify_segment``) and its log, in one pass.  ``wanted``:
    last offsets of batches that producer snapshots name (their producer fields are collected).  ``active``:
    the partition's active segment (``verify_segment``).  ``crc``: False checks no batch's CRC (``kdump
    report``'s header pass: then no record byte is read, except where ``deep`` decodes them)."""
    facts = SegmentFacts(segment.directory, segment.base_offset, segment.has(naming.LOG_FILE_SUFFIX))
    checker = _LogChecker(segment, facts, deep, wanted, crc)
    result = verify_segment(segment, visit=checker, active=active, also=also)
    checker.add_newer_notes()
    return with_index_checks(facts, result)


def check_log(
    segment: LogSegment, *, deep: bool = False, wanted: frozenset[int] = frozenset()
) -> SegmentFacts:
    """The log half of :func:`verify_log_segment` alone: the same batches, the same checks (the walk stops
    where ``verify_segment``'s does; that one reports why).  With :func:`with_index_checks` over
    ``verify_segment(segment)`` run elsewhere (another process) it gives :func:`verify_log_segment`'s facts."""
    facts = SegmentFacts(segment.directory, segment.base_offset, segment.has(naming.LOG_FILE_SUFFIX))
    checker = _LogChecker(segment, facts, deep, wanted)
    if facts.has_log:
        try:
            with segment.open_log() as records:
                for batch in records.batches():
                    checker(batch)
        except KdumpError:
            pass
    checker.add_newer_notes()
    return facts


def with_index_checks(facts: SegmentFacts, result: SegmentVerification) -> SegmentFacts:
    """``facts`` of the log checks completed with ``verify_segment``'s ``result`` (its problems and notes first)."""
    facts.problems[:0] = result.problems
    facts.notes = result.notes + facts.notes
    facts.index_files = result.index_files
    facts.index_entries = result.entries
    facts.time_index_rule = result.time_index_rule
    facts.log_bytes = result.log_bytes
    facts.unreadable_log = result.unreadable_log
    segment = result.segment
    if facts.has_log and segment.log_size > INT_MAX:
        facts.problems.append(problem("segment-size", segment.log_path, size=segment.log_size, read=INT_MAX))
    return facts


@dataclass
class PartitionFacts:
    """What :func:`check_partition` found, with the counts of what it checked."""

    directory: str
    problems: list[Problem] = field(default_factory=list)
    unchecked: list[Unchecked] = field(default_factory=list)
    log_end_offset: int | None = None
    producer_snapshots: int = 0
    txn_index_entries: int = 0
    checkpoint_values: int = 0
    leader_epochs: int = 0
    kraft_snapshots: int = 0


def snapshot_wanted_offsets(log: LocalLog) -> frozenset[int]:
    """The last offsets of the batches the partition's producer snapshots name (unreadable snapshots are left
    out here; :func:`check_partition` reports them)."""
    wanted: set[int] = set()
    for _, path in log.producer_snapshots:
        try:
            snapshot = read_producer_snapshot(path)
        except (KdumpError, OSError):
            continue
        wanted.update(e.last_offset for e in snapshot.entries if e.has_batch_metadata)
    return frozenset(wanted)


def cleanup_policy(log: LocalLog, config: ClusterConfig | None = None) -> str | None:
    """The topic's ``cleanup.policy`` when known: from the cluster metadata's topic configs (``config``), or
    ``compact`` for Kafka's compacted internal topics."""
    topic = log.topic
    if topic is None:
        return None
    if topic in COMPACTED_INTERNAL_TOPICS:
        return "compact"
    if topic == "__cluster_metadata":
        return "delete"
    if config is not None:
        value = config.topic_value(topic, "cleanup.policy", "log.cleanup.policy")
        if value is not None:
            return value
    return None


def check_partition(
    log: LocalLog,
    segments: list[SegmentFacts],
    *,
    log_dir_checkpoints: LogDirCheckpoints | None,
    log_dir: str | None = None,
    policy: str | None = None,
    gaps: bool = False,
    whole: bool = True,
) -> PartitionFacts:
    """The checks that span the segments of one partition, from the segments' facts (in base-offset order).
    ``log_dir_checkpoints``: ``{file name: {(topic, partition): offset}}`` of the log directory above (None when
    there is none).  ``policy``: the topic's cleanup.policy when known; offset gaps are problems when it is
    known not to compact, or with ``gaps``.  ``whole``: False when only some segments were checked (the
    partition-level checks are then skipped)."""
    out = PartitionFacts(log.directory)
    with_log = [s for s in segments if s.has_log]
    if not whole:
        out.unchecked.append(unchecked(SOME_SEGMENTS, log.directory))
        return out
    gap_list = _check_segment_order(log, with_log, out)
    out.log_end_offset = _log_end_offset(with_log)
    _judge_gaps(log, with_log, gap_list, policy, gaps, out)
    if not _log_end_is_known(log, segments, with_log, out):
        out.log_end_offset = None
    leo = out.log_end_offset
    first_offset = next((s.first_offset for s in with_log if s.first_offset is not None), None)
    _check_producer_snapshots(log, with_log, leo, first_offset, out)
    _check_txn_indexes(log, with_log, out)
    _check_log_dir_checkpoints(log, leo, log_dir_checkpoints, log_dir, out)
    if log.name is not None and log.name.kind == "delete":
        # LogManager.loadLog loads a directory renamed for deletion only to delete it (addLogToBeDeleted): its
        # leader-epoch cache, emptied when the partition was deleted, is never used again.
        out.unchecked.append(unchecked(PENDING_DELETION, log.directory))
    else:
        _check_leader_epochs(log, with_log, leo, _log_start_offset(log, log_dir_checkpoints), out)
    _check_kraft_snapshots(log, out)
    return out


def _check_segment_order(
    log: LocalLog, with_log: list[SegmentFacts], out: PartitionFacts
) -> list[tuple[SegmentFacts, tuple[int, int]]]:
    """Each segment's first offset after the previous segment's last, each last offset below the next segment's
    name (problems ``offset-order``, ``segment-name``); returns the offset gaps, inside segments and between
    them, for :func:`_judge_gaps`."""
    gap_list = [(s, g) for s in with_log for g in s.gaps]
    previous: SegmentFacts | None = None
    for i, s in enumerate(with_log):
        if s.first_offset is None:
            continue
        path = os.path.join(log.directory, naming.offset_to_filename(s.base_offset))
        if previous is not None and previous.last_offset is not None:
            if s.first_offset <= previous.last_offset:
                out.problems.append(
                    problem(
                        "offset-order",
                        path,
                        case="segment",
                        offset=s.first_offset,
                        previous=previous.last_offset,
                    )
                )
            elif s.first_offset > previous.last_offset + 1 and s.first_offset_exact:
                gap_list.append((s, (previous.last_offset + 1, s.first_offset - 1)))
        nxt = (
            with_log[i + 1] if i + 1 < len(with_log) else None
        )  # not a slice a segment: 100k segments, O(n^2)
        if nxt is not None and s.last_offset is not None and s.last_offset >= nxt.base_offset:
            out.problems.append(
                problem("segment-name", path, case="next", offset=s.last_offset, next_base=nxt.base_offset)
            )
        previous = s
    return gap_list


def _log_end_offset(with_log: list[SegmentFacts]) -> int | None:
    """One past the last batch's last offset, and never below the last segment's base offset (an empty active
    segment); None without segments."""
    last_with_batches = next((s for s in reversed(with_log) if s.last_offset is not None), None)
    if last_with_batches is not None and last_with_batches.last_offset is not None:
        return max(last_with_batches.last_offset + 1, with_log[-1].base_offset)
    return with_log[-1].base_offset if with_log else None


def _judge_gaps(
    log: LocalLog,
    with_log: list[SegmentFacts],
    gap_list: list[tuple[SegmentFacts, tuple[int, int]]],
    policy: str | None,
    gaps: bool,
    out: PartitionFacts,
) -> None:
    """Offset gaps are problems (``offset-gap``) with ``gaps`` or when the topic is known not to compact; else
    one "not judged" line (compaction leaves gaps)."""
    if not gap_list:
        return
    compacted = policy is not None and "compact" in policy or any(s.cleaned for s in with_log)
    if gaps or (policy is not None and not compacted):
        for s, (a, b) in gap_list:
            out.problems.append(
                problem(
                    "offset-gap",
                    os.path.join(log.directory, naming.offset_to_filename(s.base_offset)),
                    offset=a,
                    last_offset=b,
                    policy=policy,
                )
            )
        return
    out.unchecked.append(
        unchecked(
            GAPS_NOT_JUDGED,
            log.directory,
            count=len(gap_list),
            gaps=tuple(g for _, g in gap_list[:3]),
            policy=policy,
            compacted=compacted,
        )
    )


def _log_end_is_known(
    log: LocalLog, segments: list[SegmentFacts], with_log: list[SegmentFacts], out: PartitionFacts
) -> bool:
    """False, with a "not checked" line, when the last segment has index files but no ``.log`` or a ``.log``
    could not be read (one problem per unreadable file, said with the segment, not one per check needing it)."""
    known = True
    orphans = [s.base_offset for s in segments if not s.has_log]
    if orphans and (not with_log or max(orphans) > with_log[-1].base_offset):
        out.unchecked.append(unchecked(NO_LAST_LOG, log.directory, base_offset=max(orphans)))
        known = False
    unread = [s for s in segments if s.unreadable_log]
    if unread:
        out.unchecked.append(unchecked(UNREAD_LOGS, log.directory, count=len(unread)))
        known = False
    return known


def _log_start_offset(log: LocalLog, log_dir_checkpoints: LogDirCheckpoints | None) -> int | None:
    """The partition's log start offset as far as the files say: ``log-start-offset-checkpoint``; for
    ``__cluster_metadata``, as late as its earliest snapshot."""
    log_start = None
    if log_dir_checkpoints is not None and log.name is not None:
        log_start = log_dir_checkpoints.get(LOG_START_OFFSET_CHECKPOINT_FILE, {}).get(
            (log.name.topic, log.name.partition)
        )
    if log.topic == "__cluster_metadata" and log.kraft_snapshots:
        # The metadata log's start moves to a snapshot (KafkaMetadataLog.deleteBeforeSnapshot ->
        # UnifiedLog.maybeIncrementLogStartOffset, which truncates the epoch cache's first entry to it:
        # LeaderEpochFileCache.truncateFromStart) and forgets the snapshots before it; no checkpoint records it
        # and older batches stay in the segment that spans it.  It may lie anywhere up to the earliest snapshot.
        earliest = min(int(os.path.basename(p)[:20]) for p in log.kraft_snapshots)
        log_start = max(log_start or 0, earliest)
    return log_start


def _check_producer_snapshots(
    log: LocalLog,
    segments: list[SegmentFacts],
    leo: int | None,
    first_offset: int | None,
    out: PartitionFacts,
) -> None:
    found: dict[int, tuple[int, int, int]] = {}
    for s in segments:
        found.update(s.wanted_batches)
    missing = 0
    for offset, path in log.producer_snapshots:
        out.producer_snapshots += 1
        try:
            snapshot = read_producer_snapshot(path)
        except KdumpError as e:
            out.problems.append(problem("producer-snapshot", path, e.position, message=e.message))
            continue
        except OSError as e:
            out.problems.append(problem(UNREADABLE, path, reason=e.strerror or str(e)))
            continue
        if leo is not None and offset > leo:
            out.problems.append(
                problem("producer-snapshot", path, case="beyond-end", offset=offset, log_end_offset=leo)
            )
            continue
        for i, entry in enumerate(snapshot.entries):
            if not entry.has_batch_metadata:
                continue
            if entry.last_offset >= offset:
                out.problems.append(
                    problem(
                        "producer-snapshot",
                        path,
                        case="not-below",
                        entry=i,
                        offset=entry.last_offset,
                        producer_id=entry.producer_id,
                        snapshot_offset=offset,
                    )
                )
                continue
            batch = found.get(entry.last_offset)
            if batch is None:
                missing += 1
                continue
            pid, epoch, last_sequence = batch
            expected = (entry.producer_id, entry.producer_epoch, entry.last_sequence)
            if (pid, epoch, last_sequence) != expected:
                out.problems.append(
                    problem(
                        "producer-snapshot",
                        path,
                        case="mismatch",
                        entry=i,
                        offset=entry.last_offset,
                        producer_id=entry.producer_id,
                        producer_epoch=entry.producer_epoch,
                        last_sequence=entry.last_sequence,
                        log_producer_id=pid,
                        log_producer_epoch=epoch,
                        log_last_sequence=last_sequence,
                    )
                )
    if missing:
        out.unchecked.append(
            unchecked(SNAPSHOT_BATCHES_GONE, log.directory, count=missing, log_start=first_offset)
        )


def _check_txn_indexes(log: LocalLog, segments: list[SegmentFacts], out: PartitionFacts) -> None:
    entries: list[tuple[str, int, AbortedTxn]] = []
    for segment in log.segments:
        if not segment.has(naming.TXN_INDEX_FILE_SUFFIX):
            continue
        try:
            index = TransactionIndex.open(segment.source(naming.TXN_INDEX_FILE_SUFFIX), segment.base_offset)
        except OSError:
            continue  # reported by the index checks
        entries.extend((segment.txn_index_path, i, e) for i, e in enumerate(index))
    out.txn_index_entries = len(entries)
    aborts = {offset: pid for s in segments for pid, offset in s.aborts}
    ranges = [(s.first_offset, s.last_offset) for s in segments if s.first_offset is not None]
    indexed = set()
    skipped = 0
    for path, i, entry in entries:
        indexed.add(entry.last_offset)
        if not any(a <= entry.last_offset <= b for a, b in ranges if b is not None):
            skipped += 1  # its marker is in no segment that was read (deleted, or its .log is missing)
            continue
        pid = aborts.get(entry.last_offset)
        if pid != entry.producer_id:
            out.problems.append(
                problem(
                    "txn-index-mismatch",
                    path,
                    i * TXN_ENTRY_SIZE,
                    case="entry",
                    entry=i,
                    offset=entry.last_offset,
                    aborted=entry,
                    marker_producer_id=pid,
                )
            )
    if skipped:
        out.unchecked.append(unchecked(TXN_MARKERS_GONE, log.directory, count=skipped))
    # An ABORT marker needs an entry only when its transaction wrote to this partition: Kafka's
    # ProducerAppendInfo.appendEndTxnMarker completes (and LogSegment.updateTxnIndex indexes) only a transaction
    # with a first offset, and the log cleaner (LogCleaner's CleanedTransactionMetadata.onControlBatchRead) keeps
    # an entry only while batches of the transaction remain.
    open_producers: set[int] = set()
    seen: set[int] = set()
    log_first = next((s.first_offset for s in segments if s.first_offset is not None), None)
    not_judged = 0
    for offset, pid, what in (e for s in segments for e in s.txn_events):
        if what == TXN_DATA:
            open_producers.add(pid)
            seen.add(pid)
            continue
        had_data = pid in open_producers
        open_producers.discard(pid)
        known = pid in seen
        seen.add(pid)
        if what != TXN_ABORT or offset in indexed or aborts.get(offset) != pid:
            continue
        if not had_data:
            if not known and log_first is not None and log_first > 0:
                not_judged += 1  # its transaction may have begun in data no longer in the log
            continue
        holder = log.segment_for(offset)
        path = holder.txn_index_path if holder is not None else log.directory
        out.problems.append(
            problem("txn-index-mismatch", path, case="marker", offset=offset, producer_id=pid)
        )
    if not_judged:
        out.unchecked.append(
            unchecked(ABORTS_NOT_JUDGED, log.directory, count=not_judged, log_start=log_first)
        )


def _check_log_dir_checkpoints(
    log: LocalLog,
    leo: int | None,
    checkpoints: LogDirCheckpoints | None,
    log_dir: str | None,
    out: PartitionFacts,
) -> None:
    if checkpoints is None or log_dir is None:
        out.unchecked.append(unchecked(NO_LOG_DIR, log.directory))
        return
    if log.name is None:
        out.unchecked.append(unchecked(NO_PARTITION_NAME, log.directory))
        return
    if leo is None:
        return
    key = (log.name.topic, log.name.partition)
    for name in LOG_DIR_CHECKPOINTS:
        value = checkpoints.get(name, {}).get(key)
        if value is None:
            continue
        out.checkpoint_values += 1
        if value > leo:
            out.problems.append(
                problem(
                    "checkpoint",
                    os.path.join(log_dir, name),
                    offset=value,
                    topic=log.name.topic,
                    partition=log.name.partition,
                    checkpoint=name,
                    log_end_offset=leo,
                )
            )


def _check_leader_epochs(
    log: LocalLog, segments: list[SegmentFacts], leo: int | None, log_start: int | None, out: PartitionFacts
) -> None:
    """The cache's entries must increase and point into the log; every epoch the batches carry at or above the
    log start offset must be listed, starting no later than its first batch (Kafka clamps the first entry to
    the log start offset when the log start moves: ``LeaderEpochFileCache.truncateFromStart``)."""
    path = log.state_files.get("leader-epoch-checkpoint")
    if path is None:
        return
    try:
        cache = read_leader_epoch_checkpoint(path)
    except KdumpError as e:
        out.problems.append(problem("leader-epoch", path, e.position, message=e.message))
        return
    except OSError as e:
        out.problems.append(problem(UNREADABLE, path, reason=e.strerror or str(e)))
        return
    entries = cache.entries
    out.leader_epochs = len(entries)
    for i, entry in enumerate(entries):
        if i and (entry.epoch <= entries[i - 1].epoch or entry.start_offset < entries[i - 1].start_offset):
            out.problems.append(
                problem(
                    "leader-epoch",
                    path,
                    case="order",
                    entry=i,
                    offset=entry.start_offset,
                    epoch=entry.epoch,
                    previous_epoch=entries[i - 1].epoch,
                    previous_start_offset=entries[i - 1].start_offset,
                )
            )
        if leo is not None and entry.start_offset > leo:
            out.problems.append(
                problem(
                    "leader-epoch",
                    path,
                    case="beyond-end",
                    entry=i,
                    offset=entry.start_offset,
                    epoch=entry.epoch,
                    log_end_offset=leo,
                )
            )
    starts = {e.epoch: e.start_offset for e in entries}
    first_seen: dict[int, int] = {}
    for s in segments:
        for epoch, offset in s.epochs:
            if epoch >= 0 and (log_start is None or offset >= log_start or epoch not in first_seen):
                first_seen.setdefault(epoch, offset if log_start is None else max(offset, log_start))
    for epoch, offset in sorted(first_seen.items()):
        start = starts.get(epoch)
        if start is None:
            if entries and epoch < entries[0].epoch:
                continue  # an epoch from before the cache's first entry (its start was truncated away)
            out.problems.append(problem("leader-epoch", path, case="unlisted", offset=offset, epoch=epoch))
        elif start > offset:
            out.problems.append(
                problem("leader-epoch", path, case="late", offset=offset, epoch=epoch, start_offset=start)
            )


def _check_kraft_snapshots(log: LocalLog, out: PartitionFacts) -> None:
    for path in log.kraft_snapshots:
        out.kraft_snapshots += 1
        _check_snapshot_file(path, "kraft-snapshot", out.problems)


def _check_snapshot_file(path: str, kind: str, problems: list[Problem]) -> None:
    """A KRaft snapshot or ``bootstrap.checkpoint`` (the same format, ``BatchFileReader``): every batch's CRC,
    and whole batches to the end."""
    valid = 0
    position = 0
    try:
        with FileRecords(path) as records:
            for batch in records.batches():
                position = batch.position
                if not batch.is_valid():
                    problems.append(
                        problem(
                            kind,
                            path,
                            batch.position,
                            case="crc",
                            offset=batch.base_offset,
                            stored=batch.checksum,
                            computed=batch.compute_checksum(),
                        )
                    )
                valid = batch.position + batch.size_in_bytes
            invalid = records.invalid_bytes(valid)
    except KdumpError as e:
        problems.append(problem(kind, path, e.position or position, message=e.message))
        return
    except OSError as e:
        problems.append(problem(UNREADABLE, path, reason=e.strerror or str(e)))
        return
    if invalid > 0:
        problems.append(problem(kind, path, valid, case="torn", bytes=invalid))


#: The file ``kafka-storage format`` writes in the metadata log directory (``BootstrapDirectory``).
BOOTSTRAP_CHECKPOINT = "bootstrap.checkpoint"
#: Checkpoints Kafka rewrites with exactly the log directory's partitions (``LogManager``'s
#: checkpointLogRecoveryOffsetsInDir and checkpointLogStartOffsetsInDir, every flush-offset-checkpoint interval,
#: even for a log directory left with no partition); ReplicaManager.checkpointHighWatermarks and the cleaner
#: (LogCleanerManager.updateCheckpoints) rewrite theirs only for log directories that still hold partitions, so
#: in a log directory left with none an entry there may outlive its directory.
REWRITTEN_CHECKPOINTS = (RECOVERY_POINT_CHECKPOINT_FILE, LOG_START_OFFSET_CHECKPOINT_FILE)


@dataclass
class LogDirFacts:
    """What :func:`check_log_dir` found in a log directory's own files."""

    directory: str
    problems: list[Problem] = field(default_factory=list)
    unchecked: list[Unchecked] = field(default_factory=list)
    bootstrap_checkpoints: int = 0


def check_log_dir(log_dir: str, checkpoints: LogDirCheckpoints | None) -> LogDirFacts:
    """The checks of a log directory itself: its ``bootstrap.checkpoint`` batch by batch, and the partitions its
    checkpoints name against the partition directories it holds (LogManager.loadLogs loads only the
    directories present: an entry without one is data that is gone)."""
    out = LogDirFacts(log_dir)
    bootstrap = os.path.join(log_dir, BOOTSTRAP_CHECKPOINT)
    if locations.isfile(bootstrap):
        out.bootstrap_checkpoints += 1
        _check_snapshot_file(bootstrap, "bootstrap-checkpoint", out.problems)
    if not checkpoints:
        return out
    try:
        with locations.scandir(log_dir) as entries:
            present = {e.name for e in entries if e.is_dir(follow_symlinks=False)}
    except OSError:
        return out
    held: set[tuple[str, int]] = set()
    for name in present:
        parsed = naming.parse_partition_dir(name)
        if parsed is not None:
            held.add((parsed.topic, parsed.partition))
    # the partitions ReplicaManager and the cleaner know (the metadata log is the raft layer's own)
    replicated = any(topic != "__cluster_metadata" for topic, _ in held)
    stale: list[tuple[str, int, str, int]] = []
    for file_name in LOG_DIR_CHECKPOINTS:
        for (topic, partition), value in sorted(checkpoints.get(file_name, {}).items()):
            if (topic, partition) in held:
                continue
            if file_name in REWRITTEN_CHECKPOINTS or replicated:
                out.problems.append(
                    problem(
                        "absent-partition",
                        os.path.join(log_dir, file_name),
                        offset=value,
                        topic=topic,
                        partition=partition,
                        checkpoint=file_name,
                    )
                )
            else:
                stale.append((topic, partition, file_name, value))
    if stale:
        out.unchecked.append(
            unchecked(STALE_CHECKPOINT_ENTRIES, log_dir, count=len(stale), entries=tuple(stale[:3]))
        )
    return out


__all__ = [
    "BOOTSTRAP_CHECKPOINT",
    "PROBLEM_KINDS",
    "LogDirFacts",
    "check_log_dir",
    "PartitionFacts",
    "SegmentFacts",
    "Unchecked",
    "check_partition",
    "cleanup_policy",
    "snapshot_wanted_offsets",
    "verify_log_segment",
]
