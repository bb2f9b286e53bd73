"""Hostile input: lying length fields and record counts, varints that never end, and compressed batches that
expand to gigabytes.  Every run ends quickly with at most one error line naming the file and byte; the bombs run
in a child process whose address space is limited to 1 GiB."""

from __future__ import annotations

import io
import struct
import subprocess
import sys
import textwrap
import time
import zlib
from pathlib import Path

import cramjam
import lz4.block
import pytest

from kdump.cli import files, run_guarded
from kdump.storage import compression
from kdump.storage.compression import DEFAULT_DECOMPRESSION_LIMIT, GZIP, LZ4, SNAPPY, ZSTD
from kdump.storage.producer_snapshot import ProducerSnapshotEntry, encode_producer_snapshot
from kdump.storage.xxhash import xxh32
from tests import builder
from tests.builder import SimpleRecord

REPO = Path(__file__).resolve().parents[1]
LOG = "00000000000000000000.log"
INT_MAX = 0x7FFFFFFF
GIB = 1 << 30


def _kdump_files(*argv: str) -> tuple[int, bytes, bytes, float]:
    out, err = io.BytesIO(), io.BytesIO()
    began = time.monotonic()
    code = run_guarded(lambda o, e: files.run(list(argv), o, e), out, err)
    return code, out.getvalue(), err.getvalue(), time.monotonic() - began


def _assert_one_error_line(err: bytes, path: Path, *fragments: str) -> str:
    lines = err.decode().splitlines()
    assert len(lines) == 1, err
    assert lines[0].startswith(f"kdump: {path}: byte "), lines[0]
    assert "internal error" not in lines[0]
    for fragment in fragments:
        assert fragment in lines[0], lines[0]
    return lines[0]


def _write(tmp_path: Path, data: bytes, name: str = LOG) -> Path:
    path = tmp_path / name
    path.write_bytes(data)
    return path


def _records(n: int) -> list[SimpleRecord]:
    return [
        SimpleRecord(f"v{i}".encode(), key=f"k{i}".encode(), timestamp=1_700_000_000_000 + i)
        for i in range(n)
    ]


def _with_int(data: bytes, at: int, value: int) -> bytes:
    return data[:at] + struct.pack(">i", value) + data[at + 4 :]


# -- length fields and counts ------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("size", "fragment"),
    [
        (INT_MAX, None),  # does not fit in the file: a torn tail, as Kafka treats it
        (-1, "Found record size -1 smaller than minimum record overhead (14)"),
        (-(1 << 31), "Found record size -2147483648 smaller than minimum record overhead (14)"),
        (13, "Found record size 13 smaller than minimum record overhead (14)"),
    ],
)
def test_batch_length_field(tmp_path: Path, size: int, fragment: str | None) -> None:
    first = builder.build_v2_batch(_records(2), base_offset=0)
    second = builder.build_v2_batch(_records(2), base_offset=2)
    path = _write(tmp_path, first + _with_int(second, 8, size))
    code, out, err, elapsed = _kdump_files("--files", str(path), "--deep-iteration")
    assert elapsed < 5 and out.count(b"baseOffset:") == 1
    if fragment is None:
        assert (code, err) == (0, b"")
        assert out.endswith(f"Found {len(second)} invalid bytes at the end of {LOG}\n".encode())
    else:
        assert code == 1
        _assert_one_error_line(err, path, f"byte {len(first)}: {fragment}")


@pytest.mark.parametrize("codec", [0, GZIP, ZSTD], ids=["none", "gzip", "zstd"])
@pytest.mark.parametrize(
    ("count", "fragment"),
    [
        (INT_MAX, None),  # claims 2^31-1 records, holds 3
        (-1, "Found invalid record count -1 in magic v2 batch"),
        (1, "records still remaining"),
    ],
)
def test_lying_record_count(tmp_path: Path, codec: int, count: int, fragment: str | None) -> None:
    batch = builder.build_v2_batch(_records(3), compression=codec, records_count=count)
    path = _write(tmp_path, batch)
    code, out, err, elapsed = _kdump_files("--files", str(path), "--print-data-log")
    assert code == 1 and elapsed < 5
    line = _assert_one_error_line(err, path, "byte ")
    if codec:  # located at the batch, and where in the decompressed records
        assert "byte 0: " in line and ("of the decompressed records" in line or count == -1)
    if fragment is not None:
        assert fragment in line
    else:
        assert "premature EOF" in line or "invalid record structure" in line


@pytest.mark.parametrize(
    ("where", "payload"),
    [
        ("record length", b"\xff" * 20),
        ("timestamp delta", b"\x40\x00" + b"\xff" * 20 + b"\x00" * 40),
        ("key length", b"\x40\x00\x00\x00" + b"\xff" * 20 + b"\x00" * 40),
        ("header count", b"\x0c\x00\x00\x00\x01\x01" + b"\xff" * 7),
        ("record length 2^31-1", b"\xfe\xff\xff\xff\x0f" + b"\x00" * 20),
        ("negative record length", b"\x01" + b"\x00" * 20),
    ],
)
def test_varints_that_never_end(tmp_path: Path, where: str, payload: bytes) -> None:
    for codec in (0, ZSTD):
        body = payload if codec == 0 else compression.compress(codec, payload)
        batch = builder.build_v2_batch(_records(1), compression=codec, payload=body)
        path = _write(tmp_path, batch)
        code, _, err, elapsed = _kdump_files("--files", str(path), "--deep-iteration")
        assert code == 1 and elapsed < 5, where
        _assert_one_error_line(err, path, "byte 0: " if codec else "byte 61: ")


@pytest.mark.parametrize("field", ["key", "value"])
@pytest.mark.parametrize("size", [INT_MAX, -2, 1 << 30])
def test_legacy_field_lengths(tmp_path: Path, field: str, size: int) -> None:
    entry = builder.build_legacy_message(SimpleRecord(b"value", key=b"key"), magic=1, offset=0)
    at = 12 + 14 if field == "key" else 12 + 14 + 4 + 3  # log header, then crc, magic, attributes, timestamp
    bad = bytearray(_with_int(entry, at, size))
    struct.pack_into(">I", bad, 12, zlib.crc32(bytes(bad[16:])))  # a valid CRC: only the length lies
    path = _write(tmp_path, bytes(bad))
    code, out, err, elapsed = _kdump_files("--files", str(path), "--print-data-log")
    assert elapsed < 5
    if size == -2 and field == "value":
        assert code == 0 and b"payload" not in out  # a negative length is a null value, as in Kafka
    else:
        assert code == 1
        _assert_one_error_line(err, path, "byte 0: ")


def test_compressed_legacy_wrapper_with_lying_inner_sizes(tmp_path: Path) -> None:
    inner = builder.encode_legacy_entries(_records(3), magic=1, relative_offsets=True)
    for value in (INT_MAX, 13, -1):
        bad = _with_int(inner, 8, value)
        wrapper = builder.build_legacy_message(
            SimpleRecord(builder.compression.compress(GZIP, bad, magic=1), timestamp=5),  # type: ignore[attr-defined]
            magic=1,
            offset=2,
            compression=GZIP,
        )
        path = _write(tmp_path, wrapper)
        code, _, err, elapsed = _kdump_files("--files", str(path), "--deep-iteration")
        assert code == 1 and elapsed < 5
        _assert_one_error_line(err, path, "byte 0: ")


def test_index_entries_pointing_nowhere(tmp_path: Path) -> None:
    log = builder.build_segment(builder.build_v2_batch(_records(2), base_offset=2 * i) for i in range(4))
    _write(tmp_path, log)
    index = _write(tmp_path, struct.pack(">iiii", 1, 0, INT_MAX, INT_MAX), "00000000000000000000.index")
    time_index = _write(
        tmp_path, struct.pack(">qiqi", 1, 1, (1 << 63) - 1, INT_MAX), "00000000000000000000.timeindex"
    )
    code, _, err, elapsed = _kdump_files("--files", str(index))
    assert code == 1 and elapsed < 5
    _assert_one_error_line(err, index, "byte 8: entry 1 (offset 2147483647 position 2147483647)")
    code, _, err, elapsed = _kdump_files("--files", str(time_index), "--verify-index-only")
    assert elapsed < 5 and b"internal error" not in err


def test_producer_snapshot_count_of_2_31(tmp_path: Path) -> None:
    entry = ProducerSnapshotEntry(1, 0, 5, 10, 0, 1_700_000_000_000, -1)
    data = bytearray(encode_producer_snapshot([entry]))
    struct.pack_into(">i", data, 6, INT_MAX)
    path = _write(tmp_path, bytes(data), "00000000000000000011.snapshot")
    code, out, err, elapsed = _kdump_files("--files", str(path))
    assert code == 0 and elapsed < 5
    assert b"Tried to allocate a collection of size 2147483647" in err


def test_checkpoint_claiming_2_31_entries(tmp_path: Path) -> None:
    path = _write(tmp_path, b"0\n2147483647\norders 0 5\n", "recovery-point-offset-checkpoint")
    code, _, err, elapsed = _kdump_files("--files", str(path))
    assert code == 1 and elapsed < 5
    _assert_one_error_line(err, path)


# -- decompression bombs -----------------------------------------------------------------------------------------


def zstd_bomb(size: int) -> bytes:
    """A zstd frame of RLE blocks: 4 bytes for every 128 KiB of zeros."""
    blocks = size >> 17
    header = struct.pack("<IBB", 0xFD2FB528, 0x00, 0x38)  # no content size, 128 KiB window
    block = struct.pack("<I", (1 << 17) << 3 | 1 << 1)[:3] + b"\x00"
    last = struct.pack("<I", (1 << 17) << 3 | 1 << 1 | 1)[:3] + b"\x00"
    return header + block * (blocks - 1) + last


def gzip_bomb(size: int) -> bytes:
    """One gzip member: the same fully flushed deflate piece (8 MiB of zeros each) again and again."""
    deflater = zlib.compressobj(9, zlib.DEFLATED, -zlib.MAX_WBITS)
    piece = deflater.compress(bytes(8 << 20)) + deflater.flush(zlib.Z_FULL_FLUSH)
    final_block = b"\x01\x00\x00\xff\xff"  # an empty stored block with BFINAL
    trailer = struct.pack("<II", 0, size & 0xFFFFFFFF)  # never reached: the bound stops the reader first
    return b"\x1f\x8b\x08\x00\x00\x00\x00\x00\x00\xff" + piece * (size >> 23) + final_block + trailer


def lz4_bomb(size: int) -> bytes:
    """Kafka's LZ4 frame with 4 MiB blocks of zeros."""
    flg, bd = 0x60, 0x70
    header = struct.pack("<IBB", 0x184D2204, flg, bd) + bytes([(xxh32(bytes([flg, bd])) >> 8) & 0xFF])
    block = lz4.block.compress(bytes(4 << 20), store_size=False)
    return header + (struct.pack("<I", len(block)) + block) * (size >> 22) + b"\x00\x00\x00\x00"


def snappy_bomb(size: int) -> bytes:
    """xerial framing, chunks of 1 MiB of zeros (snappy expands ~21x at most)."""
    block = bytes(cramjam.snappy.compress_raw(bytes(1 << 20)))
    return (
        b"\x82SNAPPY\x00" + struct.pack(">ii", 1, 1) + (struct.pack(">i", len(block)) + block) * (size >> 20)
    )


def snappy_claim_bomb() -> bytes:
    """1 KiB whose one raw block announces 4 GiB - 1 of output."""
    block = b"\xff\xff\xff\xff\x0f" + b"\x00" * 1000
    return b"\x82SNAPPY\x00" + struct.pack(">ii", 1, 1) + struct.pack(">i", len(block)) + block


BOMBS = {
    "zstd-4GiB": (ZSTD, 2, lambda: zstd_bomb(4 * GIB)),
    "gzip-4GiB": (GZIP, 2, lambda: gzip_bomb(4 * GIB)),
    "lz4-1GiB": (LZ4, 2, lambda: lz4_bomb(GIB)),
    "snappy-300MiB": (SNAPPY, 2, lambda: snappy_bomb(300 << 20)),
    "snappy-claims-4GiB": (SNAPPY, 2, snappy_claim_bomb),
    "gzip-4GiB-legacy-v1": (GZIP, 1, lambda: gzip_bomb(4 * GIB)),
}

_CHILD = """
import resource, sys
limit = 1 << 30
resource.setrlimit(resource.RLIMIT_AS, (limit, limit))
from kdump.cli import main
sys.argv = ["kdump", "files", "--files", sys.argv[1], "--deep-iteration"]
try:
    main()
finally:
    with open({rss!r}, "w") as f:
        f.write(str(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss))
"""


@pytest.mark.parametrize("bomb", list(BOMBS))
def test_decompression_bomb_under_1_gib(tmp_path: Path, bomb: str) -> None:
    codec, magic, make = BOMBS[bomb]
    payload = make()
    if magic == 2:
        batch = builder.build_v2_batch(_records(1), compression=codec, payload=payload)
    else:
        batch = builder.build_legacy_message(
            SimpleRecord(payload, timestamp=5), magic=magic, offset=0, compression=codec
        )
    path = _write(tmp_path, batch)
    rss = tmp_path / "maxrss"
    began = time.monotonic()
    done = subprocess.run(
        [sys.executable, "-c", textwrap.dedent(_CHILD.format(rss=str(rss))), str(path)],
        capture_output=True,
        cwd=REPO,
        timeout=120,
    )
    elapsed = time.monotonic() - began
    what = "record stream" if magic == 2 else "legacy message set"
    line = _assert_one_error_line(
        done.stderr,
        path,
        f"byte 0: Failed to decompress {what}: ",
        f"decompressed size exceeds the limit of {DEFAULT_DECOMPRESSION_LIMIT} bytes",
    )
    assert done.returncode == 1, line
    assert elapsed < 30, f"{bomb}: {elapsed:.1f} s"
    assert int(rss.read_text()) < GIB >> 10  # KiB; the address-space limit would have stopped it anyway
    print(f"{bomb}: {len(batch)} bytes on disk, {elapsed:.2f} s, max RSS {int(rss.read_text()) >> 10} MiB")
