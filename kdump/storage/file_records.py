"""Reading the batches of a segment file (Kafka's ``FileRecords`` and ``FileLogInputStream``).

The framing rules are Kafka's exactly, because they decide what a dump shows:

* iteration stops silently when 17 bytes or fewer remain (offset, size, CRC/epoch and magic do not fit), or
  when the declared batch does not fit in what remains (a torn tail);
* a declared size below 14 (the smallest v0 message) is fatal (``CorruptRecordException``), which is what the
  zero-filled tail of a preallocated segment produces;
* the magic byte at +16, a signed Java byte, picks the format (``FileLogInputStream.nextBatch``): below 2 a
  legacy message -- 0x80-0xff included, a negative magic that Kafka cannot read the header of -- anything else
  a v2 batch;
* ``max_bytes`` slices the file, as ``--max-bytes`` does.

The file is memory-mapped read-only and never modified.  Pages behind the read position are released as the
iteration advances, so a 1 GiB segment does not stay resident.  A file truncated while it is being read does not
kill the process (:mod:`kdump.storage.sigbus_guard`): iteration stops with :class:`FileChangedError` at the
batch where the change was noticed.
"""

from __future__ import annotations

import mmap
import os
import struct
from collections.abc import Callable, Iterable, Iterator
from typing import Any, TypeVar

from kdump.errors import CorruptRecordError, KdumpError, UnreadableFileError
from kdump.storage import compression, sigbus_guard
from kdump.storage.byte_source import (
    DEFAULT_READ_AHEAD,
    ByteSource,
    InMemory,
    LocalFile,
    RangedSource,
    source_of,
)
from kdump.storage.legacy_record import LegacyRecordBatch
from kdump.storage.object_store import is_url, open_source
from kdump.storage.record_batch import (
    HEADER_SIZE_UP_TO_MAGIC,
    LOG_OVERHEAD,
    MAGIC_OFFSET,
    RECORD_BATCH_OVERHEAD,
    DefaultRecordBatch,
    record_batch_lines,
)
from kdump.storage.record_batch import (
    RecordBatch as RecordBatch,  # re-exported: the batch interface, with FileRecords that yields batches
)
from kdump.storage.regular_file import open_regular
from kdump.storage.resident_pages import drop_pages

_T = TypeVar("_T")

INT_MAX = 0x7FFFFFFF
MIN_RECORD_SIZE = 14  # LegacyRecord.RECORD_OVERHEAD_V0


_LOG_HEADER = struct.Struct(">qi")
_V2_HEADER = struct.Struct(">qiibIhiqqqhii")
_RELEASE_EVERY = 16 * 1024 * 1024
#: Bytes of log between two looks for a rewrite (``FileRecords.check_unchanged``), and the bytes sampled each time.
_CHECK_EVERY = 4 * 1024 * 1024
_SAMPLE_BYTES = 64


class FileChangedError(KdumpError):
    """The file was truncated or rewritten while it was being read (by a broker's recovery, say): what was read
    past its new end may be zeros, or a mix of old and new bytes, so reading stops."""


class FileRecords:
    """A segment (``.log``) or KRaft snapshot (``.checkpoint``) file opened read-only.

    Use as a context manager.  ``path`` is kept exactly as given, because Kafka's messages repeat it.
    """

    def __init__(
        self,
        path: str,
        *,
        max_bytes: int = INT_MAX,
        decompression_limit: int = compression.DEFAULT_DECOMPRESSION_LIMIT,
        data: bytes | mmap.mmap | None = None,
        whole: bool = False,
        read_ahead: int = DEFAULT_READ_AHEAD,
    ) -> None:
        """``whole``: the reader goes back and forth over all of the file, not front to back (``salvage``); an
        object in a store is then fetched whole first (:meth:`RangedSource.spooled_buffer`).  ``read_ahead``: an
        object's bytes fetched at least per request (a reader of a few batch headers asks for less)."""
        if max_bytes < 0:
            raise KdumpError(f"Invalid size: {max_bytes} in read from {path}", path=path)
        self.path = path
        self.decompression_limit = decompression_limit
        self._mmap: mmap.mmap | None = None
        self._guard: int | None = None
        #: (position, bytes) already read, looked at again by ``check_unchanged``: a file truncated and refilled
        #: in place (same inode, maybe larger) shows other bytes there.
        self._samples: list[tuple[int, bytes]] = []
        #: (inode, mtime) when opened: a failure in bytes that were there at open, in a file modified since, is
        #: the file's change, not its content.
        self._opened: tuple[int, int] | None = None
        #: Fills the buffer before a range of it is read (a ranged source's window; None: all there).
        self._ensure: Callable[[int, int], None] | None = None
        ranged = None
        #: The map of a store's object fetched whole (``whole``): its pages are given back as a local file's.
        self._spool: mmap.mmap | None = None
        if data is None and is_url(path) and whole:  # every byte is needed, in any order: fetched once, kept
            data = open_source(path, read_ahead=read_ahead).spooled_buffer()
            self._spool = data if isinstance(data, mmap.mmap) else None
        elif data is None and is_url(
            path
        ):  # an object in a store: fetched a window at a time as it is walked
            ranged = open_source(path, read_ahead=read_ahead)
            data = ranged.window_buffer()
        if data is not None:
            self.buf: bytes = data  # type: ignore[assignment]
            self.file_size = len(data)
        else:
            try:
                fd = open_regular(path)
            except FileNotFoundError:
                raise UnreadableFileError("No such file", path=path) from None
            except OSError as e:
                raise UnreadableFileError(e.strerror or str(e), path=path) from None
            try:
                st = os.fstat(fd)
                self.file_size = st.st_size
                self._opened = (st.st_ino, st.st_mtime_ns)
                if self.file_size > 0:
                    try:
                        self._mmap = mmap.mmap(fd, 0, access=mmap.ACCESS_READ)
                    except (OSError, ValueError) as e:
                        raise KdumpError(f"cannot map the file: {e}", path=path) from None
                    self.buf = self._mmap  # type: ignore[assignment]
                    self._guard = sigbus_guard.register(self._mmap)
                else:
                    self.buf = b""
            finally:
                os.close(fd)
        #: End of the slice that iteration covers (``--max-bytes``).
        self.end = min(self.file_size, max_bytes)
        if ranged is not None:
            ranged.fetch_end = self.end
            self._ensure = ranged.ensure
        self._sample(0)

    @classmethod
    def from_bytes(cls, data: bytes, path: str = "<memory>", **kwargs: Any) -> FileRecords:
        return cls(path, data=data, **kwargs)

    @classmethod
    def open(
        cls,
        source: str | ByteSource,
        *,
        max_bytes: int = INT_MAX,
        decompression_limit: int = compression.DEFAULT_DECOMPRESSION_LIMIT,
    ) -> FileRecords:
        """The records of any :class:`~kdump.storage.byte_source.ByteSource` (or local path), named by its
        location: a local file is memory-mapped (the fast path, as ``FileRecords(path)``), bytes in memory are
        read in place, a ranged source is fetched a window at a time as the batches are walked."""
        source = source_of(source)
        data: bytes | mmap.mmap | None = None  # a local file is mapped by the constructor
        if isinstance(source, InMemory):
            data = source.data
        elif isinstance(source, RangedSource):
            data = source.window_buffer()
            source.fetch_end = min(source.size(), max_bytes)  # --max-bytes: nothing after it is fetched
        elif not isinstance(source, LocalFile):
            data = source.read(0, source.size())
        records = cls(
            source.location, max_bytes=max_bytes, decompression_limit=decompression_limit, data=data
        )
        if isinstance(source, RangedSource):
            records._ensure = source.ensure
        return records

    def __enter__(self) -> FileRecords:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def close(self) -> None:
        if self._mmap is not None:
            try:
                self._mmap.close()
            except BufferError:
                pass  # a batch still holds a view; the mapping goes when it is collected (still guarded)
            else:
                sigbus_guard.unregister(self._guard)
            self._guard = None
            self._mmap = None

    def _sample(self, position: int) -> None:
        if self._mmap is not None and position + _SAMPLE_BYTES <= self.end:
            self._samples.append((position, self._mmap[position : position + _SAMPLE_BYTES]))

    def release(self, start: int, end: int) -> None:
        """Drop the map's pages of ``[start, end)`` from this process's resident set (they stay in the page
        cache; read again, they come back): for passes over the file other than :meth:`batches`."""
        mapped = self._mmap if self._mmap is not None else self._spool
        if mapped is not None:
            _release(mapped, start // mmap.PAGESIZE * mmap.PAGESIZE, end + LOG_OVERHEAD)

    def _rewritten(self, at: int, position: int | None) -> None:
        raise FileChangedError(
            f"the file was rewritten while kdump was reading it (by another process: the bytes at {at} changed, "
            "truncated and refilled?): what was read may mix old and new content; reading stopped here",
            path=self.path,
            position=position,
        )

    def _check_all_samples(self, position: int | None) -> None:
        """Every sample, read with ``pread`` rather than through the map: pages long released would come back
        into the resident set (a large folio per fault: ~50 MiB for a 256 MiB segment)."""
        if self._opened is None:
            return
        try:
            fd = os.open(self.path, os.O_RDONLY | os.O_NONBLOCK)
        except OSError:
            return
        try:
            if os.fstat(fd).st_ino != self._opened[0]:
                return  # replaced by another file: the map still shows the one that was opened, unmixed
            for at, sample in self._samples:
                if os.pread(fd, len(sample), at) != sample:
                    self._rewritten(at, position)
        finally:
            os.close(fd)

    def checked(self, items: Iterable[_T], position: int) -> Iterator[_T]:
        """``items`` (read from this file: a batch's records), then :meth:`check_unchanged` at ``position`` (the
        batch's) before the iteration ends: a sink that writes a batch's lines once its records are read (all of
        kdump's do) writes nothing read from a page that vanished or changed meanwhile, as the whole-segment text
        path does with its own check."""
        yield from items
        self.check_unchanged(position)

    def check_unchanged(
        self, position: int | None = None, *, thorough: bool = False, failed: bool = False
    ) -> None:
        """Raise :class:`FileChangedError` (at ``position``, the batch being read) when the file is now shorter
        than the part of it this reader covers (it was truncated underneath: what was read past its new end may
        have been zeros), or when bytes already read changed (it was truncated and refilled, or rewritten in
        place: what was read may mix old and new content).  A file that grew is fine (only the bytes present
        when it was opened are read).  The first and the latest samples are looked at (cheap enough for every
        batch); all of them when ``thorough`` (at the end of a pass).  ``failed``: reading failed at ``position``;
        if the file was modified since it was opened and ``position`` is in the bytes it had then (which a
        writer that only appends never touches), the change is what is reported."""
        mm = self._mmap
        if mm is None:
            return
        try:
            size = mm.size()  # fstat of the mapped file (the mapping keeps its own descriptor)
        except (OSError, ValueError):
            return
        if size < self.end:
            raise FileChangedError(
                f"the file was truncated from {self.file_size} to {size} bytes while kdump was reading it "
                "(by another process); reading stopped here",
                path=self.path,
                position=position,
            )
        samples = self._samples
        for at, sample in (samples[0], samples[-1]) if len(samples) > 2 else samples:
            if mm[at : at + len(sample)] != sample:
                self._rewritten(at, position)
        if thorough and len(samples) > 2:
            self._check_all_samples(position)
        if failed and self._opened is not None and position is not None and position < self.end:
            try:
                st = os.stat(self.path)
            except OSError:
                return
            if (st.st_ino, st.st_mtime_ns) != self._opened and st.st_ino == self._opened[0]:
                raise FileChangedError(
                    "the file was modified while kdump was reading it (by another process, in bytes that were "
                    "there when it was opened: truncated and refilled?): what was read may mix old and new "
                    "content; reading stopped here",
                    path=self.path,
                    position=position,
                )

    @property
    def fetched_on_demand(self) -> bool:
        """Whether the content is fetched as it is read (a ranged source: an object store), not all there."""
        return self._ensure is not None

    @property
    def size_in_bytes(self) -> int:
        """Size of the slice (the file, or its first ``max_bytes``)."""
        return self.end

    def batches(
        self,
        start: int = 0,
        end: int | None = None,
        *,
        lines: Callable[[str, int], None] | None = None,
        runs: Callable[[Any, int, int, int], int | None] | None = None,
    ) -> Iterator[RecordBatch]:
        """Iterate the batches in ``[start, end)`` (default: to the end of the slice) following Kafka's framing
        rules (see module docstring).

        ``lines``: the caller wants Kafka's shallow line of each batch (``kafka_text.batch_line_head`` +
        ``batch_line_tail`` at the batch's position) and nothing else of the plain ones: where the C accelerator
        is built, the lines of runs of plain v2 batches of a local file (``record_batch.record_batch_lines``)
        go to ``lines`` (with where the run ends) without a batch object each, in file order with the batches
        that are yielded.

        ``runs``: ``runs(buf, position, end, stop) -> end of a run | None``, asked before each batch of a local
        file (:class:`kdump.analysis.header_run.RunWalk`): it reads a run of plain batches starting before
        ``stop`` itself (and hands it to its readers); the batches after the run are yielded as usual.  A
        ``runs`` whose ``takes_fd`` is true is also given a file descriptor of the mapped file (``runs(buf,
        position, end, stop, fd)``; -1 when it cannot be had), opened for the walk: a reader of headers alone
        reads them with pread, and maps no page.

        Raises :class:`CorruptRecordError` for a size field below 14, at that batch.
        """
        if start < 0:  # Kafka's FileRecords.slice: IllegalArgumentException
            raise KdumpError(f"Invalid position: {start} in read from {self.path}", path=self.path)
        if end is None:
            end = self.end
        mm = self._mmap
        guarded = self._guard is not None
        ensure = self._ensure
        # the C lines only where a vanished page is noticed through the guard's counter, as between batches
        fast = (
            record_batch_lines() if lines is not None and ensure is None and (guarded or mm is None) else None
        )
        fd = -1
        if (
            runs is not None
            and ensure is None
            and mm is not None
            and guarded
            and getattr(runs, "takes_fd", False)
        ):
            fd = self._walk_descriptor()
        try:
            yield from self._batches(start, end, lines, runs, fast, fd)
        finally:
            if fd >= 0:
                os.close(fd)

    def _walk_descriptor(self) -> int:
        """A descriptor of the mapped file for a walk's preads (-1: none: the path names another file now, or
        cannot be opened; the walk then reads the map)."""
        try:
            fd = os.open(self.path, os.O_RDONLY | os.O_NONBLOCK | getattr(os, "O_CLOEXEC", 0))
        except OSError:
            return -1
        try:
            if self._opened is not None and os.fstat(fd).st_ino == self._opened[0]:
                return fd
        except OSError:
            pass
        os.close(fd)
        return -1

    def _batches(
        self,
        start: int,
        end: int,
        lines: Callable[[str, int], None] | None,
        runs: Callable[..., int | None] | None,
        fast: Callable[[Any, int, int, int], tuple[str, int] | None] | None,
        fd: int,
    ) -> Iterator[RecordBatch]:
        """:meth:`batches`' walk (``fast``: the C lines; ``fd``: a descriptor for ``runs``, or -1)."""
        buf = self.buf
        file_size = self.file_size
        path = self.path
        limit = self.decompression_limit
        position = start
        released = 0
        next_check = start + _CHECK_EVERY
        mm = self._mmap
        unpack_log_header = _LOG_HEADER.unpack_from
        unpack_v2 = _V2_HEADER.unpack_from
        # A truncated file is noticed through the pages the guard replaced (a cheap counter, per batch), or
        # by its size where there is no guard (one fstat per batch), and by its size whenever reading stops.
        watch = mm is not None
        guarded = self._guard is not None
        faults = sigbus_guard.fault_count()
        ensure = self._ensure
        while position < end - HEADER_SIZE_UP_TO_MAGIC:
            if ensure is not None:
                ensure(position, position + RECORD_BATCH_OVERHEAD)
            if watch and (sigbus_guard.fault_count() != faults if guarded else True):
                self.check_unchanged(position)
                faults = sigbus_guard.fault_count()
            if runs is not None and ensure is None and (guarded or mm is None):
                if fd >= 0:
                    ran = runs(buf, position, end, next_check, fd)
                else:
                    ran = runs(buf, position, end, next_check if mm is not None else end)
                if ran is not None:
                    position = ran
                    if position >= next_check and mm is not None:
                        next_check, released = self._checkpoint(mm, position, released)
                    continue
            if fast is not None:
                run = fast(buf, position, end, next_check if mm is not None else end)
                if run is not None:
                    text, position = run
                    lines(text, position)  # type: ignore[misc]  # fast is None when lines is
                    if position >= next_check and mm is not None:
                        next_check, released = self._checkpoint(mm, position, released)
                    continue
            offset, size = unpack_log_header(buf, position)
            if size < MIN_RECORD_SIZE:
                if watch:
                    self.check_unchanged(position, thorough=True, failed=True)
                raise CorruptRecordError(
                    f"Found record size {size} smaller than minimum record overhead ({MIN_RECORD_SIZE}) "
                    f"in file {path}.",
                    path=path,
                    position=position,
                )
            if position > end - LOG_OVERHEAD - size:
                break
            if ensure is not None:
                ensure(position, position + LOG_OVERHEAD + size)
            magic = buf[position + MAGIC_OFFSET]
            if magic > 127:  # a Java byte: 0x80-0xff is a negative magic, below 2, so a legacy entry
                magic -= 256
            if magic < 2:
                yield LegacyRecordBatch(buf, position, offset, size, magic, decompression_limit=limit)
            else:
                if position + RECORD_BATCH_OVERHEAD > file_size:
                    raise KdumpError(
                        f"Failed to load record batch at position {position}: the file ends before the "
                        f"{RECORD_BATCH_OVERHEAD}-byte batch header does",
                        path=path,
                        position=position,
                    )
                yield DefaultRecordBatch(buf, position, unpack_v2(buf, position), decompression_limit=limit)
            position += LOG_OVERHEAD + size
            if position >= next_check and mm is not None:
                next_check, released = self._checkpoint(mm, position, released)
        if watch:
            self.check_unchanged(position, thorough=True)

    def _checkpoint(self, mm: mmap.mmap, position: int, released: int) -> tuple[int, int]:
        """Every ``_CHECK_EVERY`` bytes of a walk: the file is unchanged so far, a sample of it is kept, and
        every ``_RELEASE_EVERY`` bytes the pages read are dropped; returns the next checkpoint and where the
        pages are dropped up to."""
        self.check_unchanged(position)
        self._sample(position)
        if position - released >= _RELEASE_EVERY:
            released = _release(mm, released, position)
        return position + _CHECK_EVERY, released

    def _describe(self) -> str:
        """Kafka's ``FileRecords.toString`` of the whole file opened by the dump (``end`` is Integer.MAX_VALUE)."""
        return f"FileRecords(size={self.file_size}, file={self.path}, start=0, end={INT_MAX})"

    def slice_end(self, position: int, size: int) -> int:
        """Where the slice ``[position, position + size)`` of the file ends, after Kafka's preconditions of
        ``FileRecords.slice`` (``availableBytes``), checked in its order: a negative position, a position past
        the end of the file, a negative size.  The end is clamped to the file (an int overflow clamps too)."""
        if position < 0:
            raise KdumpError(f"Invalid position: {position} in read from {self._describe()}", path=self.path)
        if position > self.file_size:
            raise KdumpError(
                f"Slice from position {position} exceeds end position of {self._describe()}", path=self.path
            )
        if size < 0:
            raise KdumpError(f"Invalid size: {size} in read from {self._describe()}", path=self.path)
        end = position + size
        if end > INT_MAX or end > self.file_size:
            end = self.file_size
        return end

    def first_batch_in(self, position: int, window: int) -> RecordBatch:
        """The first batch of the slice ``[position, position + window)``, as Kafka's index dump reads it
        (``slice(position, maxMessageSize).batches.iterator.next()``): the slice's preconditions
        (:meth:`slice_end`), then no whole batch in the window, are errors."""
        for batch in self.batches(position, self.slice_end(position, window)):
            return batch
        raise KdumpError(
            f"no whole batch starts within {window} bytes at position {position} (Kafka: NoSuchElementException; "
            "a larger --max-message-size may help)",
            path=self.path,
            position=position,
        )

    def valid_bytes(self) -> int:
        """Bytes covered by whole batches from the start (what ``Found N invalid bytes`` is measured from), by a
        pass of its own over :meth:`batches` (readers that iterate anyway take the end of their last batch)."""
        total = 0
        for batch in self.batches():
            total += batch.size_in_bytes
        return total

    def invalid_bytes(self, valid_bytes: int, end: int | None = None) -> int:
        """The bytes after the last whole batch: from ``valid_bytes`` (where the last whole batch read ends,
        ``batch.position + batch.size_in_bytes``; where reading started when there was none) to ``end`` (default:
        the end of the slice, :attr:`size_in_bytes`, where :meth:`batches` stops).  Kafka's ``Found <n> invalid
        bytes at the end of <file>``; a torn write that a broker's recovery truncates.  Every reader that reports
        them (the dump, ``verify``, ``verify-index``, ``ls``, ``rebuild-index``, the Spark reader) measures here,
        against the same end."""
        return (self.end if end is None else end) - valid_bytes


def _release(mm: mmap.mmap, released: int, position: int) -> int:
    """Drop already-read pages from this process's resident set (they stay in the page cache)."""
    upto = (position - LOG_OVERHEAD) // mmap.PAGESIZE * mmap.PAGESIZE
    if upto > released and drop_pages(mm, released, upto):
        return upto
    return released


def release_view_pages(data: object) -> None:
    """Drop from this process's resident set the pages of the segment map that ``data`` (a key or value from
    ``records(views=True)``) is a view of; touched again, they are read back from the page cache.  Called
    while a big value's text is written a piece at a time, so that the resident set does not grow with it."""
    owner = getattr(data, "obj", None)
    if isinstance(owner, mmap.mmap):
        drop_pages(owner)


def located(error: KdumpError, records: FileRecords, path: str, batch: object) -> KdumpError:
    """The error to raise for a failure at ``batch`` of ``records`` (the file at ``path``): a file truncated
    underneath takes precedence (what was read may be zeros); otherwise ``error``, located at the batch."""
    position = getattr(batch, "position", None)
    records.check_unchanged(position, thorough=True, failed=True)
    return error.located(path, position)
