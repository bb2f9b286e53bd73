"""``gs://``, ``az://``/``abfs://`` and ``hdfs://``: each URL reaches its fsspec backend, and where a server can
run here the commands are checked against it for real.

* ``gs://``: gcsfs against ``gcp-storage-emulator`` (PyPI: a Python implementation of the GCS JSON API on
  127.0.0.1, reached through ``STORAGE_EMULATOR_HOST`` as gcsfs documents it);
* ``az://`` and ``abfs://``: adlfs against Azurite (Microsoft's Azure Storage emulator, from npm: started from
  ``AZURITE`` or ``azurite-blob`` on the PATH), reached through ``AZURE_STORAGE_CONNECTION_STRING`` with Azurite's
  published development account;
* ``hdfs://``: no HDFS can run here (pyarrow's ``HadoopFileSystem`` needs a Hadoop client: libhdfs and a JVM);
  the URL reaches pyarrow's backend and its absence is one line saying what is needed.

The oracle for the real ones: every command over the store says what it says over the same files on the local
disk, the path as given (the broker's tiered partition of ``tests/fixtures/tiered-broker``: ``files``, ``verify``,
``ls``/``find`` with ``--remote-root`` in the store); a missing object is one line naming the URL."""

from __future__ import annotations

import importlib.util
import io
import os
import shutil
import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import pytest
from click.testing import CliRunner

from kdump.cli import files, run_guarded
from kdump.cli.commands import cli
from kdump.storage import object_store
from tests.test_tiered_broker import FIXTURE

pytest.importorskip("fsspec", reason="fsspec is not installed")
pytestmark = pytest.mark.skipif(not FIXTURE.is_dir(), reason="tests/fixtures/tiered-broker is absent")

#: Azurite's well-known development account (documented by Microsoft; not a secret).
AZURITE_ACCOUNT = "devstoreaccount1"
AZURITE_KEY = "Eby8vdM02xNOcqFlqUwJPLlmEtlCDXJ1OUzFT50uSRZ6IFsuFq2UVErCz4I6tq/K1SZFPTOtr/KBHBeksoGMGw=="


def _port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def _upload(fs, root: str) -> None:  # noqa: ANN001
    for path in sorted(FIXTURE.rglob("*")):
        if path.is_file():
            fs.pipe(f"{root}/{path.relative_to(FIXTURE)}", path.read_bytes())


def _fresh(env: dict[str, str], monkeypatch: pytest.MonkeyPatch) -> None:
    for k, v in env.items():
        monkeypatch.setenv(k, v)
    import fsspec

    for scheme in ("gs", "az"):
        try:
            fsspec.get_filesystem_class(scheme).clear_instance_cache()
        except (ImportError, ValueError):
            pass
    object_store.forget()


@pytest.fixture
def gcs(monkeypatch: pytest.MonkeyPatch) -> Iterator[str]:
    """gcp-storage-emulator on 127.0.0.1 holding the fixture under ``gs://kdump-gcs/t``."""
    monkeypatch.setenv("GCSFS_EXPERIMENTAL_ZB_HNS_SUPPORT", "false")  # its gRPC probe: no such API here
    pytest.importorskip("gcsfs", reason="gcsfs is not installed (pip install 'kdump[gcs]')")
    emulator = pytest.importorskip(
        "gcp_storage_emulator.server", reason="gcp-storage-emulator is not installed (pip install it)"
    )
    port = _port()
    server = emulator.create_server("127.0.0.1", port, in_memory=True, default_bucket="kdump-gcs")
    server.start()
    try:
        _fresh({"STORAGE_EMULATOR_HOST": f"http://127.0.0.1:{port}"}, monkeypatch)
        # the emulator's one-request (multipart) upload drops a trailing CR from an object's bytes: the resumable
        # upload protocol keeps every byte (checked: the sizes listed are the files')
        for path in sorted(FIXTURE.rglob("*")):
            if path.is_file():
                _resumable_upload(port, "kdump-gcs", f"t/{path.relative_to(FIXTURE)}", path.read_bytes())
        _fresh({"GOOGLE_CLOUD_PROJECT": "kdump"}, monkeypatch)
        yield "gs://kdump-gcs/t"
    finally:
        server.stop()
        object_store.forget()


def _resumable_upload(port: int, bucket: str, name: str, data: bytes) -> None:
    """GCS's resumable upload (JSON API: a POST opening the session, one PUT of every byte)."""
    import urllib.request
    from urllib.parse import quote

    start = urllib.request.Request(
        f"http://127.0.0.1:{port}/upload/storage/v1/b/{bucket}/o?uploadType=resumable&name={quote(name, safe='')}",
        data=b"{}",
        method="POST",
        headers={"Content-Type": "application/json"},
    )
    with urllib.request.urlopen(start) as response:
        session = response.headers["Location"]
    length = f"bytes 0-{len(data) - 1}/{len(data)}" if data else "bytes */0"
    put = urllib.request.Request(session, data=data, method="PUT", headers={"Content-Range": length})
    with urllib.request.urlopen(put) as response:
        response.read()


def _azurite_command() -> list[str] | None:
    found = os.environ.get("AZURITE") or shutil.which("azurite-blob")
    return None if found is None else [found]


@pytest.fixture(params=["az", "abfs"])
def azure(request: pytest.FixtureRequest, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[str]:
    """Azurite's blob service on 127.0.0.1 holding the fixture under ``<scheme>://kdump/t``."""
    pytest.importorskip("adlfs", reason="adlfs is not installed (pip install 'kdump[azure]')")
    command = _azurite_command()
    if command is None:
        pytest.skip("Azurite is not installed (npm install azurite; AZURITE=path/to/azurite-blob)")
    port = _port()
    process = subprocess.Popen(
        [
            *command,
            "--blobHost",
            "127.0.0.1",
            "--blobPort",
            str(port),
            "--location",
            str(tmp_path),
            "--silent",
        ]
        + ["--skipApiVersionCheck", "--loose"],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    try:
        for _ in range(100):
            try:
                socket.create_connection(("127.0.0.1", port), timeout=0.2).close()
                break
            except OSError:
                time.sleep(0.1)
        conn = (
            f"DefaultEndpointsProtocol=http;AccountName={AZURITE_ACCOUNT};AccountKey={AZURITE_KEY};"
            f"BlobEndpoint=http://127.0.0.1:{port}/{AZURITE_ACCOUNT};"
        )
        _fresh({"AZURE_STORAGE_CONNECTION_STRING": conn}, monkeypatch)
        import adlfs

        fs = adlfs.AzureBlobFileSystem(connection_string=conn)
        fs.mkdir("kdump")
        _upload(fs, "kdump/t")
        _fresh({}, monkeypatch)
        yield f"{request.param}://kdump/t"
    finally:
        process.terminate()
        process.wait(timeout=10)
        object_store.forget()


def _files(argv: list[str]) -> tuple[int, bytes, bytes]:
    out, err = io.BytesIO(), io.BytesIO()
    code = run_guarded(lambda o, e: files.run(argv, o, e), out, err)
    return code, out.getvalue(), err.getvalue()


def _same_as_local(root: str) -> None:
    local = str(FIXTURE)
    # kdump files: every local and remote segment of the fixture, deep, with the records
    logs = sorted(p for p in FIXTURE.rglob("*.log"))
    for log in logs:
        rel = str(log.relative_to(FIXTURE))
        a = _files(["--files", f"{local}/{rel}", "--deep-iteration", "--print-data-log"])
        b = _files(["--files", f"{root}/{rel}", "--deep-iteration", "--print-data-log"])
        assert b[0] == a[0], b  # the remote filesets' names are not Kafka's: the same error either way
        assert b[1:] == tuple(x.replace(local.encode(), root.encode()) for x in a[1:]), rel
    # verify of the local part kept in the store, and the one log with its remote part in the store
    for argv in (
        ["verify", "{}/local"],
        ["ls", str(FIXTURE / "local"), "--json", "--remote-root", "{}/remote"],
        ["txn", str(FIXTURE / "local" / "tiered-0"), "--json", "--remote-root", "{}/remote"],
        ["find", str(FIXTURE / "local" / "tiered-0"), "--offset", "400", "--remote-root", "{}/remote"],
    ):
        a = CliRunner().invoke(cli, [x.format(local) for x in argv])
        object_store.forget()
        b = CliRunner().invoke(cli, [x.format(root) for x in argv])
        assert b.exit_code == a.exit_code == 0, b.output
        # what is in the store is named by its URL, the rest by its path
        named = (local, root) if argv[0] == "verify" else (f"{local}/remote", f"{root}/remote")
        assert b.stdout == a.stdout.replace(*named), argv
    # a missing object: one line naming the URL
    missing = f"{root}/local/tiered-0/00000000000000000099.log"
    code, _, err = _files(["--files", missing])
    assert (code, err) == (1, f"kdump: {missing}: No such file\n".encode())


def test_gcs_for_real(gcs: str) -> None:
    _same_as_local(gcs)


def test_azure_for_real(azure: str) -> None:
    _same_as_local(azure)


@pytest.mark.parametrize(
    ("url", "module", "words"),
    [
        ("gs://b/t-0/00000000000000000000.log", "gcsfs", "needs gcsfs (pip install 'kdump[gcs]')"),
        ("az://c/t-0/00000000000000000000.log", "adlfs", "needs adlfs (pip install 'kdump[azure]')"),
        ("abfs://c/t-0/00000000000000000000.log", "adlfs", "needs adlfs (pip install 'kdump[azure]')"),
    ],
)
def test_a_missing_backend_is_one_line(
    url: str, module: str, words: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Without the backend's package (hidden here), one usage line saying which, naming the URL."""
    import importlib

    registry = importlib.import_module("fsspec.registry")  # the module (fsspec.registry is also a mapping)
    monkeypatch.setitem(sys.modules, module, None)  # as if not installed
    scheme = url.split(":", 1)[0]
    monkeypatch.delitem(registry._registry, scheme, raising=False)  # nor imported before
    object_store.forget()
    code, out, err = _files(["--files", url])
    assert code == 2, err
    assert err == f"kdump: {url}: reading {scheme}:// URLs {words}\n".encode()


def test_each_scheme_reaches_its_backend() -> None:
    """The fsspec implementation each scheme is routed to (the registry fsspec consults)."""
    from fsspec.registry import known_implementations

    expected = {
        "gs": "gcsfs.GCSFileSystem",
        "gcs": "gcsfs.GCSFileSystem",
        "az": "adlfs.AzureBlobFileSystem",
        "abfs": "adlfs.AzureBlobFileSystem",
        "abfss": "adlfs.AzureBlobFileSystem",
        "hdfs": "fsspec.implementations.arrow.HadoopFileSystem",
        "webhdfs": "fsspec.implementations.webhdfs.WebHDFS",
        "s3": "s3fs.S3FileSystem",
    }
    for scheme, cls in expected.items():
        assert scheme in object_store.BACKENDS
        if scheme == "abfss" and importlib.util.find_spec("adlfs") is None:
            continue  # fsspec learns abfss from adlfs's entry point (fsspec.specs): not there without adlfs
        assert known_implementations[scheme]["class"] == cls, scheme


def test_hdfs_without_a_hadoop_client_is_one_line() -> None:
    """hdfs:// reaches pyarrow's HadoopFileSystem; without libhdfs and a JVM (none here) it says so in one line."""
    pytest.importorskip("pyarrow", reason="pyarrow is not installed")
    url = "hdfs://127.0.0.1:1/kafka/t-0/00000000000000000000.log"
    code, out, err = _files(["--files", url])
    assert code == 2, err
    assert err.decode().startswith(f"kdump: {url}: reading hdfs:// URLs needs pyarrow with libhdfs")
    assert err.count(b"\n") == 1


def test_webhdfs_with_no_server_is_one_line() -> None:
    """webhdfs:// reaches fsspec's WebHDFS (no WebHDFS server could be had here: nothing listens on the port);
    the refused connection is one line naming the URL, status 1 (the file could not be read), as Kafka's tool
    goes on after a file it cannot read."""
    pytest.importorskip("requests", reason="requests is not installed")
    url = "webhdfs://127.0.0.1:1/kafka/t-0/00000000000000000000.log"
    code, out, err = _files(["--files", url])
    assert code == 1, err
    assert out == f"Dumping {url}\n".encode()
    assert err.decode().startswith(f"kdump: {url}: cannot read from the store: ConnectionError")
    assert err.count(b"\n") == 1
