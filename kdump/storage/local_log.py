"""A partition directory and its segments (Kafka's ``LocalLog``), and the walk over a log directory that finds
partition directories (what Kafka's ``LogManager`` does when it loads a ``log.dirs`` entry).

Scanning reads directory listings only; no file is opened.  Segments are ordered by base offset, the way
Kafka's ``LogSegments`` map orders them, and :meth:`LocalLog.segment_for` finds the one holding an offset with
the same floor lookup.

Two ways to build a :class:`LocalLog`: :meth:`LocalLog.scan` classifies every name of the directory (what ``ls``,
``verify`` and ``rebuild-index`` need), :meth:`LocalLog.scan_segments` lists only the segments that have a
``.log`` (what a search needs, ``find``): it takes their base offsets from the ``.log`` names and names a
segment's index files only when that segment is asked for (as Kafka's ``LogSegment`` derives them from its base
offset), so a partition of 10,000 segments is not classified name by name.  Both give the same segments.
"""

from __future__ import annotations

import bisect
import dataclasses
import itertools
import os
import re
import stat
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass, field

from kdump.storage import locations, naming
from kdump.storage.checkpoint import OFFSET_CHECKPOINT_FILES
from kdump.storage.log_segment import SEGMENT_SUFFIXES, SUFFIXES_IN_NAME_ORDER, LogSegment

_LONG_MAX = 2**63 - 1
_SEGMENT_SUFFIX_SET = frozenset(SEGMENT_SUFFIXES)
#: The length of a segment file name in the form Kafka writes, ``<20 digits>.log``.
_LOG_NAME_LENGTH = 20 + len(naming.LOG_FILE_SUFFIX)
_SEGMENT_FILE = re.compile(r"^([0-9]+)(\.log|\.index|\.timeindex|\.txnindex)$")
_PRODUCER_SNAPSHOT = re.compile(r"^([0-9]+)\.snapshot$")
_KRAFT_SNAPSHOT = re.compile(r"^[0-9]{20}-[0-9]{10}\.checkpoint$")
#: Files a partition directory normally holds besides its segments.
STATE_FILES = ("leader-epoch-checkpoint", "partition.metadata", "quorum-state")
#: Suffixes of files Kafka leaves behind mid-operation (deletion, cleaning, swapping).
TRANSIENT_SUFFIXES = (naming.DELETED_FILE_SUFFIX, naming.CLEANED_FILE_SUFFIX, naming.SWAP_FILE_SUFFIX)


@dataclass
class LocalLog:
    """What a partition directory holds, classified by name (:meth:`scan`), or only its segments that have a
    ``.log`` (:meth:`scan_segments`, ``segments_only``: the file lists below are then empty)."""

    directory: str
    #: The parsed directory name, or None when it is not ``<topic>-<partition>``.
    name: naming.PartitionDir | None
    #: Producer-state snapshots ``<offset>.snapshot``, by offset.
    producer_snapshots: list[tuple[int, str]] = field(default_factory=list)
    #: KRaft snapshots ``<offset>-<epoch>.checkpoint`` (``__cluster_metadata`` only), by name.
    kraft_snapshots: list[str] = field(default_factory=list)
    #: ``leader-epoch-checkpoint``, ``partition.metadata``, ``quorum-state`` when present, by name.
    state_files: dict[str, str] = field(default_factory=dict)
    #: ``.deleted``, ``.cleaned`` and ``.swap`` files.
    transient_files: list[str] = field(default_factory=list)
    #: Anything else (sub-directories excluded).
    other_files: list[str] = field(default_factory=list)
    #: Built by :meth:`scan_segments`: only the segments with a ``.log`` were listed.
    segments_only: bool = False
    #: Every segment by increasing base offset (None: a segments-only log not yet asked for them all).
    _segments: list[LogSegment] | None = field(default=None, repr=False)
    #: The base offsets of the segments with a ``.log``, increasing, and those segments (None: not built yet).
    _log_bases: list[int] = field(default_factory=list, repr=False)
    _log_segments: list[LogSegment | None] = field(default_factory=list, repr=False)
    #: What :meth:`scan_segments` keeps of the listing to name a segment's files when it is asked for.
    _listing: _Listing | None = field(default=None, repr=False, compare=False)

    @property
    def topic(self) -> str | None:
        return None if self.name is None else self.name.topic

    @property
    def partition(self) -> int | None:
        return None if self.name is None else self.name.partition

    @property
    def segments(self) -> list[LogSegment]:
        """Segments by increasing base offset; each has at least one of its files (of a segments-only log: each
        has its ``.log``)."""
        if self._segments is None:
            self._segments = [self.log_segment(i) for i in range(len(self._log_bases))]
        return self._segments

    @property
    def log_segments(self) -> list[LogSegment]:
        """The segments that have a ``.log``."""
        return [self.log_segment(i) for i in range(len(self._log_bases))]

    @property
    def log_base_offsets(self) -> list[int]:
        """The base offsets of the segments that have a ``.log``, increasing (no segment is built for it)."""
        return self._log_bases

    def log_segment(self, i: int) -> LogSegment:
        """The segment of ``log_base_offsets[i]`` (negative ``i`` counts from the end, as for a list)."""
        segment = self._log_segments[i]
        if segment is None:
            assert self._listing is not None
            segment = self._log_segments[i] = self._listing.segment(self._log_bases[i])
        return segment

    @property
    def active_base_offset(self) -> int | None:
        """Base offset of the active segment, the one a running broker appends to: the greatest with a ``.log``
        (Kafka's ``segments.lastSegment``)."""
        bases = self._log_bases
        return bases[-1] if bases else None

    def log_start_offset(self, checkpointed: int | None) -> int | None:
        """The log start offset as a broker computes it when it loads the log (``UnifiedLog``): the greater of the
        first segment's base offset and ``checkpointed``, the partition's entry in the log directory's
        ``log-start-offset-checkpoint`` (None when it has none); None when there is no segment with a ``.log``.
        The one computation of it (``find``, ``ls``, ``diff``, ``txn``, ``retention`` and the Spark planner ask
        here)."""
        bases = self._log_bases
        if not bases:
            return None
        return max(checkpointed or 0, bases[0])

    def segment_for(self, offset: int) -> LogSegment | None:
        """The segment with a ``.log`` and the greatest base offset <= ``offset`` (Kafka's
        ``segments.floorSegment``), or None when ``offset`` is below every base offset."""
        i = bisect.bisect_right(self._log_bases, offset)
        return self.log_segment(i - 1) if i else None

    def with_earlier_segments(self, earlier: list[LogSegment]) -> LocalLog:
        """This log with ``earlier`` segments (kept elsewhere, each with its ``.log``, by increasing base offset:
        a tiered partition's segments in remote storage) in front of its own: those at or above its first base
        offset are left out (a segment still local is read locally, as a broker serves it).  The other file
        lists are this log's."""
        own = self.log_segments
        first = own[0].base_offset if own else None
        front = [s for s in earlier if first is None or s.base_offset < first]
        segments = [*front, *self.segments]
        with_log = [*front, *own]
        return dataclasses.replace(
            self,
            _segments=segments,
            _log_bases=[s.base_offset for s in with_log],
            _log_segments=list(with_log),
            _listing=None,
        )

    @classmethod
    def scan(cls, directory: str | os.PathLike[str]) -> LocalLog:
        """Classify the entries of ``directory`` (one ``os.scandir``; OSError propagates)."""
        path = os.fspath(directory)
        log = cls(path, naming.parse_partition_dir(os.path.basename(os.path.normpath(path))))
        by_offset: dict[int, LogSegment] = {}
        #: The segment of each digit string seen (a segment's files share theirs), None when out of range.
        by_digits: dict[str, LogSegment | None] = {}
        with locations.scandir(path) as entries:
            names = sorted(e.name for e in entries if not e.is_dir(follow_symlinks=False))
        prefix = os.path.join(path, "")  # prefix + name is os.path.join(path, name), without a call per file
        for name in names:
            full = prefix + name
            # _SEGMENT_FILE without a regular expression (a partition may hold tens of thousands of files)
            dot = name.find(".")
            suffix = name[dot:]
            if dot > 0 and suffix in _SEGMENT_SUFFIX_SET:
                digits = name[:dot]
                if digits in by_digits:  # a segment's other files: its digits are known
                    segment = by_digits[digits]
                elif digits.isascii() and digits.isdigit():
                    base = _java_long_or_none(digits)
                    segment = None
                    if base is not None:
                        segment = by_offset.get(base)
                        if segment is None:
                            segment = by_offset[base] = LogSegment(path, base)
                    by_digits[digits] = segment
                else:
                    segment = None
                if segment is not None:
                    segment.add_file(suffix, full)
                    continue
            m = _PRODUCER_SNAPSHOT.match(name)
            if m and _java_long_or_none(m.group(1)) is not None:
                log.producer_snapshots.append((int(m.group(1)), full))
            elif _KRAFT_SNAPSHOT.match(name):
                log.kraft_snapshots.append(full)
            elif name in STATE_FILES:
                log.state_files[name] = full
            elif name.endswith(TRANSIENT_SUFFIXES):
                log.transient_files.append(full)
            else:
                log.other_files.append(full)
        segments = log._segments = [by_offset[k] for k in sorted(by_offset)]
        with_log = [s for s in segments if s.has(naming.LOG_FILE_SUFFIX)]
        log._log_bases = [s.base_offset for s in with_log]
        log._log_segments = [s for s in with_log]
        log.producer_snapshots.sort()
        return log

    @classmethod
    def scan_segments(cls, directory: str | os.PathLike[str]) -> LocalLog:
        """The segments of ``directory`` that have a ``.log`` (one ``os.scandir``; OSError propagates), the same
        segments, with the same files, as :meth:`scan`'s, without classifying the other names: a segment's files
        are named when it is first asked for (:meth:`log_segment`).  The log's other file lists stay empty."""
        path = os.fspath(directory)
        log = cls(
            path, naming.parse_partition_dir(os.path.basename(os.path.normpath(path))), segments_only=True
        )
        with locations.scandir(path) as entries:
            names = {e.name for e in entries if not e.is_dir(follow_symlinks=False)}
        # The names Kafka writes, <20 digits>.log: a base offset each (when it fits a long).
        digits = [n[:20] for n in names if n.endswith(naming.LOG_FILE_SUFFIX) and len(n) == _LOG_NAME_LENGTH]
        bases = [int(d) for d in digits if d.isascii() and d.isdigit()]
        if bases and max(bases) > _LONG_MAX:
            bases = [b for b in bases if b <= _LONG_MAX]
        # Other spellings of a segment file (fewer or more digits) are rare: classified one by one, as scan does.
        odd: dict[tuple[int, str], str] = {}
        for name in [n for n in names if n[20:21] != "." and n.endswith(SEGMENT_SUFFIXES)]:
            found = _segment_file(name)
            if found is not None:
                if found not in odd or name > odd[found]:  # scan takes the last in name order
                    odd[found] = name
                if found[1] == naming.LOG_FILE_SUFFIX:
                    bases.append(found[0])
        log._log_bases = sorted(set(bases)) if odd else sorted(bases)
        log._log_segments = [None] * len(log._log_bases)
        log._listing = _Listing(path, names, odd)
        return log


class _Listing:
    """The names of a partition directory (sub-directories excluded), to name a segment's files as
    :meth:`LocalLog.scan` would: ``<20 digits><suffix>`` when listed, or the last in name order of the other
    spellings of the same base offset (``odd``)."""

    def __init__(self, directory: str, names: set[str], odd: dict[tuple[int, str], str]) -> None:
        self.directory = directory
        self.prefix = os.path.join(directory, "")
        self.names = names
        self.odd = odd

    def segment(self, base_offset: int) -> LogSegment:
        segment = LogSegment(self.directory, base_offset)
        digits = naming.offset_to_filename(base_offset, "")
        names = self.names
        for suffix in SUFFIXES_IN_NAME_ORDER:
            name = digits + suffix
            listed = name if name in names else None
            other = self.odd.get((base_offset, suffix)) if self.odd else None
            if other is not None and (listed is None or other > listed):
                listed = other
            if listed is not None:
                segment.add_file(suffix, self.prefix + listed)
        return segment


def _segment_file(name: str) -> tuple[int, str] | None:
    """The base offset and suffix of a segment file's name (``<digits>.log`` and the index suffixes, the digits
    a Java long), as :meth:`LocalLog.scan` classifies it; None for any other name."""
    dot = name.find(".")
    suffix = name[dot:]
    if dot > 0 and suffix in _SEGMENT_SUFFIX_SET:
        digits = name[:dot]
        if digits.isascii() and digits.isdigit():
            base = _java_long_or_none(digits)
            if base is not None:
                return base, suffix
    return None


def _java_long_or_none(digits: str) -> int | None:
    """``digits`` (ASCII, as the file-name patterns match them) as a Java long, or None when out of range:
    what ``Long.parseLong`` accepts, without its per-character Unicode handling (a partition has thousands)."""
    if len(digits) <= 20:  # the form Kafka writes, and shorter: int() is safe and quick
        value = int(digits)
        return value if value <= _LONG_MAX else None
    significant = digits.lstrip("0")
    if len(significant) > 19:
        return None
    value = int(significant or "0")
    return value if value <= _LONG_MAX else None


#: Files only a log directory (a ``log.dirs`` entry) holds, never a partition directory: Kafka's
#: ``meta.properties``, the per-log-directory checkpoints, the clean-shutdown marker and the metadata log
#: directory's ``bootstrap.checkpoint`` (``BootstrapDirectory``).
LOG_DIR_FILES = (
    "meta.properties",
    *OFFSET_CHECKPOINT_FILES,
    ".kafka_cleanshutdown",
    "bootstrap.checkpoint",
)
_TRANSIENT_SEGMENT_FILE = re.compile(
    r"^[0-9]+\.(log|index|timeindex|txnindex|snapshot)(\.deleted|\.cleaned|\.swap)$"
)


def holds_partition_files(names: Iterable[str]) -> bool:
    """True when a directory listing ``names`` is a partition directory's: a segment file (``<offset>.log``,
    ``.index``, ``.timeindex``, ``.txnindex``, also mid-deletion, cleaning or swap), a producer snapshot, a
    KRaft snapshot, or a partition's state file (``leader-epoch-checkpoint``, ``partition.metadata``,
    ``quorum-state``).  What the directory is called plays no part."""
    for name in names:
        if (
            _SEGMENT_FILE.match(name)
            or _PRODUCER_SNAPSHOT.match(name)
            or _KRAFT_SNAPSHOT.match(name)
            or name in STATE_FILES
            or _TRANSIENT_SEGMENT_FILE.match(name)
        ):
            return True
    return False


def holds_log_dir_files(names: Iterable[str]) -> bool:
    """True when a directory listing ``names`` holds a file only a log directory has (:data:`LOG_DIR_FILES`)."""
    return any(name in LOG_DIR_FILES for name in names)


def _noted(names: Iterable[str], read: list[str]) -> Iterator[str]:
    """``names``, each added to ``read`` as it is taken."""
    for name in names:
        read.append(name)
        yield name


#: Entries of a partition directory's listing read to decide by names alone (:func:`is_partition_dir`).
_SMALL_LISTING = 256


def is_partition_dir(directory: str | os.PathLike[str]) -> bool:
    """True when the directory holds a partition's files (:func:`holds_partition_files`) and none of a log
    directory's.  Recognised by content, never by name: Kafka's multi-broker quickstart keeps its logs in
    ``/tmp/kafka-logs-1``, Docker images in ``kafka-1``, Strimzi in ``data-0/kafka-log0``; all of them are
    named like partitions and none of them is one."""
    path = os.fspath(directory)
    try:
        # The listing is read only up to the first partition file (a partition of 10,000 segments: the first
        # entry, not 30,000), then on to at most _SMALL_LISTING entries: a listing that ends there is decided by
        # its names (the usual partition of a few segments: no lstat per log directory file name, seven system
        # calls a partition when the Spark planner walks 10,000 of them); a longer one has a log directory's
        # files looked up by name.
        with locations.scandir(path) as entries:
            read: list[str] = []  # the names read so far
            files = (e.name for e in entries if not e.is_dir(follow_symlinks=False))
            if not holds_partition_files(_noted(files, read)):
                return False
            if not locations.is_url(path):
                read += itertools.islice(files, _SMALL_LISTING)
                if len(read) < _SMALL_LISTING:
                    return not holds_log_dir_files(read)
    except OSError:
        return False
    if locations.is_url(path):  # a store's prefix: its listing says it all (a "directory" is never a file)
        try:
            with locations.scandir(path) as entries:
                return not holds_log_dir_files(e.name for e in entries if not e.is_dir(follow_symlinks=False))
        except OSError:
            return False
    for name in LOG_DIR_FILES:
        try:
            mode = os.lstat(os.path.join(path, name)).st_mode
        except FileNotFoundError:
            continue
        except OSError:  # cannot tell by name (no search permission): the whole listing, as names only
            try:
                with locations.scandir(path) as entries:
                    return not holds_log_dir_files(
                        e.name for e in entries if not e.is_dir(follow_symlinks=False)
                    )
            except OSError:
                return False
        if not stat.S_ISDIR(mode):
            return False
    return True


def is_log_dir(directory: str | os.PathLike[str]) -> bool:
    """True when the directory is a Kafka log directory: it holds ``meta.properties`` or a log directory's
    checkpoint file, or a partition directory directly below it."""
    try:
        with locations.scandir(os.fspath(directory)) as entries:
            files: list[str] = []
            subdirs: list[str] = []
            for e in entries:
                (subdirs if e.is_dir(follow_symlinks=False) else files).append(e.name)
    except OSError:
        return False
    if holds_log_dir_files(files):
        return True
    return any(is_partition_dir(os.path.join(os.fspath(directory), d)) for d in subdirs)


def no_kafka_data(path: str | os.PathLike[str]) -> str:
    """What the commands that walk directories say (and exit 2 on) when nothing Kafka-like is below a path."""
    return (
        f"{os.fspath(path)}: no Kafka data found (no partition directory, recognised by its segment, snapshot "
        "or checkpoint files, in it or below it)"
    )


def find_partition_dirs(
    paths: Iterable[str | os.PathLike[str]], on_error: Callable[[str, OSError], None] | None = None
) -> Iterator[str]:
    """Every partition directory at or below each of ``paths``, in name order (a pre-order walk).

    A path that is itself a partition directory (by its files: :func:`is_partition_dir`) yields only itself;
    otherwise the tree below it is walked, without recursion (a tree thousands of levels deep is fine).
    Symbolic links to directories are not followed, so a loop cannot trap the walk.  A directory that cannot be
    read (permissions) or vanishes while it is walked (a partition deleted by a live broker) is skipped after
    ``on_error(path, error)`` is told, and the walk goes on.
    """
    for root in paths:
        # (path, whether its parent is a log directory)
        stack = [(os.fspath(root), False)]
        while stack:
            path, in_log_dir = stack.pop()
            if is_partition_dir(path):
                yield path
                continue
            if in_log_dir:
                # Below a log directory Kafka loads only the directories directly in it (LogManager.loadLogs):
                # what lies deeper (a Spark state store's ``state/0/3/11.snapshot``, an IDE's ``.metadata/0.log``)
                # is not Kafka's.  One that cannot be read may be a partition: said.
                try:
                    with locations.scandir(path):
                        pass
                except OSError as e:
                    if on_error is not None:
                        on_error(path, e)
                continue
            try:
                with locations.scandir(path) as entries:
                    subdirs = []
                    log_dir = False
                    for entry in entries:
                        if _is_dir(entry):
                            subdirs.append(entry.name)
                        elif entry.name in LOG_DIR_FILES:
                            log_dir = True
            except OSError as e:
                if on_error is not None and not (
                    path != os.fspath(root) and isinstance(e, NotADirectoryError)
                ):
                    on_error(path, e)
                continue
            subdirs.sort(reverse=True)
            stack.extend((os.path.join(path, name), log_dir) for name in subdirs)


def _is_dir(entry: locations.DirEntry) -> bool:
    try:
        return entry.is_dir(follow_symlinks=False)
    except OSError:
        return False  # vanished since it was listed


__all__ = [
    "LocalLog",
    "SEGMENT_SUFFIXES",
    "STATE_FILES",
    "TRANSIENT_SUFFIXES",
    "LOG_DIR_FILES",
    "find_partition_dirs",
    "holds_log_dir_files",
    "holds_partition_files",
    "is_log_dir",
    "is_partition_dir",
    "no_kafka_data",
]
