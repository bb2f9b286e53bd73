"""The sinks of the reporting commands' facts (:class:`kdump.facts.report.ReportSink`): :class:`TableSink`
collects every unit and writes the command's sections (:mod:`kdump.render.tables`) at the end;
:class:`JsonSink` writes each unit's JSON object as it comes."""

from __future__ import annotations

from collections.abc import Callable
from typing import Generic, TypeVar

from kdump.facts.output import Output
from kdump.problem import Problem
from kdump.render import tables
from kdump.render.json_lines import unreadable_lines

F = TypeVar("F")


class TableSink(Generic[F]):
    def __init__(
        self,
        out: Output,
        sections: Callable[[list[F]], list[tables.Section]],
        *,
        terminal_width: int | None,
        wide: bool = False,
    ) -> None:
        self.out = out
        self.sections = sections
        self.terminal_width = terminal_width
        self.wide = wide
        self.facts: list[F] = []
        self.unreadables: list[Problem] = []

    def fact(self, fact: F) -> None:
        self.facts.append(fact)

    def unreadable(self, problem: Problem) -> None:
        self.unreadables.append(problem)

    def end(self) -> None:
        sections = self.sections(self.facts) + tables.unreadable_section(self.unreadables)
        tables.write(self.out, sections, terminal_width=self.terminal_width, wide=self.wide)


class JsonSink(Generic[F]):
    def __init__(self, out: Output, json_lines: Callable[[list[F]], str]) -> None:
        self.out = out
        self.json_lines = json_lines

    def fact(self, fact: F) -> None:
        self.out.write(self.json_lines([fact]))

    def unreadable(self, problem: Problem) -> None:
        self.out.write(unreadable_lines([problem]))

    def end(self) -> None:
        pass
