"""Make the broker oracle's scenarios with real brokers and record what the brokers answer.

    python -m tests.broker_oracle [--versions 4.0.0,4.1.0] [--work DIR] [--out tests/fixtures/broker_oracle]

For each Kafka version, one 3-node KRaft cluster (replication factor 3: followers write their own files):

1. ``live``: produce (replicated appends, transactions committed, aborted, empty and left open, the cleaner at
   work, records days old, a topic deleted), then copy each node's directory while it runs;
2. ``killed``: SIGKILL every node, copy;
3. restart on the killed data (the brokers recover it: their log is the truth for ``killed``), ListOffsets
   again, stop cleanly: ``clean``;
4. start a cluster on copies of the live copies: their log is the truth for ``live``;
5. ``damaged``: on copies of ``clean``, a different damage on each node (flipped bytes in a batch, torn and cut
   batches, a zeroed page, deleted index files, a wrong offset-index position, a zeroed time-index timestamp);
   every clean-shutdown marker and recovery point dropped so each broker recovers every segment: where it
   truncates, and the indexes it rebuilds, are the truth for ``verify`` and ``rebuild-index``;
6. ``retention``: start on copies of ``clean`` with a retention check every second: the segments it deletes
   (the truth for ``retention`` on ``clean``), and the data it leaves, ``retained``.

Each scenario's node directory is stored as ``<scenario>.tar.xz`` (preallocated index files are sparse zeros and
compress to nothing) beside ``<scenario>.json``, the brokers' answers; ``tests/test_broker_oracle.py`` replays
them without Java.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import shutil
import subprocess
import tarfile
import time
from pathlib import Path
from typing import Any

from . import produce
from .cluster import VERSIONS, Cluster, copy_tree, launcher

REPO = Path(__file__).resolve().parents[2]
FIXTURES = REPO / "tests" / "fixtures" / "broker_oracle"
#: Cluster-wide settings of every scenario: small replica fetches wait for several batches (a follower appends
#: several at once), KRaft snapshots every few KiB, old snapshots expire so the metadata log start moves.
CLUSTER_EXTRA = {
    "replica.fetch.min.bytes": "4096",
    "replica.fetch.wait.max.ms": "400",
    "metadata.max.retention.ms": "20000",
    "log.segment.delete.delay.ms": "600000",
    "file.delete.delay.ms": "600000",
}
USER_TOPICS = ["plain", "txn", "compacted", "old"]


def _log_lines(text: str, pattern: str) -> list[str]:
    return [line for line in text.splitlines() if re.search(pattern, line)]


def repairs(text: str) -> list[dict[str, Any]]:
    """What a broker's log says it repaired while loading (LogSegment.recover, LogLoader)."""
    out: list[dict[str, Any]] = []
    for line in text.splitlines():
        m = re.search(r"Found invalid messages in log segment (\S+) at byte offset (\d+)", line)
        if m:
            out.append({"what": "invalid", "file": m.group(1), "position": int(m.group(2))})
            continue
        m = re.search(r"Corruption found in segment (\d+), truncating to offset (\d+)", line)
        if m:
            p = re.search(r"partition=([^,\]]+)", line)
            out.append(
                {
                    "what": "truncate",
                    "partition": p.group(1) if p else None,
                    "segment": int(m.group(1)),
                    "offset": int(m.group(2)),
                }
            )
            continue
        m = re.search(
            r"Found a corrupted index file corresponding to log file (\S+) due to (.*), recovering", line
        )
        if m:
            out.append({"what": "corrupt-index", "file": m.group(1), "reason": m.group(2)})
            continue
        m = re.search(r"Could not find offset index file corresponding to log file (\S+),", line)
        if m:
            out.append({"what": "missing-index", "file": m.group(1)})
            continue
        m = re.search(r"Found an orphaned index file (\S+),", line)
        if m:
            out.append({"what": "orphaned-index", "file": m.group(1)})
    return out


def deletions(text: str) -> list[dict[str, Any]]:
    """Segments a broker deleted for retention, and the log start offsets it reached (UnifiedLog)."""
    out: list[dict[str, Any]] = []
    for line in text.splitlines():
        p = re.search(r"partition=([^,\]]+)", line)
        part = p.group(1) if p else None
        m = re.search(r"Deleting segment LogSegment\(baseOffset=(\d+).*due to (.*?) breach", line)
        if m:
            out.append({"partition": part, "segment": int(m.group(1)), "reason": m.group(2)})
            continue
        m = re.search(r"Incremented log start offset to (\d+) due to (\w+)", line)
        if m:
            out.append({"partition": part, "logStart": int(m.group(1)), "reason": m.group(2)})
    return out


def describe_producers(cluster: Cluster, topic: str) -> str:
    p = subprocess.run(
        [
            str(launcher(cluster.version)),
            "kafka-transactions.sh",
            "--bootstrap-server",
            cluster.bootstrap.split(",")[0],
            "describe-producers",
            "--topic",
            topic,
            "--partition",
            "0",
        ],
        capture_output=True,
        text=True,
        timeout=300,
        env=dict(os.environ, KAFKA_HEAP_OPTS="-Xmx128m"),
    )
    return p.stdout


def wait_for_answers(cluster: Cluster, topics: list[str], seconds: float = 90) -> dict[str, dict[str, int]]:
    deadline = time.monotonic() + seconds
    while True:
        try:
            return produce.last_stable_offsets(cluster.bootstrap, topics)
        except Exception:
            if time.monotonic() > deadline:
                raise
            time.sleep(2)


def archive(src: Path, dest: Path) -> None:
    """``src`` (a node's data directory) as ``dest`` (``.tar.xz``), its members under ``data/``."""
    dest.parent.mkdir(parents=True, exist_ok=True)
    with tarfile.open(dest, "w:xz", preset=9) as tar:
        tar.add(src, arcname="data", filter=lambda info: None if info.name.endswith(".lock") else info)


def _fresh(path: Path) -> Path:
    shutil.rmtree(path, ignore_errors=True)
    return path


def _copy_nodes(src: Path, dst: Path, nodes: int) -> None:
    _fresh(dst)
    for i in range(1, nodes + 1):
        copy_tree(src / f"node{i}", dst / f"node{i}")


def _wait_quiet(cluster: Cluster, pattern: str, seconds: float) -> None:
    """Wait until every node's log shows ``pattern`` (or ``seconds`` pass)."""
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        if all(re.search(pattern, cluster.log_text(i)) for i in range(1, cluster.nodes + 1)):
            return
        time.sleep(1)


def _flip(target: Path, at: int) -> None:
    data = bytearray(target.read_bytes())
    data[at] ^= 0x5A
    target.write_bytes(bytes(data))


def _cut(target: Path, by: int) -> int:
    size = target.stat().st_size - by
    with open(target, "r+b") as f:
        f.truncate(size)
    return size


def _zero_page(target: Path) -> int:
    data = bytearray(target.read_bytes())
    page = 4096 if len(data) > 8192 else len(data) // 2
    data[page : page + 4096] = bytes(min(4096, len(data) - page))
    target.write_bytes(bytes(data))
    return page


def inject_damage(node: Path, variant: int = 1) -> list[dict[str, Any]]:
    """Damage some partitions of a clean node copy (a different set per ``variant``, 1 to 3); return what was
    done (file relative to ``node``).  Then make the broker recover every segment: no clean-shutdown marker,
    every recovery point 0."""
    done: list[dict[str, Any]] = []

    def segments(part: str) -> list[Path]:
        return sorted((node / part).glob("*.log"))

    def rel(p: Path) -> str:
        return str(p.relative_to(node))

    if variant == 1:
        target = segments("plain-0")[0]
        at = target.stat().st_size // 2
        _flip(target, at)  # a flipped byte in the middle of a closed segment
        done.append({"damage": "flip", "file": rel(target), "byte": at})
        target = segments("old-0")[-1]
        done.append({"damage": "cut", "file": rel(target), "size": _cut(target, 7)})  # a torn last batch
        target = segments("txn-0")[0]
        done.append({"damage": "zero-page", "file": rel(target), "byte": _zero_page(target)})
        for index in sorted((node / "compacted-0").glob("*index")):
            if index.suffix in (".index", ".timeindex"):
                index.unlink()
        done.append({"damage": "delete-indexes", "file": "compacted-0"})
    elif variant == 2:
        target = segments("old-0")[0]
        at = target.stat().st_size - 5
        _flip(target, at)  # the last bytes of a segment's last batch
        done.append({"damage": "flip", "file": rel(target), "byte": at})
        target = segments("compacted-0")[0]
        done.append({"damage": "cut", "file": rel(target), "size": _cut(target, 30)})
        target = sorted((node / "plain-0").glob("*.index"))[0]
        data = bytearray(target.read_bytes())
        data[4:8] = b"\x7f\xff\xff\xf0"  # entry 0's position far past the log
        target.write_bytes(bytes(data))
        done.append({"damage": "index-position", "file": rel(target), "byte": 4})
    else:
        target = segments("plain-0")[-1]
        done.append({"damage": "zero-page", "file": rel(target), "byte": _zero_page(target)})
        target = segments("txn-0")[-1]
        at = 61  # inside the first batch's header: its magic/CRC/attributes
        _flip(target, at)
        done.append({"damage": "flip", "file": rel(target), "byte": at})
        target = sorted((node / "old-0").glob("*.timeindex"))[0]
        data = bytearray(target.read_bytes())
        data[0:8] = bytes(8)  # entry 0's timestamp zeroed: timestamps no longer increase
        target.write_bytes(bytes(data))
        done.append({"damage": "timeindex-timestamp", "file": rel(target), "byte": 0})
    (node / ".kafka_cleanshutdown").unlink(missing_ok=True)
    rp = node / "recovery-point-offset-checkpoint"
    lines = rp.read_text().splitlines()
    rp.write_text("\n".join(lines[:2] + [re.sub(r" \d+$", " 0", line) for line in lines[2:]]) + "\n")
    return done


def index_record(data: bytes, entry_size: int) -> dict[str, Any]:
    """An index file as recorded: its entries up to a zero tail (whole entries, hex) and its length."""
    kept = len(data.rstrip(b"\0"))
    kept = min(len(data), -(-kept // entry_size) * entry_size)
    return {"entries": data[:kept].hex(), "size": len(data)}


def index_bytes(recorded: dict[str, Any]) -> bytes:
    """The file :func:`index_record` recorded."""
    data = bytes.fromhex(recorded["entries"])
    return data + bytes(recorded["size"] - len(data))


def rebuilt_indexes(before: Path, after: Path) -> dict[str, dict[str, Any]]:
    """The ``.index``/``.timeindex`` files the broker wrote while recovering ``after`` (a copy of ``before``),
    for the segments whose ``.log`` it left as it was (relative path -> :func:`index_record`)."""
    found: dict[str, dict[str, Any]] = {}
    for log in sorted(after.glob("*/*.log")):
        rel = log.relative_to(after)
        if rel.parts[0].endswith("-delete"):
            continue  # loaded only to be deleted
        old = before / rel
        if ".log" not in log.name or not old.is_file() or old.read_bytes() != log.read_bytes():
            continue
        for suffix in (".index", ".timeindex"):
            index = log.with_suffix(suffix)
            if index.is_file():
                found[str(index.relative_to(after))] = index_record(
                    index.read_bytes(), 8 if suffix == ".index" else 12
                )
    return found


def recorder(version: str, out: Path, names: list[str]) -> Any:
    """``record(name, data, answers)``: keep one scenario (its data as ``<name>.tar.xz``, the answers as
    ``<name>.json``) and append its name to ``names``."""

    def record(name: str, data: Path, answers: dict[str, Any]) -> None:
        archive(data, out / f"{name}.tar.xz")
        (out / f"{name}.json").write_text(
            json.dumps({"scenario": name, "version": version, **answers}, indent=1) + "\n"
        )
        names.append(name)

    return record


#: The parts of a version's run: the base cluster's scenarios, the diverged replicas, the operations.
PARTS = ("base", "unclean", "ops", "planted")


def run_all(version: str, work: Path, out: Path, parts: tuple[str, ...] = PARTS) -> list[str]:
    """Every scenario of ``version`` (one cluster at a time); their names."""
    from .operations import operations_scenario
    from .planted import cleaner_gap_scenario

    names: list[str] = []
    if "base" in parts:
        names += run_version(version, work, out)
    if "unclean" in parts:
        names.append(unclean_scenario(version, work, out))
    if "ops" in parts:
        operations_scenario(version, work, recorder(version, out, names))
    if "planted" in parts:
        cleaner_gap_scenario(version, work / "planted", recorder(version, out, names))
    return names


def run_version(version: str, work: Path, out: Path) -> list[str]:
    work = _fresh(work / version)
    names: list[str] = []
    tag = version.replace(".", "")
    record = recorder(version, out, names)

    base = Cluster(version, work / "cluster", extra=CLUSTER_EXTRA)
    base.format()
    copies = work / "copies"
    with base:
        base.start()
        produce.create_topics(base.bootstrap, 3, version)
        produce.plain(base.bootstrap)
        produce.transactions(base.bootstrap, tag)
        produce.compacted(base.bootstrap)
        # after the brokers' first retention check (30 s after start-up); the next is minutes away
        produce.old_records(base.bootstrap)
        opened = produce.open_transaction(base.bootstrap, tag)
        produce.delete_doomed(base.bootstrap)
        time.sleep(8)  # the cleaner, snapshots, the deleted topic's directory renamed
        live_answers = wait_for_answers(base, USER_TOPICS)
        live_producers = describe_producers(base, "txn")
        _copy_nodes(base.root, copies / "live", 3)
        time.sleep(1)
        base.stop(kill=True)
        opened.close(timeout=0)
    _copy_nodes(base.root, copies / "killed", 3)
    started = time.time()
    with base:
        base.start()
        killed_answers = wait_for_answers(base, USER_TOPICS)
        killed_producers = describe_producers(base, "txn")
        base.stop()
    for i in range(1, 4):
        record(
            f"{version}-killed-node{i}",
            copies / "killed" / f"node{i}",
            {
                "kind": "killed",
                "node": i,
                "repairs": repairs(base.log_text(i)),
                "listOffsets": killed_answers,
                "describeProducers": killed_producers,
                "deletedAfterAnswers": deletions(base.log_text(i)),
            },
        )
    _copy_nodes(base.root, copies / "clean", 3)
    # the live copies, loaded by brokers of their own
    live = Cluster(version, _fresh(work / "live-check"), extra=CLUSTER_EXTRA)
    _copy_nodes(copies / "live", live.root, 3)
    with live:
        live.start()
        live_loaded = wait_for_answers(live, USER_TOPICS)
        live.stop()
    for i in range(1, 4):
        record(
            f"{version}-live-node{i}",
            copies / "live" / f"node{i}",
            {
                "kind": "live",
                "node": i,
                "repairs": repairs(live.log_text(i)),
                "listOffsets": live_answers,
                "listOffsetsAfterLoad": live_loaded,
                "describeProducers": live_producers,
            },
        )
    # damage, and indexes to rebuild: a different damage on each node, each broker recovering every segment
    damaged = Cluster(version, _fresh(work / "damaged"), extra=CLUSTER_EXTRA)
    _copy_nodes(copies / "clean", damaged.root, 3)
    done = {i: inject_damage(damaged.root / f"node{i}", i) for i in range(1, 4)}
    _copy_nodes(damaged.root, copies / "damaged", 3)
    with damaged:
        damaged.start()
        wait_for_answers(damaged, USER_TOPICS)
        time.sleep(3)
        damaged.stop()
    for i in range(1, 4):
        record(
            f"{version}-damaged-node{i}",
            copies / "damaged" / f"node{i}",
            {
                "kind": "damaged",
                "node": i,
                "damage": done[i],
                "repairs": repairs(damaged.log_text(i)),
                "rebuiltIndexes": rebuilt_indexes(copies / "damaged" / f"node{i}", damaged.root / f"node{i}"),
            },
        )
    # retention: a check every second on copies of the clean data
    retention = Cluster(
        version,
        _fresh(work / "retention"),
        extra={**CLUSTER_EXTRA, "log.retention.check.interval.ms": "1000"},
    )
    _copy_nodes(copies / "clean", retention.root, 3)
    with retention:
        retention.start()
        now = int(time.time() * 1000)
        wait_for_answers(retention, USER_TOPICS)
        # LogManager schedules its first retention check 30 s after start-up (InitialTaskDelayMs)
        _wait_quiet(retention, r"Deleting segment LogSegment", 60)
        time.sleep(5)
        retention_answers = wait_for_answers(retention, USER_TOPICS)
        retention.stop()
    for i in range(1, 4):
        record(
            f"{version}-retained-node{i}",
            retention.data(i),
            {
                "kind": "retained",
                "node": i,
                "repairs": repairs(retention.log_text(i)),
                "listOffsets": retention_answers,
            },
        )
    for i in range(1, 4):
        record(
            f"{version}-clean-node{i}",
            copies / "clean" / f"node{i}",
            {
                "kind": "clean",
                "node": i,
                "listOffsets": killed_answers,
                "retention": {
                    "now": now,
                    "deleted": deletions(retention.log_text(i)),
                    "listOffsets": retention_answers,
                },
                "recoveredAt": int(started * 1000),
                # the restarted brokers' first retention check may delete segments after ListOffsets answered
                "deletedAfterAnswers": deletions(base.log_text(i)),
            },
        )
    return names


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--versions", default=",".join(VERSIONS))
    parser.add_argument("--work", type=Path, default=Path("/tmp/kdump-broker-oracle"))
    parser.add_argument("--out", type=Path, default=FIXTURES)
    parser.add_argument("--parts", default=",".join(PARTS), help=f"which scenarios (of {', '.join(PARTS)})")
    args = parser.parse_args()
    from .judge import judge_fixture

    for version in args.versions.split(","):
        t = time.time()
        names = run_all(version, args.work, args.out, tuple(args.parts.split(",")))
        print(f"{version}: {len(names)} scenarios in {time.time() - t:.0f} s", flush=True)
        for name in names:
            verdict = judge_fixture(args.out / f"{name}.json", _fresh(args.work / "judge" / name))
            print(
                f"  {name}: {verdict.checks} checks, {len(verdict.disagreements)} disagreements, "
                f"verify {verdict.verify_problems} problems, damage found {verdict.damages_found}/{verdict.damages}",
                flush=True,
            )
            for line in verdict.disagreements:
                print(f"    {line}", flush=True)


if __name__ == "__main__":
    main()


def _leader(bootstrap: str, topic: str) -> int | None:
    client = produce.admin(bootstrap)
    try:
        for t in client.describe_topics([topic]):
            for p in t.get("partitions", []):
                leader = p.get("leader_id", p.get("leader"))
                return None if leader is None or leader < 0 else int(leader)
    finally:
        client.close()
    return None


def _wait_leader(bootstrap: str, topic: str, among: list[int], seconds: float = 90) -> int:
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        try:
            leader = _leader(bootstrap, topic)
        except Exception:
            leader = None
        if leader in among:
            assert leader is not None
            return leader
        time.sleep(2)
    raise TimeoutError(f"no leader of {topic} among {among}")


def unclean_scenario(version: str, work: Path, out: Path) -> str:
    """Replicas that diverge: the leader keeps appending (acks=1) after both followers died, dies too; the
    followers come back and one of them leads from its shorter log and takes new records; the old leader comes
    back and truncates what the new leader does not have.  Kept: the old leader's directory as it died and the
    new leader's as it ran; the truth: the offset the old leader truncated to (its log)."""
    work = _fresh(work / f"{version}-unclean")
    cluster = Cluster(version, work / "cluster", extra=CLUSTER_EXTRA)
    cluster.format()
    name = f"{version}-unclean"
    with cluster:
        cluster.start()
        client = produce.admin(cluster.bootstrap)
        try:
            from kafka.admin import NewTopic

            client.create_topics(
                [
                    NewTopic(
                        "split",
                        1,
                        3,
                        topic_configs={"min.insync.replicas": "1", "unclean.leader.election.enable": "true"},
                    )
                ]
            )
        finally:
            client.close()
        time.sleep(2)
        from kafka import KafkaProducer

        producer = KafkaProducer(bootstrap_servers=cluster.bootstrap, acks="all", linger_ms=5)
        for i in range(50):
            producer.send("split", value=b"common-%d" % i)
        producer.flush()
        producer.close()
        old = _wait_leader(cluster.bootstrap, "split", [1, 2, 3])
        followers = [i for i in (1, 2, 3) if i != old]
        for f in followers:
            cluster.kill(f)
        producer = KafkaProducer(
            bootstrap_servers=f"127.0.0.1:{cluster.broker_port(old)}", acks=1, linger_ms=5, retries=0
        )
        for i in range(30):
            producer.send("split", value=b"only-on-the-old-leader-%d" % i)
        producer.flush(timeout=30)
        producer.close(timeout=5)
        time.sleep(1)
        cluster.kill(old)
        copy_tree(cluster.data(old), work / "kept" / "old-leader")
        cluster.start(nodes=followers)
        bootstrap = ",".join(f"127.0.0.1:{cluster.broker_port(f)}" for f in followers)
        new = _wait_leader(bootstrap, "split", followers, 120)
        producer = KafkaProducer(bootstrap_servers=bootstrap, acks=1, linger_ms=5)
        for i in range(20):
            producer.send("split", value=b"new-leader-%d" % i)
        producer.flush(timeout=30)
        producer.close(timeout=5)
        time.sleep(2)
        copy_tree(cluster.data(new), work / "kept" / "new-leader")
        cluster.start(nodes=[old])
        _wait_quiet(cluster, r"partition=split-0.*Truncating to offset|Truncating partition split-0", 60)
        time.sleep(3)
        text = cluster.log_text(old)
        cluster.stop()
    truncated = [int(m) for m in re.findall(r"partition=split-0[^\]]*\] Truncating to offset (\d+)", text)]
    fetcher = [
        int(m) for m in re.findall(r"Truncating partition split-0 with TruncationState\(offset=(\d+)", text)
    ]
    archive(work / "kept", out / f"{name}.tar.xz")
    (out / f"{name}.json").write_text(
        json.dumps(
            {
                "scenario": name,
                "version": version,
                "kind": "unclean",
                "oldLeader": old,
                "newLeader": new,
                "truncatedTo": truncated,
                "fetcherTruncation": fetcher,
            },
            indent=1,
        )
        + "\n"
    )
    return name
