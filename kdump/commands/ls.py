"""``kdump ls``: find the partition directories, summarise each (:mod:`kdump.storage.log_summary`), print."""

from __future__ import annotations

import json
import os
from datetime import tzinfo

from kdump.errors import KdumpError
from kdump.exit_status import ExitStatus
from kdump.render import log_summary as render
from kdump.render import ls_table
from kdump.render.output import Output
from kdump.render.progress import ProgressBar
from kdump.storage.checkpoint import META_PROPERTIES_FILE
from kdump.storage.local_log import find_partition_dirs, no_kafka_data
from kdump.storage.log_summary import PartitionSummary, read_log_dir_checkpoints, summarize_partition
from kdump.storage.meta_properties import read_meta_properties
from kdump.storage.regular_file import walk_error

#: Above this much log to read, a progress bar is shown (when asked for: on a terminal only).
PROGRESS_THRESHOLD = 256 << 20


class ListPartitions:
    def __init__(self, paths: list[str]) -> None:
        self.directories: list[str] = []
        #: Directories the walk could not read (permissions, or deleted meanwhile), with the reason.
        self.walk_errors: list[tuple[str, str]] = []
        for path in paths:
            found = list(find_partition_dirs([path], on_error=self._walk_error))
            if not found:
                raise ValueError(no_kafka_data(path))
            self.directories.extend(_named(d) for d in found)
        self.log_dirs = [_log_dir(p) for p in dict.fromkeys(_parent(d) for d in self.directories)]

    def _walk_error(self, path: str, error: OSError) -> None:
        self.walk_errors.append((path, f"cannot read the directory: {walk_error(error)}"))

    def summaries(self, progress: bool = False) -> list[PartitionSummary]:
        checkpoints: dict[str, dict] = {}
        anomalies: dict[str, list[str]] = {}
        total = 0
        for d in self.directories:
            try:
                names = os.listdir(d)
            except OSError:
                continue  # said in its row
            for name in names:
                if name.endswith(".log"):
                    try:
                        total += os.path.getsize(os.path.join(d, name))
                    except OSError:
                        pass
        bar = ProgressBar("scanning", total) if progress and total >= PROGRESS_THRESHOLD else None
        result = []
        try:
            for d in self.directories:
                parent = os.path.dirname(os.path.abspath(d))
                if parent not in checkpoints:
                    anomalies[parent] = []
                    checkpoints[parent] = read_log_dir_checkpoints(parent, anomalies[parent])
                summary = summarize_partition(
                    d, checkpoints=checkpoints[parent], progress=None if bar is None else bar.advance
                )
                summary.anomalies[:0] = anomalies[parent]
                result.append(summary)
        finally:
            if bar is not None:
                bar.close()
        return result

    def run(
        self,
        out: Output,
        *,
        as_json: bool = False,
        terminal: bool = False,
        progress: bool = False,
        width: int = 80,
        wide: bool = False,
        columns: list[str] | None = None,
        human_time: bool = False,
        tz: tzinfo | None = None,
        use_color: bool = False,
    ) -> int:
        summaries = self.summaries(progress)
        brokers = {d.path: d.broker_id for d in self.log_dirs}
        if as_json:
            for s in summaries:
                log_dir = ls_table.log_dir_of(s)
                out.write(render.summary_json(s, log_dir=log_dir, broker_id=brokers.get(log_dir)))
        elif terminal:
            out.write(
                ls_table.terminal_text(
                    summaries, self.log_dirs, width, wide=wide, columns=columns, use_color=use_color, tz=tz
                )
            )
        else:
            out.write(
                render.plain_table(
                    summaries,
                    columns=columns,
                    log_dirs=self.log_dirs if len(self.log_dirs) > 1 else None,
                    human_time=human_time,
                    tz=tz,
                )
            )
        for path, message in self.walk_errors:
            if as_json:
                out.write(json.dumps({"type": "unreadable", "path": path, "message": message}) + "\n")
            else:
                out.write(f"{path}: {message}\n")
        return ExitStatus.OK


def _named(directory: str) -> str:
    """``.`` or ``..`` (or a path ending in them) as its absolute path, so the partition has its name."""
    if os.path.basename(os.path.normpath(directory)) in (".", "..", ""):
        return os.path.abspath(directory)
    return directory


def _parent(directory: str) -> str:
    return os.path.dirname(os.path.abspath(directory))


def _log_dir(path: str) -> ls_table.LogDir:
    """The log directory with the node id of its ``meta.properties`` (none when absent or unreadable)."""
    try:
        meta = read_meta_properties(os.path.join(path, META_PROPERTIES_FILE))
    except (OSError, ValueError, KdumpError):
        return ls_table.LogDir(path)
    return ls_table.LogDir(path, meta.node_id)
