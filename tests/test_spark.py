"""The ``kafka-log`` data source and ``kdump spark`` on a real Spark (local[2], one session for the module).

Record-for-record equality with kdump's own decode over tests/fixtures and the corpus, read_committed on the
corpus txn topic against the control markers, offset and time ranges, damaged batches, and both commands.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from click.testing import CliRunner

from tests.corpus import CORPUS, FIXTURE_CORPUS, REPO, corpus_available
from tests.spark_oracle import CORPUS_TREES, FIXTURE_TREES, committed_offsets, expected_rows

pytestmark = pytest.mark.spark

pytest.importorskip("pyarrow")
pytest.importorskip("pyspark")
if shutil.which("java") is None:  # pragma: no cover - CI installs Java
    pytest.skip("Java is not installed (Spark needs Java 17+)", allow_module_level=True)

from kdump.cli import cli  # noqa: E402
from kdump.spark.schema import column_names  # noqa: E402
from kdump.spark.source import PYTHON_NAME  # noqa: E402

#: Both engines by name: ``kafka-log`` is the JVM engine in a session kdump.spark.session started with its jar
#: (``javac`` present), the Python source otherwise; ``kafka-log-python`` is always the Python source.
SOURCES = ["kafka-log", PYTHON_NAME]

needs_corpus = pytest.mark.skipif(not corpus_available(), reason=f"reference corpus not found at {CORPUS}")


@pytest.fixture(scope="module")
def spark():
    from kdump.spark import session

    spark = session(
        "local[2]", "kdump tests", {"spark.sql.shuffle.partitions": "2", "spark.ui.enabled": "false"}
    )
    yield spark
    spark.stop()


def rows(df, include_headers: bool = False) -> list[tuple]:
    """The DataFrame's rows in the layout of ``expected_rows`` (timestamps in milliseconds)."""
    names = column_names(include_headers)
    exprs = [
        "floor(unix_micros(timestamp) / 1000) AS timestamp" if n == "timestamp" else f"`{n}`" for n in names
    ]
    out = []
    for row in df.selectExpr(*exprs).collect():
        values = list(row)
        for i, n in enumerate(names):
            if n in ("key", "value") and values[i] is not None:
                values[i] = bytes(values[i])
            if n == "headers" and values[i] is not None:
                values[i] = [(h["key"], None if h["value"] is None else bytes(h["value"])) for h in values[i]]
        out.append(tuple(values))
    return sorted(out, key=lambda r: (r[2], r[3], r[4]))


@pytest.mark.parametrize("source", SOURCES)
def test_fixtures_match_kdump_decode(spark, source: str) -> None:
    df = spark.read.format(source).option("includeHeaders", "true").load(FIXTURE_TREES)
    assert df.columns == column_names(True)
    assert rows(df, True) == expected_rows(FIXTURE_TREES, include_headers=True)


@needs_corpus
@pytest.mark.parametrize("source", SOURCES)
def test_corpus_matches_kdump_decode(spark, source: str) -> None:
    trees = [str(CORPUS / t) for t in CORPUS_TREES]
    df = spark.read.format(source).load(trees)
    assert rows(df) == expected_rows(trees)


@needs_corpus
@pytest.mark.parametrize("source", SOURCES)
def test_read_committed_on_corpus_txn_topic(spark, source: str) -> None:
    directory = str(CORPUS / "data" / "txn-0")
    df = spark.read.format(source).option("isolation.level", "read_committed").load(directory)
    got = [r.offset for r in df.select("offset").collect()]
    assert sorted(got) == sorted(committed_offsets(directory))
    everything = spark.read.format(source).option("includeControlRecords", "true").load(directory)
    assert everything.count() > len(got) and everything.filter("isControl").count() == 18
    assert spark.read.format(source).load(directory).filter("isControl").count() == 0


@pytest.mark.parametrize("source", SOURCES)
def test_offset_and_timestamp_ranges(spark, source: str) -> None:
    directory = str(FIXTURE_CORPUS / "data" / "small-index-0")
    all_rows = sorted(
        (r.offset, r.ts)
        for r in spark.read.format(source)
        .load(directory)
        .selectExpr("offset", "unix_millis(timestamp) AS ts")
        .collect()
    )
    df = (
        spark.read.format(source)
        .option("startingOffsets", json.dumps({"small-index": {"0": 200}}))
        .option("endingOffsets", json.dumps({"small-index": {"0": -1}}))
        .option("maxBytesPerSplit", "4000")
        .load(directory)
    )
    assert sorted(r.offset for r in df.select("offset").collect()) == [o for o, _ in all_rows if o >= 200]
    t0 = all_rows[len(all_rows) // 3][1]
    df = spark.read.format(source).option("endingTimestamp", str(t0)).load(directory)
    first_late = min(o for o, t in all_rows if t >= t0)
    assert sorted(r.offset for r in df.select("offset").collect()) == [
        o for o, _ in all_rows if o < first_late
    ]


@pytest.mark.parametrize("source", SOURCES)
def test_filters_pushed_down_keep_the_rows(spark, source: str) -> None:
    """pushFilters=true: through PySpark's own pushdown worker (the session turns pushdown on), each query's
    rows equal the rows of the whole read that pass its filter (kdump's decode, tests/spark_oracle); a topic
    filter leaves partitions out of the plan.  Without pushFilters a DataFrame queried twice, first with a
    filter, answers the second query from every record (PySpark 4.3 would reuse a pushed-down plan)."""
    from datetime import UTC, datetime

    from pyspark.sql.functions import col, lit

    whole = expected_rows(FIXTURE_TREES)  # key, value, topic, partition, offset, timestamp (ms), ...
    t = whole[len(whole) // 2][5]
    cases = [
        (col("offset") >= 100, lambda r: r[4] >= 100),
        (
            (col("topic") == "small-index") & (col("offset") < 150),
            lambda r: r[2] == "small-index" and r[4] < 150,
        ),
        (col("timestamp") >= lit(datetime.fromtimestamp(t / 1000, UTC)), lambda r: r[5] >= t),
        ((col("topic") == "plain") | (col("offset") >= 5), lambda r: r[2] == "plain" or r[4] >= 5),
    ]
    pushed = spark.read.format(source).option("pushFilters", "true")
    for condition, keep in cases:
        assert rows(pushed.load(FIXTURE_TREES).filter(condition)) == [r for r in whole if keep(r)], condition
    every_task = spark.read.format(source).option("minPartitions", "64").option("openCostInBytes", "0")
    narrowed = pushed.option("minPartitions", "64").option("openCostInBytes", "0").load(FIXTURE_TREES)
    topic_only = narrowed.filter(col("topic") == "small-index")
    assert topic_only.rdd.getNumPartitions() < every_task.load(FIXTURE_TREES).rdd.getNumPartitions()
    df = spark.read.format(source).load(FIXTURE_TREES)
    assert df.filter(col("offset") >= 100).count() == sum(1 for r in whole if r[4] >= 100)
    assert df.count() == len(whole)
    pruned = spark.read.format(source).option("columns", "topic,offset").load(FIXTURE_TREES)
    assert pruned.columns == ["topic", "offset"]
    assert sorted(tuple(r) for r in pruned.collect()) == sorted((r[2], r[4]) for r in whole)


def test_the_name_is_the_jvm_engine_where_its_jar_is_loaded(spark) -> None:
    """In a session kdump.spark.session started with the JVM engine's jar, ``kafka-log`` is that engine (column
    batches, no Python worker) and ``kafka-log-python`` the Python source; without the jar both are Python."""
    from kdump.spark import engine

    def plan(name: str) -> str:
        return spark.read.format(name).load(FIXTURE_TREES)._jdf.queryExecution().executedPlan().toString()

    loaded = engine.jvm_loaded(spark)
    assert loaded == (engine.jar_path() is not None)
    assert ("kafka-log (jvm)" in plan("kafka-log")) is loaded
    assert "kafka-log (jvm)" not in plan(PYTHON_NAME)
    assert "(Python)" in plan(PYTHON_NAME)


@pytest.mark.parametrize("source", SOURCES)
def test_bad_options_are_refused_with_their_message(spark, source: str) -> None:
    with pytest.raises(Exception, match=r"isolation.level: expected read_uncommitted or read_committed"):
        spark.read.format(source).option("isolation.level", "bogus").load(FIXTURE_TREES).count()
    with pytest.raises(Exception, match=r"columns: no column 'nope'"):
        spark.read.format(source).option("columns", "offset,nope").load(FIXTURE_TREES).count()


def test_session_turns_arrow_java_checks_off(spark) -> None:
    """kdump.spark.session starts its JVM with Arrow Java's bounds checks off (kdump.spark.ARROW_JAVA_OPTIONS),
    as the JVM itself says, and rows are still exactly the oracle's (the other tests of this module)."""
    system = spark.sparkContext._jvm.java.lang.System
    assert system.getProperty("arrow.enable_unsafe_memory_access") == "true"
    assert system.getProperty("arrow.enable_null_check_for_get") == "false"


def test_pushed_plan_reuse_is_what_the_pushdown_default_says(spark) -> None:
    """kdump.spark.pushdown_plan_per_scan, which decides pushFilters's default, against what this Spark does:
    a DataFrame read with pushFilters=true, counted with an offset filter and then without one, counts every
    record the second time only on a Spark that keeps a pushed-down plan with its scan.  On PySpark 4.3 the
    second count is that of the first filter's narrowed plan (fewer than all records), so the default stays
    off; the default read answers both queries right on either."""
    from pyspark.sql.functions import col

    from kdump.spark import pushdown_plan_per_scan

    whole = expected_rows(FIXTURE_TREES)
    late = sum(1 for r in whole if r[4] >= 100)
    per_scan = pushdown_plan_per_scan(spark)
    pushed = spark.read.format(PYTHON_NAME).option("pushFilters", "true").load(FIXTURE_TREES)
    assert pushed.filter(col("offset") >= 100).count() == late
    second = pushed.count()
    assert (second == len(whole)) is per_scan, (second, len(whole))
    default = spark.read.format(PYTHON_NAME).load(FIXTURE_TREES)
    assert default.filter(col("offset") >= 100).count() == late
    assert default.count() == len(whole)


@needs_corpus
@pytest.mark.parametrize("source", SOURCES)
def test_corrupt_batches_skipped_or_fail(spark, source: str, tmp_path: Path) -> None:
    case = str(CORPUS / "damaged" / "crc-flip-uncompressed")
    df = spark.read.format(source).option("corruptReportDir", str(tmp_path)).load(case)
    assert rows(df) == expected_rows([case])
    reports = [json.loads(line) for f in tmp_path.iterdir() for line in f.read_text().splitlines()]
    assert [(r["kind"], r["offset"]) for r in reports] == [("crc", 46)]
    with pytest.raises(Exception, match="CRC mismatch"):
        spark.read.format(source).option("corruptBatches", "fail").load(case).collect()


def test_export_and_verify_commands(spark, tmp_path: Path) -> None:
    runner = CliRunner()
    out = tmp_path / "out"
    source = str(FIXTURE_CORPUS / "data" / "txn-0")
    result = runner.invoke(
        cli,
        [
            "spark",
            "export",
            source,
            "--output",
            str(out),
            "--format",
            "json",
            "--include-headers",
            "--master",
            "local[2]",
        ],
    )
    assert result.exit_code == 0, result.output
    exported = [
        json.loads(line) for f in sorted(out.glob("part-*.json")) for line in f.read_text().splitlines()
    ]
    assert len(exported) == len(expected_rows([source])) and set(exported[0]) >= {"key", "offset", "crcValid"}
    parquet = tmp_path / "pq"
    result = runner.invoke(
        cli,
        [
            "spark",
            "export",
            source,
            "-o",
            str(parquet),
            "--isolation-level",
            "read_committed",
            "--master",
            "local[2]",
        ],
    )
    assert result.exit_code == 0 and spark.read.parquet(str(parquet)).count() == 0  # see the LSO test
    report = tmp_path / "report.jsonl"
    result = runner.invoke(
        cli, ["spark", "verify", str(FIXTURE_CORPUS / "data" / "small-index-0"), "--master", "local[2]"]
    )
    assert result.exit_code == 0 and "no problems found" in result.output, result.output
    result = runner.invoke(
        cli, ["spark", "verify", str(FIXTURE_CORPUS / "data" / "plain-0"), "--master", "local[2]"]
    )
    assert result.exit_code == 1 and "missing-index: 2" in result.output, (
        result.output
    )  # the copy has no indexes
    if corpus_available():
        damaged = str(CORPUS / "damaged" / "crc-flip-compressed")
        result = runner.invoke(
            cli, ["spark", "verify", damaged, "--deep", "-o", str(report), "--master", "local[2]"]
        )
        assert result.exit_code == 1
        problems = [json.loads(line) for line in report.read_text().splitlines()]
        kinds = {p["kind"] for p in problems if p["type"] == "problem"}
        assert kinds >= {"crc", "decode"} and problems[-1]["type"] == "summary"
        # The same checks with the same code: kdump verify's own report, object for object.
        local = runner.invoke(cli, ["verify", "--json", "--deep", damaged])
        assert local.output == report.read_text()


#: How each session of the test below is started, and which source each name is then (jvm, python).
REGULAR_INSTALL_CASES = {
    # PySpark's own session: pyspark_kafka_log registers the Python source as kafka-log
    "plain": (
        "SparkSession.builder.master('local[1]').config('spark.ui.enabled', 'false').getOrCreate()",
        {"kafka-log": "python"},
    ),
    # kdump.spark.session with the JVM engine's jar: kafka-log is the JVM engine, the Python source is
    # kafka-log-python (pyspark_kafka_log told so by KDUMP_SPARK_JVM_SOURCE)
    "session": (
        "session('local[1]', 'reg', {'spark.ui.enabled': 'false'})",
        {"kafka-log": "jvm", "kafka-log-python": "python"},
    ),
    # the jar added by hand: the Python source found by PySpark keeps kafka-log, the JVM source gives way
    # (kafka-log-jvm) instead of Spark refusing the name (FOUND_MULTIPLE_DATA_SOURCES)
    "jar by hand": (
        "SparkSession.builder.master('local[1]').config('spark.ui.enabled', 'false')"
        ".config('spark.jars', JAR).getOrCreate()",
        {"kafka-log": "python", "kafka-log-jvm": "jvm"},
    ),
}


@pytest.mark.parametrize("case", list(REGULAR_INSTALL_CASES))
def test_registered_automatically_with_a_regular_install(tmp_path: Path, case: str) -> None:
    # pyspark_kafka_log is found by PySpark's own lookup when it is on a plain sys.path entry (a regular
    # install); an editable install hides it behind an import hook, so the test puts the repository first.
    from kdump.spark import engine

    start, names = REGULAR_INSTALL_CASES[case]
    jar = engine.jar_path()
    if "jvm" in names.values() and jar is None:
        pytest.skip(f"the JVM engine cannot be built here: {engine.jar_problem}")
    path = str(FIXTURE_CORPUS / "data" / "plain-0")
    script = (
        "from pyspark.sql import SparkSession\n"
        "from kdump.spark import session\n"
        f"JAR = {str(jar)!r}\n"
        f"s = {start}\n"
        f"for name in {list(names)!r}:\n"
        f"    df = s.read.format(name).load({path!r})\n"
        "    jvm = 'kafka-log (jvm)' in df._jdf.queryExecution().executedPlan().toString()\n"
        "    print(name, 'jvm' if jvm else 'python', df.count())\n"
    )
    env = dict(os.environ, PYTHONPATH=str(REPO), PYSPARK_PYTHON=sys.executable, SPARK_LOCAL_IP="127.0.0.1")
    env.pop("KDUMP_SPARK_JVM_SOURCE", None)
    result = subprocess.run(
        [sys.executable, "-c", script], env=env, capture_output=True, text=True, cwd=tmp_path, timeout=300
    )
    assert result.returncode == 0, result.stderr[-2000:]
    count = len(expected_rows([path]))
    got = [line for line in result.stdout.splitlines() if line.startswith("kafka-log")]
    assert got == [f"{name} {kind} {count}" for name, kind in names.items()]


def test_export_keeps_the_jvm_log_off_stderr(tmp_path: Path) -> None:
    out = tmp_path / "out"
    result = subprocess.run(
        [
            sys.executable,
            "-m",
            "kdump",
            "spark",
            "export",
            str(FIXTURE_CORPUS / "data" / "txn-0"),
            "-o",
            str(out),
            "--format",
            "json",
            "--include-control",
            "--master",
            "local[1]",
        ],
        capture_output=True,
        text=True,
        cwd=REPO,
        timeout=600,
    )
    assert result.returncode == 0 and result.stderr == "", result.stderr
    assert result.stdout == f"Wrote {out} (json).\n"
    exported = [
        json.loads(line) for f in sorted(out.glob("part-*.json")) for line in f.read_text().splitlines()
    ]
    source = [str(FIXTURE_CORPUS / "data" / "txn-0")]
    assert len(exported) == len(expected_rows(source, include_control=True))
