"""The broker oracle's planted scenarios: a partition whose shape producers cannot make on demand is written
into a stopped broker's log directory, the broker is started on it, and what it does is the answer.

* **cleaner-gap**: a compacted partition whose first segment ends (offset 9) well before the next segment's base
  (20), as a follower's copy of a compacted log can (the leader's cleaner removed offsets 10-19, the follower
  rolled at the gap).  The broker loads it (rebuilding the indexes), a copy of its log directory is taken while
  ``min.compaction.lag.ms`` holds the cleaner back, the lag is dropped, and the cleaner's checkpoint and what a
  consumer reads after the cleaning are recorded.  ``Cleaner.buildOffsetMapForSegment`` ends each segment with
  ``map.updateLatestOffset(nextSegmentStartOffset - 1)``: the cleaning ends at the next segment's base, not
  after the last batch read.

Kept: ``<version>-cleaner-gap`` (kind ``cleaner``, judged as the operations scenario's cleanings are).
"""

from __future__ import annotations

import shutil
import time
from pathlib import Path
from typing import Any

from tests.builder import SimpleRecord, build_segment, build_v2_batch

from . import produce
from .cluster import Cluster, copy_tree
from .operations import _cleaner_checkpoint, _consume_all, _set_lag

GAP = {
    "cleanup.policy": "compact",
    "min.cleanable.dirty.ratio": "0.01",
    "min.compaction.lag.ms": "3600000",
}
GAP_PREDICTION = {**GAP, "min.compaction.lag.ms": "0"}


def _plant(part: Path, now: int) -> None:
    """Segment 0: offsets 0-9, keys k0-k4 twice; segment 20: offsets 20-29, keys k0-k2 (the active one)."""
    for f in part.iterdir():
        if f.name != "partition.metadata":
            f.unlink()
    first = [SimpleRecord(value=b"v%d" % i, key=b"k%d" % (i % 5), timestamp=now + i) for i in range(10)]
    second = [
        SimpleRecord(value=b"w%d" % i, key=b"k%d" % (i % 3), timestamp=now + 100 + i) for i in range(10)
    ]
    (part / f"{0:020d}.log").write_bytes(build_segment([build_v2_batch(first, base_offset=0)]))
    (part / f"{20:020d}.log").write_bytes(build_segment([build_v2_batch(second, base_offset=20)]))


def cleaner_gap_scenario(version: str, work: Path, record: Any) -> None:
    shutil.rmtree(work, ignore_errors=True)
    cluster = Cluster(version, work / "cluster", nodes=1)
    cluster.format()
    with cluster:
        cluster.start()
        from kafka.admin import NewTopic

        client = produce.admin(cluster.bootstrap)
        try:
            client.create_topics([NewTopic("gap", replica_assignments={0: [1]}, topic_configs=GAP)])
        finally:
            client.close()
        time.sleep(2)
        cluster.stop()
        _plant(cluster.data(1) / "gap-0", int(time.time() * 1000) - 60_000)
        cluster.start()
        deadline = time.monotonic() + 120
        records_before = _consume_all(cluster, "gap")
        while len(records_before) < 20 and time.monotonic() < deadline:
            time.sleep(1)
            records_before = _consume_all(cluster, "gap")
        # the high watermark reaches replication-offset-checkpoint every 5 s (replica.high.watermark...)
        time.sleep(6)
        before = work / "cleaner-gap" / "data"
        copy_tree(cluster.data(1), before)
        now = int(time.time() * 1000)
        _set_lag(cluster, "0", topic="gap")
        deadline = time.monotonic() + 90
        while _cleaner_checkpoint(cluster.data(1), "gap") is None:
            if time.monotonic() > deadline:
                raise TimeoutError("the cleaner did not clean gap-0")
            time.sleep(0.5)
        time.sleep(1)
        checkpoint = _cleaner_checkpoint(cluster.data(1), "gap")
        kept = _consume_all(cluster, "gap")
    record(
        f"{version}-cleaner-gap",
        before,
        {
            "kind": "cleaner",
            "partition": "gap-0",
            "now": now,
            "config": GAP_PREDICTION,
            "cleanedUpTo": checkpoint,
            "recordsBefore": records_before,
            "recordsAfter": kept,
        },
    )
