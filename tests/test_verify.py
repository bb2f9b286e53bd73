"""``kdump verify``: clean broker data passes, every damaged case of the corpus is found and named, and each
check of a partition's state (producer snapshots, .txnindex, checkpoints, leader epochs, segment names, offset
order) fires on a partition built here with exactly that damage."""

from __future__ import annotations

import json
import os
import shutil
import struct
from pathlib import Path

import pytest
from click.testing import CliRunner

from kdump.analysis.index_recovery import recover_indexes
from kdump.cli import cli
from kdump.commands import verify as verify_command
from kdump.storage.control_record import ControlRecordType
from kdump.storage.file_records import FileRecords
from kdump.storage.producer_snapshot import ProducerSnapshotEntry, encode_producer_snapshot
from tests.builder import SimpleRecord, build_end_txn_marker_batch, build_v2_batch
from tests.corpus import CORPUS, FIXTURE_CORPUS, corpus_available
from tests.damaged_cases import INDEX_DAMAGED

needs_corpus = pytest.mark.skipif(not corpus_available(), reason=f"reference corpus not found at {CORPUS}")
ROOTS = [pytest.param(FIXTURE_CORPUS, id="fixtures")] + (
    [pytest.param(CORPUS, id="corpus")] if corpus_available() else []
)


def run(*args: str) -> tuple[int, str]:
    result = CliRunner().invoke(cli, ["verify", *args])
    return result.exit_code, result.output


def objects(*args: str) -> tuple[int, list[dict]]:
    code, out = run("--json", *args)
    return code, [json.loads(line) for line in out.splitlines()]


def problems(objs: list[dict], root: Path) -> set[tuple[str, str]]:
    return {
        (str(Path(o["file"]).relative_to(root)), o["kind"])
        for o in objs
        if o["type"] == "problem" and o["kind"] != "missing-index"  # the case copies hold only what they need
    }


# -- the corpus ------------------------------------------------------------------------------------------------


@needs_corpus
@pytest.mark.parametrize("directory", ["data", "data-kafka39-zk", "synthetic-legacy"])
@pytest.mark.parametrize("deep", [False, True], ids=["shallow", "deep"])
def test_clean_broker_data_has_no_log_problems(directory: str, deep: bool) -> None:
    code, objs = objects(*(["--deep"] if deep else []), str(CORPUS / directory))
    found = [o for o in objs if o["type"] == "problem" and o["kind"] != "missing-index"]
    assert found == []
    summary = objs[-1]
    assert summary["type"] == "summary" and summary["batches"] > 0
    if directory == "data":
        assert code == 0  # real broker directories, whole: nothing missing either
        assert (
            summary["checkpointValues"] > 0 and summary["leaderEpochs"] > 0 and summary["kraftSnapshots"] > 0
        )
        assert summary["producerSnapshots"] > 0 and summary["txnIndexEntries"] > 0
    if deep:
        assert summary["records"] > 0


#: What CASES.tsv says was damaged, beyond the index cases (``test_verify_index.DAMAGED``): (file, kind).
LOG_DAMAGED = {
    "truncated-in-header": {("segments-0/00000000000000000000.log", "log")},
    "crc-flip-uncompressed": {("segments-0/00000000000000000000.log", "crc")},
    "crc-flip-compressed": {("codec-gzip-0/00000000000000000000.log", "crc")},
    "bad-magic": {("plain-0/00000000000000000000.log", "magic")},
    "garbage-tail": {("plain-0/00000000000000000000.log", "log")},
    "oversized-length": {("plain-0/00000000000000000000.log", "log")},
    "empty-log": set(),  # an empty segment is a valid one
    "snapshot-corrupt": {("idempotent-0/00000000000000000341.snapshot", "producer-snapshot")},
    "snapshot-truncated": {("idempotent-0/00000000000000000641.snapshot", "producer-snapshot")},
    "checkpoint-truncated": {
        ("__cluster_metadata-0/00000000000000001019-0000000005.checkpoint", "kraft-snapshot")
    },
}
#: Where the CRC and magic cases are, from CASES.tsv (batch base offset, or file position).
WHERE = {
    "crc-flip-uncompressed": ("offset", 46),
    "crc-flip-compressed": ("offset", 40),
    "bad-magic": ("position", 80),
    "oversized-length": ("position", 2468),
}


def test_every_case_of_cases_tsv_is_covered() -> None:
    cases = (FIXTURE_CORPUS / "damaged").iterdir()
    assert {c.name for c in cases if c.is_dir()} == set(LOG_DAMAGED) | set(INDEX_DAMAGED)


@pytest.mark.parametrize("case", sorted(set(LOG_DAMAGED) | set(INDEX_DAMAGED)))
@pytest.mark.parametrize("root", ROOTS)
def test_every_damaged_case_is_found(root: Path, case: str) -> None:
    case_dir = root / "damaged" / case
    code, objs = objects(str(case_dir))
    expected = LOG_DAMAGED.get(case, set()) | {(f, k) for f, k, _ in INDEX_DAMAGED.get(case, ())}
    assert problems(objs, case_dir) == expected
    assert code == (1 if any(o["type"] == "problem" for o in objs) else 0)
    if case in WHERE:
        field, value = WHERE[case]
        (hit,) = [o for o in objs if o["type"] == "problem" and o["kind"] != "missing-index"]
        assert hit[field] == value
    if case == "empty-log":
        assert objs[-1]["segments"] == 1 and objs[-1]["batches"] == 0


def test_deep_decodes_records_and_finds_the_broken_gzip_stream() -> None:
    case_dir = FIXTURE_CORPUS / "damaged" / "crc-flip-compressed"
    _, objs = objects("--deep", str(case_dir))
    assert {"crc", "decode"} <= {o["kind"] for o in objs if o["type"] == "problem"}
    _, shallow = objects(str(case_dir))
    assert "decode" not in {o["kind"] for o in shallow if o["type"] == "problem"}
    assert shallow[-1]["records"] is None


@pytest.mark.parametrize("root", ROOTS)
def test_indexes_only_is_verify_index(root: Path) -> None:
    runner = CliRunner()
    for args in ([str(root / "damaged")], ["--json", str(root / "damaged" / "index-zero-tail")]):
        a = runner.invoke(cli, ["verify", "--indexes-only", *args])
        b = runner.invoke(cli, ["verify-index", *args])
        assert (a.exit_code, a.output) == (b.exit_code, b.output)


def test_nothing_kafka_like(tmp_path: Path) -> None:
    (tmp_path / "dbus-1").mkdir()
    (tmp_path / "dbus-1" / "system.conf").write_text("<busconfig/>\n")
    code, out = run(str(tmp_path))
    assert code == 2 and "no Kafka data found" in out


# -- a partition built with every kind of state ------------------------------------------------------------------

TS = 1_700_000_000_000


def _write_partition(log_dir: Path) -> Path:
    """A log directory with one partition ``t-0``: a transaction of producer 7 (offsets 0..2) aborted at 3, an
    idempotent batch of producer 8 (4..5) under leader epoch 1; its .txnindex, a producer snapshot at 6, the
    leader-epoch-checkpoint and the log directory's checkpoints, all as a broker writes them."""
    log_dir.mkdir(parents=True)
    (log_dir / "meta.properties").write_text("version=0\nbroker.id=1\n")
    part = log_dir / "t-0"
    part.mkdir()
    batches = [
        build_v2_batch(
            [SimpleRecord(b"v%d" % i, timestamp=TS + i) for i in range(3)],
            base_offset=0,
            producer_id=7,
            producer_epoch=0,
            base_sequence=0,
            is_transactional=True,
        ),
        build_end_txn_marker_batch(
            ControlRecordType.ABORT,
            coordinator_epoch=0,
            producer_id=7,
            producer_epoch=0,
            base_offset=3,
            timestamp=TS + 3,
        ),
        build_v2_batch(
            [SimpleRecord(b"w%d" % i, timestamp=TS + 4 + i) for i in range(2)],
            base_offset=4,
            producer_id=8,
            producer_epoch=0,
            base_sequence=0,
            partition_leader_epoch=1,
        ),
    ]
    log = b"".join(batches)
    (part / "00000000000000000000.log").write_bytes(log)
    recovered = recover_indexes(FileRecords.from_bytes(log), 0, 4096)
    (part / "00000000000000000000.index").write_bytes(recovered.offset_index_bytes())
    (part / "00000000000000000000.timeindex").write_bytes(recovered.time_index_bytes())
    # AbortedTxn: version (int16), producer id, first offset, last offset (the marker), last stable offset
    (part / "00000000000000000000.txnindex").write_bytes(struct.pack(">hqqqq", 0, 7, 0, 3, 4))
    (part / "00000000000000000006.snapshot").write_bytes(
        encode_producer_snapshot(
            [
                ProducerSnapshotEntry(7, 0, 2, 2, 2, TS + 2, 0),
                ProducerSnapshotEntry(8, 0, 1, 5, 1, TS + 5, -1),
            ]
        )
    )
    (part / "leader-epoch-checkpoint").write_text("0\n2\n0 0\n1 4\n")
    for name, value in (
        ("recovery-point-offset-checkpoint", 6),
        ("replication-offset-checkpoint", 6),
        ("log-start-offset-checkpoint", 0),
    ):
        (log_dir / name).write_text(f"0\n1\nt 0 {value}\n")
    return part


def _kinds(log_dir: Path, *args: str) -> list[tuple[str, str]]:
    code, objs = objects(*args, str(log_dir))
    found = [(Path(o["file"]).name, o["kind"]) for o in objs if o["type"] == "problem"]
    assert code == (1 if found else 0)
    return found


def test_built_partition_is_clean(tmp_path: Path) -> None:
    _write_partition(tmp_path / "kafka-logs-1")
    code, objs = objects(str(tmp_path))
    assert code == 0, objs
    summary = objs[-1]
    assert (summary["producerSnapshots"], summary["txnIndexEntries"], summary["leaderEpochs"]) == (1, 1, 2)
    assert summary["checkpointValues"] == 3 and summary["unchecked"] == 0


def test_txnindex_without_its_marker_and_marker_without_entry(tmp_path: Path) -> None:
    part = _write_partition(tmp_path / "logs")
    (part / "00000000000000000000.txnindex").write_bytes(struct.pack(">hqqqq", 0, 7, 0, 2, 4))
    assert sorted(_kinds(tmp_path)) == [
        ("00000000000000000000.txnindex", "txn-index-mismatch"),  # no marker at 2
        ("00000000000000000000.txnindex", "txn-index-mismatch"),  # the marker at 3 has no entry
    ]


def test_producer_snapshot_contradicted_by_the_log(tmp_path: Path) -> None:
    part = _write_partition(tmp_path / "logs")
    (part / "00000000000000000006.snapshot").write_bytes(
        encode_producer_snapshot([ProducerSnapshotEntry(8, 3, 1, 5, 1, TS + 5, -1)])  # epoch 3, the log has 0
    )
    assert _kinds(tmp_path) == [("00000000000000000006.snapshot", "producer-snapshot")]
    os.rename(part / "00000000000000000006.snapshot", part / "00000000000000000009.snapshot")
    assert ("00000000000000000009.snapshot", "producer-snapshot") in _kinds(tmp_path)  # beyond the log end


@pytest.mark.parametrize(
    ("name", "value"),
    [
        ("recovery-point-offset-checkpoint", 7),
        ("replication-offset-checkpoint", 9),
        ("log-start-offset-checkpoint", 8),
    ],
)
def test_checkpoint_beyond_the_log_end(tmp_path: Path, name: str, value: int) -> None:
    _write_partition(tmp_path / "logs")
    (tmp_path / "logs" / name).write_text(f"0\n1\nt 0 {value}\n")
    assert _kinds(tmp_path) == [(name, "checkpoint")]


@pytest.mark.parametrize(
    "text",
    [
        "0\n2\n1 0\n0 4\n",  # epochs decrease
        "0\n2\n0 0\n1 9\n",  # epoch 1 starts beyond the log end (and after its first batch)
        "0\n1\n0 0\n",  # epoch 1 of the last batch is missing
    ],
)
def test_leader_epoch_checkpoint_against_the_log(tmp_path: Path, text: str) -> None:
    part = _write_partition(tmp_path / "logs")
    (part / "leader-epoch-checkpoint").write_text(text)
    kinds = _kinds(tmp_path)
    assert kinds and set(kinds) == {("leader-epoch-checkpoint", "leader-epoch")}


def test_segment_named_above_its_first_batch(tmp_path: Path) -> None:
    part = _write_partition(tmp_path / "logs")
    for suffix in (".log", ".index", ".timeindex", ".txnindex"):
        os.rename(part / f"00000000000000000000{suffix}", part / f"00000000000000000002{suffix}")
    kinds = {k for _, k in _kinds(tmp_path)}
    assert "segment-name" in kinds


def test_overlapping_segments_and_gaps(tmp_path: Path) -> None:
    part = _write_partition(tmp_path / "logs")
    second = build_v2_batch([SimpleRecord(b"x", timestamp=TS + 10)], base_offset=5, partition_leader_epoch=1)
    (part / "00000000000000000005.log").write_bytes(second)
    kinds = _kinds(tmp_path)
    assert ("00000000000000000005.log", "offset-order") in kinds  # offset 5 is in both segments
    assert ("00000000000000000000.log", "segment-name") in kinds  # the first runs into the second's offsets
    third = build_v2_batch([SimpleRecord(b"x", timestamp=TS + 10)], base_offset=9, partition_leader_epoch=1)
    (part / "00000000000000000005.log").unlink()
    (part / "00000000000000000009.log").write_bytes(third)
    for name in ("recovery-point-offset-checkpoint", "replication-offset-checkpoint"):
        (tmp_path / "logs" / name).write_text("0\n1\nt 0 10\n")
    code, objs = objects(str(tmp_path))
    assert any(o["type"] == "unchecked" and "offset gaps (6..8)" in o["message"] for o in objs)
    assert ("00000000000000000009.log", "offset-gap") in _kinds(tmp_path, "--gaps")


def test_a_crc_flip_in_a_built_segment(tmp_path: Path) -> None:
    part = _write_partition(tmp_path / "logs")
    log = part / "00000000000000000000.log"
    data = bytearray(log.read_bytes())
    data[-3] ^= 0x01  # inside the last batch's records
    log.write_bytes(bytes(data))
    code, objs = objects(str(tmp_path))
    (hit,) = [o for o in objs if o["type"] == "problem"]
    assert (hit["kind"], hit["offset"]) == ("crc", 4) and code == 1


def test_text_output(tmp_path: Path) -> None:
    _write_partition(tmp_path / "logs")
    code, out = run(str(tmp_path))
    assert code == 0
    assert out == (
        "Checked 1 partition: 1 segment (3 batches, "
        f"{(tmp_path / 'logs' / 't-0' / '00000000000000000000.log').stat().st_size} log bytes), 3 index files "
        "(2 entries), 1 producer snapshot, 1 .txnindex entry, 3 checkpoint values, 2 leader epochs: no problems "
        "found.\n"
    )


def test_many_partitions_over_a_process_pool_give_the_same_facts(tmp_path: Path, monkeypatch) -> None:
    for i in range(4):
        shutil.copytree(FIXTURE_CORPUS / "data" / "small-index-0", tmp_path / f"small-index-{i}")
    shutil.copytree(FIXTURE_CORPUS / "damaged" / "bad-magic" / "plain-0", tmp_path / "plain-0")
    _, sequential = run(str(tmp_path))
    monkeypatch.setattr(verify_command, "MIN_PARALLEL_BYTES", 0)
    monkeypatch.setenv("KDUMP_WORKERS", "2")
    _, parallel = run(str(tmp_path))
    assert parallel == sequential and "magic" in parallel


@pytest.mark.parametrize("root", ROOTS)
@pytest.mark.parametrize("deep", [False, True], ids=["shallow", "deep"])
def test_the_two_process_check_of_a_segment_finds_the_same(root: Path, deep: bool) -> None:
    """A big segment checked alone is split over two processes (log checks in a forked child, index checks
    here): on every segment of the damaged cases and a clean partition, the facts equal the one-pass check's."""
    from kdump.storage.local_log import LocalLog, find_partition_dirs

    compared = 0
    for directory in find_partition_dirs([str(root / "damaged")]):
        log = LocalLog.scan(directory)
        active = log.active_base_offset
        wanted = verify_command.snapshot_wanted_offsets(log)
        for segment in log.segments:
            task = (segment, deep, wanted, segment.base_offset == active)
            assert verify_command.split_segment_task(task) == verify_command.segment_task(task), (
                segment.log_path
            )
            compared += 1
    assert compared >= 16
