"""The progress bar long commands show on standard error (only when asked to: on a terminal, for large work)."""

from __future__ import annotations

import sys

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
