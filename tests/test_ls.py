"""``kdump ls``: every figure checked against the checkpoint files and against a full scan -- the real Kafka
tool's own batch lines for the corpus partitions, and the builder's known content for a synthetic one."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest
from click.testing import CliRunner

from kdump.cli import cli
from kdump.storage.compression import GZIP, NONE
from tests.builder import SimpleRecord, build_v2_batch
from tests.corpus import CORPUS, corpus_available

BATCH = re.compile(
    r"^baseOffset: (\d+) lastOffset: (\d+) count: (\d+) .*?producerId: (-?\d+) producerEpoch: (-?\d+) .*?"
    r"isTransactional: (\w+) isControl: (\w+) .*? (?:CreateTime|LogAppendTime|NoTimestampType): (-?\d+) .*?"
    r"compresscodec: (\w+)",
    re.M,
)


def ls(*args: str) -> tuple[int, str]:
    result = CliRunner().invoke(cli, ["ls", *args])
    return result.exit_code, result.output


def _checkpoint(path: Path) -> dict[tuple[str, int], int]:
    if not path.exists() or not path.read_text():
        return {}
    lines = path.read_text().splitlines()[2:]
    return {(t, int(p)): int(o) for t, p, o in (line.split() for line in lines)}


def _kafka_scan(partition: Path) -> dict:
    """The figures, from the real tool's shallow dump of every segment of the partition."""
    batches = []
    for log in sorted(partition.glob("*.log")):
        expected = CORPUS / "expected" / log.relative_to(CORPUS).with_name(log.name + ".default.txt")
        batches += BATCH.findall(expected.read_text())
    codecs, producers, open_txns, stamps = set(), set(), {}, []
    for base, _last, _count, pid, _epoch, txn, control, ts, codec in batches:
        codecs.add({"NONE": "none"}.get(codec, codec.lower()))
        if int(pid) >= 0:
            producers.add(int(pid))
            # Kafka's ProducerAppendInfo.append: a control batch ends its producer's transaction, a
            # transactional data batch opens one when none is open
            if control == "true":
                open_txns.pop(int(pid), None)
            elif txn == "true":
                open_txns.setdefault(int(pid), int(base))
        if int(ts) >= 0:
            stamps.append(int(ts))
    return {
        "batches": len(batches),
        "records": sum(int(b[2]) for b in batches),
        "logEndOffset": int(batches[-1][1]) + 1 if batches else None,
        "minTimestamp": min(stamps, default=None),
        "maxTimestamp": max(stamps, default=None),
        "codecs": sorted(codecs),
        "producers": sorted(producers),
        "openTransactions": sorted(open_txns.values()),
    }


@pytest.mark.skipif(not corpus_available(), reason=f"reference corpus not found at {CORPUS}")
def test_corpus_partitions_match_kafkas_scan_and_checkpoints() -> None:
    data = CORPUS / "data"
    code, out = ls("--json", str(data))
    assert code == 0
    objects = [json.loads(line) for line in out.splitlines()]
    assert len(objects) == len([d for d in data.iterdir() if d.is_dir()])
    hw = _checkpoint(data / "replication-offset-checkpoint")
    rp = _checkpoint(data / "recovery-point-offset-checkpoint")
    lso = _checkpoint(data / "log-start-offset-checkpoint")
    for o in objects:
        key = (o["topic"], o["partition"])
        partition = Path(o["directory"])
        assert o["type"] == "partition" and partition.name == f"{o['topic']}-{o['partition']}"
        assert o["highWatermark"] == hw.get(key) and o["recoveryPoint"] == rp.get(key)
        assert o["logStartOffsetCheckpoint"] == lso.get(key)
        bases = sorted(int(p.name.split(".")[0]) for p in partition.glob("*.log"))
        assert o["segments"] == len(bases)
        assert o["logStartOffset"] == max(lso.get(key, 0), bases[0])
        assert o["sizeBytes"] == sum(p.stat().st_size for p in partition.glob("*.log"))
        scan = _kafka_scan(partition)
        got = {k: o[k] for k in scan}
        got["openTransactions"] = [t["firstOffset"] for t in o["openTransactions"]]
        assert got == scan, partition.name
        assert o["anomalies"] == []


def _write_partition(root: Path) -> Path:
    part = root / "orders-3"
    part.mkdir(parents=True)
    records = [SimpleRecord(key=b"k%d" % i, value=b"v", timestamp=1_000 + i) for i in range(10)]
    seg0 = build_v2_batch(records[:5], base_offset=100, compression=NONE) + build_v2_batch(
        records[5:], base_offset=105, compression=GZIP, producer_id=7, producer_epoch=1, is_transactional=True
    )
    (part / "00000000000000000100.log").write_bytes(seg0)
    (part / "00000000000000000100.index").write_bytes(b"")
    (part / "00000000000000000100.timeindex").write_bytes(b"")
    (part / "00000000000000000110.log").write_bytes(b"")
    (part / "00000000000000000120.index").write_bytes(b"")  # orphaned
    (part / "00000000000000000090.log.deleted").write_bytes(b"")
    (root / "replication-offset-checkpoint").write_text("0\n1\norders 3 108\n")
    (root / "log-start-offset-checkpoint").write_text("0\n1\norders 3 102\n")
    return part


def test_synthetic_partition(tmp_path: Path) -> None:
    part = _write_partition(tmp_path)
    code, out = ls("--json", str(part))
    assert code == 0
    (o,) = [json.loads(line) for line in out.splitlines()]
    assert (o["topic"], o["partition"], o["segments"]) == ("orders", 3, 2)
    assert (o["logStartOffset"], o["logEndOffset"], o["highWatermark"], o["recoveryPoint"]) == (
        102,
        110,
        108,
        None,
    )
    assert (o["batches"], o["records"], o["minTimestamp"], o["maxTimestamp"]) == (2, 10, 1004, 1009)
    assert o["codecs"] == ["gzip", "none"] and o["producers"] == [7]
    assert o["openTransactions"] == [{"producerId": 7, "producerEpoch": 1, "firstOffset": 105}]
    assert any("00000000000000000090.log.deleted" in a for a in o["anomalies"])
    assert any("orphaned" in a and "00000000000000000120" in a for a in o["anomalies"])
    assert any("00000000000000000110 has no .index or .timeindex" in a for a in o["anomalies"])


def test_plain_text_is_aligned_with_anomaly_lines(tmp_path: Path) -> None:
    part = _write_partition(tmp_path)
    code, out = ls(str(tmp_path))
    assert code == 0
    lines = out.splitlines()
    header, row = lines[0], lines[1]
    assert header.split() == [
        "TOPIC", "PARTITION", "SEGMENTS", "SIZE", "LOG-START", "LOG-END", "HIGH-WATERMARK", "RECOVERY-POINT",
        "RECORDS", "MIN-TIMESTAMP", "MAX-TIMESTAMP", "CODECS", "PRODUCERS", "OPEN-TXNS", "ANOMALIES",
    ]  # fmt: skip
    cells = row.split()
    assert cells[:6] == [
        "orders",
        "3",
        "2",
        str((part / "00000000000000000100.log").stat().st_size),
        "102",
        "110",
    ]
    for column in ("LOG-END", "CODECS", "ANOMALIES"):
        assert row[header.index(column) - 1] == " "  # columns start at the header's positions
    assert all(line.startswith(f"{part}: ") for line in lines[2:]) and len(lines) == 2 + 3


def test_usage_errors(tmp_path: Path) -> None:
    assert ls(str(tmp_path / "missing"))[0] == 2
    assert ls(str(tmp_path))[0] == 2
