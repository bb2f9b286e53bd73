"""The broker oracle's operations scenario: what an operator does to a running 3-node cluster, and what the
brokers and Kafka's own tools answer about it.

* a **reassignment** (``kafka-reassign-partitions.sh``) moves ``moving-0`` from nodes 1,2 to nodes 2,3: node 3
  fetches a new replica from the leader, node 1 renames its replica ``moving-0.<id>-delete`` (kept: the
  cluster's ``file.delete.delay.ms`` is ten minutes);
* a **consumer group** commits offsets (``kafka-consumer-groups.sh --describe``) and **transactions** are
  committed and left open (``kafka-transactions.sh describe``, ``find-hanging``);
* the **log cleaner** runs twice on ``squash-0`` (compacted, one replica on node 1): a copy of the partition
  is taken while ``min.compaction.lag.ms`` holds the cleaner back, the lag is dropped
  (``kafka-configs.sh``), the cleaner cleans, and a consumer reads what it kept.  The first cleaning gives the
  tombstones their delete horizon (KIP-534), the second (after one more round of records) removes them;
* a **hanging transaction**: on copies of the stopped cluster whose ``__transaction_state`` directories were
  removed (the coordinator's state lost), ``find-hanging`` names the open transaction.

Kept per node: ``<version>-ops-node<i>`` (the node's directory after a clean shutdown) with the answers; per
cleaning: ``<version>-cleaner-<n>`` (the partition before the cleaning) with what the consumer read after it;
``<version>-hanging`` (node 1 without ``__transaction_state``) with ``find-hanging``'s answer.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import time
from pathlib import Path
from typing import Any

from . import produce
from .cluster import Cluster, copy_tree, launcher

SQUASH = {
    "cleanup.policy": "compact",
    "segment.ms": "1000",
    "min.cleanable.dirty.ratio": "0.01",
    "min.compaction.lag.ms": "3600000",
    "delete.retention.ms": "100",
    "index.interval.bytes": "256",
}
#: The configuration kdump is given for its prediction: the topic's, with the lag dropped as for the cleaning.
SQUASH_PREDICTION = {**SQUASH, "min.compaction.lag.ms": "0"}
SQUASH_KEYS = 20


def tool(cluster: Cluster, script: str, *args: str, timeout: float = 300) -> subprocess.CompletedProcess[str]:
    """One of Kafka's command-line tools against the cluster (a small heap); once more when it times out (a
    loaded machine: the 4.1 run through pytest once lost ``describe`` to a 120 s timeout)."""
    command = [
        str(launcher(cluster.version)),
        script,
        "--bootstrap-server",
        cluster.bootstrap.split(",")[0],
        *args,
    ]
    env = dict(os.environ, KAFKA_HEAP_OPTS="-Xmx128m")
    try:
        return subprocess.run(command, capture_output=True, text=True, timeout=timeout, env=env)
    except subprocess.TimeoutExpired:
        return subprocess.run(command, capture_output=True, text=True, timeout=timeout, env=env)


def _create(cluster: Cluster) -> None:
    from kafka.admin import NewTopic

    client = produce.admin(cluster.bootstrap)
    try:
        client.create_topics(
            [
                NewTopic(
                    "moving",
                    replica_assignments={0: [1, 2]},
                    topic_configs=produce._configs(produce.ROLLING, cluster.version),
                ),
                NewTopic("squash", replica_assignments={0: [1]}, topic_configs=SQUASH),
                NewTopic("tx2", 1, 3, topic_configs=produce._configs(produce.ROLLING, cluster.version)),
            ]
        )
    finally:
        client.close()
    time.sleep(2)


def _fill(cluster: Cluster, tag: str) -> Any:
    """Records on ``moving``, a group's commits, a committed and an open transaction on ``tx2`` (the open
    producer is returned: the caller keeps it open)."""
    from kafka import KafkaConsumer, KafkaProducer, TopicPartition
    from kafka.structs import OffsetAndMetadata

    producer = KafkaProducer(bootstrap_servers=cluster.bootstrap, acks="all", linger_ms=2, batch_size=1024)
    for i in range(600):
        producer.send("moving", key=b"m%d" % (i % 7), value=b"moving-%d" % i * (1 + i % 4))
    producer.flush()
    producer.close()
    done = KafkaProducer(bootstrap_servers=cluster.bootstrap, transactional_id=f"done-{tag}", acks="all")
    done.init_transactions()
    for t in range(3):
        done.begin_transaction()
        for i in range(10):
            done.send("tx2", value=b"done-%d-%d" % (t, i))
        done.commit_transaction()
    done.close()
    opened = KafkaProducer(
        bootstrap_servers=cluster.bootstrap,
        transactional_id=f"open-{tag}",
        acks="all",
        transaction_timeout_ms=600000,
    )
    opened.init_transactions()
    opened.begin_transaction()
    for i in range(5):
        opened.send("tx2", value=b"open-%d" % i)
    opened.flush()
    consumer = KafkaConsumer(
        bootstrap_servers=cluster.bootstrap, group_id=f"grp-{tag}", enable_auto_commit=False
    )
    try:
        consumer.commit(
            {
                TopicPartition("moving", 0): OffsetAndMetadata(400, "", -1),
                TopicPartition("tx2", 0): OffsetAndMetadata(12, "", -1),
            }
        )
    finally:
        consumer.close()
    return opened


def _squash_round(cluster: Cluster, r: int, keys: range) -> None:
    """One round of ``squash``: two values of each key, key 0-3's last write of round 3 a tombstone (keys 0
    and 1 written again later, 2 and 3 left deleted: their tombstones get a delete horizon at the first cleaning
    and go at the second)."""
    from kafka import KafkaProducer

    producer = KafkaProducer(bootstrap_servers=cluster.bootstrap, acks="all", linger_ms=5, batch_size=512)
    for twice in range(2):
        for i in keys:
            if r > 3 and i in (2, 3):
                continue
            value = None if (r == 3 and twice == 1 and i < 4) else b"r%d-%d-%d" % (r, twice, i) * 3
            producer.send("squash", key=b"key-%d" % i, value=value)
    producer.flush()
    producer.close()
    time.sleep(1.2)  # segment.ms: the next round rolls a new segment


def _cleaner_checkpoint(node: Path, topic: str) -> int | None:
    path = node / "cleaner-offset-checkpoint"
    if not path.is_file():
        return None
    for line in path.read_text().splitlines()[2:]:
        parts = line.split()
        if len(parts) == 3 and parts[0] == topic and parts[1] == "0":
            return int(parts[2])
    return None


def _set_lag(cluster: Cluster, lag: str, topic: str = "squash") -> None:
    out = tool(
        cluster,
        "kafka-configs.sh",
        "--alter",
        "--entity-type",
        "topics",
        "--entity-name",
        topic,
        "--add-config",
        f"min.compaction.lag.ms={lag}",
    )
    if out.returncode != 0:
        raise RuntimeError(f"kafka-configs.sh: {out.stderr}")
    # node 1 (the partition's only replica, whose cleaner it is) applies the change from the metadata log a
    # moment later: wait until it answers with it, so that no append races the old value
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        described = tool(
            cluster, "kafka-configs.sh", "--describe", "--entity-type", "topics", "--entity-name", topic
        )
        if f"min.compaction.lag.ms={lag}" in described.stdout:
            time.sleep(1)
            return
        time.sleep(0.5)
    raise TimeoutError(f"node 1 did not apply min.compaction.lag.ms={lag}")


def _consume_all(cluster: Cluster, topic: str) -> list[list[Any]]:
    """Every record a consumer reads from ``topic``-0 from its start: [offset, is a tombstone]."""
    from kafka import KafkaConsumer, TopicPartition

    tp = TopicPartition(topic, 0)
    consumer = KafkaConsumer(bootstrap_servers=cluster.bootstrap, enable_auto_commit=False)
    try:
        consumer.assign([tp])
        consumer.seek_to_beginning(tp)
        end = consumer.end_offsets([tp])[tp]
        got: list[list[Any]] = []
        deadline = time.monotonic() + 60
        while consumer.position(tp) < end and time.monotonic() < deadline:
            for records in consumer.poll(timeout_ms=1000).values():
                got += [[r.offset, r.value is None] for r in records]
        return got
    finally:
        consumer.close()


def _clean_once(cluster: Cluster, work: Path, n: int) -> dict[str, Any]:
    """Copy squash-0 (node 1) while the lag holds the cleaner back; drop the lag; wait for the cleaner to
    checkpoint the active segment's base; read what it kept."""
    part = cluster.data(1) / "squash-0"
    before = work / f"cleaner-{n}" / "data" / "squash-0"
    shutil.rmtree(before.parent, ignore_errors=True)
    copy_tree(part, before)
    # the cleaner's checkpoint of the partition (the first dirty offset), as the log directory holds it
    checkpoint = _cleaner_checkpoint(cluster.data(1), "squash")
    lines = ["0", "1" if checkpoint is not None else "0"] + (
        [f"squash 0 {checkpoint}"] if checkpoint is not None else []
    )
    (before.parent / "cleaner-offset-checkpoint").write_text("\n".join(lines) + "\n")
    active = max(int(p.name[:20]) for p in part.glob("*.log"))
    records_before = _consume_all(cluster, "squash")
    now = int(time.time() * 1000)
    _set_lag(cluster, "0")
    deadline = time.monotonic() + 90
    while _cleaner_checkpoint(cluster.data(1), "squash") != active:
        if time.monotonic() > deadline:
            raise TimeoutError(f"the cleaner did not clean squash-0 up to {active}")
        time.sleep(0.5)
    time.sleep(1)
    kept = _consume_all(cluster, "squash")
    _set_lag(cluster, SQUASH["min.compaction.lag.ms"])
    return {
        "now": now,
        "config": SQUASH_PREDICTION,
        "cleanedUpTo": active,
        "recordsBefore": records_before,
        "recordsAfter": kept,
    }


def _reassign(cluster: Cluster, work: Path) -> str:
    plan = work / "reassign.json"
    plan.write_text(
        json.dumps({"version": 1, "partitions": [{"topic": "moving", "partition": 0, "replicas": [2, 3]}]})
    )
    out = tool(cluster, "kafka-reassign-partitions.sh", "--reassignment-json-file", str(plan), "--execute")
    if out.returncode != 0:
        raise RuntimeError(f"kafka-reassign-partitions.sh --execute: {out.stdout}{out.stderr}")
    deadline = time.monotonic() + 120
    while True:
        verify = tool(
            cluster, "kafka-reassign-partitions.sh", "--reassignment-json-file", str(plan), "--verify"
        )
        if "moving-0 is completed" in verify.stdout:
            return verify.stdout
        if time.monotonic() > deadline:
            raise TimeoutError(f"reassignment not completed: {verify.stdout}{verify.stderr}")
        time.sleep(2)


def operations_scenario(version: str, work: Path, record: Any) -> None:
    """Run the operations scenario of ``version`` below ``work``; ``record(name, data, answers)`` keeps each
    scenario (see ``record.run_version``)."""
    from .record import CLUSTER_EXTRA, _copy_nodes, _fresh, describe_producers, wait_for_answers

    work = _fresh(work / f"{version}-ops")
    tag = version.replace(".", "")
    cluster = Cluster(version, work / "cluster", extra=CLUSTER_EXTRA)
    cluster.format()
    topics = ["moving", "squash", "tx2"]
    cleanings: list[dict[str, Any]] = []
    with cluster:
        cluster.start()
        _create(cluster)
        opened = _fill(cluster, tag)
        for r in range(6):
            _squash_round(cluster, r, range(SQUASH_KEYS))
        cleanings.append(_clean_once(cluster, work, 1))
        _squash_round(cluster, 6, range(10, SQUASH_KEYS))  # the previous active segment becomes dirty
        _squash_round(cluster, 7, range(15, SQUASH_KEYS))
        cleanings.append(_clean_once(cluster, work, 2))
        reassigned = _reassign(cluster, work)
        time.sleep(3)
        answers = wait_for_answers(cluster, topics)
        groups = tool(cluster, "kafka-consumer-groups.sh", "--describe", "--group", f"grp-{tag}").stdout
        described = {
            tid: tool(cluster, "kafka-transactions.sh", "describe", "--transactional-id", tid).stdout
            for tid in (f"done-{tag}", f"open-{tag}")
        }
        producers = describe_producers(cluster, "tx2")
        hanging_at = int(time.time() * 1000)
        find_hanging = {
            i: tool(
                cluster,
                "kafka-transactions.sh",
                "find-hanging",
                "--broker-id",
                str(i),
                "--max-transaction-timeout",
                "0",
            ).stdout
            for i in (1, 2, 3)
        }
        cluster.stop()
        opened.close(timeout=0)
    for i in range(1, 4):
        record(
            f"{version}-ops-node{i}",
            cluster.data(i),
            {
                "kind": "ops",
                "node": i,
                "repairs": [],
                "listOffsets": {t: o for t, o in answers.items() if t != "squash" or i == 1},
                "reassignment": {"topic": "moving", "from": [1, 2], "to": [2, 3], "verify": reassigned},
                "describeProducers": producers,
                "consumerGroups": {f"grp-{tag}": groups},
                "transactions": described,
                "findHanging": {"at": hanging_at, "maxTimeoutMs": 0, "out": find_hanging[i]},
            },
        )
    for n, cleaning in enumerate(cleanings, 1):
        record(f"{version}-cleaner-{n}", work / f"cleaner-{n}" / "data", {"kind": "cleaner", **cleaning})
    # the coordinator's state lost: every node without its __transaction_state directories
    lost = Cluster(version, _fresh(work / "lost"), extra=CLUSTER_EXTRA)
    _copy_nodes(cluster.root, lost.root, 3)
    removed = sorted(d.name for d in lost.data(1).glob("__transaction_state-*"))
    for i in range(1, 4):
        for d in lost.data(i).glob("__transaction_state-*"):
            shutil.rmtree(d)
    kept = work / "hanging" / "data"
    copy_tree(lost.data(1), kept)
    with lost:
        lost.start()
        wait_for_answers(lost, topics)
        at = int(time.time() * 1000)
        out = tool(
            lost,
            "kafka-transactions.sh",
            "find-hanging",
            "--broker-id",
            "1",
            "--max-transaction-timeout",
            "0",
        )
        lost.stop()
    record(
        f"{version}-hanging",
        kept,
        {
            "kind": "hanging",
            "node": 1,
            "damage": [{"damage": "delete-partition", "file": name} for name in removed],
            "findHanging": {"at": at, "maxTimeoutMs": 0, "out": out.stdout},
        },
    )
