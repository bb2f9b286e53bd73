"""``kdump files`` on checkpoint and state files: parsed (a deliberate difference from Kafka), checked against an
independent reading of each file, and malformed files as one error line naming file, byte and line."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from kdump.storage.quorum_state import QuorumState, encode_quorum_state
from tests.corpus import CORPUS, FIXTURE_CORPUS, corpus_available
from tests.corpus import STATE_FILES as STATE_FILE_NAME_SET
from tests.replay import run_kdump
from tests.state_file_oracle import expected_dump

ROOT = CORPUS if corpus_available() else FIXTURE_CORPUS
STATE_FILE_NAMES = tuple(sorted(STATE_FILE_NAME_SET))
STATE_FILES = sorted(
    p for name in STATE_FILE_NAMES for p in ROOT.glob(f"**/{name}") if "damaged" not in p.parts
)


def test_every_kind_is_present() -> None:
    assert {p.name for p in STATE_FILES} >= set(STATE_FILE_NAMES) - (
        set() if corpus_available() else {"quorum-state", "leader-epoch-checkpoint", "partition.metadata"}
    )


@pytest.mark.parametrize("path", STATE_FILES, ids=lambda p: str(p.relative_to(ROOT)))
def test_state_file_dump(path: Path) -> None:
    code, out, err = run_kdump(["--files", str(path)])
    assert (code, err) == (0, b"")
    assert out.decode() == f"Dumping {path}\n" + expected_dump(path)


def test_several_files_in_one_run(tmp_path: Path) -> None:
    a = tmp_path / "leader-epoch-checkpoint"
    a.write_text("0\n2\n0 0\n3 150\n")
    b = tmp_path / "log-start-offset-checkpoint"
    b.write_text("0\n1\norders 7 100\n")
    code, out, err = run_kdump(["--files", f"{a},{b}"])
    assert (code, err) == (0, b"")
    assert out.decode() == (
        f"Dumping {a}\nLeader epoch checkpoint version: 0 entries: 2\nepoch: 0 startOffset: 0\n"
        f"epoch: 3 startOffset: 150\nDumping {b}\nOffset checkpoint version: 0 entries: 1\n"
        "topic: orders partition: 7 offset: 100\n"
    )


def test_quorum_state_version_0(tmp_path: Path) -> None:
    path = tmp_path / "quorum-state"
    path.write_bytes(
        encode_quorum_state(
            QuorumState(0, 2, 7, -1, cluster_id="abc", applied_offset=-1, current_voters=(1, 2, 3))
        )
    )
    assert json.loads(path.read_text())["currentVoters"] == [{"voterId": 1}, {"voterId": 2}, {"voterId": 3}]
    code, out, _ = run_kdump(["--files", str(path)])
    assert code == 0
    assert out.decode() == f"Dumping {path}\n" + expected_dump(path)


def test_empty_checkpoint(tmp_path: Path) -> None:
    path = tmp_path / "cleaner-offset-checkpoint"
    path.write_bytes(b"")
    assert run_kdump(["--files", str(path)]) == (0, f"Dumping {path}\n{path} is empty.\n".encode(), b"")


@pytest.mark.parametrize(
    ("name", "content", "where"),
    [
        ("replication-offset-checkpoint", b"0\n2\nfoo 0 1\nx\n", b"byte 12: line 4: Malformed line"),
        ("recovery-point-offset-checkpoint", b"1\n0\n", b"byte 0: line 1:"),
        ("leader-epoch-checkpoint", b"0\n1\n0 zero\n", b"byte 4: line 3:"),
        ("quorum-state", b"{not json", b"line 1:"),
        ("partition.metadata", b"version: 0\n", b"line 2:"),
        ("meta.properties", b"version=x\n", b"line"),
    ],
)
def test_malformed_state_file(tmp_path: Path, name: str, content: bytes, where: bytes) -> None:
    path = tmp_path / name
    path.write_bytes(content)
    code, out, err = run_kdump(["--files", str(path)])
    assert code == 1
    assert out == f"Dumping {path}\n".encode()
    assert err.startswith(f"kdump: {path}: ".encode()) and err.count(b"\n") == 1
    assert where in err, err


def test_unknown_dotless_file_is_one_error_line(tmp_path: Path) -> None:
    path = tmp_path / "somefile"
    path.write_text("0\n")
    code, out, err = run_kdump(["--files", str(path)])
    assert code == 1 and out == f"Dumping {path}\n".encode()
    assert err.startswith(f"kdump: {path}: ".encode()) and err.count(b"\n") == 1
