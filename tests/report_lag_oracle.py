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

import subprocess
import sys
import tarfile
import tempfile
import time
from pathlib import Path

from tests.broker_oracle import cluster as broker

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
    from kafka import KafkaAdminClient, KafkaProducer
    from kafka.admin import NewTopic

    broker.BASE_PORT = 19180  # node 1: 19190 (broker), 19191 (controller); not the other oracles' ranges
    root = Path(tempfile.mkdtemp(prefix="report-lag-"))
    c = broker.Cluster("4.0.0", root, nodes=1, extra={"offsets.topic.num.partitions": "3"})
    c.format()
    c.start()
    try:
        admin = KafkaAdminClient(bootstrap_servers=c.bootstrap)
        admin.create_topics([NewTopic(TOPIC, len(RECORDS), 1)])
        time.sleep(2)
        producer = KafkaProducer(bootstrap_servers=c.bootstrap, linger_ms=5)
        for partition, n in RECORDS.items():
            for i in range(n):
                producer.send(TOPIC, value=b"order %d" % i, partition=partition)
        producer.flush()
        _consume(c.bootstrap, "billing", BILLING_READS)
        _consume(c.bootstrap, "audit", {p: n for p, n in RECORDS.items() if n})
        for i in range(LATER):
            producer.send(TOPIC, value=b"late order %d" % i, partition=1)
        producer.flush()
        producer.close()
        admin.close()
        time.sleep(1)
        describe = subprocess.run(
            [str(broker.launcher("4.0.0")), "kafka-consumer-groups.sh", "--bootstrap-server", c.bootstrap,
             "--describe", "--all-groups", "--timeout", "120000"],
            capture_output=True, text=True, check=True, env=c._env(1),
        ).stdout  # fmt: skip
        if "LAG" not in describe:
            raise RuntimeError(f"kafka-consumer-groups.sh answered: {describe}")
    finally:
        c.stop()
    out.mkdir(parents=True, exist_ok=True)
    (out / "4.0.0-describe.txt").write_text(describe)
    with tarfile.open(out / "4.0.0-data.tar.xz", "w:xz") as tar:
        tar.add(c.data(1), arcname="data")
    return describe


if __name__ == "__main__":
    print(record(), file=sys.stderr)
