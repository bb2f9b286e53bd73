"""The offset index (``<base offset>.index``): Kafka's ``OffsetIndex``.

An offset index is a flat array of 8-byte slots, each holding a *relative* offset (int32, offset minus the
segment's base offset) and the byte position (int32) of a batch in the sibling ``.log``.  There is no header.
A broker preallocates the file (``segment.index.bytes``, zero-filled) and trims it when the segment is rolled or
closed cleanly, so after an unclean shutdown the active segment's index ends in a long zero tail.

Kafka opens an existing index assuming it is *full to its length*: the number of entries is
``file length // 8`` and the zero tail counts.  This module reproduces that view exactly, including what the
lookup binary search returns on such an untrimmed (and therefore unsorted) index, and what the sanity check
says.  Nothing here writes to the file; the whole file is read once and no handle is kept open.

The slot search (:func:`largest_lower_bound_slot`, :func:`smallest_upper_bound_slot`) is Kafka's
``AbstractIndex`` search and is shared with :mod:`kdump.storage.time_index`.
"""

from __future__ import annotations

import os
import struct
import unicodedata
from collections.abc import Callable, Iterator
from typing import NamedTuple

from kdump.errors import CorruptIndexError, KdumpError

__all__ = [
    "OffsetIndex",
    "OffsetPosition",
    "largest_lower_bound_slot",
    "smallest_upper_bound_slot",
]

ENTRY_SIZE = 8
"""Bytes per offset-index slot: relative offset int32, position int32."""

_SLOT = struct.Struct(">ii")
_WARM_SECTION_BYTES = 8192
_INT64_MIN = -(1 << 63)
_INT64_MAX = (1 << 63) - 1


class OffsetPosition(NamedTuple):
    """One offset-index entry (Kafka's ``OffsetPosition``): an absolute offset and a ``.log`` byte position."""

    offset: int
    position: int


# ---------------------------------------------------------------------------------------------------------------
# AbstractIndex search, shared by the offset and the time index


def _slot_range_for(
    entry_count: int, key_at: Callable[[int], int], target: int, warm_entries: int, largest_lower_bound: bool
) -> int:
    """Kafka's ``AbstractIndex.indexSlotRangeFor``, step for step.

    Kafka first tries the "warm" tail of the index (the last 8 KiB worth of slots) and only then the rest, and
    it never checks that the slots are sorted.  On a sorted index the result is that of a plain binary search;
    on an untrimmed index (zero tail) or a damaged one it is whatever these exact probes yield, which is what a
    broker would use.
    """
    if entry_count == 0:
        return -1
    first_hot = max(0, entry_count - 1 - warm_entries)
    if key_at(first_hot) < target:
        return _binary_search(entry_count, key_at, target, first_hot, entry_count - 1, largest_lower_bound)
    if key_at(0) > target:
        return -1 if largest_lower_bound else 0
    return _binary_search(entry_count, key_at, target, 0, first_hot, largest_lower_bound)


def _binary_search(
    entry_count: int, key_at: Callable[[int], int], target: int, lo: int, hi: int, largest_lower_bound: bool
) -> int:
    while lo < hi:
        mid = (lo + hi + 1) >> 1
        key = key_at(mid)
        if key > target:
            hi = mid - 1
        elif key < target:
            lo = mid
        else:
            return mid
    if largest_lower_bound:
        return lo
    return -1 if lo == entry_count - 1 else lo + 1


def largest_lower_bound_slot(
    entry_count: int, key_at: Callable[[int], int], target: int, entry_size: int
) -> int:
    """Slot of the largest entry whose key is <= ``target``, or -1 (Kafka's ``largestLowerBoundSlotFor``).

    ``key_at(i)`` returns the compared field of slot ``i`` (the offset, the position, or the timestamp);
    ``entry_size`` fixes the size of Kafka's warm section (8192 bytes worth of slots).
    """
    return _slot_range_for(entry_count, key_at, target, _WARM_SECTION_BYTES // entry_size, True)


def smallest_upper_bound_slot(
    entry_count: int, key_at: Callable[[int], int], target: int, entry_size: int
) -> int:
    """Slot of the smallest entry whose key is >= ``target``, or -1 (Kafka's ``smallestUpperBoundSlotFor``)."""
    return _slot_range_for(entry_count, key_at, target, _WARM_SECTION_BYTES // entry_size, False)


# ---------------------------------------------------------------------------------------------------------------
# small helpers


def _wrap_int64(value: int) -> int:
    """Java ``long`` arithmetic: base offset + relative offset wraps around like it does in Kafka."""
    if _INT64_MIN <= value <= _INT64_MAX:
        return value
    return (value + (1 << 63)) % (1 << 64) - (1 << 63)


def _absolute_path(path: str | os.PathLike[str]) -> str:
    """Like Java's ``File.getAbsolutePath``: prefix the working directory, do not resolve ``..`` or links."""
    text = os.fspath(path)
    return text if os.path.isabs(text) else os.path.join(os.getcwd(), text)


def _base_offset_from_name(path: str | os.PathLike[str]) -> int:
    """The segment base offset encoded in a file name: the name up to its first dot, read as a Java ``long``."""
    name = os.path.basename(os.fspath(path))
    prefix = name.split(".")[0]
    body = prefix[1:] if prefix[:1] in ("+", "-") else prefix
    if body and all(unicodedata.decimal(ch, None) is not None for ch in body):
        digits = "".join(str(unicodedata.decimal(ch)) for ch in body).lstrip("0") or "0"
        if len(digits) <= 19:  # longer cannot fit; also keeps int() away from huge strings
            value = -int(digits) if prefix.startswith("-") else int(digits)
            if _INT64_MIN <= value <= _INT64_MAX:
                return value
    raise KdumpError(
        f'cannot read a base offset from the file name {name!r} (For input string: "{prefix}")',
        path=os.fspath(path),
    )


def _read_whole(path: str | os.PathLike[str]) -> bytes:
    with open(path, "rb") as handle:
        return handle.read()


# ---------------------------------------------------------------------------------------------------------------


class OffsetIndex:
    """A read-only view of a ``.index`` file with Kafka's ``OffsetIndex`` semantics.

    ``entry_count`` is ``length // 8`` -- the zero-filled preallocated tail counts, as it does when Kafka opens
    an existing index.  ``entry(i)`` and iteration cover every slot; :meth:`dump_entries` applies
    DumpLogSegments' rule of stopping at the first later slot whose relative offset is 0.

    Open a file with ``OffsetIndex(path)`` (the base offset comes from the file name unless given) or wrap bytes
    already in memory with :meth:`from_bytes`.  I/O errors (e.g. a missing file) propagate as :class:`OSError`.
    """

    ENTRY_SIZE = ENTRY_SIZE

    def __init__(self, path: str | os.PathLike[str], base_offset: int | None = None) -> None:
        if base_offset is None:
            base_offset = _base_offset_from_name(path)
        self._init(_read_whole(path), base_offset, os.fspath(path))

    @classmethod
    def from_bytes(
        cls, data: bytes, base_offset: int, path: str | os.PathLike[str] | None = None
    ) -> OffsetIndex:
        """An index over ``data`` (the file's whole content); ``path`` is only used in messages."""
        index = cls.__new__(cls)
        index._init(bytes(data), base_offset, None if path is None else os.fspath(path))
        return index

    def _init(self, data: bytes, base_offset: int, path: str | None) -> None:
        self._data = data
        self.path: str | None = path
        """The path as given (``None`` for :meth:`from_bytes` without a path)."""
        self.base_offset: int = base_offset
        self.length: int = len(data)
        """File length in bytes."""
        self.entry_count: int = len(data) // ENTRY_SIZE
        """Number of slots, zero tail included (Kafka's ``entries``)."""

    # -- entries -------------------------------------------------------------------------------------------

    @property
    def absolute_path(self) -> str:
        """The path as Kafka's messages print it (``File.getAbsolutePath``)."""
        return _absolute_path(self.path) if self.path is not None else "<memory>"

    def _relative_offset(self, n: int) -> int:
        return _SLOT.unpack_from(self._data, n * ENTRY_SIZE)[0]

    def _offset_at(self, n: int) -> int:
        return _wrap_int64(self.base_offset + self._relative_offset(n))

    def _position_at(self, n: int) -> int:
        return _SLOT.unpack_from(self._data, n * ENTRY_SIZE)[1]

    def entry(self, n: int) -> OffsetPosition:
        """Slot ``n`` as (absolute offset, position) (Kafka's ``OffsetIndex.entry``); IndexError outside 0..count-1."""
        if not 0 <= n < self.entry_count:
            raise IndexError(
                f"Attempt to fetch the {n}th entry from index {self.absolute_path}, "
                f"which has size {self.entry_count}."
            )
        relative, position = _SLOT.unpack_from(self._data, n * ENTRY_SIZE)
        return OffsetPosition(_wrap_int64(self.base_offset + relative), position)

    def __len__(self) -> int:
        return self.entry_count

    def __iter__(self) -> Iterator[OffsetPosition]:
        """Every slot in file order, zero tail included."""
        base = self.base_offset
        view = memoryview(self._data)[: self.entry_count * ENTRY_SIZE]
        for relative, position in _SLOT.iter_unpack(view):
            yield OffsetPosition(_wrap_int64(base + relative), position)

    def dump_entries(self) -> Iterator[OffsetPosition]:
        """The slots DumpLogSegments visits: all of them up to (not including) the first slot ``i > 0`` whose
        offset equals the base offset, i.e. the start of a zero tail."""
        base = self.base_offset
        for i, entry in enumerate(self):
            if i > 0 and entry.offset == base:
                return
            yield entry

    @property
    def last_entry(self) -> OffsetPosition:
        """The last slot, or (base offset, 0) when there is none (Kafka's private ``lastEntry``)."""
        if self.entry_count == 0:
            return OffsetPosition(self.base_offset, 0)
        return self.entry(self.entry_count - 1)

    @property
    def last_offset(self) -> int:
        """Kafka's ``lastOffset``: the offset of the last slot -- the base offset for an empty index *and* for
        an index ending in a zero tail."""
        return self.last_entry.offset

    # -- lookups -------------------------------------------------------------------------------------------

    def lookup(self, target_offset: int) -> OffsetPosition:
        """Largest entry with offset <= ``target_offset``, else (base offset, 0) (Kafka's ``OffsetIndex.lookup``).

        Uses Kafka's exact warm-section binary search, so on an untrimmed or damaged index the answer is the
        one a broker (or DumpLogSegments' time-index check) would get, not necessarily the "right" one.
        """
        slot = largest_lower_bound_slot(self.entry_count, self._offset_at, target_offset, ENTRY_SIZE)
        if slot == -1:
            return OffsetPosition(self.base_offset, 0)
        return self.entry(slot)

    def fetch_upper_bound_offset(self, fetch_position: int, fetch_size: int) -> OffsetPosition | None:
        """First entry whose position is >= ``fetch_position + fetch_size``, or None (Kafka's
        ``fetchUpperBoundOffset``: an offset certainly beyond a fetch of that many bytes)."""
        target = fetch_position + fetch_size
        slot = smallest_upper_bound_slot(self.entry_count, self._position_at, target, ENTRY_SIZE)
        return None if slot == -1 else self.entry(slot)

    # -- checks --------------------------------------------------------------------------------------------

    def sanity_check(self) -> None:
        """Kafka 4.0's ``OffsetIndex.sanityCheck``: raise :class:`CorruptIndexError` with Kafka's exact text.

        An untrimmed index passes (its last offset is the base offset); a length that is not a multiple of 8
        fails.  The message names the file by its absolute path, as Kafka does.
        """
        last = self.last_offset
        if self.entry_count != 0 and last < self.base_offset:
            raise CorruptIndexError(
                f"Corrupt index found, index file {self.absolute_path} has non-zero size but the last offset "
                f"is {last} which is less than the base offset {self.base_offset}",
                path=self.path,
                position=(self.entry_count - 1) * ENTRY_SIZE,
            )
        if self.length % ENTRY_SIZE != 0:
            raise CorruptIndexError(
                f"Index file {self.absolute_path} is corrupt, found {self.length} bytes which is neither "
                f"positive nor a multiple of {ENTRY_SIZE}",
                path=self.path,
                position=self.entry_count * ENTRY_SIZE,
            )

    def __repr__(self) -> str:
        return f"OffsetIndex(path={self.path!r}, base_offset={self.base_offset}, entries={self.entry_count})"
