"""``kdump spark``'s progress display (issue 31) over a stand-in for Spark's ``StatusTracker``: the oracle is the
stages and tasks the stand-in reports, in the order Spark reports them (``getActiveStageIds``, then
``getStageInfo``'s ``numTasks``/``numActiveTasks``/``numCompletedTasks``).  A real run in a pseudo-terminal is in
the issue's note (Spark takes minutes to start on a shared machine)."""

from __future__ import annotations

import io
import time
from types import SimpleNamespace

from kdump.render.progress import SparkProgress


class Tracker:
    def __init__(self) -> None:
        self.steps = [
            [],  # planning
            [SimpleNamespace(stageId=0, numTasks=12, numActiveTasks=2, numCompletedTasks=3)],
            [SimpleNamespace(stageId=0, numTasks=12, numActiveTasks=0, numCompletedTasks=12)],
            [],  # the stage finished
        ]
        self.calls = 0

    def getActiveStageIds(self) -> list[int]:  # noqa: N802 - Spark's name
        step = self.steps[min(self.calls // 2, len(self.steps) - 1)]
        self.calls += 1
        self._infos = {i.stageId: i for i in step}
        return list(self._infos)

    def getStageInfo(self, stage: int) -> SimpleNamespace:  # noqa: N802
        return self._infos[stage]


class FakeTerminal(io.StringIO):
    def isatty(self) -> bool:
        return True


def test_stages_and_partitions_are_followed() -> None:
    terminal = FakeTerminal()
    bar = SparkProgress("export", terminal)
    tracker = Tracker()
    bar.attach(SimpleNamespace(statusTracker=lambda: tracker))
    time.sleep(2.5)
    bar.close()
    text = terminal.getvalue()
    assert "export: starting Spark" in text and "planning" in text
    assert "stage 0 (0 done), partitions (2 running)" in text and "3/12" in text
    assert "12/12" in text and "1 stages done" in text
