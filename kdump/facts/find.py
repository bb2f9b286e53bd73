"""The facts of ``kdump find``: where a search for an offset or a timestamp landed (:class:`Location`), and
:class:`FindSink`, where it goes (:mod:`kdump.render.find_report`)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Protocol

from kdump.analysis.log_search import SearchResult
from kdump.storage.file_records import RecordBatch
from kdump.storage.record import Record


@dataclass(frozen=True)
class RemoteChunk:
    """Where the answer's batch starts in a remote ``.log`` object made of transformed chunks (Aiven's
    tiered-storage layout): the object, the chunk's index in its manifest's chunk index (of ``count``), the
    chunk's bytes in the object (``[start, end)``: compressed and/or encrypted), the segment's bytes it holds
    (``[original_start, original_end)``), and the batch's first byte within those (``byte``)."""

    object: str
    index: int
    count: int
    start: int
    end: int
    original_start: int
    original_end: int
    byte: int
    compression: bool
    encryption: bool


@dataclass(frozen=True)
class Location:
    """Where a search landed: the partition directory searched (as given) and the answer of the search
    (:class:`~kdump.analysis.log_search.SearchResult`: status, segment, index entries used, batch position,
    record, notes); ``chunk``: where the batch is in a chunked remote object (None for a plain file or
    object, where the position is the byte)."""

    partition: str
    search: SearchResult
    chunk: RemoteChunk | None = None


class FindSink(Protocol):
    """Where the facts of a run go (:mod:`kdump.render.find_report`), in this order: the location, the answer's
    batch (when there is one), its record (with ``--print-data-log``), then the end of the run."""

    def location(self, location: Location) -> None: ...

    def batch(self, location: Location, batch: RecordBatch) -> None: ...

    def record(self, location: Location, record: Record) -> None: ...

    def end(self, location: Location) -> None: ...
