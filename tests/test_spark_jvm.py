"""The JVM engine of the ``kafka-log`` source (:mod:`kdump.spark.engine`, ``kdump/spark/jvm/*.java``).

The oracle is the Python source (whose rows are spark-sql-kafka's: tests/test_spark.py) and, for the fixture
trees, the storage core's decode (``tests.spark_oracle.expected_rows``): every row and column equal, over the
fixture and corpus trees, the damaged corpus cases, every codec with the hostile batches of
test_spark_columns, randomly damaged records, bench-like segments cut into many splits, headers, control
records, read_committed and offset ranges.  ``KDUMP_FALLBACK_LOG`` shows which splits the JVM reader handed
to the Python reader (only legacy and damaged data may be handed over).  Without javac the engine is not
built and kdump.spark.read is the Python source.
"""

from __future__ import annotations

import json
import os
import random
import shutil
from pathlib import Path

import pytest

from tests.corpus import CORPUS, corpus_available
from tests.spark_oracle import CORPUS_TREES, FIXTURE_TREES, expected_rows

pytestmark = pytest.mark.spark

pytest.importorskip("pyarrow")
pytest.importorskip("pyspark")
if shutil.which("java") is None:  # pragma: no cover - CI installs Java
    pytest.skip("Java is not installed (Spark needs Java 17+)", allow_module_level=True)

from kdump.spark import engine  # noqa: E402
from kdump.storage.compression import GZIP, LZ4, NONE, SNAPPY, ZSTD, compress  # noqa: E402
from tests.test_spark_columns import encode_batch, good, hostile_cases, write_partition  # noqa: E402

needs_corpus = pytest.mark.skipif(not corpus_available(), reason=f"reference corpus not found at {CORPUS}")
CODECS = {"none": NONE, "gzip": GZIP, "snappy": SNAPPY, "lz4": LZ4, "zstd": ZSTD}


@pytest.fixture(scope="module")
def fallback_log(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return tmp_path_factory.mktemp("fallback") / "handed-over.jsonl"


@pytest.fixture(scope="module")
def spark(fallback_log: Path):
    if engine.jar_path() is None:
        pytest.skip(f"the JVM engine cannot be built here: {engine.jar_problem}")
    from kdump.spark import session

    old = os.environ.get("KDUMP_FALLBACK_LOG")
    os.environ["KDUMP_FALLBACK_LOG"] = str(fallback_log)  # the JVM and the processes it starts inherit it
    spark = session("local[2]", "kdump jvm tests", {"spark.ui.enabled": "false"})
    yield spark
    spark.stop()
    if old is None:
        os.environ.pop("KDUMP_FALLBACK_LOG", None)
    else:
        os.environ["KDUMP_FALLBACK_LOG"] = old


def handed_over(log: Path) -> list[dict]:
    """The fallback log's entries so far (and empties it)."""
    if not log.is_file():
        return []
    entries = [json.loads(line) for line in log.read_text().splitlines()]
    log.unlink()
    return entries


def collected(df) -> list[str]:
    return sorted(repr(tuple(r)) for r in df.collect())


def both(spark, paths, options: dict[str, str]) -> list[str]:
    """The rows of both engines (asserted equal, schema too), sorted; the JVM engine read twice, through
    :func:`kdump.spark.read` (by class name) and by the name ``kafka-log``."""
    from kdump.spark import read

    jvm = read(spark, paths, options, engine="jvm")
    assert "kafka-log (jvm)" in jvm._jdf.queryExecution().executedPlan().toString()
    named = spark.read.format("kafka-log").options(**options).load(paths)
    assert "kafka-log (jvm)" in named._jdf.queryExecution().executedPlan().toString()
    python = read(spark, paths, options, engine="python")
    assert "kafka-log (jvm)" not in python._jdf.queryExecution().executedPlan().toString()
    assert jvm.schema == python.schema
    assert named.schema == python.schema
    got, want = collected(jvm), collected(python)
    assert len(got) == len(want)
    assert got == want
    assert collected(named) == want
    return got


def test_the_engine_is_loaded(spark) -> None:
    assert engine.jvm_loaded(spark)


@pytest.mark.parametrize(
    "options",
    [
        {},
        {"includeControlRecords": "true", "includeHeaders": "true"},
        {"isolation.level": "read_committed", "includeHeaders": "true"},
        {"maxBytesPerSplit": "3000", "startingOffsets": json.dumps({"small-index": {"0": 200}})},
        {"columns": "offset,headers,segment,key", "includeHeaders": "true"},
    ],
    ids=["plain", "headers-control", "committed", "ranges", "columns"],
)
def test_fixture_trees(spark, fallback_log: Path, options: dict[str, str]) -> None:
    rows = both(spark, FIXTURE_TREES, options)
    assert len(rows) > 1000
    handed = handed_over(fallback_log)
    # legacy magic 0/1 segments are the Python reader's; every magic-2 one is read on the JVM
    assert handed and all("legacy" in h["path"] or "kafka39" in h["path"] for h in handed)


def test_fixture_trees_against_the_storage_core(spark) -> None:
    from kdump.spark import read
    from tests.test_spark import rows

    df = read(spark, FIXTURE_TREES, {"includeHeaders": "true"}, engine="jvm")
    assert rows(df, True) == expected_rows(FIXTURE_TREES, include_headers=True)


@needs_corpus
def test_corpus_and_damaged_cases(spark, fallback_log: Path, tmp_path: Path) -> None:
    trees = [str(CORPUS / t) for t in CORPUS_TREES]
    handed_over(fallback_log)
    for options in ({"includeHeaders": "true"}, {"isolation.level": "read_committed"}):
        both(spark, trees, options)
    handed = {h["path"] for h in handed_over(fallback_log)}
    codec_logs = [p for p in handed if "/codec-" in p or "/broker-zstd" in p or "/txn-" in p]
    assert not codec_logs  # every codec and the transactions are read on the JVM
    damaged = sorted(str(p) for p in (CORPUS / "damaged").iterdir() if p.is_dir())
    for policy in ("skip", "keep"):
        reports = {}
        for engine_name in ("jvm", "python"):
            from kdump.spark import read

            where = tmp_path / f"{policy}-{engine_name}"
            options = {
                "corruptBatches": policy,
                "corruptReportDir": str(where),
                "corruptReportStderr": "false",
            }
            both(spark, damaged, options)  # (writes reports twice: the jvm and the python read)
            read(spark, damaged, options, engine=engine_name).count()
            found = sorted(
                (r["segment"], r["position"], r["kind"], r["message"])
                for f in where.iterdir()
                for r in map(json.loads, f.read_text().splitlines())
            )
            reports[engine_name] = found
        assert reports["jvm"] == reports["python"] and reports["jvm"]


@pytest.mark.parametrize("codec", list(CODECS), ids=list(CODECS))
def test_every_codec_with_hostile_batches(spark, fallback_log: Path, tmp_path: Path, codec: str) -> None:
    cases = hostile_cases(CODECS[codec])
    for name, batches in cases.items():
        write_partition(tmp_path, batches, name.replace(" ", "-").replace(":", "") + "-0")
    handed_over(fallback_log)
    rows = both(spark, [str(tmp_path)], {"includeHeaders": "true"})
    assert len(rows) > 20
    both(spark, [str(tmp_path)], {})
    handed = {Path(h["path"]).parent.name for h in handed_over(fallback_log)}
    assert "good-0" not in handed and "utf8-header-keys-0" not in handed and "transactional-0" not in handed


@pytest.mark.parametrize("codec", ["none", "zstd"])
def test_randomly_damaged_records(spark, tmp_path: Path, codec: str) -> None:
    """Bytes of the records changed at random, CRC recomputed (seed 20261127): the same rows."""
    rng = random.Random(20261127 + CODECS[codec])
    plain = good(12)
    batches = []
    for i in range(120):
        damaged = bytearray(plain)
        for _ in range(rng.randint(0, 3)):
            at = rng.randrange(len(damaged))
            damaged[at] = rng.choice([0x00, 0x01, 0x7F, 0x80, 0xFF, rng.randrange(256)])
        batches.append(encode_batch(bytes(damaged), 12, codec=CODECS[codec], base_offset=12 * i))
    directory = write_partition(tmp_path, batches)
    rows = both(spark, [str(directory)], {"includeHeaders": "true"})
    assert 0 < len(rows) < 12 * 120


def test_bench_like_segments_in_many_splits(spark, fallback_log: Path, tmp_path: Path) -> None:
    """The bench's shape (9-byte keys, 100-byte values, 136 records a batch, an idempotent producer), plain
    and zstd, cut into splits at offset-index entries (none written: the planner walks the batches)."""
    import sys

    sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "bench"))
    import make_segments

    from tests.builder import build_v2_batch, encode_v2_records

    params = {**make_segments.parameters(True), "records": 20_000}
    for name, codec in make_segments.LAYOUT.items():
        out = tmp_path / name
        out.mkdir()
        with open(out / make_segments.SEGMENT, "wb") as f:
            for records, base in make_segments.batches(params):
                plain = encode_v2_records(records, base_offset=base, base_timestamp=records[0].timestamp)
                f.write(
                    build_v2_batch(
                        records,
                        base_offset=base,
                        compression=codec,
                        producer_id=params["producer_id"],
                        producer_epoch=0,
                        base_sequence=base,
                        payload=plain if codec == NONE else compress(codec, plain),
                    )
                )
    handed_over(fallback_log)
    for options in (
        {"maxBytesPerSplit": "200000"},
        {"isolation.level": "read_committed", "minPartitions": "7"},
    ):
        rows = both(spark, [str(tmp_path)], options)
        assert len(rows) == 40_000
    assert handed_over(fallback_log) == []


def test_fail_policy_fails_the_job(spark, tmp_path: Path) -> None:
    from kdump.spark import read

    bad = bytearray(encode_batch(good(5), 5))
    bad[-1] ^= 0xFF  # CRC mismatch
    directory = write_partition(tmp_path, [encode_batch(good(3), 3, base_offset=0), bytes(bad)])
    with pytest.raises(Exception, match="Python reader of the split from byte"):
        read(spark, [str(directory)], {"corruptBatches": "fail"}, engine="jvm").collect()
    assert len(read(spark, [str(directory)], {}, engine="jvm").collect()) == 3


def test_codecs_left_to_the_python_reader(spark, fallback_log: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """KDUMP_JVM_CODECS=none: every compressed batch goes through the fallback, rows unchanged."""
    monkeypatch.setenv("KDUMP_JVM_CODECS", "none")
    handed_over(fallback_log)
    both(spark, FIXTURE_TREES, {"includeHeaders": "true"})
    assert any("codec-" in h["path"] for h in handed_over(fallback_log))


def test_read_without_the_jar_is_the_python_source(
    spark, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    from kdump.spark import read

    monkeypatch.setattr(engine, "jvm_loaded", lambda spark: False)
    df = read(spark, FIXTURE_TREES, {}, engine="jvm")
    assert "kafka-log (jvm)" not in df._jdf.queryExecution().executedPlan().toString()
    assert "engine=jvm not used" in capsys.readouterr().err
    assert df.count() == read(spark, FIXTURE_TREES, {}, engine="python").count()
    df = read(spark, FIXTURE_TREES, {"decoder": "offsets"}, engine="auto")
    assert "decoded" in df.columns


def test_no_javac_no_jar(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("KDUMP_CACHE_DIR", str(tmp_path))
    monkeypatch.setenv("KDUMP_JAVAC", "none")
    assert engine.jar_path() is None
    assert "javac" in (engine.jar_problem or "")
    assert engine.session_conf({}) == {}
    monkeypatch.setenv("KDUMP_JAVAC", str(tmp_path / "no-such-javac"))
    assert engine.jar_path() is None
    assert not list(tmp_path.rglob("*.jar"))


def test_engine_option_is_checked(spark) -> None:
    from kdump.spark import read
    from kdump.spark.options import OptionError

    with pytest.raises(OptionError, match="engine"):
        read(spark, FIXTURE_TREES, {"engine": "fast"})


# -- filter pushdown -----------------------------------------------------------------------------------------


def bytes_read(spark) -> int:
    """KafkaLogSource.bytesRead(): the bytes the JVM readers of this (local) JVM read from segment files."""
    jvm = spark.sparkContext._jvm
    loader = jvm.java.lang.Thread.currentThread().getContextClassLoader()
    cls = jvm.java.lang.Class.forName(engine.SOURCE_CLASS, True, loader)
    return int(cls.getMethod("bytesRead", None).invoke(None, None))


def filtered_both(spark, paths, options: dict[str, str], conditions: list[str]) -> dict[str, int]:
    """For each condition: the JVM engine's rows with it pushed down equal Spark's filter over the full scan of
    the Python source (pushFilters=false: nothing narrowed); the JVM's bytes read per condition."""
    from kdump.spark import read

    jvm = read(spark, paths, options, engine="jvm")
    named = spark.read.format("kafka-log").options(**options).load(paths)
    python = read(spark, paths, {**options, "pushFilters": "false"}, engine="python")
    read_bytes = {}
    for condition in conditions:
        want = collected(python.filter(condition))
        for df in (jvm, named):  # kdump.spark.read's and the name's: the same plan, bytes and rows
            query = df.filter(condition)
            pushed = "kafka-log (jvm) pushed" in query._jdf.queryExecution().executedPlan().toString()
            assert pushed == (" OR " not in condition), (
                condition
            )  # (an OR is not pushed: Spark alone filters)
            before = bytes_read(spark)
            got = collected(query)
            count = bytes_read(spark) - before
            assert read_bytes.setdefault(condition, count) == count, condition
            assert got == want, condition
    return read_bytes


def timestamps(spark, paths) -> list[int]:
    from kdump.spark import read

    rows = read(spark, paths, {}, engine="python").selectExpr("unix_micros(timestamp)").collect()
    return sorted({r[0] for r in rows})


def test_pushed_filters_on_the_fixture_trees(spark) -> None:
    from kdump.spark import read

    ts = timestamps(spark, FIXTURE_TREES)
    mid, late = ts[len(ts) // 2], ts[-3]
    topic = read(spark, FIXTURE_TREES, {}, engine="python").select("topic").first()[0]
    conditions = [
        "offset >= 200",
        "offset > 5 AND offset < 300",
        "offset = 42",
        "offset IN (1, 50, 700)",
        "offset <= 10 OR offset >= 900",
        "partition = 0",
        f"topic = '{topic}'",
        f"timestamp >= timestamp_micros({mid})",
        f"timestamp > timestamp_micros({late})",
        f"timestamp < timestamp_micros({mid})",
        f"timestamp = timestamp_micros({mid})",
        f"offset >= 100 AND timestamp <= timestamp_micros({mid}) AND partition <= 1",
    ]
    before = bytes_read(spark)
    full = read(spark, FIXTURE_TREES, {}, engine="jvm").count()
    whole = bytes_read(spark) - before
    assert full > 1000 and whole > 0
    read_bytes = filtered_both(spark, FIXTURE_TREES, {}, conditions)
    # (many small partitions: a partition read from its offset's batch still reads a batch or two)
    assert read_bytes["offset = 42"] < whole / 4, (read_bytes, whole)
    assert read_bytes[f"timestamp > timestamp_micros({late})"] < whole / 2, (read_bytes, whole)
    for options in ({"includeControlRecords": "true"}, {"isolation.level": "read_committed"}):
        filtered_both(spark, FIXTURE_TREES, options, conditions[:2] + conditions[7:9])


@needs_corpus
def test_pushed_filters_on_the_corpus(spark) -> None:
    trees = [str(CORPUS / t) for t in CORPUS_TREES]
    ts = timestamps(spark, trees)
    mid = ts[len(ts) // 2]
    conditions = [
        "offset >= 500",
        "offset BETWEEN 10 AND 20",
        f"timestamp >= timestamp_micros({mid})",
        f"timestamp < timestamp_micros({mid}) AND offset > 3",
    ]
    filtered_both(spark, trees, {"includeHeaders": "true"}, conditions)
    filtered_both(spark, trees, {"isolation.level": "read_committed"}, conditions[2:])


def test_batches_left_out_by_their_timestamps(spark, tmp_path: Path) -> None:
    """Batches out of time order (CreateTime), LogAppendTime ones and transactions: a batch whose header puts
    every record outside the timestamp filters is not decoded, and the rows are still the full scan's."""
    from tests.test_spark_columns import LOG_APPEND_TIME, TRANSACTIONAL

    base = 1_700_000_000_000
    batches = []
    order = [5, 1, 7, 2, 9, 3, 8, 0, 6, 4] * 3
    for i, slot in enumerate(order):
        at = base + slot * 1000
        attributes = LOG_APPEND_TIME if i % 4 == 3 else 0
        if i % 5 == 2:
            attributes |= TRANSACTIONAL
        batches.append(
            encode_batch(
                good(12, 12 * i),
                12,
                codec=ZSTD if i % 2 else NONE,
                attributes=attributes,
                base_offset=12 * i,
                base_timestamp=at,
                max_timestamp=at + 33,
                producer_id=7 if attributes & TRANSACTIONAL else -1,
            )
        )
    directory = write_partition(tmp_path, batches)
    mid = (base + 4500) * 1000
    conditions = [
        f"timestamp >= timestamp_micros({mid})",
        f"timestamp < timestamp_micros({mid})",
        f"timestamp >= timestamp_micros({mid}) AND timestamp <= timestamp_micros({mid + 3_000_000})",
        f"timestamp IN (timestamp_micros({(base + 2001) * 1000}), timestamp_micros({(base + 9003) * 1000}))",
    ]
    for options in ({"includeHeaders": "true"}, {"isolation.level": "read_committed"}):
        filtered_both(spark, [str(directory)], options, conditions)
