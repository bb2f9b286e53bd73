"""One rule for paths, outputs and unreadable things in every command (issue 31, and issue 28's item 9).

The oracle is the file system built here: which paths exist, which are plain files, which cannot be read."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest
from click.testing import CliRunner

from kdump.cli.commands import cli
from tests.forensic_data import T0, records_batch, write_segment

ROOT = Path(__file__).resolve().parents[1]


def kdump(*args: str, cwd: Path | None = None) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "PYTHONPATH": str(ROOT)}  # this checkout's kdump, from any directory
    return subprocess.run(
        [sys.executable, "-m", "kdump", *args], capture_output=True, text=True, cwd=cwd, env=env
    )


@pytest.fixture
def log_dir(tmp_path: Path) -> Path:
    """A log directory as a broker leaves it: two partitions and plain files beside them."""
    logs = tmp_path / "data"
    for p in (0, 1):
        write_segment(str(logs / f"orders-{p}"), 0, [records_batch(0, [b"v"] * 3, ts=T0)])
        for suffix in ("index", "timeindex"):  # under index.interval.bytes: empty, as a broker leaves them
            (logs / f"orders-{p}" / f"00000000000000000000.{suffix}").write_bytes(b"")
    (logs / "bootstrap.checkpoint").write_bytes(b"")
    (logs / "meta.properties").write_text("version=1\nnode.id=1\ncluster.id=abc\n")
    return logs


@pytest.mark.parametrize("command", ["verify", "verify-index", "ls", "txn", "retention"])
def test_no_path_means_the_current_directory(log_dir: Path, command: str) -> None:
    here = kdump(command, cwd=log_dir / "orders-0")
    assert here.returncode == 0, here.stderr
    if command == "verify":
        assert "not checked" not in here.stdout and "Checked 1 partition" in here.stdout  # `.` is orders-0
    if command in ("ls", "retention"):
        assert "orders" in here.stdout


@pytest.mark.parametrize("command", ["ls", "txn", "retention"])
def test_a_glob_catching_a_plain_file_skips_it(log_dir: Path, command: str) -> None:
    paths = sorted(str(p) for p in log_dir.glob("[a-z]*"))  # bootstrap.checkpoint, meta.properties, orders-*
    result = kdump(command, *paths)
    assert result.returncode == 0, result.stderr
    assert f"kdump: {log_dir / 'bootstrap.checkpoint'}: not a directory" in result.stderr
    assert f"kdump: {log_dir / 'meta.properties'}: not a directory" in result.stderr
    only_files = kdump(command, str(log_dir / "meta.properties"))
    assert only_files.returncode == 2 and "no directory among the paths given" in only_files.stderr


def test_find_timestamp_that_looks_iso_but_is_not() -> None:
    result = CliRunner().invoke(cli, ["find", "--timestamp", "2023-13-45T10:00", "."])
    assert result.exit_code == 2
    assert "2023-13-45T10:00: not an ISO-8601 date and time (month must be in 1..12)" in result.output
    assert "2023-11-14T22:13:20.5Z" in result.output and "2023-11-14 22:13:20+01:00" in result.output
    result = CliRunner().invoke(cli, ["find", "--timestamp", "2023/11/14", "."])
    assert "2023/11/14: not an ISO-8601 date and time; the forms read: 2023-11-14," in result.output
    result = CliRunner().invoke(cli, ["find", "--timestamp", "yesterday", "."])
    assert "not epoch milliseconds nor an ISO-8601 date and time" in result.output
