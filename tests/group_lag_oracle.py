"""Records the oracle of ``kdump find --group``'s lag (issue 31): a real Kafka 4.0 broker (one KRaft node, ports
19090/19091), a topic of three partitions with 500, 300 and 200 records, a consumer group that committed 120 on
partition 0 and 300 on partition 1 (none on 2), and ``kafka-consumer-groups.sh --describe``'s answer (its
LOG-END-OFFSET and LAG columns) while the broker runs; then the broker stops cleanly and its data directory is
kept as ``tests/fixtures/group_lag/4.0.0-lag.tar.xz`` beside ``4.0.0-lag-describe.txt``, which
``tests/test_find_group_lag.py`` replays.  Run (a few minutes): ``python -m tests.group_lag_oracle``."""

from __future__ import annotations

import sys
from pathlib import Path

from tests.lag_broker import describe_groups, keep, lag_broker, produce

FIXTURES = Path(__file__).resolve().parent / "fixtures" / "group_lag"
GROUP = "lagging-group"
TOPIC = "lagging"
RECORDS = {0: 500, 1: 300, 2: 200}
COMMITS = {0: 120, 1: 300}


def record(out: Path = FIXTURES) -> None:
    from kafka import KafkaConsumer, TopicPartition
    from kafka.structs import OffsetAndMetadata

    # node 1: 19090 (broker), 19091 (controller); not the oracle's range
    with lag_broker(19080, "view31-lag-", offsets_partitions=5) as c:
        produce(c, TOPIC, RECORDS, b"record %d").close()
        consumer = KafkaConsumer(bootstrap_servers=c.bootstrap, group_id=GROUP, enable_auto_commit=False)
        consumer.commit({TopicPartition(TOPIC, p): OffsetAndMetadata(o, "", -1) for p, o in COMMITS.items()})
        consumer.close()
        describe = describe_groups(c, "--group", GROUP)
    keep(c, out, "4.0.0-lag.tar.xz", "4.0.0-lag-describe.txt", describe)
    print(describe, file=sys.stderr)


if __name__ == "__main__":
    record()
