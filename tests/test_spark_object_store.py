"""The ``kafka-log`` source and ``kdump spark`` over an object store (a real S3 API: moto's server on 127.0.0.1,
as in tests/test_object_store.py): planning lists the objects and reads a few batch headers; the splits' records
are read by whoever reads the split (an executor), straight from the store.  The oracle is the same read of the
local copy (itself checked against kdump's own decode and Kafka's markers by test_spark_storage and test_spark)."""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from kdump.storage import object_store
from tests.corpus import FIXTURE_CORPUS, REPO
from tests.spark_oracle import CORPUS_TREES, expected_rows

pytest.importorskip("pyarrow")
pytest.importorskip("fsspec", reason="fsspec is not installed (pip install 'kdump[s3]')")
pytest.importorskip("s3fs", reason="s3fs is not installed (pip install 'kdump[s3]')")

from kdump.spark.options import parse_options  # noqa: E402
from kdump.spark.planning import plan  # noqa: E402
from kdump.spark.reader import read_split  # noqa: E402
from kdump.storage.record_batch import RECORD_BATCH_OVERHEAD  # noqa: E402
from tests.spark_rows import json_row  # noqa: E402
from tests.test_object_store import moto_s3  # noqa: E402
from tests.test_spark_storage import arrow_rows  # noqa: E402

TREES = [t for t in CORPUS_TREES if (FIXTURE_CORPUS / t).is_dir()]


@pytest.fixture(scope="module")
def s3() -> Iterator[tuple[str, object]]:
    """moto's S3 holding the fixture corpus's trees under ``s3://kdump-corpus/<tree>/``."""
    import boto3

    with moto_s3() as (bucket, requests):
        client = boto3.client("s3")
        for tree in TREES:
            for path in sorted((FIXTURE_CORPUS / tree).rglob("*")):
                if path.is_file():
                    key = str(path.relative_to(FIXTURE_CORPUS))
                    client.put_object(Bucket=bucket, Key=key, Body=path.read_bytes())
        for name, body in _big_segment().items():
            client.put_object(Bucket=bucket, Key=f"big/t-0/{name}", Body=body)
        yield f"s3://{bucket}", requests


#: The big segment's size (about): large against planning's 64 KiB reads.
BIG = 4 << 20


def _big_segment() -> dict[str, bytes]:
    """A 4 MiB segment of 1 KiB-record batches with its offset and time index (Kafka's 4096-byte interval)."""
    from kdump.analysis.index_recovery import recover_indexes
    from kdump.storage.file_records import FileRecords
    from tests.forensic_data import T0, records_batch

    batches, offset = [], 0
    while sum(map(len, batches)) < BIG:
        batches.append(records_batch(offset, [bytes([offset % 251]) * 1000] * 8, ts=T0 + offset))
        offset += 8
    log = b"".join(batches)
    with FileRecords.from_bytes(log) as records:
        indexes = recover_indexes(records, 0)
    name = "00000000000000000000"
    return {
        f"{name}.log": log,
        f"{name}.index": indexes.offset_index_bytes(),
        f"{name}.timeindex": indexes.time_index_bytes(),
    }


def _read(options: dict[str, str]) -> tuple[list, list, object_store.StoreStats]:
    """The splits of a read and its rows; what the driver fetched while planning (its own counts)."""
    selection = parse_options(options)
    object_store.forget()
    splits = plan(selection).splits
    planned = object_store.StoreStats(
        object_store.STATS.metadata_requests,
        object_store.STATS.read_requests,
        object_store.STATS.bytes_fetched,
    )
    batches = [b for split in splits for b in read_split(split, selection.read)]
    return splits, arrow_rows(batches, options.get("includeHeaders") == "true"), planned


def _local(path: str, root: str) -> str:
    return path.replace(root, str(FIXTURE_CORPUS))


def _as_local(row: tuple, root: str) -> tuple:
    """A row read from the store with its segment column (the URL) as the local copy's path."""
    return tuple(_local(v, root) if isinstance(v, str) and v.startswith(root + "/") else v for v in row)


@pytest.mark.parametrize(
    "options",
    [
        {"includeHeaders": "true"},
        {"maxBytesPerSplit": "3000"},
        {"startingOffsets": json.dumps({"txn": {"0": 5}}), "isolationLevel": "read_committed"},
    ],
    ids=["whole", "small-splits", "read-committed-from-5"],
)
def test_source_over_s3_equals_local(options: dict[str, str], s3) -> None:  # noqa: ANN001
    root = s3[0]
    url_splits, url_rows, planned = _read({"paths": json.dumps([f"{root}/{t}" for t in TREES]), **options})
    local_splits, local_rows, _ = _read(
        {"paths": json.dumps([str(FIXTURE_CORPUS / t) for t in TREES]), **options}
    )
    assert [_as_local(r, root) for r in url_rows] == local_rows and len(url_rows) > 100
    # the same splits, the URL standing where the path stood -- but a segment without an offset index is one
    # split from a store (the driver does not walk its batch headers: that would fetch all of it)

    def indexed(path: str) -> bool:
        return Path(path[: -len(".log")] + ".index").exists()

    expected, seen = [], set()
    for s in local_splits:
        if indexed(s.path):
            expected.append((s.path, s.start_position, s.end_position))
        elif s.path not in seen:  # the first split of the segment, running to its end
            expected.append((s.path, s.start_position, None))
        seen.add(s.path)
    assert [(_local(s.path, root), s.start_position, s.end_position) for s in url_splits] == expected
    assert all(s.path.startswith(root + "/") for s in url_splits)
    if options.get("maxBytesPerSplit"):
        assert len(url_splits) > len({s.path for s in url_splits})  # segments were cut at index entries


def test_planning_reads_headers_not_segments(s3) -> None:  # noqa: ANN001
    """The driver lists and reads a few batch headers (at index entries, 64 KiB at a time); the records are
    fetched by the split readers."""
    root = s3[0]
    options = {"path": f"{root}/big/t-0", "maxBytesPerSplit": str(512 << 10)}
    splits, rows, planned = _read(options)
    total = object_store.size_of(f"{root}/big/t-0/00000000000000000000.log")
    assert len(splits) >= 7 and len(rows) > 3000
    # the index (a few KiB) and one 64 KiB read per cut checked, not the segment
    print(
        f"planning fetched {planned.bytes_fetched} bytes in {planned.requests} requests of a {total}-byte segment"
    )
    assert planned.bytes_fetched <= len(splits) * (64 << 10) + (16 << 10) < total // 4
    selection = parse_options(options)
    fetched = []
    for split in splits:
        object_store.forget()
        list(read_split(split, selection.read))
        fetched.append(object_store.STATS.bytes_fetched)
    # each split's reader fetched its own bytes and at most a batch header past them (its read-ahead stops at
    # the split's end): 4,200,239 bytes in all for the 4,199,812-byte segment in 8 splits, where an 8 MiB
    # read-ahead running to the segment's end fetched 18,730,926 (each split from its start to the end)
    print(f"splits fetched {fetched} ({sum(fetched)} bytes) of a {total}-byte segment")
    for split, got in zip(splits, fetched, strict=True):
        assert split.size <= got <= split.size + RECORD_BATCH_OVERHEAD, (split, got)
    assert sum(fetched) <= total + len(splits) * RECORD_BATCH_OVERHEAD


def test_a_url_glob_is_expanded_in_the_store(s3) -> None:  # noqa: ANN001
    root = s3[0]
    splits, rows, _ = _read({"path": f"{root}/data/txn-*"})
    local_splits, local_rows, _ = _read({"path": str(FIXTURE_CORPUS / "data" / "txn-*")})
    assert [_as_local(r, root) for r in rows] == local_rows and rows
    assert [s.size for s in splits] == [s.size for s in local_splits]


# -- kdump spark export on a real Spark (local[2], its own JVM), from s3:// ---------------------------------------


def _export(source: str, out: Path, env: dict[str, str]) -> tuple[list[dict], str]:
    result = subprocess.run(
        [
            sys.executable,
            "-m",
            "kdump",
            "spark",
            "export",
            source,
            "-o",
            str(out),
            "--format",
            "json",
            "--include-headers",
            "--master",
            "local[2]",
            "--option",
            "maxBytesPerSplit=3000",
        ],
        capture_output=True,
        text=True,
        env=env,
        cwd=REPO,
        timeout=600,
    )
    assert result.returncode == 0, result.stderr
    rows = [json.loads(line) for f in sorted(out.glob("part-*.json")) for line in f.read_text().splitlines()]
    return sorted(rows, key=lambda r: (r["topic"], r["partition"], r["offset"])), result.stderr


@pytest.mark.spark
def test_spark_export_from_s3_equals_local(s3, tmp_path: Path) -> None:  # noqa: ANN001
    """``kdump spark export s3://.../data`` on local[2] gives, row for row, the local copy's rows as the
    source's reader gives them without Spark (test_spark holds Spark's read of the local trees to kdump's own
    decode): 1,288 rows with headers.  One export, not two: the local export was the second JVM of this test
    (7 minutes of its 14 on the loaded machine)."""
    if shutil.which("java") is None:  # pragma: no cover - CI installs Java
        pytest.skip("Java is not installed (Spark needs Java 17+)")
    pytest.importorskip("pyspark")
    root, requests = s3
    local = str(FIXTURE_CORPUS)
    _, local_rows, _ = _read({"path": local + "/data", "includeHeaders": "true", "maxBytesPerSplit": "3000"})
    requests.lines.clear()
    url_rows, _ = _export(f"{root}/data", tmp_path / "s3", dict(os.environ))
    as_local = sorted((_as_local(json_row(r, True), root) for r in url_rows), key=repr)
    assert as_local == sorted(local_rows, key=repr)
    assert len(local_rows) == len(expected_rows([local + "/data"], include_headers=True))
    print(f"spark export from {root}/data: {len(url_rows)} rows, equal to the local copy's")
    # (the driver process only lists: Spark plans a Python data source's splits in a Python worker, and
    # executors' workers read them; what planning fetches is measured without Spark above)
    logs = sorted(p for p in (FIXTURE_CORPUS / "data").rglob("*.log") if p.stat().st_size)
    # every non-empty segment was fetched from the store by ranged GETs (206), by the Python workers
    plain = [re.sub(r"\x1b\[[0-9;]*m", "", line) for line in requests.lines]
    gets = [line for line in plain if '"GET /kdump-corpus/data/' in line and '.log HTTP/1.1" 206' in line]
    fetched = {line.split("GET /kdump-corpus/", 1)[1].split()[0] for line in gets}
    assert fetched >= {str(p.relative_to(FIXTURE_CORPUS)) for p in logs}


@pytest.mark.spark
def test_the_jvm_engine_by_name_hands_store_splits_to_the_python_reader(s3, tmp_path: Path) -> None:  # noqa: ANN001
    """``spark.read.format("kafka-log")`` in a session with the JVM engine's jar: the splits in the store are
    read whole by the Python reader the JVM source starts on the executor (``python -m kdump.spark.fallback``,
    the split pickled by the planner), and the rows are the local copy's, row for row."""
    if shutil.which("java") is None:  # pragma: no cover - CI installs Java
        pytest.skip("Java is not installed (Spark needs Java 17+)")
    pytest.importorskip("pyspark")
    from kdump.spark import engine

    if engine.jar_path() is None:
        pytest.skip(f"the JVM engine cannot be built here: {engine.jar_problem}")
    root, _ = s3
    out = tmp_path / "out"
    script = (
        "import sys\n"
        "from kdump.spark import session\n"
        "s = session('local[2]', 'kdump by name', {'spark.ui.enabled': 'false'})\n"
        f"df = s.read.format('kafka-log').option('includeHeaders', 'true').option('maxBytesPerSplit', '3000')"
        f".load({root + '/data'!r})\n"
        "plan = df._jdf.queryExecution().executedPlan().toString()\n"
        "assert 'kafka-log (jvm)' in plan, plan\n"
        f"df.write.json({str(out)!r})\n"
    )
    result = subprocess.run(
        [sys.executable, "-c", script],
        capture_output=True,
        text=True,
        env=dict(os.environ),
        cwd=REPO,
        timeout=600,
    )
    assert result.returncode == 0, result.stderr[-3000:]
    rows = [json.loads(line) for f in sorted(out.glob("part-*.json")) for line in f.read_text().splitlines()]
    _, local_rows, _ = _read(
        {"path": str(FIXTURE_CORPUS) + "/data", "includeHeaders": "true", "maxBytesPerSplit": "3000"}
    )
    as_local = sorted((_as_local(json_row(r, True), root) for r in rows), key=repr)
    assert as_local == sorted(local_rows, key=repr)
