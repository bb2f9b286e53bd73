"""The sinks of ``kdump ls``'s facts (:mod:`kdump.commands.ls`): the table fitted to a terminal
(:mod:`kdump.render.ls_table`), aligned plain text for pipes and JSON lines (:mod:`kdump.render.log_summary`).

The tables need every row to size their columns, so the table sinks write at the end of the run; the JSON sink
writes one ``partition`` object per partition as it comes.  A directory the walk could not read is one
``<path>: <message>`` line (an ``unreadable`` object in JSON) after the partitions.
"""

from __future__ import annotations

from datetime import tzinfo

from kdump.analysis.log_summary import PartitionSummary
from kdump.facts.ls import LogDir
from kdump.facts.output import Output
from kdump.problem import Problem
from kdump.render import log_summary, ls_table
from kdump.render.json_lines import unreadable_lines
from kdump.render.problem_text import sentence
from kdump.render.safe_text import safe_text


class _TableSink:
    def __init__(self, out: Output) -> None:
        self.out = out
        self.dirs: list[LogDir] = []
        self.summaries: list[PartitionSummary] = []
        self.unreadables: list[Problem] = []

    def log_dirs(self, log_dirs: list[LogDir]) -> None:
        self.dirs = log_dirs

    def partition(self, summary: PartitionSummary) -> None:
        self.summaries.append(summary)

    def unreadable(self, problem: Problem) -> None:
        self.unreadables.append(problem)

    def table(self) -> str:
        raise NotImplementedError

    def end(self) -> None:
        self.out.write(self.table())
        for problem in self.unreadables:
            self.out.write(f"{safe_text(sentence(problem))}\n")


class TerminalSink(_TableSink):
    """The table fitted to the terminal's ``width`` (:func:`kdump.render.ls_table.terminal_text`)."""

    def __init__(
        self,
        out: Output,
        *,
        width: int = 80,
        wide: bool = False,
        columns: list[str] | None = None,
        use_color: bool = False,
        tz: tzinfo | None = None,
        fold_empty: bool = True,
        verbose: bool = False,
    ) -> None:
        super().__init__(out)
        self.fold_empty = fold_empty
        self.verbose = verbose
        self.width = width
        self.wide = wide
        self.columns = columns
        self.use_color = use_color
        self.tz = tz

    def table(self) -> str:
        return ls_table.terminal_text(
            self.summaries,
            self.dirs,
            self.width,
            wide=self.wide,
            columns=self.columns,
            use_color=self.use_color,
            tz=self.tz,
            fold_empty=self.fold_empty,
            verbose=self.verbose,
        )


class PlainSink(_TableSink):
    """Aligned plain text (:func:`kdump.render.log_summary.plain_table`); over several log directories, their
    paths and broker ids in two more columns."""

    def __init__(
        self,
        out: Output,
        *,
        columns: list[str] | None = None,
        human_time: bool = False,
        tz: tzinfo | None = None,
        verbose: bool = False,
    ) -> None:
        super().__init__(out)
        self.verbose = verbose
        self.columns = columns
        self.human_time = human_time
        self.tz = tz

    def table(self) -> str:
        return log_summary.plain_table(
            self.summaries,
            columns=self.columns,
            log_dirs=self.dirs if len(self.dirs) > 1 else None,
            human_time=self.human_time,
            tz=self.tz,
            verbose=self.verbose,
        )


class JsonSink:
    """One ``partition`` object per partition, then one ``unreadable`` object per directory not read."""

    def __init__(self, out: Output) -> None:
        self.out = out
        self.brokers: dict[str, int | None] = {}

    def log_dirs(self, log_dirs: list[LogDir]) -> None:
        self.brokers = {d.path: d.broker_id for d in log_dirs}

    def partition(self, summary: PartitionSummary) -> None:
        log_dir = ls_table.log_dir_of(summary)
        self.out.write(
            log_summary.summary_json(summary, log_dir=log_dir, broker_id=self.brokers.get(log_dir))
        )

    def unreadable(self, problem: Problem) -> None:
        self.out.write(unreadable_lines([problem]))

    def end(self) -> None:
        pass
