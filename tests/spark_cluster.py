"""A Spark standalone cluster on 127.0.0.1 for the tests: a master and workers started with PySpark's own
``spark-class org.apache.spark.deploy.master.Master`` / ``...worker.Worker`` (ports chosen free), stopped after,
and the data the cluster test reads (the fixture trees and a built data set, made the same way every time).

``python -m tests.spark_cluster --record`` runs the comparison (``local[2]`` and the cluster of two one-core
workers; ``--jvm``: with the JVM engine too) and writes ``tests/fixtures/spark_cluster/answer.json``, which the
default suite replays."""

from __future__ import annotations

import contextlib
import hashlib
import json
import os
import shutil
import signal
import socket
import subprocess
import sys
import time
import urllib.request
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

from tests.partition_builder import build_partition
from tests.spark_oracle import FIXTURE_TREES

ANSWER = Path(__file__).parent / "fixtures" / "spark_cluster" / "answer.json"
#: The built data set: 2 partitions of 4 segments of 750 batches of 100 records (100-byte values): 600,000
#: records, about 70 MB.
BUILT = {"partitions": 2, "segments": 4, "batches_per_segment": 750, "records_per_batch": 100}


def spark_home() -> str:
    import pyspark

    return os.path.dirname(pyspark.__file__)


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def unavailable_reason() -> str | None:
    """Why the cluster cannot be started here, or None."""
    try:
        home = spark_home()
    except ImportError:
        return "pyspark is not installed"
    if shutil.which("java") is None:
        return "Java is not installed (Spark needs Java 17+)"
    if not os.access(os.path.join(home, "bin", "spark-class"), os.X_OK):
        return f"no executable spark-class under {home}/bin"
    return None


def _master_state(web_port: int) -> dict:
    with urllib.request.urlopen(f"http://127.0.0.1:{web_port}/json/", timeout=5) as r:  # noqa: S310 -- loopback
        return json.loads(r.read())


@dataclass
class Cluster:
    url: str
    #: The master's and the workers' process ids (the executors and their Python workers descend from them).
    pids: list[int]


@contextlib.contextmanager
def standalone(workdir: Path, workers: int = 2, cores: int = 1, timeout: float = 600) -> Iterator[Cluster]:
    """A master and ``workers`` workers of ``cores`` cores each on 127.0.0.1; yields the cluster and stops
    every process it started (by its own process group) after."""
    home = spark_home()
    spark_class = os.path.join(home, "bin", "spark-class")
    workdir.mkdir(parents=True, exist_ok=True)
    env = dict(os.environ, SPARK_HOME=home, SPARK_LOCAL_IP="127.0.0.1", SPARK_NO_DAEMONIZE="1")
    env["PYSPARK_PYTHON"] = sys.executable
    master_port, master_web = free_port(), free_port()
    url = f"spark://127.0.0.1:{master_port}"
    started: list[subprocess.Popen] = []
    logs = []

    def start(name: str, argv: list[str], extra: dict[str, str]) -> None:
        log = open(workdir / f"{name}.log", "wb")  # noqa: SIM115 -- closed below
        logs.append(log)
        started.append(
            subprocess.Popen(
                [spark_class, *argv],
                env={**env, **extra},
                stdout=log,
                stderr=subprocess.STDOUT,
                start_new_session=True,
            )
        )

    try:
        start(
            "master",
            ["org.apache.spark.deploy.master.Master", "--host", "127.0.0.1", "--port", str(master_port),
             "--webui-port", str(master_web)],
            {},
        )  # fmt: skip
        for i in range(workers):
            wdir = workdir / f"worker{i}"
            wdir.mkdir(exist_ok=True)
            start(
                f"worker{i}",
                ["org.apache.spark.deploy.worker.Worker", "--host", "127.0.0.1", "--port", str(free_port()),
                 "--webui-port", str(free_port()), "--cores", str(cores), "--memory", "1g",
                 "--work-dir", str(wdir), url],
                {"SPARK_WORKER_DIR": str(wdir), "SPARK_LOCAL_DIRS": str(wdir)},
            )  # fmt: skip
        deadline = time.monotonic() + timeout
        while True:
            for p in started:
                if p.poll() is not None:
                    raise RuntimeError(f"a Spark process exited ({p.args[1]}): see {workdir}")
            try:
                state = _master_state(master_web)
                if sum(1 for w in state.get("workers", []) if w.get("state") == "ALIVE") == workers:
                    break
            except OSError:
                pass
            if time.monotonic() > deadline:
                raise RuntimeError(
                    f"the standalone cluster did not come up in {timeout:.0f} s: see {workdir}"
                )
            time.sleep(1)
        yield Cluster(url, [p.pid for p in started])
    finally:
        for p in reversed(started):
            if p.poll() is None:
                with contextlib.suppress(ProcessLookupError):
                    os.killpg(p.pid, signal.SIGTERM)
        for p in reversed(started):
            try:
                p.wait(timeout=30)
            except subprocess.TimeoutExpired:
                with contextlib.suppress(ProcessLookupError):
                    os.killpg(p.pid, signal.SIGKILL)
                p.wait()
        for log in logs:
            log.close()


def build_data(root: Path) -> str:
    """The built data set under ``root`` (made the same way every time); returns its log directory."""
    logs = root / "built"
    if not logs.is_dir():
        for p in range(BUILT["partitions"]):
            build_partition(
                str(logs / f"bench-{p}"),
                BUILT["segments"],
                batches_per_segment=BUILT["batches_per_segment"],
                records_per_batch=BUILT["records_per_batch"],
            )
    return str(logs)


def rows_digest(rows: list[tuple]) -> str:
    """sha256 of rows (topic, partition, offset, timestamp ms, key, value), sorted."""
    h = hashlib.sha256()
    for r in sorted(rows, key=lambda r: (r[0], r[1], r[2])):
        h.update(repr(r).encode())
    return h.hexdigest()


#: Aggregates that stand for every row of the built data set (Spark computes them in its executors; kdump's
#: decode computes them in Python): the rows, and sums over them of the offset, the timestamp and the CRC-32 of
#: the key and of the value.
AGGREGATES = (
    "count(*)",
    "sum(offset)",
    "sum(unix_millis(timestamp))",
    "sum(crc32(coalesce(key, X'')))",
    "sum(crc32(coalesce(value, X'')))",
)


def expected_answers(built: str) -> dict[str, object]:
    """What the cluster must return, computed without Spark: kdump's own decode (tests/spark_oracle) of the
    fixture trees (every row, hashed) and of the built data set (the aggregates)."""
    import zlib

    from tests.spark_oracle import expected_rows

    fixtures = [(r[2], r[3], r[4], r[5], r[0], r[1]) for r in expected_rows(FIXTURE_TREES)]
    sums = [0, 0, 0, 0, 0]
    for r in expected_rows([built]):
        sums[0] += 1
        sums[1] += r[4]
        sums[2] += r[5]
        sums[3] += zlib.crc32(r[0] or b"")
        sums[4] += zlib.crc32(r[1] or b"")
    return {"fixtures": {"rows": len(fixtures), "sha256": rows_digest(fixtures)}, "built": sums}


def load(spark, paths: str | list[str], engine: str = "python"):  # noqa: ANN001, ANN201
    """The source's DataFrame: ``spark.read.format("kafka-log-python")`` (engine python: the Python source),
    ``spark.read.format("kafka-log")`` (engine name: the JVM engine in a session with its jar) or the JVM
    engine's through :func:`kdump.spark.read` (``engine="jvm"``, which says on standard error when it cannot be
    used)."""
    if engine == "python":
        return spark.read.format("kafka-log-python").load(paths)
    if engine == "name":
        return spark.read.format("kafka-log").load(paths)
    from kdump.spark import read

    df = read(spark, paths, {}, engine=engine)
    assert "kafka-log (jvm)" in df._jdf.queryExecution().executedPlan().toString()
    return df


def spark_answers(spark, built: str, engine: str = "python") -> dict[str, object]:  # noqa: ANN001
    df = load(spark, FIXTURE_TREES, engine)
    fixtures = [
        (r[0], r[1], r[2], r[3], None if r[4] is None else bytes(r[4]), None if r[5] is None else bytes(r[5]))
        for r in df.selectExpr(
            "topic", "partition", "offset", "unix_millis(timestamp)", "key", "value"
        ).collect()
    ]
    sums = list(load(spark, built, engine).selectExpr(*AGGREGATES).collect()[0])
    return {"fixtures": {"rows": len(fixtures), "sha256": rows_digest(fixtures)}, "built": sums}


def tree_cpu_seconds(roots: list[int]) -> float:
    """CPU seconds (user + system, reaped children included) of the processes ``roots`` and all their
    descendants (Linux /proc; 0.0 elsewhere)."""
    ticks = os.sysconf("SC_CLK_TCK") if hasattr(os, "sysconf") else 100
    parents: dict[int, int] = {}
    times: dict[int, float] = {}
    for name in os.listdir("/proc") if os.path.isdir("/proc") else []:
        if not name.isdigit():
            continue
        try:
            with open(f"/proc/{name}/stat") as f:
                fields = f.read().rsplit(")", 1)[1].split()
        except OSError:
            continue
        parents[int(name)] = int(fields[1])
        times[int(name)] = sum(int(x) for x in fields[11:15]) / ticks
    wanted = set(roots)
    total = 0.0
    for pid, t in times.items():
        p = pid
        while p and p not in wanted:
            p = parents.get(p, 0)
        if p:
            total += t
    return total


def throughput(  # noqa: ANN001
    spark, built: str, cores: int, roots: list[int], repeat: int = 3, engine: str = "python"
) -> dict[str, float]:
    """Records/s per core of ``spark.read.format("kafka-log").load(built)`` written to Spark's noop sink (every
    column materialised): the best wall time of ``repeat`` runs after a warm-up, and records per CPU-second of
    every process involved (``roots`` and their descendants: the driver, its JVM, the master, the workers,
    the executors and their Python workers), the figure that holds when other work shares the machine."""
    df = load(spark, built, engine)
    records = df.count()
    df.write.format("noop").mode("overwrite").save()  # warm-up
    best = cpu = float("inf")
    for _ in range(repeat):
        t, c = time.perf_counter(), tree_cpu_seconds(roots)
        df.write.format("noop").mode("overwrite").save()
        best = min(best, time.perf_counter() - t)
        cpu = min(cpu, tree_cpu_seconds(roots) - c)
    return {
        "records": records,
        "seconds": round(best, 3),
        "per_core": round(records / best / cores),
        "cpu_seconds": round(cpu, 3),
        "per_cpu_second": round(records / cpu) if cpu > 0 else 0,
        "load_average": round(os.getloadavg()[0], 1),
    }


def key(master: str, engine: str) -> str:
    """The answer's key of a master and engine: ``local[2]``, ``standalone``, ``local[2] jvm``..."""
    return master if engine == "python" else f"{master} {engine}"


def run(workdir: Path, engines: tuple[str, ...] = ("python",)) -> dict[str, object]:
    """The comparison: the same reads on ``local[2]`` and on a standalone cluster of two one-core workers, with
    each of ``engines`` (``python``: the Python source; ``jvm``: the JVM engine, kdump.spark.engine; ``name``:
    ``spark.read.format("kafka-log")``)."""
    from kdump.spark import session

    built = build_data(workdir)
    answer: dict[str, object] = {"built": BUILT, "expected": expected_answers(built)}
    conf = {"spark.ui.enabled": "false", "spark.sql.shuffle.partitions": "2"}
    started = time.monotonic()
    spark = session("local[2]", "kdump cluster test (local)", conf)
    try:
        for engine in engines:
            answer[key("local[2]", engine)] = {
                "answers": spark_answers(spark, built, engine),
                "throughput": throughput(spark, built, 2, [os.getpid()], engine=engine),
            }
    finally:
        spark.stop()
    with standalone(workdir / "cluster") as cluster:
        cluster_conf = {
            **conf,
            "spark.driver.host": "127.0.0.1",
            "spark.driver.bindAddress": "127.0.0.1",
            "spark.executor.cores": "1",
            "spark.cores.max": "2",
            "spark.executor.memory": "1g",
            "spark.pyspark.python": sys.executable,
        }
        spark = session(cluster.url, "kdump cluster test (standalone)", cluster_conf)
        try:
            for engine in engines:
                answer[key("standalone", engine)] = {
                    "master": "spark://127.0.0.1 (2 workers x 1 core)",
                    "answers": spark_answers(spark, built, engine),
                    "throughput": throughput(spark, built, 2, [os.getpid(), *cluster.pids], engine=engine),
                }
        finally:
            spark.stop()
    answer["seconds"] = round(time.monotonic() - started)
    return answer


if __name__ == "__main__":
    import tempfile

    with tempfile.TemporaryDirectory(prefix="kdump-spark-cluster-") as tmp:
        result = run(Path(tmp), ("python", "jvm") if "--jvm" in sys.argv else ("python",))
    print(json.dumps(result, indent=2))
    if "--record" in sys.argv:
        ANSWER.parent.mkdir(parents=True, exist_ok=True)
        ANSWER.write_text(json.dumps(result, indent=2) + "\n")
