"""How the reporting commands (``txn``, ``retention``, ``diff``, ``find --group``/``--transactional-id``) hand
over their facts: one :meth:`ReportSink.fact` per unit (a partition's facts, a coordinator lookup), then
:meth:`ReportSink.end`.  The sinks are :mod:`kdump.render.report`'s (a table of every unit at the end, or a
JSON object per unit as it comes); the command line picks one (:func:`kdump.cli.run_report`)."""

from __future__ import annotations

from typing import Protocol, TypeVar

F_contra = TypeVar("F_contra", contravariant=True)


class ReportSink(Protocol[F_contra]):
    """Where a reporting command's facts go, unit by unit."""

    def fact(self, fact: F_contra) -> None: ...

    def unreadable(self, path: str, message: str) -> None:
        """A directory the walk could not read (the one rule for what cannot be read: named, status 1)."""
        ...

    def end(self) -> None: ...
