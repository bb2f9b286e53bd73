"""What kdump fetches from an object store: bytes and requests per command on a segment in S3.

Builds the benchmark segment (``bench/make_segments.py``; ``--quick``: the 10x smaller one), gives it indexes
with ``kdump rebuild-index`` on a local copy, starts moto's S3 server on 127.0.0.1, uploads the partition, and
runs each command once on the URL with the store's counters reset (``kdump.storage.object_store.STATS``), output
thrown away.  The request count is also read from the server's own request log (each HTTP request it
answered), so the two counts check each other.  Prints one Markdown row per command.

Usage::

    .venv/bin/python bench/remote_bench.py [--quick]
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
    args = parser.parse_args(argv)
    if args.no_cache:
        os.environ["KDUMP_STORE_CACHE"] = "0"

    import boto3
    from moto.server import ThreadedMotoServer

    from bench.make_segments import build
    from kdump.cli import files, run_guarded
    from kdump.cli.commands import cli
    from kdump.storage import object_store

    object_store.CACHE.limit = object_store._cache_limit()
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
        cases = [
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
        if args.only:
            cases = [c for c in cases if args.only in c[0]]
        print(f"segment: {size} bytes ({log}); index {index.stat().st_size} bytes")
        print(
            "| command | status | bytes fetched | per copy of the segment | requests (reads + metadata) | server log | seconds |"
        )
        print("|---|---|---|---|---|---|---|")
        for name, argv in cases:
            object_store.forget()
            import fsspec

            fsspec.filesystem("s3").clear_instance_cache()
            requests.lines.clear()
            start = time.perf_counter()
            if argv[0] == "files":
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
            copies = 2 if name.startswith("diff") else 1  # diff reads two objects of the segment's size
            print(
                f"| {name} | {status} | {stats.bytes_fetched:,} | {stats.bytes_fetched / size / copies:.3f} | "
                f"{stats.requests} ({stats.read_requests} + {stats.metadata_requests}) | {served} | {seconds:.1f} |"
            )
    finally:
        server.stop()
        shutil.rmtree(work, ignore_errors=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
