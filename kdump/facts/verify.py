"""The facts of ``kdump verify`` (a partition's problems come as :class:`~kdump.problem.Problem`
and :class:`~kdump.facts.verify_index.RuleNote`; what could not be checked as
:class:`~kdump.analysis.log_verification.Unchecked`; the run's :class:`Summary`) and :class:`VerifySink`, where
they go (:mod:`kdump.render.verify_report`)."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Protocol

from kdump.analysis.log_verification import (
    Unchecked,
)
from kdump.facts.verify_index import RuleNote
from kdump.problem import Problem

if TYPE_CHECKING:  # loaded only when a log directory has the cluster metadata
    pass


@dataclass
class Summary:
    """What was checked, in numbers, and what was found."""

    partitions: int = 0
    segments: int = 0
    batches: int = 0
    records: int = 0
    log_bytes: int = 0
    index_files: int = 0
    index_entries: int = 0
    producer_snapshots: int = 0
    txn_index_entries: int = 0
    checkpoint_values: int = 0
    leader_epochs: int = 0
    kraft_snapshots: int = 0
    pre_38_time_indexes: int = 0
    active_segment_notes: int = 0
    #: Records of internal topics newer than kdump knows (``--deep``), in notes.
    newer_records: int = 0
    unchecked: int = 0
    problems: int = 0
    files_with_problems: int = 0
    deep: bool = False
    #: Whether the remote checks ran (``--remote-root``): tiered partitions found, their remote segments.
    remote: bool = False
    tiered_partitions: int = 0
    remote_segments: int = 0
    kinds: dict[str, int] = field(default_factory=dict)


class VerifySink(Protocol):
    """Where the facts of a run go (:mod:`kdump.render.verify_report`)."""

    def problem(self, problem: Problem) -> None: ...
    def unchecked(self, item: Unchecked) -> None: ...
    def note(self, note: RuleNote | Problem) -> None: ...
    def summary(self, summary: Summary) -> None: ...
