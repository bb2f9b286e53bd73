"""``kdump find --group``'s LOG-END-OFFSET and LAG (issue 31) against ``kafka-consumer-groups.sh --describe`` on a
real Kafka 4.0 broker: the broker's data directory after a clean shutdown and the tool's answer while it ran,
recorded by ``python -m tests.group_lag_oracle`` (tests/fixtures/group_lag).  The lag is the tool's
(``ConsumerGroupCommand.getLag``: log end offset minus the committed offset) in the table on a terminal of 80 and
120 columns, in a pipe and in JSON; a committed partition that is not in the data directory has neither."""

from __future__ import annotations

import json
import shutil
import tarfile
from pathlib import Path

import pytest

from tests.pty_run import lines_past, run_in_pipe, run_in_pty

FIXTURES = Path(__file__).resolve().parent / "fixtures" / "group_lag"
GROUP = "lagging-group"


def _describe() -> dict[tuple[str, int], tuple[int, int, int]]:
    """(topic, partition) -> (CURRENT-OFFSET, LOG-END-OFFSET, LAG) of the real tool's answer."""
    rows = {}
    for line in (FIXTURES / "4.0.0-lag-describe.txt").read_text().splitlines():
        cells = line.split()
        if cells[:1] == [GROUP]:
            rows[(cells[1], int(cells[2]))] = (int(cells[3]), int(cells[4]), int(cells[5]))
    return rows


@pytest.fixture(scope="module")
def data(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("lag")
    with tarfile.open(FIXTURES / "4.0.0-lag.tar.xz") as tar:
        tar.extractall(root, filter="data")
    return root / "data"


def test_the_oracle_has_lag() -> None:
    rows = _describe()
    assert rows == {("lagging", 0): (120, 500, 380), ("lagging", 1): (300, 300, 0)}


def test_json_lag_is_the_tools(data: Path) -> None:
    r = run_in_pipe(["find", "--group", GROUP, "--json", str(data)])
    assert r.returncode == 0, r.stderr
    [obj] = [json.loads(line) for line in r.stdout.decode().splitlines()]
    found = {(o["topic"], o["partition"]): (o["offset"], o["logEndOffset"], o["lag"]) for o in obj["offsets"]}
    assert found == _describe()


def test_pipe_has_the_columns(data: Path) -> None:
    r = run_in_pipe(["find", "--group", GROUP, str(data)])
    lines = r.stdout.decode().splitlines()
    header = next(line for line in lines if line.startswith("TOPIC"))
    assert header.split()[:5] == ["TOPIC", "PARTITION", "OFFSET", "LOG-END-OFFSET", "LAG"]
    rows = {
        (c[0], int(c[1])): (int(c[2]), int(c[3]), int(c[4]))
        for c in map(str.split, lines[lines.index(header) + 1 :])
        if c[0] == "lagging"
    }
    assert rows == _describe()


@pytest.mark.parametrize("columns", [80, 120])
def test_terminal_table(data: Path, columns: int) -> None:
    r = run_in_pty(["find", "--group", GROUP, str(data)], columns)
    assert r.status == 0
    assert not lines_past(r.text, columns) and "…" not in r.text
    lines = r.text.splitlines()
    header = next(line for line in lines if line.startswith("TOPIC")).split()
    end, lag = header.index("LOG-END-OFFSET" if "LOG-END-OFFSET" in header else "END"), header.index("LAG")
    rows = {
        (c[0], int(c[1])): (int(c[2]), int(c[end]), int(c[lag]))
        for c in map(str.split, lines)
        if c[:1] == ["lagging"]
    }
    assert rows == _describe()


def test_partition_not_here_has_no_lag(data: Path, tmp_path: Path) -> None:
    copy = tmp_path / "data"
    shutil.copytree(data, copy)
    shutil.rmtree(copy / "lagging-0")
    r = run_in_pipe(["find", "--group", GROUP, "--json", str(copy)])
    [obj] = [json.loads(line) for line in r.stdout.decode().splitlines()]
    by = {o["partition"]: o for o in obj["offsets"]}
    assert by[0]["logEndOffset"] is None and by[0]["lag"] is None
    assert (by[1]["logEndOffset"], by[1]["lag"]) == (300, 0)


def test_report_lag_is_the_tools(data: Path) -> None:
    """``kdump report``'s groups: the same committed offsets, log end offsets and lag as the tool's."""
    r = run_in_pipe(["report", "--json", str(data)])
    assert r.returncode == 0, r.stderr
    units = [json.loads(line) for line in r.stdout.decode().splitlines()]
    [group] = [g for u in units if u["type"] == "reportGroups" for g in u["groups"] if g["group"] == GROUP]
    found = {
        (o["topic"], o["partition"]): (o["offset"], o["logEndOffset"], o["lag"]) for o in group["offsets"]
    }
    assert found == _describe()
