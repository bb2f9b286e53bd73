"""The facts of ``kdump ls``: the log directories found (:class:`LogDir`) and, per partition, its
:class:`~kdump.analysis.log_summary.PartitionSummary`; :class:`LsSink`, where they go
(:mod:`kdump.render.ls_report`)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Protocol

from kdump.analysis.log_summary import PartitionSummary
from kdump.problem import Problem


@dataclass(frozen=True)
class LogDir:
    """A log directory partitions were found in, with the broker id of its ``meta.properties`` (if any)."""

    path: str
    broker_id: int | None = None

    def describe(self) -> str:
        return self.path if self.broker_id is None else f"{self.path} (broker {self.broker_id})"


class LsSink(Protocol):
    """Where the facts of a run go (:mod:`kdump.render.ls_report`), in this order: the log directories, each
    partition, each directory the walk could not read, then the end of the run."""

    def log_dirs(self, log_dirs: list[LogDir]) -> None: ...

    def partition(self, summary: PartitionSummary) -> None: ...

    def unreadable(self, problem: Problem) -> None: ...

    def end(self) -> None: ...
