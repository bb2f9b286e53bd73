"""Where a large segment can be cut into independently readable pieces (the tasks of a parallel read).

:func:`cut_positions` cuts a segment at offset-index entries, which name batch starts.  (Where a read for an
offset or a timestamp starts is :mod:`kdump.analysis.log_search`, as for ``kdump find``.)

Indexes of copied or damaged data cannot be trusted blindly, so every position taken from an index is checked
against the log before it is used: a whole batch must start there, with a plausible base offset and a valid CRC.
When that fails, reading starts at the beginning of the segment instead (slower, never wrong).
"""

from __future__ import annotations

import struct
from typing import Any

from kdump.errors import KdumpError
from kdump.storage import naming
from kdump.storage.file_records import FileRecords, RecordBatch
from kdump.storage.log_segment import LogSegment
from kdump.storage.offset_index import OffsetIndex

__all__ = ["batch_at", "cut_positions"]


def batch_at(records: FileRecords, position: int) -> RecordBatch | None:
    """The batch starting at ``position`` when a whole, CRC-valid batch of magic 0-2 starts there, else None."""
    if position < 0 or position >= records.size_in_bytes:
        return None
    try:
        for batch in records.batches(position):
            if batch.magic > 2 or not batch.is_valid():
                return None
            return batch
    except KdumpError:
        return None
    return None


def _offset_index(segment: LogSegment) -> OffsetIndex | None:
    if not segment.has(naming.INDEX_FILE_SUFFIX):
        return None
    try:
        return segment.open_offset_index()
    except OSError:
        return None


def cut_positions(
    segment: LogSegment, target_bytes: int, records: FileRecords | None = None, *, walk: bool = True
) -> list[int]:
    """Positions (ascending, none of them 0) where the segment's ``.log`` can be cut into pieces of about
    ``target_bytes``: offset-index entries whose position is a verified batch start.  When the segment has no
    usable ``.index`` the batch headers are read instead (a shallow pass), unless ``walk`` is false (then no
    cut).  Empty when the log is not larger than ``target_bytes``."""
    size = segment.log_size
    if target_bytes <= 0 or size <= target_bytes:
        return []
    if records is not None:
        if not walk:
            return _cuts_from_index(segment, target_bytes, size, records)
        return _cuts(segment, target_bytes, size, records)
    try:
        own = segment.open_log()
    except KdumpError:
        return []
    try:
        return _cuts(segment, target_bytes, size, own)
    finally:
        own.close()


def _cuts(segment: LogSegment, target_bytes: int, size: int, records: FileRecords) -> list[int]:
    return _cuts_from_index(segment, target_bytes, size, records) or _cuts_from_batches(
        target_bytes, size, records
    )


def _cuts_from_index(segment: LogSegment, target_bytes: int, size: int, records: FileRecords) -> list[int]:
    index = _offset_index(segment)
    if index is None:
        return []
    cuts: list[int] = []
    last_cut = 0
    last_offset = segment.base_offset - 1
    for entry in index.dump_entries():
        position = entry.position
        if position - last_cut < target_bytes or size - position < target_bytes // 4:
            continue
        batch = batch_at(records, position)
        if batch is None or not last_offset < batch.base_offset <= entry.offset:
            continue
        cuts.append(position)
        last_cut = position
        last_offset = batch.base_offset
    return cuts


#: A v2 batch's length field and magic byte (FileRecords.batches' framing, Kafka's FileLogInputStream).
_LENGTH = struct.Struct(">i")
_MAGIC_OFFSET = 16
_V2_HEADER_BYTES = 61


def _cuts_from_batches(target_bytes: int, size: int, records: FileRecords) -> list[int]:
    """Batch starts about ``target_bytes`` apart, from the batch headers.  Between two possible cuts the batches
    are stepped over by their length fields alone (``FileRecords.batches``' ``runs``): a v2 batch that is at
    least a header long and ends within the slice is where that framing would yield a batch and go on after it
    (0.09 CPU-s to plan the 16,398 batches of the 254 MB bench segment batch by batch); anything else, and
    every batch where a cut may fall, goes through the framing itself."""
    cuts: list[int] = []
    last_cut = 0
    unpack_length = _LENGTH.unpack_from

    def step(buf: Any, position: int, end: int, stop: int) -> int | None:
        limit = min(stop, last_cut + target_bytes)
        start = position
        while position < limit and end - position >= _V2_HEADER_BYTES:
            length = unpack_length(buf, position + 8)[0]
            if (
                length < _V2_HEADER_BYTES - 12
                or buf[position + _MAGIC_OFFSET] != 2
                or length > end - position - 12
            ):
                break
            position += 12 + length
        return None if position == start else position

    try:
        for batch in records.batches(runs=step):
            position = batch.position
            if position - last_cut >= target_bytes and size - position >= target_bytes // 4:
                cuts.append(position)
                last_cut = position
    except KdumpError:
        pass
    return cuts
