"""Log directories and partitions are recognised by what they hold, never by their names: the layouts of
Kafka's multi-broker quickstart (``/tmp/kafka-logs-1``), Docker images (``data/kafka-1``), Strimzi
(``data-0/kafka-log0``), JBOD, ZooKeeper-era and KRaft brokers, built here file by file.  And a time index
written by the rule brokers followed before Kafka 3.8 (KAFKA-16310) is accepted, and used by ``kdump find``."""

from __future__ import annotations

import json
import shutil
import struct
import subprocess
import sys
from pathlib import Path

import pytest
from click.testing import CliRunner
from kafka.record.default_records import DefaultRecordBatchBuilder

from kdump.analysis.index_verification import verify_segment
from kdump.cli import cli
from kdump.storage.local_log import LocalLog, find_partition_dirs, is_log_dir, is_partition_dir
from tests.partition_builder import build_partition

KAFKA_TOOL = Path(__file__).resolve().parents[2] / "shared" / "kafka-4.0.0" / "kafka"


def run(*args: str) -> tuple[int, str]:
    result = CliRunner().invoke(cli, list(args))
    return result.exit_code, result.output


def _log_dir(path: Path, *, kraft: bool, node: int = 1) -> Path:
    """A broker's log directory: meta.properties (v0 for ZooKeeper, v1 for KRaft) and the checkpoints."""
    path.mkdir(parents=True)
    if kraft:
        meta = f"version=1\ncluster.id=q1Sh-9_ISia_zwGINzRvyQ\nnode.id={node}\ndirectory.id=AAAAAAAAAAAAAAAAAAAAAQ\n"
    else:
        meta = f"version=0\nbroker.id={node}\ncluster.id=q1Sh-9_ISia_zwGINzRvyQ\n"
    (path / "meta.properties").write_text("#\n#Mon Nov 23 10:00:00 UTC 2026\n" + meta)
    for name in (
        "recovery-point-offset-checkpoint",
        "replication-offset-checkpoint",
        "log-start-offset-checkpoint",
    ):
        (path / name).write_text("0\n0\n")
    (path / "cleaner-offset-checkpoint").write_text("0\n0\n")
    return path


def _partitions(log_dir: Path, names: list[str]) -> list[Path]:
    out = []
    for name in names:
        build_partition(str(log_dir / name), 2, batches_per_segment=3, records_per_batch=2)
        (log_dir / name / "leader-epoch-checkpoint").write_text("0\n1\n0 0\n")
        out.append(log_dir / name)
    return out


LAYOUTS = {
    # name: (log directories relative to the root, KRaft?)
    "quickstart": (["tmp/kafka-logs-1", "tmp/kafka-logs-2"], False),
    "docker": (["data/kafka-1"], True),
    "strimzi": (["data-0/kafka-log0"], True),
    "jbod": (["disk-1/kafka-logs-0", "disk-2/kafka-logs-0"], False),
}


@pytest.mark.parametrize("layout", LAYOUTS)
def test_layouts_named_like_partitions(tmp_path: Path, layout: str) -> None:
    dirs, kraft = LAYOUTS[layout]
    expected = []
    for i, rel in enumerate(dirs):
        log_dir = _log_dir(tmp_path / rel, kraft=kraft, node=i + 1)
        expected += _partitions(log_dir, [f"orders-{i}", f"pay-ments-{i + 10}"])
        if kraft and i == 0:
            meta = log_dir / "__cluster_metadata-0"
            build_partition(str(meta), 1, batches_per_segment=2, records_per_batch=1)
            (meta / "quorum-state").write_text('{"leaderId":1,"leaderEpoch":5,"votedId":-1,"data_version":0}')
            expected.append(meta)
        assert is_log_dir(log_dir) and not is_partition_dir(log_dir)
    found = sorted(Path(d) for d in find_partition_dirs([tmp_path]))
    assert found == sorted(expected)
    # The log directory itself, given as the argument, is walked, not taken for a partition.
    first = tmp_path / dirs[0]
    assert sorted(Path(d) for d in find_partition_dirs([first])) == sorted(
        p for p in expected if p.parent == first
    )

    code, out = run("verify-index", "--json", str(tmp_path / dirs[0].split("/")[0]))
    summary = json.loads(out.splitlines()[-1])
    assert code == 0, out
    assert summary["partitions"] == len(
        [p for p in expected if str(p).startswith(str(tmp_path / dirs[0].split("/")[0]))]
    )
    assert summary["segments"] > 0 and summary["problems"] == 0

    code, out = run("verify", "--json", str(first))
    objs = [json.loads(line) for line in out.splitlines()]
    assert code == 0, out
    assert objs[-1]["partitions"] == len([p for p in expected if p.parent == first])
    assert objs[-1]["checkpointValues"] == 0 and objs[-1]["unchecked"] == 0  # a log directory: compared

    code, out = run("ls", "--json", str(first))
    assert code == 0, out
    listed = {(o["topic"], o["partition"]) for o in map(json.loads, out.splitlines())}
    assert ("orders", 0) in listed and ("pay-ments", 10) in listed

    code, out = run("rebuild-index", "--dry-run", "--verbose", str(first))  # --verbose names every file
    assert code == 0, out
    assert "orders-0" in out


def test_zookeeper_era_partition_named_like_nothing(tmp_path: Path) -> None:
    """A partition directory found by its files, whatever its name (a copy renamed for a case file, say)."""
    log_dir = _log_dir(tmp_path / "kafka-logs", kraft=False)
    part = log_dir / "evidence"
    build_partition(str(part), 1, batches_per_segment=2, records_per_batch=2)
    assert [Path(d) for d in find_partition_dirs([tmp_path])] == [part]


def test_empty_directory_named_like_a_partition_is_not_one(tmp_path: Path) -> None:
    (tmp_path / "orders-0").mkdir()
    (tmp_path / "dbus-1").mkdir()
    (tmp_path / "dbus-1" / "session.conf").write_text("<busconfig/>\n")
    assert list(find_partition_dirs([tmp_path])) == []


@pytest.mark.parametrize("command", ["verify", "verify-index", "ls", "rebuild-index"])
def test_nothing_kafka_like_is_a_usage_error(tmp_path: Path, command: str) -> None:
    (tmp_path / "polkit-1").mkdir()
    (tmp_path / "polkit-1" / "rules.d").mkdir()
    (tmp_path / "X11-7").mkdir()
    (tmp_path / "X11-7" / "xorg.conf").write_text("x\n")
    result = CliRunner().invoke(cli, [command, str(tmp_path)])
    assert result.exit_code == 2
    assert "no Kafka data found" in result.output


# -- time indexes written before Kafka 3.8 ---------------------------------------------------------------------

#: Timestamps of the records of each batch: the max is not on the last record, and in the second batch the max
#: is held by two records (Kafka 3.7 keeps the first: ``record.timestamp() > maxBatchTimestamp``).
BATCHES = [
    [1000, 1500, 1200],
    [1600, 1900, 1700, 1900],
    [2000, 2100],
    [2500, 2400, 2300],
]


def _build_pre_38_segment(directory: Path, *, rule: str) -> Path:
    """A segment of uncompressed batches encoded by kafka-python, with the indexes a leader running Kafka 3.7
    writes for them at ``index.interval.bytes`` 1 (an entry per append): the offset index names each batch's
    last offset at its position (``LogSegment.append``); the time index names, with ``rule="pre-3.8"``, the
    offset of the first record holding the batch's max timestamp (``LogValidator.assignOffsetsNonCompressed``
    in 3.7), with ``rule="3.8"`` the batch's last offset; an entry only when the max timestamp so far grows
    (``TimeIndex.maybeAppend``)."""
    directory.mkdir(parents=True)
    log = bytearray()
    offset_entries, time_entries = [], []
    offset = 0
    max_so_far = -1
    for timestamps in BATCHES:
        builder = DefaultRecordBatchBuilder(2, 0, 0, -1, -1, -1, 1 << 20)
        first_max, batch_max = None, -1
        for i, ts in enumerate(timestamps):
            builder.append(i, ts, b"k", b"v%d" % i, [])
            if ts > batch_max:
                batch_max, first_max = ts, offset + i
        data = bytearray(builder.build())
        struct.pack_into(">q", data, 0, offset)  # the base offset is outside the CRC
        last = offset + len(timestamps) - 1
        offset_entries.append((last, len(log)))
        if batch_max > max_so_far:
            max_so_far = batch_max
            time_entries.append((batch_max, first_max if rule == "pre-3.8" else last))
        log += data
        offset = last + 1
    (directory / "00000000000000000000.log").write_bytes(bytes(log))
    (directory / "00000000000000000000.index").write_bytes(
        b"".join(struct.pack(">ii", o, p) for o, p in offset_entries)
    )
    (directory / "00000000000000000000.timeindex").write_bytes(
        b"".join(struct.pack(">qi", t, o) for t, o in time_entries)
    )
    return directory


def test_pre_38_time_index_is_accepted_and_named(tmp_path: Path) -> None:
    part = _build_pre_38_segment(tmp_path / "old-0", rule="pre-3.8")
    (segment,) = LocalLog.scan(part).segments
    result = verify_segment(segment)
    assert result.problems == []
    assert result.time_index_rule == "pre-3.8"
    # Entries name offsets 1 (batch 0..2), 4 (batch 3..6, first of the two 1900s), 8 (batch 7..8), 9 (9..11).
    code, out = run("verify-index", str(part))
    assert code == 0, out
    assert "time-index rule pre-3.8" in out and "by the pre-3.8 rule: 1" in out
    code, out = run("verify-index", "--json", str(part))
    objs = [json.loads(line) for line in out.splitlines()]
    assert [o["rule"] for o in objs if o["type"] == "note"] == ["pre-3.8"]
    assert objs[-1]["preKafka38TimeIndexes"] == 1 and objs[-1]["problems"] == 0


def test_current_time_index_rule_is_named(tmp_path: Path) -> None:
    part = _build_pre_38_segment(tmp_path / "new-0", rule="3.8")
    (segment,) = LocalLog.scan(part).segments
    result = verify_segment(segment)
    assert result.problems == [] and result.time_index_rule == "last-offset"


def test_entry_on_a_record_that_is_not_the_first_max_is_a_problem(tmp_path: Path) -> None:
    part = _build_pre_38_segment(tmp_path / "old-0", rule="pre-3.8")
    index = part / "00000000000000000000.timeindex"
    data = bytearray(index.read_bytes())
    struct.pack_into(">i", data, 12 + 8, 5)  # entry 1: offset 4 -> 5 (the 1700 record, not a max)
    index.write_bytes(bytes(data))
    (segment,) = LocalLog.scan(part).segments
    problems = verify_segment(segment).problems
    assert [(p.kind, p.get("entry")) for p in problems] == [("offset-mismatch", 1)]


def test_find_timestamp_trusts_a_pre_38_index(tmp_path: Path) -> None:
    part = _build_pre_38_segment(tmp_path / "old-0", rule="pre-3.8")
    code, out = run("find", "--json", "--timestamp", "2050", str(part))
    assert code == 0, out
    obj = json.loads(out)
    assert obj["offset"] == 8  # the first record at or after 2050 (timestamps 2000, 2100)
    assert obj["notes"] == []  # not "does not match the log: scanned from the first byte instead"
    assert obj["timeIndexEntry"]["offset"] == 4  # the pre-3.8 entry (1900, 4) was used


@pytest.mark.skipif(
    not KAFKA_TOOL.exists() or shutil.which("java") is None,
    reason="the Kafka 4.0 tool or Java is not installed",
)
def test_files_verify_index_only_stays_kafkas_text_on_a_pre_38_index(tmp_path: Path) -> None:
    part = _build_pre_38_segment(tmp_path / "old-0", rule="pre-3.8")
    index = str(part / "00000000000000000000.timeindex")
    args = ["--files", index, "--verify-index-only"]
    real = subprocess.run([str(KAFKA_TOOL), "kafka-dump-log.sh", *args], capture_output=True, timeout=120)
    ours = subprocess.run([sys.executable, "-m", "kdump", "files", *args], capture_output=True)
    assert ours.stdout == real.stdout
    assert ours.returncode == real.returncode
