"""``kdump ls``: find the partition directories and summarise each (:mod:`kdump.analysis.log_summary`).

The facts: the log directories the partitions are in (:class:`LogDir`, with their broker ids), one
:class:`~kdump.analysis.log_summary.PartitionSummary` per partition, and the directories the walk could not
read, handed to a :class:`LsSink` (:mod:`kdump.render.ls_report`: the terminal table, aligned plain text or JSON
lines).
"""

from __future__ import annotations

import os
from collections.abc import Collection
from typing import TYPE_CHECKING

from kdump.analysis.log_summary import PartitionSummary, read_log_dir_checkpoints, summarize_partition
from kdump.errors import KdumpError
from kdump.exit_status import ExitStatus
from kdump.facts.ls import LogDir, LsSink
from kdump.facts.progress import ProgressFactory
from kdump.problem import UNREADABLE_DIRECTORY, Problem, problem
from kdump.storage import locations
from kdump.storage.checkpoint import META_PROPERTIES_FILE
from kdump.storage.local_log import LocalLog, find_partition_dirs, no_kafka_data
from kdump.storage.meta_properties import read_meta_properties
from kdump.storage.naming import parse_partition_dir
from kdump.storage.regular_file import walk_error

if TYPE_CHECKING:
    from kdump.commands.remote_tier import RemoteChecks

#: Above this much log to read, a progress bar is shown (when asked for: on a terminal only).
PROGRESS_THRESHOLD = 256 << 20


def is_internal(topic: str | None) -> bool:
    """Kafka's internal topics (``__consumer_offsets``, ``__transaction_state``, ``__cluster_metadata``,
    ``__share_group_state``, ...): ``Topic.isInternal`` names two, and every topic Kafka creates for itself
    starts with ``__``."""
    return topic is not None and topic.startswith("__")


def partition_order(directory: str) -> tuple[str, int, str]:
    """Topic, then partition number as a number (``orders-2`` before ``orders-10``); a directory without a
    topic-partition name by its name."""
    name = parse_partition_dir(os.path.basename(os.path.normpath(directory)))
    if name is None:
        return (os.path.basename(os.path.normpath(directory)), -1, directory)
    return (name.topic, name.partition, directory)


def numbered(directory: str) -> tuple[str, str, int, str]:
    """The order of the partition directories a command reports one by one (``txn``, ``retention``): by log
    directory, then topic, then partition number as a number."""
    return (os.path.dirname(os.path.normpath(directory)), *partition_order(directory))


class ListPartitions:
    def __init__(
        self,
        paths: list[str],
        *,
        topics: Collection[str] | None = None,
        exclude_internal: bool = False,
        remote: RemoteChecks | None = None,
    ) -> None:
        """``topics``: only these topics; ``exclude_internal``: leave out Kafka's internal topics; ``remote``:
        tiered partitions are read as one log, their remote segments first (``--remote-root``)."""
        self.remote = remote
        self.directories: list[str] = []
        #: Directories the walk could not read (permissions, or deleted meanwhile), with the reason.
        self.walk_errors: list[Problem] = []
        for path in paths:
            found = list(find_partition_dirs([path], on_error=self._walk_error))
            if not found:
                raise ValueError(no_kafka_data(path))
            self.directories.extend(_named(d) for d in found)
        self.log_dirs = [_log_dir(p) for p in dict.fromkeys(_parent(d) for d in self.directories)]
        dir_order = {d.path: n for n, d in enumerate(self.log_dirs)}
        if topics is not None or exclude_internal:
            here = sorted({t for t, p, _ in map(partition_order, self.directories) if p >= 0})
            kept = []
            for d in self.directories:
                topic = partition_order(d)[0] if partition_order(d)[1] >= 0 else None
                if topics is not None and topic not in topics:
                    continue
                if exclude_internal and is_internal(topic):
                    continue
                kept.append(d)
            if topics is not None and not kept:
                raise ValueError(
                    f"no partition of {', '.join(sorted(topics))} below the paths; the topics here: "
                    + (", ".join(here) or "none")
                )
            self.directories = kept
        self.directories.sort(key=lambda d: (*partition_order(d)[:2], dir_order[_parent(d)]))

    def _walk_error(self, path: str, error: OSError) -> None:
        self.walk_errors.append(problem(UNREADABLE_DIRECTORY, path, reason=walk_error(error)))

    def summaries(self, progress: ProgressFactory | None = None) -> list[PartitionSummary]:
        checkpoints: dict[str, dict] = {}
        anomalies: dict[str, list[Problem]] = {}
        total = 0
        for d in self.directories:
            try:
                names = locations.listdir(d)
            except OSError:
                continue  # said in its row
            for name in names:
                if name.endswith(".log"):
                    try:
                        total += locations.getsize(os.path.join(d, name))
                    except OSError:
                        pass
        bar = progress("scanning", total) if progress is not None and total >= PROGRESS_THRESHOLD else None
        result = []
        try:
            for d in self.directories:
                parent = os.path.dirname(locations.abspath(d))
                if parent not in checkpoints:
                    anomalies[parent] = []
                    checkpoints[parent] = read_log_dir_checkpoints(parent, anomalies[parent])
                log, remote_segments = self._one_log(d)
                summary = summarize_partition(
                    d, checkpoints=checkpoints[parent], progress=None if bar is None else bar.advance, log=log
                )
                if remote_segments is not None and log is not None:
                    summary.remote_segments = remote_segments
                    summary.remote_bytes = sum(s.log_size for s in log.log_segments[:remote_segments])
                summary.anomalies[:0] = anomalies[parent]
                result.append(summary)
        finally:
            if bar is not None:
                bar.close()
        return result

    def _one_log(self, directory: str) -> tuple[LocalLog | None, int | None]:
        """A tiered partition's one log and its number of remote segments; (None, None) for the others."""
        if self.remote is None:
            return None, None
        try:
            log = LocalLog.scan(directory)
        except OSError:
            return None, None  # said in its row
        one = self.remote.one_log(log)
        return (None, None) if one is None else one

    def run(self, sink: LsSink, *, progress: ProgressFactory | None = None) -> ExitStatus:
        summaries = self.summaries(progress)
        sink.log_dirs(self.log_dirs)
        for summary in summaries:
            sink.partition(summary)
        for walk_error_ in self.walk_errors:
            sink.unreadable(walk_error_)
        sink.end()
        # the one rule for what cannot be read: named (an anomaly, an unreadable line), and status 1
        unreadable = self.walk_errors or any(
            s.unreadable or any(a.unreadable for a in s.anomalies) for s in summaries
        )
        return ExitStatus.PROBLEMS if unreadable else ExitStatus.OK


def _named(directory: str) -> str:
    """``.`` or ``..`` (or a path ending in them) as its absolute path, so the partition has its name."""
    if os.path.basename(os.path.normpath(directory)) in (".", "..", ""):
        return locations.abspath(directory)
    return directory


def _parent(directory: str) -> str:
    return os.path.dirname(locations.abspath(directory))


def _log_dir(path: str) -> LogDir:
    """The log directory with the node id of its ``meta.properties`` (none when absent or unreadable)."""
    try:
        meta = read_meta_properties(os.path.join(path, META_PROPERTIES_FILE))
    except (OSError, ValueError, KdumpError):
        return LogDir(path)
    return LogDir(path, meta.node_id)
