"""A partition directory and its segments (Kafka's ``LocalLog``), and the walk over a log directory that finds
partition directories (what Kafka's ``LogManager`` does when it loads a ``log.dirs`` entry).

Scanning reads directory listings only; no file is opened.  Segments are ordered by base offset, the way
Kafka's ``LogSegments`` map orders them, and :meth:`LocalLog.segment_for` finds the one holding an offset with
the same floor lookup.
"""

from __future__ import annotations

import bisect
import os
import re
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass, field

from kdump.storage import naming
from kdump.storage.log_segment import SEGMENT_SUFFIXES, LogSegment

_LONG_MAX = 2**63 - 1
_SEGMENT_SUFFIX_SET = frozenset(SEGMENT_SUFFIXES)
_SEGMENT_FILE = re.compile(r"^([0-9]+)(\.log|\.index|\.timeindex|\.txnindex)$")
_PRODUCER_SNAPSHOT = re.compile(r"^([0-9]+)\.snapshot$")
_KRAFT_SNAPSHOT = re.compile(r"^[0-9]{20}-[0-9]{10}\.checkpoint$")
#: Files a partition directory normally holds besides its segments.
STATE_FILES = ("leader-epoch-checkpoint", "partition.metadata", "quorum-state")
#: Suffixes of files Kafka leaves behind mid-operation (deletion, cleaning, swapping).
TRANSIENT_SUFFIXES = (naming.DELETED_FILE_SUFFIX, naming.CLEANED_FILE_SUFFIX, naming.SWAP_FILE_SUFFIX)


@dataclass
class LocalLog:
    """What a partition directory holds, classified by name."""

    directory: str
    #: The parsed directory name, or None when it is not ``<topic>-<partition>``.
    name: naming.PartitionDir | None
    #: Segments by increasing base offset; each has at least one of its files.
    segments: list[LogSegment] = field(default_factory=list)
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

    @property
    def topic(self) -> str | None:
        return None if self.name is None else self.name.topic

    @property
    def partition(self) -> int | None:
        return None if self.name is None else self.name.partition

    @property
    def log_segments(self) -> list[LogSegment]:
        """The segments that have a ``.log``."""
        return [s for s in self.segments if s.has(naming.LOG_FILE_SUFFIX)]

    @property
    def active_base_offset(self) -> int | None:
        """Base offset of the active segment, the one a running broker appends to: the greatest with a ``.log``
        (Kafka's ``segments.lastSegment``)."""
        segments = self.log_segments
        return segments[-1].base_offset if segments else None

    def log_start_offset(self, checkpointed: int | None) -> int | None:
        """The log start offset as a broker computes it when it loads the log (``UnifiedLog``): the greater of the
        first segment's base offset and ``checkpointed``, the partition's entry in the log directory's
        ``log-start-offset-checkpoint`` (None when it has none); None when there is no segment with a ``.log``.
        The one computation of it (``find``, ``ls``, ``diff``, ``txn``, ``retention`` and the Spark planner ask
        here)."""
        segments = self.log_segments
        if not segments:
            return None
        return max(checkpointed or 0, segments[0].base_offset)

    def segment_for(self, offset: int) -> LogSegment | None:
        """The segment with a ``.log`` and the greatest base offset <= ``offset`` (Kafka's
        ``segments.floorSegment``), or None when ``offset`` is below every base offset."""
        segments = self.log_segments
        i = bisect.bisect_right([s.base_offset for s in segments], offset)
        return segments[i - 1] if i else None

    @classmethod
    def scan(cls, directory: str | os.PathLike[str]) -> LocalLog:
        """Classify the entries of ``directory`` (one ``os.scandir``; OSError propagates)."""
        path = os.fspath(directory)
        log = cls(path, naming.parse_partition_dir(os.path.basename(os.path.normpath(path))))
        by_offset: dict[int, LogSegment] = {}
        #: The segment of each digit string seen (a segment's files share theirs), None when out of range.
        by_digits: dict[str, LogSegment | None] = {}
        with os.scandir(path) as entries:
            names = sorted(e.name for e in entries if not e.is_dir(follow_symlinks=False))
        prefix = os.path.join(path, "")  # prefix + name is os.path.join(path, name), without a call per file
        for name in names:
            full = prefix + name
            # _SEGMENT_FILE without a regular expression (a partition may hold tens of thousands of files)
            dot = name.find(".")
            suffix = name[dot:]
            if dot > 0 and suffix in _SEGMENT_SUFFIX_SET:
                digits = name[:dot]
                if digits.isascii() and digits.isdigit():
                    if digits in by_digits:
                        segment = by_digits[digits]
                    else:
                        base = _java_long_or_none(digits)
                        segment = None
                        if base is not None:
                            segment = by_offset.get(base)
                            if segment is None:
                                segment = by_offset[base] = LogSegment(path, base)
                        by_digits[digits] = segment
                    if segment is not None:
                        segment.files[suffix] = full
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
        log.segments = [by_offset[k] for k in sorted(by_offset)]
        log.producer_snapshots.sort()
        return log


def _java_long_or_none(digits: str) -> int | None:
    """``digits`` (ASCII, as the file-name patterns match them) as a Java long, or None when out of range:
    what ``Long.parseLong`` accepts, without its per-character Unicode handling (a partition has thousands)."""
    significant = digits.lstrip("0")
    if len(significant) > 19:
        return None
    value = int(significant or "0")
    return value if value <= _LONG_MAX else None


#: Files only a log directory (a ``log.dirs`` entry) holds, never a partition directory: Kafka's
#: ``meta.properties``, the per-log-directory checkpoints and the clean-shutdown marker.
LOG_DIR_FILES = (
    "meta.properties",
    "recovery-point-offset-checkpoint",
    "replication-offset-checkpoint",
    "log-start-offset-checkpoint",
    "cleaner-offset-checkpoint",
    ".kafka_cleanshutdown",
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


def is_partition_dir(directory: str | os.PathLike[str]) -> bool:
    """True when the directory holds a partition's files (:func:`holds_partition_files`) and none of a log
    directory's.  Recognised by content, never by name: Kafka's multi-broker quickstart keeps its logs in
    ``/tmp/kafka-logs-1``, Docker images in ``kafka-1``, Strimzi in ``data-0/kafka-log0``; all of them are
    named like partitions and none of them is one."""
    try:
        with os.scandir(os.fspath(directory)) as entries:
            names = [e.name for e in entries if not e.is_dir(follow_symlinks=False)]
    except OSError:
        return False
    return holds_partition_files(names) and not holds_log_dir_files(names)


def is_log_dir(directory: str | os.PathLike[str]) -> bool:
    """True when the directory is a Kafka log directory: it holds ``meta.properties`` or a log directory's
    checkpoint file, or a partition directory directly below it."""
    try:
        with os.scandir(os.fspath(directory)) as entries:
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
        stack = [os.fspath(root)]
        while stack:
            path = stack.pop()
            if is_partition_dir(path):
                yield path
                continue
            try:
                with os.scandir(path) as entries:
                    subdirs = sorted((e.name for e in entries if _is_dir(e)), reverse=True)
            except OSError as e:
                if on_error is not None and not (
                    path != os.fspath(root) and isinstance(e, NotADirectoryError)
                ):
                    on_error(path, e)
                continue
            stack.extend(os.path.join(path, name) for name in subdirs)


def _is_dir(entry: os.DirEntry[str]) -> bool:
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
