"""How the reporting commands (``txn``, ``retention``, ``diff``, ``find --group``/``--transactional-id``) hand
over their facts: one :meth:`ReportSink.fact` per unit (a partition's facts, a coordinator lookup), then
:meth:`ReportSink.end`.  The sinks are :mod:`kdump.render.report`'s (a table of every unit at the end, or a
JSON object per unit as it comes); the command line picks one (:func:`kdump.cli.run_report`)."""

from __future__ import annotations

from collections.abc import Iterable
from typing import Protocol, TypeVar

from kdump.problem import Problem

F_contra = TypeVar("F_contra", contravariant=True)


class ReportSink(Protocol[F_contra]):
    """Where a reporting command's facts go, unit by unit."""

    def fact(self, fact: F_contra) -> None: ...

    def unreadable(self, problem: Problem) -> None:
        """A directory the walk could not read (the one rule for what cannot be read: named, status 1)."""
        ...

    def end(self) -> None: ...


F = TypeVar("F")


def hand_over(sink: ReportSink[F], facts: Iterable[F], unreadable: Iterable[Problem] = ()) -> list[F]:
    """The one way a reporting command hands over its run: each fact to ``sink`` as it is made, then each
    directory that could not be read, then the end; returns the facts handed over (the
    command's exit status is judged on them)."""
    handed = []
    for fact in facts:
        sink.fact(fact)
        handed.append(fact)
    for problem in unreadable:
        sink.unreadable(problem)
    sink.end()
    return handed
