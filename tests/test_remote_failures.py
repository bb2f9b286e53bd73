"""What a store does wrong, done for real by moto's S3 server on 127.0.0.1, and what kdump says of it: one line
naming the URL, a defined status, no traceback.

* an object deleted while kdump runs (listed, then gone when its bytes are read): S3's ``NoSuchKey`` (404);
* a read refused: wrong credentials (moto's IAM checks switched on: ``InvalidAccessKeyId``, 403), and a user whose
  IAM policy lets it list the bucket but not read its objects (``AccessDenied`` on the ranged ``GET``);
* the server stopped between two reads of a run (the connection refused: botocore's retries, then an error).

The moment is chosen by wrapping the backend's ``cat_file`` (the ranged read), so the store's own answer is what
kdump sees."""

from __future__ import annotations

import io
import json
from collections.abc import Iterator
from pathlib import Path

import pytest

pytest.importorskip("s3fs", reason="s3fs is not installed (pip install 'kdump[s3]')")
pytest.importorskip("moto.server", reason="moto[server] is not installed")

import fsspec  # noqa: E402

from kdump.cli import files, run_guarded  # noqa: E402
from kdump.storage import object_store  # noqa: E402
from tests.test_object_store import moto_s3  # noqa: E402
from tests.test_tiered_broker import FIXTURE  # noqa: E402

PARTITION = FIXTURE / "local" / "tiered-0"


@pytest.fixture
def s3() -> Iterator[tuple[str, object]]:
    """moto's S3 with the broker fixture's local partition under ``s3://<bucket>/tiered-0/``; yields the
    partition's URL and the boto3 client."""
    import boto3

    with moto_s3() as (bucket, _requests):
        client = boto3.client("s3")
        for path in sorted(PARTITION.iterdir()):
            client.put_object(Bucket=bucket, Key=f"tiered-0/{path.name}", Body=path.read_bytes())
        yield f"s3://{bucket}/tiered-0", client


def _files(argv: list[str]) -> tuple[int, str, str]:
    out, err = io.BytesIO(), io.BytesIO()
    code = run_guarded(lambda o, e: files.run(argv, o, e), out, err)
    return code, out.getvalue().decode(), err.getvalue().decode()


def _on_read(monkeypatch: pytest.MonkeyPatch, after: int, action) -> None:  # noqa: ANN001
    """``action()`` once, just before the ranged read number ``after`` + 1 of the run reaches the store."""
    real = object_store.filesystem
    count = [0]

    def filesystem(url: str):  # noqa: ANN202
        fs, path = real(url)

        class Hooked:
            def __getattr__(self, name: str):  # noqa: ANN204
                return getattr(fs, name)

            def cat_file(self, p: str, start: int, end: int) -> bytes:
                count[0] += 1
                if count[0] == after + 1:
                    action()
                return fs.cat_file(p, start=start, end=end)

        return Hooked(), path

    monkeypatch.setattr(object_store, "filesystem", filesystem)


def test_an_object_deleted_while_kdump_runs(s3, monkeypatch: pytest.MonkeyPatch) -> None:  # noqa: ANN001
    url, client = s3
    bucket = url.split("/")[2]
    second = f"{url}/00000000000000000894.log"
    _on_read(
        monkeypatch, 1, lambda: client.delete_object(Bucket=bucket, Key="tiered-0/00000000000000000894.log")
    )
    # both objects' sizes are asked first (the first .log's read starts the run), the second deleted before its read
    code, out, err = _files(["--files", f"{url}/00000000000000000723.log,{second}"])
    assert code == 1
    assert out.count("Dumping ") == 2 and "baseOffset: 723" in out
    assert err == f"kdump: {second}: No such file\n", err  # as a local file deleted mid-run


def test_wrong_credentials_are_one_line(s3, monkeypatch: pytest.MonkeyPatch) -> None:  # noqa: ANN001
    import moto.settings

    url, _ = s3
    log = f"{url}/00000000000000000723.log"
    monkeypatch.setattr(moto.settings, "INITIAL_NO_AUTH_ACTION_COUNT", 0)  # moto checks every key from now on
    code, out, err = _files(["--files", log])
    assert code == 1 and out == f"Dumping {log}\n"  # Kafka's tool prints it before it opens the file
    assert err.startswith(f"kdump: {log}: access denied by the store") and err.count("\n") == 1, err
    assert "kdump-test-secret" not in err


def test_a_read_the_policy_denies_is_one_line(s3, monkeypatch: pytest.MonkeyPatch) -> None:  # noqa: ANN001
    """An IAM user that may list the bucket and read its objects but not the segments (a Deny on ``*.log``):
    kdump verify lists the partition, reads the indexes and checkpoints, and each ranged GET of a ``.log`` is
    refused (403 AccessDenied) -- said, naming the object."""
    import boto3
    import moto.settings
    from click.testing import CliRunner

    from kdump.cli.commands import cli

    url, _ = s3
    bucket = url.split("/")[2]
    iam = boto3.client("iam")
    iam.create_user(UserName="lister")
    policy = {  # moto evaluates it as IAM does: an explicit Deny wins
        "Version": "2012-10-17",
        "Statement": [
            {"Effect": "Allow", "Action": "s3:ListBucket", "Resource": f"arn:aws:s3:::{bucket}"},
            {"Effect": "Allow", "Action": "s3:GetObject", "Resource": f"arn:aws:s3:::{bucket}/*"},
            {"Effect": "Deny", "Action": "s3:GetObject", "Resource": f"arn:aws:s3:::{bucket}/*.log"},
        ],
    }
    iam.put_user_policy(UserName="lister", PolicyName="list-only", PolicyDocument=json.dumps(policy))
    key = iam.create_access_key(UserName="lister")["AccessKey"]
    monkeypatch.setenv("AWS_ACCESS_KEY_ID", key["AccessKeyId"])
    monkeypatch.setenv("AWS_SECRET_ACCESS_KEY", key["SecretAccessKey"])
    fsspec.filesystem("s3").clear_instance_cache()
    monkeypatch.setattr(moto.settings, "INITIAL_NO_AUTH_ACTION_COUNT", 0)
    try:
        result = CliRunner().invoke(cli, ["verify", url])
    finally:
        fsspec.filesystem("s3").clear_instance_cache()
    assert result.exit_code == 1, result.output
    assert "Traceback" not in result.output
    denied = [line for line in result.output.splitlines() if "access denied by the store" in line]
    assert denied and all(line.startswith(f"{url}/") for line in denied), result.output
    assert key["SecretAccessKey"] not in result.output


def test_the_server_stopped_mid_run_is_one_line(monkeypatch: pytest.MonkeyPatch) -> None:
    import boto3

    monkeypatch.setenv("AWS_MAX_ATTEMPTS", "2")
    with moto_s3() as (bucket, _requests):
        client = boto3.client("s3")
        for path in sorted(PARTITION.glob("*.log")):
            client.put_object(Bucket=bucket, Key=f"p/{path.name}", Body=path.read_bytes())
        url = f"s3://{bucket}/p"
        servers = [s for s in _moto_servers()]
        # the sizes are asked, the first .log read whole; then the server goes away before the second's read
        _on_read(monkeypatch, 1, lambda: [s.stop() for s in servers])
        second = f"{url}/00000000000000000894.log"
        code, out, err = _files(["--files", f"{url}/00000000000000000723.log,{second}"])
    assert code == 1
    assert "baseOffset: 723" in out
    assert err.startswith(f"kdump: {second}: byte 0: cannot read from the store: "), err
    assert err.count("\n") == 1


def _moto_servers() -> list:
    """The ThreadedMotoServer moto_s3 started (found among the live objects: it is local to the context)."""
    import gc

    from moto.server import ThreadedMotoServer

    return [o for o in gc.get_objects() if isinstance(o, ThreadedMotoServer) and o._server is not None]


def test_the_remote_root_of_a_tiered_partition_missing_is_one_line(tmp_path: Path) -> None:
    """A --remote-root prefix that is not in the store: the usage error names it."""
    from click.testing import CliRunner

    from kdump.cli.commands import cli

    with moto_s3() as (bucket, _):
        result = CliRunner().invoke(
            cli, ["ls", str(FIXTURE / "local"), "--remote-root", f"s3://{bucket}/no-such-prefix"]
        )
    assert result.exit_code == 2 and f"s3://{bucket}/no-such-prefix" in result.output
