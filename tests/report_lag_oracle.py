"""Records the oracle of ``kdump report``'s consumer lag (issue 32): a real Kafka 4.0 broker (one KRaft node,
ports 19190/19191), a topic ``orders`` of four partitions (400, 250, 100 and 0 records), a group ``billing`` whose
member really consumes (subscribed, polled, offsets committed from what it read: 150 records of partition 0, all
of partition 1, 60 of partition 2), then 40 more records produced to partition 1 (so its lag is 40), and a group
``audit`` that consumed everything before that (lag 40 on partition 1, 0 elsewhere).  While the broker runs,
``kafka-consumer-groups.sh --describe --all-groups`` answers (its CURRENT-OFFSET, LOG-END-OFFSET and LAG
columns); then the broker stops cleanly (SIGTERM) and its data directory is kept as
``tests/fixtures/report_lag/4.0.0-data.tar.xz`` beside ``4.0.0-describe.txt``, which ``tests/test_report_lag.py``
replays against ``kdump report --json``.  Run (a few minutes): ``python -m tests.report_lag_oracle``; the
``broker``-marked test runs it live (``KDUMP_BROKER_ORACLE=1 pytest -m broker tests/test_report_lag.py``)."""

from __future__ import annotations

import sys
import time
from pathlib import Path

from tests.lag_broker import describe_groups, keep, lag_broker, produce

FIXTURES = Path(__file__).resolve().parent / "fixtures" / "report_lag"
TOPIC = "orders"
RECORDS = {0: 400, 1: 250, 2: 100, 3: 0}
#: What ``billing`` reads of each partition before it commits (all of partition 1; nothing of partition 3).
BILLING_READS = {0: 150, 1: 250, 2: 60}
#: Produced to partition 1 after both groups committed.
LATER = 40


def _consume(bootstrap: str, group: str, wanted: dict[int, int]) -> dict[int, int]:
    """A member of ``group`` subscribes to the topic, polls until it has read ``wanted[p]`` records of each
    partition (the rest of a poll's records are not processed: the position is rewound to what was read), and
    commits what it read; returns the committed offsets."""
    from kafka import KafkaConsumer, TopicPartition
    from kafka.structs import OffsetAndMetadata

    consumer = KafkaConsumer(
        TOPIC,
        bootstrap_servers=bootstrap,
        group_id=group,
        enable_auto_commit=False,
        auto_offset_reset="earliest",
        max_poll_records=17,
    )
    read = dict.fromkeys(wanted, 0)
    deadline = time.monotonic() + 120
    while any(read[p] < n for p, n in wanted.items()):
        if time.monotonic() > deadline:
            raise RuntimeError(f"{group} read {read} of {wanted}")
        for tp, records in consumer.poll(timeout_ms=1000).items():
            for _record in records:
                if read.get(tp.partition, 0) < wanted.get(tp.partition, 0):
                    read[tp.partition] += 1
            if tp.partition in wanted:
                consumer.seek(tp, read[tp.partition])
    commits = {p: n for p, n in read.items() if n}
    consumer.commit({TopicPartition(TOPIC, p): OffsetAndMetadata(o, "", -1) for p, o in commits.items()})
    consumer.close()
    return commits


def record(out: Path = FIXTURES) -> str:
    """Run the scenario; returns the tool's answer (also written to ``out``)."""
    # node 1: 19190 (broker), 19191 (controller); not the other oracles' ranges
    with lag_broker(19180, "report-lag-", offsets_partitions=3) as c:
        producer = produce(c, TOPIC, RECORDS, b"order %d")
        _consume(c.bootstrap, "billing", BILLING_READS)
        _consume(c.bootstrap, "audit", {p: n for p, n in RECORDS.items() if n})
        for i in range(LATER):
            producer.send(TOPIC, value=b"late order %d" % i, partition=1)
        producer.flush()
        producer.close()
        time.sleep(1)
        describe = describe_groups(c, "--all-groups")
    keep(c, out, "4.0.0-data.tar.xz", "4.0.0-describe.txt", describe)
    return describe


if __name__ == "__main__":
    print(record(), file=sys.stderr)
