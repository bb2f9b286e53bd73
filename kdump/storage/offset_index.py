"""The offset index (``<base offset>.index``): Kafka's ``OffsetIndex``.

An offset index is a flat array of 8-byte slots, each holding a *relative* offset (int32, offset minus the
segment's base offset) and the byte position (int32) of a batch in the sibling ``.log``.  There is no header.
A broker preallocates the file (``segment.index.bytes``, zero-filled) and trims it when the segment is rolled or
closed cleanly, so after an unclean shutdown the active segment's index ends in a long zero tail.

Kafka opens an existing index assuming it is *full to its length*: the number of entries is
``file length // 8`` and the zero tail counts.  This module reproduces that view exactly, including what the
lookup binary search returns on such an untrimmed (and therefore unsorted) index, and what the sanity check
says.  Nothing here writes to the file; it is read through a guarded read-only map, in pieces.

The slot search (:func:`largest_lower_bound_slot`, :func:`smallest_upper_bound_slot`) is Kafka's
``AbstractIndex`` search and is shared with :mod:`kdump.storage.time_index`.
"""

from __future__ import annotations

import struct
from collections.abc import Iterator
from typing import NamedTuple

from kdump.errors import CorruptIndexError
from kdump.storage.abstract_index import (
    AbstractIndex,
    largest_lower_bound_slot,
    smallest_upper_bound_slot,
    wrap_int64,
)

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


class OffsetIndex(AbstractIndex):
    """A read-only view of a ``.index`` file with Kafka's ``OffsetIndex`` semantics.

    ``entry_count`` is ``length // 8`` -- the zero-filled preallocated tail counts, as it does when Kafka opens
    an existing index.  ``entry(i)`` and iteration cover every slot; :meth:`dump_entries` applies
    DumpLogSegments' rule of stopping at the first later slot whose relative offset is 0.

    Open a file with ``OffsetIndex(path)`` (the base offset comes from the file name unless given) or wrap bytes
    already in memory with :meth:`from_bytes`.  I/O errors (e.g. a missing file) propagate as :class:`OSError`.
    """

    ENTRY_SIZE = ENTRY_SIZE

    # -- entries -------------------------------------------------------------------------------------------

    def _relative_offset(self, n: int) -> int:
        relative: int = _SLOT.unpack_from(self._data, n * ENTRY_SIZE)[0]  # unpack_from's values are Any
        return relative

    def _offset_at(self, n: int) -> int:
        return wrap_int64(self.base_offset + self._relative_offset(n))

    def _position_at(self, n: int) -> int:
        position: int = _SLOT.unpack_from(self._data, n * ENTRY_SIZE)[1]
        return position

    def entry(self, n: int) -> OffsetPosition:
        """Slot ``n`` as (absolute offset, position) (Kafka's ``OffsetIndex.entry``); IndexError outside 0..count-1."""
        if not 0 <= n < self.entry_count:
            raise IndexError(
                f"Attempt to fetch the {n}th entry from index {self.absolute_path}, "
                f"which has size {self.entry_count}."
            )
        relative, position = _SLOT.unpack_from(self._data, n * ENTRY_SIZE)
        return OffsetPosition(wrap_int64(self.base_offset + relative), position)

    def __iter__(self) -> Iterator[OffsetPosition]:
        """Every slot in file order, zero tail included."""
        base = self.base_offset
        for _first, view in self.pieces():
            for relative, position in _SLOT.iter_unpack(view):
                yield OffsetPosition(wrap_int64(base + relative), position)

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
