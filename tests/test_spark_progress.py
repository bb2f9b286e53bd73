"""``kdump spark``'s progress display (issue 31): over a stand-in for Spark's ``StatusTracker`` (the oracle is the
stages and tasks the stand-in reports, in the order Spark reports them: ``getActiveStageIds``, then
``getStageInfo``'s ``numTasks``/``numActiveTasks``/``numCompletedTasks``), and a real ``kdump spark export`` on a
local Spark in a pseudo-terminal, whose rows figure (the stages' input records from Spark's status REST API)
must move up to at most the rows Spark wrote (the Parquet files' row count, read back with pyarrow)."""

from __future__ import annotations

import io
import os
import re
import shutil
import time
from pathlib import Path
from types import SimpleNamespace

import pytest

from kdump.render.progress import SparkProgress
from tests.corpus import FIXTURE_CORPUS
from tests.pty_run import run_in_pty


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
    # the description may wrap at the stand-in terminal's width: words compared, colour sequences off
    text = " ".join(re.sub(r"\x1b\[[0-9;?]*[A-Za-z]", "", terminal.getvalue()).split())
    assert "export: starting Spark" in text and "planning" in text
    assert "stage 0 (0 done), partitions (2" in text and "running)" in text and "3/12" in text
    assert "12/12" in text and "1 stages done" in text


@pytest.mark.spark
@pytest.mark.skipif(
    not os.environ.get("KDUMP_SPARK_PTY"),
    reason="a second Spark start in a pseudo-terminal (~40 s, minutes on a loaded machine): KDUMP_SPARK_PTY=1 "
    "runs it; test_stages_and_partitions_are_followed checks the display in the default suite",
)
def test_a_real_export_shows_rows_read(tmp_path: Path) -> None:
    pytest.importorskip("pyspark")
    parquet = pytest.importorskip("pyarrow.parquet")
    if shutil.which("java") is None:
        pytest.skip("Java is not installed (Spark needs Java 17+)")
    out = tmp_path / "out"
    source = FIXTURE_CORPUS / "data"
    r = run_in_pty(["spark", "export", str(source), "-o", str(out), "--master", "local[2]"], 120, timeout=900)
    assert r.status == 0, r.text[-2000:]
    written = sum(parquet.read_metadata(f).num_rows for f in out.glob("part-*.parquet"))
    shown = [int(n.replace(",", "")) for n in re.findall(r"([\d,]+) rows read", r.text)]
    assert written > 0 and shown, r.text[-3000:]
    assert shown == sorted(shown) and 0 < shown[-1] <= written, (shown[-5:], written)
    assert "partitions (" in r.text and "export: starting Spark" in r.text
    assert r.text.rstrip().endswith(f"Wrote {out} (parquet).")


@pytest.mark.parametrize("columns", [80, 120])
def test_no_figure_is_cut(columns: int) -> None:
    """The display at 80 and 120 columns: the description wraps, the bar is 20 columns; every figure (the
    rows, the partitions done of their total, the time) whole and no line wider than the terminal."""
    terminal = FakeTerminal()
    bar = SparkProgress("export", terminal)
    bar.progress.console.width = columns
    bar.progress.update(
        bar.task,
        description="export: stage 12 (3 done), partitions (16 running), 123,456,789 rows read",
        total=4096,
        completed=1234,
    )
    bar.progress.refresh()
    bar.close()
    frames = re.sub(r"\x1b\[[0-9;?]*[A-Za-z]", "", terminal.getvalue()).split("\r")
    last = next(f for f in reversed(frames) if "rows read" in f)
    assert "…" not in last and "123,456,789 rows read" in " ".join(last.split())
    assert "1234/4096" in last and all(len(line) <= columns for line in last.splitlines())
