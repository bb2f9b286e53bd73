"""Planning a read: which segments (and which byte ranges of them) the tasks read (pure Python).

Each ``.log`` segment is one split; a segment larger than ``maxBytesPerSplit`` is cut further at
offset-index entries (verified batch starts, see :func:`kdump.analysis.offset_lookup.cut_positions`), so a
1 GiB segment is several tasks.  Offset and time ranges are turned into offsets per partition here (the time
indexes are used for timestamps), and the first split of a partition starts at the byte position the offset
index gives for its starting offset.  For ``read_committed`` the partition's aborted transactions and last
stable offset are read once here and handed to its splits.

With ``remoteRoot`` (:func:`kdump.spark.options.remote_options`) a tiered partition is planned as one log, as
``kdump ls``/``txn``/``files --remote-root`` read it (:meth:`kdump.commands.remote_tier.RemoteChecks.one_log`,
the same code): the segments ``__remote_log_metadata`` says were copied, below the first local one, then the
local ones.  A remote segment's split names its ``.log`` object (a URL, or a path under a local remote root):
the task that reads it fetches it straight from the store.  In Aiven's layout the ``.log`` object is chunks
(zstd, AES-256-GCM): the split also carries the segment's reader
(:class:`kdump.storage.aiven_segment.SegmentLog`, the commands' own), which the task uses to fetch and undo the
chunks of its byte range.  The driver reads each such segment's ``.rsm-manifest`` and unwraps its data key with
the private key (``aivenPrivateKey``); a task gets the manifest and data key of the segments it reads, never the
private key (:func:`_remote`).

Planning reads directory listings, index files and a few batch headers; it runs on the Spark driver.
"""

from __future__ import annotations

import glob
import os
from dataclasses import dataclass, field, replace
from typing import TYPE_CHECKING

from kdump.analysis.consumer_view import aborted_in_range, transaction_state
from kdump.analysis.log_search import LogStart, find_timestamp, offset_start_position
from kdump.analysis.offset_lookup import cut_positions
from kdump.errors import KdumpError, UnreadableFileError
from kdump.render.problem_text import sentence
from kdump.spark.options import EARLIEST, LATEST, Selection
from kdump.storage import locations, object_store
from kdump.storage.byte_source import ByteSource
from kdump.storage.file_records import FileRecords
from kdump.storage.local_log import LocalLog, find_partition_dirs
from kdump.storage.log_segment import LogSegment
from kdump.storage.naming import LOG_FILE_SUFFIX, parse_partition_dir
from kdump.storage.regular_file import open_regular
from kdump.storage.transaction_index import AbortedTxn

if TYPE_CHECKING:
    from kdump.commands.remote_tier import RemoteChecks

#: An offset past every real one: a range that starts here is empty.
NOTHING = 1 << 63
#: What planning fetches per request from an object in a store (batch headers at index entries, a start
#: offset's position): a batch header is 61 bytes, the read-ahead a few pages.
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
    #: Where the ``.log``'s bytes come from when they are not ``path``'s bytes (a remote segment in Aiven's
    #: layout: its chunks read back through the manifest, which holds the segment's data key when it is
    #: encrypted; never shown).
    source: ByteSource | None = field(default=None, repr=False, compare=False)


@dataclass
class Plan:
    splits: list[Split]
    #: Partition directories that matched the selection (after the topic and partition filters).
    partitions: list[tuple[str, int, str]]
    #: What could not be read while planning (unreadable files, bad indexes), as text.
    problems: list[str]
    #: The splits packed into Spark tasks (:func:`pack`), in order; every split is in exactly one.
    tasks: list[tuple[Split, ...]] = field(default_factory=list)
    #: The bytes a task reads at most, apart from one split larger than that (:func:`target_split_bytes`).
    target_bytes: int = 0


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
    pushed = selection.pushed
    if pushed.offset_lo is not None and pushed.offset_lo > (start or 0):
        start = pushed.offset_lo
    if pushed.offset_hi is not None and (end is None or pushed.offset_hi < end):
        end = pushed.offset_hi
    if pushed.min_timestamp is not None and start != NOTHING:
        # Kafka's ListOffsets (find_timestamp): every record before the offset found is earlier than the time
        found = offset_for_timestamp(log, pushed.min_timestamp, problems)
        start = NOTHING if found is None else max(found, start or 0)
    return start, end


@dataclass
class _Segment:
    """A segment to read, before it is cut: its partition's range and read_committed state."""

    segment: LogSegment
    topic: str
    partition: int
    start: int | None
    end: int | None
    aborted: tuple[AbortedTxn, ...]
    last_stable_offset: int | None
    #: Where reading starts (the offset index's position for ``start``), and the size of the ``.log``.
    first: int
    size: int


def _log_source(segment: LogSegment) -> ByteSource | None:
    """The segment's ``.log`` source when its bytes are not its path's (an Aiven remote segment), else None."""
    source = segment.source(LOG_FILE_SUFFIX)
    return None if isinstance(source, str) else source


def _check_readable(segment: LogSegment) -> None:
    """Raise what :class:`FileRecords` would for a ``.log`` it cannot open (without mapping it: planning ten
    thousand partitions opens every segment).  An object in a store was in its prefix's listing: its reader
    says whether it can be read.  An Aiven segment's manifest is read here, on the driver, and its data key
    unwrapped (:meth:`kdump.storage.aiven_segment.SegmentLog.check`): the error of a segment without its key is
    the planner's, not each task's."""
    source = _log_source(segment)
    check = getattr(source, "check", None)
    if check is not None:
        check()
    path = segment.log_path
    if locations.is_url(path):
        return
    try:
        os.close(open_regular(path))
    except FileNotFoundError:
        raise UnreadableFileError("No such file", path=path) from None
    except OSError as e:
        raise UnreadableFileError(e.strerror or str(e), path=path) from None


def _open(segment: LogSegment) -> FileRecords:
    """A segment's ``.log`` opened for planning: an object in a store is read a few batch headers at a time,
    :data:`PLANNING_READ_AHEAD` per request (the tasks read the splits themselves, straight from the store)."""
    if locations.is_url(segment.log_path):
        return segment.open_log(read_ahead=PLANNING_READ_AHEAD)
    return segment.open_log()


def plan(selection: Selection) -> Plan:
    """The splits of a read, in partition-directory and segment order, and the tasks they are packed into.

    Three passes: the segments to read (directory listings; a segment is opened only to find where a starting
    offset lies), the byte size a task should read (:func:`target_split_bytes`), then the segments larger than
    that cut at offset-index entries (:func:`kdump.analysis.offset_lookup.cut_positions`) and the pieces packed
    into tasks (:func:`pack`)."""
    matched: list[tuple[str, int, str]] = []
    problems: list[str] = []
    chosen: list[_Segment] = []
    remote = _remote(selection)
    for directory in partition_dirs(selection.paths):
        named = parse_partition_dir(os.path.basename(os.path.normpath(directory)))
        if named is not None and not selection.wants(named.topic, named.partition):
            continue  # left out by its name (topic_partition's), before its files are listed
        try:
            log = LocalLog.scan(directory)
        except OSError as e:
            problems.append(f"{directory}: {e.strerror or e}")
            continue
        if remote is not None:
            try:
                one = remote.one_log(log)
            except (KdumpError, OSError) as e:
                problems.append(e.describe() if isinstance(e, KdumpError) else f"{directory}: {e}")
                one = None
            if one is not None:
                log = one[0]
        topic, partition = topic_partition(log)
        if not selection.wants(topic, partition):
            continue
        segments = [(s, s.log_size) for s in log.log_segments]
        segments = [(s, size) for s, size in segments if size > 0]
        if not segments:
            continue
        matched.append((topic, partition, directory))
        start, end = _range(selection, log, topic, partition, problems)
        if start == NOTHING or start is not None and end is not None and start >= end:
            continue  # nothing wanted (no record at or after a time, startingOffsets latest): not read at all
        aborted: tuple[AbortedTxn, ...] = ()
        lso = None
        if selection.read.read_committed:
            state = transaction_state(log)
            aborted, lso = state.aborted, state.last_stable_offset
            problems.extend(sentence(p) for p in state.problems)
        for i, (segment, size) in enumerate(segments):
            upper = segments[i + 1][0].base_offset if i + 1 < len(segments) else None
            if end is not None and segment.base_offset >= end:
                break
            if start is not None and upper is not None and upper <= start:
                continue
            first = 0
            try:
                if start is not None and start > segment.base_offset:
                    with _open(segment) as records:
                        first = offset_start_position(segment, records, start)
                else:
                    _check_readable(segment)
            except KdumpError as e:
                problems.append(e.describe())
                continue
            fetch = max(segment.base_offset, start or 0)
            mine = tuple(aborted_in_range(aborted, fetch, upper)) if aborted else ()
            chosen.append(_Segment(segment, topic, partition, start, end, mine, lso, first, size))
    open_cost = selection.open_cost_bytes
    total = sum(max(0, c.size - c.first) + open_cost for c in chosen)
    target = target_split_bytes(total, selection.min_partitions, selection.max_split_bytes, open_cost)
    splits: list[Split] = []
    for c in chosen:
        cuts: list[int] = []
        if c.size - c.first > target:
            try:
                with _open(c.segment) as records:
                    # without a usable offset index an object is not walked header by header (that would
                    # fetch all of it where the planning runs): one split per segment
                    walk = not locations.is_url(c.segment.log_path) and _log_source(c.segment) is None
                    cuts = [x for x in cut_positions(c.segment, target, records, walk=walk) if x > c.first]
            except KdumpError as e:
                problems.append(e.describe())
                continue
        ends: list[int | None] = [*cuts, None]  # the last split runs to the end of the segment
        for lo, hi in zip([c.first, *cuts], ends, strict=True):
            splits.append(
                Split(
                    path=c.segment.log_path,
                    topic=c.topic,
                    partition=c.partition,
                    segment_base_offset=c.segment.base_offset,
                    start_position=lo,
                    end_position=hi,
                    start_offset=c.start,
                    end_offset=c.end,
                    aborted=c.aborted,
                    last_stable_offset=c.last_stable_offset,
                    size=(c.size if hi is None else hi) - lo,
                    source=_log_source(c.segment),
                )
            )
    return Plan(splits, matched, problems, pack(splits, target, open_cost), target)


def _remote(selection: Selection) -> RemoteChecks | None:
    """The tiered partitions' remote part (``remoteRoot``): the commands' :class:`RemoteChecks`, which reads
    each set of metadata partitions once per plan.  A local remote root is made absolute (the tasks run
    elsewhere).

    Aiven's private keys (``aivenPrivateKey``) are loaded here, on the driver, into the planner's keyring: each
    encrypted segment's data key is unwrapped with it when its manifest is read, and a split carries the
    segment's reader with that manifest and data key but without the keyring
    (:meth:`kdump.storage.aiven_segment.SegmentObjects.__getstate__`).  So a task can undo the chunks of the
    segments it reads and nothing else: the private key, which opens every segment the plugin ever wrote,
    stays on the driver, and the executors need no copy of the PEM file."""
    options = selection.remote
    if options is None:
        return None
    from kdump.commands.remote_tier import RemoteChecks  # only for a tiered read

    keyring = None
    if selection.remote_keys:
        from kdump.storage.aiven_segment import Keyring

        keyring = Keyring.load(selection.remote_keys)
    return RemoteChecks(replace(options, root=locations.abspath(options.root), keyring=keyring))


def target_split_bytes(total: int, min_partitions: int, max_split_bytes: int, open_cost: int) -> int:
    """Bytes a task should read: Spark's ``FilePartition.maxSplitBytes`` rule --
    ``min(maxBytesPerSplit, max(openCostInBytes, total / minPartitions))``, where ``total`` counts every
    segment's bytes plus its opening cost -- so that a read of little data is still spread over
    ``minPartitions`` tasks and a large one is cut into pieces of at most ``maxBytesPerSplit``."""
    per_core = -(-total // max(1, min_partitions))
    return max(1, min(max_split_bytes, max(open_cost, per_core)))


def pack(pieces: list[Split], target: int, open_cost: int) -> list[tuple[Split, ...]]:
    """The pieces grouped into tasks, in order: Spark's ``FilePartition.getFilePartitions`` rule (a task is
    closed when the next piece would take it past ``target``; every piece also costs ``open_cost``), so ten
    thousand small partitions are a few tasks, not ten thousand."""
    tasks: list[tuple[Split, ...]] = []
    current: list[Split] = []
    size = 0
    for piece in pieces:
        if current and size + piece.size > target:
            tasks.append(tuple(current))
            current, size = [], 0
        current.append(piece)
        size += piece.size + open_cost
    if current:
        tasks.append(tuple(current))
    return tasks


__all__ = [
    "NOTHING",
    "Plan",
    "Split",
    "expand_paths",
    "offset_for_timestamp",
    "pack",
    "partition_dirs",
    "plan",
    "target_split_bytes",
    "topic_partition",
]
