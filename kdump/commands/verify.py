"""``kdump verify``: every check of every partition found below the given paths, as typed facts.

A run resolves its arguments to partitions (:func:`kdump.storage.local_log.find_partition_dirs`; a segment file
stands for its segment alone), checks every segment (:func:`kdump.analysis.log_verification.verify_log_segment`:
indexes and log in one pass) -- over a pool of processes when there is enough to do and more than one core --
then each partition as a whole (:func:`kdump.analysis.log_verification.check_partition`), and hands the facts to
a sink (:mod:`kdump.render.verify_report`) partition by partition, in argument and name order.

The facts: :class:`~kdump.problem.Problem` (one per problem),
:class:`~kdump.analysis.log_verification.Unchecked` (what could not be checked, and why), :class:`RuleNote` (a
time index written by the pre-3.8 rule) and one :class:`Summary`.  ``--indexes-only`` is ``kdump verify-index``
(:mod:`kdump.verify`), unchanged.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass
from typing import TYPE_CHECKING

from kdump.analysis.index_verification import verify_segment
from kdump.analysis.log_verification import (
    LogDirCheckpoints,
    SegmentFacts,
    check_log,
    check_log_dir,
    check_partition,
    cleanup_policy,
    snapshot_wanted_offsets,
    verify_log_segment,
    with_index_checks,
)
from kdump.errors import KdumpError
from kdump.exit_status import ExitStatus
from kdump.facts.progress import ProgressFactory
from kdump.facts.verify import Summary, VerifySink
from kdump.facts.verify_index import RuleNote
from kdump.problem import UNREADABLE, Problem, problem
from kdump.storage import locations, naming
from kdump.storage.local_log import (
    LOG_DIR_FILES,
    LocalLog,
    find_partition_dirs,
    holds_log_dir_files,
    no_kafka_data,
)
from kdump.storage.log_segment import LogSegment
from kdump.storage.regular_file import walk_error

#: Below this much log in all, segments are checked in this process (a pool costs more than it saves).
MIN_PARALLEL_BYTES = 64 << 20

if TYPE_CHECKING:  # loaded only when a log directory has the cluster metadata
    from kdump.analysis.topic_config import ClusterConfig
    from kdump.commands.remote_tier import RemoteChecks


@dataclass
class PartitionTarget:
    """A partition to check: its directory listing, and the segments asked for (None: all of them)."""

    log: LocalLog
    base_offsets: set[int] | None = None

    @property
    def segments(self) -> list[LogSegment]:
        if self.base_offsets is None:
            return self.log.segments
        return [s for s in self.log.segments if s.base_offset in self.base_offsets]


def select_partitions(paths: Iterable[str], problems: list[Problem] | None = None) -> list[PartitionTarget]:
    """The partitions named by ``paths`` (a directory: every partition directory at or below it; a segment
    file: that segment of its partition), each once, in argument order.  ValueError when a path holds no Kafka
    data or names no segment."""
    return select(paths)[0]


def select(
    paths: Iterable[str], unreadable: list[Problem] | None = None
) -> tuple[list[PartitionTarget], list[str]]:
    """:func:`select_partitions`' partitions, and the log directories given whole (a path at or above them):
    their own files are checked too (:func:`kdump.analysis.log_verification.check_log_dir`).  A log directory
    with no partition (only ``bootstrap.checkpoint`` and checkpoints) is Kafka data.  Directories the walk
    cannot read go to ``unreadable`` when given (as ``verify-index`` reports them: problems, never a clean
    bill)."""
    targets: dict[str, PartitionTarget] = {}
    log_dirs: dict[str, str] = {}
    #: The parents of partition directories already looked at for a log directory's files.
    listed: set[str] = set()

    def on_error(path: str, error: OSError) -> None:
        if unreadable is not None:
            unreadable.append(problem(UNREADABLE, path, case="directory", reason=walk_error(error)))

    for path in paths:
        if locations.isdir(path):
            if os.path.basename(os.path.normpath(path)) in (".", "..", ""):
                path = locations.abspath(path)  # `.` in a partition directory: the partition has its name
            found = False
            root = locations.realpath(path)
            try:
                if holds_log_dir_files(locations.listdir(path)):
                    found = True
                    log_dirs.setdefault(root, path)
            except OSError:
                pass
            for directory in find_partition_dirs([path], on_error=on_error):
                found = True
                key = locations.realpath(directory)
                if key != root:
                    parent = os.path.dirname(directory)
                    if parent not in listed:  # once per log directory, not once per partition in it
                        listed.add(parent)
                        try:
                            if holds_log_dir_files(locations.listdir(parent)):
                                log_dirs.setdefault(locations.realpath(parent), parent)
                        except OSError:
                            pass
                if key not in targets:
                    try:
                        targets[key] = PartitionTarget(LocalLog.scan(directory))
                    except OSError as e:
                        on_error(directory, e)
                else:
                    targets[key].base_offsets = None
            if not found and not (unreadable and locations.realpath(path) == root):
                raise ValueError(no_kafka_data(path))
        else:
            try:
                segment = LogSegment.of_file(path)
            except naming.NumberFormatError as e:
                raise ValueError(e.describe()) from None
            key = locations.realpath(segment.directory)
            target = targets.get(key)
            if target is None:
                target = targets[key] = PartitionTarget(LocalLog.scan(segment.directory), set())
            if target.base_offsets is not None:
                target.base_offsets.add(segment.base_offset)
    return list(targets.values()), list(log_dirs.values())


#: One segment to check: the segment, ``deep``, the last offsets producer snapshots name, and whether it is the
#: partition's active segment.
SegmentTask = tuple[LogSegment, bool, frozenset[int], bool]
#: Runs :func:`segment_task` over a list of tasks, returning the facts in the same order (a process pool,
#: Spark, or the builtin ``map``).
SegmentMapper = Callable[[list[SegmentTask]], Iterable[SegmentFacts]]


def segment_task(task: SegmentTask) -> SegmentFacts:
    """Check one segment (what a pool worker or a Spark task runs)."""
    segment, deep, wanted, active = task
    return verify_log_segment(segment, deep=deep, wanted=wanted, active=active)


#: A segment at least this large, checked alone with more than one core and ``--deep``, is checked by two processes.
MIN_SPLIT_BYTES = 32 << 20


def split_segment_task(task: SegmentTask) -> SegmentFacts:
    """:func:`segment_task` on two cores: a forked child runs the log checks (CRCs, offsets, records with
    ``--deep``) while this process checks the indexes against the log; the facts are the same.  Falls back to
    one process when the child fails."""
    import pickle

    segment, deep, wanted, active = task
    read_end, write_end = os.pipe()
    pid = os.fork()
    if pid == 0:  # the child: log checks, facts pickled back
        status = 1
        try:
            os.close(read_end)
            data = pickle.dumps(check_log(segment, deep=deep, wanted=wanted))
            with os.fdopen(write_end, "wb") as out:
                out.write(data)
            status = 0
        finally:
            os._exit(status)
    os.close(write_end)
    try:
        result = verify_segment(segment, active=active)
    finally:
        with os.fdopen(read_end, "rb") as pipe:
            data = pipe.read()
        _, status = os.waitpid(pid, 0)
    facts = pickle.loads(data) if status == 0 and data else check_log(segment, deep=deep, wanted=wanted)
    return with_index_checks(facts, result)


class Verify:
    """One ``kdump verify`` run; :meth:`run` writes the facts to ``sink`` and returns the exit status."""

    def __init__(
        self,
        targets: list[PartitionTarget],
        sink: VerifySink,
        *,
        deep: bool = False,
        gaps: bool = False,
        workers: int | None = None,
        mapper: SegmentMapper | None = None,
        log_dirs: Iterable[str] = (),
        unreadable: Iterable[Problem] = (),
        progress: ProgressFactory | None = None,
        remote: RemoteChecks | None = None,
        log_dir_states: dict[str, tuple[LogDirCheckpoints | None, ClusterConfig | None]] | None = None,
    ) -> None:
        self.targets = targets
        #: The remote checks of tiered partitions (``--remote-root``; :mod:`kdump.commands.remote_tier`); a
        #: tiered partition's segments are then its one log's, remote ones first: every check of a local
        #: segment (CRCs, offsets, indexes) is made on the remote ones too, and the partition's across them.
        self.remote = remote
        if remote is not None:
            twice = 0
            for target in targets:
                if target.base_offsets is None:
                    one = remote.one_log(target.log)
                    if one is not None:
                        target.log = one[0]
                        remote_bytes = sum(
                            s.log_size for s in one[0].log_segments[: one[1]] if locations.is_url(s.log_path)
                        )
                        twice = max(twice, remote_bytes)
            if twice:
                from kdump.storage import object_store

                # the remote checks (RemoteChecks.check, after the partition's segments are checked here) read
                # each remote segment again: what this process fetched of one partition is kept for them
                # (the objects' sizes, with room for chunks' framing and the indexes read twice too)
                object_store.keep_fetched(twice + twice // 16 + (1 << 20))
        #: Where the run reports its progress (the CLI passes the terminal's bar when a person watches).
        self.progress = progress
        #: What the selection could not read (:func:`select`): reported as problems.
        self.unreadable = list(unreadable)
        #: Log directories given whole, whose own files are checked (:func:`select`).
        self.log_dirs = list(log_dirs)
        self.sink = sink
        self.deep = deep
        self.gaps = gaps
        self.workers = workers if workers is not None else default_workers()
        #: Where the segments are checked: given (``kdump spark verify`` passes Spark's), else here or over a
        #: process pool.
        self.mapper = mapper
        #: Each log directory's checkpoints and cluster config, read once (given: shared by several runs, as
        #: ``kdump report`` makes one run per partition).
        self.log_dir_states = {} if log_dir_states is None else log_dir_states

    def run(self) -> ExitStatus:
        summary = Summary(deep=self.deep, remote=self.remote is not None)
        files: set[str | None] = set()
        log_dirs = self.log_dir_states
        for target, facts in self._checked_segments():
            log = target.log
            parent = os.path.dirname(locations.abspath(log.directory))
            if parent not in log_dirs:
                log_dirs[parent] = _log_dir_state(parent)
            checkpoints, config = log_dirs[parent]
            partition = check_partition(
                log,
                facts,
                log_dir_checkpoints=checkpoints,
                log_dir=parent if checkpoints is not None else None,
                policy=cleanup_policy(log, config),
                gaps=self.gaps,
                whole=target.base_offsets is None,
            )
            summary.partitions += 1
            for s in facts:
                summary.segments += 1
                summary.batches += s.batches
                summary.records += s.records
                summary.log_bytes += s.log_bytes
                summary.index_files += s.index_files
                summary.index_entries += s.index_entries
                for p in s.problems:
                    if p.kind == "missing-index" and s.directory != log.directory:
                        continue  # a remote segment's: remote-missing-object names the object
                    self._problem(p, summary, files)
                summary.newer_records += s.newer_records
                for n in s.notes:
                    if n.kind == "active-segment":
                        summary.active_segment_notes += 1
                    self.sink.note(n)
                if s.time_index_rule == "pre-3.8":
                    summary.pre_38_time_indexes += 1
                    self.sink.note(
                        RuleNote(
                            os.path.join(
                                s.directory,
                                naming.offset_to_filename(s.base_offset, naming.TIME_INDEX_FILE_SUFFIX),
                            ),
                            "pre-3.8",
                        )
                    )
            for p in partition.problems:
                self._problem(p, summary, files)
            if self.remote is not None and target.base_offsets is None:
                remote = self.remote.check(log)
                if remote is not None:
                    summary.tiered_partitions += 1
                    summary.remote_segments += remote.segments
                    for p in remote.problems:
                        self._problem(p, summary, files)
            for u in partition.unchecked:
                summary.unchecked += 1
                self.sink.unchecked(u)
            summary.producer_snapshots += partition.producer_snapshots
            summary.txn_index_entries += partition.txn_index_entries
            summary.checkpoint_values += partition.checkpoint_values
            summary.leader_epochs += partition.leader_epochs
            summary.kraft_snapshots += partition.kraft_snapshots
        for p in self.unreadable:
            self._problem(p, summary, files)
        for log_dir in self.log_dirs:
            key = os.path.dirname(os.path.join(locations.abspath(log_dir), ""))
            if key not in log_dirs:
                log_dirs[key] = _log_dir_state(key)
            own = check_log_dir(log_dir, log_dirs[key][0])
            summary.kraft_snapshots += own.bootstrap_checkpoints  # the same format, counted with them
            for p in own.problems:
                self._problem(p, summary, files)
            for u in own.unchecked:
                summary.unchecked += 1
                self.sink.unchecked(u)
        summary.files_with_problems = len(files)
        self.sink.summary(summary)
        return ExitStatus.PROBLEMS if summary.problems else ExitStatus.OK

    def _problem(self, p: Problem, summary: Summary, files: set[str | None]) -> None:
        summary.problems += 1
        summary.kinds[p.kind] = summary.kinds.get(p.kind, 0) + 1
        files.add(p.file)
        self.sink.problem(p)

    def _checked_segments(self) -> Iterator[tuple[PartitionTarget, list[SegmentFacts]]]:
        """Each target with its segments' facts, in order; segments are checked ahead over a process pool
        when that pays."""
        tasks: list[SegmentTask] = []
        owners: list[int] = []
        for i, target in enumerate(self.targets):
            wanted = snapshot_wanted_offsets(target.log) if target.base_offsets is None else frozenset()
            active = target.log.active_base_offset
            for segment in target.segments:
                tasks.append((segment, self.deep, wanted, segment.base_offset == active))
                owners.append(i)
        if self.mapper is not None:
            yield from self._grouped(owners, iter(self.mapper(tasks)))
            return
        total = sum(t[0].log_size for t in tasks)
        if self.workers > 1 and len(tasks) > 1 and total >= MIN_PARALLEL_BYTES:
            import multiprocessing

            context = multiprocessing.get_context("fork")
            with context.Pool(self.workers) as pool:
                yield from self._grouped(owners, pool.imap(segment_task, tasks))
        else:
            # Two processes pay only with --deep (records decoded in the child while the indexes are checked
            # here); without it the one pass, CRCs and index checks over runs of headers in C, is quicker than
            # either half alone (bench segment in process: 0.074 s, split 0.165 s).
            split = self.workers > 1 and self.deep
            yield from self._grouped(
                owners,
                (
                    split_segment_task(t) if split and t[0].log_size >= MIN_SPLIT_BYTES else segment_task(t)
                    for t in tasks
                ),
            )

    def _grouped(
        self, owners: list[int], results: Iterator[SegmentFacts]
    ) -> Iterator[tuple[PartitionTarget, list[SegmentFacts]]]:
        by_target: list[list[SegmentFacts]] = [[] for _ in self.targets]
        done = 0
        sizes = [s.log_size for t in self.targets for s in t.segments]
        bar = None
        if self.progress is not None and (
            sum(sizes) >= PROGRESS_THRESHOLD or len(sizes) >= PROGRESS_SEGMENTS
        ):
            bar = self.progress(f"verifying {len(self.targets)} partitions", sum(sizes))
        try:
            for n, (owner, facts) in enumerate(zip(owners, results, strict=True)):
                if bar is not None:
                    bar.advance(sizes[n])
                while done < owner:
                    yield self.targets[done], by_target[done]
                    by_target[done] = []
                    done += 1
                by_target[owner].append(facts.settled())
        finally:
            if bar is not None:
                bar.close()
        while done < len(self.targets):
            yield self.targets[done], by_target[done]
            by_target[done] = []
            done += 1


#: A progress bar (when asked for: standard error is a terminal) above this much log or this many segments.
PROGRESS_THRESHOLD = 256 << 20
PROGRESS_SEGMENTS = 100


def default_workers() -> int:
    env = os.environ.get("KDUMP_WORKERS")
    if env is not None and env.isdigit():
        return max(1, int(env))
    try:
        return len(os.sched_getaffinity(0))
    except AttributeError:  # pragma: no cover - not Linux
        return os.cpu_count() or 1


def _log_dir_state(log_dir: str) -> tuple[LogDirCheckpoints | None, ClusterConfig | None]:
    """The log directory's offset checkpoints (None when ``log_dir`` is not a log directory) and its cluster
    metadata's topic configs (None when it has none or they cannot be read)."""
    from kdump.analysis.log_summary import read_log_dir_checkpoints

    try:
        names = set(locations.listdir(log_dir))
    except OSError:
        return None, None
    if not names.intersection(LOG_DIR_FILES):
        return None, None
    checkpoints = read_log_dir_checkpoints(log_dir)
    config: ClusterConfig | None = None
    try:
        from kdump.analysis.topic_config import read_cluster_config

        config = read_cluster_config(log_dir)
    except (KdumpError, OSError):  # the metadata is optional here: without it gaps are not judged
        config = None
    return checkpoints, config


__all__ = [
    "PartitionTarget",
    "RuleNote",
    "SegmentMapper",
    "SegmentTask",
    "VerifySink",
    "Summary",
    "Verify",
    "default_workers",
    "segment_task",
    "select",
    "select_partitions",
]
