"""The facts of ``kdump rebuild-index``: the index interval used, orphaned index files, what was (or would be)
done to each index file, problems as typed facts (a kind, the file, the byte position, the details as data),
the run's summary, and :class:`RebuildSink`, where they go (:mod:`kdump.render.rebuild_report`)."""

from __future__ import annotations

import mmap
from dataclasses import dataclass
from typing import TYPE_CHECKING, Protocol

from kdump.storage.log_segment import LogSegment
from kdump.storage.offset_index import OffsetIndex
from kdump.storage.time_index import TimeIndex

if TYPE_CHECKING:
    pass
if TYPE_CHECKING:
    pass


@dataclass
class RebuildSummary:
    """What a run did, in numbers (``dry_run``: what it would have done)."""

    dry_run: bool = False
    segments: int = 0
    partitions: int = 0
    rewritten: int = 0
    created: int = 0
    unchanged: int = 0
    #: Index files that differ from a rebuild but are sound (verify-index finds nothing wrong): left alone.
    sound: int = 0
    problems: int = 0
    log_bytes: int = 0


@dataclass(frozen=True)
class Interval:
    """The index interval a partition is rebuilt with and where it comes from; ``first``: the run's first
    partition (the others are told only when theirs differs)."""

    directory: str
    interval: int
    source: str
    first: bool


@dataclass(frozen=True)
class Orphans:
    """A segment's index files with no ``.log`` beside them: left alone."""

    segment: LogSegment


#: What happened to an index file (:attr:`IndexFileOutcome.action`).
UNCHANGED = "unchanged"


LEFT_SOUND = "left-sound"


CREATED = "created"


REWRITTEN = "rewritten"


@dataclass(frozen=True)
class IndexFileOutcome:
    """One index file compared with its rebuild, and what was done (or, in a dry run, would be done)."""

    path: str
    #: UNCHANGED, LEFT_SOUND (differs but sound, left alone without --force), CREATED or REWRITTEN.
    action: str
    dry_run: bool
    #: The index class (its ``ENTRY_SIZE``, and its reader for the differences).
    kind: type[OffsetIndex] | type[TimeIndex]
    base_offset: int
    #: The rebuilt file's bytes and the old file's (None: it was missing).
    new: bytes
    old: bytes | mmap.mmap | None
    #: The old file is sound (verify-index finds nothing wrong with it), checked only when it differs.
    sound: bool = False
    #: Where the old file was kept (written files, with backups).
    backup: str | None = None

    @property
    def entries(self) -> int:
        return len(self.new) // self.kind.ENTRY_SIZE


#: The kinds of :class:`RebuildProblem` (:attr:`RebuildProblem.kind`).
#: A partition directory that cannot be listed (``path``: the directory; ``reason``: the OS error).
UNREADABLE_DIRECTORY = "unreadable-directory"


#: A segment named on the command line that the directory does not hold (``path``: its ``.log``; ``offset``:
#: its base offset).
NO_SUCH_SEGMENT = "no-such-segment"


#: A ``.log`` that cannot be indexed the way Kafka would (offsets too far from the base offset, offsets that do
#: not increase): :class:`~kdump.analysis.index_recovery.IndexRecoveryError`; its indexes are left as they are.
UNINDEXABLE_LOG = "unindexable-log"


#: A ``.log`` that could not be read (any other error reading it); its indexes are left as they are.
UNREADABLE_LOG = "unreadable-log"


#: A ``.log`` whose valid batches end before its end, a torn write or a corrupt batch (``position``: the valid
#: bytes before it; ``invalid_bytes``: what a broker would truncate; ``reason``: why the valid part ends).
INVALID_TAIL = "invalid-tail"


#: A log directory whose ``.lock`` a process holds (``path``: the lock file; ``holder``: its process id, 0 when
#: the system cannot say; ``directory``: the partition directory left unwritten).
LOCKED_LOG_DIR = "locked-log-dir"


#: An index file that exists but cannot be read (``reason``: the OS error).
UNREADABLE_INDEX = "unreadable-index"


#: An index file that could not be written (``reason``: the OS error); the old file is unchanged.
WRITE_ERROR = "write-error"


@dataclass(frozen=True)
class RebuildProblem:
    """Something that kept a run from rebuilding (part of) a partition: its kind (one of the constants above),
    the file or directory it is about, and the details as data (which fields a kind fills: see its constant)."""

    kind: str
    #: The file or directory (None only for an error that names no file).
    path: str | None
    #: The byte position in ``path``, where the problem has one.
    position: int | None = None
    #: The base offset of the segment (NO_SUCH_SEGMENT).
    offset: int | None = None
    #: The error's own text: the OS error, the storage error's message, why the valid bytes end.
    reason: str | None = None
    #: Bytes after ``position`` a broker would truncate (INVALID_TAIL).
    invalid_bytes: int | None = None
    #: The partition directory nothing was written in (LOCKED_LOG_DIR).
    directory: str | None = None
    #: The process holding the lock, 0 when the system cannot say which (LOCKED_LOG_DIR).
    holder: int | None = None


class RebuildSink(Protocol):
    """Where the facts of a run go (:mod:`kdump.render.rebuild_report`)."""

    def interval(self, interval: Interval) -> None: ...

    def orphans(self, orphans: Orphans) -> None: ...

    def index_file(self, outcome: IndexFileOutcome) -> None: ...

    def problem(self, problem: RebuildProblem) -> None: ...

    def summary(self, summary: RebuildSummary) -> None: ...


INDEX_INTERVAL_CONFIG = "index.interval.bytes"
