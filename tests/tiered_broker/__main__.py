"""Make the real tiered partition of ``tests/fixtures/tiered-broker`` with a Kafka 4.0 KRaft broker.

    python -m tests.tiered_broker --kafka-source KAFKA_SRC [--out tests/fixtures/tiered-broker] [--work DIR]

Kafka's distribution carries the RemoteLogMetadataManager (``TopicBasedRemoteLogMetadataManager``) but no
RemoteStorageManager. KAFKA_SRC is a checkout of Apache Kafka 4.0.0 (for instance
``git archive 4.0.0 storage/src/test/java/org/apache/kafka/server/log/remote/storage | tar -x -C KAFKA_SRC``
from any Kafka clone): the script compiles Kafka's own ``LocalTieredStorage`` and the classes it needs from its
storage test sources with javac against the distribution's jars (plus ``TestUtils.java`` here, kdump's stand-in
for the one clients-test method it calls), into a jar in the work directory; neither the source nor the jar is
kept. Then it starts one KRaft node on 127.0.0.1 (``KDUMP_TIERED_PORT``, 39090 by default) with
``remote.log.storage.system.enable=true`` and that RSM, creates ``tiered`` (remote.storage.enable, 8 KB segments,
local.retention.bytes=12000, retention.bytes=36000), writes plain records, gzip batches, committed and aborted
transactions, restarts the node (a new leader epoch) and writes two more rounds, waits until the broker has
copied segments to the remote store, deleted them locally and deleted the oldest remote ones (retention), asks the broker for its offsets (``kafka-get-offsets.sh --time`` earliest, latest, earliest-local,
latest-tiered), stops it with SIGTERM and copies, into OUT:

- ``local/``: ``tiered-0`` (what is still local) and the log directory's offset checkpoints, with only the
  entries of the two partitions kept;
- ``local/__remote_log_metadata-N``: the metadata partition holding the records of ``tiered-0``;
- ``remote/``: LocalTieredStorage's root (``kafka-tiered-storage``) as it wrote it;
- ``broker.json``: the broker's offsets, the topic id, the metadata partition, how it was made;
- ``kafka-dump-log.deep.txt.gz``: the real ``kafka-dump-log.sh --deep-iteration --print-data-log`` over the
  one log (the remote segments below the first local one, copied under Kafka's names, then the local ones).
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from tests.broker_oracle.cluster import Cluster, launcher, unavailable_reason

REPO = Path(__file__).resolve().parents[2]
HERE = Path(__file__).resolve().parent
PORT = int(os.environ.get("KDUMP_TIERED_PORT", "39090"))
RSM_CLASS = "org.apache.kafka.server.log.remote.storage.LocalTieredStorage"
RSM_PACKAGE = Path("storage/src/test/java/org/apache/kafka/server/log/remote/storage")
#: The classes LocalTieredStorage needs from the same package of Kafka's storage test sources.
RSM_SOURCES = (
    "LocalTieredStorage",
    "LocalTieredStorageCondition",
    "LocalTieredStorageEvent",
    "LocalTieredStorageHistory",
    "LocalTieredStorageListener",
    "LocalTieredStorageSnapshot",
    "LocalTieredStorageTraverser",
    "RemoteLogSegmentFileset",
    "RemoteTopicPartitionDirectory",
    "Transferer",
)
TOPIC = "tiered"
TOPIC_CONFIGS = {
    "remote.storage.enable": "true",
    "segment.bytes": "8192",
    "index.interval.bytes": "1024",
    "local.retention.bytes": "12000",
    "retention.bytes": "36000",
}


class TieredNode(Cluster):
    """One KRaft node on PORT (broker) and PORT + 1 (controller)."""

    @staticmethod
    def broker_port(node: int) -> int:
        return PORT + 2 * (node - 1)

    @staticmethod
    def controller_port(node: int) -> int:
        return PORT + 2 * (node - 1) + 1


def kafka_home(version: str = "4.0.0") -> Path:
    """Where the ``kafka`` launcher unpacked the distribution (the same rule as the launcher script)."""
    if "KDUMP_KAFKA_HOME" in os.environ:
        return Path(os.environ["KDUMP_KAFKA_HOME"]) / "kafka"
    cache = Path(os.environ.get("XDG_CACHE_HOME", Path.home() / ".cache"))
    return cache / f"kdump-kafka-{version}" / "kafka"


def build_rsm(kafka_source: Path, work: Path) -> Path:
    """javac LocalTieredStorage and its package mates against the distribution's jars; returns the jar."""
    package = kafka_source / RSM_PACKAGE
    sources = [package / f"{name}.java" for name in RSM_SOURCES]
    missing = [str(s) for s in sources if not s.is_file()]
    if missing:
        raise SystemExit(f"not a Kafka 4.0 source tree: missing {', '.join(missing)}")
    libs = kafka_home() / "libs"
    if not libs.is_dir():  # the launcher unpacks the distribution on first use
        subprocess.run(
            [str(launcher("4.0.0")), "kafka-storage.sh", "random-uuid"], check=True, capture_output=True
        )
    classpath = os.pathsep.join(str(j) for j in sorted(libs.glob("*.jar")))
    classes = work / "rsm-classes"
    classes.mkdir(parents=True, exist_ok=True)
    subprocess.run(
        [
            "javac",
            "-nowarn",
            "-d",
            str(classes),
            "-cp",
            classpath,
            *map(str, sources),
            str(HERE / "TestUtils.java"),
        ],
        check=True,
    )
    jar = work / "local-tiered-storage.jar"
    subprocess.run(["jar", "cf", str(jar), "-C", str(classes), "."], check=True)
    return jar


def produce(bootstrap: str, phase: int) -> None:
    """Plain records (keyed, some gzip batches), then committed and aborted transactions."""
    from kafka import KafkaProducer

    plain = KafkaProducer(bootstrap_servers=bootstrap, acks="all", linger_ms=2, batch_size=1024)
    for i in range(160):
        plain.send(TOPIC, key=b"k%d" % (i % 7), value=b"p%d-%03d|" % (phase, i) * (2 + i % 9))
    plain.flush()
    plain.close()
    zipped = KafkaProducer(
        bootstrap_servers=bootstrap, acks="all", linger_ms=2, batch_size=2048, compression_type="gzip"
    )
    for i in range(60):
        zipped.send(TOPIC, value=b"z%d-%03d " % (phase, i) * 12)
    zipped.flush()
    zipped.close()
    txn = KafkaProducer(
        bootstrap_servers=bootstrap, transactional_id=f"tiered-tx-{phase}", acks="all", linger_ms=2
    )
    txn.init_transactions()
    for t in range(4):
        txn.begin_transaction()
        for i in range(25):
            txn.send(TOPIC, key=b"t%d" % t, value=b"tx%d-%d-%02d;" % (phase, t, i) * 6)
        txn.flush()
        if t % 2:
            txn.abort_transaction()
        else:
            txn.commit_transaction()
    txn.close()


def offsets(node: TieredNode) -> dict[str, int]:
    """The broker's answers to ListOffsets (GetOffsetShell): earliest, latest, earliest-local, latest-tiered."""
    answers = {}
    for name in ("earliest", "latest", "earliest-local", "latest-tiered"):
        out = subprocess.run(
            [
                str(launcher("4.0.0")),
                "kafka-get-offsets.sh",
                "--bootstrap-server",
                node.bootstrap,
                "--topic",
                TOPIC,
                "--time",
                name,
            ],
            capture_output=True,
            text=True,
            check=True,
            env=node._env(1),
        ).stdout.strip()
        answers[name] = int(out.rsplit(":", 1)[1])  # "tiered:0:123"
    return answers


def wait_tiered(data: Path, remote: Path, timeout: float = 180.0) -> None:
    """Until several segments are remote and the first ones are gone from the local partition."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        copied = sorted(p.name for p in remote.rglob("*.log"))
        partition = data / f"{TOPIC}-0"
        local = sorted(p.name for p in partition.glob("*.log"))
        settled = not list(partition.glob("*.deleted"))
        if (
            len(copied) >= 4
            and not copied[0].startswith("0" * 20)
            and local
            and local[0] != "0" * 20 + ".log"
            and settled
        ):
            return
        time.sleep(1.0)
    raise TimeoutError(f"the broker did not tier {TOPIC}-0: see {data.parent}")


#: The log directory's offset checkpoints kept with the fixture (only the kept partitions' entries).
CHECKPOINTS = (
    "log-start-offset-checkpoint",
    "recovery-point-offset-checkpoint",
    "replication-offset-checkpoint",
)


def only_entries(text: str, kept: set[tuple[str, ...]]) -> str:
    """An offset checkpoint (version, count, ``topic partition offset`` lines: Kafka's CheckpointFile) with only
    the entries of ``kept`` partitions, the count set to match: the other partitions are not in the fixture."""
    version, _count, *entries = text.splitlines()
    chosen = [line for line in entries if tuple(line.split()[:2]) in kept]
    return "\n".join([version, str(len(chosen)), *chosen]) + "\n"


def metadata_partition(data: Path) -> Path:
    """The one ``__remote_log_metadata`` partition with records (the one ``tiered-0``'s records hash to)."""
    used = [
        p
        for p in sorted(data.glob("__remote_log_metadata-*"))
        if sum(f.stat().st_size for f in p.glob("*.log")) > 0
    ]
    if len(used) != 1:
        raise RuntimeError(
            f"expected one used __remote_log_metadata partition, found {[p.name for p in used]}"
        )
    return used[0]


def topic_id(partition: Path) -> str:
    for line in (partition / "partition.metadata").read_text().splitlines():
        if line.startswith("topic_id:"):
            return line.split(":", 1)[1].strip()
    raise RuntimeError(f"no topic id in {partition}/partition.metadata")


#: Kafka's own dump of the one log, recorded beside the fixture (the default suite compares kdump with it).
DUMP_NAME = "kafka-dump-log.deep.txt.gz"
DUMP_OPTIONS = ("--deep-iteration", "--print-data-log")


def kafka_named_one_log(out: Path, stage: Path) -> list[Path]:
    """The fixture's one log as Kafka names segments: the remote ``.log`` objects below the first local segment
    copied to ``stage`` as ``<start offset>.log`` (Kafka's tool takes a segment's start offset from its name;
    LocalTieredStorage's objects are ``<offset>-<segment id>.log``), then the local ``.log`` files."""
    stage.mkdir(parents=True, exist_ok=True)
    local = sorted((out / "local" / f"{TOPIC}-0").glob("*.log"))
    first_local = int(local[0].name[:20]) if local else None
    files = []
    for path in sorted((out / "remote").rglob("*.log")):
        start = int(path.name[:20])
        if first_local is None or start < first_local:
            files.append(stage / f"{start:020d}.log")
            shutil.copyfile(path, files[-1])
    return files + local


def record_dump(out: Path, work: Path) -> bytes:
    """``kafka-dump-log.sh --deep-iteration --print-data-log`` (the real Kafka 4.0 tool) over the one log."""
    files = kafka_named_one_log(out, work / "kafka-named")
    return subprocess.run(
        [str(launcher("4.0.0")), "kafka-dump-log.sh", *DUMP_OPTIONS, "--files", ",".join(map(str, files))],
        capture_output=True,
        check=True,
    ).stdout


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m tests.tiered_broker", description=__doc__.split("\n")[0])
    parser.add_argument("--kafka-source", type=Path, required=True, help="a Kafka 4.0.0 source tree")
    parser.add_argument("--out", type=Path, default=REPO / "tests" / "fixtures" / "tiered-broker")
    parser.add_argument(
        "--work", type=Path, help="keep the broker's directory here (default: a temporary one)"
    )
    args = parser.parse_args(argv)
    reason = unavailable_reason("4.0.0") or (None if shutil.which("javac") else "javac is not installed")
    if reason:
        print(f"cannot make the tiered fixture: {reason}", file=sys.stderr)
        return 2
    work = args.work or Path(tempfile.mkdtemp(prefix="kdump-tiered-"))
    work.mkdir(parents=True, exist_ok=True)
    jar = build_rsm(args.kafka_source, work)
    remote_dir = work / "rsm"
    node = TieredNode(
        "4.0.0",
        work / "cluster",
        nodes=1,
        extra={
            "remote.log.storage.system.enable": "true",
            "remote.log.storage.manager.class.name": RSM_CLASS,
            "remote.log.storage.manager.class.path": str(jar),
            "rsm.config.dir": str(remote_dir),
            "remote.log.metadata.manager.listener.name": "PLAINTEXT",
            "rlmm.config.remote.log.metadata.topic.replication.factor": "1",
            "remote.log.manager.task.interval.ms": "1000",
            "log.retention.check.interval.ms": "1000",
            "log.index.size.max.bytes": "65536",
            "log.segment.delete.delay.ms": "1000",
        },
    )
    data = node.data(1)
    remote = remote_dir / "kafka-tiered-storage"
    with node:
        node.format()
        node.start()
        from kafka.admin import NewTopic

        from tests.broker_oracle.produce import admin

        client = admin(node.bootstrap)
        try:
            client.create_topics([NewTopic(TOPIC, 1, 1, topic_configs=TOPIC_CONFIGS)])
        finally:
            client.close()
        time.sleep(2)
        produce(node.bootstrap, 1)
        node.stop()  # SIGTERM; the restart elects the leader again with a new epoch
        node.start()
        time.sleep(3)
        produce(node.bootstrap, 2)
        time.sleep(3)
        produce(node.bootstrap, 3)
        wait_tiered(data, remote)
        time.sleep(5)  # let the last copies and local deletions of this round settle
        answers = offsets(node)
        node.stop()
    meta = metadata_partition(data)
    out = args.out
    if out.exists():
        shutil.rmtree(out)
    (out / "local").mkdir(parents=True)
    kept = {(TOPIC, "0"), tuple(meta.name.rsplit("-", 1))}
    for name in CHECKPOINTS:
        if (data / name).is_file():
            (out / "local" / name).write_text(only_entries((data / name).read_text(), kept))
    shutil.copytree(data / f"{TOPIC}-0", out / "local" / f"{TOPIC}-0")
    shutil.copytree(meta, out / "local" / meta.name)
    shutil.copytree(remote, out / "remote")
    record = {
        "made_by": "python -m tests.tiered_broker (Kafka 4.0.0 KRaft broker, RSM = Kafka's LocalTieredStorage "
        "built from the 4.0.0 storage test sources, RLMM = TopicBasedRemoteLogMetadataManager)",
        "topic": TOPIC,
        "topic_id": topic_id(data / f"{TOPIC}-0"),
        "topic_configs": TOPIC_CONFIGS,
        "metadata_partition": meta.name,
        "list_offsets": answers,
    }
    import gzip

    (out / DUMP_NAME).write_bytes(gzip.compress(record_dump(out, work), mtime=0))
    record["kafka_dump"] = f"{DUMP_NAME}: kafka-dump-log.sh {' '.join(DUMP_OPTIONS)} over the one log"
    (out / "broker.json").write_text(json.dumps(record, indent=2) + "\n")
    print(json.dumps(record, indent=2))
    if args.work is None:
        shutil.rmtree(work, ignore_errors=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
