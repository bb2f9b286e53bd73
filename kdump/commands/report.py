"""``kdump report``: an incident report of data directories, built from the facts the other commands produce
(nothing is decoded twice by code of its own): per partition ``kdump ls``'s one header pass (which also feeds
the timeline, :mod:`kdump.analysis.timeline`), ``verify``'s problems, ``kdump txn``'s and ``kdump retention``'s
facts; per ``__consumer_offsets`` partition every group's committed offsets (the replay of ``find --group``)
against the log end offsets of the same run; per ``__transaction_state`` partition every transactional id's
state (the replay ``kdump txn`` uses); then an overview.  The units go to a
:class:`~kdump.facts.report.ReportSink` one by one (:mod:`kdump.facts.incident`); what is kept across units is
small (per partition its log end, per log directory its coordinator states, verify's findings capped per
partition), so memory does not grow with the size of the logs.
"""

from __future__ import annotations

import os
import time
from collections.abc import Iterator

from kdump.analysis.compression_sample import CompressionSampler
from kdump.analysis.log_summary import partition_scan, read_log_dir_checkpoints
from kdump.analysis.log_verification import SegmentFacts, Unchecked, verify_log_segment
from kdump.analysis.segment_walk import SegmentVisitor, started, walk_segments
from kdump.analysis.timeline import Timeline
from kdump.commands.coordinator import CONSUMER_OFFSETS, TRANSACTION_STATE, GroupState, read_group_states
from kdump.commands.ls import ListPartitions, is_internal
from kdump.commands.parallel_policy import min_parallel_bytes
from kdump.commands.retention import METADATA_TOPIC, RetentionCommand
from kdump.commands.txn import DEFAULT_MAX_TIMEOUT_MS, TxnCommand
from kdump.commands.verify import PartitionTarget, SegmentTask, Verify, default_workers, select
from kdump.errors import KdumpError
from kdump.exit_status import ExitStatus
from kdump.facts.incident import (
    MAX_PROBLEMS_PER_PARTITION,
    CoordinatorReport,
    Finding,
    GroupLag,
    GroupsReport,
    KraftSnapshot,
    Overview,
    PartitionReport,
    ReportUnit,
)
from kdump.facts.report import ReportSink
from kdump.facts.verify import Summary
from kdump.facts.verify_index import RuleNote
from kdump.problem import Problem, problem_of
from kdump.storage import locations
from kdump.storage.leader_epoch_checkpoint import read_leader_epoch_checkpoint
from kdump.storage.naming import (
    BOOTSTRAP_CHECKPOINT,
    SNAPSHOT_SUFFIX,
    parse_partition_dir,
    parse_snapshot_name,
)
from kdump.storage.quorum_state import read_quorum_state

#: Findings of the log directories' own files (and of what could not be checked) kept whole.
MAX_LOG_DIR_FINDINGS = 200


class _Findings:
    """A :class:`~kdump.facts.verify.VerifySink` that keeps ``verify``'s findings by partition directory (the
    first :data:`MAX_PROBLEMS_PER_PARTITION` of each, every one counted by kind)."""

    def __init__(self, known: dict[str, str]) -> None:
        self.by_dir: dict[str, list[Finding]] = {}
        self.kinds: dict[str, dict[str, int]] = {}
        #: The report's partition directories by their real paths.
        self.known = known
        self.log_dir: list[Finding] = []
        self.not_checked: list[Finding] = []
        self.unchecked_total = 0
        self.totals = Summary()
        #: Every file with a problem (verify's "files with problems", counted over the runs of every partition).
        self.files: set[str] = set()

    def __getstate__(self) -> dict:
        """Without ``known`` (every partition of the run): a worker's findings of one partition travel back to
        the main process for each partition, and with it they grew with the run (quadratic: 10,000 partitions
        pickled 5 GB)."""
        state = dict(vars(self))
        state["known"] = {}
        return state

    def _directory(self, path: str) -> str | None:
        real = locations.realpath(path)
        for candidate in (real, os.path.dirname(real)):
            if candidate in self.known:
                return self.known[candidate]
        return None

    def problem(self, problem: Problem) -> None:
        finding = Finding(problem)
        self.files.add(finding.path)
        d = self._directory(finding.path)
        if d is None:
            if len(self.log_dir) < MAX_LOG_DIR_FINDINGS:
                self.log_dir.append(finding)
            return
        kept = self.by_dir.setdefault(d, [])
        if len(kept) < MAX_PROBLEMS_PER_PARTITION:
            kept.append(finding)
        kinds = self.kinds.setdefault(d, {})
        kinds[problem.kind] = kinds.get(problem.kind, 0) + 1

    def unchecked(self, item: Unchecked) -> None:
        self.unchecked_total += 1
        if len(self.not_checked) < MAX_LOG_DIR_FINDINGS:
            self.not_checked.append(Finding(item))

    def note(self, note: RuleNote | Problem) -> None:
        pass  # notes are not problems (a running broker's preallocated index, a pre-3.8 time index)

    def summary(self, summary: Summary) -> None:
        """A run's summary, added to the totals (the report makes one run per partition, then one of the log
        directories' own files)."""
        totals = self.totals
        for name, value in vars(summary).items():
            if isinstance(value, int) and not isinstance(value, bool):
                setattr(totals, name, getattr(totals, name) + value)
        for kind, n in summary.kinds.items():
            totals.kinds[kind] = totals.kinds.get(kind, 0) + n
        totals.files_with_problems = len(self.files)

    def merge(self, other: _Findings) -> None:
        """Another run's findings (a partition's, made in a worker process) into these."""
        self.by_dir.update(other.by_dir)
        self.kinds.update(other.kinds)
        self.log_dir.extend(other.log_dir[: max(0, MAX_LOG_DIR_FINDINGS - len(self.log_dir))])
        self.not_checked.extend(other.not_checked[: max(0, MAX_LOG_DIR_FINDINGS - len(self.not_checked))])
        self.unchecked_total += other.unchecked_total
        self.files |= other.files
        self.summary(other.totals)


#: The run whose partitions the forked pool's workers read (set while the pool exists).
_RUNNING: ReportCommand | None = None


def _partition_in_worker(i: int) -> tuple[PartitionReport, _Findings]:
    assert _RUNNING is not None
    return _RUNNING._partition_at(i)


class ReportCommand:
    def __init__(
        self,
        paths: list[str],
        *,
        now: int | None = None,
        config: dict[str, str] | None = None,
        workers: int | None = None,
        max_timeout_ms: int = DEFAULT_MAX_TIMEOUT_MS,
        crc: bool = False,
    ) -> None:
        """``now``: ages and retention's prediction at this time (epoch ms; default the current time);
        ``config``: topic configuration overrides for the prediction (``kdump retention --config``);
        ``max_timeout_ms``: ``transaction.max.timeout.ms``, as ``kdump txn --max-timeout-ms``;
        ``workers``: processes that read partitions side by side (default: the usable cores, or
        ``KDUMP_WORKERS``); ``crc``: check every batch's CRC as ``kdump verify`` does (reads every byte of the
        logs), else the header pass reads the batch headers and the indexes only (the overview says the CRCs
        were not checked)."""
        self.paths = paths
        self.listing = ListPartitions(paths)
        self.directories = self.listing.directories
        self.brokers = {d.path: d.broker_id for d in self.listing.log_dirs}
        self.now = int(time.time() * 1000) if now is None else now
        self.now_given = now is not None
        # ages as kdump txn measures them: against --now when given, else the partition's newest record
        # the partitions listed once (ls's walk) for txn's and retention's readers
        self.txn = TxnCommand(self.directories, now=now, max_timeout_ms=max_timeout_ms, listed=True)
        self.retention = RetentionCommand(self.directories, now=self.now, overrides=config or {}, listed=True)
        self.status = ExitStatus.OK
        self.workers = workers if workers is not None else default_workers()
        self.crc = crc

    def run(self, sink: ReportSink[ReportUnit]) -> ExitStatus:
        """Each unit to ``sink`` as it is made (partitions, groups, coordinators, the overview), then each
        directory the walk could not read, then the end.  Status 1 when ``verify`` found problems, a
        transaction hangs (as ``kdump txn``) or something could not be read, else 0."""
        for unit in self.units():
            sink.fact(unit)
        for problem in self.listing.walk_errors:
            sink.unreadable(problem)
        sink.end()
        return self.status

    def units(self) -> Iterator[ReportUnit]:
        self._select()
        committed = self._read_groups()
        findings = _Findings(self.known)
        ends: dict[tuple[str, int], int | None] = {}
        consumer_offsets: list[str] = []
        transaction_state: list[str] = []
        for report, found in self._partitions():
            findings.merge(found)
            d = report.directory
            name = parse_partition_dir(os.path.basename(os.path.normpath(d)))
            if name is not None and name.topic == CONSUMER_OFFSETS:
                consumer_offsets.append(d)
            if name is not None and name.topic == TRANSACTION_STATE:
                transaction_state.append(d)
            s = report.summary
            if s.topic is not None and s.partition is not None:
                end = s.high_watermark if s.high_watermark is not None else s.log_end_offset
                if end is not None:  # copies of a partition on several brokers: the furthest (the leader's)
                    key = (s.topic, s.partition)
                    ends[key] = max(end, ends.get(key) or end)
                    offsets = committed.get(key)
                    if offsets:
                        report.lag = max(end - min(offsets), 0)
            if s.unreadable or any(p.unreadable for p in report.problems):
                self.status = ExitStatus.PROBLEMS
            if report.txn is not None and report.txn.hanging:
                self.status = ExitStatus.PROBLEMS  # as kdump txn
            yield report
        # the log directories' own files, and what the walk could not read (as ``kdump verify`` ends its run)
        Verify(
            [],
            findings,
            log_dirs=self.verify_log_dirs,
            unreadable=self.verify_unreadable,
            log_dir_states=self.log_dir_states,
        ).run()
        for d in consumer_offsets:
            yield self._groups(d, ends)
        for d in transaction_state:
            problems: list[Problem] = []
            states = self.txn_states(d, problems)
            yield CoordinatorReport(d, states, problems)
        if findings.totals.problems or self.listing.walk_errors:
            self.status = ExitStatus.PROBLEMS
        unchecked = list(findings.not_checked)
        yield Overview(
            self.listing.log_dirs,
            findings.totals,
            findings.log_dir,
            unchecked,
            findings.unchecked_total,
            self.now,
            len(self.directories),
            self.crc,
        )

    def _select(self) -> None:
        """``verify``'s selection of the paths (its partitions, by real path, and the log directories given
        whole), and what is read once for every partition of a log directory."""
        self.known = {locations.realpath(d): d for d in self.directories}
        self.targets: dict[str, PartitionTarget] = {}
        self.verify_log_dirs: list[str] = []
        self.verify_unreadable: list[Problem] = []
        self.log_dir_states: dict = {}
        self.checkpoints: dict[str, dict] = {}
        try:
            targets, self.verify_log_dirs = select(self.paths, self.verify_unreadable)
        except ValueError:
            targets = []  # no Kafka data: ListPartitions said so already
        for t in targets:
            d = self.known.get(locations.realpath(t.log.directory))
            if d is not None and t.base_offsets is None:
                self.targets[d] = t
        for d in self.directories:  # read here once, not once per worker process
            parent = os.path.dirname(locations.abspath(d))
            if parent not in self.checkpoints:
                self.checkpoints[parent] = read_log_dir_checkpoints(parent)
                self.txn._coordinator(parent)
                self.retention.warm(parent)

    def _partitions(self) -> Iterator[tuple[PartitionReport, _Findings]]:
        """Each partition's report and ``verify``'s findings in it, in order: over a process pool (forked,
        one partition a task) when there are several cores and enough to read, else here."""
        indexes = range(len(self.directories))
        least = min_parallel_bytes()
        size = 0
        if self.workers > 1 and len(self.directories) > 1:
            for t in self.targets.values():
                size += sum(s.log_size for s in t.log.log_segments)
                if size >= least:
                    break
        if self.workers < 2 or len(self.directories) < 2 or size < least:
            yield from map(self._partition_at, indexes)
            return
        import multiprocessing

        global _RUNNING
        _RUNNING = self
        try:
            # many small partitions go to a worker a few at a time (one pipe round trip per task)
            chunk = 1 if len(indexes) < 64 * self.workers else 8
            with multiprocessing.get_context("fork").Pool(self.workers) as pool:
                yield from pool.imap(_partition_in_worker, indexes, chunksize=chunk)
        finally:
            _RUNNING = None

    def _partition_at(self, i: int) -> tuple[PartitionReport, _Findings]:
        directory = self.directories[i]
        findings = _Findings(self.known)
        return self._partition(directory, findings), findings

    def _partition(self, directory: str, findings: _Findings) -> PartitionReport:
        """One partition's facts from one walk of its segments: ``verify``'s (which checks the indexes against
        the log in that walk) with ``ls``'s, the timeline's, ``txn``'s and ``retention``'s readers of the batch
        headers beside it (:mod:`kdump.analysis.segment_walk`)."""
        parent = os.path.dirname(locations.abspath(directory))
        problems: list[Problem] = []
        if parent not in self.checkpoints:
            self.checkpoints[parent] = read_log_dir_checkpoints(parent)
        target = self.targets.get(directory)
        timeline = Timeline()
        scan = partition_scan(
            directory,
            log=None if target is None else target.log,
            checkpoints=self.checkpoints[parent],
            timeline=timeline,
        )
        log = scan.log
        visitors: list[SegmentVisitor] = [scan]
        txn = retention = sampler = None
        if log is not None:
            sampler = CompressionSampler(log)
            visitors.append(sampler)
            topic = log.topic
            if not is_internal(topic):
                txn = self.txn.partition_scan(directory, log)
                visitors += txn.visitors
            if not is_internal(topic) or topic == METADATA_TOPIC:
                retention = self.retention.partition_scan(directory, log)
                visitors += retention.visitors
        if target is not None:

            def walk(tasks: list[SegmentTask]) -> Iterator[SegmentFacts]:
                for segment, deep, wanted, active in tasks:
                    also = started(segment, visitors)
                    facts = verify_log_segment(
                        segment, deep=deep, wanted=wanted, active=active, also=also, crc=self.crc
                    )
                    for v in also:
                        v.end(segment)
                    yield facts

            Verify([target], findings, workers=1, mapper=walk, log_dir_states=self.log_dir_states).run()
        elif log is not None:
            walk_segments(log.segments, visitors)
        summary = scan.finish()
        epochs = None
        path = os.path.join(directory, "leader-epoch-checkpoint")
        if locations.isfile(path):
            try:
                epochs = read_leader_epoch_checkpoint(path).entries
            except (KdumpError, OSError) as e:
                problems.append(problem_of(e, path))
        report = PartitionReport(
            summary,
            timeline,
            epochs,
            findings.by_dir.get(directory, []),
            findings.kinds.get(directory, {}),
            problems=problems,
            broker_id=self.brokers.get(parent),
        )
        if sampler is not None and sampler.sample.compressed_batches:
            report.compression = sampler.sample
        if summary.topic == METADATA_TOPIC:
            self._metadata(directory, report)
        if summary.unreadable or summary.segments == 0:
            return report
        if txn is not None and summary.producers:
            report.txn = txn.finish()
        if retention is not None:
            report.retention = retention.finish()
        return report

    def _metadata(self, directory: str, report: PartitionReport) -> None:
        """The metadata log's KRaft snapshots (by their names) and ``quorum-state`` (leader, epoch)."""
        try:
            names = sorted(locations.listdir(directory))
        except OSError:
            return  # said by the summary
        for name in names:
            if not name.endswith(SNAPSHOT_SUFFIX) or name == BOOTSTRAP_CHECKPOINT:
                continue
            try:
                snapshot = parse_snapshot_name(name)
                size = locations.getsize(os.path.join(directory, name))
            except (KdumpError, ValueError, OSError):
                continue  # not a snapshot's name: verify says so
            report.kraft_snapshots.append(KraftSnapshot(snapshot.end_offset, snapshot.epoch, size))
        path = os.path.join(directory, "quorum-state")
        if locations.isfile(path):
            try:
                report.quorum_state = read_quorum_state(path)
            except (KdumpError, OSError) as e:
                report.problems.append(problem_of(e, path))

    def txn_states(self, directory: str, problems: list[Problem]) -> list:
        from kdump.commands.coordinator import read_transaction_states

        states = read_transaction_states(directory, problems)
        return sorted(states.values(), key=lambda m: m.transactional_id)

    def _read_groups(self) -> dict[tuple[str, int], list[int]]:
        """Every ``__consumer_offsets`` partition's groups, read before the partitions (kept for
        :meth:`_groups`), and the offsets committed of each partition: a partition's lag is known when its
        report is made (the page draws lagging partitions first)."""
        self.group_states: dict[str, tuple[list[GroupState], list[Problem]]] = {}
        committed: dict[tuple[str, int], list[int]] = {}
        for d in self.directories:
            name = parse_partition_dir(os.path.basename(os.path.normpath(d)))
            if name is None or name.topic != CONSUMER_OFFSETS:
                continue
            problems: list[Problem] = []
            groups = read_group_states(d, problems)
            self.group_states[d] = (groups, problems)
            for g in groups:
                for c in g.offsets:
                    committed.setdefault((c.topic, c.partition), []).append(c.offset)
        return committed

    def _groups(self, directory: str, ends: dict[tuple[str, int], int | None]) -> GroupsReport:
        read = self.group_states.pop(directory, None)
        if read is None:
            problems: list[Problem] = []
            groups = read_group_states(directory, problems)
        else:
            groups, problems = read
        lags = {
            g.group: [
                GroupLag(c.topic, c.partition, c.offset, c.commit_timestamp, ends.get((c.topic, c.partition)))
                for c in g.offsets
            ]
            for g in groups
        }
        return GroupsReport(directory, groups, lags, problems)
