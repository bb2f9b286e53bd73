"""``kdump diff``: did replicas of a partition diverge?

Copies of the same partition (from several brokers, or several log directories matched by topic-partition)
are compared batch by batch from their headers only: base and last offset, CRC (which covers everything from
the attributes on) and partition leader epoch (which the CRC does not cover).  Only the batches that differ are
decoded, to name the records that differ.

Each copy's leader-epoch lineage is its ``leader-epoch-checkpoint`` (the broker's ``LeaderEpochFileCache``)
beside the epochs its batches carry.  The truncation each copy would do as a follower of each other copy follows
Kafka's leader-epoch protocol (KIP-101/KIP-279; ``AbstractFetcherThread.getOffsetTruncationState`` and
``LeaderEpochFileCache.endOffsetFor``): the follower asks for the end offset of its latest epoch; the leader
answers with the largest epoch <= it that it knows and the start offset of the next epoch it knows (its log end
offset for its latest epoch); when the follower knows that epoch it truncates to the smaller of the two end
offsets, else it truncates to its own end offset of the largest epoch below and asks again.  An undefined answer
(the leader has no epochs) means truncating to the follower's high watermark.
"""

from __future__ import annotations

import os
from collections.abc import Iterator
from typing import Any

from kdump import problem as pk
from kdump.analysis.digest_map import DIGESTS
from kdump.analysis.log_dir_checkpoints import read_log_dir_checkpoints
from kdump.errors import KdumpError
from kdump.exit_status import ExitStatus
from kdump.facts import diff as step
from kdump.facts.diff import (
    BatchHeader,
    Copy,
    Divergence,
    PairDiff,
    PartitionDiff,
    RecordDifference,
    Truncation,
    TruncationStep,
)
from kdump.facts.report import ReportSink, hand_over
from kdump.problem import Problem, problem, problem_of
from kdump.storage import locations, naming
from kdump.storage.checksum import crc32c
from kdump.storage.leader_epoch_checkpoint import read_leader_epoch_checkpoint
from kdump.storage.local_log import LocalLog, find_partition_dirs
from kdump.storage.regular_file import walk_error

UNDEFINED_EPOCH = -1
UNDEFINED_OFFSET = -1
#: Offset ranges kept per difference list (the counts cover all).
MAX_RANGES = 100
#: Records named per differing batch pair.
MAX_RECORDS = 5


def headers(
    log: LocalLog, problems: list[Problem], crc_problems: list[Problem] | None = None
) -> Iterator[BatchHeader]:
    """Every batch's header, in offset order; a batch whose CRC fails is told to ``crc_problems``."""
    return _headers(log, problems, problems if crc_problems is None else crc_problems)


def _headers(log: LocalLog, errors: list[Problem], problems: list[Problem]) -> Iterator[BatchHeader]:
    fast = None if DIGESTS is None else DIGESTS.batch_headers
    run: list[BatchHeader] = []
    path = ""

    def runs(buf: Any, position: int, end: int, stop: int) -> int | None:
        """A run of plain v2 batches' headers read in C (``kdump._digests.batch_headers``), kept for the loop
        below, which hands them out before the next batch."""
        found = fast(buf, position, end, stop, crc32c, BatchHeader, path)  # type: ignore[misc]
        if found is None:
            return None
        run.extend(found[0])
        return found[1]  # type: ignore[no-any-return]

    for segment in log.log_segments:
        path = segment.log_path
        try:
            with segment.open_log() as records:
                for batch in records.batches(runs=None if fast is None else runs):
                    if run:
                        yield from _run_headers(run, problems)
                    count = batch.count_or_none
                    header = BatchHeader(
                        batch.base_offset,
                        batch.last_offset,
                        batch.partition_leader_epoch,
                        batch.checksum,
                        1 if count is None else count,  # a legacy entry: one message (or one wrapper)
                        path,
                        batch.position,
                        batch.is_valid(),
                    )
                    if not header.valid:
                        problems.append(_corrupt(header, batch.compute_checksum()))
                    yield header
                if run:
                    yield from _run_headers(run, problems)
        except KdumpError as e:
            if run:
                yield from _run_headers(run, problems)
            errors.append(problem_of(e))


def _corrupt(h: BatchHeader, computed: int) -> Problem:
    return problem(
        pk.CORRUPT_BATCH,
        h.file,
        h.position,
        base_offset=h.base_offset,
        last_offset=h.last_offset,
        stored=h.crc,
        computed=computed,
    )


def _run_headers(run: list[BatchHeader], problems: list[Problem]) -> list[BatchHeader]:
    """The headers of a run read in C, in order (the run emptied), a CRC failure told as the batches' are."""
    found = run[:]
    run.clear()
    for h in found:
        if not h.valid:
            from kdump.storage.file_records import FileRecords

            with FileRecords(h.file) as records:  # rare: the batch again, for its computed CRC
                problems.append(_corrupt(h, next(records.batches(h.position)).compute_checksum()))
    return found


def read_copy(directory: str) -> Copy:
    """A copy's offsets, epochs and problems, from one walk of its batch headers."""
    copy, log, start = _open_copy(directory)
    for _ in _copy_headers(copy, log, start):
        pass
    return copy


def _open_copy(directory: str) -> tuple[Copy, LocalLog, int | None]:
    """A copy with what its checkpoints say (and their problems), its log, and its checkpointed log start."""
    copy = Copy(directory)
    log = LocalLog.scan(directory)
    path = log.state_files.get("leader-epoch-checkpoint")
    if path is not None:
        try:
            copy.checkpoint_epochs = [
                (e.epoch, e.start_offset) for e in read_leader_epoch_checkpoint(path).entries
            ]
        except (KdumpError, OSError) as e:
            copy.problems.append(problem_of(e, path))
    log_dir = os.path.dirname(locations.abspath(directory))
    checkpoints = read_log_dir_checkpoints(log_dir, copy.problems)
    if log.name is not None:
        key = (log.name.topic, log.name.partition)
        copy.high_watermark = checkpoints.get("replication-offset-checkpoint", {}).get(key)
        start = checkpoints.get("log-start-offset-checkpoint", {}).get(key)
    else:
        start = None
    return copy, log, start


def _copy_headers(copy: Copy, log: LocalLog, start: int | None) -> Iterator[BatchHeader]:
    """The copy's batch headers, counted into ``copy`` as they pass (its problems told to it); the copy is
    complete once they are all read."""
    last_epoch = None
    batches = 0
    h = None
    epochs = copy.batch_epochs
    for h in headers(log, copy.problems):
        if batches == 0:
            copy.log_start_offset = log.log_start_offset(start)
        batches += 1
        if h.leader_epoch != last_epoch and h.leader_epoch >= 0:
            epochs.append((h.leader_epoch, h.base_offset))
            last_epoch = h.leader_epoch
        yield h
    copy.batches = batches
    if h is not None:
        copy.log_end_offset = h.last_offset + 1
    elif log.log_segments:
        copy.log_end_offset = log.log_segments[-1].base_offset
        copy.log_start_offset = log.log_start_offset(start)


def _add_range(ranges: list[tuple[int, int]], first: int, last: int) -> None:
    if ranges and ranges[-1][1] + 1 >= first:
        ranges[-1] = (ranges[-1][0], max(ranges[-1][1], last))
    elif len(ranges) < MAX_RANGES:
        ranges.append((first, last))


def compare(a_dir: str, b_dir: str, pair: PairDiff) -> None:
    """Stream both copies' batch headers in offset order and fill ``pair`` (the copies' problems are
    :func:`read_copy`'s)."""
    compare_headers(headers(LocalLog.scan(a_dir), [], []), headers(LocalLog.scan(b_dir), [], []), pair)


def compare_headers(ia: Iterator[BatchHeader], ib: Iterator[BatchHeader], pair: PairDiff) -> None:
    """Fill ``pair`` from two copies' batch headers in offset order (read to their ends)."""
    x = next(ia, None)
    y = next(ib, None)
    a_started = b_started = False
    while x is not None or y is not None:
        if x is not None and y is not None and x.base_offset == y.base_offset:
            a_started = b_started = True
            kind = None
            if x.last_offset != y.last_offset:
                kind = "batch boundaries"
            elif x.crc != y.crc:
                kind = "crc"
            elif not (x.valid and y.valid):
                kind = "corrupt"  # the same stored CRC, but one copy's bytes no longer match it
            elif x.leader_epoch != y.leader_epoch:
                kind = "leader epoch"
            if kind is None:
                pair.matching_batches += 1
            else:
                _diverge(pair, kind, x, y)
            x, y = next(ia, None), next(ib, None)
        elif y is None or (x is not None and x.last_offset < y.base_offset):
            assert x is not None
            a_started = True
            n = x.last_offset - x.base_offset + 1
            pair.offsets_only_in_a += n
            if b_started and y is not None:
                pair.inner_offsets_only += n
            _add_range(pair.only_in_a, x.base_offset, x.last_offset)
            x = next(ia, None)
        elif x is None or y.last_offset < x.base_offset:
            b_started = True
            n = y.last_offset - y.base_offset + 1
            pair.offsets_only_in_b += n
            if a_started and x is not None:
                pair.inner_offsets_only += n
            _add_range(pair.only_in_b, y.base_offset, y.last_offset)
            y = next(ib, None)
        else:  # overlapping batches with different base offsets
            _diverge(pair, "batch boundaries", x, y)
            if x.last_offset <= y.last_offset:
                x = next(ia, None)
            else:
                y = next(ib, None)


def _diverge(pair: PairDiff, kind: str, x: BatchHeader, y: BatchHeader) -> None:
    pair.diverged_batches += 1
    if pair.first_divergence is None:
        d = Divergence(min(x.base_offset, y.base_offset), kind, x, y)
        if kind != "leader epoch":
            _record_diff(x, y, d)
        pair.first_divergence = d


def _records(h: BatchHeader) -> dict[int, tuple[bytes | None, bytes | None]]:
    from kdump.storage.file_records import FileRecords

    found: dict[int, tuple[bytes | None, bytes | None]] = {}
    with FileRecords(h.file) as records:
        for batch in records.batches(h.position):
            for record in batch.records():
                found[record.offset] = (record.key, record.value)
            break
    return found


def _record_diff(x: BatchHeader, y: BatchHeader, d: Divergence) -> None:
    """Decode the two batches and note in ``d`` the records that differ (at most :data:`MAX_RECORDS`)."""
    try:
        ra, rb = _records(x), _records(y)
    except KdumpError as e:
        d.undecodable = problem_of(e)
        return
    for offset in sorted(set(ra) | set(rb)):
        a, b = ra.get(offset), rb.get(offset)
        if a == b:
            continue
        if len(d.records) == MAX_RECORDS:
            d.more_records = True
            return
        d.records.append(
            RecordDifference(
                offset,
                None if a is None else a[0],
                None if b is None else b[0],
                None if a is None or a[1] is None else len(a[1]),
                None if b is None or b[1] is None else len(b[1]),
                absent_a=a is None,
                absent_b=b is None,
            )
        )


def end_offset_for(epochs: list[tuple[int, int]], requested: int, log_end_offset: int) -> tuple[int, int]:
    """``LeaderEpochFileCache.endOffsetFor``: (epoch, end offset) for ``requested``."""
    if requested == UNDEFINED_EPOCH or not epochs:
        return UNDEFINED_EPOCH, UNDEFINED_OFFSET
    if epochs[-1][0] == requested:
        return requested, log_end_offset
    higher = next(((e, o) for e, o in epochs if e > requested), None)
    if higher is None:
        return UNDEFINED_EPOCH, UNDEFINED_OFFSET
    floor = None
    for e, o in epochs:
        if e <= requested:
            floor = (e, o)
    if floor is None:
        return requested, higher[1]
    return floor[0], higher[1]


def truncation(follower: Copy, leader: Copy, f: int, l_: int, new_epoch: int) -> Truncation:
    """The offset ``follower`` truncates to on fetching from ``leader`` (the leader-epoch protocol), with the
    leader elected at ``new_epoch``: as ``Partition.makeLeader`` does, the new epoch starts at its log end
    offset."""
    epochs = list(follower.epochs)
    leo = follower.log_end_offset or 0
    leader_leo = leader.log_end_offset or 0
    leader_epochs = [*leader.epochs, (new_epoch, leader_leo)]
    steps = [TruncationStep(step.ELECTED, new_epoch, leader_leo)]
    for _ in range(100):
        requested = epochs[-1][0] if epochs else UNDEFINED_EPOCH
        le, lo = end_offset_for(leader_epochs, requested, leader_leo)
        steps.append(TruncationStep(step.ASKED, le, lo, requested))
        if lo == UNDEFINED_OFFSET:
            target = follower.high_watermark if follower.high_watermark is not None else leo
            steps.append(TruncationStep(step.UNDEFINED))
            return Truncation(f, l_, target, max(0, leo - target), steps)
        fe, fo = end_offset_for(epochs, le, leo)
        if fo == UNDEFINED_OFFSET:
            target = min(lo, leo)
            return Truncation(f, l_, target, max(0, leo - target), steps)
        if fe != le:
            target = min(fo, leo)
            steps.append(TruncationStep(step.LACKS_EPOCH, le, target))
            epochs = [(e, o) for e, o in epochs if o < target]
            removed = (follower.log_end_offset or 0) - target
            leo = target
            if not epochs:
                return Truncation(f, l_, target, max(0, removed), steps)
            continue
        target = min(fo, lo, leo)
        return Truncation(f, l_, target, max(0, (follower.log_end_offset or 0) - target), steps)
    return Truncation(f, l_, None, 0, [*steps, TruncationStep(step.NO_ANSWER)])


def group_copies(paths: list[str], walk_errors: list[Problem] | None = None) -> list[tuple[str, list[str]]]:
    """(name, directories) per partition: the paths themselves when each is a partition directory, else the
    partition directories below them matched by name.  Directories the walk cannot read go to
    ``walk_errors`` (path, reason)."""

    def unreadable(path: str, error: OSError) -> None:
        if walk_errors is not None:
            walk_errors.append(problem(pk.UNREADABLE_DIRECTORY, path, reason=walk_error(error)))

    dirs = [list(find_partition_dirs([p], on_error=unreadable)) for p in paths]
    for p, found in zip(paths, dirs, strict=True):
        if not found:
            raise ValueError(f"{p}: no partition directory in it or below it")
    if all(
        len(found) == 1 and locations.abspath(found[0]) == locations.abspath(p)
        for p, found in zip(paths, dirs, strict=True)
    ):
        # named as the partition: a replica a broker renamed <topic>-<partition>.<id>-delete (a reassignment, a
        # deleted topic) is a copy of <topic>-<partition> (UnifiedLog.parseTopicPartitionName)
        first = os.path.basename(os.path.normpath(paths[0]))
        parsed = naming.parse_partition_dir(first)
        name = f"{parsed.topic}-{parsed.partition}" if parsed else first
        return [(name, [found[0] for found in dirs])]
    by_name: dict[str, list[str]] = {}
    for found in dirs:
        for d in found:
            by_name.setdefault(os.path.basename(os.path.normpath(d)), []).append(d)
    return [(name, ds) for name, ds in sorted(by_name.items()) if len(ds) >= 2]


class DiffCommand:
    def __init__(self, paths: list[str]) -> None:
        if len(paths) < 2:
            raise ValueError("give at least two copies to compare")
        #: Directories the walk could not read, with the reason (reported, and status 1).
        self.walk_errors: list[Problem] = []
        self.groups = group_copies(paths, self.walk_errors)
        if not self.groups:
            raise ValueError("no partition is present in two of the given directories")
        for _, dirs in self.groups:
            names = {
                n
                for n in (naming.parse_partition_dir(os.path.basename(os.path.normpath(d))) for d in dirs)
                if n
            }
            if len({(n.topic, n.partition) for n in names}) > 1:
                raise ValueError(
                    "these are different partitions, not copies of one: "
                    + ", ".join(sorted({f"{n.topic}-{n.partition}" for n in names}))
                )

    def run(self, sink: ReportSink[PartitionDiff]) -> ExitStatus:
        """Each partition's comparison, then each directory the walk could not read, to ``sink``."""
        return self.status(hand_over(sink, self.facts(), self.walk_errors))

    def status(self, facts: list[PartitionDiff]) -> ExitStatus:
        """1 when copies differ, or something could not be read (a problem of a copy, a directory of the
        walk)."""
        problems = any(x.unreadable for p in facts for c in p.copies for x in c.problems)
        return (
            ExitStatus.PROBLEMS
            if problems or self.walk_errors or any(p.diverged for p in facts)
            else ExitStatus.OK
        )

    def facts(self) -> list[PartitionDiff]:
        result = []
        for name, dirs in self.groups:
            pairs = []
            if len(dirs) == 2:  # one walk of each copy gives both the copy and the comparison
                (a, log_a, start_a), (b, log_b, start_b) = _open_copy(dirs[0]), _open_copy(dirs[1])
                copies = [a, b]
                pairs.append(PairDiff(0, 1))
                compare_headers(_copy_headers(a, log_a, start_a), _copy_headers(b, log_b, start_b), pairs[0])
            else:
                copies = [read_copy(d) for d in dirs]
                for i in range(len(dirs)):
                    for j in range(i + 1, len(dirs)):
                        pair = PairDiff(i, j)
                        compare(dirs[i], dirs[j], pair)
                        pairs.append(pair)
            new_epoch = 1 + max((e for c in copies for e, _ in c.epochs), default=-1)
            truncations = [
                truncation(copies[f], copies[l_], f, l_, new_epoch)
                for f in range(len(copies))
                for l_ in range(len(copies))
                if f != l_
            ]
            result.append(PartitionDiff(name, copies, pairs, truncations))
        return result
