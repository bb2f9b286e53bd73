"""One segment of a partition (Kafka's ``LogSegment``): the ``.log`` and the index files that share its base
offset.

A :class:`LogSegment` only names files; nothing is opened until asked for.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from typing import TypedDict, Unpack

from kdump.storage import locations, naming
from kdump.storage.file_records import FileRecords
from kdump.storage.offset_index import OffsetIndex

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
    """

    directory: str
    base_offset: int
    _found: int = 0
    _files: dict[str, str] | None = None

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
        try:
            return locations.getsize(self.log_path)
        except OSError:
            return 0

    def open_log(self, **options: Unpack[OpenLogOptions]) -> FileRecords:
        return FileRecords(self.log_path, **options)

    def open_offset_index(self) -> OffsetIndex:
        return OffsetIndex(self.index_path, self.base_offset)
