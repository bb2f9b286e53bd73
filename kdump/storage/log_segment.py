"""One segment of a partition (Kafka's ``LogSegment``): the ``.log`` and the index files that share its base
offset.

A :class:`LogSegment` only names files; nothing is opened until asked for.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from typing import TYPE_CHECKING, TypedDict, Unpack

from kdump.storage import locations, naming
from kdump.storage.compression import DEFAULT_DECOMPRESSION_LIMIT
from kdump.storage.file_records import INT_MAX, FileRecords
from kdump.storage.offset_index import OffsetIndex

if TYPE_CHECKING:
    from kdump.storage.byte_source import ByteSource

#: The suffixes of the files that belong to a segment, in the order Kafka lists them.
SEGMENT_SUFFIXES = (
    naming.LOG_FILE_SUFFIX,
    naming.INDEX_FILE_SUFFIX,
    naming.TIME_INDEX_FILE_SUFFIX,
    naming.TXN_INDEX_FILE_SUFFIX,
)


class OpenLogOptions(TypedDict, total=False):
    """:meth:`LogSegment.open_log`'s options, passed on to :class:`FileRecords` (its defaults where absent)."""

    max_bytes: int
    decompression_limit: int
    read_ahead: int


#: A segment's suffixes in name order (the order :meth:`LocalLog.scan` meets a segment's files in).
SUFFIXES_IN_NAME_ORDER = tuple(sorted(SEGMENT_SUFFIXES))
_BIT = {suffix: 1 << i for i, suffix in enumerate(SUFFIXES_IN_NAME_ORDER)}


@dataclass(slots=True, eq=False, repr=False)
class LogSegment:
    """The files of one segment: ``<dir>/<20-digit base offset><suffix>``.

    :attr:`files` maps each suffix of :data:`SEGMENT_SUFFIXES` that exists on disk to its path.  A segment may
    lack its ``.log`` (orphaned index files) or its indexes (a broker rebuilds them on start-up).

    A partition may hold 100,000 segments: the usual segment (its files named as Kafka names them, added in
    name order, as a scan meets them) keeps only which suffixes it has, as bits (``_found``); any other keeps
    its dict of paths (``_files``).

    A segment whose files are not plain files (a tiered segment in Aiven's layout: its ``.log`` read back
    through a chunk index, its indexes out of one ``.indexes`` object) has a :class:`ByteSource` per suffix
    (``_sources``, :meth:`add_source`): every reader opens :meth:`source`, which is the path otherwise.
    """

    directory: str
    base_offset: int
    _found: int = 0
    _files: dict[str, str] | None = None
    _sources: dict[str, ByteSource] | None = None

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, LogSegment):
            return NotImplemented
        return (self.directory, self.base_offset, self.files) == (
            other.directory,
            other.base_offset,
            other.files,
        )

    def __repr__(self) -> str:
        return f"LogSegment(directory={self.directory!r}, base_offset={self.base_offset!r}, files={self.files!r})"

    @classmethod
    def of_file(cls, path: str) -> LogSegment:
        """The segment a ``.log``/``.index``/``.timeindex``/``.txnindex`` file belongs to, with whichever of
        its files exist.  ValueError for another kind of file (NumberFormatError for a name without an offset)."""
        suffix = naming.suffix_of(os.path.basename(path))
        if suffix not in SEGMENT_SUFFIXES:
            raise ValueError(f"{path}: not a segment file (.log, .index, .timeindex or .txnindex)")
        segment = cls(os.path.dirname(path) or ".", naming.offset_from_file(path))
        for s in SEGMENT_SUFFIXES:
            if locations.exists(segment.path(s)):
                segment.add_file(s, segment.path(s))
        return segment

    @property
    def files(self) -> dict[str, str]:
        """Each suffix found to its path, in the order the files were added."""
        if self._files is not None:
            return self._files
        return {s: self._named(s) for s in SUFFIXES_IN_NAME_ORDER if self._found & _BIT[s]}

    def add_file(self, suffix: str, path: str) -> None:
        """The segment's file with ``suffix`` is ``path`` (one already added is replaced, in its place)."""
        files = self._files
        if files is None:
            bit = _BIT[suffix]
            if self._found < bit and path == self._named(suffix):
                self._found |= bit
                return
            files = self._files = self.files
        files[suffix] = path

    def add_source(self, suffix: str, source: ByteSource) -> None:
        """The segment's file with ``suffix`` is read from ``source`` (named by its location)."""
        self.add_file(suffix, source.location)
        if self._sources is None:
            self._sources = {}
        self._sources[suffix] = source

    def source(self, suffix: str) -> str | ByteSource:
        """What a reader opens for the file with ``suffix``: its source when it has one, else its path."""
        sources = self._sources
        if sources is not None:
            found = sources.get(suffix)
            if found is not None:
                return found
        return self.path(suffix)

    def _named(self, suffix: str) -> str:
        """The name Kafka writes (``LogFileUtils.filenamePrefixFromOffset``: 20 digits) in the directory."""
        directory = (
            self.directory
        )  # os.path.join's result, without its call (log_path may be asked per batch)
        sep = "" if not directory or directory.endswith("/") else "/"
        return f"{directory}{sep}{self.base_offset:020d}{suffix}"

    def path(self, suffix: str) -> str:
        """The path of this segment's file with ``suffix``, whether or not it exists: the file the scan found
        (another spelling of the base offset, ``42.index``, is the file read and named), else the name Kafka
        writes (``LogFileUtils.filenamePrefixFromOffset``: 20 digits)."""
        files = self._files
        if files is not None:
            found = files.get(suffix)
            if found is not None:
                return found
        return self._named(suffix)

    def has(self, suffix: str) -> bool:
        if self._files is not None:
            return suffix in self._files
        return bool(self._found & _BIT[suffix])

    @property
    def log_path(self) -> str:
        return self.path(naming.LOG_FILE_SUFFIX)

    @property
    def index_path(self) -> str:
        return self.path(naming.INDEX_FILE_SUFFIX)

    @property
    def time_index_path(self) -> str:
        return self.path(naming.TIME_INDEX_FILE_SUFFIX)

    @property
    def txn_index_path(self) -> str:
        return self.path(naming.TXN_INDEX_FILE_SUFFIX)

    @property
    def log_size(self) -> int:
        """Size of the ``.log`` in bytes (0 when it is missing)."""
        if not self.has(naming.LOG_FILE_SUFFIX):
            return 0
        source = self.source(naming.LOG_FILE_SUFFIX)
        try:
            return locations.getsize(source) if isinstance(source, str) else source.size()
        except OSError:
            return 0

    def open_log(self, **options: Unpack[OpenLogOptions]) -> FileRecords:
        source = self.source(naming.LOG_FILE_SUFFIX)
        if isinstance(source, str):
            return FileRecords(source, **options)
        # the source's own read-ahead
        return FileRecords.open(
            source,
            max_bytes=options.get("max_bytes", INT_MAX),
            decompression_limit=options.get("decompression_limit", DEFAULT_DECOMPRESSION_LIMIT),
        )

    def open_offset_index(self) -> OffsetIndex:
        index: OffsetIndex = OffsetIndex.open(self.source(naming.INDEX_FILE_SUFFIX), self.base_offset)
        return index
