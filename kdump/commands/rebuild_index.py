"""``kdump rebuild-index``: rebuild ``.index`` and ``.timeindex`` files from their ``.log`` with Kafka's recovery
algorithm (:mod:`kdump.analysis.index_recovery`), writing them atomically (:mod:`kdump.storage.atomic_write`).

This module chooses the segments, the index interval and what to write, and hands the facts to a :class:`RebuildSink`
(:mod:`kdump.render.rebuild_report`): the index interval used (:class:`Interval`), index files without a
``.log`` (:class:`Orphans`), what happened to each index file (:class:`IndexFileOutcome`), problems
(:class:`RebuildProblem`: a kind, the file, the byte position and the details, as data; the sink words them) and
one :class:`RebuildSummary`.  See ``man kdump-rebuild-index`` for the output.
"""

from __future__ import annotations

import mmap
import os
from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING

from kdump.analysis.index_recovery import (
    DEFAULT_INDEX_INTERVAL_BYTES,
    IndexRecoveryError,
    RecoveredIndexes,
    recover_indexes,
)
from kdump.errors import KdumpError
from kdump.exit_status import ExitStatus
from kdump.facts.rebuild_index import (
    CREATED,
    INDEX_INTERVAL_CONFIG,
    INVALID_TAIL,
    LEFT_SOUND,
    LOCKED_LOG_DIR,
    NO_SUCH_SEGMENT,
    REWRITTEN,
    UNCHANGED,
    UNINDEXABLE_LOG,
    UNREADABLE_DIRECTORY,
    UNREADABLE_INDEX,
    UNREADABLE_LOG,
    WRITE_ERROR,
    IndexFileOutcome,
    Interval,
    Orphans,
    RebuildProblem,
    RebuildSink,
    RebuildSummary,
)
from kdump.storage import naming, sigbus_guard
from kdump.storage.atomic_write import lock_holder, replace_file
from kdump.storage.local_log import LocalLog, find_partition_dirs, no_kafka_data
from kdump.storage.log_segment import LogSegment
from kdump.storage.offset_index import OffsetIndex
from kdump.storage.regular_file import walk_error
from kdump.storage.time_index import TimeIndex

if TYPE_CHECKING:
    from kdump.analysis.topic_config import ClusterConfig

#: The KRaft metadata partition, whose records hold the topics' configuration.
METADATA_PARTITION_DIR = "__cluster_metadata-0"

BROKER_INDEX_INTERVAL_CONFIG = "log.index.interval.bytes"

_SEGMENT_FILE_SUFFIXES = (naming.LOG_FILE_SUFFIX, naming.INDEX_FILE_SUFFIX, naming.TIME_INDEX_FILE_SUFFIX)


@dataclass
class Target:
    """A partition directory and the base offsets to rebuild in it (None: every segment)."""

    directory: str
    base_offsets: set[int] | None = None
    #: Why the walk could not read this directory (the OS error's text; then it is reported, not rebuilt).
    error: str | None = None


def select_targets(paths: list[str] | tuple[str, ...]) -> list[Target]:
    """Partition directories and segments named by ``paths``: a ``.log`` (or its ``.index``/``.timeindex``),
    a partition directory, or a log directory (searched recursively).  ValueError for anything else."""
    targets: dict[str, Target] = {}
    for path in paths:
        if os.path.isfile(path):
            name = os.path.basename(path)
            suffix = naming.suffix_of(name)
            if suffix not in _SEGMENT_FILE_SUFFIXES:
                raise ValueError(f"{path}: not a .log, .index or .timeindex file, nor a directory")
            try:
                base = naming.offset_from_file(path)
            except naming.NumberFormatError as e:
                raise ValueError(e.describe()) from None
            directory = os.path.dirname(path) or "."
            target = targets.setdefault(os.path.normpath(directory), Target(directory, set()))
            if target.base_offsets is not None:
                target.base_offsets.add(base)
        elif os.path.isdir(path):
            found = False

            def unreadable(directory: str, error: OSError) -> None:
                targets[os.path.normpath(directory)] = Target(directory, error=walk_error(error))

            for directory in find_partition_dirs([path], on_error=unreadable):
                found = True
                targets[os.path.normpath(directory)] = Target(directory)
            if not found:
                raise ValueError(no_kafka_data(path))
        else:
            raise ValueError(f"{path}: no such file or directory")
    return list(targets.values())


@dataclass
class RebuildOptions:
    #: None: the topic's setting from the cluster metadata in the log directory, else Kafka's default.
    index_interval_bytes: int | None = None
    dry_run: bool = False
    backup: bool = True
    force: bool = False
    verbose: bool = False


class RebuildIndex:
    """One ``kdump rebuild-index`` run."""

    def __init__(self, targets: list[Target], options: RebuildOptions, sink: RebuildSink) -> None:
        self.targets = targets
        self.options = options
        self.sink = sink
        self.counts = RebuildSummary(dry_run=options.dry_run)
        self._configs: dict[str, ClusterConfig | None] = {}  # by log directory
        self._node_ids: dict[str, int | None] = {}
        #: The first partition's index interval and its source, told once; other partitions' only when
        #: they differ.
        self._first_interval: tuple[int, str] | None = None

    def run(self) -> ExitStatus:
        for target in self.targets:
            self.rebuild_partition(target)
        self.sink.summary(self.counts)
        return ExitStatus.PROBLEMS if self.counts.problems else ExitStatus.OK

    def problem(self, problem: RebuildProblem) -> None:
        self.counts.problems += 1
        self.sink.problem(problem)

    # -- interval -------------------------------------------------------------------------------------------

    def interval_for(self, log: LocalLog) -> tuple[int, str]:
        """The index interval to rebuild a partition with, and where it comes from."""
        if self.options.index_interval_bytes is not None:
            return self.options.index_interval_bytes, "--index-interval-bytes"
        log_dir = os.path.dirname(os.path.abspath(log.directory))
        if log_dir not in self._configs:
            self._configs[log_dir] = None
            self._node_ids[log_dir] = None
            if os.path.isdir(os.path.join(log_dir, METADATA_PARTITION_DIR)):
                from kdump.analysis.topic_config import read_cluster_config  # only for KRaft log directories

                try:
                    self._configs[log_dir] = read_cluster_config(log_dir)
                except (KdumpError, OSError):
                    pass
                self._node_ids[log_dir] = _node_id(log_dir)
        config = self._configs[log_dir]
        name = naming.parse_partition_dir(os.path.basename(os.path.abspath(log.directory)))
        if config is None or name is None:
            return DEFAULT_INDEX_INTERVAL_BYTES, "Kafka's default; no cluster metadata in the log directory"
        value = config.topic_value(
            name.topic, INDEX_INTERVAL_CONFIG, BROKER_INDEX_INTERVAL_CONFIG, self._node_ids[log_dir]
        )
        if value is None:
            return (
                DEFAULT_INDEX_INTERVAL_BYTES,
                f"Kafka's default; no {INDEX_INTERVAL_CONFIG} in {config.source}",
            )
        try:
            interval = int(value)
        except ValueError:
            return (
                DEFAULT_INDEX_INTERVAL_BYTES,
                f"Kafka's default; {config.source} has the unusable value {value!r}",
            )
        if interval < 0:
            return (
                DEFAULT_INDEX_INTERVAL_BYTES,
                f"Kafka's default; {config.source} has the unusable value {value!r}",
            )
        return interval, f"the topic's configuration in {config.source}"

    # -- partitions and segments -------------------------------------------------------------------------------

    def rebuild_partition(self, target: Target) -> None:
        if target.error is not None:
            self.problem(RebuildProblem(UNREADABLE_DIRECTORY, target.directory, reason=target.error))
            return
        try:
            log = LocalLog.scan(target.directory)
        except OSError as e:
            self.problem(RebuildProblem(UNREADABLE_DIRECTORY, target.directory, reason=walk_error(e)))
            return
        segments = [
            s for s in log.segments if target.base_offsets is None or s.base_offset in target.base_offsets
        ]
        if target.base_offsets is not None:
            known = {s.base_offset for s in log.segments}
            for base in sorted(target.base_offsets - known):
                path = os.path.join(target.directory, naming.offset_to_filename(base))
                self.problem(RebuildProblem(NO_SUCH_SEGMENT, path, offset=base))
        if not any(s.has(naming.LOG_FILE_SUFFIX) for s in segments):
            for segment in segments:
                self._orphans(segment)
            return
        self.counts.partitions += 1
        interval, source = self.interval_for(log)
        if self._first_interval is None:
            self._first_interval = (interval, source)
            self.sink.interval(Interval(target.directory, interval, source, first=True))
        elif self._first_interval != (interval, source):
            self.sink.interval(Interval(target.directory, interval, source, first=False))
        if not self.options.dry_run:
            # The broker's lock is in the log directory that really holds the partition: resolve symbolic
            # links first (a link to a locked broker's partition must not bypass the check).
            holder = None
            log_dir = os.path.dirname(os.path.abspath(target.directory))
            real_log_dir = os.path.dirname(os.path.realpath(target.directory))
            for candidate in dict.fromkeys((log_dir, real_log_dir)):
                holder = lock_holder(candidate)
                if holder is not None:
                    log_dir = candidate
                    break
            if holder is not None and not self.options.force:
                lock = os.path.join(log_dir, ".lock")
                self.problem(RebuildProblem(LOCKED_LOG_DIR, lock, directory=target.directory, holder=holder))
                return
        active = log.active_base_offset
        for segment in segments:
            if not segment.has(naming.LOG_FILE_SUFFIX):
                self._orphans(segment)
                continue
            self.rebuild_segment(segment, interval, active=segment.base_offset == active)

    def _orphans(self, segment: LogSegment) -> None:
        self.sink.orphans(Orphans(segment))

    def rebuild_segment(self, segment: LogSegment, interval: int, *, active: bool = False) -> None:
        """Rebuild one segment's indexes.  ``active``: it is the partition's active segment, whose preallocated
        index files (a running broker's, or a copy of one) are sound, not damage (``verify_segment``)."""
        self.counts.segments += 1
        try:
            with segment.open_log() as records:
                recovered = recover_indexes(records, segment.base_offset, interval)
        except KdumpError as e:
            kind = UNINDEXABLE_LOG if isinstance(e, IndexRecoveryError) else UNREADABLE_LOG
            self.problem(RebuildProblem(kind, e.path, e.position, reason=e.message))
            return
        self.counts.log_bytes += recovered.valid_bytes
        if recovered.invalid_bytes:
            self.problem(
                RebuildProblem(
                    INVALID_TAIL,
                    segment.log_path,
                    recovered.valid_bytes,
                    reason=recovered.stop_reason,
                    invalid_bytes=recovered.invalid_bytes,
                )
            )
        soundness: dict[str, bool] = {}

        def sound(path: str) -> bool:
            """Whether verify-index finds nothing wrong with ``path`` (one pass, only when a file differs)."""
            if not soundness:
                from kdump.analysis.index_verification import verify_segment

                problems = {p.file for p in verify_segment(segment, active=active).problems}
                for name in (segment.index_path, segment.time_index_path):
                    soundness[name] = name not in problems
            return soundness.get(path, False)

        self.write_index(segment.index_path, recovered.offset_index_bytes(), OffsetIndex, recovered, sound)
        self.write_index(segment.time_index_path, recovered.time_index_bytes(), TimeIndex, recovered, sound)

    def write_index(
        self,
        path: str,
        data: bytes,
        kind: type[OffsetIndex] | type[TimeIndex],
        recovered: RecoveredIndexes,
        sound: Callable[[str], bool] = lambda path: False,
    ) -> None:
        try:
            old: bytes | mmap.mmap | None = sigbus_guard.map_file(path)[0]  # read in pieces, as compared
        except FileNotFoundError:
            old = None
        except OSError as e:
            self.problem(RebuildProblem(UNREADABLE_INDEX, path, reason=e.strerror or str(e)))
            return
        dry_run = self.options.dry_run

        def outcome(action: str, sound: bool = False, backup: str | None = None) -> IndexFileOutcome:
            return IndexFileOutcome(
                path, action, dry_run, kind, recovered.base_offset, data, old, sound, backup
            )

        if old is not None and len(old) == len(data) and old[:] == data:
            self.counts.unchanged += 1
            if self.options.verbose:
                self.sink.index_file(outcome(UNCHANGED))
            return
        is_sound = old is not None and sound(path)
        if is_sound and not self.options.force:
            self.counts.sound += 1
            self.sink.index_file(outcome(LEFT_SOUND, sound=True))
            return
        action = CREATED if old is None else REWRITTEN
        if dry_run:
            self.sink.index_file(outcome(action, is_sound))
        else:
            try:
                backup = replace_file(path, data, backup=self.options.backup)
            except OSError as e:
                self.problem(RebuildProblem(WRITE_ERROR, path, reason=e.strerror or str(e)))
                return
            self.sink.index_file(outcome(action, is_sound, backup))
        if old is None:
            self.counts.created += 1
        else:
            self.counts.rewritten += 1


def _node_id(log_dir: str) -> int | None:
    from kdump.storage.meta_properties import read_meta_properties

    path = os.path.join(log_dir, "meta.properties")
    try:
        return read_meta_properties(path).node_id
    except (KdumpError, OSError, ValueError):
        return None
