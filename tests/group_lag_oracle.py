"""Records the oracle of ``kdump find --group``'s lag (issue 31): a real Kafka 4.0 broker (one KRaft node, ports
19090/19091), a topic of three partitions with 500, 300 and 200 records, a consumer group that committed 120 on
partition 0 and 300 on partition 1 (none on 2), and ``kafka-consumer-groups.sh --describe``'s answer (its
LOG-END-OFFSET and LAG columns) while the broker runs; then the broker stops cleanly and its data directory is
kept as ``tests/fixtures/group_lag/4.0.0-lag.tar.xz`` beside ``4.0.0-lag-describe.txt``, which
``tests/test_find_group_lag.py`` replays.  Run (a few minutes): ``python -m tests.group_lag_oracle``."""

from __future__ import annotations

import subprocess
import sys
import tarfile
import tempfile
import time
from pathlib import Path

from tests.broker_oracle import cluster as broker

FIXTURES = Path(__file__).resolve().parent / "fixtures" / "group_lag"
GROUP = "lagging-group"
TOPIC = "lagging"
RECORDS = {0: 500, 1: 300, 2: 200}
COMMITS = {0: 120, 1: 300}


def record(out: Path = FIXTURES) -> None:
    from kafka import KafkaAdminClient, KafkaConsumer, KafkaProducer, TopicPartition
    from kafka.admin import NewTopic
    from kafka.structs import OffsetAndMetadata

    broker.BASE_PORT = 19080  # node 1: 19090 (broker), 19091 (controller); not the oracle's range
    root = Path(tempfile.mkdtemp(prefix="view31-lag-"))
    c = broker.Cluster("4.0.0", root, nodes=1, extra={"offsets.topic.num.partitions": "5"})
    c.format()
    c.start()
    try:
        admin = KafkaAdminClient(bootstrap_servers=c.bootstrap)
        admin.create_topics([NewTopic(TOPIC, len(RECORDS), 1)])
        time.sleep(2)
        producer = KafkaProducer(bootstrap_servers=c.bootstrap, linger_ms=5)
        for partition, n in RECORDS.items():
            for i in range(n):
                producer.send(TOPIC, value=b"record %d" % i, partition=partition)
        producer.flush()
        producer.close()
        consumer = KafkaConsumer(bootstrap_servers=c.bootstrap, group_id=GROUP, enable_auto_commit=False)
        consumer.commit({TopicPartition(TOPIC, p): OffsetAndMetadata(o, "", -1) for p, o in COMMITS.items()})
        consumer.close()
        describe = subprocess.run(
            [str(broker.launcher("4.0.0")), "kafka-consumer-groups.sh", "--bootstrap-server", c.bootstrap,
             "--describe", "--group", GROUP, "--timeout", "120000"],
            capture_output=True, text=True, check=True, env=c._env(1),
        ).stdout  # fmt: skip
        if "LAG" not in describe:
            raise RuntimeError(f"kafka-consumer-groups.sh answered: {describe}")
    finally:
        c.stop()
    out.mkdir(parents=True, exist_ok=True)
    (out / "4.0.0-lag-describe.txt").write_text(describe)
    with tarfile.open(out / "4.0.0-lag.tar.xz", "w:xz") as tar:
        tar.add(c.data(1), arcname="data")
    print(describe, file=sys.stderr)


if __name__ == "__main__":
    record()
