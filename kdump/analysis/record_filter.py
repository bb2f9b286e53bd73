"""Selecting batches and records of a segment (``kdump files`` filters), and where to start reading for them.

Offset and time filters seek with the segment's own indexes, exactly as ``kdump find`` does
(:func:`kdump.analysis.log_search.offset_start_position` and :func:`~kdump.analysis.log_search.timestamp_start_position`):
a position taken from an index is used only when it checks out against the log, otherwise reading starts at
byte 0.  Reading
stops at the first batch past ``to_offset``.  Timestamps are not monotonic in a log, so ``to_time`` never stops
a scan early; ``from_time`` may seek because the time index records the largest timestamp so far: no batch
before the one it names holds a later timestamp.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from kdump.errors import KdumpError
from kdump.storage.file_records import FileRecords, RecordBatch
from kdump.storage.log_segment import LogSegment
from kdump.storage.record import Record

KEEP, SKIP, STOP = "keep", "skip", "stop"


@dataclass
class RecordFilter:
    """Bounds are inclusive; None means unbounded.  ``key`` is matched exactly, ``key_regex`` with
    ``re.search`` against the key decoded as UTF-8 (invalid bytes replaced)."""

    from_offset: int | None = None
    to_offset: int | None = None
    from_time: int | None = None
    to_time: int | None = None
    key: bytes | None = None
    key_regex: re.Pattern[str] | None = None
    producer_id: int | None = None
    transactional_only: bool = False
    control_only: bool = False
    max_records: int | None = None

    @property
    def needs_records(self) -> bool:
        """Whether records must be looked at to decide (otherwise whole batches are selected)."""
        return (
            self.key is not None
            or self.key_regex is not None
            or self.from_offset is not None
            or self.to_offset is not None
            or self.from_time is not None
            or self.to_time is not None
        )

    # -- where to start --------------------------------------------------------------------------------------

    def start_position(self, path: str, records: FileRecords) -> int:
        """Where reading ``path`` (a ``.log``) may start without missing a selected batch."""
        if self.from_offset is None and self.from_time is None:
            return 0
        # imported here: kdump files without filters (Kafka's own use) does not load the search code
        from kdump.analysis.log_search import offset_start_position, timestamp_start_position

        try:
            segment = LogSegment.of_file(path)
        except (KdumpError, ValueError):
            return 0
        position = 0
        try:
            if self.from_offset is not None and self.from_offset > segment.base_offset:
                position = offset_start_position(segment, records, self.from_offset)
            if self.from_time is not None:
                position = max(position, timestamp_start_position(segment, records, self.from_time))
        except (KdumpError, OSError):
            return 0
        return position

    # -- selection -------------------------------------------------------------------------------------------

    def batch_verdict(self, batch: RecordBatch) -> str:
        if self.to_offset is not None and batch.base_offset > self.to_offset:
            return STOP
        if self.from_offset is not None and batch.last_offset < self.from_offset:
            return SKIP
        if self.from_time is not None and batch.max_timestamp < self.from_time:
            return SKIP
        if self.producer_id is not None and batch.producer_id != self.producer_id:
            return SKIP
        if self.transactional_only and not batch.is_transactional:
            return SKIP
        if self.control_only and not batch.is_control_batch:
            return SKIP
        return KEEP

    def keeps(self, record: Record) -> bool:
        offset = record.offset
        if self.from_offset is not None and offset < self.from_offset:
            return False
        if self.to_offset is not None and offset > self.to_offset:
            return False
        if self.from_time is not None and record.timestamp < self.from_time:
            return False
        if self.to_time is not None and record.timestamp > self.to_time:
            return False
        if self.key is not None and record.key != self.key:
            return False
        if self.key_regex is not None:
            if record.key is None or not self.key_regex.search(record.key.decode("utf-8", "replace")):
                return False
        return True
