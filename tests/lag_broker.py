"""What the consumer-lag oracles share (``tests/group_lag_oracle.py`` for ``kdump find --group``,
``tests/report_lag_oracle.py`` for ``kdump report``): one Kafka 4.0 KRaft node started on its own ports, a topic
created and produced to, ``kafka-consumer-groups.sh --describe``'s answer while the broker runs, and, once it
stopped cleanly, its data directory kept as a fixture beside that answer."""

from __future__ import annotations

import subprocess
import tarfile
import tempfile
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from tests.broker_oracle import cluster as broker


@contextmanager
def lag_broker(base_port: int, prefix: str, offsets_partitions: int) -> Iterator[broker.Cluster]:
    """A formatted and started one-node 4.0 cluster (node 1: ``base_port`` + 10 the broker, + 11 the
    controller: keep each oracle in a range of its own) with ``offsets.topic.num.partitions``; stopped (SIGTERM,
    a clean shutdown) when the block ends."""
    broker.BASE_PORT = base_port
    c = broker.Cluster(
        "4.0.0",
        Path(tempfile.mkdtemp(prefix=prefix)),
        nodes=1,
        extra={"offsets.topic.num.partitions": str(offsets_partitions)},
    )
    c.format()
    c.start()
    try:
        yield c
    finally:
        c.stop()


def produce(c: broker.Cluster, topic: str, records: dict[int, int], value: bytes) -> Any:
    """Create ``topic`` (one partition per key of ``records``) and send ``records[p]`` records to partition
    ``p`` (values ``value % i``); returns the producer, flushed and still open (the caller closes it)."""
    from kafka import KafkaAdminClient, KafkaProducer
    from kafka.admin import NewTopic

    admin = KafkaAdminClient(bootstrap_servers=c.bootstrap)
    admin.create_topics([NewTopic(topic, len(records), 1)])
    admin.close()
    time.sleep(2)
    producer = KafkaProducer(bootstrap_servers=c.bootstrap, linger_ms=5)
    for partition, n in records.items():
        for i in range(n):
            producer.send(topic, value=value % i, partition=partition)
    producer.flush()
    return producer


def describe_groups(c: broker.Cluster, *selection: str) -> str:
    """``kafka-consumer-groups.sh --describe`` of the groups ``selection`` names (``--group G`` or
    ``--all-groups``), as the tool printed it; RuntimeError when it printed no LAG column."""
    answer = subprocess.run(
        [str(broker.launcher("4.0.0")), "kafka-consumer-groups.sh", "--bootstrap-server", c.bootstrap,
         "--describe", *selection, "--timeout", "120000"],
        capture_output=True, text=True, check=True, env=c._env(1),
    ).stdout  # fmt: skip
    if "LAG" not in answer:
        raise RuntimeError(f"kafka-consumer-groups.sh answered: {answer}")
    return answer


def keep(c: broker.Cluster, out: Path, archive: str, answer_name: str, answer: str) -> None:
    """The tool's ``answer`` as ``out/answer_name`` and the stopped broker's data directory as ``out/archive``
    (a ``.tar.xz`` holding ``data/``)."""
    out.mkdir(parents=True, exist_ok=True)
    (out / answer_name).write_text(answer)
    with tarfile.open(out / archive, "w:xz") as tar:
        tar.add(c.data(1), arcname="data")
