"""Where a file's bytes come from: the seam under :class:`~kdump.storage.file_records.FileRecords`, the indexes
and the state files.

A :class:`ByteSource` is a file's content named by its *location* (a local path as given, or a URL: Kafka's
messages repeat it), with its size and ranged reads.  Three kinds:

* :class:`LocalFile`: a local regular file.  Readers keep their fast path for it: ``FileRecords`` and the
  indexes memory-map it under :mod:`~kdump.storage.sigbus_guard` exactly as before;
* :class:`InMemory`: bytes already in memory (a test, a file taken out of an archive);
* :class:`RangedSource`: a store that answers ranged reads (an object store's ``GET`` with a ``Range``, through
  a ``fetch(start, end)`` callable).  It fetches with read-ahead, a window at a time, and counts its requests and
  bytes, so what a command really fetched can be stated.

A reader that needs the whole content as one buffer (a segment walked batch by batch, with positions that are
the file's) gets it from :meth:`RangedSource.window_buffer`: an anonymous map of the file's size, whose pages
cost memory only once filled, filled by :meth:`RangedSource.ensure` before a range is read and released behind
the reader as it moves on.  Nothing here writes to a source.
"""

from __future__ import annotations

import mmap
import os
from collections.abc import Callable
from typing import Protocol, runtime_checkable

from kdump.storage.regular_file import open_regular, read_regular

#: Default read-ahead of a ranged source: one request fetches at least this much.
DEFAULT_READ_AHEAD = 8 << 20


@runtime_checkable
class ByteSource(Protocol):
    """A file's content: its location, its size, and ranged reads."""

    #: The path or URL as given: what messages name.
    location: str

    def size(self) -> int: ...

    def read(self, start: int, end: int) -> bytes:
        """The bytes of ``[start, end)``, clamped to the content (fewer at its end)."""
        ...


class LocalFile:
    """A local regular file (readers memory-map it: their fast path)."""

    def __init__(self, path: str | os.PathLike[str]) -> None:
        self.location = os.fspath(path)

    def size(self) -> int:
        return os.stat(self.location).st_size

    def read(self, start: int, end: int) -> bytes:
        fd = open_regular(self.location)
        try:
            return os.pread(fd, max(0, end - start), start)
        finally:
            os.close(fd)


class InMemory:
    """Bytes in memory, named by ``location`` in messages."""

    def __init__(self, data: bytes, location: str = "<memory>") -> None:
        self.data = data
        self.location = location

    def size(self) -> int:
        return len(self.data)

    def read(self, start: int, end: int) -> bytes:
        return self.data[start:end]


class RangedSource:
    """Content read a range at a time through ``fetch(start, end) -> bytes`` (an object store's ranged GET),
    ``size`` bytes long.  Reads of ``[start, end)`` fetch at least ``read_ahead`` bytes from ``start`` (never past
    the end); :attr:`requests` and :attr:`bytes_fetched` count what was asked of the store."""

    def __init__(
        self,
        location: str,
        size: int,
        fetch: Callable[[int, int], bytes],
        *,
        read_ahead: int = DEFAULT_READ_AHEAD,
    ) -> None:
        self.location = location
        self._size = size
        self._fetch = fetch
        self.read_ahead = max(1, read_ahead)
        self.requests = 0
        self.bytes_fetched = 0
        #: Where :meth:`ensure` stops fetching, read-ahead included (a reader of the first bytes only, such as
        #: ``--max-bytes``, lowers it: nothing past it is fetched).
        self.fetch_end = size
        #: The window buffer and how far it is filled: ``[_lo, _hi)`` holds the content (one range at a time).
        self._buffer: mmap.mmap | None = None
        self._lo = 0
        self._hi = 0

    def size(self) -> int:
        return self._size

    def _get(self, start: int, end: int) -> bytes:
        end = min(end, self._size)
        if start >= end:
            return b""
        data = self._fetch(start, end)
        self.requests += 1
        self.bytes_fetched += len(data)
        if len(data) != end - start:
            raise OSError(f"{self.location}: asked for bytes {start}-{end}, got {len(data)}")
        return data

    def read(self, start: int, end: int) -> bytes:
        if self._buffer is not None and self._lo <= start and min(end, self._size) <= self._hi:
            return self._buffer[start:end]
        return self._get(start, end)

    def window_buffer(self) -> mmap.mmap | bytes:
        """The whole content's buffer, positions as in the file, filled by :meth:`ensure` (an anonymous map:
        pages cost memory only once filled)."""
        if self._size == 0:
            return b""
        if self._buffer is None:
            self._buffer = mmap.mmap(-1, self._size, flags=mmap.MAP_PRIVATE | mmap.MAP_ANONYMOUS)
        return self._buffer

    def spooled_buffer(self) -> mmap.mmap | bytes:
        """The whole content in one buffer that keeps it, for a reader that goes back and forth over all of it
        (``salvage``'s resynchronisation): fetched once, front to back, a read-ahead window per request, into an
        unlinked temporary file (``TMPDIR``; gone when the buffer is), which is then mapped read-only.  Memory
        stays flat (the pages are the file's, given back as for a local segment); the disk holds one copy."""
        import tempfile

        if self._size == 0:
            return b""
        with tempfile.TemporaryFile(prefix="kdump-spool-") as spool:
            for at in range(0, self._size, self.read_ahead):
                spool.write(self._get(at, min(self._size, at + self.read_ahead)))
            spool.flush()
            return mmap.mmap(spool.fileno(), self._size, access=mmap.ACCESS_READ)

    def ensure(self, start: int, end: int) -> None:
        """Make ``[start, end)`` of :meth:`window_buffer` hold the content: a range already there costs
        nothing; otherwise what is missing is fetched, at least ``read_ahead`` bytes, and the pages before
        ``start`` are given back (the reader has moved on)."""
        end = min(end, self.fetch_end)
        if start >= end or (self._lo <= start and end <= self._hi):
            return
        buffer = self.window_buffer()
        assert isinstance(buffer, mmap.mmap)
        page = mmap.PAGESIZE
        if (
            not self._lo <= start <= self._hi
        ):  # a jump: the filled range is given back, filling starts at start
            self._drop(buffer, self._lo, self._hi + page)
            self._lo = self._hi = start
        fill_to = min(self.fetch_end, max(end, self._hi + self.read_ahead))
        buffer[self._hi : fill_to] = self._get(self._hi, fill_to)
        self._hi = fill_to
        drop_to = start // page * page  # the pages wholly before start: the reader has moved on
        if drop_to > self._lo:
            self._drop(buffer, self._lo, drop_to)
            self._lo = drop_to

    @staticmethod
    def _drop(buffer: mmap.mmap, start: int, end: int) -> None:
        page = mmap.PAGESIZE
        lo, hi = start // page * page, min(len(buffer), end) // page * page
        if hi > lo:
            buffer.madvise(mmap.MADV_DONTNEED, lo, hi - lo)


def location_of(location: str | os.PathLike[str] | ByteSource) -> str | os.PathLike[str]:
    """What messages name: a path as given, or a source's location."""
    return location if isinstance(location, (str, os.PathLike)) else location.location


def read_all(location: str | os.PathLike[str] | ByteSource) -> bytes:
    """The whole content of a small file (a state file, a snapshot, an index fetched whole)."""
    if isinstance(location, (str, os.PathLike)):
        text = os.fspath(location)
        if "://" in text:
            from kdump.storage import object_store  # a URL: an object in a store

            if object_store.is_url(text):
                return object_store.read_whole(text)
        return read_regular(text)
    return location.read(0, location.size())


def source_of(location: str | os.PathLike[str] | ByteSource) -> ByteSource:
    """A source for ``location``: a local path becomes a :class:`LocalFile`; a source is itself."""
    if isinstance(location, (str, os.PathLike)):
        text = os.fspath(location)
        if "://" in text:
            from kdump.storage import object_store  # a URL: an object in a store, read by ranges

            if object_store.is_url(text):
                return object_store.open_source(text)
        return LocalFile(location)
    return location
