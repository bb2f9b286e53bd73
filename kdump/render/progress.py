"""The progress bar long commands show on standard error (only when asked to: on a terminal, for large work)."""

from __future__ import annotations

import sys
from typing import TextIO

from kdump.facts.progress import ProgressFactory


def progress_bars(*, enabled: bool) -> ProgressFactory | None:
    """The progress a command reports through: the bar on standard error when ``enabled`` and a person is
    watching it (a terminal), else None (no progress shown)."""
    return ProgressBar if enabled and sys.stderr.isatty() else None


class ProgressBar:
    """A transient rich progress bar counting bytes: ``update(done)`` or ``advance(n)``, then ``close()``."""

    def __init__(self, label: str, total: int) -> None:
        from rich.console import Console
        from rich.progress import BarColumn, DownloadColumn, Progress, TimeRemainingColumn

        from kdump.render import color

        self.done = 0
        self.progress = Progress(
            label,
            BarColumn(),
            DownloadColumn(),
            TimeRemainingColumn(),
            console=Console(stderr=True, no_color=not color.enabled(sys.stderr)),
            transient=True,
        )
        self.task = self.progress.add_task(label, total=total)
        self.progress.start()

    def update(self, done: int) -> None:
        self.done = done
        self.progress.update(self.task, completed=done)

    def advance(self, n: int) -> None:
        self.update(self.done + n)

    def close(self) -> None:
        self.progress.stop()


class SparkProgress:
    """What a Spark run is doing, on standard error (asked for on a terminal): "starting Spark" while the JVM
    starts (the ~20 s before anything else), then the running stage's tasks (one per partition of the data,
    or per segment for ``spark verify``) done of its total, the stages finished, and the rows read so far,
    from Spark's own ``StatusTracker`` and its status REST API polled on a thread.  Transient: erased when the
    run ends.

    The rows are the stages' ``inputRecords`` (``/api/v1/applications/<id>/stages`` of the driver's UI, the
    numbers of Spark's own UI): ``DataSourceRDD`` counts every row the ``kafka-log`` source hands Spark in the
    task's input metrics, which reach the driver when a task ends and with each executor heartbeat (the jobs
    set ``spark.executor.heartbeatInterval`` to 1 s when this display is shown).  With the UI off
    (``spark.ui.enabled=false``) there is no row count, only stages and partitions."""

    def __init__(self, label: str, stream: TextIO) -> None:
        from rich.console import Console
        from rich.progress import (
            BarColumn,
            MofNCompleteColumn,
            Progress,
            SpinnerColumn,
            TextColumn,
            TimeElapsedColumn,
        )
        from rich.table import Column

        from kdump.render import color

        self.label = label
        self.progress = Progress(
            SpinnerColumn(),
            # the description wraps (never "…") and the bar shrinks, so that no figure is cut at 80 columns
            TextColumn("{task.description}", table_column=Column(ratio=1, overflow="fold")),
            BarColumn(bar_width=20),
            MofNCompleteColumn(),
            TimeElapsedColumn(),
            console=Console(file=stream, no_color=not color.enabled(stream)),
            transient=True,
        )
        self.task = self.progress.add_task(f"{label}: starting Spark", total=None)
        self.progress.start()
        self.stages_done = 0
        #: Rows read so far (the stages' input records), None while unknown.
        self.rows_read: int | None = None
        self._stop = False
        self._thread: object = None

    def attach(self, spark_context: object) -> None:
        """Follow the jobs of ``spark_context`` until :meth:`close`."""
        import threading

        stages_url = _stages_url(spark_context)

        def poll() -> None:
            tracker = spark_context.statusTracker()  # type: ignore[attr-defined]
            seen: set[int] = set()
            while not self._stop:
                try:
                    active = tracker.getActiveStageIds()
                    infos = [i for i in (tracker.getStageInfo(s) for s in active) if i is not None]
                except Exception:  # noqa: BLE001 - the context stopped under us: the run is ending
                    return
                if stages_url is not None:
                    rows = input_records(stages_url)
                    if rows is not None and (self.rows_read is None or rows >= self.rows_read):
                        self.rows_read = rows  # never backwards: a stage retried counts its rows again
                finished = seen - set(active)
                self.stages_done += len(finished)
                seen = set(active) | (seen - finished)
                rows_text = f", {self.rows_read:,} rows read" if self.rows_read else ""
                if infos:
                    total = sum(i.numTasks for i in infos)
                    done = sum(i.numCompletedTasks for i in infos)
                    running = sum(i.numActiveTasks for i in infos)
                    self.progress.update(
                        self.task,
                        description=f"{self.label}: stage {', '.join(str(i.stageId) for i in infos)} "
                        f"({self.stages_done} done), partitions ({running} running){rows_text}",
                        total=total,
                        completed=done,
                    )
                elif self.stages_done:  # between stages; before the first one, still "planning"
                    total = self.progress.tasks[0].total
                    self.progress.update(
                        self.task,
                        description=f"{self.label}: {self.stages_done} stages done{rows_text}",
                        completed=total or 0,  # the stage ended: all its partitions are done
                    )
                threading.Event().wait(0.25)

        self.progress.update(self.task, description=f"{self.label}: planning (listing the segments)")
        thread = threading.Thread(target=poll, name="kdump-spark-progress", daemon=True)
        thread.start()
        self._thread = thread

    def close(self) -> None:
        self._stop = True
        thread = self._thread
        if thread is not None:
            thread.join(timeout=2)  # type: ignore[attr-defined]
        self.progress.stop()


def _stages_url(spark_context: object) -> str | None:
    """The driver's status REST API listing this application's stages, None without a UI."""
    try:
        ui = getattr(spark_context, "uiWebUrl", None)
        app = getattr(spark_context, "applicationId", None)
    except Exception:  # noqa: BLE001 - a context without a JVM side (a stand-in)
        return None
    if not ui or not app:
        return None
    return f"{ui.rstrip('/')}/api/v1/applications/{app}/stages"


def input_records(stages_url: str) -> int | None:
    """The rows read by every stage of the application so far (the sum of the stages' ``inputRecords`` in
    Spark's status REST API, ``StageData``), None when the API does not answer."""
    import json
    import urllib.request

    try:
        with urllib.request.urlopen(stages_url, timeout=2) as response:  # noqa: S310 - the driver's own UI
            stages = json.load(response)
    except (OSError, ValueError):
        return None
    if not isinstance(stages, list):
        return None
    return sum(s.get("inputRecords", 0) for s in stages if isinstance(s, dict))
