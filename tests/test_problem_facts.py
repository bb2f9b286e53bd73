"""Problems as facts (kind, file, byte position, data; words only in the sinks): what the reporting commands
and ``ls`` say with ``--json`` is checked against what produced the damage (the byte we changed, the CRC-32C
library's checksum of the batch, the permissions we took away), and every kind is documented."""

from __future__ import annotations

import json
import os
import re
import shutil
import struct
import subprocess
import sys
from pathlib import Path

import crc32c
import pytest
from click.testing import CliRunner

from kdump import problem as pk
from kdump.cli import cli
from kdump.errors import CorruptRecordError, DecompressionLimitError, KdumpError, UnreadableFileError
from kdump.problem import problem, problem_of
from kdump.render.problem_text import details, sentence, sentences
from tests.broker_oracle.judge import extract

ROOT = Path(__file__).resolve().parent.parent
SCENARIOS = ROOT / "tests" / "fixtures" / "broker_oracle"
SETPRIV = shutil.which("setpriv")


def run(*args: str) -> tuple[int, str]:
    result = CliRunner().invoke(cli, list(args))
    return result.exit_code, result.output


def _broker_partition(tmp_path: Path, name: str = "plain-0") -> Path:
    """A partition a real Kafka 4.0 broker wrote (the broker oracle's recorded scenario)."""
    return extract(SCENARIOS / "4.0.0-clean-node1.tar.xz", tmp_path / "x") / name


def test_kinds_are_named_in_the_manual() -> None:
    kinds = {v for k, v in vars(pk).items() if k.isupper() and isinstance(v, str)}
    text = (ROOT / "man" / "kdump.1").read_text()
    section = text[text.index(".SH PROBLEM OBJECTS") : text.index(".SH SHELL COMPLETION")]
    named = set(re.findall(r"[a-z]+(?:\\-[a-z]+)*", section))
    assert {k.replace("-", "\\-") for k in kinds} <= named


def test_an_error_keeps_its_kind_place_and_message() -> None:
    e = CorruptRecordError("Record is corrupt (stored crc = 1)", path="a/0.log", position=61)
    p = problem_of(e)
    assert (p.kind, p.file, p.position, p["message"]) == ("corrupt-record", "a/0.log", 61, e.message)
    assert sentence(p) == e.describe()
    assert problem_of(DecompressionLimitError("too big")).kind == "decompression-limit"
    assert problem_of(KdumpError("x"), "f").kind == "error"
    u = problem_of(UnreadableFileError("Permission denied", path="a/0.log"))
    assert u.unreadable and sentence(u) == "a/0.log: cannot read it: Permission denied"
    o = problem_of(PermissionError(13, "Permission denied", "a/1.log"))
    assert o.unreadable and sentence(o) == "a/1.log: cannot read it: Permission denied"


def test_the_same_problem_twice_is_one_sentence_and_one_object() -> None:
    x = problem(pk.NOT_A_NUMBER, name="min.compaction.lag.ms", value="ten", used=-1)
    y = problem(pk.NOT_A_NUMBER, name="min.compaction.lag.ms", value="ten", used=-1)
    assert sentences([x, y]) == ["min.compaction.lag.ms='ten' is not a number: -1 used"]
    assert details([x, y]) == [
        {"kind": "not-a-number", "data": {"name": "min.compaction.lag.ms", "value": "ten", "used": -1}}
    ]


@pytest.mark.skipif(not SCENARIOS.is_dir(), reason="the broker oracle's recorded scenarios are absent")
def test_diff_names_the_damaged_batch_by_file_position_and_both_crcs(tmp_path: Path) -> None:
    src = _broker_partition(tmp_path)
    a = shutil.copytree(src, tmp_path / "a" / "plain-0")
    b = shutil.copytree(src, tmp_path / "b" / "plain-0")
    log = sorted(b.glob("*.log"))[0]
    raw = bytearray(log.read_bytes())
    # the second batch: walk the v2 framing by hand (base offset 8 bytes, length 4, then length bytes)
    pos = struct.unpack_from(">i", raw, 8)[0] + 12
    base = struct.unpack_from(">q", raw, pos)[0]
    (length,) = struct.unpack_from(">i", raw, pos + 8)
    last = base + struct.unpack_from(">i", raw, pos + 23)[0]
    raw[pos + 12 + length - 1] ^= 0x5A
    log.write_bytes(bytes(raw))
    stored = struct.unpack_from(">I", raw, pos + 17)[0]
    computed = crc32c.crc32c(bytes(raw[pos + 21 : pos + 12 + length]))
    code, out = run("diff", "--json", str(a), str(b))
    assert code == 1
    copies = json.loads(out)["copies"]
    assert copies[0]["problemDetails"] == []
    [found] = [d for d in copies[1]["problemDetails"] if d["kind"] == "corrupt-batch"]
    assert found == {
        "kind": "corrupt-batch",
        "file": str(log),
        "position": pos,
        "data": {"baseOffset": base, "lastOffset": last, "stored": stored, "computed": computed},
    }
    assert (
        f"{log}: byte {pos}: offsets {base}..{last}: stored CRC {stored}" in copies[1]["problemMessages"][0]
    )


@pytest.mark.skipif(not SCENARIOS.is_dir(), reason="the broker oracle's recorded scenarios are absent")
@pytest.mark.skipif(
    os.geteuid() == 0 and SETPRIV is None, reason="root without setpriv cannot drop its override"
)
def test_an_unreadable_segment_is_one_unreadable_fact_in_every_reporting_command(tmp_path: Path) -> None:
    part = _broker_partition(tmp_path)
    log = sorted(part.glob("*.log"))[0]
    log.chmod(0)
    prefix = [SETPRIV, "--bounding-set", "-dac_override,-dac_read_search"] if os.geteuid() == 0 else []
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    try:
        for command, field in (
            ("txn", "problemDetails"),
            ("retention", "problemDetails"),
            ("ls", "anomalyDetails"),
        ):
            result = subprocess.run(
                [*prefix, sys.executable, "-m", "kdump", command, "--json", str(part)],
                capture_output=True,
                text=True,
                env=env,
            )
            if "Permission denied" not in result.stdout + result.stderr:
                pytest.skip("this process can read files without permission (capabilities not dropped)")
            [obj] = [json.loads(line) for line in result.stdout.splitlines()]
            unreadable = [d for d in obj[field] if d["kind"] == "unreadable"]
            assert result.returncode == 1, (command, result.stdout, result.stderr)
            assert [d["file"] for d in unreadable] == [str(log)], (command, obj[field])
            assert unreadable[0]["data"] == {"reason": "Permission denied"}
            assert (
                f"{log}: cannot read it: Permission denied"
                in obj[field.replace("Details", "Messages") if field == "problemDetails" else "anomalies"]
            )
    finally:
        log.chmod(0o644)


@pytest.mark.skipif(not SCENARIOS.is_dir(), reason="the broker oracle's recorded scenarios are absent")
def test_find_transactional_id_places_a_damaged_coordinator_batch(tmp_path: Path) -> None:
    """A batch of ``__transaction_state`` whose attributes name compression type 7 (Kafka:
    ``CompressionType.forId`` throws): the lookup names the segment and the batch's byte position."""
    data = _broker_partition(tmp_path, "")
    log = data / "__transaction_state-0" / "00000000000000000000.log"
    raw = bytearray(log.read_bytes())
    pos = struct.unpack_from(">i", raw, 8)[0] + 12  # the second batch
    raw[pos + 22] |= 7  # the low byte of the attributes: the codec bits
    log.write_bytes(bytes(raw))
    code, out = run("find", "--transactional-id", "tx-400-0", "--json", str(data))
    obj = json.loads(out.splitlines()[0])
    assert obj["partition"] == 0
    [found] = obj["problemDetails"]
    assert (found["kind"], found["file"], found["position"]) == ("invalid-record", str(log), pos)
    assert "compression type id: 7" in found["data"]["message"]
