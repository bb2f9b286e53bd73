"""What Kafka's offset and time indexes share (Kafka's ``AbstractIndex``): a flat file of fixed-size slots,
opened read-only and counted as ``length // entry size`` (a zero-filled preallocated tail included), and the
slot search both use.
"""

from __future__ import annotations

import math
import mmap
import os
from collections.abc import Callable, Iterator
from typing import Any

from kdump.storage import sigbus_guard
from kdump.storage.byte_source import ByteSource, LocalFile, location_of, read_all
from kdump.storage.naming import java_absolute_path, offset_from_file
from kdump.storage.object_store import is_url

_WARM_SECTION_BYTES = 8192
#: Iteration reads a mapped index this many bytes at a time and releases the pages behind it.
PIECE_BYTES = 1 << 20
_INT64_MIN = -(1 << 63)
_INT64_MAX = (1 << 63) - 1


def wrap_int64(value: int) -> int:
    """Java ``long`` arithmetic: base offset + relative offset wraps around like it does in Kafka."""
    if _INT64_MIN <= value <= _INT64_MAX:
        return value
    return (value + (1 << 63)) % (1 << 64) - (1 << 63)


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


class AbstractIndex:
    """A read-only index file of ``ENTRY_SIZE``-byte slots.

    Open a file with ``cls(path)`` (the base offset comes from the file name unless given) or wrap bytes already
    in memory with :meth:`from_bytes`.  A file is memory-mapped read-only through the SIGBUS guard (a broker
    may trim it while it is read) and read in pieces: a lookup touches only the pages it probes, iteration
    releases the pages behind it, so memory stays flat whatever the file's size.  Only regular files are
    opened (a FIFO or ``/dev/zero`` named like an index is an error, not a hang).  I/O errors (e.g. a missing
    file) propagate as :class:`OSError`.
    """

    ENTRY_SIZE = 0

    def __init__(self, path: str | os.PathLike[str], base_offset: int | None = None) -> None:
        if base_offset is None:
            base_offset = offset_from_file(path)
        if is_url(path):  # an object in a store: read whole (an index is small beside its segment)
            self._init(read_all(path), base_offset, os.fspath(path))
            return
        data, _size = sigbus_guard.map_file(os.fspath(path))
        self._init(data, base_offset, os.fspath(path))

    @classmethod
    def open(cls, source: str | os.PathLike[str] | ByteSource, base_offset: int | None = None) -> Any:
        """The index of any :class:`~kdump.storage.byte_source.ByteSource` (or local path): a local file is
        memory-mapped as ``cls(path)`` does; any other source is read whole (an index is small beside its
        segment) and named by its location."""
        if isinstance(source, (str, os.PathLike)) or isinstance(source, LocalFile):
            return cls(location_of(source), base_offset)
        if base_offset is None:
            base_offset = offset_from_file(source.location)
        return cls.from_bytes(read_all(source), base_offset, source.location)

    @classmethod
    def from_bytes(cls, data: bytes, base_offset: int, path: str | os.PathLike[str] | None = None) -> Any:
        """An index over a copy of ``data`` (the file's whole content); ``path`` is only used in messages."""
        return cls.wrap(bytes(data), base_offset, path)

    @classmethod
    def wrap(
        cls, data: bytes | mmap.mmap, base_offset: int, path: str | os.PathLike[str] | None = None
    ) -> Any:
        """An index over ``data`` as it is (a map of the file, say: nothing is copied)."""
        index = cls.__new__(cls)
        index._init(data, base_offset, None if path is None else os.fspath(path))
        return index

    def _init(self, data: bytes | mmap.mmap, base_offset: int, path: str | None) -> None:
        self._data = data
        #: The path as given (None for :meth:`from_bytes` without a path).
        self.path: str | None = path
        self.base_offset: int = base_offset
        #: File length in bytes.
        self.length: int = len(data)
        #: Number of slots, zero tail included (Kafka's ``entries``).
        self.entry_count: int = len(data) // self.ENTRY_SIZE

    @property
    def absolute_path(self) -> str:
        """The path as Kafka's messages print it (``File.getAbsolutePath``)."""
        return java_absolute_path(self.path) if self.path is not None else "<memory>"

    def __len__(self) -> int:
        return self.entry_count

    def __iter__(self) -> Iterator[Any]:
        raise NotImplementedError

    def pieces(self, start_slot: int = 0) -> Iterator[tuple[int, memoryview]]:
        """``(first slot, view)`` over whole slots from ``start_slot`` on, ``PIECE_BYTES`` at a time; the pages of
        a mapped file are released behind each piece, so a walk over a huge index stays flat."""
        data = self._data
        size = self.ENTRY_SIZE
        end = self.entry_count * size
        step = _piece_slots(size) * size
        mapped = isinstance(data, mmap.mmap)
        pos = start_slot * size
        while pos < end:
            stop = min(pos + step, end)
            yield pos // size, memoryview(data)[pos:stop]
            if mapped:
                _release(data, pos, stop)  # type: ignore[arg-type]
            pos = stop

    def slot_is_zero(self, n: int) -> bool:
        """Whether slot ``n`` is all zero bytes (a preallocated, never written slot)."""
        size = self.ENTRY_SIZE
        return not any(self._data[n * size : (n + 1) * size])

    def zero_tail_start(self) -> int:
        """The first slot of the run of all-zero slots that ends the file (``entry_count`` when the last slot is
        not zero), found from the end in pieces."""
        size = self.ENTRY_SIZE
        n = self.entry_count
        step = _piece_slots(size)
        while n > 0:
            lo = max(n - step, 0)
            chunk = bytes(self._data[lo * size : n * size])
            if isinstance(self._data, mmap.mmap):
                _release(self._data, lo * size, n * size)
            stripped = chunk.rstrip(b"\0")
            if stripped:
                return lo + (len(stripped) + size - 1) // size
            n = lo
        return 0

    def dump_entries(self) -> Iterator[Any]:
        """The slots DumpLogSegments visits: up to (not including) the first slot ``i > 0`` whose offset equals
        the base offset, i.e. the start of a zero tail."""
        base = self.base_offset
        for i, entry in enumerate(self):
            if i > 0 and entry.offset == base:
                return
            yield entry


def _piece_slots(entry_size: int) -> int:
    """Slots per piece: about ``PIECE_BYTES``, a whole number of pages, so released pieces leave nothing behind."""
    unit = math.lcm(entry_size, mmap.PAGESIZE)
    return max(PIECE_BYTES // unit, 1) * unit // entry_size


def _release(mapping: mmap.mmap, start: int, stop: int) -> None:
    """Give back the pages of ``mapping`` wholly inside ``[start, stop)`` (they are re-read if touched again)."""
    page = mmap.PAGESIZE
    lo = (start + page - 1) // page * page
    hi = stop // page * page
    if hi > lo and hasattr(mapping, "madvise"):
        try:
            mapping.madvise(mmap.MADV_DONTNEED, lo, hi - lo)
        except (OSError, ValueError):
            pass
