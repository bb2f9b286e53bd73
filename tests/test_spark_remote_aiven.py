"""The ``kafka-log`` source, ``kdump spark export`` and ``kdump spark verify`` over a tiered partition in Aiven's
layout: the real 4.0 broker's tiered partition (``tests/fixtures/tiered-broker``) rewritten as Aiven's plugin
writes it (``tests/test_tiered_aiven.py``'s :class:`AivenCopy`, from the plugin's source) three ways -- plain
fixed-size chunks; zstd, variable chunks; zstd + AES-256-GCM with the data key RSA-OAEP wrapped by OpenSSL --
on local disk and in a real S3 API (moto's server on 127.0.0.1).

The planner is the commands' (``RemoteChecks.one_log``) and the tasks read a remote segment's split through the
commands' Aiven reader (``aiven_segment.SegmentLog``, carried in the split): the chunks holding the split's bytes
are fetched, decompressed and decrypted on the executor.  The oracle: the same read in Kafka's layout (the
broker's own LocalTieredStorage objects), row for row, itself held to kdump's decode and the real
``kafka-dump-log.sh`` by tests/test_spark_remote.py."""

from __future__ import annotations

import json
import pickle
import re
import shutil
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from kdump.storage import object_store
from tests.corpus import REPO
from tests.test_spark_remote import FIXTURE, _by_start_offset

pytest.importorskip("pyarrow")
pytest.importorskip("fsspec", reason="fsspec is not installed (pip install 'kdump[s3]')")
pytest.importorskip("s3fs", reason="s3fs is not installed (pip install 'kdump[s3]')")
pytest.importorskip("zstandard")

from kdump.spark.options import OptionError, parse_options  # noqa: E402
from kdump.spark.planning import plan  # noqa: E402
from kdump.spark.reader import read_split  # noqa: E402
from tests.spark_rows import json_row  # noqa: E402
from tests.test_object_store import moto_s3  # noqa: E402
from tests.test_spark_storage import arrow_rows  # noqa: E402
from tests.test_tiered_aiven import AivenCopy  # noqa: E402

pytestmark = pytest.mark.skipif(not FIXTURE.is_dir(), reason="tests/fixtures/tiered-broker is absent")

KINDS = ("plain", "zstd", "encrypted")


@pytest.fixture(scope="module")
def copies(tmp_path_factory: pytest.TempPathFactory) -> dict[str, AivenCopy]:
    """The three Aiven copies (and, in each, Kafka's layout as the broker left it); the encrypted one's key
    pair is ``copy.pem``."""
    out = {
        "plain": AivenCopy(tmp_path_factory.mktemp("aiven") / "plain", compression=False),
        "zstd": AivenCopy(tmp_path_factory.mktemp("aiven") / "zstd", compression=True),
    }
    if shutil.which("openssl") is not None and _has_cryptography():
        from tests.aiven_objects import make_keys

        keys = make_keys(tmp_path_factory.mktemp("keys"))
        copy = AivenCopy(tmp_path_factory.mktemp("aiven") / "encrypted", compression=True, pem=keys["k1"])
        copy.pem = keys["k1"]  # type: ignore[attr-defined]
        copy.other_pem = keys["k2"]  # type: ignore[attr-defined]
        out["encrypted"] = copy
    return out


def _has_cryptography() -> bool:
    try:
        import cryptography  # noqa: F401
    except ImportError:
        return False
    return True


def _copy(copies: dict[str, AivenCopy], kind: str) -> AivenCopy:
    if kind not in copies:
        pytest.skip("the encrypted copy needs openssl and cryptography (pip install 'kdump[aiven]')")
    return copies[kind]


@pytest.fixture(scope="module")
def store(copies: dict[str, AivenCopy]) -> Iterator[tuple[str, object]]:
    """moto's S3 holding each copy's Aiven root under ``s3://kdump-corpus/<kind>/``; yields the bucket's URL and
    the server's request log."""
    import boto3

    with moto_s3() as (bucket, requests):
        client = boto3.client("s3")
        for kind, copy in copies.items():
            for path in sorted(copy.aiven_root.rglob("*")):
                if path.is_file():
                    key = f"{kind}/{path.relative_to(copy.aiven_root)}"
                    client.put_object(Bucket=bucket, Key=key, Body=path.read_bytes())
        yield f"s3://{bucket}", requests


def _options(copy: AivenCopy, root: str, **extra: str) -> dict[str, str]:
    options = {"path": str(copy.local), "remoteRoot": root, "layout": "aiven", **extra}
    pem = getattr(copy, "pem", None)
    if pem is not None:
        options["aivenPrivateKey"] = f"k1={pem}"
    return options


def _read(options: dict[str, str]) -> tuple[list, list[tuple]]:
    selection = parse_options(options)
    splits = plan(selection).splits
    batches = [b for split in splits for b in read_split(split, selection.read)]
    return splits, arrow_rows(batches, options.get("includeHeaders") == "true")


@pytest.mark.parametrize("where", ["local", "s3"])
@pytest.mark.parametrize("kind", KINDS)
@pytest.mark.parametrize(
    "extra",
    [{}, {"includeControlRecords": "true", "maxBytesPerSplit": "2000", "isolation.level": "read_committed"}],
    ids=["whole", "small-splits-committed"],
)
def test_aiven_read_equals_the_kafka_layout_read(copies, store, kind: str, where: str, extra: dict) -> None:  # noqa: ANN001
    """Row for row (the segment column as its start offset), whole and cut into 2,000-byte splits (cut at the
    offsets of the ``.indexes``' offset index, inside chunks), read_committed with the control records; the
    first four splits are the remote segments, read through their chunks."""
    if extra and where == "local":
        pytest.skip("small splits are read from S3 only (the same reader; the default suite's time)")
    copy = _copy(copies, kind)
    root = str(copy.aiven_root) if where == "local" else f"{store[0]}/{kind}"
    splits, rows = _read(_options(copy, root, **extra))
    kafka_splits, kafka_rows = _read(
        {"path": str(copy.local), "remoteRoot": str(copy.root / "remote"), **extra}
    )
    assert rows and _by_start_offset(rows) == _by_start_offset(kafka_rows)
    assert [(s.segment_base_offset, s.start_position, s.end_position) for s in splits] == [
        (s.segment_base_offset, s.start_position, s.end_position) for s in kafka_splits
    ]
    remote = [s for s in splits if s.source is not None]
    assert {s.segment_base_offset for s in remote} == {147, 298, 435, 596}
    assert all(s.path.startswith(root) and s.path.endswith(".log") for s in remote)
    if extra:
        assert len(remote) > 4


def test_each_task_fetches_only_the_chunks_of_its_split(copies, store) -> None:  # noqa: ANN001
    """A task reading one 2,000-byte split of a remote segment fetches the chunks that hold the split's bytes
    (and the next batch's header), not the segment: at most two 2,048-byte chunks more than the split."""
    copy = copies["zstd"]
    options = _options(copy, f"{store[0]}/zstd", maxBytesPerSplit="2000")
    selection = parse_options(options)
    splits = [s for s in plan(selection).splits if s.source is not None]
    whole = {s.segment_base_offset: 0 for s in splits}
    for split in splits:
        object_store.forget()
        list(read_split(pickle.loads(pickle.dumps(split)), selection.read))
        fetched = object_store.STATS.bytes_fetched
        assert 0 < fetched
        whole[split.segment_base_offset] += fetched
        manifest = split.source.check()  # type: ignore[union-attr]
        assert fetched <= manifest.transformed_size
    sizes = {
        int(p.name[:20]): p.stat().st_size for p in copy.aiven.glob("*.log") if int(p.name[:20]) in whole
    }
    for base, fetched in whole.items():
        # every split of a segment together: its chunks, those at the cuts fetched by both neighbours
        assert sizes[base] <= fetched <= 2 * sizes[base]


def test_the_private_key_stays_on_the_driver(copies, store) -> None:  # noqa: ANN001
    """What goes to the executors -- the selection (with the reader) and each split -- carries the PEM path and,
    per encrypted segment, its manifest and data key; never the private key.  The data key is not in a split's
    repr.  A split unpickled where no key is loaded still reads its segment."""
    copy = _copy(copies, "encrypted")
    options = _options(copy, f"{store[0]}/encrypted")
    selection = parse_options(options)
    pem = Path(copy.pem).read_bytes()  # type: ignore[attr-defined]
    from cryptography.hazmat.primitives import serialization

    key = serialization.load_pem_private_key(pem, password=None)
    d = key.private_numbers().d.to_bytes(256, "big")  # type: ignore[union-attr]
    shipped = pickle.dumps(selection)
    assert str(copy.pem).encode() in shipped and d not in shipped  # type: ignore[attr-defined]
    splits = [s for s in plan(selection).splits if s.source is not None]
    for split in splits:
        data = pickle.dumps(split)
        assert d not in data and b"BEGIN PRIVATE KEY" not in data and b"Keyring" not in data
        name = Path(split.path).name
        data_key = copy.data_keys[name][0]
        assert data_key in data  # the segment's own data key, unwrapped on the driver
        assert data_key.hex() not in repr(split) and repr(data_key) not in repr(split)
    code = (
        "import pickle, sys\n"
        "from kdump.spark.options import ReadOptions\n"
        "from kdump.spark.reader import read_split\n"
        "split = pickle.loads(sys.stdin.buffer.buffer.read() if hasattr(sys.stdin.buffer, 'buffer') "
        "else sys.stdin.buffer.read())\n"
        "print(sum(b.num_rows for b in read_split(split, ReadOptions())))\n"
    )
    result = subprocess.run(
        [sys.executable, "-c", code],
        input=pickle.dumps(splits[0]),
        capture_output=True,
        cwd=REPO,
        timeout=120,
    )
    assert result.returncode == 0 and int(result.stdout) > 0, result.stderr


def test_without_the_key_the_planner_names_the_encrypted_segments(copies) -> None:  # noqa: ANN001
    """No key, or another key pair's: the planner reports each encrypted segment in one line naming its object
    (read on the driver, not in every task) and plans the rest of the log."""
    copy = _copy(copies, "encrypted")
    for key in (None, f"k1={copy.other_pem}"):  # type: ignore[attr-defined]
        options = {"path": str(copy.local), "remoteRoot": str(copy.aiven_root), "layout": "aiven"}
        if key is not None:
            options["aivenPrivateKey"] = key
        result = plan(parse_options(options))
        assert [s.segment_base_offset for s in result.splits] == [723, 894]
        assert len(result.problems) == 4
        for problem in result.problems:
            assert problem.startswith(str(copy.aiven)) and (
                "aiven-private-key" in problem if key is None else "does not unwrap" in problem
            )


def test_layout_options_are_checked() -> None:
    path = str(FIXTURE / "local" / "tiered-0")
    with pytest.raises(OptionError, match="layout goes with remoteRoot"):
        parse_options({"path": path, "layout": "aiven"})
    with pytest.raises(OptionError, match="kafka or aiven"):
        parse_options({"path": path, "remoteRoot": "/x", "layout": "gcs"})
    with pytest.raises(OptionError, match="aivenKeyPrefix is for layout aiven"):
        parse_options({"path": path, "remoteRoot": "/x", "aivenKeyPrefix": "p/"})
    with pytest.raises(OptionError, match="aivenPrivateKey .*: No such file"):
        parse_options(
            {"path": path, "remoteRoot": "/x", "layout": "aiven", "aivenPrivateKey": "/nonexistent.pem"}
        )
    with pytest.raises(OptionError, match="layoutTemplate: .*unknown field"):
        parse_options({"path": path, "remoteRoot": "/x", "layoutTemplate": "{nope}.log"})


# -- on a real Spark (local[2]) -----------------------------------------------------------------------------------


def _needs_spark() -> None:
    if shutil.which("java") is None:  # pragma: no cover - CI installs Java
        pytest.skip("Java is not installed (Spark needs Java 17+)")
    pytest.importorskip("pyspark")


def _kdump(*argv: str) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "-m", "kdump", *argv], capture_output=True, text=True, cwd=REPO, timeout=600
    )


@pytest.mark.spark
def test_spark_export_of_the_encrypted_aiven_partition_from_s3_equals_kafkas_layout(
    copies, store, tmp_path: Path
) -> None:  # noqa: ANN001
    """``kdump spark export --layout aiven --aiven-private-key k1=PEM --remote-root s3://...`` on local[2] (zstd +
    AES-256-GCM chunks undone by the Python workers) gives the 825 rows (control records included) of the same
    partition read in Kafka's layout; the remote .log objects were fetched by ranged GETs."""
    _needs_spark()
    copy = _copy(copies, "encrypted")
    bucket, requests = store
    options = {"includeControlRecords": "true", "maxBytesPerSplit": "4000"}
    _, kafka = _read({"path": str(copy.local), "remoteRoot": str(copy.root / "remote"), **options})
    requests.lines.clear()  # type: ignore[attr-defined]
    out = tmp_path / "aiven"
    result = _kdump(
        "spark",
        "export",
        str(copy.local),
        "--remote-root",
        f"{bucket}/encrypted",
        "--layout",
        "aiven",
        "--aiven-private-key",
        f"k1={copy.pem}",  # type: ignore[attr-defined]
        "-o",
        str(out),
        "--format",
        "json",
        "--include-control",
        "--master",
        "local[2]",
        "--option",
        "maxBytesPerSplit=4000",
    )
    assert result.returncode == 0, result.stderr
    exported = [
        json.loads(line) for f in sorted(out.glob("part-*.json")) for line in f.read_text().splitlines()
    ]
    rows = sorted((json_row(r, segment_offset=True) for r in exported), key=lambda r: (r[4], r[8]))
    assert rows == sorted(_by_start_offset(kafka), key=lambda r: (r[4], r[8]))
    assert len(rows) == 825
    plain = [re.sub(r"\x1b\[[0-9;]*m", "", line) for line in requests.lines]  # type: ignore[attr-defined]
    gets = {
        line.split("GET /", 1)[1].split()[0].rsplit("/", 1)[1][:20]
        for line in plain
        if '"GET /kdump-corpus/encrypted/' in line and '.log HTTP/1.1" 206' in line
    }
    assert gets == {f"{b:020d}" for b in (147, 298, 435, 596)}


@pytest.mark.spark
def test_spark_verify_of_the_encrypted_aiven_partition_equals_verify(copies, store) -> None:  # noqa: ANN001
    """``kdump spark verify --layout aiven --aiven-private-key`` over the encrypted copy in S3 prints what
    ``kdump verify`` prints over the same objects on local disk (the root as given): no problem, 5 remote
    segments."""
    _needs_spark()
    copy = _copy(copies, "encrypted")
    url = f"{store[0]}/encrypted"
    key = ("--layout", "aiven", "--aiven-private-key", f"k1={copy.pem}")  # type: ignore[attr-defined]
    local = _kdump("verify", str(copy.local), "--remote-root", str(copy.aiven_root), *key)
    spark = _kdump("spark", "verify", str(copy.local), "--remote-root", url, *key, "--master", "local[2]")
    assert local.returncode == 0 and "remote segments: no problems found" in local.stdout, local.stdout
    assert spark.returncode == 0, spark.stderr
    assert spark.stdout.replace(url, str(copy.aiven_root)) == local.stdout
