"""URLs (kdump.storage.object_store): ``kdump files`` on an object in a store prints exactly what it prints on a
local copy of it (the path as given), against a real S3 REST API -- moto's server mode, started here on
127.0.0.1 -- and through fsspec's ``file://``; reads are ranged (bytes and requests counted, and checked against
the server's own request log); a missing object, a denied read and a dropped connection are one line naming the
URL; a URL is never written to.

The oracle of the byte-identical check is the local run on the same corpus files, itself checked against
Kafka's real tool by the corpus replay (tests/test_replay.py)."""

from __future__ import annotations

import contextlib
import io
import logging
import os
import shutil
import socket
import threading
from collections.abc import Iterator
from pathlib import Path

import pytest

from kdump.cli import files, run_guarded
from kdump.storage import object_store
from tests.corpus import FIXTURE_CORPUS, supported_runs

fsspec = pytest.importorskip("fsspec", reason="fsspec is not installed (pip install 'kdump[s3]')")

BUCKET = "kdump-corpus"
#: The fixture corpus's kafka-4.0.0 runs whose files are all under data/ (what is copied and uploaded).
RUNS = [
    r
    for r in supported_runs(FIXTURE_CORPUS)
    if r.tool == "kafka-4.0.0" and r.files and all(f.startswith("data/") for f in r.files)
]


def _kdump(argv: list[str]) -> tuple[int, bytes, bytes]:
    out, err = io.BytesIO(), io.BytesIO()
    code = run_guarded(lambda o, e: files.run(argv, o, e), out, err)
    return code, out.getvalue(), err.getvalue()


def _rooted(argv: tuple[str, ...], root: str) -> list[str]:
    """The run's arguments with its ``data/...`` files under ``root`` (a local directory or a URL)."""
    out = []
    for i, arg in enumerate(argv):
        if i > 0 and argv[i - 1] == "--files":
            arg = ",".join(root + "/" + f if f.startswith("data/") else f for f in arg.split(","))
        out.append(arg)
    return out


@pytest.fixture(scope="module")
def local_copy(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The fixture corpus's data/ copied to a directory with a name found nowhere else in an output."""
    root = tmp_path_factory.mktemp("objstore") / "local-copy-of-the-corpus"
    shutil.copytree(FIXTURE_CORPUS / "data", root / "data")
    _diverged_replicas(root / "replicas")
    damaged = bytearray((root / "data" / "txn-0" / "00000000000000000000.log").read_bytes())
    damaged[700:760] = bytes(60)  # a batch's header and CRC'd bytes zeroed: lost, the scan resynchronises
    (root / "damaged" / "txn-0").mkdir(parents=True)
    (root / "damaged" / "txn-0" / "00000000000000000000.log").write_bytes(bytes(damaged))
    return root


def _diverged_replicas(root: Path) -> None:
    """Two copies of ``t-0`` (log directories ``a`` and ``b``) after an unclean leader election: A led at epoch 0
    and wrote 0-14, only 0-9 reached B, which was elected at epoch 1 and wrote its own 10-12."""
    from kdump.storage.leader_epoch_checkpoint import EpochEntry, encode_leader_epoch_checkpoint
    from kdump.storage.offset_checkpoint import encode_offset_checkpoint
    from tests.forensic_data import T0, records_batch, write_segment

    common = [records_batch(0, [b"a"] * 5, ts=T0), records_batch(5, [b"b"] * 5, ts=T0 + 10)]
    for name, tail, epochs, hw in (
        ("a", records_batch(10, [b"lost"] * 5, ts=T0 + 20), [(0, 0)], 10),
        ("b", records_batch(10, [b"new"] * 3, ts=T0 + 30, partition_leader_epoch=1), [(0, 0), (1, 10)], 13),
    ):
        write_segment(str(root / name / "t-0"), 0, [*common, tail])
        (root / name / "t-0" / "leader-epoch-checkpoint").write_bytes(
            encode_leader_epoch_checkpoint([EpochEntry(e, o) for e, o in epochs])
        )
        (root / name / "replication-offset-checkpoint").write_bytes(encode_offset_checkpoint({("t", 0): hw}))


def _assert_same_as_local(run_argv: tuple[str, ...], local_root: Path, url_root: str) -> None:
    local = str(local_root)
    code, out, err = _kdump(["--kafka-version", "4.0", *_rooted(run_argv, local)])
    rcode, rout, rerr = _kdump(["--kafka-version", "4.0", *_rooted(run_argv, url_root)])
    as_url = (
        code,
        out.replace(local.encode(), url_root.encode()),
        err.replace(local.encode(), url_root.encode()),
    )
    assert (rcode, rout, rerr) == as_url, f"{run_argv}: {rerr!r}"


def test_the_runs_are_there() -> None:
    assert len(RUNS) >= 80
    kinds = {r.category for r in RUNS}
    assert {"log", "index", "decoder", "state-file"} <= kinds


@pytest.mark.parametrize("run", RUNS, ids=lambda r: r.id)
def test_files_over_file_urls_equals_local(run, local_copy: Path) -> None:  # noqa: ANN001
    _assert_same_as_local(run.argv, local_copy, "file://" + str(local_copy))


# -- a real S3 API: moto's server mode on 127.0.0.1 ----------------------------------------------------------


class _Requests(logging.Handler):
    """The server's request log: one entry per HTTP request it answered (method and path)."""

    def __init__(self) -> None:
        super().__init__()
        self.lines: list[str] = []

    def emit(self, record: logging.LogRecord) -> None:
        self.lines.append(record.getMessage())


@contextlib.contextmanager
def moto_s3() -> Iterator[tuple[str, _Requests]]:
    """A moto S3 server on 127.0.0.1 with an empty bucket; the environment points s3fs at it
    (``AWS_ENDPOINT_URL``, dummy credentials) until the block ends.  Yields the bucket and the request log."""
    server_module = pytest.importorskip("moto.server", reason="moto[server] is not installed")
    boto3 = pytest.importorskip("boto3", reason="boto3 (moto's dependency) is not installed")
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    requests = _Requests()
    werkzeug = logging.getLogger("werkzeug")
    werkzeug.addHandler(requests)
    werkzeug.setLevel(logging.INFO)
    werkzeug.propagate = False
    server = server_module.ThreadedMotoServer(ip_address="127.0.0.1", port=port, verbose=False)
    server.start()
    env = {
        "AWS_ACCESS_KEY_ID": "kdump-test-key-id",
        "AWS_SECRET_ACCESS_KEY": "kdump-test-secret-never-printed",
        "AWS_DEFAULT_REGION": "us-east-1",
        "AWS_ENDPOINT_URL": f"http://127.0.0.1:{port}",
    }
    saved = {k: os.environ.get(k) for k in env}
    os.environ.update(env)
    fsspec.filesystem("s3").clear_instance_cache()
    object_store.forget()
    try:
        boto3.client("s3").create_bucket(Bucket=BUCKET)
        yield BUCKET, requests
    finally:
        server.stop()
        werkzeug.removeHandler(requests)
        fsspec.filesystem("s3").clear_instance_cache()
        object_store.forget()
        for k, v in saved.items():
            if v is None:
                os.environ.pop(k, None)
            else:
                os.environ[k] = v


@pytest.fixture(scope="module")
def s3(local_copy: Path) -> Iterator[tuple[str, _Requests]]:
    """moto's S3 holding the corpus's data/ under ``s3://kdump-corpus/data/`` (and the diverged replicas under
    ``replicas/``)."""
    pytest.importorskip("s3fs", reason="s3fs is not installed (pip install 'kdump[s3]')")
    import boto3

    with moto_s3() as (bucket, requests):
        client = boto3.client("s3")
        for path in sorted(local_copy.rglob("*")):
            if path.is_file():
                client.put_object(
                    Bucket=bucket, Key=str(path.relative_to(local_copy)), Body=path.read_bytes()
                )
        yield f"s3://{bucket}", requests


@pytest.mark.parametrize("run", RUNS, ids=lambda r: r.id)
def test_files_over_s3_equals_local(run, local_copy: Path, s3) -> None:  # noqa: ANN001
    _assert_same_as_local(run.argv, local_copy, s3[0])


def _counted(argv: list[str]) -> tuple[int, bytes, bytes, object_store.StoreStats]:
    object_store.forget()
    code, out, err = _kdump(argv)
    stats = object_store.STATS
    return (
        code,
        out,
        err,
        object_store.StoreStats(
            stats.metadata_requests, stats.read_requests, stats.bytes_fetched, dict(stats.objects)
        ),
    )


def test_reads_are_ranged_and_counted(s3, local_copy: Path) -> None:  # noqa: ANN001
    root, requests = s3
    log = "data/txn-0/00000000000000000000.log"
    size = (local_copy / log).stat().st_size
    requests.lines.clear()
    code, _, _, stats = _counted(["--files", f"{root}/{log}", "--max-bytes", "1000"])
    assert code == 0
    # --max-bytes 1000: one size request, then ranged reads that never go past the first 1000 bytes
    assert stats.objects == {f"{root}/{log}": size}
    assert 0 < stats.bytes_fetched <= 1000 < size
    gets = [line for line in requests.lines if "GET /kdump-corpus/" + log in line]
    assert len(gets) == stats.read_requests >= 1
    requests.lines.clear()
    code, _, _, stats = _counted(["--files", f"{root}/{log}", "--deep-iteration"])
    assert code == 0
    assert stats.bytes_fetched <= size  # every byte fetched at most once
    assert stats.read_requests == len([line for line in requests.lines if "GET /kdump-corpus/" + log in line])


def test_a_missing_object_is_one_line_naming_the_url(s3) -> None:  # noqa: ANN001
    root, _ = s3
    url = f"{root}/data/plain-0/00000000000000000099.log"
    code, out, err = _kdump(["--files", url])
    assert code == 1
    assert out == f"Dumping {url}\nLog starting offset: 99\n".encode()
    assert err == f"kdump: {url}: No such file\n".encode()
    code, _, err = _kdump(["--files", "s3://no-such-bucket-kdump/data/0.log"])
    assert (code, err) == (1, b"kdump: s3://no-such-bucket-kdump/data/0.log: No such file\n")


def test_the_secret_is_never_printed(s3, monkeypatch: pytest.MonkeyPatch) -> None:  # noqa: ANN001
    root, _ = s3
    monkeypatch.setenv("KDUMP_STORE_STATS", "1")
    for argv in (
        ["--files", f"{root}/data/plain-0/00000000000000000000.log", "--deep-iteration"],
        ["--files", f"{root}/data/nope/0.log"],
    ):
        _, out, err = _kdump(argv)
        assert b"kdump-test-secret" not in out + err
        assert b"kdump-test-key-id" not in out + err
        assert err.endswith(b"\n") and b"kdump: store: " in err


def test_credentials_in_a_url_are_refused() -> None:
    code, out, err = _kdump(["--files", "s3://someone:hunter2@bucket/data/0.log"])
    assert code == 2
    assert b"hunter2" not in out + err
    assert b"no credentials in URLs" in err


class _FailingFileSystem:
    """A store whose reads fail as a backend fails: ``error`` raised by every ranged read."""

    def __init__(self, error: BaseException) -> None:
        self.error = error

    def info(self, path: str) -> dict[str, object]:
        return {"name": path, "size": 4096, "type": "file"}

    def cat_file(self, path: str, start: int, end: int) -> bytes:
        raise self.error


@pytest.mark.parametrize(
    ("error", "words"),
    [
        (PermissionError("Access Denied"), "access denied by the store (Access Denied)"),
        (
            ConnectionResetError(104, "Connection reset by peer"),
            "cannot read from the store: ConnectionResetError",
        ),
    ],
)
def test_a_denied_or_broken_read_is_one_line(
    error: BaseException, words: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(object_store, "filesystem", lambda url: (_FailingFileSystem(error), url))
    url = "s3://bucket/topic-0/00000000000000000000.log"
    code, out, err = _kdump(["--files", url])
    assert code == 1
    assert out == f"Dumping {url}\nLog starting offset: 0\n".encode()
    assert err.startswith(f"kdump: {url}: byte 0: {words}".encode())
    assert err.count(b"\n") == 1


def test_a_dropped_connection_is_one_line(local_copy: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A real server that closes every connection as soon as a request arrives."""
    pytest.importorskip("s3fs", reason="s3fs is not installed (pip install 'kdump[s3]')")
    listener = socket.socket()
    listener.bind(("127.0.0.1", 0))
    listener.listen(16)
    listener.settimeout(0.2)
    stop = threading.Event()

    def serve() -> None:
        while not stop.is_set():
            try:
                conn, _ = listener.accept()
            except OSError:
                continue
            try:
                conn.recv(65536)
            except OSError:
                pass
            conn.close()

    thread = threading.Thread(target=serve, daemon=True)
    thread.start()
    monkeypatch.setenv("AWS_ENDPOINT_URL", f"http://127.0.0.1:{listener.getsockname()[1]}")
    monkeypatch.setenv("AWS_ACCESS_KEY_ID", "x")
    monkeypatch.setenv("AWS_SECRET_ACCESS_KEY", "y")
    monkeypatch.setenv("AWS_DEFAULT_REGION", "us-east-1")
    monkeypatch.setenv("AWS_MAX_ATTEMPTS", "1")
    fsspec.filesystem("s3").clear_instance_cache()
    try:
        url = "s3://dropped/data/0.log"
        code, out, err = _kdump(["--files", url])
    finally:
        stop.set()
        thread.join()
        listener.close()
        fsspec.filesystem("s3").clear_instance_cache()
    assert code == 1
    assert err.startswith(f"kdump: {url}: cannot read from the store: ".encode()), err
    assert err.count(b"\n") == 1


def test_a_local_path_with_another_scheme_stays_a_path() -> None:
    assert object_store.is_url("s3://b/k") and object_store.is_url("GS://b/k")
    assert not object_store.is_url("data/plain-0/00000000000000000000.log")
    assert not object_store.is_url("weird://not-a-store/0.log")


@pytest.mark.parametrize(
    "argv",
    [
        ["rebuild-index", "s3://bucket/topic-0/00000000000000000000.log"],
        ["report", str(FIXTURE_CORPUS / "data"), "-o", "s3://b/report.html"],
        [
            "salvage",
            str(FIXTURE_CORPUS / "data" / "plain-0" / "00000000000000000000.log"),
            "--out",
            "s3://b/x",
        ],
    ],
)
def test_a_url_to_write_to_is_a_usage_error(argv: list[str]) -> None:
    from click.testing import CliRunner

    from kdump.cli.commands import cli

    result = CliRunner().invoke(cli, argv)
    assert result.exit_code == 2
    assert "kdump writes only to local files" in result.output


# -- the other reading commands over a store: verify-index, verify, find, ls, txn ---------------------------------

PARTITION_ARGS = [
    ["verify-index", "{root}/data/small-index-0/00000000000000001423.index"],
    ["verify-index", "{root}/data/txn-0"],
    ["verify-index", "{root}/data"],
    ["verify", "{root}/data/small-index-0/00000000000000001423.log"],
    ["verify", "{root}/data/txn-0"],
    ["verify", "{root}/data"],
    ["ls", "{root}/data/txn-0"],
    ["ls", "{root}/data"],
    ["txn", "{root}/data/txn-0"],
    ["txn", "{root}/data"],
    ["find", "--offset", "1450", "{root}/data/small-index-0"],
    ["find", "--timestamp", "1700000000100", "{root}/data/txn-0"],
    ["find", "--offset", "5", "--topic", "txn", "--partition", "0", "{root}/data"],
    ["--json", "find", "--offset", "5", "{root}/data/txn-0"],
    ["retention", "--now", "1700000000000", "{root}/data"],
    ["retention", "--now", "1800000000000", "{root}/data/compact-0"],
    ["--json", "retention", "--now", "1800000000000", "{root}/data/__cluster_metadata-0"],
    ["diff", "{root}/replicas/a/t-0", "{root}/replicas/b/t-0"],
    ["diff", "{root}/replicas/a", "{root}/replicas/b"],
    ["--json", "diff", "{root}/replicas/a/t-0", "{root}/replicas/b/t-0"],
    ["diff", "{root}/data/txn-0", "{root}/data/txn-0"],
    ["--json", "report", "--now", "1700000000000", "{root}/data"],
]


def _cli(argv: list[str]) -> tuple[int, str, str]:
    from click.testing import CliRunner

    from kdump.cli.commands import cli

    if argv[0] == "--json":  # the option goes after the command
        argv = [argv[1], "--json", *argv[2:]]
    result = CliRunner().invoke(cli, argv)
    return result.exit_code, result.stdout, result.stderr


def _assert_command_same_as_local(args: list[str], local_root: Path, url_root: str) -> None:
    local = str(local_root)
    code, out, err = _cli([a.format(root=local) for a in args])
    rcode, rout, rerr = _cli([a.format(root=url_root) for a in args])
    assert code in (0, 1), (code, out, err)
    expected = (code, out.replace(local, url_root), err.replace(local, url_root))
    if args[0] == "diff":  # a table with a DIRECTORY column: the path's length changes the columns' padding

        def unpadded(run: tuple[int, str, str]) -> tuple[int, list[str], str]:
            return run[0], [" ".join(line.split()) for line in run[1].splitlines()], run[2]

        assert unpadded((rcode, rout, rerr)) == unpadded(expected)
    else:
        assert (rcode, rout, rerr) == expected


@pytest.mark.parametrize("args", PARTITION_ARGS, ids=lambda a: " ".join(a).replace("{root}/", ""))
def test_reading_commands_over_file_urls_equal_local(args: list[str], local_copy: Path) -> None:
    _assert_command_same_as_local(args, local_copy, "file://" + str(local_copy))


@pytest.mark.parametrize("args", PARTITION_ARGS, ids=lambda a: " ".join(a).replace("{root}/", ""))
def test_reading_commands_over_s3_equal_local(args: list[str], local_copy: Path, s3) -> None:  # noqa: ANN001
    _assert_command_same_as_local(args, local_copy, s3[0])


def test_a_missing_prefix_is_a_usage_error_naming_it(s3) -> None:  # noqa: ANN001
    code, _, err = _cli(["verify-index", f"{s3[0]}/no-such-prefix"])
    assert code == 2
    assert f"'{s3[0]}/no-such-prefix' does not exist" in err


def test_an_objects_time_is_when_it_was_written(s3, local_copy: Path) -> None:  # noqa: ANN001
    """retention's fallback for a segment without a timestamp (the file's mtime) is the object's LastModified."""
    import time

    from kdump.storage import locations

    url = f"{s3[0]}/data/plain-0/00000000000000000000.log"
    assert abs(locations.getmtime(url) - time.time()) < 3600  # written by the fixture, moments ago
    local = local_copy / "data" / "plain-0" / "00000000000000000000.log"
    assert locations.getmtime("file://" + str(local)) == pytest.approx(local.stat().st_mtime, abs=1e-3)
    with pytest.raises(OSError, match="No such file"):
        locations.getmtime(f"{s3[0]}/data/plain-0/no-such.log")


@pytest.mark.parametrize(
    "segment",
    [
        "data/txn-0/00000000000000000000.log",
        "damaged/txn-0/00000000000000000000.log",
        "data/plain-0/00000000000000000000.log",
    ],
)
@pytest.mark.parametrize("scheme", ["file", "s3"])
def test_salvage_of_an_object_equals_local(
    segment: str,
    scheme: str,
    local_copy: Path,
    s3,
    tmp_path: Path,  # noqa: ANN001
) -> None:
    """salvage's input by URL: the same report and the same new segment and indexes as from the local copy."""
    local = str(local_copy)
    root = s3[0] if scheme == "s3" else "file://" + local
    out_local, out_url = tmp_path / "local" / "out", tmp_path / "url" / "out"
    code, out, err = _cli(["salvage", f"{local}/{segment}", "--out", str(out_local)])
    rcode, rout, rerr = _cli(["salvage", f"{root}/{segment}", "--out", str(out_url)])
    assert code == (1 if segment.startswith("damaged") else 0), (out, err)
    expected = out.replace(local, root).replace(str(out_local), str(out_url))
    assert (rcode, rout, rerr) == (code, expected, err)
    names = sorted(p.name for p in out_local.iterdir())
    assert names == sorted(p.name for p in out_url.iterdir()) and len(names) == 3
    for name in names:
        assert (out_url / name).read_bytes() == (out_local / name).read_bytes()
