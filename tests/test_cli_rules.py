"""One rule for paths, outputs and unreadable things in every command (issue 31, and issue 28's item 9).

The oracle is the file system built here: which paths exist, which are plain files, which cannot be read."""

from __future__ import annotations

import json
import os
import shutil
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


SETPRIV = shutil.which("setpriv")


@pytest.fixture
def unreadable(log_dir: Path, tmp_path: Path) -> Path:
    """``log_dir`` with a directory and orders-1's .log that cannot be read (orders-1's indexes have
    entries, which a cascade would report as "beyond the end" of the log not read), and a readable copy of
    orders-1 elsewhere (for diff)."""
    part = log_dir / "orders-1"
    write_segment(str(part), 0, [records_batch(i * 10, [b"v" * 500] * 10, ts=T0 + i) for i in range(10)])
    subprocess.run(
        [sys.executable, "-m", "kdump", "rebuild-index", "--force", str(part)],
        check=True,
        capture_output=True,
    )
    shutil.copytree(part, tmp_path / "copy" / "orders-1")
    (log_dir / "locked").mkdir()
    (log_dir / "locked").chmod(0)
    (part / "00000000000000000000.log").chmod(0)
    yield log_dir
    (log_dir / "locked").chmod(0o755)
    (part / "00000000000000000000.log").chmod(0o644)


@pytest.mark.skipif(
    os.geteuid() == 0 and SETPRIV is None, reason="root without setpriv cannot drop its override"
)
@pytest.mark.parametrize("command", ["verify", "verify-index", "ls", "txn", "retention", "diff"])
def test_one_rule_for_what_cannot_be_read(unreadable: Path, command: str) -> None:
    """Every command names each unreadable file or directory once (not one problem per check that needs it)
    and ends with status 1 (issue 28, item 9; issue 31)."""
    prefix = [SETPRIV, "--bounding-set", "-dac_override,-dac_read_search"] if os.geteuid() == 0 else []
    paths = [str(unreadable), str(unreadable.parent / "copy")] if command == "diff" else [str(unreadable)]
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    result = subprocess.run(
        [*prefix, sys.executable, "-m", "kdump", command, *paths], capture_output=True, text=True, env=env
    )
    text = result.stdout + result.stderr
    if "Permission denied" not in text:
        pytest.skip("this process can read files without permission (capabilities not dropped)")
    log = str(unreadable / "orders-1" / "00000000000000000000.log")
    assert result.returncode == 1, text
    assert str(unreadable / "locked") in text, text
    named = [line for line in text.splitlines() if "00000000000000000000.log" in line and "orders-1" in line]
    assert len(named) == 1, text  # once, whatever depends on it
    assert log in named[0] or "orders-1: 00000000000000000000.log" in named[0]
    assert "past-end" not in text and "beyond the log end" not in text, text
    if command in ("ls", "txn", "retention", "diff"):
        as_json = subprocess.run(
            [*prefix, sys.executable, "-m", "kdump", command, "--json", *paths],
            capture_output=True,
            text=True,
            env=env,
        )
        assert as_json.returncode == 1
        objects = [json.loads(line) for line in as_json.stdout.splitlines()]
        assert [o for o in objects if o["type"] == "unreadable"] == [
            {
                "type": "unreadable",
                "path": str(unreadable / "locked"),
                "message": "cannot read the directory: Permission denied",
            }
        ]


def test_verify_shows_progress_on_a_terminal_only(tmp_path: Path) -> None:
    """100 partitions (issue 31: 'verify on 110 partitions runs 7.5 s with no sign of progress'): a bar on
    standard error when it is a terminal, nothing in a pipe or with --no-progress."""
    from tests.pty_run import run_in_pty

    logs = tmp_path / "data"
    for p in range(100):
        write_segment(str(logs / f"t-{p}"), 0, [records_batch(0, [b"v"], ts=T0)])
        for suffix in ("index", "timeindex"):
            (logs / f"t-{p}" / f"00000000000000000000.{suffix}").write_bytes(b"")
    r = run_in_pty(["verify", str(logs)], 80)
    status, text = r.status, r.text
    assert status == 0 and "verifying 100 partitions" in text
    assert "Checked 100 partitions" in text
    text = run_in_pty(["verify", "--no-progress", str(logs)], 80).text
    assert "verifying" not in text
    piped = kdump("verify", str(logs))
    assert piped.returncode == 0 and "verifying" not in piped.stderr + piped.stdout
