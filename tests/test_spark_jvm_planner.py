"""``python -m kdump.spark.jvm_planner`` (what the JVM source asks on the driver) and the name the Python source
takes: no JVM needed (the reads themselves are tests/test_spark_jvm.py's and tests/test_spark.py's)."""

from __future__ import annotations

import json
import os
import subprocess
import sys

import pytest

from tests.corpus import FIXTURE_CORPUS, REPO

pytest.importorskip("pyspark")

PLAIN = str(FIXTURE_CORPUS / "data" / "plain-0")
LEGACY_TREE = str(FIXTURE_CORPUS / "data")


def ask(request: dict) -> subprocess.CompletedProcess:
    env = dict(os.environ, PYTHONPATH=str(REPO))
    return subprocess.run(
        [sys.executable, "-m", "kdump.spark.jvm_planner"],
        input=json.dumps(request),
        capture_output=True,
        text=True,
        env=env,
        timeout=120,
    )


@pytest.mark.parametrize(
    "options",
    [
        {},
        {"includeHeaders": "true"},
        {"decoder": "offsets"},
        {"decodeKeys": "schema-registry", "decodeValues": "schema-registry"},
        {"columns": "offset,headers,key", "includeHeaders": "true"},
        {"columns": "decoded,topic", "decoder": "transaction-log"},
    ],
)
def test_the_schema_json_is_the_python_sources_schema(options: dict[str, str]) -> None:
    """The JSON the planner writes without PySpark is PySpark's own JSON of the Python source's schema."""
    from pyspark.sql.types import StructType

    from kdump.spark.schema import source_schema, source_schema_json

    written = json.loads(source_schema_json(options))
    assert StructType.fromJson(written) == source_schema(options)
    assert written == json.loads(source_schema(options).json())


def test_the_planner_answers_schema_settings_and_tasks() -> None:
    done = ask({"options": {"path": PLAIN, "includeHeaders": "true"}})
    assert done.returncode == 0, done.stderr
    answer = json.loads(done.stdout)
    assert [f["name"] for f in json.loads(answer["schema"])["fields"]][7] == "headers"
    assert answer["settings"]["includeHeaders"] is True and answer["settings"]["pythonOnly"] is False
    splits = [s for task in answer["tasks"] for s in task]
    assert splits and all(s["path"].startswith(PLAIN) and "python" not in s for s in splits)
    # narrowed by a pushed filter on the partition: nothing of partition 0 is planned
    done = ask(
        {"options": {"path": PLAIN}, "filters": [{"kind": "EqualTo", "column": "partition", "values": [7]}]}
    )
    assert done.returncode == 0 and json.loads(done.stdout)["tasks"] == []


def test_a_read_the_jvm_does_not_decode_is_handed_over_whole() -> None:
    done = ask({"options": {"path": LEGACY_TREE, "decoder": "offsets"}})
    assert done.returncode == 0, done.stderr
    answer = json.loads(done.stdout)
    assert answer["settings"]["pythonOnly"] is True and answer["settings"]["pickledOptions"]
    splits = [s for task in answer["tasks"] for s in task]
    assert splits and all(s["python"] is True for s in splits)


def test_a_bad_option_is_one_line_and_status_2() -> None:
    done = ask({"options": {"path": PLAIN, "isolation.level": "bogus"}})
    assert done.returncode == 2 and done.stdout == ""
    assert done.stderr.strip().splitlines() == [
        "kafka-log: isolation.level: expected read_uncommitted or read_committed, not 'bogus'"
    ]


def test_pyspark_kafka_log_gives_the_name_to_the_jvm_source_when_told(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    import pyspark_kafka_log

    monkeypatch.delenv("KDUMP_SPARK_JVM_SOURCE", raising=False)
    assert pyspark_kafka_log.DefaultSource.name() == "kafka-log"
    monkeypatch.setenv("KDUMP_SPARK_JVM_SOURCE", "1")
    assert pyspark_kafka_log.DefaultSource.name() == "kafka-log-python"
