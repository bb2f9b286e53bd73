"""Segments that change while kdump reads them: truncated (a broker's recovery) or appended to (the active
segment).  kdump reports what it saw and never dies of SIGBUS.

Every run that could die of a signal runs in a child process, and the dump is held mid-file by not reading its
standard output (the pipe fills up and kdump blocks in ``write``), so the change happens at a known moment.
"""

from __future__ import annotations

import io
import os
import signal
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from kdump.cli import files, run_guarded
from kdump.storage import sigbus_guard
from tests.builder import SimpleRecord, build_segment, build_v2_batch

REPO = Path(__file__).resolve().parents[1]
NAME = "00000000000000000000.log"
BATCHES = 120


def _segment(first_batch: int = 0, batches: int = BATCHES) -> bytes:
    def records(base: int) -> list[SimpleRecord]:
        return [
            SimpleRecord(b"v" * 2000, key=str(base + i).encode(), timestamp=1_700_000_000_000)
            for i in range(10)
        ]

    return build_segment(
        build_v2_batch(records(b * 10), base_offset=b * 10) for b in range(first_batch, first_batch + batches)
    )


def _kdump(*args: str) -> subprocess.Popen[bytes]:
    return subprocess.Popen(
        [sys.executable, "-m", "kdump", *args], stdout=subprocess.PIPE, stderr=subprocess.PIPE, cwd=REPO
    )


def _full_dump(path: Path) -> bytes:
    out, err = io.BytesIO(), io.BytesIO()
    assert (
        run_guarded(lambda o, e: files.run(["--files", str(path), "--print-data-log"], o, e), out, err) == 0
    )
    return out.getvalue()


@pytest.fixture
def segment(tmp_path: Path) -> Path:
    path = tmp_path / NAME
    path.write_bytes(_segment())
    return path


def _held_dump(path: Path) -> tuple[subprocess.Popen[bytes], bytes]:
    """Start ``kdump files --print-data-log`` and return once it is blocked on a full pipe, mid-file."""
    proc = _kdump("files", "--files", str(path), "--print-data-log")
    assert proc.stdout is not None
    head = proc.stdout.read1(4096)  # the first chunk is out; kdump now fills the pipe and blocks
    assert head.startswith(b"Dumping ")
    return proc, head


@pytest.mark.parametrize("keep", [0, 2, 400_000], ids=["to-empty", "to-2-bytes", "ahead-of-reader"])
def test_truncated_while_dumping(segment: Path, keep: int) -> None:
    expected = _full_dump(segment)
    size = segment.stat().st_size
    proc, head = _held_dump(segment)
    os.truncate(segment, keep)
    rest, err = proc.communicate(timeout=60)
    out = head + rest
    assert proc.returncode == 1, (proc.returncode, err)  # not -SIGBUS
    lines = err.decode().splitlines()
    assert len(lines) == 1 and lines[0].startswith(f"kdump: {segment}: byte ")
    assert f"the file was truncated from {size} to {keep} bytes while kdump was reading it" in lines[0]
    # What it saw, and nothing made up from vanished pages: the output is the intact file's, up to the batch
    # where the cut was noticed; only that batch's own line may show the zeros that replaced its tail.
    seen = out.splitlines(keepends=True)
    if not expected.startswith(out):
        assert seen[-1].startswith(b"baseOffset: ") and expected.startswith(b"".join(seen[:-1]))
    assert len(out) > 4096


@pytest.mark.parametrize("sink", ["JsonLog", "TextLog"])
def test_batch_by_batch_path_prints_nothing_of_a_batch_read_after_a_cut(segment: Path, sink: str) -> None:
    """The batch-by-batch path (``--json``, and the text with ``--print-header-values``) gives the whole-segment
    text path's guarantee: a batch's lines are written once its records are read and the file is seen unchanged.
    The file is cut just before the sink reads the fourth batch's records (in a child: a cut under the map)."""
    module = "files_json" if sink == "JsonLog" else "files_text"
    options = ["--json"] if sink == "JsonLog" else ["--print-header-values"]
    done = _run_child(
        f"""
        import io, os, sys
        from kdump.cli import files, run_guarded
        from kdump.render import {module} as module
        path = {str(segment)!r}
        original = module.{sink}.batch
        def batch(self, batch, records=None):
            if batch.base_offset == 30:
                os.truncate(path, 0)
            return original(self, batch, records)
        module.{sink}.batch = batch
        out, err = io.BytesIO(), io.BytesIO()
        argv = ["--files", path, "--print-data-log", *{options!r}]
        code = run_guarded(lambda o, e: files.run(argv, o, e), out, err)
        sys.stdout.write(f"{{code}}\\n" + out.getvalue().decode())
        sys.stderr.write(err.getvalue().decode())
        """
    )
    assert done.stdout, done.stderr
    code, *lines = done.stdout.splitlines()
    assert code == "1", done.stderr
    position = _batch_starts(_segment())[3]
    assert f"byte {position}: the file was truncated from" in done.stderr
    batches = [line for line in lines if '"type":"batch"' in line or line.startswith("baseOffset: ")]
    assert len(batches) == 3  # offsets 0, 10 and 20; nothing of offset 30's batch
    assert not any('"offset":30' in line or line.startswith("| offset: 30 ") for line in lines)


def test_appended_while_dumping(segment: Path) -> None:
    expected = _full_dump(segment)
    proc, head = _held_dump(segment)
    with open(segment, "ab") as f:
        f.write(_segment(BATCHES, 50))
    rest, err = proc.communicate(timeout=60)
    assert (proc.returncode, err) == (0, b"")
    assert head + rest == expected  # the bytes present when it was opened, exactly


def _batch_starts(data: bytes) -> list[int]:
    starts, position = [], 0
    while position + 12 <= len(data):
        starts.append(position)
        position += 12 + int.from_bytes(data[position + 8 : position + 12], "big")
    return starts


def _run_child(code: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-c", textwrap.dedent(code)], capture_output=True, text=True, cwd=REPO, timeout=60
    )


_ITERATE_AND_TRUNCATE = """
    import os, sys
    from kdump.storage import sigbus_guard
    from kdump.storage.file_records import FileChangedError, FileRecords
    if sys.argv[-1] == "no-guard":
        sigbus_guard.register = lambda mapping: None
    if sys.argv[-1] == "faulthandler":  # another SIGBUS handler set after kdump's: kdump's goes back in front
        import faulthandler
        with FileRecords({path!r}):
            pass
        faulthandler.enable()
    path = {path!r}
    with FileRecords(path) as records:
        it = records.batches()
        seen = [next(it).base_offset for _ in range(3)]
        os.truncate(path, {keep})
        try:
            for batch in it:
                seen.append(batch.base_offset)
                batch.is_valid()
                for record in batch.records():
                    pass
        except FileChangedError as e:
            print("changed", e.position, len(seen))
        else:
            print("unnoticed", len(seen))
"""


@pytest.mark.parametrize("guard", ["guard", "no-guard", "faulthandler"])
@pytest.mark.parametrize("keep", [0, 100_000])
def test_storage_core_stops_with_file_changed_error(segment: Path, guard: str, keep: int) -> None:
    code = _ITERATE_AND_TRUNCATE.format(path=str(segment), keep=keep)
    done = subprocess.run(
        [sys.executable, "-c", textwrap.dedent(code), guard],
        capture_output=True,
        text=True,
        cwd=REPO,
        timeout=60,
    )
    assert (done.returncode, done.stderr) == (0, "")  # no fault reached another handler (faulthandler's dump)
    word, position, seen = done.stdout.split()
    assert word == "changed"
    starts = _batch_starts(_segment())
    assert int(position) in starts and int(seen) >= 3
    if keep == 0:
        assert int(position) == starts[3]  # noticed before the next batch was read


@pytest.mark.skipif(not sigbus_guard.available(), reason="no SIGBUS guard on this platform")
def test_guard_leaves_other_mappings_alone(tmp_path: Path) -> None:
    """A fault in a mapping kdump did not register still kills the process, as it would without the guard."""
    path = tmp_path / "other"
    path.write_bytes(b"x" * 100_000)
    done = _run_child(
        f"""
        import mmap, os
        from kdump.storage import sigbus_guard
        from kdump.storage.file_records import FileRecords
        with FileRecords({str(tmp_path / "x.log")!r}, data=b""):
            pass
        assert sigbus_guard.available()
        with open({str(path)!r}, "rb") as f:
            m = mmap.mmap(f.fileno(), 0, access=mmap.ACCESS_READ)
        os.truncate({str(path)!r}, 0)
        print(m[50_000])
        """
    )
    assert done.returncode == -signal.SIGBUS, (done.returncode, done.stderr)


def test_salvage_of_a_file_truncated_underneath_writes_nothing(segment: Path, tmp_path: Path) -> None:
    out = tmp_path / "out"
    done = _run_child(
        f"""
        import os
        from kdump.commands.salvage import salvage_segment
        from kdump.analysis import salvage
        from kdump.storage.file_records import FileChangedError
        real = salvage.scan_segment
        def scan_then_truncate(records, base_offset=None, next_base_offset=None):
            result = real(records, base_offset, next_base_offset)
            os.truncate({str(segment)!r}, 1000)
            return result
        salvage.scan_segment = scan_then_truncate
        try:
            salvage_segment({str(segment)!r}, {str(out)!r})
        except FileChangedError as e:
            print("changed")
        """
    )
    assert done.stdout.strip() == "changed", done.stderr
    assert not (out / NAME).exists()


@pytest.mark.parametrize("keep", [0, 100_000], ids=["from-empty", "past-100000"])
def test_truncated_and_refilled_while_dumping(segment: Path, keep: int) -> None:
    """Truncated and written again in place (same inode, as large or larger): the bytes kdump already read
    changed, so the output could mix old and new batches: it stops with one line saying so."""
    proc, head = _held_dump(segment)
    refill = _segment(1000, BATCHES + 10)  # other offsets, other bytes, a larger file
    with open(segment, "r+b") as f:
        f.truncate(keep)
        f.seek(keep)
        f.write(refill[keep:])
    rest, err = proc.communicate(timeout=60)
    assert proc.returncode == 1, (proc.returncode, err)
    lines = err.decode().splitlines()
    assert len(lines) == 1 and lines[0].startswith(f"kdump: {segment}: byte ")
    # noticed by the bytes already read (from-empty) or by the failure the mix caused (past-100000)
    assert (
        "while kdump was reading it" in lines[0] and "what was read may mix old and new content" in lines[0]
    )


def test_file_records_notice_a_refill_at_the_end_of_a_pass(segment: Path) -> None:
    """The storage core on its own: a refill after the first batch is reported by the pass's last look."""
    from kdump.storage.file_records import FileChangedError, FileRecords

    records = FileRecords(str(segment))
    batches = records.batches()
    next(batches)
    with open(segment, "r+b") as f:
        f.truncate(0)
        f.write(_segment(1000, BATCHES))
    with pytest.raises(FileChangedError, match="rewritten"):
        for _ in batches:
            pass
    records.close()
