"""``kdump verify-index``: clean broker data passes, every damaged index case is found and named."""

from __future__ import annotations

import json
import shutil
import struct
from pathlib import Path

import pytest
from click.testing import CliRunner

from kdump.analysis.index_verification import PROBLEM_KINDS, verify_segment
from kdump.cli import cli
from kdump.storage.local_log import LocalLog
from tests.corpus import CORPUS, FIXTURE_CORPUS, corpus_available
from tests.damaged_cases import INDEX_DAMAGED as DAMAGED

ROOTS = [pytest.param(FIXTURE_CORPUS, id="fixtures")] + (
    [pytest.param(CORPUS, id="corpus")] if corpus_available() else []
)
needs_corpus = pytest.mark.skipif(not corpus_available(), reason=f"reference corpus not found at {CORPUS}")


def verify(*args: str) -> tuple[int, str]:
    result = CliRunner().invoke(cli, ["verify-index", *args])
    return result.exit_code, result.output


def found(case_dir: Path) -> set[tuple[str, str, int | None]]:
    code, out = verify("--json", str(case_dir))
    objects = [json.loads(line) for line in out.splitlines()]
    assert objects[-1]["type"] == "summary" and code == (1 if objects[-1]["problems"] else 0)
    return {
        (str(Path(o["file"]).relative_to(case_dir)), o["kind"], o["entry"])
        for o in objects[:-1]
        if o["kind"] != "missing-index"  # the case directories hold only the files each case needs
    }


@needs_corpus
def test_clean_broker_data_passes() -> None:
    code, out = verify(str(CORPUS / "data"))
    assert code == 0, out
    assert out.endswith("no problems found.\n") and out.count("\n") == 1


@needs_corpus
def test_legacy_message_sets_are_not_mismatches() -> None:
    # Brokers index the last offset of an append; a v0/v1 message set is many "batches" (Kafka's own
    # --verify-index-only reports these as mismatches; a broker reads them correctly).
    code, out = verify(str(CORPUS / "data-kafka39-zk"))
    assert code == 0, out


@pytest.mark.parametrize("case", sorted(DAMAGED))
@pytest.mark.parametrize("root", ROOTS)
def test_every_damaged_index_case_is_found(root: Path, case: str) -> None:
    case_dir = root / "damaged" / case
    code, _ = verify(str(case_dir))
    assert code == 1
    assert found(case_dir) == DAMAGED[case]


def _copy_segment(tmp_path: Path) -> Path:
    src = FIXTURE_CORPUS / "data" / "small-index-0"
    dst = tmp_path / "small-index-0"
    shutil.copytree(src, dst)
    return dst


def _patch(path: Path, position: int, data: bytes) -> None:
    raw = bytearray(path.read_bytes())
    raw[position : position + len(data)] = data
    path.write_bytes(bytes(raw))


def _kinds(directory: Path) -> set[tuple[str, int | None]]:
    (segment,) = LocalLog.scan(directory).segments
    return {(p.kind, p.get("entry")) for p in verify_segment(segment).problems}


def test_clean_copy_passes(tmp_path: Path) -> None:
    assert _kinds(_copy_segment(tmp_path)) == set()


def test_position_inside_a_batch(tmp_path: Path) -> None:
    d = _copy_segment(tmp_path)
    index = d / "00000000000000001423.index"
    rel, pos = struct.unpack_from(">ii", index.read_bytes(), 16)
    _patch(index, 16, struct.pack(">ii", rel, pos + 7))
    assert _kinds(d) == {("not-batch-start", 2)}


def test_entries_past_the_end_of_the_log(tmp_path: Path) -> None:
    d = _copy_segment(tmp_path)
    log = d / "00000000000000001423.log"
    index = d / "00000000000000001423.index"
    raw = index.read_bytes()
    _, pos = struct.unpack_from(">ii", raw, len(raw) - 8)
    with open(log, "r+b") as f:  # cut the log just before the batch the last entry names
        f.truncate(pos)
    kinds = _kinds(d)
    assert ("past-end", len(raw) // 8 - 1) in kinds
    assert all(kind in PROBLEM_KINDS for kind, _ in kinds)


def test_time_index_offset_inside_a_batch(tmp_path: Path) -> None:
    d = _copy_segment(tmp_path)
    timeindex = d / "00000000000000001423.timeindex"
    ts, rel = struct.unpack_from(">qi", timeindex.read_bytes(), 12)
    _patch(timeindex, 12, struct.pack(">qi", ts, rel - 1))
    assert ("offset-mismatch", 1) in _kinds(d)


def test_missing_indexes(tmp_path: Path) -> None:
    d = _copy_segment(tmp_path)
    (d / "00000000000000001423.index").unlink()
    (d / "00000000000000001423.timeindex").unlink()
    assert _kinds(d) == {("missing-index", None)}


def test_text_output_names_file_entry_and_byte(tmp_path: Path) -> None:
    d = _copy_segment(tmp_path)
    index = d / "00000000000000001423.index"
    rel, pos = struct.unpack_from(">ii", index.read_bytes(), 16)
    _patch(index, 16, struct.pack(">ii", rel - 1, pos))
    code, out = verify(str(index))
    assert code == 1
    first, summary = out.splitlines()
    assert first.startswith(
        f"{index}: entry 2 (byte 16): offset-mismatch: offset {1423 + rel - 1} position {pos}"
    )
    assert summary == (
        "Checked 1 segment in 1 partition (2 index files, "
        f"{(index.stat().st_size // 8) + (d / '00000000000000001423.timeindex').stat().st_size // 12} entries, "
        f"{(d / '00000000000000001423.log').stat().st_size} log bytes): 1 problem in 1 file."
    )


def test_usage_errors_exit_2(tmp_path: Path) -> None:
    assert verify(str(tmp_path / "missing"))[0] == 2
    (tmp_path / "notes.txt").write_text("x")
    assert verify(str(tmp_path / "notes.txt"))[0] == 2
    assert verify(str(tmp_path))[0] == 2  # no partition directory anywhere below
    # no path: the current directory, as every command reads (tests/test_cli_rules.py)


def test_every_kind_is_documented() -> None:
    page = (Path(__file__).resolve().parents[1] / "man" / "kdump-verify-index.1").read_text()
    for kind in PROBLEM_KINDS:
        assert kind.replace("-", r"\-") in page, kind


def test_progress_bar_only_on_a_terminal(tmp_path: Path) -> None:
    import os
    import subprocess
    import sys

    d = _copy_segment(tmp_path)
    code = (
        "import sys, kdump.commands.verify_index as v; v.PROGRESS_THRESHOLD = 0; from kdump.cli import main; "
        "sys.argv = ['kdump', 'verify-index', sys.argv[1]]; main()"
    )
    primary, secondary = os.openpty()
    try:
        tty = subprocess.run([sys.executable, "-c", code, str(d)], stdout=subprocess.PIPE, stderr=secondary)
        os.close(secondary)
        shown = b""
        while True:
            try:
                chunk = os.read(primary, 65536)
            except OSError:
                break
            if not chunk:
                break
            shown += chunk
    finally:
        os.close(primary)
    piped = subprocess.run([sys.executable, "-c", code, str(d)], capture_output=True)
    assert tty.returncode == piped.returncode == 0
    assert tty.stdout == piped.stdout and piped.stderr == b""
    assert b"verifying" in shown
