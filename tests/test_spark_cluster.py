"""The ``kafka-log`` source on a Spark standalone cluster (a master and two one-core workers on 127.0.0.1,
started with PySpark's own spark-class and stopped after) returns the rows it returns on ``local[2]``, and
both are kdump's own decode (tests/spark_oracle): every row of the fixture trees, hashed, and aggregates over
the 600,000 records of a built data set.

Starting the cluster takes minutes, so ``pytest -m spark_cluster`` with ``KDUMP_SPARK_CLUSTER=1`` runs it (the
Python source; and the JVM engine next to it, test_standalone_cluster_with_the_jvm_engine); ``python -m
tests.spark_cluster --record [--jvm]`` records a new answer; the default suite replays the recorded answer
(``tests/fixtures/spark_cluster/answer.json``) against the decode of today's code, without Java."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from tests.spark_cluster import ANSWER, BUILT, build_data, expected_answers, run, unavailable_reason


def test_recorded_cluster_answer_is_kdumps_decode(tmp_path: Path) -> None:
    answer = json.loads(ANSWER.read_text())
    assert answer["built"] == BUILT
    expected = json.loads(json.dumps(expected_answers(build_data(tmp_path))))
    assert answer["expected"] == expected  # the same data, decoded the same way as when it was recorded
    masters = [m for m in answer if m.startswith(("local[2]", "standalone"))]
    assert {"local[2]", "standalone"} <= set(masters)
    for master in masters:
        assert answer[master]["answers"] == expected, master
        assert answer[master]["throughput"]["records"] == expected["built"][0]
        assert answer[master]["throughput"]["per_core"] > 0
        assert answer[master]["throughput"]["per_cpu_second"] > 0


@pytest.mark.spark_cluster
@pytest.mark.skipif(
    os.environ.get("KDUMP_SPARK_CLUSTER") != "1", reason="set KDUMP_SPARK_CLUSTER=1 to start a Spark cluster"
)
def test_standalone_cluster_returns_the_rows_of_local(tmp_path: Path) -> None:
    reason = unavailable_reason()
    if reason is not None:
        pytest.skip(reason)
    answer = run(tmp_path)
    expected = answer["expected"]
    assert answer["local[2]"]["answers"] == expected
    assert answer["standalone"]["answers"] == expected
    print(
        "\n"
        + "; ".join(f"{m}: {answer[m]['throughput']}" for m in ("local[2]", "standalone"))
        + f"; {answer['seconds']} s"
    )
    out = os.environ.get("KDUMP_SPARK_CLUSTER_OUT")
    if out:
        Path(out).write_text(json.dumps(answer, indent=2) + "\n")


@pytest.mark.spark_cluster
@pytest.mark.skipif(
    os.environ.get("KDUMP_SPARK_CLUSTER") != "1", reason="set KDUMP_SPARK_CLUSTER=1 to start a Spark cluster"
)
def test_standalone_cluster_with_the_jvm_engine(tmp_path: Path) -> None:
    """The JVM engine (kdump.spark.engine: its jar shipped to the executors with spark.jars, the legacy
    segments of the fixtures handed to the Python reader on the workers), through kdump.spark.read and by the
    name kafka-log, on the same cluster: the rows and
    aggregates of kdump's decode, as on local[2]; the figures per core of both engines and masters printed."""
    reason = unavailable_reason()
    if reason is not None:
        pytest.skip(reason)
    from kdump.spark import engine

    if engine.jar_path() is None:
        pytest.skip(f"the JVM engine cannot be built here: {engine.jar_problem}")
    answer = run(tmp_path, ("python", "jvm", "name"))
    expected = answer["expected"]
    masters = ("local[2]", "standalone", "local[2] jvm", "standalone jvm", "local[2] name", "standalone name")
    for master in masters:
        assert answer[master]["answers"] == expected, master
    print("\n" + "; ".join(f"{m}: {answer[m]['throughput']}" for m in masters) + f"; {answer['seconds']} s")
    out = os.environ.get("KDUMP_SPARK_CLUSTER_OUT")
    if out:
        Path(out).write_text(json.dumps(answer, indent=2) + "\n")
