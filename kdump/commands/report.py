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

from kdump.analysis.index_verification import IndexProblem
from kdump.analysis.log_summary import read_log_dir_checkpoints, summarize_partition
from kdump.analysis.log_verification import Unchecked
from kdump.analysis.timeline import Timeline
from kdump.commands.coordinator import CONSUMER_OFFSETS, TRANSACTION_STATE, read_group_states
from kdump.commands.ls import ListPartitions, is_internal
from kdump.commands.retention import METADATA_TOPIC, RetentionCommand
from kdump.commands.txn import TxnCommand
from kdump.commands.verify import Verify, select
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

    def __init__(self, directories: list[str]) -> None:
        self.by_dir: dict[str, list[Finding]] = {}
        self.kinds: dict[str, dict[str, int]] = {}
        self.known = {locations.realpath(d): d for d in directories}
        self.log_dir: list[Finding] = []
        self.not_checked: list[Finding] = []
        self.unchecked_total = 0
        self.totals = Summary()

    def _directory(self, path: str) -> str | None:
        real = locations.realpath(path)
        for candidate in (real, os.path.dirname(real)):
            if candidate in self.known:
                return self.known[candidate]
        return None

    def problem(self, problem: IndexProblem) -> None:
        finding = Finding(problem.path, problem.kind, problem.message, problem.position, problem.offset)
        d = self._directory(problem.path)
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
            self.not_checked.append(Finding(item.path, "not-checked", item.message))

    def note(self, note: RuleNote | IndexProblem) -> None:
        pass  # notes are not problems (a running broker's preallocated index, a pre-3.8 time index)

    def summary(self, summary: Summary) -> None:
        self.totals = summary


class ReportCommand:
    def __init__(
        self, paths: list[str], *, now: int | None = None, config: dict[str, str] | None = None
    ) -> None:
        """``now``: ages and retention's prediction at this time (epoch ms; default the current time);
        ``config``: topic configuration overrides for the prediction (``kdump retention --config``)."""
        self.paths = paths
        self.listing = ListPartitions(paths)
        self.directories = self.listing.directories
        self.brokers = {d.path: d.broker_id for d in self.listing.log_dirs}
        self.now = int(time.time() * 1000) if now is None else now
        self.now_given = now is not None
        # ages as kdump txn measures them: against --now when given, else the partition's newest record
        self.txn = TxnCommand(paths, now=now)
        self.retention = RetentionCommand(paths, now=self.now, overrides=config or {})
        self.status = ExitStatus.OK

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
        findings = self._verify()
        ends: dict[tuple[str, int], int | None] = {}
        checkpoints: dict[str, dict] = {}
        consumer_offsets: list[str] = []
        transaction_state: list[str] = []
        for d in self.directories:
            name = parse_partition_dir(os.path.basename(os.path.normpath(d)))
            if name is not None and name.topic == CONSUMER_OFFSETS:
                consumer_offsets.append(d)
            if name is not None and name.topic == TRANSACTION_STATE:
                transaction_state.append(d)
            report = self._partition(d, findings, checkpoints)
            s = report.summary
            if s.topic is not None and s.partition is not None:
                end = s.high_watermark if s.high_watermark is not None else s.log_end_offset
                if end is not None:  # copies of a partition on several brokers: the furthest (the leader's)
                    key = (s.topic, s.partition)
                    ends[key] = max(end, ends.get(key) or end)
            if s.unreadable or any(p.unreadable for p in report.problems):
                self.status = ExitStatus.PROBLEMS
            if report.txn is not None and report.txn.hanging:
                self.status = ExitStatus.PROBLEMS  # as kdump txn
            yield report
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
        )

    def _verify(self) -> _Findings:
        findings = _Findings(self.directories)
        unreadable: list[IndexProblem] = []
        try:
            targets, log_dirs = select(self.paths, unreadable)
        except ValueError:
            return findings  # no Kafka data: ListPartitions said so already
        Verify(targets, findings, log_dirs=log_dirs, unreadable=unreadable).run()
        return findings

    def _partition(
        self, directory: str, findings: _Findings, checkpoints: dict[str, dict]
    ) -> PartitionReport:
        parent = os.path.dirname(locations.abspath(directory))
        problems: list[Problem] = []
        if parent not in checkpoints:
            checkpoints[parent] = read_log_dir_checkpoints(parent)
        timeline = Timeline()
        summary = summarize_partition(directory, checkpoints=checkpoints[parent], timeline=timeline)
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
        if summary.topic == METADATA_TOPIC:
            self._metadata(directory, report)
        if summary.unreadable or summary.segments == 0:
            return report
        if not is_internal(summary.topic) and summary.producers:
            report.txn = self.txn.partition_facts(directory)
        if not is_internal(summary.topic) or summary.topic == "__cluster_metadata":
            report.retention = self.retention.partition_facts(directory)
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

    def _groups(self, directory: str, ends: dict[tuple[str, int], int | None]) -> GroupsReport:
        problems: list[Problem] = []
        groups = read_group_states(directory, problems)
        lags = {
            g.group: [
                GroupLag(c.topic, c.partition, c.offset, c.commit_timestamp, ends.get((c.topic, c.partition)))
                for c in g.offsets
            ]
            for g in groups
        }
        return GroupsReport(directory, groups, lags, problems)
