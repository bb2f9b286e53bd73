"""The facts of ``kdump report`` (an incident report of data directories): the other commands' facts put side by
side, unit by unit, handed to a :class:`~kdump.facts.report.ReportSink` (:mod:`kdump.render.html_report`: one
self-contained HTML page; :mod:`kdump.render.incident`: JSON lines).

* :class:`PartitionReport`, one per partition: ``kdump ls``'s summary, the timeline of the same header pass
  (:class:`~kdump.analysis.timeline.Timeline`), ``leader-epoch-checkpoint``, ``verify``'s problems of its files,
  ``kdump txn``'s and ``kdump retention``'s facts;
* :class:`GroupsReport`, one per ``__consumer_offsets`` partition: every group's committed offsets (``find
  --group``'s replay) against the log end of the partitions in the data directory;
* :class:`CoordinatorReport`, one per ``__transaction_state`` partition: every transactional id's state;
* :class:`Overview`, last: the log directories, what ``verify`` found by kind, what could not be checked.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from kdump.analysis.compression_sample import CompressionSample
from kdump.analysis.log_summary import PartitionSummary
from kdump.analysis.log_verification import Unchecked
from kdump.analysis.timeline import Timeline
from kdump.facts.coordinator import GroupState, TransactionMetadata
from kdump.facts.ls import LogDir
from kdump.facts.retention import RetentionFacts
from kdump.facts.txn import PartitionTxnFacts
from kdump.facts.verify import Summary
from kdump.problem import Problem
from kdump.storage.leader_epoch_checkpoint import EpochEntry
from kdump.storage.quorum_state import QuorumState

#: Problems of one partition kept whole (the rest are counted by kind).
MAX_PROBLEMS_PER_PARTITION = 50


@dataclass(frozen=True)
class Finding:
    """One ``verify`` problem (a :class:`~kdump.problem.Problem`, put into words by the sinks) or what could not be
    checked (an :class:`~kdump.analysis.log_verification.Unchecked`: kind ``not-checked``)."""

    fact: Problem | Unchecked

    @property
    def path(self) -> str:
        return str(self.fact.file)

    @property
    def kind(self) -> str:
        return "not-checked" if isinstance(self.fact, Unchecked) else self.fact.kind

    @property
    def position(self) -> int | None:
        return None if isinstance(self.fact, Unchecked) else self.fact.position

    @property
    def offset(self) -> int | None:
        return None if isinstance(self.fact, Unchecked) else self.fact.get("offset")


@dataclass(frozen=True)
class KraftSnapshot:
    """A ``<end offset>-<epoch>.checkpoint`` file of the metadata log (Kafka's ``Snapshots.parse``)."""

    end_offset: int
    epoch: int
    bytes: int


@dataclass
class PartitionReport:
    summary: PartitionSummary
    timeline: Timeline
    #: ``leader-epoch-checkpoint``'s entries (None: no such file, or unreadable: then in ``problems``).
    epoch_checkpoint: tuple[EpochEntry, ...] | None
    #: ``verify``'s problems of this partition's files (the first :data:`MAX_PROBLEMS_PER_PARTITION`).
    findings: list[Finding] = field(default_factory=list)
    #: Every problem of the partition by kind (findings not kept whole included).
    kinds: dict[str, int] = field(default_factory=dict)
    #: ``kdump txn``'s facts (None for a partition without producer ids or an internal topic).
    txn: PartitionTxnFacts | None = None
    retention: RetentionFacts | None = None
    problems: list[Problem] = field(default_factory=list)
    #: The ``node.id`` of the log directory's ``meta.properties`` (as ``kdump ls`` reports it).
    broker_id: int | None = None
    #: The metadata log (``__cluster_metadata``): its KRaft snapshots by name (end offset, epoch, bytes)...
    kraft_snapshots: list[KraftSnapshot] = field(default_factory=list)
    #: ... and its ``quorum-state`` (None when absent or unreadable: then in ``problems``).
    quorum_state: QuorumState | None = None
    #: The compression ratio measured on a sample of its compressed batches (None: no compressed batch).
    compression: CompressionSample | None = None
    #: The largest lag of a consumer group on this partition (its end against the group's committed offset,
    #: as :class:`GroupLag`; None: no group committed an offset of it): what the page draws lagging partitions
    #: first by.  Not in the JSON: each group's lags are, in its ``reportGroups``.
    lag: int | None = None

    @property
    def directory(self) -> str:
        return self.summary.directory


@dataclass(frozen=True)
class GroupLag:
    """A group's committed offset of one partition against that partition's end in the data directory:
    ``log_end_offset`` is what ``kafka-consumer-groups.sh`` calls LOG-END-OFFSET (ListOffsets' latest: the high
    watermark, else the log end offset when no checkpoint has it; the largest of the copies when several log
    directories hold the partition), None when none holds it."""

    topic: str
    partition: int
    offset: int
    commit_timestamp: int
    log_end_offset: int | None

    @property
    def lag(self) -> int | None:
        return None if self.log_end_offset is None else max(self.log_end_offset - self.offset, 0)


@dataclass
class GroupsReport:
    """The groups of one ``__consumer_offsets`` partition."""

    directory: str
    groups: list[GroupState]
    lags: dict[str, list[GroupLag]]
    problems: list[Problem] = field(default_factory=list)


@dataclass
class CoordinatorReport:
    """The transactional ids of one ``__transaction_state`` partition, each with its latest state."""

    directory: str
    transactions: list[TransactionMetadata]
    problems: list[Problem] = field(default_factory=list)


@dataclass
class Overview:
    log_dirs: list[LogDir]
    #: ``verify``'s summary of the same paths (its counts by kind in ``verify.kinds``).
    verify: Summary
    #: The first findings of each kind not tied to a partition's files (log directory files).
    log_dir_findings: list[Finding]
    #: What ``verify`` could not check, and the directories the walk could not read (kind ``unreadable``).
    unchecked: list[Finding]
    unchecked_total: int
    now: int
    partitions: int
    #: Whether every batch's CRC was checked (``kdump report --crc``); else the report read the batch headers
    #: and the indexes only, and a record's bytes only where a chart needed them.
    crc_checked: bool


ReportUnit = PartitionReport | GroupsReport | CoordinatorReport | Overview
