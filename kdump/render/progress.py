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
    or per segment for ``spark verify``) done of its total, and the stages finished, from Spark's own
    ``StatusTracker`` polled on a thread.  Transient: erased when the run ends."""

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

        from kdump.render import color

        self.label = label
        self.progress = Progress(
            SpinnerColumn(),
            TextColumn("{task.description}"),
            BarColumn(),
            MofNCompleteColumn(),
            TimeElapsedColumn(),
            console=Console(file=stream, no_color=not color.enabled(stream)),
            transient=True,
        )
        self.task = self.progress.add_task(f"{label}: starting Spark", total=None)
        self.progress.start()
        self.stages_done = 0
        self._stop = False
        self._thread: object = None

    def attach(self, spark_context: object) -> None:
        """Follow the jobs of ``spark_context`` until :meth:`close`."""
        import threading

        def poll() -> None:
            tracker = spark_context.statusTracker()  # type: ignore[attr-defined]
            seen: set[int] = set()
            while not self._stop:
                try:
                    active = tracker.getActiveStageIds()
                    infos = [i for i in (tracker.getStageInfo(s) for s in active) if i is not None]
                except Exception:  # noqa: BLE001 - the context stopped under us: the run is ending
                    return
                finished = seen - set(active)
                self.stages_done += len(finished)
                seen = set(active) | (seen - finished)
                if infos:
                    total = sum(i.numTasks for i in infos)
                    done = sum(i.numCompletedTasks for i in infos)
                    running = sum(i.numActiveTasks for i in infos)
                    self.progress.update(
                        self.task,
                        description=f"{self.label}: stage {', '.join(str(i.stageId) for i in infos)} "
                        f"({self.stages_done} done), partitions ({running} running)",
                        total=total,
                        completed=done,
                    )
                elif self.stages_done:  # between stages; before the first one, still "planning"
                    self.progress.update(
                        self.task, description=f"{self.label}: {self.stages_done} stages done"
                    )
                threading.Event().wait(0.25)

        self.progress.update(self.task, description=f"{self.label}: planning (listing the segments)")
        thread = threading.Thread(target=poll, name="kdump-spark-progress", daemon=True)
        thread.start()
        self._thread = thread

    def rows(self, n: int) -> None:
        """The rows written, once known (the end of an export)."""
        self.progress.update(self.task, description=f"{self.label}: {n} rows written")

    def close(self) -> None:
        self._stop = True
        thread = self._thread
        if thread is not None:
            thread.join(timeout=2)  # type: ignore[attr-defined]
        self.progress.stop()
