"""``kdump rebuild-index``: rebuild ``.index`` and ``.timeindex`` files from their ``.log`` with Kafka's recovery
algorithm (:mod:`kdump.storage.index_recovery`), writing them atomically (:mod:`kdump.storage.atomic_write`).

This module chooses the segments, the index interval and what to write, and reports; see
``man kdump-rebuild-index`` for the output.
"""

from __future__ import annotations

import mmap
import os
from collections.abc import Callable
from dataclasses import dataclass
from itertools import islice
from typing import TYPE_CHECKING

from kdump.errors import KdumpError
from kdump.exit_status import ExitStatus
from kdump.render import plural
from kdump.render.output import Output
from kdump.storage import naming, sigbus_guard
from kdump.storage.atomic_write import lock_holder, replace_file
from kdump.storage.index_recovery import (
    DEFAULT_INDEX_INTERVAL_BYTES,
    IndexRecoveryError,
    RecoveredIndexes,
    recover_indexes,
)
from kdump.storage.local_log import LocalLog, find_partition_dirs, no_kafka_data
from kdump.storage.log_segment import LogSegment
from kdump.storage.offset_index import OffsetIndex, OffsetPosition
from kdump.storage.regular_file import walk_error
from kdump.storage.time_index import TimeIndex, TimestampOffset

if TYPE_CHECKING:
    from kdump.storage.topic_config import ClusterConfig

#: The KRaft metadata partition, whose records hold the topics' configuration.
METADATA_PARTITION_DIR = "__cluster_metadata-0"

INDEX_INTERVAL_CONFIG = "index.interval.bytes"
BROKER_INDEX_INTERVAL_CONFIG = "log.index.interval.bytes"

_SEGMENT_FILE_SUFFIXES = (naming.LOG_FILE_SUFFIX, naming.INDEX_FILE_SUFFIX, naming.TIME_INDEX_FILE_SUFFIX)


@dataclass
class Target:
    """A partition directory and the base offsets to rebuild in it (None: every segment)."""

    directory: str
    base_offsets: set[int] | None = None
    #: Why the walk could not read this directory (then it is reported, not rebuilt).
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
                message = f"cannot read the directory: {walk_error(error)}"
                targets[os.path.normpath(directory)] = Target(directory, error=message)

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


@dataclass
class _Counts:
    segments: int = 0
    partitions: int = 0
    rewritten: int = 0
    created: int = 0
    unchanged: int = 0
    #: Index files that differ from a rebuild but are sound (verify-index finds nothing wrong): left alone.
    sound: int = 0
    problems: int = 0
    log_bytes: int = 0


class RebuildIndex:
    """One ``kdump rebuild-index`` run."""

    def __init__(self, targets: list[Target], options: RebuildOptions, out: Output, err: Output) -> None:
        self.targets = targets
        self.options = options
        self.out = out
        self.err = err
        self.counts = _Counts()
        self._configs: dict[str, ClusterConfig | None] = {}  # by log directory
        self._node_ids: dict[str, int | None] = {}
        #: The first partition's index interval and its source, printed once; other partitions' only when
        #: they differ.
        self._first_interval: tuple[int, str] | None = None

    def run(self) -> int:
        for target in self.targets:
            self.rebuild_partition(target)
        self.out.write(self.summary())
        return ExitStatus.PROBLEMS if self.counts.problems else ExitStatus.OK

    # -- reporting ------------------------------------------------------------------------------------------

    def problem(self, text: str) -> None:
        self.counts.problems += 1
        self.out.flush()
        self.err.write(f"kdump: {text}\n")
        self.err.flush()

    def summary(self) -> str:
        c = self.counts
        where = f"{plural(c.segments, 'segment')} in {plural(c.partitions, 'partition')}"
        if self.options.dry_run:
            head = f"Dry run over {where}: "
            body = (
                f"{c.rewritten} index files would be rewritten, {c.created} created, {c.unchanged} unchanged"
                f"{f', {c.sound} sound left alone' if c.sound else ''}; nothing was written"
            )
        else:
            head = f"Rebuilt the indexes of {where}: "
            body = f"{c.rewritten} index files rewritten, {c.created} created, {c.unchanged} unchanged" + (
                f", {c.sound} sound left alone" if c.sound else ""
            )
        tail = "" if not c.problems else f"; {plural(c.problems, 'problem')}"
        sound = ""
        if c.sound:
            sound = (
                f"\n{plural(c.sound, 'sound index file')} (verify-index finds nothing wrong) "
                f"{'differs' if c.sound == 1 else 'differ'} from a rebuild and "
                f"{'would be ' if self.options.dry_run else 'was '}left alone: a broker indexes batches as "
                "they are appended, with history a rebuild cannot know (the index.interval.bytes of that time, "
                "appends of several batches at once, a restart); --force rewrites sound files too"
            )
        return f"{head}{body}{tail}.{sound}\n"

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
                from kdump.storage.topic_config import read_cluster_config  # only for KRaft log directories

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
            self.problem(f"{target.directory}: {target.error}")
            return
        try:
            log = LocalLog.scan(target.directory)
        except OSError as e:
            self.problem(f"{target.directory}: cannot read the directory: {walk_error(e)}")
            return
        segments = [
            s for s in log.segments if target.base_offsets is None or s.base_offset in target.base_offsets
        ]
        if target.base_offsets is not None:
            known = {s.base_offset for s in log.segments}
            for base in sorted(target.base_offsets - known):
                self.problem(
                    f"{os.path.join(target.directory, naming.offset_to_filename(base))}: no such segment"
                )
        if not any(s.has(naming.LOG_FILE_SUFFIX) for s in segments):
            for segment in segments:
                self._orphans(segment)
            return
        self.counts.partitions += 1
        interval, source = self.interval_for(log)
        if self._first_interval is None:
            self._first_interval = (interval, source)
            self.out.write(f"{INDEX_INTERVAL_CONFIG} {interval} ({source})\n")
        elif self._first_interval != (interval, source):
            self.out.write(f"{target.directory}: {INDEX_INTERVAL_CONFIG} {interval} ({source})\n")
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
                who = f"process {holder}" if holder else "another process"
                self.problem(
                    f"{os.path.join(log_dir, '.lock')}: held by {who} (a running broker?): nothing written in "
                    f"{target.directory}; stop the broker, or pass --force"
                )
                return
        for segment in segments:
            if not segment.has(naming.LOG_FILE_SUFFIX):
                self._orphans(segment)
                continue
            self.rebuild_segment(segment, interval)

    def _orphans(self, segment: LogSegment) -> None:
        names = ", ".join(os.path.basename(p) for p in segment.files.values())
        self.out.write(
            f"{segment.directory}: {names}: no {naming.offset_to_filename(segment.base_offset)} beside it; left "
            "alone (a broker deletes such files on start-up)\n"
        )

    def rebuild_segment(self, segment: LogSegment, interval: int) -> None:
        self.counts.segments += 1
        try:
            with segment.open_log() as records:
                recovered = recover_indexes(records, segment.base_offset, interval)
        except IndexRecoveryError as e:
            self.problem(f"{e.describe()}; indexes left as they are")
            return
        except KdumpError as e:
            self.problem(f"{e.describe()}; indexes left as they are")
            return
        self.counts.log_bytes += recovered.valid_bytes
        if recovered.invalid_bytes:
            self.problem(
                f"{segment.log_path}: byte {recovered.valid_bytes}: {recovered.stop_reason}; the indexes cover the "
                f"{recovered.valid_bytes} valid bytes before it and the .log is left unchanged (a broker would "
                f"truncate its last {recovered.invalid_bytes} bytes)"
            )
        soundness: dict[str, bool] = {}

        def sound(path: str) -> bool:
            """Whether verify-index finds nothing wrong with ``path`` (one pass, only when a file differs)."""
            if not soundness:
                from kdump.storage.index_verification import verify_segment

                problems = {p.path for p in verify_segment(segment).problems}
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
            self.problem(f"{path}: cannot read it: {e.strerror or e}")
            return
        entries = len(data) // kind.ENTRY_SIZE
        if old is not None and len(old) == len(data) and old[:] == data:
            self.counts.unchanged += 1
            if self.options.verbose:
                self.out.write(f"{path}: unchanged ({_entries(entries)})\n")
            return
        if old is None:
            what = f"{_entries(entries)}; the file was missing"
        else:
            what = f"{_entries(entries)}, was {len(old)} bytes = {_entries(len(old) // kind.ENTRY_SIZE)}" + (
                f" + {len(old) % kind.ENTRY_SIZE} bytes" if len(old) % kind.ENTRY_SIZE else ""
            )
        is_sound = old is not None and sound(path)
        if is_sound and not self.options.force:
            self.counts.sound += 1
            verb = "would leave" if self.options.dry_run else "left"
            self.out.write(
                f"{path}: sound, differs from a rebuild ({what}); {verb} it alone (--force rewrites it)\n"
            )
            if self.options.dry_run:
                self.out.write("".join(diff_lines(old or b"", data, kind, recovered.base_offset, path)))
            return
        if is_sound:
            what += "; sound: the differences are history a rebuild cannot know"
        if self.options.dry_run:
            verb = "would create" if old is None else "would rewrite"
            self.out.write(f"{path}: {verb} ({what})\n")
            self.out.write("".join(diff_lines(old or b"", data, kind, recovered.base_offset, path)))
        else:
            try:
                backup = replace_file(path, data, backup=self.options.backup)
            except OSError as e:
                self.problem(f"{path}: cannot write it: {e.strerror or e}; the old file is unchanged")
                return
            verb = "created" if old is None else "rewritten"
            kept = "" if backup is None else f"; the old file is kept as {backup}"
            self.out.write(f"{path}: {verb} ({what}){kept}\n")
        if old is None:
            self.counts.created += 1
        else:
            self.counts.rewritten += 1


def _entries(n: int) -> str:
    return f"{n} entry" if n == 1 else f"{n} entries"


def _node_id(log_dir: str) -> int | None:
    from kdump.storage.meta_properties import read_meta_properties

    path = os.path.join(log_dir, "meta.properties")
    try:
        return read_meta_properties(path).node_id
    except (KdumpError, OSError, ValueError):
        return None


def _describe(entry: OffsetPosition | TimestampOffset) -> str:
    if isinstance(entry, OffsetPosition):
        return f"offset {entry.offset} position {entry.position}"
    return f"timestamp {entry.timestamp} offset {entry.offset}"


def diff_lines(
    old: bytes | mmap.mmap,
    new: bytes,
    kind: type[OffsetIndex] | type[TimeIndex],
    base_offset: int,
    path: str | None = None,
) -> list[str]:
    """Entry-by-entry differences between two index files (read with their index class): ``entry i: old ->
    new``, ``+`` for an entry only the new file has, ``-`` for one only the old file has; a zero-filled tail and a
    partial last entry are summarised on one line each.  The old file's zero tail is found from its end, so
    only its written entries are listed."""
    size = kind.ENTRY_SIZE
    old_index = kind.wrap(old, base_offset, path)
    new_slots = list(kind.from_bytes(new, base_offset))
    count = old_index.entry_count
    zero_from = min(count, max(1, old_index.zero_tail_start()))
    old_slots = list(islice(old_index, zero_from))
    lines = []
    for i in range(max(zero_from, len(new_slots))):
        a = old_slots[i] if i < zero_from else None
        b = new_slots[i] if i < len(new_slots) else None
        if a == b:
            continue
        if a is None and b is not None:
            lines.append(f"  entry {i}: + {_describe(b)}\n")
        elif b is None and a is not None:
            lines.append(f"  entry {i}: - {_describe(a)}\n")
        elif a is not None and b is not None:
            lines.append(f"  entry {i}: {_describe(a)} -> {_describe(b)}\n")
    if zero_from < count:
        n = count - zero_from
        lines.append(
            f"  entries {zero_from}..{count - 1}: - {n} zero-filled slot{'s' if n != 1 else ''} "
            "(a preallocated index never trimmed)\n"
        )
    if len(old) % size:
        start = len(old) - len(old) % size
        lines.append(
            f"  bytes {start}..{len(old) - 1}: - {len(old) % size} bytes that are not a whole entry\n"
        )
    return lines
