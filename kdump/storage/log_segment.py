"""One segment of a partition (Kafka's ``LogSegment``): the ``.log`` and the index files that share its base
offset.

A :class:`LogSegment` only names files; nothing is opened until asked for.
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field
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


@dataclass
class LogSegment:
    """The files of one segment: ``<dir>/<20-digit base offset><suffix>``.

    ``files`` maps each suffix of :data:`SEGMENT_SUFFIXES` that exists on disk to its path.  A segment may lack
    its ``.log`` (orphaned index files) or its indexes (a broker rebuilds them on start-up).
    """

    directory: str
    base_offset: int
    files: dict[str, str] = field(default_factory=dict)

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
                segment.files[s] = segment.path(s)
        return segment

    def path(self, suffix: str) -> str:
        """The path of this segment's file with ``suffix``, whether or not it exists: the file the scan found
        (another spelling of the base offset, ``42.index``, is the file read and named), else the name Kafka
        writes (``LogFileUtils.filenamePrefixFromOffset``: 20 digits)."""
        found = self.files.get(suffix)
        if found is not None:
            return found
        return os.path.join(self.directory, naming.offset_to_filename(self.base_offset, suffix))

    def has(self, suffix: str) -> bool:
        return suffix in self.files

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
