"""``kdump retention``: predictions of Kafka's retention (UnifiedLog.deleteOldSegments) and cleaner
(LogCleanerManager) rules, on built partitions whose expected fates are worked out by hand here, and on the
corpus' compacted topic against the real tool's dump."""

from __future__ import annotations

import json
import re

import pytest
from click.testing import CliRunner

from kdump.cli.commands import cli
from kdump.storage.offset_checkpoint import encode_offset_checkpoint
from tests.builder import SimpleRecord, build_v2_batch
from tests.corpus import CORPUS, corpus_available
from tests.forensic_data import T0, records_batch, write_segment

HOUR = 3_600_000


def run(*args: str) -> tuple[int, str]:
    result = CliRunner().invoke(cli, list(args))
    return result.exit_code, result.output


def _time_partition(tmp_path, hw: int = 40):
    """Four segments of 10 records; segment i's records have timestamps T0 + i hours (+0..9 ms)."""
    part = tmp_path / "t-0"
    sizes = []
    for i in range(4):
        batch = records_batch(i * 10, [b"x" * 50] * 10, ts=T0 + i * HOUR)
        write_segment(str(part), i * 10, [batch])
        sizes.append(len(batch))
    (tmp_path / "replication-offset-checkpoint").write_bytes(encode_offset_checkpoint({("t", 0): hw}))
    return part, sizes


def _fates(out: str) -> list[tuple[int, str | None, int | None]]:
    [obj] = [json.loads(x) for x in out.splitlines()]
    assert obj["type"] == "retentionPartition" and obj["prediction"] is True
    return [(s["baseOffset"], s["deletedBy"], s["deletableAt"]) for s in obj["segmentFates"]]


def test_time_retention(tmp_path):
    part, _ = _time_partition(tmp_path)
    # retention 2 h, now = T0 + 3 h + 9 ms: segment 0 (largest T0+9) is 3 h old > 2 h; segment 1 (T0+1h+9)
    # is exactly 2 h old, not more: kept, deletable at T0 + 1h + 9 + 2h + 1.
    now = T0 + 3 * HOUR + 9
    code, out = run("retention", "--json", "--now", str(now), "--config", "retention.ms=7200000", str(part))
    assert code == 0
    assert _fates(out) == [
        (0, "time", None),
        (10, None, T0 + 3 * HOUR + 10),
        (20, None, T0 + 4 * HOUR + 10),
        (30, None, T0 + 5 * HOUR + 10),
    ]
    obj = json.loads(out)
    assert (obj["logStartOffset"], obj["logStartOffsetAfter"]) == (0, 10)
    assert obj["configSources"]["retention.ms"] == "--config"
    assert obj["configSources"]["retention.bytes"] == "Kafka default"


def test_time_retention_stops_at_high_watermark(tmp_path):
    part, _ = _time_partition(tmp_path, hw=15)
    code, out = run(
        "retention", "--json", "--now", str(T0 + 100 * HOUR), "--config", "retention.ms=1", str(part)
    )
    # every segment is old, but only segment 0 lies wholly below the high watermark 15
    assert [f[1] for f in _fates(out)] == ["time", None, None, None]


def test_size_retention(tmp_path):
    part, sizes = _time_partition(tmp_path)
    limit = sum(sizes) - sizes[0] - sizes[1] // 2  # the excess covers segment 0 and half of segment 1
    code, out = run(
        "retention", "--json", "--now", str(T0), "--config", "retention.ms=-1", "--config",
        f"retention.bytes={limit}", str(part),
    )  # fmt: skip
    assert [f[1] for f in _fates(out)] == ["size", None, None, None]
    assert json.loads(out)["logStartOffsetAfter"] == 10


def test_log_start_offset_breach_and_plain_text(tmp_path):
    part, _ = _time_partition(tmp_path)
    (tmp_path / "log-start-offset-checkpoint").write_bytes(encode_offset_checkpoint({("t", 0): 25}))
    code, out = run("retention", "--now", str(T0), "--config", "retention.ms=-1", str(part))
    assert code == 0
    assert "PREDICTION" in out and "log start offset 25 -> 25" in out
    rows = [x.split() for x in out.splitlines() if re.match(r"^\d", x)]
    assert [(r[0], r[4]) for r in rows] == [
        ("0", "deleted"),
        ("10", "deleted"),
        ("20", "kept"),
        ("30", "kept"),
    ]
    assert "retention.ms=-1 (--config)" in out


def test_compacted_topic_with_tombstones(tmp_path):
    part = tmp_path / "c-0"
    k = [b"a", b"b", b"c", b"a", b"b", b"d"]
    v: list[bytes | None] = [b"1", b"1", b"1", b"2", None, None]
    seg0 = records_batch(0, [b"1", b"1", b"1"], ts=T0, keys=k[:3])
    seg1 = build_v2_batch(
        [SimpleRecord(v[i], key=k[i], timestamp=T0 + i) for i in range(3, 6)],
        base_offset=3,
        delete_horizon_ms=T0 + 5000,
    )
    seg2 = records_batch(6, [b"3"], ts=T0 + 10, keys=[b"c"])
    write_segment(str(part), 0, [seg0])
    write_segment(str(part), 3, [seg1])
    write_segment(str(part), 6, [seg2])
    (tmp_path / "replication-offset-checkpoint").write_bytes(encode_offset_checkpoint({("c", 0): 7}))
    (tmp_path / "cleaner-offset-checkpoint").write_bytes(encode_offset_checkpoint({("c", 0): 3}))
    code, out = run(
        "retention", "--json", "--now", str(T0 + 6000), "--config", "cleanup.policy=compact", "--config",
        "min.cleanable.dirty.ratio=0.4", str(part),
    )  # fmt: skip
    obj = json.loads(out)
    c = obj["compaction"]
    # dirty from 3 (the checkpoint) to the active segment's base 6: segment 1 is cleanable, segment 0 clean
    assert (c["firstDirtyOffset"], c["firstUncleanableOffset"]) == (3, 6)
    assert (c["cleanBytes"], c["cleanableBytes"]) == (len(seg0), len(seg1))
    assert c["dirtyRatio"] == pytest.approx(len(seg1) / (len(seg0) + len(seg1)))
    assert c["wouldClean"] is True
    assert (c["records"], c["distinctKeys"], c["superseded"]) == (7, 4, 3)
    assert (c["tombstones"], c["liveTombstones"], c["tombstonesWithHorizon"]) == (2, 2, 2)
    assert (c["latestDeleteHorizon"], c["tombstonesPastHorizon"]) == (T0 + 5000, 2)
    # compact only: no time retention
    assert [s["deletedBy"] for s in obj["segmentFates"]] == [None, None, None]


@pytest.mark.skipif(not corpus_available(), reason=f"reference corpus not found at {CORPUS}")
def test_corpus_compacted_topic_against_kafka_dump():
    keys: dict[str, bool] = {}
    records = tombstones = 0
    for path in sorted((CORPUS / "expected/data/compact-0").glob("*.log.print-data-log.txt")):
        for m in re.finditer(r"^\| offset: \d+ .* key: (\S+)(?: payload: .*)?$", path.read_text(), re.M):
            records += 1
            tomb = "valueSize: -1" in m.group(0)
            tombstones += tomb
            keys[m.group(1)] = tomb
    code, out = run("retention", "--json", "--now", "1795239058714", str(CORPUS / "data" / "compact-0"))
    obj = json.loads(out)
    c = obj["compaction"]
    assert obj["configSources"]["cleanup.policy"] == "topic config (__cluster_metadata)"
    assert obj["config"]["min.cleanable.dirty.ratio"] == "0.01"
    assert (c["records"], c["distinctKeys"], c["tombstones"]) == (records, len(keys), tombstones)
    assert c["liveTombstones"] == sum(keys.values())
    # cleaner-offset-checkpoint says 575, the active segment starts there: nothing is cleanable
    assert (c["firstDirtyOffset"], c["cleanableBytes"], c["wouldClean"]) == (575, 0, False)
