"""``kdump retention``: a prediction of what time and size retention and the log cleaner would do to each
partition, with the configuration it used.

Delete policy (``UnifiedLog.deleteOldSegments``, Kafka 4.0): segments are deleted from the oldest on while a
predicate holds, and only segments wholly below the high watermark (the next segment's base offset, or the log
end offset for the last one, <= high watermark; an empty last segment never):

* time: ``now - segment.largestTimestamp > retention.ms`` (``retention.ms`` < 0: never); ``largestTimestamp`` is
  the largest batch max-timestamp of the segment, else the file's modification time;
* size: ``retention.bytes`` >= 0 and the log's size exceeds it: the oldest segments whose sizes fit in the
  excess;
* log start offset: a segment whose next segment starts at or below the log start offset (any policy).

Afterwards the log start offset is the first remaining segment's base offset (or the old one when larger).
A segment that is not deletable yet becomes so at ``max(largestTimestamp of it and every older segment) +
retention.ms + 1`` (the deletion is a prefix); the broker checks every ``log.retention.check.interval.ms``.

Compact policy (``LogCleanerManager.cleanableOffsets``, ``LogToClean``): the first dirty offset is the
``cleaner-offset-checkpoint`` entry (the log start offset when absent or out of range); the first uncleanable
offset is the smallest of the last stable offset, the active segment's base offset and the first segment
whose largest timestamp is within ``min.compaction.lag.ms`` of now; clean bytes are the segments below the
first dirty offset, cleanable bytes those from it to the first uncleanable segment; the dirty ratio is
cleanable / (clean + cleanable), and the log is cleaned when it exceeds ``min.cleanable.dirty.ratio``.
Tombstones are kept ``delete.retention.ms`` past their batch's delete horizon (set when the cleaner first sees
them, KIP-534); one without a horizon yet is removed no earlier than ``delete.retention.ms`` after its next
cleaning.
"""

from __future__ import annotations

import os
import time
from collections.abc import Callable

from kdump import problem as pk
from kdump.analysis.cleaning import MAP_ENTRY_BYTES, predict_cleaning
from kdump.analysis.consumer_view import ongoing_transactions
from kdump.analysis.digest_map import DIGESTS, DigestCensus, batch_entries, flags_of
from kdump.analysis.digest_map import digest as key_digest
from kdump.analysis.header_run import HeaderRun, RunLimits
from kdump.analysis.log_dir_checkpoints import read_log_dir_checkpoints
from kdump.analysis.segment_walk import SegmentVisitor, walk_segments
from kdump.analysis.topic_config import ClusterConfig, read_cluster_config
from kdump.commands.key_census import BUDGET_BYTES, ENTRY_BYTES, KeyCensus
from kdump.commands.ls import numbered
from kdump.errors import KdumpError
from kdump.exit_status import ExitStatus
from kdump.facts.report import ReportSink, hand_over
from kdump.facts.retention import CompactionFacts, RetentionFacts, SegmentFate
from kdump.problem import Problem, problem, problem_of
from kdump.storage import locations, naming
from kdump.storage.file_records import FileRecords, RecordBatch
from kdump.storage.local_log import LocalLog, find_partition_dirs
from kdump.storage.log_segment import LogSegment
from kdump.storage.regular_file import walk_error

#: Topic config -> (broker config, Kafka 4.0 default).
DEFAULTS: dict[str, tuple[str, str]] = {
    "cleanup.policy": ("log.cleanup.policy", "delete"),
    "retention.ms": ("log.retention.ms", "604800000"),
    "retention.bytes": ("log.retention.bytes", "-1"),
    "min.cleanable.dirty.ratio": ("log.cleaner.min.cleanable.ratio", "0.5"),
    "delete.retention.ms": ("log.cleaner.delete.retention.ms", "86400000"),
    "min.compaction.lag.ms": ("log.cleaner.min.compaction.lag.ms", "0"),
    "max.compaction.lag.ms": ("log.cleaner.max.compaction.lag.ms", "9223372036854775807"),
}


METADATA_TOPIC = "__cluster_metadata"
#: The broker configs of the metadata log's snapshot retention, with their Kafka 4.0 defaults
#: (``KRaftConfigs``: metadata.max.retention.ms 7 days, metadata.max.retention.bytes 100 MiB).
METADATA_SNAPSHOT_DEFAULTS = {
    "metadata.max.retention.ms": "604800000",
    "metadata.max.retention.bytes": "104857600",
}


def parse_config_overrides(items: list[str]) -> dict[str, str]:
    found = {}
    for item in items:
        name, sep, value = item.partition("=")
        if not sep or not name:
            raise ValueError(f"--config {item!r}: expected name=value")
        found[name.strip()] = value.strip()
    return found


class RetentionCommand:
    def __init__(
        self,
        paths: list[str],
        *,
        now: int | None = None,
        overrides: dict[str, str] | None = None,
        listed: bool = False,
    ) -> None:
        """``listed``: ``paths`` are the partition directories, already found by the caller (``kdump report``
        walks the paths once for every command it runs), not walked again."""
        self.directories: list[str] = list(paths) if listed else []
        #: Directories the walk could not read, with the reason (reported, and status 1).
        self.walk_errors: list[Problem] = []
        for path in [] if listed else paths:
            found = list(
                find_partition_dirs(
                    [path],
                    on_error=lambda p, e: self.walk_errors.append(
                        problem(pk.UNREADABLE_DIRECTORY, p, reason=walk_error(e))
                    ),
                )
            )
            if not found:
                raise ValueError(f"{path}: no partition directory in it or below it")
            found.sort(key=numbered)  # orders-2 before orders-10, as ls
            self.directories.extend(found)
        self.now = int(time.time() * 1000) if now is None else now
        self.now_given = now is not None
        self.overrides = overrides or {}
        self._cluster: dict[str, ClusterConfig | None] = {}

    def status(self, facts: list[RetentionFacts]) -> ExitStatus:
        """0, or 1 when a file or directory could not be read (a partition's problem, a directory of the
        walk); the other problems are notes of the prediction (no high watermark, a value not a number)."""
        unreadable = any(p.unreadable for f in facts for p in f.problems)
        return ExitStatus.PROBLEMS if self.walk_errors or unreadable else ExitStatus.OK

    def _cluster_config(self, log_dir: str, problems: list[Problem]) -> ClusterConfig | None:
        if log_dir not in self._cluster:
            try:
                self._cluster[log_dir] = read_cluster_config(log_dir)
            except KdumpError as e:
                problems.append(problem_of(e))
                self._cluster[log_dir] = None
        return self._cluster[log_dir]

    def warm(self, log_dir: str) -> None:
        """Read ``log_dir``'s cluster config now, when it reads cleanly (a run that forks workers reads it once,
        before; one that fails is left for the first partition to report, as a run without workers does)."""
        problems: list[Problem] = []
        self._cluster_config(log_dir, problems)
        if problems:
            del self._cluster[log_dir]

    def effective_config(self, log_dir: str, topic: str | None, problems: list[Problem]) -> tuple[dict, dict]:
        cluster = self._cluster_config(log_dir, problems)
        config: dict[str, str] = {}
        sources: dict[str, str] = {}
        for name, (broker_name, default) in DEFAULTS.items():
            if name in self.overrides:
                config[name], sources[name] = self.overrides[name], "--config"
                continue
            value = None
            if cluster is not None and topic is not None:
                value = cluster.topics.get(topic, {}).get(name)
                if value is not None:
                    config[name], sources[name] = value, "topic config (__cluster_metadata)"
                    continue
                value = cluster.topic_value(topic, name, broker_name)
                if value is not None:
                    config[name], sources[name] = (
                        value,
                        f"dynamic broker config {broker_name} (__cluster_metadata)",
                    )
                    continue
            config[name], sources[name] = default, "Kafka default"
        return config, sources

    def facts(self) -> list[RetentionFacts]:
        return [self.partition_facts(d) for d in self.directories]

    def run(self, sink: ReportSink[RetentionFacts]) -> ExitStatus:
        """Each partition's prediction, then each directory the walk could not read, to ``sink``; the status
        of :meth:`status` (a prediction is no finding; what could not be read is)."""
        return self.status(hand_over(sink, map(self.partition_facts, self.directories), self.walk_errors))

    def partition_facts(self, directory: str) -> RetentionFacts:
        scan = self.partition_scan(directory)
        walk_segments(scan.log.log_segments, scan.visitors)
        return scan.finish()

    def partition_scan(self, directory: str, log: LocalLog | None = None) -> RetentionScan:
        """:meth:`partition_facts`' pass over the batch headers, ready to walk ``log``'s segments (``log``: the
        directory already scanned)."""
        return RetentionScan(self, directory, LocalLog.scan(directory) if log is None else log)

    def _facts(self, directory: str, log: LocalLog, problems: list[Problem], fates: _Fates) -> RetentionFacts:
        log_dir = os.path.dirname(locations.abspath(directory))
        config, sources = self.effective_config(log_dir, log.topic, problems)
        checkpoints = read_log_dir_checkpoints(log_dir, problems)
        key = None if log.name is None else (log.name.topic, log.name.partition)

        def ckpt(name: str) -> int | None:
            return checkpoints.get(name, {}).get(key) if key else None

        segments = fates.segments
        log_end = fates.log_end
        problems.extend(fates.problems)
        for i, s in enumerate(segments):
            s.next_offset = (
                segments[i + 1].base_offset if i + 1 < len(segments) else (log_end or s.base_offset)
            )
        if segments and log_end is None:
            log_end = segments[-1].base_offset
        log_start = log.log_start_offset(ckpt("log-start-offset-checkpoint"))
        hw = ckpt("replication-offset-checkpoint")
        if hw is None and log_end is not None:
            hw = log_end
            if log.topic != METADATA_TOPIC:  # the raft layer's high watermark is never checkpointed
                problems.append(problem(pk.NO_HIGH_WATERMARK))
        size_total = sum(s.size for s in segments)
        policy = {p.strip() for p in config["cleanup.policy"].split(",")}
        if log.topic == METADATA_TOPIC:
            log_start = self._metadata_retention(log, segments, config, sources, log_start, hw, problems)
        else:
            self._apply_delete(segments, policy, config, log_start, hw, log_end, size_total, problems)
        remaining = [s for s in segments if s.deleted_by is None]
        if log_start is None:
            after = None
        elif remaining:
            after = max(log_start, remaining[0].base_offset)
        else:
            after = max(log_start, log_end or log_start)
        compaction = None
        if "compact" in policy and segments:
            compaction = self._compaction(
                log, segments, config, ckpt("cleaner-offset-checkpoint"), log_start, hw, problems
            )
        return RetentionFacts(
            directory,
            log.topic,
            log.partition,
            self.now,
            config,
            sources,
            log_start,
            after,
            log_end,
            hw,
            size_total,
            segments,
            compaction,
            problems,
        )

    def _metadata_retention(
        self,
        log: LocalLog,
        segments: list[SegmentFate],
        config: dict[str, str],
        sources: dict[str, str],
        log_start: int | None,
        hw: int | None,
        problems: list[Problem],
    ) -> int | None:
        """The KRaft metadata log: no time or size retention of its own (``KafkaMetadataLog.apply`` sets
        retention.ms and retention.bytes to -1); ``KafkaMetadataLog.maybeClean`` deletes old snapshots -- while
        the log and snapshots exceed metadata.max.retention.bytes, then while a snapshot's
        LastContainedLogTimestamp is older than metadata.max.retention.ms -- each time moving the log start to
        the next snapshot (``deleteBeforeSnapshot``), never past the latest; segments wholly below the log
        start then go (``UnifiedLog.deleteOldSegments``).  Returns the log start offset before that."""
        for name, why in (
            ("retention.ms", "the metadata log has no time retention (KafkaMetadataLog)"),
            ("retention.bytes", "the metadata log has no size retention (KafkaMetadataLog)"),
        ):
            config[name], sources[name] = "-1", why
        for name, default in METADATA_SNAPSHOT_DEFAULTS.items():
            if name in self.overrides:
                config[name], sources[name] = self.overrides[name], "--config"
            else:
                config[name], sources[name] = default, "Kafka default (a broker config: not in the data)"
        retention_ms = _int(config["metadata.max.retention.ms"], problems, "metadata.max.retention.ms")
        retention_bytes = _int(
            config["metadata.max.retention.bytes"], problems, "metadata.max.retention.bytes"
        )
        snapshots = _metadata_snapshots(log, problems)
        start = log_start
        if start is None or len(snapshots) < 2:
            return start
        latest = snapshots[-1][0]
        kept = list(snapshots)

        def log_size() -> int:
            return sum(s.size for s in segments if s.next_offset > new_start[0])

        new_start = [start]

        def clean(should: Callable[[tuple[int, int | None, int]], bool]) -> None:
            while len(kept) >= 2:
                if not should(kept[0]):
                    return
                nxt = kept[1][0]
                if not (new_start[0] < nxt <= latest):
                    return
                new_start[0] = nxt
                kept.pop(0)

        total = [sum(size for _, _, size in kept)]
        if retention_bytes >= 0:

            def over(snapshot: tuple[int, int | None, int]) -> bool:
                if log_size() + total[0] > retention_bytes:
                    total[0] -= snapshot[2]
                    return True
                return False

            clean(over)
        if retention_ms >= 0:
            clean(lambda snap: snap[1] is not None and self.now - snap[1] > retention_ms)
        moved = new_start[0]
        for i, seg in enumerate(segments):
            if (
                i + 1 < len(segments)
                and segments[i + 1].base_offset <= moved
                and (hw is None or hw >= seg.next_offset)
            ):
                seg.deleted_by = "snapshot"
            else:
                break
        return start

    def _apply_delete(
        self,
        segments: list[SegmentFate],
        policy: set[str],
        config: dict[str, str],
        log_start: int | None,
        hw: int | None,
        log_end: int | None,
        size_total: int,
        problems: list[Problem],
    ) -> None:
        def upper_ok(i: int) -> bool:
            s = segments[i]
            last = i + 1 == len(segments)
            if last and s.size == 0:
                return False
            return hw is not None and hw >= s.next_offset

        def prefix(reason: str, predicate) -> None:  # type: ignore[no-untyped-def]
            for i, s in enumerate(segments):
                if s.deleted_by is not None:
                    continue
                if upper_ok(i) and predicate(i, s):
                    s.deleted_by = reason
                else:
                    return

        retention_ms = _int(config["retention.ms"], problems, "retention.ms")
        retention_bytes = _int(config["retention.bytes"], problems, "retention.bytes")
        if "delete" in policy:
            if retention_ms >= 0:
                prefix("time", lambda i, s: self.now - s.largest_timestamp > retention_ms)
                latest = -1
                for s in segments:
                    latest = max(latest, s.largest_timestamp)
                    if s.deleted_by is None:
                        s.deletable_at = latest + retention_ms + 1
            if retention_bytes >= 0:
                remaining = sum(s.size for s in segments if s.deleted_by is None)
                diff = [remaining - retention_bytes]

                def fits(_i: int, s: SegmentFate) -> bool:
                    if diff[0] - s.size >= 0:
                        diff[0] -= s.size
                        return True
                    return False

                if diff[0] > 0:
                    prefix("size", fits)
        if log_start is not None:
            prefix(
                "log-start-offset",
                lambda i, s: i + 1 < len(segments) and segments[i + 1].base_offset <= log_start,
            )

    def _compaction(
        self,
        log: LocalLog,
        segments: list[SegmentFate],
        config: dict[str, str],
        cleaner_checkpoint: int | None,
        log_start: int | None,
        hw: int | None,
        problems: list[Problem],
    ) -> CompactionFacts:
        start = log_start or 0
        log_end = segments[-1].next_offset
        first_dirty = cleaner_checkpoint if cleaner_checkpoint is not None else start
        if first_dirty < start or first_dirty > log_end:
            problems.append(problem(pk.CLEANER_CHECKPOINT_OUT_OF_RANGE, offset=first_dirty))
            first_dirty = start
        ongoing, more = ongoing_transactions(log)
        problems.extend(more)
        first_unstable = min((t.first_offset for t in ongoing), default=None)
        lso = hw if hw is not None else log_end
        if first_unstable is not None:
            lso = min(lso, first_unstable)
        candidates = [lso, segments[-1].base_offset]
        lag = _int(config["min.compaction.lag.ms"], problems, "min.compaction.lag.ms")
        if lag > 0:
            for s in segments[:-1]:
                if s.next_offset > first_dirty and s.largest_timestamp > self.now - lag:
                    candidates.append(s.base_offset)
                    break
        uncleanable = min(candidates)
        first_uncleanable_segment = next(
            (s for s in segments[:-1] if s.next_offset > uncleanable), segments[-1]
        )
        clean = sum(s.size for s in _segments_between(segments, -1, first_dirty))
        cleanable = sum(
            s.size
            for s in _segments_between(
                segments, first_dirty, max(first_dirty, first_uncleanable_segment.base_offset)
            )
        )
        total = clean + cleanable
        ratio = cleanable / total if total else 0.0
        try:
            min_ratio = float(config["min.cleanable.dirty.ratio"])
        except ValueError:
            problems.append(
                problem(
                    pk.NOT_A_NUMBER,
                    name="min.cleanable.dirty.ratio",
                    value=config["min.cleanable.dirty.ratio"],
                    used=0.5,
                )
            )
            min_ratio = 0.5
        facts = CompactionFacts(
            first_dirty, uncleanable, clean, cleanable, ratio, min_ratio, total > 0 and ratio > min_ratio
        )
        counted = self._keys(log, facts, problems)
        facts.cleaning = predict_cleaning(
            log,
            first_dirty,
            first_uncleanable_segment.base_offset,
            self.now,
            _int(config["delete.retention.ms"], problems, "delete.retention.ms"),
            problems,
            BUDGET_BYTES // MAP_ENTRY_BYTES,
            counted,
        )
        return facts

    def _keys(
        self, log: LocalLog, facts: CompactionFacts, problems: list[Problem]
    ) -> dict[int, tuple[int, int]] | None:
        """The census of the keys into ``facts``, keys told apart by their MD5 digest as Kafka's cleaner tells
        them apart (``SkimpyOffsetMap``'s ``put`` and ``get`` compare digests); with the C accelerator, each
        segment read whole (by base offset): its data records and their tombstones with a key, which a cleaning
        keeps where it does not clean (``predict_cleaning`` then need not read it again)."""
        if DIGESTS is not None:
            return self._key_digests(log, facts, problems)
        census = KeyCensus()  # bounded: spills to temporary files past a few tens of MiB of keys
        parts = census.parts  # key -> latest value is a tombstone, in dicts by the key's hash
        mask = census.mask
        budget = BUDGET_BYTES
        held = 0
        keyed = 0
        for segment in log.log_segments:
            position = None
            try:
                with segment.open_log() as records:
                    for batch in records.batches():
                        if batch.is_control_batch:
                            continue
                        position = batch.position
                        horizon = batch.delete_horizon_ms
                        for record in batch.records():
                            facts.records += 1
                            if record.key is None:
                                facts.records_without_key += 1
                                continue
                            tomb = record.value is None
                            # the key as Kafka's cleaner tells keys apart: by its MD5 digest (SkimpyOffsetMap's
                            # put and get compare digests, so two keys of one digest are one key), as the C path
                            key = key_digest(record.key)
                            keyed += 1
                            parts[hash(key) & mask][key] = tomb
                            held += len(key) + ENTRY_BYTES
                            if held > budget:
                                census.spill()
                                held = 0
                            if tomb:
                                facts.tombstones += 1
                                if horizon is not None:
                                    facts.tombstones_with_horizon += 1
                                    if (
                                        facts.latest_delete_horizon is None
                                        or horizon > facts.latest_delete_horizon
                                    ):
                                        facts.latest_delete_horizon = horizon
                                    if horizon <= self.now:
                                        facts.tombstones_past_horizon += 1
            except KdumpError as e:
                problems.append(problem_of(e.located(segment.log_path, position)))
        facts.distinct_keys, facts.live_tombstones = census.counts()
        facts.superseded = keyed - facts.distinct_keys  # every keyed record but each key's first
        return None

    def _key_digests(
        self, log: LocalLog, facts: CompactionFacts, problems: list[Problem]
    ) -> dict[int, tuple[int, int]]:
        """:meth:`_keys` with the C accelerator: the keys by their MD5 digest (as the pure-Python census, and as
        Kafka's cleaner holds them: ``SkimpyOffsetMap``, keys of one digest are one key), a batch's records
        counted at once from its entries' flags (``analysis.digest_map``)."""
        census = DigestCensus(BUDGET_BYTES)  # bounded: spills to temporary files past the budget
        keyed = 0
        counted: dict[int, tuple[int, int]] = {}
        for segment in log.log_segments:
            position = None
            records_before, tombstones_before = facts.records, facts.tombstones
            try:
                with segment.open_log() as records:
                    for batch in records.batches():
                        if batch.is_control_batch:
                            continue
                        position = batch.position
                        entries, error = batch_entries(batch)
                        flags = flags_of(entries)
                        values, tombs = flags.count(1), flags.count(3)
                        facts.records += len(flags)
                        facts.records_without_key += len(flags) - values - tombs
                        keyed += values + tombs
                        census.add(entries)
                        if tombs:
                            facts.tombstones += tombs
                            horizon = batch.delete_horizon_ms
                            if horizon is not None:
                                facts.tombstones_with_horizon += tombs
                                if (
                                    facts.latest_delete_horizon is None
                                    or horizon > facts.latest_delete_horizon
                                ):
                                    facts.latest_delete_horizon = horizon
                                if horizon <= self.now:
                                    facts.tombstones_past_horizon += tombs
                        if error is not None:
                            raise error
                counted[segment.base_offset] = (
                    facts.records - records_before,
                    facts.tombstones - tombstones_before,
                )
            except KdumpError as e:
                problems.append(problem_of(e.located(segment.log_path, position)))
        facts.distinct_keys, facts.live_tombstones = census.counts()
        facts.superseded = keyed - facts.distinct_keys
        return counted


class _Fates(SegmentVisitor):
    """The pass over the batch headers: each segment's largest timestamp (its file's mtime without one) and
    size, and the log end offset."""

    def __init__(self) -> None:
        self.segments: list[SegmentFate] = []
        self.log_end: int | None = None
        self.problems: list[Problem] = []
        self.largest = -1
        self.size = 0

    def start(self, segment: LogSegment) -> bool:
        self.largest = -1
        self.size = 0
        return segment.has(naming.LOG_FILE_SUFFIX)

    def opened(self, records: FileRecords) -> None:
        self.size = records.size_in_bytes

    def batch(self, batch: RecordBatch) -> None:
        self.largest = max(self.largest, batch.max_timestamp)
        self.log_end = batch.last_offset + 1

    #: Runs of plain batches (:mod:`kdump.analysis.header_run`).
    runs = True

    def limit(self, limits: RunLimits) -> None:
        pass

    def run(self, run: HeaderRun) -> None:
        self.largest = max(self.largest, run.max_timestamp)
        self.log_end = run.last_offset + 1

    def failed(self, error: KdumpError) -> None:
        self.problems.append(problem_of(error))

    def end(self, segment: LogSegment) -> None:
        largest = self.largest
        if largest < 0:
            try:
                largest = int(locations.getmtime(segment.log_path) * 1000)
            except OSError:
                largest = -1
        self.segments.append(
            SegmentFate(segment.base_offset, segment.base_offset, self.size, largest, None, None)
        )


class RetentionScan:
    """One partition's ``kdump retention`` facts in the making: its :attr:`visitors` walk the segments (alone,
    or in ``kdump report``'s one shared walk), then :meth:`finish` gives the facts."""

    def __init__(self, command: RetentionCommand, directory: str, log: LocalLog) -> None:
        self.command = command
        self.directory = directory
        self.log = log
        self.fates = _Fates()
        self.visitors: list[SegmentVisitor] = [self.fates]

    def finish(self) -> RetentionFacts:
        return self.command._facts(self.directory, self.log, [], self.fates)


def _metadata_snapshots(log: LocalLog, problems: list[Problem]) -> list[tuple[int, int | None, int]]:
    """The metadata log's snapshots (``<offset>-<epoch>.checkpoint``) in (offset, epoch) order: offset, the
    header's LastContainedLogTimestamp (``Snapshots.lastContainedLogTimestamp``; None when unreadable) and
    size."""
    from kdump.storage.control_record import ControlRecordType, decode_control_record
    from kdump.storage.file_records import FileRecords

    found = []
    for path in sorted(log.kraft_snapshots, key=lambda p: os.path.basename(p)):
        name = os.path.basename(path)
        timestamp = None
        try:
            size = locations.getsize(path)
            with FileRecords(path) as records:
                for batch in records.batches():
                    for record in batch.records():
                        control = decode_control_record(record.key, record.value)
                        if control.control_type is ControlRecordType.SNAPSHOT_HEADER and control.message:
                            timestamp = int(control.message["LastContainedLogTimestamp"])
                        break
                    break
        except (KdumpError, OSError) as e:
            problems.append(problem_of(e, path))
            continue
        found.append((int(name[:20]), int(name[21:31]), timestamp, size))
    found.sort()
    return [(offset, timestamp, size) for offset, _, timestamp, size in found]


def _segments_between(segments: list[SegmentFate], start: int, end: int) -> list[SegmentFate]:
    """Kafka's ``LogSegments.values(from, to)``: from the segment holding ``start`` (floor) to those starting
    below ``end``."""
    if start == end:
        return []
    floor = 0
    for i, s in enumerate(segments):
        if s.base_offset <= start:
            floor = i
    return [s for s in segments[floor:] if s.base_offset < end]


def _int(text: str, problems: list[Problem], name: str) -> int:
    try:
        return int(text)
    except ValueError:
        problems.append(problem(pk.NOT_A_NUMBER, name=name, value=text, used=-1))
        return -1
