"""Keeping the resident set flat while a memory map is read: pages already read are dropped
(``MADV_DONTNEED``); touched again, they are read back from the page cache (a read-only map of a file loses
nothing).  Used as a segment is walked (:class:`~kdump.storage.file_records.FileRecords`), as a big batch's CRC
is summed and as a big value's text is written."""

from __future__ import annotations

import mmap


def drop_pages(mm: mmap.mmap, start: int = 0, end: int | None = None) -> bool:
    """Drop the whole pages of ``mm`` within ``[start, end)`` (both None/0: all of it) from the resident set;
    False where the map or the platform cannot (closed map, no ``madvise``, an error), and nothing was dropped."""
    if mm.closed or not hasattr(mm, "madvise"):
        return False
    try:
        if start == 0 and end is None:
            mm.madvise(mmap.MADV_DONTNEED)
        else:
            first = -(-start // mmap.PAGESIZE) * mmap.PAGESIZE
            last = (len(mm) if end is None else end) // mmap.PAGESIZE * mmap.PAGESIZE
            if last > first:
                mm.madvise(mmap.MADV_DONTNEED, first, last - first)
    except (OSError, ValueError):
        return False
    return True
