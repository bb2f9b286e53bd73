"""What Kafka's offset and time indexes share (Kafka's ``AbstractIndex``): a flat file of fixed-size slots,
opened read-only and counted as ``length // entry size`` (a zero-filled preallocated tail included), and the
slot search both use.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Iterator
from typing import Any

from kdump.storage.naming import java_absolute_path, offset_from_file

_WARM_SECTION_BYTES = 8192
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
    in memory with :meth:`from_bytes`.  The whole file is read once; no handle stays open.  I/O errors (e.g. a
    missing file) propagate as :class:`OSError`.
    """

    ENTRY_SIZE = 0

    def __init__(self, path: str | os.PathLike[str], base_offset: int | None = None) -> None:
        if base_offset is None:
            base_offset = offset_from_file(path)
        with open(path, "rb") as handle:
            data = handle.read()
        self._init(data, base_offset, os.fspath(path))

    @classmethod
    def from_bytes(cls, data: bytes, base_offset: int, path: str | os.PathLike[str] | None = None) -> Any:
        """An index over ``data`` (the file's whole content); ``path`` is only used in messages."""
        index = cls.__new__(cls)
        index._init(bytes(data), base_offset, None if path is None else os.fspath(path))
        return index

    def _init(self, data: bytes, base_offset: int, path: str | None) -> None:
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

    def dump_entries(self) -> Iterator[Any]:
        """The slots DumpLogSegments visits: up to (not including) the first slot ``i > 0`` whose offset equals
        the base offset, i.e. the start of a zero tail."""
        base = self.base_offset
        for i, entry in enumerate(self):
            if i > 0 and entry.offset == base:
                return
            yield entry
