"""The facts of ``kdump verify-index`` (also written by ``kdump verify --indexes-only``): the notes of the
rules a check applied (:class:`RuleNote`), the run's :class:`IndexSummary`, and :class:`IndexSink`, where they go
(:mod:`kdump.render.problems`)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Protocol

from kdump.problem import Problem


@dataclass(frozen=True)
class RuleNote:
    """A time index whose entries follow the rule brokers before Kafka 3.8 wrote (healthy, said so)."""

    path: str
    rule: str


@dataclass
class IndexSummary:
    """What was checked, in numbers, and what was found."""

    partitions: int = 0
    segments: int = 0
    index_files: int = 0
    entries: int = 0
    log_bytes: int = 0
    problems: int = 0
    files_with_problems: int = 0
    #: Time indexes naming batches' last offsets (Kafka 3.8 on), and by the pre-3.8 rule.
    last_offset_time_indexes: int = 0
    pre_38_time_indexes: int = 0
    active_segment_notes: int = 0


class IndexSink(Protocol):
    """Where the facts of a run go (:mod:`kdump.render.problems`)."""

    def problem(self, problem: Problem) -> None: ...

    def note(self, note: RuleNote | Problem) -> None: ...

    def summary(self, summary: IndexSummary) -> None: ...
