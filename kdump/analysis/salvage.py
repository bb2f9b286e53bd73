"""Salvaging a damaged segment: which batches are intact and kept, and what is lost between them.

Kafka's own recovery stops at the first bad batch and truncates the rest of the segment away.  Salvage goes on:
where the bytes at a position are not a whole batch with a matching CRC, it *resynchronises* on the next
position where one starts, so that only the damaged regions are lost.

A position holds an intact batch when

* the 12-byte entry header fits and declares a size of at least 14 bytes that fits in the file;
* the magic byte (+16) is 0, 1 or 2;
* v2 (magic 2): the batch is at least its 61-byte header long and the stored CRC-32C matches the one of bytes
  21..end (Kafka's ``DefaultRecordBatch.isValid``);
* v0/v1: the message is at least its header long (14 or 22 bytes) and the stored CRC-32 matches the one of the
  message from its magic byte on (``LegacyRecord.isValid``).

A random position passes this with a probability of about 2^-32, so resynchronising is safe; the search for
candidates runs in the regular-expression engine (a candidate needs a plausible size field and magic byte), not
byte by byte in Python.  A false candidate in damaged bytes often declares a size of tens or hundreds of MiB;
summing its CRC over all of them, candidate after candidate, made resynchronising quadratic in the segment
size.  So the CRC of a long candidate is computed from the CRCs of the file's prefixes at every
``_CRC_BLOCK`` bytes (:mod:`kdump.storage.crc_combine`: exact, by the CRCs' linearity; the prefixes are summed
once, the first time a resynchronisation needs them): the same verdict for a fraction of the work.  The walk
over intact batches still sums each batch's CRC directly.

The CRCs do not cover the 8-byte offset field (nor a v2 batch's partition leader epoch), so a batch can pass
its CRC with a damaged offset.  A segment's offsets must increase, so the kept batches are the longest chain of
intact batches, in file order, whose offsets increase; among chains of that length, the one whose offset gaps
best match the offset spans of the intact batches it leaves out between them (a batch's span is covered by its
CRC; the segment's base offset counts as where the first batch should start).  So a batch whose offset field
was damaged, out of line with its neighbours, is dropped, not the neighbours.  For a ``.log``
every kept batch must also fit the segment's index (last offset between the base offset in the file name and
that plus 2^31 - 1).

What is lost is reported as byte ranges (each with the reason the bytes at its start are not a kept batch) and
as offset gaps (the offsets missing between the intact batches on either side of a lost range).  This module
only reads (the input is memory-mapped read-only) and decides; :mod:`kdump.commands.salvage` writes the kept
batches into a new segment with the ``.index`` and ``.timeindex`` a broker's recovery would build.  A
``.txnindex`` and producer snapshots are not rebuilt (they need the producer state of the whole partition).
"""

from __future__ import annotations

import os
import re
from dataclasses import dataclass, field
from typing import NamedTuple

from kdump.errors import KdumpError
from kdump.storage import locations, naming
from kdump.storage.crc_combine import CRC32, CRC32C, CrcArithmetic, PrefixCrcs
from kdump.storage.file_records import FileRecords
from kdump.storage.legacy_record import RECORD_OVERHEAD_V0, LegacyRecordBatch, record_overhead
from kdump.storage.local_log import LocalLog
from kdump.storage.record_batch import (
    HEADER_SIZE_UP_TO_MAGIC,
    LOG_OVERHEAD,
    RECORD_BATCH_OVERHEAD,
    DefaultRecordBatch,
    read_log_header,
)

__all__ = [
    "LostRange",
    "OffsetGap",
    "SalvageResult",
    "SalvagedBatch",
    "base_offset_from_name",
    "check_batch_at",
    "next_base_offset",
    "scan_segment",
]

_INT_MAX = 0x7FFFFFFF
#: How far back (in candidate batches) the chain search looks for a predecessor.
_LOOKBACK = 64
#: Bytes scanned between two releases of the pages read (memory flat in the segment size).
_RELEASE_EVERY = 64 << 20
_WINDOW = 64 << 10
_ZERO_CHUNK = 1 << 20
#: A resynchronisation's candidate whose CRC covers this many bytes or more has it computed from prefix CRCs
#: (see the module docstring); a shorter one directly.  None: every candidate is checked by
#: :func:`check_batch_at` alone, as before prefix CRCs (the tests compare the two ways; 0 makes every CRC of a
#: candidate come from prefix CRCs).
COMBINED_CRC_FROM: int | None = 256 << 10
#: Bytes between two stored prefix CRCs (one 32-bit int per block, per CRC, from the first resynchronisation
#: on): a long candidate's CRC costs the CRCs of up to two blocks.
_CRC_BLOCK = 64 << 10

#: A position where a batch could start: a size field of 14..2^31-1 at +8 and a magic byte of 0..2 at +16
#: (a lookahead, so that every position is tried).  The CRC check does the rest.
_CANDIDATE = re.compile(
    rb"(?=.{8}(?:[\x01-\x7f]...|\x00[\x01-\xff]..|\x00\x00[\x01-\xff].|\x00\x00\x00[\x0e-\xff]).{4}[\x00-\x02])",
    re.DOTALL,
)
_SMALL_SIZE = rb"\x00[\x01-\xff]..|\x00\x00[\x01-\xff].|\x00\x00\x00[\x0e-\xff]"
_candidate_patterns: dict[int, re.Pattern[bytes]] = {}


def _candidate_pattern(max_size: int) -> re.Pattern[bytes]:
    """:data:`_CANDIDATE` for a size field of at most ``max_size`` (rounded up to a whole top byte): a size
    that does not fit in the file is no batch (:func:`check_batch_at`), so it need not be a candidate."""
    top = min(0x7F, max(0, max_size) >> 24)
    pattern = _candidate_patterns.get(top)
    if pattern is None:
        size = (b"[\\x01-\\x%02x]...|" % top if top else b"") + _SMALL_SIZE
        pattern = _candidate_patterns[top] = re.compile(
            rb"(?=.{8}(?:" + size + rb").{4}[\x00-\x02])", re.DOTALL
        )
    return pattern


@dataclass(frozen=True)
class SalvagedBatch:
    """An intact batch: where it was in the input, where it is in the new segment, and its offsets."""

    position: int
    size: int
    magic: int
    first_offset: int
    last_offset: int
    max_timestamp: int
    output_position: int = -1


@dataclass(frozen=True)
class LostRange:
    """Input bytes ``[start, end)`` that are not in the new segment, and why the bytes at ``start`` are not an
    intact batch."""

    start: int
    end: int
    reason: str

    @property
    def length(self) -> int:
        return self.end - self.start


@dataclass(frozen=True)
class OffsetGap:
    """Offsets ``first..last`` (inclusive) that no kept batch holds, next to a lost byte range.  ``last`` is
    None when the segment ends in lost bytes (how many offsets were there is unknown)."""

    first: int
    last: int | None
    #: The lost byte range the gap belongs to.
    lost: LostRange

    @property
    def count(self) -> int | None:
        return None if self.last is None else self.last - self.first + 1


class _Candidate(NamedTuple):
    """An intact batch found by the scan, before the choice of the batches to keep (a tuple: the scan makes one
    per batch of the segment)."""

    position: int
    size: int
    magic: int
    first_offset: int
    last_offset: int
    max_timestamp: int


@dataclass
class SalvageResult:
    """What a scan found: the batches to keep and what is lost (and, once :mod:`kdump.commands.salvage` has
    written them, the paths written)."""

    source: str
    source_size: int
    #: The base offset from the file name (None when the name has none, e.g. a KRaft snapshot).
    base_offset: int | None
    batches: list[SalvagedBatch] = field(default_factory=list)
    lost: list[LostRange] = field(default_factory=list)
    gaps: list[OffsetGap] = field(default_factory=list)
    #: The new segment and its index files (None until written; indexes only for a ``.log``).
    output: str | None = None
    offset_index: str | None = None
    time_index: str | None = None
    offset_index_entries: int = 0
    time_index_entries: int = 0

    @property
    def kept_bytes(self) -> int:
        return sum(b.size for b in self.batches)

    @property
    def lost_bytes(self) -> int:
        return sum(r.length for r in self.lost)

    @property
    def missing_offsets(self) -> int | None:
        """Offsets known to be missing (None when a gap has no known end)."""
        total = 0
        for gap in self.gaps:
            if gap.count is None:
                return None
            total += gap.count
        return total

    @property
    def intact(self) -> bool:
        return not self.lost


# -- checking one position -------------------------------------------------------------------------------------


def check_batch_at(
    buf: bytes, position: int, end: int, prefix_crcs: _PrefixCrcs | None = None
) -> tuple[int, int, int, int, int] | str:
    """``(size, magic, first offset, last offset, max timestamp)`` of the intact batch at ``position`` of
    ``buf[:end]``, or why there is none (see the module docstring).  The header and its CRC are read by the
    batch classes (:class:`DefaultRecordBatch`, :class:`LegacyRecordBatch`); with ``prefix_crcs`` (a
    resynchronisation's), the CRC of a long batch comes from them instead of summing its bytes (the same value).
    The first offset of a compressed v0/v1 wrapper is its first inner message's (it is decompressed for that);
    of anything else the header's."""
    remaining = end - position
    if remaining < HEADER_SIZE_UP_TO_MAGIC:
        return f"only {remaining} bytes left, too few for a batch header (a torn write)"
    offset, size, magic = read_log_header(buf, position)
    if size < RECORD_OVERHEAD_V0:
        return f"size field {size} is below the smallest message ({RECORD_OVERHEAD_V0} bytes)"
    if size > remaining - LOG_OVERHEAD:
        return f"size field {size} runs past the end of the file ({remaining - LOG_OVERHEAD} bytes follow it)"
    total = size + LOG_OVERHEAD
    if magic == 2:
        if total < RECORD_BATCH_OVERHEAD:
            return f"v2 batch of {total} bytes is shorter than its {RECORD_BATCH_OVERHEAD}-byte header"
        batch = DefaultRecordBatch.read_from(buf, position)
        computed = None if prefix_crcs is None else prefix_crcs.crc(CRC32C, *batch.checksummed_range())
        stored, computed = batch.checksum, batch.compute_checksum() if computed is None else computed
        if stored != computed:
            return f"CRC mismatch (stored {stored}, computed {computed})"
        # not batch.last_offset, which wraps like a Java long: a header that overflows is kept as it was
        return total, 2, offset, offset + batch.last_offset_delta, batch.max_timestamp
    if magic > 2:
        return f"magic byte {magic} is not a known message format"
    if size < record_overhead(magic):
        return f"v{magic} message of {size} bytes is shorter than its {record_overhead(magic)}-byte header"
    message = LegacyRecordBatch(buf, position, offset, size, magic)
    computed = None if prefix_crcs is None else prefix_crcs.crc(CRC32, *message.checksummed_range())
    stored, computed = message.checksum, message.compute_checksum() if computed is None else computed
    if stored != computed:
        return f"CRC mismatch (stored {stored}, computed {computed})"
    first = offset
    if message.is_compressed:  # a wrapper: its offset is the last inner offset
        inner = _inner_offsets(message)
        if isinstance(inner, str):
            return inner
        first = inner
    return total, magic, first, offset, message.timestamp


def _inner_offsets(wrapper: LegacyRecordBatch) -> int | str:
    """The first offset of a compressed v0/v1 wrapper, from its inner messages.  A v0 wrapper's inner offsets
    are absolute (and covered by its CRC), so a wrapper offset other than the last of them is a damaged offset
    field; a v1 wrapper's are relative to the wrapper offset."""
    offset = wrapper.offset
    first = last = None
    try:
        for record in wrapper.records():
            if first is None:
                first = record.offset
            last = record.offset
    except KdumpError:
        return offset
    if first is None or last is None:
        return offset
    if wrapper.magic == 0 and last != offset:
        return (
            f"v0 wrapper offset {offset} is not its last inner offset {last} (the offset field is not covered by "
            "the CRC)"
        )
    return min(first, offset)


class _PrefixCrcs:
    """The CRCs of long byte ranges from prefix CRCs (see the module docstring), for a scan's
    resynchronisations.

    One per scan; the prefix CRCs (a table per CRC, made when a candidate first needs it) start where the
    first resynchronisation starts, so the bytes before it are never summed again."""

    __slots__ = ("buf", "end", "origin", "_tables")

    def __init__(self, buf: bytes, end: int) -> None:
        self.buf = buf
        self.end = end
        self.origin = -1
        self._tables: dict[CrcArithmetic, PrefixCrcs] = {}

    def start_at(self, position: int) -> None:
        """A resynchronisation starts at ``position``: the origin of the prefix CRCs, unless one is set."""
        if self.origin < 0:
            self.origin = position

    def crc(self, arithmetic: CrcArithmetic, start: int, stop: int) -> int | None:
        """The CRC (``arithmetic``'s) of ``buf[start:stop]`` from prefix CRCs, or None where summing the bytes
        is as cheap (fewer than :data:`COMBINED_CRC_FROM`) or the range starts before the prefixes' origin."""
        if COMBINED_CRC_FROM is None or stop - start < COMBINED_CRC_FROM or not 0 <= self.origin <= start:
            return None
        table = self._tables.get(arithmetic)
        if table is None:
            table = self._tables[arithmetic] = PrefixCrcs(
                arithmetic, self.buf, self.origin, self.end, _CRC_BLOCK
            )
        return table.crc(start, stop)


def _resync(buf: bytes, start: int, end: int, prefix_crcs: _PrefixCrcs | None = None) -> int:
    """The first position >= ``start`` where an intact batch starts, or ``end``.

    Candidates are found by :data:`_CANDIDATE` a window at a time; zero-filled stretches (a preallocated
    segment's tail, holes left by a crash) are skipped at memory speed before each window.  With
    ``prefix_crcs`` (and :data:`COMBINED_CRC_FROM` not None), the pattern only admits size fields that fit in
    the file and a long candidate's CRC comes from prefix CRCs; the position found is the same."""
    if prefix_crcs is not None and COMBINED_CRC_FROM is not None:
        prefix_crcs.start_at(start)
        pattern = _candidate_pattern(end - start - LOG_OVERHEAD)
    else:
        pattern, prefix_crcs = _CANDIDATE, None
    position = start
    while position < end:
        position = _skip_zeros(buf, position, end)
        stop = min(end, position + _WINDOW)
        for match in pattern.finditer(buf, position, min(end, stop + 16)):
            candidate = match.start()
            if candidate >= stop:
                break
            if not isinstance(check_batch_at(buf, candidate, end, prefix_crcs), str):
                return candidate
        position = stop
    return end


def _skip_zeros(buf: bytes, position: int, end: int) -> int:
    """``position``, or past the zero bytes that start there: a batch's size field (bytes 8..11) is not zero,
    so no batch starts more than 11 bytes before the first non-zero byte."""
    if buf[position] != 0:
        return position
    at = position
    chunk_size = 4096  # doubling up to _ZERO_CHUNK: a few zero bytes (in a batch header) cost no big copy
    while at < end:
        chunk = buf[at : min(end, at + chunk_size)]
        rest = chunk.lstrip(b"\x00")
        if rest:
            return max(position, at + len(chunk) - len(rest) - 11)
        at += len(chunk)
        chunk_size = min(2 * chunk_size, _ZERO_CHUNK)
    return end


# -- choosing the batches to keep --------------------------------------------------------------------------------


def _choose_chain(candidates: list[_Candidate], base_offset: int | None) -> list[int]:
    """Indexes of the batches to keep (see the module docstring): the longest chain whose offsets increase;
    among those, the one whose offset gaps best match the offset spans of the intact batches it drops between
    them (a batch's span, last - first offset, is covered by its CRC even when its offset field is not).  Each
    element's predecessor is searched among the previous ``_LOOKBACK`` candidates, plus "none"."""
    n = len(candidates)
    if all(candidates[i].last_offset < candidates[i + 1].first_offset for i in range(n - 1)):
        return list(range(n))
    spans = [0]  # spans[k]: offsets spanned by candidates[:k]
    for b in candidates:
        spans.append(spans[-1] + b.last_offset - b.first_offset + 1)
    # best[j] = (count, -cost, predecessor or -1) of the best chain ending at j, where the cost adds up, for
    # each gap between kept batches, how far the gap is from the spans of the batches dropped in between
    best: list[tuple[int, int, int]] = []
    for j, b in enumerate(candidates):
        first = b.first_offset
        choice = (1, 0 if base_offset is None else -abs(first - base_offset - spans[j]), -1)
        for i in range(j - 1, max(-1, j - 1 - _LOOKBACK), -1):
            p = candidates[i]
            if p.last_offset >= first:
                continue
            count, negcost, _ = best[i]
            option = (count + 1, negcost - abs(first - p.last_offset - 1 - (spans[j] - spans[i + 1])), i)
            if option[:2] > choice[:2]:
                choice = option
            if i == j - 1 and first == p.last_offset + 1:
                break  # contiguous with the batch just before: in practice nothing further back does better
        best.append(choice)
    end = max(range(n), key=lambda j: (best[j][0], best[j][1] - (spans[n] - spans[j + 1]), -j))
    chain = []
    while end != -1:
        chain.append(end)
        end = best[end][2]
    return chain[::-1]


# -- the scan ----------------------------------------------------------------------------------------------------


def scan_segment(
    records: FileRecords, base_offset: int | None = None, next_base_offset: int | None = None
) -> SalvageResult:
    """Find the intact batches of ``records`` and what is lost between them (nothing is written).

    ``base_offset`` (the one in a ``.log`` file name) makes batches whose offsets do not fit that segment's
    index count as lost, and the offsets from it to the first kept batch count as a gap.  ``next_base_offset``
    (the next segment's, in the same directory) makes batches with offsets from it on count as lost: they are
    the next segment's bytes (a block of this file overwritten by them), not this segment's."""
    buf = records.buf
    end = records.size_in_bytes
    path = records.path
    candidates: list[_Candidate] = []
    failures: dict[int, str] = {}
    position = 0
    released = 0
    prefix_crcs = _PrefixCrcs(buf, end)
    while position < end:
        if position - released >= _RELEASE_EVERY:
            records.release(released, position)  # memory flat in the segment size
            released = position
        found = check_batch_at(buf, position, end)
        if isinstance(found, str):
            failures[position] = found
            position = _resync(buf, position + 1, end, prefix_crcs)
            continue
        candidates.append(_Candidate(position, *found))
        position += found[0]

    dropped: dict[int, str] = {}
    eligible = []
    for b in candidates:
        reason = _ineligible(b, base_offset, next_base_offset)
        if reason is None:
            eligible.append(b)
        else:
            dropped[b.position] = reason
    chain = [eligible[i] for i in _choose_chain(eligible, base_offset)] if eligible else []
    kept_positions = {b.position for b in chain}
    for b in eligible:
        if b.position not in kept_positions:
            dropped[b.position] = (
                f"intact batch with offsets {b.first_offset}-{b.last_offset} dropped: its offsets do not increase "
                "with the batches around it (the offset field is not covered by the CRC)"
            )

    result = SalvageResult(path, end, base_offset)
    out = 0
    kept: list[SalvagedBatch] = []
    for c in chain:
        kept.append(SalvagedBatch(*c, out))
        out += c.size
    result.batches = kept
    position = 0
    previous: SalvagedBatch | None = None
    for k in [*kept, None]:
        stop = end if k is None else k.position
        if stop > position:
            reason = failures.get(position) or dropped.get(position) or "not an intact batch"
            lost = LostRange(position, stop, reason)
            result.lost.append(lost)
            gap = _gap(previous, k, base_offset, lost)
            if gap is not None:
                result.gaps.append(gap)
        if k is not None:
            position = k.position + k.size
            previous = k
    return result


def _ineligible(b: _Candidate, base_offset: int | None, next_base_offset: int | None = None) -> str | None:
    if b.last_offset < b.first_offset:
        return f"intact batch dropped: its last offset {b.last_offset} is below its first offset {b.first_offset}"
    if next_base_offset is not None and b.last_offset >= next_base_offset:
        return (
            f"intact batch with offsets {b.first_offset}-{b.last_offset} dropped: they belong to the next segment "
            f"(base offset {next_base_offset}; a block of this file overwritten by its bytes?)"
        )
    if base_offset is not None and not 0 <= b.last_offset - base_offset <= _INT_MAX:
        return (
            f"intact batch with offsets {b.first_offset}-{b.last_offset} dropped: they do not fit the index of a "
            f"segment with base offset {base_offset}"
        )
    return None


def _gap(
    before: SalvagedBatch | None, after: SalvagedBatch | None, base_offset: int | None, lost: LostRange
) -> OffsetGap | None:
    """The offsets missing between the kept batches around ``lost`` (the segment's base offset stands in for
    the batch before a lost range at the start)."""
    if before is not None:
        first = before.last_offset + 1
    elif base_offset is not None:
        first = base_offset
    else:
        return None
    if after is None:
        return OffsetGap(first, None, lost)
    if after.first_offset > first:
        return OffsetGap(first, after.first_offset - 1, lost)
    return None


# -- the segment's neighbours ------------------------------------------------------------------------------------


def base_offset_from_name(source: str) -> int | None:
    """The base offset in the name of a ``.log`` (None for other files, e.g. a KRaft snapshot, and for a name
    without one): its batches must fit that segment's index."""
    if not os.path.basename(source).endswith(naming.LOG_FILE_SUFFIX):
        return None
    try:
        return naming.offset_from_file(source)
    except naming.NumberFormatError:
        return None


def next_base_offset(source: str, base_offset: int | None) -> int | None:
    """The base offset of the next ``.log`` beside ``source`` (the smallest above ``base_offset``), if any."""
    if base_offset is None:
        return None
    try:
        log = LocalLog.scan(os.path.dirname(locations.abspath(source)))
    except OSError:
        return None
    return min((s.base_offset for s in log.log_segments if s.base_offset > base_offset), default=None)
