"""The ``kafka-log`` source and ``kdump spark export`` over a tiered partition: a real Kafka 4.0 broker's
(``tests/fixtures/tiered-broker``, made by ``python -m tests.tiered_broker``: LocalTieredStorage objects,
``__remote_log_metadata``), with its remote objects in a real S3 API (moto's server on 127.0.0.1, as in
tests/test_object_store.py) and its local part and metadata partition on disk.

``remoteRoot`` (``--remote-root``) makes the planner read the partition as one log with the commands' own code
(``RemoteChecks.one_log``): the segments the metadata says were copied, below the first local one, then the local
ones.  The oracles: the same log as one plain local partition (the remote objects copied under Kafka's names in
front of the local segments, as the recipe did for the real tool), decoded by kdump's storage core
(``tests.spark_oracle.expected_rows``), and the real ``kafka-dump-log.sh --deep-iteration --print-data-log`` over
that one log, recorded in the fixture (``kafka-dump-log.deep.txt.gz``): every record's offset, timestamp, key and
value."""

from __future__ import annotations

import gzip
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
from tests.corpus import REPO
from tests.spark_oracle import expected_rows

pytest.importorskip("pyarrow")
pytest.importorskip("fsspec", reason="fsspec is not installed (pip install 'kdump[s3]')")
pytest.importorskip("s3fs", reason="s3fs is not installed (pip install 'kdump[s3]')")

from kdump.spark.options import OptionError, parse_options  # noqa: E402
from kdump.spark.planning import plan  # noqa: E402
from kdump.spark.reader import read_split  # noqa: E402
from kdump.spark.schema import column_names  # noqa: E402
from tests.spark_rows import json_row  # noqa: E402
from tests.test_object_store import moto_s3  # noqa: E402
from tests.test_spark_storage import arrow_rows  # noqa: E402

FIXTURE = REPO / "tests" / "fixtures" / "tiered-broker"
PARTITION = FIXTURE / "local" / "tiered-0"
#: LocalTieredStorage's object names (RemoteLogSegmentFileset): <20-digit start offset>-<segment id><suffix>
FILESET = re.compile(r"^(\d{20})-[A-Za-z0-9_-]{22}(\.\w+)$")
#: The broker's answers to ListOffsets when the fixture was made (broker.json): the one log is [147, 972).
EARLIEST, EARLIEST_LOCAL, LATEST = 147, 723, 972

pytestmark = pytest.mark.skipif(not FIXTURE.is_dir(), reason="tests/fixtures/tiered-broker is absent")


@pytest.fixture(scope="module")
def store() -> Iterator[tuple[str, object]]:
    """moto's S3 holding the fixture's remote root (LocalTieredStorage's directory) under
    ``s3://kdump-corpus/tiered/``; yields that URL and the server's request log."""
    import boto3

    with moto_s3() as (bucket, requests):
        client = boto3.client("s3")
        for path in sorted((FIXTURE / "remote").rglob("*")):
            if path.is_file():
                key = "tiered/" + str(path.relative_to(FIXTURE / "remote"))
                client.put_object(Bucket=bucket, Key=key, Body=path.read_bytes())
        yield f"s3://{bucket}/tiered", requests


@pytest.fixture(scope="module")
def one_log(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The tiered partition as one plain local partition: every remote segment that starts below the first
    local one (all COPY_SEGMENT_FINISHED in this fixture, tests/test_tiered_broker.py checks it), its ``.log``
    and indexes copied under Kafka's names, then the local partition's files."""
    directory = tmp_path_factory.mktemp("one-log") / "tiered-0"
    directory.mkdir()
    for path in sorted((FIXTURE / "remote").rglob("*")):
        m = FILESET.match(path.name)
        if (
            m
            and int(m.group(1)) < EARLIEST_LOCAL
            and m.group(2) in (".log", ".index", ".timeindex", ".txnindex")
        ):
            shutil.copyfile(path, directory / (m.group(1) + m.group(2)))
    for path in PARTITION.iterdir():
        shutil.copyfile(path, directory / path.name)
    return directory


def _start_offset(segment: str) -> int:
    """A segment column's start offset: the 20 digits of a Kafka name or of a RemoteLogSegmentFileset name."""
    return int(os.path.basename(segment)[:20])


def _by_start_offset(rows: list[tuple], include_headers: bool = False) -> list[tuple]:
    """Rows with the segment column (a path or a URL) replaced by the segment's start offset."""
    at = column_names(include_headers).index("segment")
    return [(*r[:at], _start_offset(r[at]), *r[at + 1 :]) for r in rows]


def _read(options: dict[str, str]) -> tuple[list, list[tuple], object_store.StoreStats]:
    """The splits and rows of a read, and what planning fetched from the store."""
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


def dump_records() -> list[tuple[int, int, bytes | None, bytes]]:
    """(offset, timestamp, key, value) of every data record in the real kafka-dump-log.sh's deep dump of the one
    log (the fixture's payloads are ASCII; control batches' records are left out, as a consumer leaves them)."""
    out = []
    control = False
    text = gzip.decompress((FIXTURE / "kafka-dump-log.deep.txt.gz").read_bytes()).decode()
    for line in text.splitlines():
        if line.startswith("baseOffset: "):
            control = " isControl: true " in line
        elif line.startswith("| offset: ") and not control:
            m = re.match(r"\| offset: (\d+) CreateTime: (\d+) keySize: (-?\d+) .* payload: (.*)$", line)
            assert m, line
            key = None
            if int(m.group(3)) >= 0:
                key = re.search(r" key: (.*?) payload: ", line).group(1).encode()  # type: ignore[union-attr]
            out.append((int(m.group(1)), int(m.group(2)), key, m.group(4).encode()))
    return out


def test_options_refuse_metadata_without_a_remote_root() -> None:
    with pytest.raises(OptionError, match="metadata goes with remoteRoot"):
        parse_options({"path": str(PARTITION), "metadata": str(FIXTURE / "local")})
    with pytest.raises(OptionError, match="metadataPartitions"):
        parse_options({"path": str(PARTITION), "remoteRoot": "/x", "metadataPartitions": "0"})
    remote = parse_options({"path": str(PARTITION), "remoteRoot": "/x", "metadata": "/a,/b"}).remote
    assert remote is not None and (remote.root, remote.metadata, remote.metadata_partitions) == (
        "/x",
        ("/a", "/b"),
        50,
    )


def test_planning_lists_the_remote_segments_the_metadata_names(store) -> None:  # noqa: ANN001
    """The plan is one log: the four copied segments below the local log start (their objects in the store,
    named as LocalTieredStorage named them), then the two local segments; the driver fetched no byte of any
    segment (the metadata partition is local, the objects are only listed and their sizes asked)."""
    root = store[0]
    splits, rows, planned = _read({"path": str(PARTITION), "remoteRoot": root})
    assert [s.segment_base_offset for s in splits] == [147, 298, 435, 596, 723, 894]
    assert all(s.path.startswith(root + "/tiered-0-") for s in splits[:4])
    assert [s.path for s in splits[4:]] == [str(PARTITION / f"{b:020d}.log") for b in (723, 894)]
    assert planned.bytes_fetched == 0
    # (971, the last offset, is an ABORT marker: no row without includeControlRecords)
    assert min(r[4] for r in rows) == EARLIEST and max(r[4] for r in rows) == LATEST - 2
    # without the remote root, the local part alone
    local, local_rows, _ = _read({"path": str(PARTITION)})
    assert [s.segment_base_offset for s in local] == [723, 894] and min(r[4] for r in local_rows) == 723


@pytest.mark.parametrize(
    "options",
    [
        {},
        {"isolation.level": "read_committed"},
        {"includeControlRecords": "true", "maxBytesPerSplit": "2000"},
        {
            "startingOffsets": json.dumps({"tiered": {"0": 400}}),
            "endingOffsets": json.dumps({"tiered": {"0": 800}}),
        },
    ],
    ids=["whole", "read-committed", "control-small-splits", "offsets-400-800"],
)
def test_tiered_read_from_s3_equals_the_one_log_read_locally(store, one_log: Path, options) -> None:  # noqa: ANN001
    root = store[0]
    splits, rows, _ = _read({"path": str(PARTITION), "remoteRoot": root, **options})
    _, local_rows, _ = _read({"path": str(one_log), **options})
    assert _by_start_offset(rows) == _by_start_offset(local_rows) and rows
    if options.get("maxBytesPerSplit"):  # remote segments cut at their .index objects' entries
        assert len([s for s in splits if s.path.startswith(root)]) > 4


def test_tiered_rows_are_kdumps_decode_and_the_real_tools_records(store, one_log: Path) -> None:
    """Every row of the tiered read: kdump's own decode of the one log, and the record the real
    kafka-dump-log.sh printed at that offset (timestamp, key, value): 813 data records, offsets 147-971."""
    _, rows, _ = _read({"path": str(PARTITION), "remoteRoot": store[0]})
    assert _by_start_offset(rows) == _by_start_offset(expected_rows([str(one_log)]))
    assert [(r[4], r[5], r[0], r[1]) for r in rows] == dump_records()
    assert len(rows) == 813


def test_each_task_fetches_its_own_split(store) -> None:  # noqa: ANN001
    """Each split's reader fetches its split's bytes from the store, at most a batch header more."""
    from kdump.storage.record_batch import RECORD_BATCH_OVERHEAD

    root = store[0]
    selection = parse_options({"path": str(PARTITION), "remoteRoot": root, "maxBytesPerSplit": "2000"})
    splits = [s for s in plan(selection).splits if s.path.startswith(root)]
    assert len(splits) > 4
    for split in splits:
        object_store.forget()
        list(read_split(split, selection.read))
        assert split.size <= object_store.STATS.bytes_fetched <= split.size + RECORD_BATCH_OVERHEAD


# -- kdump spark export on a real Spark (local[2]) --------------------------------------------------------------


@pytest.mark.spark
def test_spark_export_of_the_tiered_partition_from_s3_equals_local(
    store, one_log: Path, tmp_path: Path
) -> None:  # noqa: ANN001
    """``kdump spark export PARTITION --remote-root s3://...`` on local[2] gives the rows of the one log read as
    a local partition (825 records 147-971, control records included, in 4,000-byte splits: remote segments cut
    at their .index objects' entries), which the tests above hold to kdump's decode and the real tool; the
    remote .log objects were fetched by ranged GETs from Spark's Python workers."""
    if shutil.which("java") is None:  # pragma: no cover - CI installs Java
        pytest.skip("Java is not installed (Spark needs Java 17+)")
    pytest.importorskip("pyspark")
    root, requests = store
    options = {"includeControlRecords": "true", "maxBytesPerSplit": "4000"}
    _, local, _ = _read({"path": str(one_log), **options})
    requests.lines.clear()
    out = tmp_path / "tiered"
    result = subprocess.run(
        [
            sys.executable,
            "-m",
            "kdump",
            "spark",
            "export",
            str(PARTITION),
            "--remote-root",
            root,
            "-o",
            str(out),
        ]
        + [
            "--format",
            "json",
            "--include-control",
            "--master",
            "local[2]",
            "--option",
            "maxBytesPerSplit=4000",
        ],
        capture_output=True,
        text=True,
        cwd=REPO,
        timeout=600,
    )
    assert result.returncode == 0, result.stderr
    exported = [
        json.loads(line) for f in sorted(out.glob("part-*.json")) for line in f.read_text().splitlines()
    ]
    tiered = sorted((json_row(r, segment_offset=True) for r in exported), key=lambda r: (r[4], r[8]))
    assert tiered == sorted(_by_start_offset(local), key=lambda r: (r[4], r[8]))
    assert len(tiered) == 825 and [r[4] for r in tiered] == list(range(EARLIEST, LATEST))
    plain = [re.sub(r"\x1b\[[0-9;]*m", "", line) for line in requests.lines]
    gets = {
        line.split("GET /", 1)[1].split()[0].rsplit("/", 1)[1]
        for line in plain
        if '"GET /kdump-corpus/tiered/' in line and '.log HTTP/1.1" 206' in line
    }
    assert {n[:20] for n in gets} == {f"{b:020d}" for b in (147, 298, 435, 596)}


# -- kdump spark verify --remote-root ----------------------------------------------------------------------------


def _damaged_remote(tmp: Path) -> Path:
    """A copy of the fixture's remote root with two faults: a byte of segment 298's ``.log`` flipped (a CRC
    failure inside a remote batch) and segment 435's ``.index`` object gone (remote-missing-object)."""
    root = tmp / "remote"
    shutil.copytree(FIXTURE / "remote", root)
    (log,) = root.glob("*/00000000000000000298-*.log")
    data = bytearray(log.read_bytes())
    data[3000] ^= 0xFF
    log.write_bytes(bytes(data))
    (index,) = root.glob("*/00000000000000000435-*.index")
    index.unlink()
    return root


def test_spark_verify_takes_the_remote_options_export_takes() -> None:
    from click.testing import CliRunner

    from kdump.cli import cli

    result = CliRunner().invoke(
        cli, ["spark", "verify", str(PARTITION), "--metadata", str(FIXTURE / "local")]
    )
    assert (
        result.exit_code == 2 and "--metadata go" in result.output and "with --remote-root" in result.output
    )
    result = CliRunner().invoke(cli, ["spark", "verify", "--help"])
    assert "--remote-root" in result.output and "--metadata-partitions" in result.output


@pytest.mark.spark
def test_spark_verify_of_the_tiered_partition_from_s3_equals_verify_of_the_local_copy(
    store, tmp_path: Path
) -> None:  # noqa: ANN001
    """``kdump spark verify PARTITION --remote-root s3://...`` on local[2] over a damaged copy of the remote
    objects prints, line for line (the root as given), what ``kdump verify --remote-root`` prints over the same
    objects on local disk, and writes the JSON lines ``kdump verify --json`` writes: the CRC failure inside a remote
    segment (read by a Spark task from the store), the missing object, and the summary's 5 remote segments."""
    if shutil.which("java") is None:  # pragma: no cover - CI installs Java
        pytest.skip("Java is not installed (Spark needs Java 17+)")
    pytest.importorskip("pyspark")
    import boto3

    root, requests = store
    local_root = _damaged_remote(tmp_path)
    client = boto3.client("s3")
    bucket = root[len("s3://") :].split("/", 1)[0]
    for path in sorted(local_root.rglob("*")):
        if path.is_file():
            client.put_object(
                Bucket=bucket, Key="damaged/" + str(path.relative_to(local_root)), Body=path.read_bytes()
            )
    url = f"s3://{bucket}/damaged"

    def kdump(*argv: str) -> subprocess.CompletedProcess:
        return subprocess.run(
            [sys.executable, "-m", "kdump", *argv], capture_output=True, text=True, cwd=REPO, timeout=600
        )

    local = kdump("verify", str(PARTITION), "--remote-root", str(local_root))
    local_json = kdump("verify", "--json", str(PARTITION), "--remote-root", str(local_root))
    assert local.returncode == 1 and "crc:" in local.stdout and "remote-missing-object:" in local.stdout
    assert "5 remote segments" in local.stdout
    requests.lines.clear()
    report = tmp_path / "report.jsonl"
    spark = kdump(
        "spark", "verify", str(PARTITION), "--remote-root", url, "-o", str(report), "--master", "local[2]"
    )
    assert spark.returncode == 1, spark.stderr
    assert spark.stdout.replace(url, str(local_root)) == local.stdout
    assert report.read_text().replace(url, str(local_root)) == local_json.stdout
    plain = [re.sub(r"\x1b\[[0-9;]*m", "", line) for line in requests.lines]
    assert any('"GET /kdump-corpus/damaged/' in line and '.log HTTP/1.1" 206' in line for line in plain)


# -- the run's fetch cache: on where a run reads objects twice ---------------------------------------------------


@pytest.mark.parametrize("cap", [None, "0"])
def test_tiered_verify_fetches_each_remote_segment_once(store, cap, monkeypatch: pytest.MonkeyPatch) -> None:  # noqa: ANN001
    """``kdump verify --remote-root s3://...`` reads each remote ``.log`` for its checks and again for the remote
    checks (``--deep``): it asks for the fetch cache (``object_store.keep_fetched``), so each object is fetched
    once -- exactly its size, the sizes of the broker's own objects; with ``KDUMP_STORE_CACHE=0`` twice.  A run
    that reads nothing twice (a plain partition) leaves the cache off."""
    from click.testing import CliRunner

    from kdump.cli import cli

    if cap is not None:
        monkeypatch.setenv("KDUMP_STORE_CACHE", cap)
    root = store[0]
    object_store.forget()
    result = CliRunner().invoke(cli, ["verify", str(PARTITION), "--remote-root", root])
    assert result.exit_code == 0, result.output
    logs = {p.name: p.stat().st_size for p in (FIXTURE / "remote").rglob("*.log")}
    fetched = {
        url.rsplit("/", 1)[1]: size
        for url, size in object_store.STATS.objects.items()
        if url.endswith(".log")
    }
    assert fetched == logs  # every remote .log: the one log's four, and 723's copy (the remote checks')
    # the four below the local log start are read by verify's checks and by the remote checks; 723 by the latter
    twice = sum(size for name, size in logs.items() if int(name[:20]) < EARLIEST_LOCAL)
    expected = sum(logs.values()) + (0 if cap is None else twice)
    others = object_store.STATS.bytes_fetched - expected  # the indexes, snapshots, checkpoints (small)
    assert 0 <= others < 2000, (object_store.STATS.bytes_fetched, expected)
    assert object_store.CACHE.limit == 0  # off again once the run ended
    object_store.forget()
    CliRunner().invoke(cli, ["verify", str(PARTITION)])
    assert object_store.CACHE.limit == 0
