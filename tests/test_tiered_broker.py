"""A real broker's tiered partition (``tests/fixtures/tiered-broker``, made by ``python -m tests.tiered_broker``:
a Kafka 4.0 KRaft broker with ``remote.log.storage.system.enable``, Kafka's own ``LocalTieredStorage`` as the
RemoteStorageManager and ``TopicBasedRemoteLogMetadataManager``; see that module) read by kdump.

The oracle is what the broker wrote and answered: the remote objects as LocalTieredStorage named them, the
``__remote_log_metadata`` records its RemoteLogManager produced, and the offsets the broker gave to ListOffsets
(earliest, latest, earliest-local, latest-tiered) just before it stopped. The healthy partition must give no
problem; ``pytest -m broker`` with ``KDUMP_BROKER_ORACLE=1`` and ``KDUMP_KAFKA_SOURCE`` (a Kafka 4.0.0 source
tree) makes a new one with a live broker and judges it the same way."""

from __future__ import annotations

import json
import os
import re
import shutil
from pathlib import Path

import pytest
from click.testing import CliRunner

from kdump.cli.commands import cli

FIXTURE = Path(__file__).resolve().parent / "fixtures" / "tiered-broker"
#: LocalTieredStorage's object names: RemoteLogSegmentFileset (startOffset-segmentId.suffix)
FILESET = re.compile(r"^(\d{20})-([A-Za-z0-9_-]{22})\.(\w+)$")


def _broker(root: Path) -> dict:
    return json.loads((root / "broker.json").read_text())


def _remote_filesets(root: Path, leaving: set[str] = frozenset()) -> dict[int, str]:  # type: ignore[assignment]
    """Start offset -> segment id of every .log LocalTieredStorage left in the remote root (but ``leaving``)."""
    found = {}
    for path in (root / "remote").rglob("*.log"):
        m = FILESET.match(path.name)
        assert m, path
        if m.group(2) not in leaving:
            found[int(m.group(1))] = m.group(2)
    return found


def _tiered_rows(root: Path, *extra: str) -> tuple[int, str, list[list[str]]]:
    result = CliRunner().invoke(
        cli,
        [
            "tiered",
            str(root / "local" / "tiered-0"),
            "--remote-root",
            str(root / "remote"),
            *extra,
        ],
    )
    rows = [line.split() for line in result.stdout.splitlines() if line.startswith(("remote ", "local "))]
    return result.exit_code, result.stdout, rows


def dangling_copies(rows: list[list[str]]) -> list[list[str]]:
    """Remote segments left in COPY_SEGMENT_STARTED whose offsets a COPY_SEGMENT_FINISHED segment holds: a copy
    the broker was stopped in the middle of (the restart between the producing rounds) and made again under a
    new segment id after it.  Kafka 4.0 leaves it to retention (RemoteLogManager counts and deletes
    COPY_SEGMENT_STARTED segments with the others); kdump names it ``unfinished``, which it is."""
    finished = {(r[1], r[2]) for r in rows if r[0] == "remote" and r[4] == "COPY_SEGMENT_FINISHED"}
    return [
        r for r in rows if r[0] == "remote" and r[4] == "COPY_SEGMENT_STARTED" and (r[1], r[2]) in finished
    ]


def judge(root: Path) -> None:
    """kdump tiered --deep over the broker's partition agrees with what the broker wrote and answered.  The one
    problem a healthy run may leave (depending on when the restart stopped the broker) is a dangling copy."""
    broker = _broker(root)
    offsets = broker["list_offsets"]
    code, out, rows = _tiered_rows(root, "--deep")
    dangling = dangling_copies(rows)
    problems = [line for line in out.splitlines() if ": unfinished: " in line or line.startswith("/")]
    assert len(problems) == len(dangling), out
    assert all(any(r[5] in line and "COPY_SEGMENT_STARTED" in line for r in dangling) for line in problems), (
        out
    )
    assert code == (1 if dangling else 0), out
    if not dangling:
        assert "no problems found" in out
    rows = [r for r in rows if r not in dangling]
    remote = [r for r in rows if r[0] == "remote"]
    local = [r for r in rows if r[0] == "local"]
    # the remote segments are LocalTieredStorage's filesets, with the ids it named them by
    assert {int(r[1]): r[5] for r in remote} == _remote_filesets(root, {r[5] for r in dangling})
    assert all(r[4] == "COPY_SEGMENT_FINISHED" for r in remote)
    # ... from the broker's log start offset (retention deleted the older ones) to its latest-tiered offset
    assert int(remote[0][1]) == offsets["earliest"] > 0
    assert int(remote[-1][2]) == offsets["latest-tiered"]
    for before, after in zip(remote, remote[1:], strict=False):
        assert int(after[1]) == int(before[2]) + 1  # one log: no gap, no overlap
    # the local part starts at the broker's earliest-local offset, inside or right after the remote part
    assert int(local[0][1]) == offsets["earliest-local"] <= offsets["latest-tiered"] + 1
    assert broker["topic_id"] in out.splitlines()[0]
    # verify --remote-root: the healthy partition, remote checks and one-log checks, gives no problem
    verify = CliRunner().invoke(
        cli, ["verify", str(root / "local"), "--remote-root", str(root / "remote"), "--json"]
    )
    summary = json.loads(verify.stdout.splitlines()[-1])
    expected = {"remote-unfinished": len(dangling)} if dangling else {}
    assert (summary["kinds"], summary["tieredPartitions"]) == (expected, 1), verify.stdout
    assert verify.exit_code == (1 if dangling else 0)
    assert summary["remoteSegments"] == len(remote) + len(dangling)
    # ls --remote-root: the one log spans the broker's earliest to latest offsets
    ls = CliRunner().invoke(
        cli, ["ls", str(root / "local" / "tiered-0"), "--remote-root", str(root / "remote"), "--json"]
    )
    row = json.loads(ls.stdout)
    assert (row["logStartOffset"], row["logEndOffset"]) == (offsets["earliest"], offsets["latest"])
    assert row["anomalies"] == []


@pytest.mark.skipif(not FIXTURE.is_dir(), reason="tests/fixtures/tiered-broker is absent")
def test_the_real_brokers_tiered_partition_is_one_log_without_problems() -> None:
    judge(FIXTURE)


INTERRUPTED = FIXTURE.parent / "tiered-broker-interrupted"


@pytest.mark.skipif(not INTERRUPTED.is_dir(), reason="tests/fixtures/tiered-broker-interrupted is absent")
def test_a_copy_the_broker_was_stopped_in_is_found_as_unfinished() -> None:
    """A second run of the same recipe, where the broker's SIGTERM (the restart between rounds) came between
    LocalTieredStorage writing segment 147-297 and the COPY_SEGMENT_FINISHED record: the broker left it in
    COPY_SEGMENT_STARTED (its objects complete) and copied the segment again under a new id after the restart.
    A real dangling copy: verify and tiered name it (remote-unfinished), and nothing else."""
    judge(INTERRUPTED)
    _code, out, rows = _tiered_rows(INTERRUPTED)
    dangling = dangling_copies(rows)
    assert [(r[1], r[2]) for r in dangling] == [("147", "297")]


@pytest.mark.skipif(not FIXTURE.is_dir(), reason="tests/fixtures/tiered-broker is absent")
def test_the_fixture_is_what_a_broker_tiered() -> None:
    """The recorded run is a tiered one: remote segments deleted by retention (earliest > 0), segments both in
    remote storage and still local, transactional data (a .txnindex), more than one leader epoch."""
    broker = _broker(FIXTURE)
    offsets = broker["list_offsets"]
    assert 0 < offsets["earliest"] < offsets["earliest-local"] <= offsets["latest-tiered"] < offsets["latest"]
    assert list((FIXTURE / "remote").rglob("*.txnindex"))
    epochs = (FIXTURE / "local" / "tiered-0" / "leader-epoch-checkpoint").read_text().split("\n")
    assert int(epochs[1]) >= 2  # version, count, then one line per epoch
    assert (FIXTURE / "local" / broker["metadata_partition"] / "00000000000000000000.log").stat().st_size > 0


@pytest.mark.broker
@pytest.mark.skipif(
    os.environ.get("KDUMP_BROKER_ORACLE") != "1" or not os.environ.get("KDUMP_KAFKA_SOURCE"),
    reason="set KDUMP_BROKER_ORACLE=1 and KDUMP_KAFKA_SOURCE (a Kafka 4.0.0 source tree) to run a tiered broker",
)
def test_a_live_tiered_broker_agrees(tmp_path: Path) -> None:
    from tests.broker_oracle.cluster import unavailable_reason
    from tests.tiered_broker.__main__ import main

    reason = unavailable_reason("4.0.0") or (None if shutil.which("javac") else "javac is not installed")
    if reason is not None:
        pytest.skip(reason)
    out = tmp_path / "tiered-broker"
    assert main(["--kafka-source", os.environ["KDUMP_KAFKA_SOURCE"], "--out", str(out)]) == 0
    judge(out)


@pytest.mark.skipif(not FIXTURE.is_dir(), reason="tests/fixtures/tiered-broker is absent")
@pytest.mark.parametrize("offset", [147, 150, 400, 722])
def test_find_offset_names_the_remote_object_and_byte(offset: int, tmp_path: Path) -> None:
    """Below the local log start (723) an offset is in remote storage: find --remote-root names the remote
    .log object (by its start offset) and the batch there, the line kdump files prints for that object (itself
    byte-identical to kafka-dump-log.sh on segments)."""
    import io

    from click.testing import CliRunner

    from kdump.cli import files, run_guarded
    from kdump.cli.commands import cli

    partition = str(FIXTURE / "local" / "tiered-0")
    result = CliRunner().invoke(
        cli, ["find", "--offset", str(offset), "--remote-root", str(FIXTURE / "remote"), partition]
    )
    assert result.exit_code == 0, result.output
    lines = result.stdout.splitlines()
    segment = lines[0].split()[1]
    assert segment.startswith(str(FIXTURE / "remote")) and segment.endswith(".log")
    start = int(Path(segment).name[:20])
    assert start <= offset
    copy = tmp_path / f"{start:020d}.log"  # the fileset name is not one kafka-dump-log.sh takes
    copy.write_bytes(Path(segment).read_bytes())
    out = io.BytesIO()
    run_guarded(lambda o, e: files.run(["--files", str(copy)], o, e), out, io.BytesIO())
    assert lines[-1] in out.getvalue().decode().splitlines()
    first, last = (int(lines[-1].split()[i]) for i in (1, 3))
    assert first <= offset <= last
    # without the remote root: below the log start
    assert CliRunner().invoke(cli, ["find", "--offset", str(offset), partition]).exit_code == 1
