"""One pass over a segment's batch headers, shared by whoever needs it.

``kdump ls``, ``kdump txn``, ``kdump retention`` and ``kdump verify`` each read every batch header of a
partition; alone, each walks the segments itself through :func:`walk_segment`.  ``kdump report`` needs all of
their facts, so it hands every one of their :class:`SegmentVisitor` objects to ``verify``'s walk (which also
checks the indexes against the log, :func:`kdump.analysis.index_verification.verify_segment`): one pass per
segment instead of four, and each command's facts come from the same code whether it runs alone or in the
report.

A visitor sees, per segment: :meth:`~SegmentVisitor.start` (whether it wants the segment's batches), then, when
it does and the log opens, :meth:`~SegmentVisitor.opened`, every batch, and :meth:`~SegmentVisitor.done` at the
end of the batches; or :meth:`~SegmentVisitor.failed` with the error that stopped the walk (opening the file,
or a batch that cannot be read: every reader stops its segment at the same batch, since the error comes from
:meth:`~kdump.storage.file_records.FileRecords.batches`); and :meth:`~SegmentVisitor.end` last.
"""

from __future__ import annotations

from collections.abc import Sequence

from kdump.errors import KdumpError
from kdump.storage.file_records import FileRecords, RecordBatch
from kdump.storage.log_segment import LogSegment


class SegmentVisitor:
    """What a reader of batch headers does at each step of a segment's walk (every step does nothing here)."""

    def start(self, segment: LogSegment) -> bool:
        """Whether this visitor wants ``segment``'s batches (a segment without a ``.log`` is never walked)."""
        return True

    def opened(self, records: FileRecords) -> None:
        """The segment's log is open (before its first batch)."""

    def batch(self, batch: RecordBatch) -> None:
        """One batch, in file order."""

    def done(self, records: FileRecords, valid: int) -> None:
        """Every whole batch was read; ``valid``: where the last one ends (0 without any)."""

    def failed(self, error: KdumpError) -> None:
        """The log could not be opened, or reading stopped at a batch with ``error``."""

    def end(self, segment: LogSegment) -> None:
        """After the walk of a segment this visitor wanted, however it ended."""


def started(segment: LogSegment, visitors: Sequence[SegmentVisitor]) -> list[SegmentVisitor]:
    """The visitors that want ``segment``'s batches (each one's :meth:`~SegmentVisitor.start` is asked)."""
    return [v for v in visitors if v.start(segment)]


def walk_segment(segment: LogSegment, visitors: Sequence[SegmentVisitor]) -> None:
    """Walk one segment's batches once for every visitor that wants them."""
    wanted = started(segment, visitors)
    if wanted:
        try:
            with segment.open_log() as records:
                for v in wanted:
                    v.opened(records)
                calls = [v.batch for v in wanted]
                last: RecordBatch | None = None
                if len(calls) == 1:
                    call = calls[0]
                    for batch in records.batches():
                        call(batch)
                        last = batch
                else:
                    for batch in records.batches():
                        for call in calls:
                            call(batch)
                        last = batch
                valid = 0 if last is None else last.position + last.size_in_bytes
                for v in wanted:
                    v.done(records, valid)
        except KdumpError as e:
            for v in wanted:
                v.failed(e)
    for v in wanted:
        v.end(segment)


def walk_segments(segments: Sequence[LogSegment], visitors: Sequence[SegmentVisitor]) -> None:
    """:func:`walk_segment` of each segment, in order."""
    for segment in segments:
        walk_segment(segment, visitors)
