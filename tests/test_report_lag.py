"""``kdump report``'s consumer lag against ``kafka-consumer-groups.sh --describe --all-groups`` of a live Kafka
4.0 broker whose groups really consumed (``tests/report_lag_oracle.py``: ``billing`` read part of three
partitions, ``audit`` all of them, then 40 more records arrived): the broker's data directory after a clean
shutdown and the tool's answer while it ran (``tests/fixtures/report_lag``).  For every group and partition the
tool lists with an offset, the report's committed offset, log end offset and lag are the tool's CURRENT-OFFSET,
LOG-END-OFFSET and LAG; the page draws them; and the partition the report draws first for lag is one that lags.
The ``broker``-marked test records the scenario again, live, and judges it the same way."""

from __future__ import annotations

import json
import os
import tarfile
from pathlib import Path

import pytest
from click.testing import CliRunner

from kdump.cli import cli

FIXTURES = Path(__file__).resolve().parent / "fixtures" / "report_lag"
NOW = "2026-12-01T00:00:00Z"


def describe_rows(text: str) -> dict[tuple[str, str, int], tuple[int, int, int]]:
    """(group, topic, partition) -> (CURRENT-OFFSET, LOG-END-OFFSET, LAG) of the tool's rows with an offset
    (a partition the group never committed shows ``-``: not a row here)."""
    rows = {}
    header: list[str] | None = None
    for line in text.splitlines():
        cells = line.split()
        if cells[:1] == ["GROUP"]:
            header = cells
            continue
        if header is None or len(cells) < 6 or not cells[2].isdigit():
            continue
        at = {name: cells[i] for i, name in enumerate(header) if i < len(cells)}
        if at["CURRENT-OFFSET"] == "-":
            continue
        rows[(at["GROUP"], at["TOPIC"], int(at["PARTITION"]))] = (
            int(at["CURRENT-OFFSET"]),
            int(at["LOG-END-OFFSET"]),
            int(at["LAG"]),
        )
    return rows


def report_rows(data: Path) -> tuple[dict[tuple[str, str, int], tuple[int, int, int]], list[dict]]:
    result = CliRunner().invoke(cli, ["report", "--json", "--now", NOW, str(data)])
    assert result.exit_code in (0, 1), result.output
    objects = [json.loads(line) for line in result.stdout.splitlines()]
    rows = {}
    for g in (o for o in objects if o["type"] == "reportGroups"):
        for group in g["groups"]:
            for x in group["offsets"]:
                rows[(group["group"], x["topic"], x["partition"])] = (
                    x["offset"],
                    x["logEndOffset"],
                    x["lag"],
                )
    return rows, objects


def judge(data: Path, describe: str, page: Path) -> None:
    tool = describe_rows(describe)
    assert {g for g, _, _ in tool} == {"billing", "audit"}
    assert any(lag for _, _, lag in tool.values()) and any(not lag for _, _, lag in tool.values())
    ours, _ = report_rows(data)
    assert ours == tool
    result = CliRunner().invoke(cli, ["report", "--now", NOW, "-o", str(page), str(data)])
    assert result.exit_code in (0, 1), result.output
    text = page.read_text(encoding="utf-8")
    for (group, topic, partition), (_, _, lag) in tool.items():
        assert f"group <code>{group}</code>" in text
        if lag:
            assert f"{topic}-{partition}: lag {lag:,}" in text
    lagging = {(t, p) for (_, t, p), (_, _, lag) in tool.items() if lag}
    first = text.index('<p class="why">drawn for:')
    assert "consumer lag" in text[first : text.index("</p>", first)]
    assert any(f">{t}-{p} <small>" in text for t, p in lagging)


@pytest.fixture(scope="module")
def data(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("report-lag")
    with tarfile.open(FIXTURES / "4.0.0-data.tar.xz") as tar:
        tar.extractall(root, filter="data")
    return root / "data"


def test_the_oracle_has_lag_and_none() -> None:
    rows = describe_rows((FIXTURES / "4.0.0-describe.txt").read_text())
    assert rows[("billing", "orders", 0)] == (150, 400, 250)
    assert rows[("billing", "orders", 1)] == (250, 290, 40)
    assert rows[("audit", "orders", 2)] == (100, 100, 0)
    assert ("billing", "orders", 3) not in rows  # never committed: the tool shows "-"


def test_report_lag_is_the_tools(data: Path, tmp_path: Path) -> None:
    judge(data, (FIXTURES / "4.0.0-describe.txt").read_text(), tmp_path / "report.html")


@pytest.mark.broker
@pytest.mark.skipif(
    os.environ.get("KDUMP_BROKER_ORACLE") != "1", reason="set KDUMP_BROKER_ORACLE=1 to start a broker"
)
def test_a_live_broker_agrees(tmp_path: Path) -> None:
    from tests.broker_oracle.cluster import unavailable_reason
    from tests.report_lag_oracle import record

    reason = unavailable_reason("4.0.0")
    if reason is not None:
        pytest.skip(reason)
    describe = record(tmp_path / "out")
    with tarfile.open(tmp_path / "out" / "4.0.0-data.tar.xz") as tar:
        tar.extractall(tmp_path, filter="data")
    judge(tmp_path / "data", describe, tmp_path / "report.html")
