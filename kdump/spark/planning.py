"""Planning a read: which segments (and which byte ranges of them) the tasks read (pure Python).

Each ``.log`` segment is one split; a segment larger than ``maxBytesPerSplit`` is cut further at
offset-index entries (verified batch starts, see :func:`kdump.analysis.offset_lookup.cut_positions`), so a
1 GiB segment is several tasks.  Offset and time ranges are turned into offsets per partition here (the time
indexes are used for timestamps), and the first split of a partition starts at the byte position the offset
index gives for its starting offset.  For ``read_committed`` the partition's aborted transactions and last
stable offset are read once here and handed to its splits.

Planning reads directory listings, index files and a few batch headers; it runs on the Spark driver.
"""

from __future__ import annotations

import glob
import os
from dataclasses import dataclass

from kdump.analysis.consumer_view import aborted_in_range, transaction_state
from kdump.analysis.log_search import LogStart, find_timestamp, offset_start_position
from kdump.analysis.offset_lookup import cut_positions
from kdump.errors import KdumpError
from kdump.render.problem_text import sentence
from kdump.spark.options import EARLIEST, LATEST, Selection
from kdump.storage import locations, object_store
from kdump.storage.file_records import FileRecords
from kdump.storage.local_log import LocalLog, find_partition_dirs
from kdump.storage.transaction_index import AbortedTxn

#: An offset past every real one: a range that starts here is empty.
NOTHING = 1 << 63
#: What the driver fetches per request from an object in a store while it plans (batch headers at index
#: entries, a start offset's position): a batch header is 61 bytes, the read-ahead a few pages.
PLANNING_READ_AHEAD = 64 << 10


@dataclass(frozen=True)
class Split:
    """One task: the batches of ``path`` in ``[start_position, end_position)`` (None: to the end of the file)
    with offsets in ``[start_offset, end_offset)`` (None: unbounded)."""

    path: str
    topic: str
    partition: int
    segment_base_offset: int
    start_position: int = 0
    end_position: int | None = None
    start_offset: int | None = None
    end_offset: int | None = None
    #: read_committed only: the partition's aborted transactions that can matter for this split.
    aborted: tuple[AbortedTxn, ...] = ()
    #: read_committed only: the partition's last stable offset (None: no open transaction).
    last_stable_offset: int | None = None
    size: int = 0


@dataclass
class Plan:
    splits: list[Split]
    #: Partition directories that matched the selection (after the topic and partition filters).
    partitions: list[tuple[str, int, str]]
    #: What could not be read while planning (unreadable files, bad indexes), as text.
    problems: list[str]


def expand_paths(paths: tuple[str, ...] | list[str]) -> list[str]:
    """Each path, or the paths a glob matches (sorted); a path that exists is taken as it is."""
    out: list[str] = []
    for path in paths:
        if not glob.has_magic(path) or locations.exists(path):
            out.append(path)
        elif locations.is_url(path):
            out.extend(object_store.glob(path))
        else:
            out.extend(sorted(glob.glob(path)))
    return out


def partition_dirs(paths: tuple[str, ...] | list[str]) -> list[str]:
    """Partition directories under the paths (a ``.log`` path stands for its directory), without repeats."""
    roots: list[str] = []
    for path in expand_paths(paths):
        if not locations.exists(path):
            raise FileNotFoundError(f"no such file or directory: {path}")
        roots.append(
            os.path.dirname(locations.abspath(path)) if locations.isfile(path) else locations.abspath(path)
        )
    return list(dict.fromkeys(find_partition_dirs(roots)))


def topic_partition(log: LocalLog) -> tuple[str, int]:
    """The topic and partition of a partition directory; a directory whose name is not ``<topic>-<n>`` is
    read as topic = its name, partition -1."""
    if log.name is not None:
        return log.name.topic, log.name.partition
    return os.path.basename(os.path.normpath(log.directory)), -1


def offset_for_timestamp(log: LocalLog, timestamp: int, problems: list[str] | None = None) -> int | None:
    """The first offset whose record timestamp is at or after ``timestamp`` (Kafka's ListOffsets, through
    :func:`kdump.analysis.log_search.find_timestamp`; every segment on disk counts, whatever the log start
    offset), or None.  When damage stops that search, every readable record is looked at instead."""
    segments = log.log_segments
    if not segments:
        return None
    try:
        first = segments[0].base_offset
        result = find_timestamp(log, timestamp, LogStart(first, "the first segment's base offset"))
        return result.record.offset if result.found and result.record is not None else None
    except KdumpError as e:
        if problems is not None:
            problems.append(f"{e.describe()} (timestamp {timestamp}: every readable record scanned instead)")
    for segment in segments:
        try:
            with FileRecords(segment.log_path) as records:
                for batch in records.batches():
                    if batch.max_timestamp < timestamp or batch.magic > 2:
                        continue
                    try:
                        found = [r.offset for r in batch.records() if r.timestamp >= timestamp]
                    except KdumpError:
                        continue
                    if found:
                        return found[0]
        except KdumpError:
            continue
    return None


def _range(
    selection: Selection, log: LocalLog, topic: str, partition: int, problems: list[str]
) -> tuple[int | None, int | None]:
    start: int | None = None
    end: int | None = None
    starting = selection.bound("start", topic, partition)
    ending = selection.bound("end", topic, partition)
    if starting == LATEST:
        return NOTHING, None
    if starting is not None and starting >= 0:
        start = starting
    if ending == EARLIEST:
        return NOTHING, None
    if ending is not None and ending >= 0:
        end = ending
    ts = selection.timestamp("start", topic, partition)
    if ts is not None:
        found = offset_for_timestamp(log, ts, problems)
        start = NOTHING if found is None else max(found, start or 0)
    ts = selection.timestamp("end", topic, partition)
    if ts is not None:
        found = offset_for_timestamp(log, ts, problems)
        if found is not None:
            end = found if end is None else min(end, found)
    return start, end


def plan(selection: Selection) -> Plan:
    """The splits of a read, in partition-directory and segment order."""
    splits: list[Split] = []
    matched: list[tuple[str, int, str]] = []
    problems: list[str] = []
    max_bytes = selection.max_split_bytes
    for directory in partition_dirs(selection.paths):
        try:
            log = LocalLog.scan(directory)
        except OSError as e:
            problems.append(f"{directory}: {e.strerror or e}")
            continue
        topic, partition = topic_partition(log)
        if not selection.wants(topic, partition):
            continue
        segments = [s for s in log.log_segments if s.log_size > 0]
        if not segments:
            continue
        matched.append((topic, partition, directory))
        start, end = _range(selection, log, topic, partition, problems)
        if start is not None and end is not None and start >= end:
            continue
        aborted: tuple[AbortedTxn, ...] = ()
        lso = None
        if selection.read.read_committed:
            state = transaction_state(log)
            aborted, lso = state.aborted, state.last_stable_offset
            problems.extend(sentence(p) for p in state.problems)
        for i, segment in enumerate(segments):
            upper = segments[i + 1].base_offset if i + 1 < len(segments) else None
            if end is not None and segment.base_offset >= end:
                break
            if start is not None and upper is not None and upper <= start:
                continue
            path = segment.log_path
            remote = locations.is_url(path)
            try:
                # an object in a store: the driver reads a few batch headers, a small range each (the executors
                # read the splits themselves, straight from the store)
                records = segment.open_log(read_ahead=PLANNING_READ_AHEAD) if remote else segment.open_log()
            except KdumpError as e:
                problems.append(e.describe())
                continue
            try:
                first = 0
                if start is not None and start > segment.base_offset:
                    first = offset_start_position(segment, records, start)
                # without a usable offset index an object is not walked header by header on the driver
                # (that would fetch all of it there): one split per segment
                cuts = [c for c in cut_positions(segment, max_bytes, records, walk=not remote) if c > first]
                size = records.size_in_bytes
            finally:
                records.close()
            fetch = max(segment.base_offset, start or 0)
            mine = tuple(aborted_in_range(aborted, fetch, upper)) if aborted else ()
            ends: list[int | None] = [*cuts, None]  # the last split runs to the end of the segment
            for lo, hi in zip([first, *cuts], ends, strict=True):
                splits.append(
                    Split(
                        path=path,
                        topic=topic,
                        partition=partition,
                        segment_base_offset=segment.base_offset,
                        start_position=lo,
                        end_position=hi,
                        start_offset=start,
                        end_offset=end,
                        aborted=mine,
                        last_stable_offset=lso,
                        size=(size if hi is None else hi) - lo,
                    )
                )
    return Plan(splits, matched, problems)


__all__ = [
    "NOTHING",
    "Plan",
    "Split",
    "expand_paths",
    "offset_for_timestamp",
    "partition_dirs",
    "plan",
    "topic_partition",
]
