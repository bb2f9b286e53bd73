"""Every table command on real pseudo-terminals of 80 and 120 columns (issue 31): ``txn``, ``find --group``,
``find --transactional-id``, ``retention``, ``diff`` and ``ls`` write through one table writer.

The oracle is the data written here, with values as wide as a real cluster's: offsets around 2,230,000, a
producer id of eleven digits, a committed offset of eight, a 36-character transactional id.  At each width
every one of them must appear whole (never ``…``, never split), no line may be wider than the terminal except a
suggested command line (never broken, so that it can be copied) or a path that alone is longer, and a column
left out to fit is named under its table.
"""

from __future__ import annotations

import re
import shutil
import subprocess
import sys
import tempfile
from collections.abc import Iterator
from pathlib import Path

import pytest

from kdump.commands.coordinator import partition_for
from kdump.storage.control_record import ControlRecordType
from kdump.storage.offset_checkpoint import encode_offset_checkpoint
from tests.builder import SimpleRecord, build_end_txn_marker_batch, build_v2_batch
from tests.forensic_data import (
    T0,
    offset_commit_key,
    offset_commit_value,
    records_batch,
    txn_log_key,
    txn_log_value,
    write_segment,
)
from tests.pty_run import run_in_pty

TOPIC = "payments-eu-west-1"
BASE = 2229960
PRODUCER = 26_000_000_123
TXN_ID = "payment-service-eu-west-1-instance-7"
GROUP = "billing-reconciliation-eu-west-1"
COMMITTED = 99_887_766
HOUR = 3_600_000


def _pty(args: list[str], columns: int) -> tuple[int, str]:
    r = run_in_pty(args, columns)
    return r.status, r.text


def _partition(log_dir: Path, *, open_transaction: bool = True, diverged: bool = False) -> None:
    """``payments-eu-west-1-12``: producer PRODUCER commits offsets BASE..+19 (marker), then opens a
    transaction at BASE+21 that it never ends (not in the copy without ``open_transaction``; in the copy with
    ``diverged``, a different batch of 5 records there instead); high watermark after it."""
    part = log_dir / f"{TOPIC}-12"
    pid = {"producer_id": PRODUCER, "producer_epoch": 3, "is_transactional": True}
    write_segment(
        str(part),
        BASE,
        [
            records_batch(BASE, [b"v" * 40] * 20, ts=T0, base_sequence=0, **pid),  # type: ignore[arg-type]
            build_end_txn_marker_batch(
                ControlRecordType.COMMIT, coordinator_epoch=0, producer_id=PRODUCER, producer_epoch=3,
                base_offset=BASE + 20, timestamp=T0 + 220,
            ),
        ]
        + [records_batch(BASE + 21, [b"w" * 40] * 9, ts=T0 + 1000, base_sequence=20, **pid)] * open_transaction  # type: ignore[arg-type]
        + [records_batch(BASE + 21, [b"x" * 40] * 5, ts=T0 + 1000, base_sequence=20, **pid)] * diverged,  # type: ignore[arg-type]
    )  # fmt: skip
    (log_dir / "replication-offset-checkpoint").write_bytes(
        encode_offset_checkpoint({(TOPIC, 12): BASE + 30})
    )


def _coordinators(log_dir: Path) -> None:
    """TXN_ID's ``__transaction_state`` partition (of the default 50): CompleteCommit at the coordinator, so
    the open transaction hangs; GROUP's ``__consumer_offsets`` partition: it committed COMMITTED."""
    value = txn_log_value(PRODUCER, 3, 60000, 4, {TOPIC: [12]}, T0 + 400, T0 + 1000)
    write_segment(
        str(log_dir / f"__transaction_state-{partition_for(TXN_ID, 50)}"),
        0,
        [build_v2_batch([SimpleRecord(value, key=txn_log_key(TXN_ID), timestamp=T0 + 400)])],
    )
    commit = offset_commit_value(COMMITTED, 17, "checkpoint after the nightly reconciliation run", T0 + 5)
    write_segment(
        str(log_dir / f"__consumer_offsets-{partition_for(GROUP, 50)}"),
        0,
        [build_v2_batch([SimpleRecord(commit, key=offset_commit_key(GROUP, TOPIC, 12), timestamp=T0 + 5)])],
    )


@pytest.fixture(scope="module")
def data() -> Iterator[tuple[Path, Path]]:
    """A data directory and a second broker's copy that diverged at the open transaction (another batch there;
    a copy holding only one batch less would be behind, not diverged)."""
    # a short root (removed at the end): a path is one unbreakable token, and pytest's numbered base
    # directories (/tmp/pytest-of-USER/pytest-NNN/...) grow past 80 columns
    root = Path(tempfile.mkdtemp(prefix="kt"))
    a = root / "broker1"
    _partition(a)
    _coordinators(a)
    b = root / "broker2"
    shutil.copytree(a, b)
    shutil.rmtree(b / f"{TOPIC}-12")
    _partition(b, open_transaction=False, diverged=True)
    try:
        yield a, b
    finally:
        shutil.rmtree(root, ignore_errors=True)


def _check(text: str, columns: int, values: list[str]) -> list[str]:
    lines = text.splitlines()
    too_wide = [
        line
        for line in lines
        if len(line) > columns
        and not line.lstrip().startswith("kafka-transactions.sh")
        and " "
        in line.strip().split(": ", 1)[-1]  # one word (a path, alone or as an own-line value) is never cut
    ]
    assert not too_wide, too_wide
    assert "…" not in text
    for value in values:  # whole: not a piece of a longer token, not split across lines
        assert re.search(rf"(?<![\w.-]){re.escape(value)}(?![\w-]|\.\w)", text), (value, text)
    return lines


def _hidden(lines: list[str]) -> list[str]:
    """The columns named under a table as left out to fit."""
    text = " ".join(lines)
    return [
        name for m in re.finditer(r"left out to fit \d+ columns: ([^;]+);", text) for name in m[1].split(", ")
    ]


@pytest.mark.parametrize("columns", [80, 120])
def test_txn(data: tuple[Path, Path], columns: int) -> None:
    status, text = _pty(["txn", str(data[0])], columns)
    assert status == 1  # hanging
    lines = _check(text, columns, [str(PRODUCER), str(BASE + 21), TXN_ID, "CompleteCommit"])
    command = (
        f"kafka-transactions.sh --bootstrap-server BROKER:9092 abort --topic {TOPIC} --partition 12 "
        f"--start-offset {BASE + 21}"
    )
    assert f"  {command}" in lines  # on one line, whole
    assert "220 ms" in text  # the committed transaction's duration, human
    assert not re.search(r"\b\d+\.\d+s\b", text)
    header = next(line for line in lines if line.split()[:1] in (["PRODUCER-ID"], ["PID"])).split()
    hidden = _hidden(lines)
    for full, short in (("LAST-OFFSET", "LAST"), ("LAST-TIMESTAMP", "LAST-TIME"), ("EPOCH", "EPOCH")):
        assert (full in header or short in header) != (full in hidden), (full, text)
    assert (str(BASE + 29) in text) == ("LAST-OFFSET" not in hidden)
    if columns == 120:
        assert hidden == ["LAST-TIMESTAMP"]


def test_txn_in_a_pipe_has_plain_numbers_with_units_in_the_header(data: tuple[Path, Path]) -> None:
    out = subprocess.run(
        [sys.executable, "-m", "kdump", "txn", "--now", str(T0 + 26 * HOUR), str(data[0])],
        capture_output=True,
        text=True,
    ).stdout
    header = next(line for line in out.splitlines() if line.startswith("PRODUCER-ID"))
    assert "AGE-MS" in header.split() and "TIMEOUT-MS" in header.split()
    row = out.splitlines()[out.splitlines().index(header) + 1].split()
    assert str(26 * HOUR - 1000) in row and "60000" in row and str(T0 + 1000) in row
    assert "commits: 1 (duration ms min 220," in out


@pytest.mark.parametrize("columns", [80, 120])
def test_find_group(data: tuple[Path, Path], columns: int) -> None:
    status, text = _pty(["find", "--group", GROUP, str(data[0])], columns)
    assert status == 0
    _check(text, columns, [TOPIC, "12", str(COMMITTED), "2023-11-14T22:13:20.005Z"])
    assert "partitions here" not in text


@pytest.mark.parametrize("columns", [80, 120])
def test_find_transactional_id(data: tuple[Path, Path], columns: int) -> None:
    status, text = _pty(["find", "--transactional-id", TXN_ID, str(data[0])], columns)
    assert status == 0
    _check(text, columns, [TXN_ID, str(PRODUCER), "CompleteCommit", f"{TOPIC}-12"])


@pytest.mark.parametrize("columns", [80, 120])
def test_retention(data: tuple[Path, Path], columns: int) -> None:
    args = ["retention", "--now", str(T0 + 50 * HOUR), "--config", "retention.ms=86400000"]
    status, text = _pty([*args, str(data[0] / f"{TOPIC}-12")], columns)
    assert status == 0
    _check(text, columns, [str(BASE), str(BASE + 30), "2023-11-14T22:13:21.008Z"])
    assert "retention.ms=86400000 = 1d" in text


@pytest.mark.parametrize("columns", [80, 120])
def test_diff(data: tuple[Path, Path], columns: int) -> None:
    status, text = _pty(["diff", str(data[0]), str(data[1])], columns)
    assert status == 1
    lines = _check(text, columns, [str(BASE + 21), f"{TOPIC}-12"])
    assert lines[0].startswith("3 partition(s) compared across 2 copies: 1 diverged, 2 identical")
    assert (
        f"identical: __consumer_offsets {partition_for(GROUP, 50)}, "
        f"__transaction_state {partition_for(TXN_ID, 50)}"
    ) in " ".join(text.split())
    assert text.index("compared across") < text.index(f"{TOPIC}-12: 2 copies DIVERGED")


@pytest.mark.parametrize("columns", [80, 120])
def test_ls(data: tuple[Path, Path], columns: int) -> None:
    status, text = _pty(["ls", str(data[0])], columns)
    assert status == 0
    _check(text, columns, [str(BASE + 30), TOPIC])


def test_retention_folds_partitions_without_records(tmp_path: Path) -> None:
    log_dir = tmp_path / "data"
    _partition(log_dir)
    for p in range(3):
        (log_dir / f"__consumer_offsets-{p}").mkdir()
        (log_dir / f"__consumer_offsets-{p}" / "00000000000000000000.log").write_bytes(b"")
    args = ["retention", "--now", str(T0 + 50 * HOUR), str(log_dir)]
    status, text = _pty(args, 80)
    assert status == 0
    assert "3 partitions without records (--all shows them): __consumer_offsets 0-2" in text
    assert "__consumer_offsets-0:" not in text and f"{TOPIC}-12: PREDICTION" in " ".join(text.split())
    status, every = _pty([*args[:1], "--all", *args[1:]], 80)
    assert "without records" not in every and "__consumer_offsets-0: PREDICTION" in every
