"""``kdump ls``: find the partition directories, summarise each (:mod:`kdump.storage.log_summary`), print."""

from __future__ import annotations

import os

from kdump.exit_status import ExitStatus
from kdump.render import log_summary as render
from kdump.render.output import Output
from kdump.render.progress import ProgressBar
from kdump.storage.local_log import find_partition_dirs, no_kafka_data
from kdump.storage.log_summary import PartitionSummary, read_log_dir_checkpoints, summarize_partition

#: Above this much log to read, a progress bar is shown (when asked for: on a terminal only).
PROGRESS_THRESHOLD = 256 << 20


class ListPartitions:
    def __init__(self, paths: list[str]) -> None:
        self.directories: list[str] = []
        for path in paths:
            found = list(find_partition_dirs([path]))
            if not found:
                raise ValueError(no_kafka_data(path))
            self.directories.extend(found)

    def summaries(self, progress: bool = False) -> list[PartitionSummary]:
        checkpoints: dict[str, dict] = {}
        anomalies: dict[str, list[str]] = {}
        total = 0
        for d in self.directories:
            for name in os.listdir(d):
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
        self, out: Output, *, as_json: bool = False, rich_table: bool = False, progress: bool = False
    ) -> int:
        summaries = self.summaries(progress)
        if as_json:
            for s in summaries:
                out.write(render.summary_json(s))
        elif rich_table:
            out.flush()
            _print_rich(summaries)
        else:
            out.write(render.plain_table(summaries))
        return ExitStatus.OK


def _print_rich(summaries: list[PartitionSummary]) -> None:
    from rich.console import Console
    from rich.table import Table
    from rich.text import Text

    table = Table(box=None, header_style="bold")
    for column in render.COLUMNS:
        table.add_column(
            column,
            no_wrap=column not in ("CODECS",),
            justify="left" if column in ("TOPIC", "CODECS") else "right",
        )
    for s in summaries:
        cells = render.row(s, human=True)
        style = "red" if s.anomalies else None
        table.add_row(*cells, style=style)
    console = Console()
    console.print(table)
    for s in summaries:
        for a in s.anomalies:
            console.print(Text.assemble((s.directory, "red"), f": {a}"), highlight=False)
