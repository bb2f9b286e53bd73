"""What the broker oracle's scenarios write, with kafka-python: replicated topics whose followers append several
batches at once, transactions committed, aborted, empty and left open, a compacted topic the real cleaner
cleans, records with old timestamps for retention, a topic deleted while its directory still waits."""

from __future__ import annotations

import time
from typing import Any

#: Topic configs of the scenarios (small segments so that every partition has several).
ROLLING = {"segment.bytes": "16384", "index.interval.bytes": "512"}
TOPICS: dict[str, dict[str, str]] = {
    "plain": ROLLING,
    "txn": ROLLING,
    "compacted": {
        "cleanup.policy": "compact",
        "segment.ms": "1500",
        "min.cleanable.dirty.ratio": "0.01",
        "min.compaction.lag.ms": "0",
        "delete.retention.ms": "100",
        "index.interval.bytes": "256",
    },
    "old": {"segment.bytes": "2048", "index.interval.bytes": "512", "retention.ms": "86400000"},
    "doomed": ROLLING,
}
DAY_MS = 86_400_000


def admin(bootstrap: str) -> Any:
    from kafka import KafkaAdminClient

    return KafkaAdminClient(bootstrap_servers=bootstrap, request_timeout_ms=30000)


def _configs(cfg: dict[str, str], version: str) -> dict[str, str]:
    """Kafka 4.1 refuses segment.bytes below 1 MiB; its testing-only ``internal.segment.bytes`` (LogConfig)
    sets small segments."""
    if version >= "4.1" and "segment.bytes" in cfg:
        cfg = dict(cfg)
        cfg["internal.segment.bytes"] = cfg.pop("segment.bytes")
    return cfg


def create_topics(bootstrap: str, replication: int, version: str = "4.0.0") -> None:
    from kafka.admin import NewTopic

    client = admin(bootstrap)
    try:
        client.create_topics(
            [
                NewTopic(name, 1, replication, topic_configs=_configs(cfg, version))
                for name, cfg in TOPICS.items()
            ]
        )
    finally:
        client.close()
    time.sleep(2)


def plain(bootstrap: str, rounds: int = 6) -> None:
    from kafka import KafkaProducer

    producer = KafkaProducer(bootstrap_servers=bootstrap, acks=1, linger_ms=2, batch_size=1024)
    for r in range(rounds):
        for i in range(150):
            producer.send("plain", key=b"k%d" % (i % 13), value=b"v%d-%d" % (r, i) * (1 + i % 5))
            producer.send("doomed", value=b"d%d" % i)
        producer.flush()
    producer.close()


def old_records(bootstrap: str) -> None:
    """Records two to six days old, then current ones (retention.ms is one day)."""
    from kafka import KafkaProducer

    producer = KafkaProducer(bootstrap_servers=bootstrap, acks="all", linger_ms=5, batch_size=1024)
    now = int(time.time() * 1000)
    for day in (6, 5, 4, 3, 2, 0):
        for i in range(120):
            producer.send("old", value=b"old-%d-%d" % (day, i) * 3, timestamp_ms=now - day * DAY_MS + i)
        producer.flush()
    producer.close()


def compacted(bootstrap: str) -> None:
    from kafka import KafkaProducer

    producer = KafkaProducer(bootstrap_servers=bootstrap, acks="all", linger_ms=5, batch_size=1024)
    for r in range(8):
        for i in range(60):
            key = b"key-%d" % (i % 20)
            value = None if (r == 5 and i % 20 < 4) else b"value-%d-%d" % (r, i) * 4
            producer.send("compacted", key=key, value=value)
        producer.flush()
        time.sleep(1.6)  # segment.ms rolls on the next append: several segments for the cleaner
    producer.close()


def transactions(bootstrap: str, tag: str) -> None:
    """Committed, aborted and empty (aborted before anything was sent) transactions of two producers."""
    from kafka import KafkaProducer

    for n in range(2):
        producer = KafkaProducer(
            bootstrap_servers=bootstrap, transactional_id=f"tx-{tag}-{n}", acks="all", linger_ms=5
        )
        producer.init_transactions()
        for t in range(12):
            producer.begin_transaction()
            kind = t % 4
            if kind == 3:
                empty_abort(bootstrap, f"tx-{tag}-{n}-empty-{t}")
                producer.abort_transaction()  # nothing sent: the coordinator writes no marker here
                continue
            for i in range(20):
                producer.send("txn", key=b"t%d" % t, value=b"tx-%d-%d-%d" % (n, t, i) * 4)
            producer.flush()
            if kind == 2:
                producer.abort_transaction()
            else:
                producer.commit_transaction()
        producer.close()


def empty_abort(bootstrap: str, transactional_id: str) -> None:
    """A transaction that adds the partition but writes nothing to it: the batch waits in the producer
    (a long linger) while AddPartitionsToTxn goes out, then the abort drops it; the coordinator still writes
    an ABORT marker to the partition."""
    from kafka import KafkaProducer

    producer = KafkaProducer(
        bootstrap_servers=bootstrap, transactional_id=transactional_id, acks="all", linger_ms=4000
    )
    producer.init_transactions()
    producer.begin_transaction()
    producer.send("txn", value=b"never")
    time.sleep(1.0)
    producer.abort_transaction()
    producer.close()


def open_transaction(bootstrap: str, tag: str) -> Any:
    """A producer whose transaction stays open (its timeout is long): returned so the caller keeps it open."""
    from kafka import KafkaProducer

    producer = KafkaProducer(
        bootstrap_servers=bootstrap,
        transactional_id=f"open-{tag}",
        acks="all",
        transaction_timeout_ms=600000,
    )
    producer.init_transactions()
    producer.begin_transaction()
    for i in range(15):
        producer.send("txn", value=b"open-%d" % i)
    producer.flush()
    return producer


def delete_doomed(bootstrap: str) -> None:
    client = admin(bootstrap)
    try:
        client.delete_topics(["doomed"])
    finally:
        client.close()


def last_stable_offsets(bootstrap: str, topics: list[str]) -> dict[str, dict[str, int]]:
    """ListOffsets answers: read_committed end (the LSO), read_uncommitted end (the high watermark), start."""
    from kafka import KafkaConsumer, TopicPartition

    out: dict[str, dict[str, int]] = {}
    committed = KafkaConsumer(bootstrap_servers=bootstrap, isolation_level="read_committed")
    uncommitted = KafkaConsumer(bootstrap_servers=bootstrap)
    try:
        tps = [TopicPartition(t, 0) for t in topics]
        lso = committed.end_offsets(tps)
        hw = uncommitted.end_offsets(tps)
        start = uncommitted.beginning_offsets(tps)
        for tp in tps:
            out[tp.topic] = {"lso": lso[tp], "high_watermark": hw[tp], "log_start": start[tp]}
    finally:
        committed.close()
        uncommitted.close()
    return out
