"""Peak memory of kdump on hostile and huge inputs (issues 13 and 27): every case must stay under 150 MiB resident and
either complete (exit 0) or stop with one clear line at a documented bound.

Each case's input is generated into a temporary directory (small files, except where the case is about size:
the sparse index and the 2 GiB+ segment are sparse, the 200 MiB record is written once), then kdump runs under
``/usr/bin/time -v`` (``apt-get install time`` where it is missing) and the table gives its peak RSS, CPU time (user + system), wall
time, exit status and the last line of its standard error.

Usage::

    .venv/bin/python bench/memory_bench.py [--scale 1.0] [--only NAME ...] [--keep DIR]

``--scale 0.1`` makes the record, header and message counts ten times smaller (a quick check).
"""

from __future__ import annotations

import argparse
import os
import re
import shutil
import struct
import subprocess
import sys
import tempfile
import time
import zlib
from collections.abc import Callable
from pathlib import Path

BENCH = Path(__file__).resolve().parent
sys.path.insert(0, str(BENCH.parent))

from kdump.storage.checksum import crc32c  # noqa: E402
from kdump.storage.compression import GZIP, NONE, SNAPPY, ZSTD, compress  # noqa: E402
from tests.hostile_batches import record, v2_batch, zigzag_varint  # noqa: E402

LIMIT_MIB = 150
#: The v2 batch header (written here for the one case whose records are too big to build in memory).
_V2_HEADER = struct.Struct(">qiiBIhiqqqhii")
_zigzag_varint = zigzag_varint


def _v2_batch(records: bytes, count: int, codec: int) -> bytes:
    return v2_batch(records, count, codec, timestamp=1_700_000_000_000)


def _record(offset_delta: int, body_tail: bytes) -> bytes:
    return record(offset_delta, body_tail)


# -- the cases ----------------------------------------------------------------------------------------------------


def headers_case(d: Path, scale: float) -> list[str]:
    """One v2 record with millions of 1-byte-key headers, zstd (a few KB on disk)."""
    n = int(10_000_000 * scale)
    tail = (
        b"\x01\x01" + _zigzag_varint(n) + b"\x02h\x01" * n
    )  # key null, value null, n headers (key "h", null value)
    log = d / "headers-0" / "00000000000000000000.log"
    log.parent.mkdir()
    log.write_bytes(_v2_batch(_record(0, tail), 1, ZSTD))
    return ["files", "--deep-iteration", "--files", str(log)]


def empty_records_case(d: Path, scale: float) -> list[str]:
    """One zstd batch of millions of empty records (key and value null, no headers)."""
    n = int(5_000_000 * scale)
    records = b"".join(_record(i, b"\x01\x01\x00") for i in range(n))
    log = d / "empty-0" / "00000000000000000000.log"
    log.parent.mkdir()
    log.write_bytes(_v2_batch(records, n, ZSTD))
    return ["files", "--deep-iteration", "--files", str(log)]


def legacy_wrapper_case(d: Path, scale: float) -> list[str]:
    """A v0 gzip wrapper holding millions of tiny inner messages (null key, null value)."""
    n = int(10_000_000 * scale)
    body = b"\x00\x00" + b"\xff\xff\xff\xff" * 2  # magic 0, attributes 0, key -1, value -1
    message = struct.pack(">I", zlib.crc32(body)) + body
    inner = b"".join(struct.pack(">qi", i, len(message)) + message for i in range(n))
    value = compress(GZIP, inner, magic=0)
    wrapper_body = b"\x00\x01" + b"\xff\xff\xff\xff" + struct.pack(">i", len(value)) + value
    wrapper = struct.pack(">I", zlib.crc32(wrapper_body)) + wrapper_body
    log = d / "legacy-0" / "00000000000000000000.log"
    log.parent.mkdir()
    log.write_bytes(struct.pack(">qi", n - 1, len(wrapper)) + wrapper)
    return ["files", "--deep-iteration", "--files", str(log)]


def one_offset_case(d: Path, scale: float) -> list[str]:
    """One zstd batch of millions of empty records whose offsets do not advance (offset delta 0): a gap per
    record, which Kafka's tool lists at the end of the run (issue 27)."""
    n = int(5_000_000 * scale)
    log = d / "one-offset-0" / "00000000000000000000.log"
    log.parent.mkdir()
    log.write_bytes(_v2_batch(_record(0, b"\x01\x01\x00") * n, n, ZSTD))
    return ["files", "--deep-iteration", "--files", str(log)]


def one_offset_json_case(d: Path, scale: float) -> list[str]:
    """The same batch, ``--print-data-log --json``."""
    return [*one_offset_case(d, scale), "--print-data-log", "--json"]


def legacy_one_offset_case(d: Path, scale: float) -> list[str]:
    """A v0 gzip wrapper of millions of inner messages all at offset 0 (a gap per message)."""
    n = int(10_000_000 * scale)
    body = b"\x00\x00" + b"\xff\xff\xff\xff" * 2
    message = struct.pack(">I", zlib.crc32(body)) + body
    value = compress(GZIP, (struct.pack(">qi", 0, len(message)) + message) * n, magic=0)
    wrapper_body = b"\x00\x01" + b"\xff\xff\xff\xff" + struct.pack(">i", len(value)) + value
    wrapper = struct.pack(">I", zlib.crc32(wrapper_body)) + wrapper_body
    log = d / "legacy-one-offset-0" / "00000000000000000000.log"
    log.parent.mkdir()
    log.write_bytes(struct.pack(">qi", 0, len(wrapper)) + wrapper)
    return ["files", "--deep-iteration", "--files", str(log)]


def snappy_case(d: Path, scale: float) -> list[str]:
    """A 1M-record snappy batch (~100-byte values), printed with --print-data-log."""
    n = int(1_000_000 * scale)
    records = b"".join(
        _record(i, b"\x01" + _zigzag_varint(100) + b"value-%010d-" % i + b"x" * 83 + b"\x00")
        for i in range(n)
    )
    log = d / "snappy-0" / "00000000000000000000.log"
    log.parent.mkdir()
    log.write_bytes(_v2_batch(records, n, SNAPPY))
    return ["files", "--print-data-log", "--files", str(log)]


def big_record_case(d: Path, scale: float) -> list[str]:
    """A single uncompressed record with a 200 MiB value, printed with --print-data-log."""
    size = int((200 << 20) * scale)
    log = d / "big-0" / "00000000000000000000.log"
    log.parent.mkdir()
    value_prefix = b"\x01" + _zigzag_varint(size)
    body_len = 3 + len(value_prefix) + size + 1
    record_head = _zigzag_varint(body_len) + b"\x00\x00\x00" + value_prefix
    records_len = len(record_head) + size + 1
    # the CRC covers the value: computed over the pieces
    header = bytearray(_V2_HEADER.pack(0, 61 - 12 + records_len, 0, 2, 0, NONE, 0, 1, 1, -1, -1, -1, 1))
    chunk = b"v" * (1 << 20)
    crc_state = crc32c(bytes(header[21:]) + record_head)
    update = crc32c  # crc32c(data, value) continues from value

    with open(log, "wb") as f:
        f.write(bytes(header))
        f.write(record_head)
        left = size
        while left:
            piece = chunk[: min(left, len(chunk))]
            crc_state = update(piece, crc_state)
            f.write(piece)
            left -= len(piece)
        crc_state = update(b"\x00", crc_state)
        f.write(b"\x00")
        f.seek(17)
        f.write(struct.pack(">I", crc_state))
    return ["files", "--print-data-log", "--files", str(log)]


def header_values_case(d: Path, scale: float) -> list[str]:
    """One zstd record of millions of two-byte headers (empty key, null value), ``--print-header-values``."""
    n = int(10_000_000 * scale)
    log = d / "header-values-0" / "00000000000000000000.log"
    log.parent.mkdir()
    log.write_bytes(_v2_batch(_record(0, b"\x01\x01" + _zigzag_varint(n) + b"\x00\x01" * n), 1, ZSTD))
    return ["files", "--deep-iteration", "--print-header-values", "--files", str(log)]


def big_zstd_record_case(d: Path, scale: float) -> list[str]:
    """A single record with a 200 MiB value inside a zstd batch (a few KB on disk), ``--print-data-log``."""
    size = int((200 << 20) * scale)
    log = d / "big-zstd-0" / "00000000000000000000.log"
    log.parent.mkdir()
    log.write_bytes(_v2_batch(_record(0, b"\x01" + _zigzag_varint(size) + b"v" * size + b"\x00"), 1, ZSTD))
    return ["files", "--print-data-log", "--files", str(log)]


def big_zstd_record_json_case(d: Path, scale: float) -> list[str]:
    """The same, ``--print-data-log --json``."""
    return [*big_zstd_record_case(d, scale), "--json"]


def big_record_json_case(d: Path, scale: float) -> list[str]:
    """The uncompressed 200 MiB record, ``--print-data-log --json``."""
    return [*big_record_case(d, scale), "--json"]


def compacted_keys_case(d: Path, scale: float) -> list[str]:
    """retention of a compacted partition of 3M distinct keys (zstd batches of 1,000 records)."""
    n = int(3_000_000 * scale)
    p = d / "compacted-0"
    p.mkdir()
    with open(p / "00000000000000000000.log", "wb") as f:
        for start in range(0, n, 1000):
            count = min(1000, n - start)
            keys = [b"key-%d" % i for i in range(start, start + count)]
            records = b"".join(
                _record(i, _zigzag_varint(len(k)) + k + b"\x02v\x00") for i, k in enumerate(keys)
            )
            f.write(v2_batch(records, count, ZSTD, base_offset=start))
    return ["retention", "--json", "--config", "cleanup.policy=compact", str(p)]


def _bench_segment() -> Path | None:
    """The bench segment of ``bench/make_segments.py``, if it was built."""
    p = BENCH / "data" / "plain-0"
    return p if (p / "00000000000000000000.log").exists() else None


def bench_retention_case(d: Path, scale: float) -> list[str]:
    """retention of the bench segment (2.23M distinct keys) as a compacted topic."""
    p = _bench_segment()
    if p is None:
        return []
    return ["retention", "--json", "--config", "cleanup.policy=compact", str(p)]


def bench_diff_case(d: Path, scale: float) -> list[str]:
    """diff of the bench segment with itself (two walks of 254 MiB side by side)."""
    p = _bench_segment()
    return [] if p is None else ["diff", str(p), str(p)]


def many_segments_case(d: Path, scale: float) -> list[str]:
    """verify of a partition of 100k one-batch segments (empty index files)."""
    n = int(100_000 * scale)
    p = d / "many-0"
    p.mkdir()
    for i in range(n):
        name = f"{i:020d}"
        (p / f"{name}.log").write_bytes(v2_batch(_record(0, b"\x01\x01\x00"), 1, NONE, base_offset=i))
        (p / f"{name}.index").write_bytes(b"")
        (p / f"{name}.timeindex").write_bytes(b"")
    return ["verify", str(p)]


def _small_partition(directory: Path) -> Path:
    directory.mkdir(parents=True)
    records = b"".join(_record(i, b"\x01\x01\x00") for i in range(10))
    (directory / "00000000000000000000.log").write_bytes(_v2_batch(records, 10, NONE))
    (directory / "00000000000000000000.index").write_bytes(b"")
    (directory / "00000000000000000000.timeindex").write_bytes(b"")
    return directory


def sparse_index_case(d: Path, scale: float) -> list[str]:
    """verify-index on a partition whose .index and .timeindex are 1 GiB sparse (all-zero) files."""
    p = _small_partition(d / "sparse-0")
    size = int((1 << 30) * scale)
    os.truncate(p / "00000000000000000000.index", size // 8 * 8)
    os.truncate(p / "00000000000000000000.timeindex", size // 12 * 12)
    return ["verify-index", str(p)]


def dev_zero_index_case(d: Path, scale: float) -> list[str]:
    """/dev/zero named like an index: one clear line, at once."""
    p = _small_partition(d / "zero-0")
    (p / "00000000000000000000.index").unlink()
    (p / "00000000000000000000.index").symlink_to("/dev/zero")
    return ["files", "--files", str(p / "00000000000000000000.index")]


def salvage_case(d: Path, scale: float) -> list[str]:
    """salvage of a 256 MiB segment of small batches."""
    p = d / "salvage-0"
    p.mkdir()
    batch = _v2_batch(
        b"".join(_record(i, b"\x01" + _zigzag_varint(100) + b"s" * 100 + b"\x00") for i in range(100)),
        100,
        NONE,
    )
    count = int((256 << 20) * scale) // len(batch)
    with open(p / "00000000000000000000.log", "wb") as f:
        for i in range(count):
            b = bytearray(batch)
            struct.pack_into(">q", b, 0, i * 100)  # the CRC does not cover the base offset
            f.write(b)
    return ["salvage", str(p / "00000000000000000000.log"), "--out", str(d / "salvaged.log")]


def over_2gib_case(d: Path, scale: float) -> list[str]:
    """ls on a partition whose .log is a 3 GiB sparse file (one batch, then zeros)."""
    p = _small_partition(d / "huge-0")
    os.truncate(p / "00000000000000000000.log", 3 << 30)
    return ["ls", str(d / "huge-0")]


CASES: dict[str, Callable[[Path, float], list[str]]] = {
    "10M headers in one record (zstd)": headers_case,
    "5M empty records in one batch (zstd)": empty_records_case,
    "legacy v0 gzip wrapper, 10M inner messages": legacy_wrapper_case,
    "5M records at one offset (zstd), --deep-iteration": one_offset_case,
    "5M records at one offset (zstd), --print-data-log --json": one_offset_json_case,
    "legacy v0 gzip wrapper, 10M inner messages at one offset": legacy_one_offset_case,
    "10M two-byte headers (zstd), --print-header-values": header_values_case,
    "1M-record snappy batch, --print-data-log": snappy_case,
    "one 200 MiB record, --print-data-log": big_record_case,
    "one 200 MiB record in a zstd batch, --print-data-log": big_zstd_record_case,
    "one 200 MiB record in a zstd batch, --print-data-log --json": big_zstd_record_json_case,
    "one 200 MiB record, --print-data-log --json": big_record_json_case,
    "retention, compacted partition of 3M keys": compacted_keys_case,
    "retention of the bench segment as compacted": bench_retention_case,
    "diff of the bench segment with itself": bench_diff_case,
    "verify of 100k one-batch segments": many_segments_case,
    "verify-index, 1 GiB sparse .index/.timeindex": sparse_index_case,
    "/dev/zero as an .index": dev_zero_index_case,
    "salvage of a 256 MiB segment": salvage_case,
    "ls of a 3 GiB sparse .log": over_2gib_case,
}


def measure(args: list[str]) -> tuple[float, float, float, int, str]:
    time_bin = shutil.which("time") or "/usr/bin/time"
    started = time.perf_counter()
    r = subprocess.run(
        [time_bin, "-v", sys.executable, "-m", "kdump", *args],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        text=True,
        check=False,
    )
    wall = time.perf_counter() - started
    match = re.search(r"Maximum resident set size \(kbytes\): (\d+)", r.stderr)
    peak = int(match.group(1)) / 1024 if match else float("nan")
    cpu = sum(float(m) for m in re.findall(r"(?:User|System) time \(seconds\): ([\d.]+)", r.stderr))
    status = re.search(r"Exit status: (\d+)", r.stderr)
    lines = [line for line in r.stderr.splitlines() if line and not line.startswith(("\t", "Command"))]
    return peak, wall, cpu, int(status.group(1)) if status else r.returncode, lines[-1] if lines else ""


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument(
        "--scale", type=float, default=1.0, help="multiply record/header/message counts and sizes"
    )
    parser.add_argument("--only", nargs="*", help="run only the cases whose name contains one of these words")
    parser.add_argument("--keep", help="generate the inputs here and keep them")
    opts = parser.parse_args()
    if not (shutil.which("time") or os.path.exists("/usr/bin/time")):
        print("needs /usr/bin/time (apt-get install time)", file=sys.stderr)
        return 2
    root = Path(opts.keep) if opts.keep else Path(tempfile.mkdtemp(prefix="kdump-membench-"))
    root.mkdir(parents=True, exist_ok=True)
    print(
        "| case | peak RSS | CPU | wall | exit | last line of stderr |\n| --- | --- | --- | --- | --- | --- |"
    )
    failures = 0
    try:
        for name, build in CASES.items():
            if opts.only and not any(w in name for w in opts.only):
                continue
            d = root / re.sub(r"\W+", "-", name)
            shutil.rmtree(d, ignore_errors=True)
            d.mkdir()
            args = build(d, opts.scale)
            if not args:
                print(f"| {name} | skipped: run bench/make_segments.py first | | | | |", flush=True)
                continue
            peak, wall, cpu, status, last = measure(args)
            ok = peak < LIMIT_MIB and "out of memory" not in last and "internal error" not in last
            failures += not ok
            print(
                f"| {name} | {peak:.0f} MiB{'' if ok else ' ✗'} | {cpu:.1f} s | {wall:.1f} s | {status} | {last[:110]} |",
                flush=True,
            )
            if not opts.keep:
                shutil.rmtree(d, ignore_errors=True)
    finally:
        if not opts.keep:
            shutil.rmtree(root, ignore_errors=True)
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
