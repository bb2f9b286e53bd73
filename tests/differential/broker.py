"""Write real broker data for the differential harness: start a single-node KRaft broker from the Kafka 4.0
distribution (127.0.0.1:29092/29093, its own temporary data directory, stopped by its pid), produce with
kafka-python (every codec, headers, idempotent and transactional producers with commits and aborts, a compacted
topic with tombstones, consumer-group commits) and with the distribution's Java producer, then copy the small
partition files into ``tests/fixtures/broker``.

    python -m tests.differential.broker [--out tests/fixtures/broker] [--keep-data DIR]
"""

from __future__ import annotations

import argparse
import os
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from .cases import BROKER_FIXTURES
from .kafka import LAUNCHER

BOOTSTRAP = "127.0.0.1:29092"
CODECS = ("none", "gzip", "snappy", "lz4", "zstd")
MAX_FILE = 64 * 1024
#: Files of a partition directory worth keeping (the others are rewritten at every start or are not Kafka's).
KEEP_SUFFIXES = (".log", ".index", ".timeindex", ".snapshot", ".txnindex", ".checkpoint")


def _config(directory: Path) -> Path:
    path = directory / "kraft.properties"
    path.write_text(
        "\n".join(
            [
                "process.roles=broker,controller",
                "node.id=1",
                "controller.quorum.bootstrap.servers=127.0.0.1:29093",
                "listeners=PLAINTEXT://127.0.0.1:29092,CONTROLLER://127.0.0.1:29093",
                "advertised.listeners=PLAINTEXT://127.0.0.1:29092",
                "controller.listener.names=CONTROLLER",
                "listener.security.protocol.map=CONTROLLER:PLAINTEXT,PLAINTEXT:PLAINTEXT",
                f"log.dirs={directory / 'data'}",
                "num.partitions=1",
                "offsets.topic.replication.factor=1",
                "offsets.topic.num.partitions=1",
                "transaction.state.log.replication.factor=1",
                "transaction.state.log.min.isr=1",
                "transaction.state.log.num.partitions=1",
                "share.coordinator.state.topic.replication.factor=1",
                "share.coordinator.state.topic.num.partitions=1",
                "log.cleaner.backoff.ms=500",
                "group.initial.rebalance.delay.ms=0",
                "",
            ]
        )
    )
    return path


def _wait_for_port(port: int, seconds: float) -> None:
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        with socket.socket() as s:
            if s.connect_ex(("127.0.0.1", port)) == 0:
                return
        time.sleep(0.5)
    raise TimeoutError(f"the broker did not listen on {port}")


def start(directory: Path) -> subprocess.Popen[bytes]:
    config = _config(directory)
    env = dict(os.environ, KAFKA_HEAP_OPTS="-Xmx512M -Xms256M", LOG_DIR=str(directory / "logs"))
    cluster = subprocess.run(
        [str(LAUNCHER), "kafka-storage.sh", "random-uuid"],
        capture_output=True,
        text=True,
        check=True,
        env=env,
    ).stdout.strip()
    subprocess.run(
        [str(LAUNCHER), "kafka-storage.sh", "format", "--standalone", "-t", cluster, "-c", str(config)],
        check=True,
        capture_output=True,
        env=env,
    )
    out = open(directory / "broker.out", "wb")  # noqa: SIM115 - open for the broker's lifetime
    proc = subprocess.Popen(
        [str(LAUNCHER), "kafka-server-start.sh", str(config)], stdout=out, stderr=out, env=env
    )
    (directory / "broker.pid").write_text(str(proc.pid))
    _wait_for_port(29092, 90)
    return proc


def stop(proc: subprocess.Popen[bytes]) -> None:
    proc.send_signal(signal.SIGTERM)  # a clean shutdown (indexes trimmed, snapshots written)
    try:
        proc.wait(timeout=90)
    except subprocess.TimeoutExpired:
        proc.kill()
        proc.wait()


def produce() -> None:
    from kafka import KafkaAdminClient, KafkaConsumer, KafkaProducer
    from kafka.admin import NewTopic

    admin = KafkaAdminClient(bootstrap_servers=BOOTSTRAP)
    rolling = {"segment.ms": "1000", "index.interval.bytes": "512"}
    topics = [NewTopic(f"codec-{c}", 1, 1, topic_configs=rolling) for c in CODECS]
    topics += [
        NewTopic("txn", 1, 1, topic_configs=rolling),
        NewTopic("idempotent", 1, 1, topic_configs=rolling),
        NewTopic("java-zstd", 1, 1, topic_configs=rolling),
        NewTopic("java-gzip", 1, 1, topic_configs=rolling),
        NewTopic(
            "compacted",
            1,
            1,
            topic_configs={
                "cleanup.policy": "compact",
                "segment.ms": "1000",
                "min.cleanable.dirty.ratio": "0.01",
                "min.compaction.lag.ms": "0",
                "delete.retention.ms": "1000",
                "index.interval.bytes": "256",
            },
        ),
        NewTopic("append-time", 1, 1, topic_configs={**rolling, "message.timestamp.type": "LogAppendTime"}),
    ]
    admin.create_topics(topics)
    admin.close()

    for rounds in range(3):  # three segments each (segment.ms rolls on the first append after a second)
        for codec in CODECS:
            producer = KafkaProducer(
                bootstrap_servers=BOOTSTRAP,
                compression_type=None if codec == "none" else codec,
                linger_ms=20,
                batch_size=4096,
            )
            for i in range(120):
                headers = [("trace", f"t{i}".encode()), ("empty", b"")] if i % 3 == 0 else []
                key = None if i % 7 == 0 and i % 29 != 28 else f"key-{i % 17}".encode()
                value = (
                    None
                    if i % 29 == 28
                    else (f"{codec}-{rounds}-{i}-" + "é" * (i % 5)).encode() * (1 + i % 4)
                )
                producer.send(f"codec-{codec}", value=value, key=key, headers=headers)
            producer.send("append-time", value=f"append-{rounds}".encode(), key=b"k")
            producer.flush()
            producer.close()
        idem = KafkaProducer(bootstrap_servers=BOOTSTRAP, enable_idempotence=True, linger_ms=10)
        for i in range(60):
            idem.send("idempotent", value=f"idem-{rounds}-{i}".encode(), key=f"k{i % 5}".encode())
        idem.flush()
        idem.close()
        txn = KafkaProducer(
            bootstrap_servers=BOOTSTRAP, transactional_id="difftest-txn", compression_type="lz4", linger_ms=5
        )
        txn.init_transactions()
        for t in range(4):
            txn.begin_transaction()
            for i in range(15):
                txn.send("txn", value=f"txn-{rounds}-{t}-{i}".encode(), key=f"t{t}".encode())
            txn.flush()  # the aborted records reach the log (and the .txnindex) before the abort marker
            if t % 2:
                txn.abort_transaction()
            else:
                txn.commit_transaction()
        txn.close()
        compact = KafkaProducer(bootstrap_servers=BOOTSTRAP, linger_ms=5)
        for i in range(200):
            value = None if i % 11 == 10 else f"v{rounds}-{i}".encode()  # tombstones
            compact.send("compacted", value=value, key=f"key-{i % 13}".encode())
        compact.flush()
        compact.close()
        for topic, codec in (("java-zstd", "zstd"), ("java-gzip", "gzip")):
            subprocess.run(
                [
                    str(LAUNCHER),
                    "kafka-producer-perf-test.sh",
                    "--topic",
                    topic,
                    "--num-records",
                    "300",
                    "--record-size",
                    "120",
                    "--throughput",
                    "-1",
                    "--producer-props",
                    f"bootstrap.servers={BOOTSTRAP}",
                    f"compression.type={codec}",
                    "linger.ms=5",
                ],
                check=True,
                capture_output=True,
                env=dict(os.environ, KAFKA_HEAP_OPTS="-Xmx256M"),
            )
        time.sleep(1.5)
    consumer = KafkaConsumer(
        "codec-none",
        "txn",
        bootstrap_servers=BOOTSTRAP,
        group_id="difftest-group",
        enable_auto_commit=False,
        auto_offset_reset="earliest",
        isolation_level="read_committed",
        consumer_timeout_ms=5000,
    )
    seen = 0
    for _ in consumer:
        seen += 1
        if seen % 100 == 0:
            consumer.commit()
    consumer.commit()
    consumer.close()
    time.sleep(8)  # let the cleaner compact the rolled segments of "compacted"


def collect(data: Path, out: Path) -> int:
    """Copy the small Kafka files of every partition directory (and bootstrap.checkpoint) into ``out``."""
    if out.exists():
        shutil.rmtree(out)
    total = 0
    for partition in sorted(p for p in data.iterdir() if p.is_dir()):
        for f in sorted(partition.iterdir()):
            if f.is_file() and f.name.endswith(KEEP_SUFFIXES) and f.stat().st_size <= MAX_FILE:
                target = out / partition.name / f.name
                target.parent.mkdir(parents=True, exist_ok=True)
                shutil.copy2(f, target)
                total += f.stat().st_size
    return total


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="python -m tests.differential.broker", description=__doc__.split("\n\n")[0]
    )
    parser.add_argument("--out", type=Path, default=BROKER_FIXTURES)
    parser.add_argument("--keep-data", type=Path, help="also copy the whole data directory here")
    args = parser.parse_args(argv)
    directory = Path(tempfile.mkdtemp(prefix="kdump-broker-"))
    proc = start(directory)
    try:
        produce()
    finally:
        stop(proc)
    data = directory / "data"
    if args.keep_data:
        shutil.copytree(data, args.keep_data, dirs_exist_ok=True)
    total = collect(data, args.out)
    print(f"{total} bytes of broker files in {args.out}", file=sys.stderr)
    shutil.rmtree(directory, ignore_errors=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
