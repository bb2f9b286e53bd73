"""Compressed payloads too big to hold are read a window at a time (issue 13): the records of a v2 batch and the
inner messages of a legacy wrapper come out exactly as when the whole payload is decompressed at once -- the
same records, positions and errors (that path is the one the corpus and the real tool check) -- and memory
stays flat however much the payload expands.

The differential tests shrink the thresholds (a "window" of a few bytes) so that every record, every length
varint and every error falls across window boundaries, on valid and damaged payloads of every codec."""

from __future__ import annotations

import random
import struct
import subprocess
import sys
import zlib
from pathlib import Path
from typing import Any

import pytest

from kdump.errors import KdumpError
from kdump.storage import legacy_record, record_batch
from kdump.storage.checksum import crc32c
from kdump.storage.compression import GZIP, LZ4, SNAPPY, ZSTD, compress
from kdump.storage.legacy_record import LegacyRecordBatch
from kdump.storage.record_batch import DefaultRecordBatch
from tests.differential.kafka import LAUNCHER, script_unavailable_reason
from tests.hostile_batches import record, run_kdump, v2_batch, zigzag_varint

CODECS = [GZIP, SNAPPY, LZ4, ZSTD]


def _outcome(records_of: Any) -> tuple[list[tuple], tuple | None]:
    """Every record (as plain values) up to the error that ends the iteration, and that error."""
    seen: list[tuple] = []
    try:
        for r in records_of():
            headers = tuple((h.key, h.value) for h in r.headers)
            seen.append(
                (
                    r.offset,
                    r.timestamp,
                    r.sequence,
                    r.key,
                    r.value,
                    headers,
                    r.key_size,
                    r.value_size,
                    r.position,
                )
            )
    except KdumpError as e:
        return seen, (type(e).__name__, e.message, e.position)
    return seen, None


def _both(monkeypatch: pytest.MonkeyPatch, records_of: Any, window: int) -> tuple[Any, Any]:
    whole = _outcome(records_of)
    with monkeypatch.context() as m:
        for module in (record_batch, legacy_record):
            m.setattr(module, "STREAMED_RECORDS_BYTES", 0)
            m.setattr(module, "WINDOW_BYTES", window)
        windowed = _outcome(records_of)
    return whole, windowed


def _v2_records(rng: random.Random, n: int) -> bytes:
    out = []
    for i in range(n):
        key = b"" if rng.random() < 0.2 else rng.randbytes(rng.randrange(0, 40))
        value_len = rng.choice([0, 1, 5, 100, 300, 2000])
        headers = [(b"h%d" % j, None if j % 3 == 0 else rng.randbytes(j)) for j in range(rng.randrange(0, 4))]
        tail = (
            (zigzag_varint(-1) if rng.random() < 0.1 else zigzag_varint(len(key)) + key)
            + zigzag_varint(value_len)
            + rng.randbytes(value_len)
            + zigzag_varint(len(headers))
            + b"".join(
                zigzag_varint(len(k)) + k + (zigzag_varint(-1) if v is None else zigzag_varint(len(v)) + v)
                for k, v in headers
            )
        )
        out.append(record(i, tail))
    return b"".join(out)


def _damaged(rng: random.Random, plain: bytes) -> tuple[bytes, int]:
    """A damaged variant of ``plain`` (and the count to declare): cut, extended, flipped, or miscounted."""
    kind = rng.randrange(5)
    if kind == 0:
        return plain[: rng.randrange(1, len(plain))], 0
    if kind == 1:
        return plain + rng.randbytes(rng.randrange(1, 9)), 0
    if kind == 2:
        damaged = bytearray(plain)
        for _ in range(rng.randrange(1, 4)):
            damaged[rng.randrange(len(damaged))] = rng.randrange(256)
        return bytes(damaged), 0
    if kind == 3:
        return plain, 1  # one record more than there are
    return plain, -1  # one record fewer


@pytest.mark.parametrize("codec", CODECS, ids=["gzip", "snappy", "lz4", "zstd"])
def test_v2_records_read_in_windows_are_the_whole_payloads(
    monkeypatch: pytest.MonkeyPatch, codec: int
) -> None:
    rng = random.Random(1300 + codec)
    damaged_seen = 0
    for trial in range(60):
        n = rng.randrange(1, 40)
        plain = _v2_records(rng, n)
        extra = 0
        if trial % 3:
            plain, extra = _damaged(rng, plain)
        batch_bytes = v2_batch(plain, n + extra, codec)
        batch = DefaultRecordBatch.read_from(batch_bytes)
        for window in (1, 7, 64, 4096):
            whole, windowed = _both(monkeypatch, batch.records, window)
            assert windowed == whole, (trial, window)
        damaged_seen += whole[1] is not None
    assert damaged_seen > 10  # the damaged payloads did reach the error paths


def test_a_decompression_error_after_a_bad_record_wins_as_with_the_whole_payload(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """The whole payload is decompressed before any record is read, so a bad gzip trailer is what Kafka reports
    even when a record before it is bad too; read in windows, the record error must not get in first."""
    plain = _v2_records(random.Random(5), 20)
    plain = plain[:-3]  # the last record runs past the end of the stream
    batch_bytes = bytearray(v2_batch(plain, 20, GZIP))
    batch_bytes[-5] ^= 0xFF  # the gzip trailer's CRC
    body = bytes(batch_bytes[21:])
    struct.pack_into(">I", batch_bytes, 17, crc32c(body))
    batch = DefaultRecordBatch.read_from(bytes(batch_bytes))
    whole, windowed = _both(monkeypatch, batch.records, 16)
    assert whole[1] is not None and "Failed to decompress" in whole[1][1]
    assert windowed == whole


def _legacy_message(offset: int, value: bytes | None, magic: int, timestamp: int = 5) -> bytes:
    body = bytes([magic, 0]) + (struct.pack(">q", timestamp) if magic == 1 else b"")
    body += struct.pack(">i", -1)
    body += struct.pack(">i", -1) if value is None else struct.pack(">i", len(value)) + value
    message = struct.pack(">I", zlib.crc32(body)) + body
    return struct.pack(">qi", offset, len(message)) + message


def _legacy_wrapper(inner: bytes, codec: int, magic: int, offset: int) -> bytes:
    value = compress(codec, inner, magic=magic)
    body = bytes([magic, codec]) + (struct.pack(">q", 9) if magic == 1 else b"")
    body += struct.pack(">i", -1) + struct.pack(">i", len(value)) + value
    message = struct.pack(">I", zlib.crc32(body)) + body
    return struct.pack(">qi", offset, len(message)) + message


@pytest.mark.parametrize("magic", [0, 1])
@pytest.mark.parametrize("codec", [GZIP, SNAPPY, LZ4], ids=["gzip", "snappy", "lz4"])
def test_legacy_inner_messages_read_in_windows_are_the_whole_payloads(
    monkeypatch: pytest.MonkeyPatch, codec: int, magic: int
) -> None:
    rng = random.Random(7 * codec + magic)
    errors_seen = 0
    for trial in range(50):
        n = rng.randrange(1, 30)
        inner = b"".join(
            _legacy_message(
                i if magic == 0 else i,
                None if rng.random() < 0.1 else rng.randbytes(rng.choice([0, 3, 90, 700])),
                magic,
            )
            for i in range(n)
        )
        if trial == 1:  # an entry shorter than a message can be: a framing error, always
            inner = inner[:8] + struct.pack(">i", 3) + inner[12:]
        elif trial % 3:
            inner, _ = _damaged(rng, inner)
        wrapper = _legacy_wrapper(inner, codec, magic, rng.choice([0, n - 1, n + 5]))
        offset, size = struct.unpack_from(">qi", wrapper)
        entry = LegacyRecordBatch(wrapper, 0, offset, size, magic)
        for window in (1, 13, 100, 4096):
            whole, windowed = _both(monkeypatch, entry.records, window)
            assert windowed == whole, (trial, window)
        errors_seen += whole[1] is not None
    assert errors_seen  # the damaged payloads did reach the error paths


#: Runs kdump from a small process: a child's ru_maxrss counts the pages it shared with its parent before
#: exec, so it is measured from a parent that holds nothing (not from pytest, which built the input).
_MEASURE = """
import resource, subprocess, sys
r = subprocess.run([sys.executable, "-m", "kdump", *sys.argv[1:]], stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
sys.stderr.buffer.write(r.stderr)
print(resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss if r.returncode == 0 else -r.returncode)
"""


def _peak_rss_mib(args: list[str]) -> float:
    """kdump's peak resident set, in MiB (it must exit 0)."""
    r = subprocess.run([sys.executable, "-c", _MEASURE, *args], capture_output=True, check=True, text=True)
    kib = int(r.stdout)
    assert kib > 0, r.stderr
    return kib / 1024


def test_a_batch_decompressing_to_a_hundred_mib_is_read_in_little_memory(tmp_path: Path) -> None:
    """~120 MiB of records (zstd makes it ~1 MiB on disk), every record printed: far less resident."""
    n = 1_000_000
    value = b"v" * 100
    records = b"".join(record(i, b"\x01" + zigzag_varint(100) + value + b"\x00") for i in range(n))
    log = tmp_path / "big-0" / "00000000000000000000.log"
    log.parent.mkdir()
    log.write_bytes(v2_batch(records, n, ZSTD))
    del records
    peak = _peak_rss_mib(["files", "--deep-iteration", "--files", str(log)])
    assert peak < 100, f"peak RSS {peak:.0f} MiB"


def test_a_legacy_wrapper_of_two_million_messages_is_read_in_little_memory(tmp_path: Path) -> None:
    """A v0 gzip wrapper whose inner messages decompress to ~50 MiB."""
    n = 2_000_000
    body = b"\x00\x00" + b"\xff\xff\xff\xff" * 2
    message = struct.pack(">I", zlib.crc32(body)) + body
    inner = b"".join(struct.pack(">qi", i, len(message)) + message for i in range(n))
    value = compress(GZIP, inner, magic=0)
    del inner
    wrapper_body = b"\x00\x01" + b"\xff\xff\xff\xff" + struct.pack(">i", len(value)) + value
    wrapper = struct.pack(">I", zlib.crc32(wrapper_body)) + wrapper_body
    log = tmp_path / "legacy-0" / "00000000000000000000.log"
    log.parent.mkdir()
    log.write_bytes(struct.pack(">qi", n - 1, len(wrapper)) + wrapper)
    peak = _peak_rss_mib(["files", "--deep-iteration", "--files", str(log)])
    assert peak < 100, f"peak RSS {peak:.0f} MiB"


# -- big keys and values: views of the segment, their text written in pieces ----------------------------------


def _big_value(size: int) -> bytes:
    """Text of every kind the decoder must get right across piece boundaries: ASCII, 2-4 byte sequences,
    malformed bytes, encoded surrogates (one U+FFFD in the JDK), runs of continuation bytes."""
    kinds = [b"plain ascii ", "é€😀".encode(), b"\xff\xc0", b"\xed\xa0\x80", b"\x80" * 9, b"\xf0\x90\x80"]
    rng = random.Random(size)
    out = bytearray()
    while len(out) < size:
        out += rng.choice(kinds)
    return bytes(out[:size])


def _big_record_log(tmp_path: Path, key: bytes, value: bytes, codec: int) -> Path:
    tail = zigzag_varint(len(key)) + key + zigzag_varint(len(value)) + value + b"\x00"
    small = record(1, b"\x02k" + b"\x02v" + b"\x00")  # a small record after the big one
    log = tmp_path / "big-0" / "00000000000000000000.log"
    log.parent.mkdir(exist_ok=True)
    log.write_bytes(v2_batch(record(0, tail) + small, 2, codec))
    return log


@pytest.mark.parametrize("pure", [False, True], ids=["accelerator", "pure-python"])
def test_a_big_value_prints_the_text_of_the_whole_value(tmp_path: Path, pure: bool) -> None:
    """The line of a 3 MiB key and 5 MiB value (views, written in 1 MiB pieces) is the line made from the whole
    value at once by the JDK-exact decoder, in an uncompressed batch (views) and a compressed one (copies)."""
    from kdump.jdk.text import decode_utf8_jdk

    key, value = _big_value(3 << 20), _big_value(5 << 20)
    for codec in (0, ZSTD):
        log = _big_record_log(tmp_path, key, value, codec)
        r = run_kdump("files", "--print-data-log", "--files", str(log), pure=pure)
        assert r.returncode == 0, r.stderr
        lines = r.stdout.split(b"\n")
        assert lines[3].endswith(
            (" key: " + decode_utf8_jdk(key) + " payload: " + decode_utf8_jdk(value)).encode()
        )
        assert lines[3].startswith(b"| offset: 0 CreateTime: 7 keySize: 3145728 valueSize: 5242880 ")
        assert (
            lines[4]
            == b"| offset: 1 CreateTime: 7 keySize: 1 valueSize: 1 sequence: -1 headerKeys: [] key: k payload: v"
        )


@pytest.mark.kafka
@pytest.mark.skipif(script_unavailable_reason() is not None, reason=str(script_unavailable_reason()))
def test_a_big_value_prints_what_the_real_tool_prints(tmp_path: Path) -> None:
    log = _big_record_log(tmp_path, _big_value(1 << 20), _big_value(6 << 20), 0)
    args = ["--print-data-log", "--files", str(log)]
    kafka = subprocess.run(
        [str(LAUNCHER), "kafka-dump-log.sh", *args], capture_output=True, timeout=300, check=False
    )
    r = run_kdump("files", *args)
    assert (r.returncode, r.stdout) == (kafka.returncode, kafka.stdout)


def test_a_200_mib_value_is_printed_in_little_memory(tmp_path: Path) -> None:
    """Not a copy of the value, nor its text: the value is read through the map a piece at a time (and the
    batch's CRC too), its pages dropped from the resident set once read."""
    size = 200 << 20
    log = tmp_path / "huge-0" / "00000000000000000000.log"
    log.parent.mkdir()
    body = b"\x00\x00\x00" + b"\x01" + zigzag_varint(size)
    head = zigzag_varint(len(body) + size + 1) + body
    chunk = b"0123456789abcdef" * (1 << 16)
    with open(log, "wb") as f:  # the CRC is not checked by the dump (it is printed), so it is left 0
        records_len = len(head) + size + 1
        f.write(struct.pack(">qiiBIhiqqqhii", 0, 49 + records_len, 0, 2, 0, 0, 0, 7, 7, -1, -1, -1, 1))
        f.write(head)
        for _ in range(size // len(chunk)):
            f.write(chunk)
        f.write(b"\x00")
    out = tmp_path / "out.txt"
    r = subprocess.run(
        [
            sys.executable,
            "-c",
            _MEASURE.replace("stdout=subprocess.DEVNULL", f"stdout=open({str(out)!r}, 'wb')"),
            "files",
            "--print-data-log",
            "--files",
            str(log),
        ],
        capture_output=True,
        text=True,
        check=True,
    )
    peak = int(r.stdout) / 1024
    assert peak < 100, f"peak RSS {peak:.0f} MiB"
    assert out.stat().st_size > size
    with open(out, "rb") as f:
        f.seek(-33, 2)
        assert f.read() == b"0123456789abcdef" * 2 + b"\n"
