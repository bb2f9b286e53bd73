"""What kdump fetches from an object store: bytes and requests per command on a segment in S3.

Builds the benchmark segment (``bench/make_segments.py``; ``--quick``: the 10x smaller one), gives it indexes
with ``kdump rebuild-index`` on a local copy, starts moto's S3 server on 127.0.0.1, uploads the partition, and
runs each command once on the URL with the store's counters reset (``kdump.storage.object_store.STATS``), output
thrown away.  The request count is also read from the server's own request log (each HTTP request it
answered), so the two counts check each other.  Prints one Markdown row per command.

With ``--aiven zstd|encrypted|plain`` the segment is the remote segment of a tiered partition in Aiven's layout
(4 MiB chunks), read with ``--remote-root s3://... --layout aiven``; the rows give the bytes fetched per ``.log``
object and per segment.

Usage::

    .venv/bin/python bench/remote_bench.py [--quick] [--no-cache] [--aiven zstd|encrypted|plain]
"""

from __future__ import annotations

import argparse
import io
import logging
import os
import shutil
import socket
import sys
import tempfile
import time
from pathlib import Path

BENCH = Path(__file__).resolve().parent
sys.path.insert(0, str(BENCH.parent))

BUCKET = "kdump-bench"


class _Log(logging.Handler):
    def __init__(self) -> None:
        super().__init__()
        self.lines: list[str] = []

    def emit(self, record: logging.LogRecord) -> None:
        self.lines.append(record.getMessage())


class _Null(io.RawIOBase):
    def writable(self) -> bool:
        return True

    def write(self, b) -> int:  # noqa: ANN001
        return len(b)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--quick", action="store_true", help="the 10x smaller segment")
    parser.add_argument(
        "--no-cache",
        action="store_true",
        help="without the run's fetch cache (KDUMP_STORE_CACHE=0): what each pass fetches on its own",
    )
    parser.add_argument("--only", help="only the cases whose name contains this")
    parser.add_argument(
        "--aiven",
        choices=["zstd", "encrypted", "plain"],
        help="the segment as a tiered partition's remote segment in Aiven's layout (4 MiB chunks: zstd; zstd + "
        "AES-256-GCM; plain), the commands reading it with --remote-root s3://... --layout aiven",
    )
    args = parser.parse_args(argv)
    if args.no_cache:
        os.environ["KDUMP_STORE_CACHE"] = "0"

    import boto3
    from moto.server import ThreadedMotoServer

    from bench.make_segments import build

    data = build(args.quick, verbose=False)
    work = Path(tempfile.mkdtemp(prefix="kdump-remote-bench-"))
    partition = work / "bench-0"
    shutil.copytree(data / "plain-0", partition)
    import subprocess

    subprocess.run(
        [sys.executable, "-m", "kdump", "rebuild-index", "--no-backup", str(partition)],
        check=True,
        capture_output=True,
    )
    log = partition / "00000000000000000000.log"
    size = log.stat().st_size

    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    requests = _Log()
    werkzeug = logging.getLogger("werkzeug")
    werkzeug.addHandler(requests)
    werkzeug.setLevel(logging.INFO)
    werkzeug.propagate = False
    server = ThreadedMotoServer(ip_address="127.0.0.1", port=port, verbose=False)
    server.start()
    os.environ.update(
        AWS_ACCESS_KEY_ID="bench",
        AWS_SECRET_ACCESS_KEY="bench",
        AWS_DEFAULT_REGION="us-east-1",
        AWS_ENDPOINT_URL=f"http://127.0.0.1:{port}",
    )
    try:
        client = boto3.client("s3")
        client.create_bucket(Bucket=BUCKET)
        for path in sorted(partition.iterdir()):
            client.upload_file(str(path), BUCKET, f"bench-0/{path.name}")
            client.upload_file(str(path), BUCKET, f"replica/bench-0/{path.name}")  # diff's second copy
        url = f"s3://{BUCKET}/bench-0"
        index = partition / "00000000000000000000.index"
        if args.aiven:
            return _aiven(args, work, partition, client, requests)
        cases: list[tuple[str, object]] = [
            ("files (shallow)", ["files", "--files", f"{url}/00000000000000000000.log"]),
            (
                "files --deep-iteration",
                ["files", "--files", f"{url}/00000000000000000000.log", "--deep-iteration"],
            ),
            (
                "files --print-data-log",
                ["files", "--files", f"{url}/00000000000000000000.log", "--print-data-log"],
            ),
            (
                "files --max-bytes 1000000",
                ["files", "--files", f"{url}/00000000000000000000.log", "--max-bytes", "1000000"],
            ),
            (
                "files .index --verify-index-only",
                ["files", "--files", f"{url}/00000000000000000000.index", "--verify-index-only"],
            ),
            ("verify-index (segment)", ["verify-index", f"{url}/00000000000000000000.log"]),
            ("verify (partition)", ["verify", url]),
            ("find --offset 150000", ["find", "--offset", "150000", url]),
            ("ls (partition)", ["ls", url]),
            ("diff (two copies)", ["diff", url, f"s3://{BUCKET}/replica/bench-0"]),
            ("report --json (partition)", ["report", "--json", "--now", "2030-01-01", url]),
        ]
        print(f"segment: {size} bytes ({log}); index {index.stat().st_size} bytes")
        measure("kafka", cases, args.only, requests, size)
    finally:
        server.stop()
        shutil.rmtree(work, ignore_errors=True)
    return 0


#: Aiven's plugin's chunk.size for the bench (its documentation's example value).
AIVEN_CHUNK = 4 << 20


def _aiven_partition(partition: Path, work: Path, how: str) -> tuple[Path, Path, list[str], int]:
    """The bench segment as the one remote segment of a tiered partition ``bench-0`` in Aiven's layout: the
    ``.log`` cut in :data:`AIVEN_CHUNK` chunks (zstd and/or AES-256-GCM, as the plugin writes them:
    tests/aiven_objects.py), its indexes in one ``.indexes``, a ``.rsm-manifest``; a local partition holding
    only the empty active segment after it, and the ``__remote_log_metadata`` partition naming the segment
    (COPY_SEGMENT_FINISHED).  Returns the log directory, the remote root, the key options and the .log object's
    size."""
    import json
    import uuid

    from kdump.analysis.remote_log_metadata import metadata_partition
    from kdump.storage.aiven_segment import object_name, partition_prefix
    from kdump.storage.file_records import FileRecords
    from kdump.storage.kafka_uuid import encode_uuid
    from kdump.storage.partition_metadata import encode_partition_metadata
    from tests.aiven_objects import indexes_blob, make_keys, write_aiven, write_encrypted
    from tests.builder import SimpleRecord, build_segment, build_v2_batch
    from tests.remote_metadata_records import FINISHED, STARTED, framed

    topic_id, segment_id = uuid.UUID(int=0xBE4C_0001), uuid.UUID(int=0xBE4C_0002)
    log = (partition / "00000000000000000000.log").read_bytes()
    epochs: dict[int, int] = {}
    last = 0
    max_ts = 0
    with FileRecords(str(partition / "00000000000000000000.log")) as records:
        for batch in records.batches():
            epochs.setdefault(batch.partition_leader_epoch, batch.base_offset)
            last, max_ts = batch.last_offset, max(max_ts, batch.max_timestamp)
    indexes = {
        "offset": (partition / "00000000000000000000.index").read_bytes(),
        "timestamp": (partition / "00000000000000000000.timeindex").read_bytes(),
        "leaderEpoch": (f"0\n{len(epochs)}\n" + "".join(f"{e} {o}\n" for e, o in epochs.items())).encode(),
    }
    keys: list[str] = []
    if how == "encrypted":
        (work / "keys").mkdir()
        pem = make_keys(work / "keys")["k1"]
        data, blob, manifest = write_encrypted(log, AIVEN_CHUNK, pem, compression=True, indexes=indexes)
        keys = ["--aiven-private-key", f"k1={pem}"]
    else:
        data, manifest = write_aiven(log, AIVEN_CHUNK, compression=how == "zstd", variable=how == "zstd")
        blob, manifest["segmentIndexes"] = indexes_blob(indexes)
    root = work / "aiven"
    objects = root / partition_prefix("bench", topic_id.bytes, 0)
    objects.mkdir(parents=True)
    (objects / object_name(0, segment_id.bytes, ".log")).write_bytes(data)
    (objects / object_name(0, segment_id.bytes, ".indexes")).write_bytes(blob)
    (objects / object_name(0, segment_id.bytes, ".rsm-manifest")).write_text(json.dumps(manifest))
    logs = work / "aiven-logs"
    local = logs / "bench-0"
    local.mkdir(parents=True)
    (local / "partition.metadata").write_bytes(encode_partition_metadata(encode_uuid(topic_id.bytes)))
    for suffix in (".log", ".index", ".timeindex"):  # the empty active segment
        (local / f"{last + 1:020d}{suffix}").write_bytes(b"")
    tip = {"Name": "bench", "Id": topic_id, "Partition": 0}
    events = [
        framed(
            "RemoteLogSegmentMetadataRecord",
            {
                "RemoteLogSegmentId": {"TopicIdPartition": tip, "Id": segment_id},
                "StartOffset": 0,
                "EndOffset": last,
                "BrokerId": 1,
                "MaxTimestampMs": max_ts,
                "EventTimestampMs": max_ts,
                "SegmentLeaderEpochs": [{"LeaderEpoch": e, "Offset": o} for e, o in sorted(epochs.items())],
                "SegmentSizeInBytes": len(log),
                "CustomMetadata": None,
                "RemoteLogSegmentState": STARTED,
            },
        ),
        framed(
            "RemoteLogSegmentMetadataUpdateRecord",
            {
                "RemoteLogSegmentId": {"TopicIdPartition": tip, "Id": segment_id},
                "BrokerId": 1,
                "EventTimestampMs": max_ts,
                "CustomMetadata": None,
                "RemoteLogSegmentState": FINISHED,
            },
        ),
    ]
    metadata = logs / f"__remote_log_metadata-{metadata_partition(topic_id, 0)}"
    metadata.mkdir()
    batches = [build_v2_batch([SimpleRecord(value=v)], base_offset=i) for i, v in enumerate(events)]
    (metadata / "00000000000000000000.log").write_bytes(build_segment(batches))
    return logs, root, keys, len(data)


def _aiven(args: argparse.Namespace, work: Path, partition: Path, client: object, requests: _Log) -> int:
    """Bytes and requests of the commands over the Aiven copy of the segment in S3 (see ``--aiven``)."""
    logs, root, keys, transformed = _aiven_partition(partition, work, args.aiven)
    for path in sorted(root.rglob("*")):
        if path.is_file():
            client.upload_file(str(path), BUCKET, f"aiven/{path.relative_to(root)}")  # type: ignore[attr-defined]
    size = (partition / "00000000000000000000.log").stat().st_size
    local = str(logs / "bench-0")
    remote = ["--remote-root", f"s3://{BUCKET}/aiven", "--layout", "aiven", *keys]
    middle = _middle_offset(partition)
    cases: list[tuple[str, object]] = [
        ("files (shallow)", ["files", *remote, local]),
        ("files --deep-iteration", ["files", "--deep-iteration", *remote, local]),
        ("verify-index's check (verify_segment)", _verify_index(remote, local)),
        ("verify (partition)", ["verify", *remote, local]),
        (f"find --offset {middle}", ["find", "--offset", str(middle), *remote, local]),
        ("ls (partition)", ["ls", *remote, local]),
    ]
    print(
        f"segment: {size} bytes in Aiven's layout ({args.aiven}, {AIVEN_CHUNK >> 20} MiB chunks): .log object "
        f"{transformed} bytes ({transformed / size:.3f} of the segment)"
    )
    measure("aiven", cases, args.only, requests, size, transformed)
    return 0


def measure(
    layout: str,
    cases: list[tuple[str, object]],
    only: str | None,
    requests: _Log,
    size: int,
    log_object: int | None = None,
) -> None:
    """Run each case (a kdump command line, or a function returning an exit status) once with the store's
    counters reset and its output thrown away, and print its Markdown row: the bytes fetched against the
    segment's ``size`` (Kafka's layout: per copy of the segment, ``diff`` reading two; Aiven's: per ``.log``
    object, ``log_object`` bytes, and per segment), the requests counted by kdump and by the server's log."""
    import fsspec

    from kdump.cli import files, run_guarded
    from kdump.cli.commands import cli
    from kdump.storage import object_store

    if only:
        cases = [c for c in cases if only in c[0]]
    per = ["per copy of the segment"] if layout == "kafka" else ["per .log object", "per segment"]
    print(
        f"| command | status | bytes fetched | {' | '.join(per)} | requests (reads + metadata) | server log | seconds |"
    )
    print("|---" * (6 + len(per)) + "|")
    for name, argv in cases:
        object_store.forget()
        fsspec.filesystem("s3").clear_instance_cache()
        requests.lines.clear()
        start = time.perf_counter()
        if callable(argv):
            status = argv()
        elif argv[0] == "files":  # type: ignore[index]
            status = run_guarded(lambda o, e, a=argv: files.run(a[1:], o, e), _Null(), _Null())
        else:
            saved, sys.stdout = sys.stdout, io.TextIOWrapper(_Null())
            try:
                cli.main(argv, standalone_mode=False)
                status = 0
            except SystemExit as e:
                status = int(e.code or 0)
            finally:
                sys.stdout = saved
        seconds = time.perf_counter() - start
        stats = object_store.STATS
        served = len([line for line in requests.lines if "/" + BUCKET in line])
        if layout == "kafka":
            copies = 2 if name.startswith("diff") else 1  # diff reads two objects of the segment's size
            ratios = [stats.bytes_fetched / size / copies]
        else:
            assert log_object is not None
            ratios = [stats.bytes_fetched / log_object, stats.bytes_fetched / size]
        print(
            f"| {name} | {status} | {stats.bytes_fetched:,} | {' | '.join(f'{r:.3f}' for r in ratios)} | "
            f"{stats.requests} ({stats.read_requests} + {stats.metadata_requests}) | {served} | {seconds:.1f} |"
        )


def _middle_offset(partition: Path) -> int:
    from kdump.storage.file_records import FileRecords

    with FileRecords(str(partition / "00000000000000000000.log")) as records:
        last = 0
        for batch in records.batches():
            last = batch.last_offset
    return last // 2


def _verify_index(remote: list[str], local: str) -> object:
    """What ``kdump verify-index`` runs on a segment (``index_verification.verify_segment``: the offset and
    time indexes, here out of ``.indexes``, against the log), on the one log's Aiven segment: the
    ``verify-index`` command itself takes no ``--remote-root``."""

    def run() -> int:
        from kdump.analysis.index_verification import verify_segment
        from kdump.cli.remote_options import RemoteArgs
        from kdump.storage.local_log import LocalLog

        options = dict(zip(remote[::2], remote[1::2], strict=True))
        keys = tuple(v for k, v in zip(remote[::2], remote[1::2], strict=True) if k == "--aiven-private-key")
        checks = RemoteArgs(options["--remote-root"], "aiven", private_keys=keys).checks()
        assert checks is not None
        one = checks.one_log(LocalLog.scan(local))
        assert one is not None
        result = verify_segment(one[0].log_segments[0])
        return 1 if result.problems else 0

    return run


if __name__ == "__main__":
    sys.exit(main())
