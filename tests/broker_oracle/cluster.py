"""Real KRaft brokers for the broker oracle: one to three combined broker+controller nodes of the Kafka 4.0 or
4.1 distribution in ``../shared``, on 127.0.0.1 in a private port range, with small heaps, always stopped by
their pid (never ``kafka-server-stop.sh``, which stops every Kafka on the machine)."""

from __future__ import annotations

import os
import re
import shutil
import signal
import socket
import subprocess
import time
from dataclasses import dataclass, field
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
SHARED = Path(os.environ.get("KDUMP_SHARED", REPO.parent / "shared"))
VERSIONS = ("4.0.0", "4.1.0")
#: Ports: node i (1-based) listens on BASE + 10 * i (broker) and BASE + 10 * i + 1 (controller).
BASE_PORT = int(os.environ.get("KDUMP_ORACLE_PORT", "39400"))
HEAP = "-Xmx256m -Xms256m"


def launcher(version: str) -> Path:
    return SHARED / f"kafka-{version}" / "kafka"


def unavailable_reason(version: str = "4.0.0") -> str | None:
    """Why a broker of ``version`` cannot start here (None when it can)."""
    if not launcher(version).is_file():
        return f"the Kafka {version} distribution is not at {launcher(version).parent}"
    if shutil.which("java") is None:
        return "java is not installed"
    try:
        import kafka  # noqa: F401
    except ImportError:
        return "kafka-python is not installed (the test extra)"
    return None


def _port_open(port: int) -> bool:
    with socket.socket() as s:
        s.settimeout(0.5)
        return s.connect_ex(("127.0.0.1", port)) == 0


@dataclass
class Cluster:
    """``nodes`` KRaft nodes of ``version`` whose data lives in ``root/node<i>`` (``log.dirs``)."""

    version: str
    root: Path
    nodes: int = 3
    extra: dict[str, str] = field(default_factory=dict)
    procs: dict[int, subprocess.Popen[bytes]] = field(default_factory=dict)

    @property
    def bootstrap(self) -> str:
        return ",".join(f"127.0.0.1:{self.broker_port(i)}" for i in range(1, self.nodes + 1))

    @staticmethod
    def broker_port(node: int) -> int:
        return BASE_PORT + 10 * node

    @staticmethod
    def controller_port(node: int) -> int:
        return BASE_PORT + 10 * node + 1

    def data(self, node: int) -> Path:
        return self.root / f"node{node}"

    def config_path(self, node: int) -> Path:
        return self.root / f"node{node}.properties"

    def server_log(self, node: int) -> Path:
        return self.root / f"logs{node}" / "server.log"

    def _env(self, node: int) -> dict[str, str]:
        return dict(
            os.environ,
            KAFKA_HEAP_OPTS=HEAP,
            LOG_DIR=str(self.root / f"logs{node}"),
            KAFKA_JVM_PERFORMANCE_OPTS="-XX:+UseSerialGC -XX:TieredStopAtLevel=1 -Djava.awt.headless=true",
        )

    def write_configs(self) -> None:
        rf = min(3, self.nodes)
        voters = ",".join(f"{i}@127.0.0.1:{self.controller_port(i)}" for i in range(1, self.nodes + 1))
        for i in range(1, self.nodes + 1):
            props = {
                "process.roles": "broker,controller",
                "node.id": str(i),
                "controller.quorum.voters": voters,
                "listeners": f"PLAINTEXT://127.0.0.1:{self.broker_port(i)},CONTROLLER://127.0.0.1:{self.controller_port(i)}",
                "advertised.listeners": f"PLAINTEXT://127.0.0.1:{self.broker_port(i)}",
                "controller.listener.names": "CONTROLLER",
                "inter.broker.listener.name": "PLAINTEXT",
                "listener.security.protocol.map": "CONTROLLER:PLAINTEXT,PLAINTEXT:PLAINTEXT",
                "log.dirs": str(self.data(i)),
                "num.partitions": "1",
                "default.replication.factor": str(rf),
                "offsets.topic.replication.factor": str(rf),
                "offsets.topic.num.partitions": "2",
                "transaction.state.log.replication.factor": str(rf),
                "transaction.state.log.min.isr": "1",
                "transaction.state.log.num.partitions": "2",
                "share.coordinator.state.topic.replication.factor": str(rf),
                "share.coordinator.state.topic.num.partitions": "1",
                "group.initial.rebalance.delay.ms": "0",
                "log.cleaner.backoff.ms": "500",
                "log.index.size.max.bytes": "65536",
                "log.retention.check.interval.ms": "300000",
                "metadata.log.max.record.bytes.between.snapshots": "4096",
                "metadata.max.idle.interval.ms": "200",
                "num.network.threads": "2",
                "num.io.threads": "2",
                "num.replica.fetchers": "1",
                "background.threads": "2",
                "log.cleaner.threads": "1",
                "unclean.leader.election.enable": "false",
                **self.extra,
            }
            self.config_path(i).write_text("".join(f"{k}={v}\n" for k, v in props.items()))

    def format(self) -> None:
        self.root.mkdir(parents=True, exist_ok=True)
        self.write_configs()
        cluster_id = subprocess.run(
            [str(launcher(self.version)), "kafka-storage.sh", "random-uuid"],
            capture_output=True,
            text=True,
            check=True,
            env=self._env(1),
        ).stdout.strip()
        for i in range(1, self.nodes + 1):
            subprocess.run(
                [
                    str(launcher(self.version)),
                    "kafka-storage.sh",
                    "format",
                    "-t",
                    cluster_id,
                    "-c",
                    str(self.config_path(i)),
                ],
                check=True,
                capture_output=True,
                env=self._env(i),
            )

    def start(self, timeout: float = 120.0, nodes: list[int] | None = None) -> None:
        """Start every node (or ``nodes``) on the data already in ``root`` and wait until each listens."""
        chosen = nodes or list(range(1, self.nodes + 1))
        for i in chosen:
            if _port_open(self.broker_port(i)):
                raise RuntimeError(f"port {self.broker_port(i)} is in use")
        self.write_configs()
        for i in chosen:
            (self.root / f"logs{i}").mkdir(parents=True, exist_ok=True)
            out = open(self.root / f"node{i}.out", "ab")  # noqa: SIM115 - held for the node's lifetime
            self.procs[i] = subprocess.Popen(
                [str(launcher(self.version)), "kafka-server-start.sh", str(self.config_path(i))],
                stdout=out,
                stderr=out,
                env=self._env(i),
                start_new_session=True,
            )
        deadline = time.monotonic() + timeout
        for i in chosen:
            while not _port_open(self.broker_port(i)):
                if self.procs[i].poll() is not None:
                    raise RuntimeError(
                        f"node {i} exited with {self.procs[i].returncode}: see {self.root}/node{i}.out"
                    )
                if time.monotonic() > deadline:
                    raise TimeoutError(f"node {i} did not listen on {self.broker_port(i)}")
                time.sleep(0.5)

    def _signal(self, node: int, sig: int) -> None:
        proc = self.procs.get(node)
        if proc is None or proc.poll() is not None:
            return
        try:
            os.killpg(proc.pid, sig)  # the launcher script and its JVM: the session this class started
        except ProcessLookupError:
            pass

    def kill(self, node: int) -> None:
        """SIGKILL one node and wait for it."""
        self._signal(node, signal.SIGKILL)
        proc = self.procs.pop(node, None)
        if proc is not None:
            proc.wait()

    def stop(self, *, kill: bool = False, timeout: float = 180.0) -> None:
        """Stop every node: SIGTERM (a clean shutdown, all at once so the quorum stays up while they leave) or
        SIGKILL."""
        for i in list(self.procs):
            self._signal(i, signal.SIGKILL if kill else signal.SIGTERM)
        for i, proc in list(self.procs.items()):
            try:
                proc.wait(timeout=timeout)
            except subprocess.TimeoutExpired:
                self._signal(i, signal.SIGKILL)
                proc.wait()
        self.procs.clear()

    def __enter__(self) -> Cluster:
        return self

    def __exit__(self, *exc: object) -> None:
        self.stop(kill=True, timeout=30)

    def log_text(self, node: int) -> str:
        path = self.server_log(node)
        return path.read_text(errors="replace") if path.exists() else ""


def copy_tree(src: Path, dst: Path) -> None:
    """``cp -r`` of a (possibly running) broker's directory, keeping sparse files sparse."""
    dst.parent.mkdir(parents=True, exist_ok=True)
    subprocess.run(["cp", "-r", "--sparse=always", str(src), str(dst)], check=True)


#: What a broker logs when it repairs a partition on load (LogLoader, LogSegment.recover, UnifiedLog).
REPAIRS = re.compile(
    r"(Found invalid messages in log segment|truncating to offset|Truncating log|Corrupt|corrupted index|"
    r"rebuilding index|Could not find offset index file|Deleting stray|Found deletable segments|"
    r"Recovering unflushed segment|Deleting segment|log start offset|Incremented log start offset)",
    re.IGNORECASE,
)
