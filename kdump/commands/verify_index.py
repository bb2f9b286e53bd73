"""``kdump verify-index``: which segments to check, checking them, and the facts found.

The checks themselves are :func:`kdump.analysis.index_verification.verify_segment`.  The facts: one
:class:`~kdump.problem.Problem` per problem (and per note on an active segment's
preallocated index files), a :class:`RuleNote` per time index written by the pre-3.8 rule and one
:class:`IndexSummary`, handed to a :class:`IndexSink` (:mod:`kdump.render.problems`: text lines or JSON lines).
"""

from __future__ import annotations

import os
from collections.abc import Iterable
from dataclasses import dataclass

from kdump.analysis.index_verification import verify_segment
from kdump.exit_status import ExitStatus
from kdump.facts.progress import ProgressFactory
from kdump.facts.verify_index import IndexSink, IndexSummary, RuleNote
from kdump.problem import UNREADABLE, Problem, problem
from kdump.storage import locations, naming
from kdump.storage.local_log import LocalLog, find_partition_dirs, no_kafka_data
from kdump.storage.log_segment import LogSegment
from kdump.storage.regular_file import walk_error

#: Above this much log to read, a progress bar is shown (when asked for: on a terminal only).
PROGRESS_THRESHOLD = 256 << 20


@dataclass(frozen=True)
class Target:
    """A segment to check and the partition directory it belongs to."""

    partition_dir: str
    segment: LogSegment
    #: The partition's active segment (its preallocated index files are noted, not reported).
    active: bool = False


def select_segments(paths: Iterable[str], problems: list[Problem] | None = None) -> tuple[list[Target], int]:
    """Resolve the command's arguments to segments, in argument order (directories: partitions in name order,
    segments by base offset), and count the partition directories involved.  A segment named twice is checked
    once.  ValueError when a directory argument holds no partition directory at all.  Directories the walk
    cannot read (permissions, or deleted by a running broker meanwhile) go to ``problems`` when given."""

    def unreadable(path: str, error: OSError) -> None:
        if problems is not None:
            problems.append(problem(UNREADABLE, path, case="directory", reason=walk_error(error)))

    targets: list[Target] = []
    partitions: set[str] = set()
    seen: set[tuple[str, int]] = set()

    def add(directory: str, segment: LogSegment, active: int | None) -> None:
        key = (os.path.realpath(directory), segment.base_offset)
        partitions.add(key[0])
        if key not in seen:
            seen.add(key)
            targets.append(Target(directory, segment, segment.base_offset == active))

    for path in paths:
        if locations.isdir(path):
            found = False
            for directory in find_partition_dirs([path], on_error=unreadable):
                found = True
                partitions.add(os.path.realpath(directory))
                try:
                    log = LocalLog.scan(directory)
                except OSError as e:
                    unreadable(directory, e)
                    continue
                for segment in log.segments:
                    add(directory, segment, log.active_base_offset)
            if not found:
                raise ValueError(no_kafka_data(path))
        else:
            try:
                segment = LogSegment.of_file(path)
            except naming.NumberFormatError as e:
                raise ValueError(e.describe()) from None
            try:
                active = LocalLog.scan(segment.directory).active_base_offset
            except OSError:
                active = None
            add(segment.directory, segment, active)
    return targets, len(partitions)


class VerifyIndex:
    """One ``kdump verify-index`` run over ``targets``; :meth:`run` returns the exit status."""

    def __init__(
        self,
        targets: list[Target],
        partitions: int,
        sink: IndexSink,
        progress: ProgressFactory | None = None,
        walk_problems: list[Problem] | None = None,
    ) -> None:
        #: What the walk that found ``targets`` could not read (reported first, counted as problems).
        self.walk_problems = walk_problems or []
        self.targets = targets
        self.partitions = partitions
        self.sink = sink
        self.progress = progress

    def run(self) -> ExitStatus:
        summary = IndexSummary(partitions=self.partitions, segments=len(self.targets))
        files_with_problems: set[str | None] = set()
        for p in self.walk_problems:
            summary.problems += 1
            files_with_problems.add(p.file)
            self.sink.problem(p)
        total = sum(t.segment.log_size for t in self.targets)
        bar = (
            self.progress("verifying", total)
            if self.progress is not None and total >= PROGRESS_THRESHOLD
            else None
        )
        done = 0
        try:
            for target in self.targets:
                advance = None
                if bar is not None:
                    base = done

                    def advance(n: int, base: int = base) -> None:
                        bar.update(base + n)

                result = verify_segment(target.segment, progress=advance, active=target.active)
                done += target.segment.log_size
                summary.index_files += result.index_files
                summary.entries += result.entries
                summary.log_bytes += result.log_bytes
                for p in result.problems:
                    summary.problems += 1
                    files_with_problems.add(p.file)
                    self.sink.problem(p)
                for active_note in result.notes:
                    summary.active_segment_notes += 1
                    self.sink.note(active_note)
                rule = result.time_index_rule
                if rule == "last-offset":
                    summary.last_offset_time_indexes += 1
                elif rule == "pre-3.8":
                    summary.pre_38_time_indexes += 1
                    self.sink.note(RuleNote(target.segment.time_index_path, rule))
        finally:
            if bar is not None:
                bar.close()
        summary.files_with_problems = len(files_with_problems)
        self.sink.summary(summary)
        return ExitStatus.PROBLEMS if summary.problems else ExitStatus.OK
