"""The facts of ``kdump find``: where a search for an offset or a timestamp landed (:class:`Location`), and
:class:`FindSink`, where it goes (:mod:`kdump.render.find_report`)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Protocol

from kdump.analysis.log_search import SearchResult
from kdump.storage.file_records import RecordBatch
from kdump.storage.record import Record


@dataclass(frozen=True)
class Location:
    """Where a search landed: the partition directory searched (as given) and the answer of the search
    (:class:`~kdump.analysis.log_search.SearchResult`: status, segment, index entries used, batch position,
    record, notes)."""

    partition: str
    search: SearchResult


class FindSink(Protocol):
    """Where the facts of a run go (:mod:`kdump.render.find_report`), in this order: the location, the answer's
    batch (when there is one), its record (with ``--print-data-log``), then the end of the run."""

    def location(self, location: Location) -> None: ...

    def batch(self, location: Location, batch: RecordBatch) -> None: ...

    def record(self, location: Location, record: Record) -> None: ...

    def end(self, location: Location) -> None: ...
