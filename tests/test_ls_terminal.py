"""``kdump ls`` on real pseudo-terminals of 80, 120 and 200 columns (issue 16, items 1, 4 and 5).

The oracle is the data written here: the log end offset 2230000 (a batch of 40 records from offset 2229960) must
appear whole at every width, no line may be wider than the terminal, and every column is either in the header
(full or short name) or named in the note under the table -- never dropped silently.
"""

from __future__ import annotations

import json
import re
import subprocess
import sys
from pathlib import Path

import pytest

from kdump.render.ls_table import COLUMNS
from kdump.storage.naming import offset_to_filename
from tests import pty_run
from tests.builder import SimpleRecord, build_v2_batch
from tests.pty_run import ANSI

BASE = 2229960


def _write_partition(directory: Path, base: int = BASE, count: int = 40) -> None:
    directory.mkdir(parents=True)
    records = [SimpleRecord(b"value %d" % i, key=b"k", timestamp=1_700_000_000_000 + i) for i in range(count)]
    (directory / offset_to_filename(base)).write_bytes(build_v2_batch(records, base_offset=base))
    for suffix in (".index", ".timeindex"):  # under index.interval.bytes: no entries, as a broker leaves them
        (directory / offset_to_filename(base, suffix)).write_bytes(b"")


@pytest.fixture(scope="module")
def log_dirs(tmp_path_factory: pytest.TempPathFactory) -> list[Path]:
    """Two brokers' log directories holding the same partition names."""
    root = tmp_path_factory.mktemp("brokers")
    dirs = []
    for broker in (1, 2):
        log_dir = root / f"broker{broker}" / "data"
        _write_partition(log_dir / "orders-0")
        _write_partition(log_dir / "payments-eu-west-1-12", base=0, count=3)
        (log_dir / "meta.properties").write_text(f"version=1\nnode.id={broker}\ncluster.id=abc\n")
        dirs.append(log_dir)
    return dirs


def run_in_pty(
    args: list[str], columns: int, env: dict[str, str] | None = None, cwd: Path | None = None
) -> str:
    """``kdump <args>`` on a pseudo-terminal of ``columns`` (:func:`tests.pty_run.run_in_pty`): what it wrote,
    colour sequences kept; it must succeed."""
    r = pty_run.run_in_pty(args, columns, env=env, cwd=cwd)
    assert r.status == 0, r.text
    return r.raw


def _check_fitted(text: str, columns: int) -> tuple[list[str], list[str]]:
    plain = ANSI.sub("", text)
    lines = plain.splitlines()
    assert all(len(line) <= columns for line in lines), [line for line in lines if len(line) > columns]
    assert "…" not in plain and "2230000" in plain
    header = lines[0].split()
    start = next((n for n, line in enumerate(lines) if "left out to fit" in line), None)
    note = "" if start is None else " ".join(lines[start:]).split(")")[0]
    hidden = note.split(": ", 1)[1].split(";")[0].split(", ") if note else []
    for column in COLUMNS:
        if column.name in ("DIR", "REMOTE"):  # one log directory, no tiered partition: neither applies
            assert column.name not in header, column.name
            continue
        assert (column.name in header or column.short in header) != (column.name in hidden), column.name
    return header, hidden


@pytest.mark.parametrize("columns", [80, 120, 200])
def test_the_table_fits_the_terminal_and_names_what_it_leaves_out(log_dirs: list[Path], columns: int) -> None:
    text = run_in_pty(["ls", str(log_dirs[0])], columns)
    header, hidden = _check_fitted(text, columns)
    if columns == 200:
        assert hidden == [] and "HIGH-WATERMARK" in header
    else:
        assert hidden and {"TOPIC", "END", "ANOM"} <= set(header)
    assert "12.4 KiB" not in text  # sizes are human: the 40-record segment is under 2 KiB
    assert re.search(r"\d+ B\b", ANSI.sub("", text))


def test_wide_keeps_every_column(log_dirs: list[Path]) -> None:
    text = ANSI.sub("", run_in_pty(["ls", "--wide", str(log_dirs[0])], 80))
    assert all(c.name in text.splitlines()[0].split() for c in COLUMNS if c.name not in ("DIR", "REMOTE"))
    assert "left out" not in text


def test_columns_picks_and_orders(log_dirs: list[Path]) -> None:
    text = ANSI.sub("", run_in_pty(["ls", "--columns", "log-end,topic,part", str(log_dirs[0])], 80))
    assert text.splitlines()[0].split() == ["LOG-END", "TOPIC", "PARTITION"]
    assert text.splitlines()[1].split() == ["2230000", "orders", "0"]


def test_a_very_narrow_terminal_gets_one_block_per_partition(log_dirs: list[Path]) -> None:
    text = ANSI.sub("", run_in_pty(["ls", str(log_dirs[0])], 30))
    assert re.search(r"^LOG-END +2230000$", text, re.M) and re.search(
        r"^TOPIC +payments-eu-west-1$", text, re.M
    )


def test_no_color_and_color_options(log_dirs: list[Path]) -> None:
    assert "\x1b[" in run_in_pty(["ls", str(log_dirs[0])], 200)
    assert "\x1b[" not in run_in_pty(["ls", str(log_dirs[0])], 200, env={"NO_COLOR": "1"})
    assert "\x1b[" not in run_in_pty(["--color", "never", "ls", str(log_dirs[0])], 200)
    assert "\x1b[" not in run_in_pty(["ls", "--color", "never", str(log_dirs[0])], 200)
    assert "\x1b[" in run_in_pty(["ls", "--color", "always", str(log_dirs[0])], 200, env={"NO_COLOR": "1"})


def test_several_log_dirs_are_told_apart(log_dirs: list[Path]) -> None:
    text = ANSI.sub("", run_in_pty(["ls", *map(str, log_dirs)], 120))
    assert text.splitlines()[0].split()[0] == "DIR"
    assert f"DIR 1: {log_dirs[0]} (broker 1)" in text and f"DIR 2: {log_dirs[1]} (broker 2)" in text
    rows = [line.split() for line in text.splitlines() if line.split()[1:2] == ["orders"]]
    assert [r[0] for r in rows] == ["1", "2"]

    plain = subprocess.run(
        [sys.executable, "-m", "kdump", "ls", *map(str, log_dirs)], capture_output=True, text=True, check=True
    ).stdout.splitlines()
    assert plain[0].split()[-2:] == ["LOG-DIR", "BROKER"]
    assert [line.split()[-2:] for line in plain[1:5]] == [  # by topic, partition, then log directory
        [str(log_dirs[0]), "1"],
        [str(log_dirs[1]), "2"],
        [str(log_dirs[0]), "1"],
        [str(log_dirs[1]), "2"],
    ]
    objects = [
        json.loads(line)
        for line in subprocess.run(
            [sys.executable, "-m", "kdump", "ls", "--json", *map(str, log_dirs)],
            capture_output=True,
            text=True,
            check=True,
        ).stdout.splitlines()
    ]
    assert [(o["logDir"], o["brokerId"]) for o in objects] == [
        (str(log_dirs[0]), 1),
        (str(log_dirs[1]), 2),
        (str(log_dirs[0]), 1),
        (str(log_dirs[1]), 2),
    ]


def test_ls_dot_inside_a_partition_directory(log_dirs: list[Path]) -> None:
    partition = log_dirs[0] / "orders-0"
    plain = subprocess.run(
        [sys.executable, "-m", "kdump", "ls", "."], capture_output=True, text=True, check=True, cwd=partition
    ).stdout.splitlines()
    cells = plain[1].split()
    assert cells[:2] == ["orders", "0"] and cells[4:6] == [str(BASE), "2230000"]
    assert len(plain) == 2  # no anomaly line: the directory is named orders-0


def test_human_time_beside_epoch_ms(log_dirs: list[Path]) -> None:
    plain = subprocess.run(
        [
            sys.executable,
            "-m",
            "kdump",
            "ls",
            "--human-time",
            "--tz",
            "+01:00",
            str(log_dirs[0] / "orders-0"),
        ],
        capture_output=True,
        text=True,
        check=True,
    ).stdout.splitlines()
    header, row = plain[0].split(), plain[1].split()
    # 1700000000039 ms = 2023-11-14T22:13:20.039Z (date -u -d @1700000000.039)
    assert row[header.index("MAX-TIMESTAMP")] == "1700000000039"
    assert row[header.index("MAX-TIME")] == "2023-11-14T23:13:20.039+01:00"


@pytest.fixture(scope="module")
def broker_like(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A log directory shaped like a real broker's: orders-0..11 (records in 0, 2 and 10), 50 empty
    __consumer_offsets partitions, three left-over .deleted files in orders-2."""
    log_dir = tmp_path_factory.mktemp("broker") / "data"
    for p in range(12):
        if p in (0, 2, 10):
            _write_partition(log_dir / f"orders-{p}", base=p * 1000, count=5)
        else:
            (log_dir / f"orders-{p}").mkdir(parents=True)
            for suffix in (".log", ".index", ".timeindex"):
                (log_dir / f"orders-{p}" / offset_to_filename(0, suffix)).write_bytes(b"")
    for p in range(50):
        (log_dir / f"__consumer_offsets-{p}").mkdir()
        for suffix in (".log", ".index", ".timeindex"):
            (log_dir / f"__consumer_offsets-{p}" / offset_to_filename(0, suffix)).write_bytes(b"")
    for base in (0, 10, 20):
        (log_dir / "orders-2" / (offset_to_filename(base) + ".deleted")).write_bytes(b"")
    return log_dir


def test_ls_sorts_by_partition_number_and_folds_empty_partitions(broker_like: Path) -> None:
    text = ANSI.sub("", run_in_pty(["ls", str(broker_like)], 80))
    rows = [line.split()[:2] for line in text.splitlines()[1:] if line.startswith("orders ")]
    assert rows == [
        ["orders", "0"],
        ["orders", "2"],
        ["orders", "10"],
    ]  # numbers, not text; empty ones folded
    folded = " ".join(text.split())
    assert (
        "59 partitions without records (--all lists them): __consumer_offsets 0-49, orders 1,3-9,11" in folded
    )
    assert f"{broker_like / 'orders-2'}: 3 left-over .deleted files (-v lists them)" in folded
    assert all(len(line) <= 80 for line in text.splitlines())

    every = ANSI.sub("", run_in_pty(["ls", "--all", "-v", str(broker_like)], 80))
    numbers = [line.split()[1] for line in every.splitlines() if line.split()[:1] == ["orders"]]
    assert numbers == [str(p) for p in range(12)]
    assert every.count("left-over file") == 3 and "without records" not in every


def test_ls_topic_filter_and_internal_topics(broker_like: Path) -> None:
    def rows(*args: str) -> list[str]:
        out = subprocess.run(
            [sys.executable, "-m", "kdump", "ls", *args, str(broker_like)], capture_output=True, text=True
        )
        assert out.returncode == 0, out.stderr
        return [line.split()[0] for line in out.stdout.splitlines()[1:] if "left-over" not in line]

    assert set(rows("--topic", "orders")) == {"orders"} and len(rows("--topic", "orders")) == 12
    assert len(rows("--topic", "orders,__consumer_offsets")) == 62
    assert set(rows("--exclude-internal")) == {"orders"}
    missing = subprocess.run(
        [sys.executable, "-m", "kdump", "ls", "--topic", "payments", str(broker_like)],
        capture_output=True,
        text=True,
    )
    assert missing.returncode == 2
    assert (
        "no partition of payments below the paths; the topics here: __consumer_offsets, orders"
        in missing.stderr
    )
