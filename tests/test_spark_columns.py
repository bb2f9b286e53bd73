"""The C column builder of the Spark source (``kdump/_columns.c``) gives exactly the Arrow batches of the
pure-Python builder (records decoded by the storage core, gathered in lists): on the fixture corpus with every
read option that changes the rows, on hand-encoded hostile batches (lying counts and sizes, varints that never
end, invalid UTF-8 header keys, 64-bit overflow, too many headers, bad compressed streams), with output batches
cut inside Kafka batches, and on randomly damaged records (fixed seed).  The pure-Python builder itself is
checked against the storage core's decode and spark-sql-kafka's rows by test_spark_storage and test_spark."""

from __future__ import annotations

import dataclasses
import json
import random
import struct
from pathlib import Path
from typing import Any

import pytest

from kdump.storage.checksum import crc32c
from kdump.storage.compression import GZIP, NONE, ZSTD, compress
from tests.hostile_batches import zigzag_varint as zz
from tests.spark_oracle import FIXTURE_TREES

pa = pytest.importorskip("pyarrow")

from kdump.spark import reader  # noqa: E402
from kdump.spark.options import parse_options  # noqa: E402
from kdump.spark.planning import plan  # noqa: E402

needs_builder = pytest.mark.skipif(
    reader.BUILDER is None, reason="kdump._columns is not built (no C compiler) or KDUMP_PURE_PYTHON"
)
pytestmark = needs_builder

_HEADER = struct.Struct(">qiiBIhiqqqhii")
LOG_APPEND_TIME = 0x08
TRANSACTIONAL = 0x10
CONTROL = 0x20


def encode_batch(
    records: bytes,
    count: int,
    *,
    codec: int = NONE,
    attributes: int = 0,
    base_offset: int = 0,
    base_timestamp: int = 1_700_000_000_000,
    max_timestamp: int | None = None,
    producer_id: int = -1,
    base_sequence: int = -1,
    last_offset_delta: int | None = None,
    payload: bytes | None = None,
) -> bytes:
    """A v2 batch around encoded ``records`` (compressed with ``codec``; ``payload``: these bytes instead),
    CRC-32C set."""
    if payload is None:
        payload = compress(codec, records, magic=2) if codec != NONE else records
    header = bytearray(
        _HEADER.pack(
            base_offset,
            49 + len(payload),
            3,
            2,
            0,
            codec | attributes,
            count - 1 if last_offset_delta is None else last_offset_delta,
            base_timestamp,
            base_timestamp if max_timestamp is None else max_timestamp,
            producer_id,
            0 if producer_id >= 0 else -1,
            base_sequence,
            count,
        )
    )
    body = bytes(header[21:]) + payload
    struct.pack_into(">I", header, 17, crc32c(body))
    return bytes(header[:21]) + body


def blob(data: bytes | None) -> bytes:
    return zz(-1) if data is None else zz(len(data)) + data


def record(
    offset_delta: int,
    key: bytes | None = b"k",
    value: bytes | None = b"v",
    headers: list[tuple[bytes, bytes | None]] | tuple = (),
    *,
    timestamp_delta: int = 0,
    tail: bytes | None = None,
) -> bytes:
    """One record (attributes 0); ``tail`` replaces the key, value and headers when given."""
    if tail is None:
        tail = (
            blob(key)
            + blob(value)
            + zz(len(headers))
            + b"".join(zz(len(k)) + k + blob(v) for k, v in headers)
        )
    body = b"\x00" + zz(timestamp_delta) + zz(offset_delta) + tail
    return zz(len(body)) + body


def good(n: int, start: int = 0, headers: bool = True) -> bytes:
    out = b""
    for i in range(n):
        h = [(b"h%d" % j, None if j % 3 == 2 else b"x" * j) for j in range(i % 4)] if headers else []
        key = None if i % 5 == 4 else b"key-%d" % (start + i)
        value = None if i % 7 == 6 else b"value-%d" % (start + i) * (i % 3)
        out += record(i, key, value, h, timestamp_delta=i * 3)
    return out


def write_partition(tmp_path: Path, batches: list[bytes], name: str = "topic-0") -> Path:
    directory = tmp_path / name
    directory.mkdir(parents=True, exist_ok=True)
    (directory / "00000000000000000000.log").write_bytes(b"".join(batches))
    return directory


def read_both(
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
    options: dict[str, str],
    split_change: dict[str, Any] | None = None,
) -> tuple[list, list]:
    """The Arrow batches and reports of every split, with the C builder and with the pure-Python builder."""
    selection = parse_options(options)
    splits = plan(selection).splits
    if split_change:
        splits = [dataclasses.replace(s, **split_change) for s in splits]
    out = []
    for builder in (reader.BUILDER, None):
        monkeypatch.setattr(reader, "BUILDER", builder)
        capsys.readouterr()
        batches = [b for split in splits for b in reader.read_split(split, selection.read)]
        out.append((batches, capsys.readouterr().err))
    monkeypatch.undo()
    return out[0], out[1]


def assert_same(c: tuple[list, str], py: tuple[list, str]) -> None:
    c_batches, c_reports = c
    py_batches, py_reports = py
    assert c_reports == py_reports
    assert [b.num_rows for b in c_batches] == [b.num_rows for b in py_batches]
    for got, want in zip(c_batches, py_batches, strict=True):
        assert got.schema == want.schema
        for name in want.schema.names:
            assert got.column(name).equals(want.column(name)), name
        got.validate(full=True)


def test_fixture_corpus_every_row_option(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    variants = [
        {},
        {"includeHeaders": "true"},
        {"includeControlRecords": "true", "includeHeaders": "true"},
        {"isolation.level": "read_committed"},
        {"rowsPerBatch": "37", "includeHeaders": "true"},
    ]
    rows = 0
    for extra in variants:
        c, py = read_both(monkeypatch, capsys, {"paths": json.dumps(FIXTURE_TREES), **extra})
        assert_same(c, py)
        rows += sum(b.num_rows for b in c[0])
    assert rows > 5000


UTF8_KEYS = [
    b"plain",
    b"caf\xc3\xa9",
    b"\xf0\x9f\x98\x80",
    b"\xff",
    b"\xed\xa0\x80\xed\xb0\x80",  # an encoded surrogate pair: one U+FFFD for the JDK
    b"\xc0\x80",  # overlong
    b"\xe2\x82",  # truncated
    b"\xf4\x90\x80\x80",  # past U+10FFFF
    b"a\x80b",
    b"",
]

BIG = (1 << 63) - 3


def hostile_cases(codec: int) -> dict[str, list[bytes]]:
    b = lambda records, count, **kw: encode_batch(records, count, codec=codec, **kw)  # noqa: E731
    ok = good(6)
    cases = {
        "good": [b(ok, 6), b(good(9, 6), 9, base_offset=6)],
        "utf8 header keys": [b(record(0, headers=[(k, b"v") for k in UTF8_KEYS]), 1)],
        "negative sizes are null": [b(record(0, tail=zz(-5) + zz(-2) + zz(1) + zz(1) + b"h" + zz(-9)), 1)],
        "count too high": [b(ok, 8), b(good(2), 2, base_offset=9)],
        "count too low": [b(ok, 4), b(good(2), 2, base_offset=9)],
        "count negative": [b(ok, -1), b(good(2), 2, base_offset=9)],
        "varint never ends": [b(ok + b"\xff" * 12, 7)],
        "key past the record": [b(good(2) + record(2, tail=zz(100) + b"abc"), 3)],
        "header count huge": [b(record(0, tail=blob(b"k") + blob(b"v") + zz(1 << 28)), 1)],
        "negative header key": [b(record(0, tail=blob(b"k") + blob(b"v") + zz(1) + zz(-1) + zz(-1)), 1)],
        "record of size 0": [b(zz(0) + ok, 7)],
        "bytes left in a record": [
            b(good(1) + zz(9) + b"\x00\x00\x02" + blob(b"k") + blob(b"v") + zz(0) + b"??", 2)
        ],
        "non-canonical varints": [b(record(0, tail=b"\x86\x80\x80\x80\x00abc" + blob(b"v") + zz(0)), 1)],
        "timestamp wraps": [
            b(good(3), 3, base_timestamp=BIG) + b"",
            b(record(0, timestamp_delta=9), 1, base_timestamp=BIG),
        ],
        "offset wraps": [b(good(4), 4, base_offset=BIG)],
        "log append time": [b(ok, 6, attributes=LOG_APPEND_TIME, max_timestamp=1_800_000_000_000)],
        "transactional": [b(ok, 6, attributes=TRANSACTIONAL, producer_id=7, base_sequence=(1 << 31) - 3)],
        "negative deltas": [
            b(record(-3) + record(-1, timestamp_delta=-5), 2, base_offset=10, last_offset_delta=0)
        ],
        "too many headers": [
            b(record(0, tail=blob(b"k") + blob(b"v") + zz(100_001) + (zz(0) + zz(-1)) * 100_001), 1),
            b(good(2), 2, base_offset=1),
        ],
    }
    damaged = bytearray(b(good(3), 3, base_offset=3))
    damaged[-2] ^= 0x40  # its CRC no longer matches: reported and skipped (kept with corruptBatches=keep)
    cases["crc mismatch inside a run"] = [b(good(3), 3), bytes(damaged), b(good(3), 3, base_offset=6)]
    if codec == ZSTD:
        frame = compress(ZSTD, ok)
        z = lambda payload: encode_batch(b"", 6, codec=ZSTD, payload=payload)  # noqa: E731
        cut = len(good(3))  # good(6) starts with good(3)
        cases["zstd: two frames"] = [z(compress(ZSTD, ok[:cut]) + compress(ZSTD, ok[cut:]))]
        cases["zstd: truncated frame"] = [z(frame[:-3]), b(good(2), 2, base_offset=6)]
        cases["zstd: bytes after the frame"] = [z(frame + b"junk")]
        cases["zstd: skippable frame first"] = [z(struct.pack("<II", 0x184D2A50, 3) + b"abc" + frame)]
        cases["zstd: empty payload"] = [z(b"")]
        cases["zstd: over 16 MiB decompressed"] = [
            b(b"".join(record(i, b"k", bytes([65 + i]) * (1 << 20)) for i in range(17)), 17)
        ]
    if codec != NONE:
        bad = bytearray(b(ok, 6))
        bad[70:90] = b"\x00" * 20
        payload = bytes(bad[21:])
        struct.pack_into(">I", bad, 17, crc32c(payload))
        cases["bad stream"] = [bytes(bad), b(good(2), 2, base_offset=6)]
    else:
        unknown = bytearray(b(ok, 6))
        struct.pack_into(">h", unknown, 21, 6)
        struct.pack_into(">I", unknown, 17, crc32c(bytes(unknown[21:])))
        cases["unknown codec"] = [bytes(unknown)]
    return cases


@pytest.mark.parametrize("codec", [NONE, GZIP, ZSTD], ids=["none", "gzip", "zstd"])
@pytest.mark.parametrize("headers", [False, True], ids=["plain", "headers"])
def test_hostile_batches(
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
    codec: int,
    headers: bool,
) -> None:
    for name, batches in hostile_cases(codec).items():
        directory = write_partition(tmp_path / name.replace(" ", "-"), batches)
        options = {"path": str(directory), "includeHeaders": str(headers).lower(), "rowsPerBatch": "4"}
        c, py = read_both(monkeypatch, capsys, options)
        assert_same(c, py)
        if name == "good":
            assert sum(x.num_rows for x in c[0]) == 15
        if name == "too many headers":
            assert ("more than the 100000" in c[1]) == headers


@pytest.mark.parametrize("codec", [NONE, ZSTD], ids=["none", "zstd"])
def test_output_batches_cut_inside_kafka_batches(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str], codec: int
) -> None:
    """Rows and bytes per output batch are bounded inside a Kafka batch too; a batch that does not decode
    gives no row even when it is bigger than an output batch, and the offset range cuts inside batches."""
    batches = [
        encode_batch(good(50), 50, codec=codec),
        encode_batch(good(20, 50) + record(20, tail=zz(99)), 21, codec=codec, base_offset=50),
        encode_batch(good(30, 71), 30, codec=codec, base_offset=71, producer_id=3, base_sequence=5),
    ]
    directory = write_partition(tmp_path, batches)
    for rows, budget, check_first in ((7, 64 << 20, 8 << 20), (1000, 300, 8 << 20), (7, 64 << 20, 0)):
        monkeypatch.setattr(reader, "_BYTES_PER_BATCH", budget)
        monkeypatch.setattr(reader, "_CHECK_FIRST_BYTES", check_first)
        options = {"path": str(directory), "includeHeaders": "true", "rowsPerBatch": str(rows)}
        for change in (None, {"start_offset": 13, "end_offset": 90}, {"start_offset": 77}):
            c, py = read_both(monkeypatch, capsys, options, change)
            monkeypatch.setattr(reader, "_BYTES_PER_BATCH", budget)
            monkeypatch.setattr(reader, "_CHECK_FIRST_BYTES", check_first)
            assert_same(c, py)
            offsets = [o for x in c[0] for o in x.column("offset").to_pylist()]
            lo, hi = (change or {}).get("start_offset", 0), (change or {}).get("end_offset", 101)
            assert offsets == [o for o in [*range(50), *range(71, 101)] if lo <= o < hi]
            assert ("decode" in c[1]) == (lo <= 70)
            assert all(x.num_rows <= rows for x in c[0])


@pytest.mark.parametrize("codec", [NONE, GZIP], ids=["none", "gzip"])
def test_randomly_damaged_records(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str], codec: int
) -> None:
    """Bytes of the records changed at random (the CRC recomputed, so that the records are decoded): both
    builders keep and skip the same batches and give the same rows (seed 20261126)."""
    rng = random.Random(20261126 + codec)
    plain = good(12)
    batches = []
    for i in range(150):
        damaged = bytearray(plain)
        for _ in range(rng.randint(1, 4)):
            at = rng.randrange(len(damaged))
            damaged[at] = rng.choice([0x00, 0x01, 0x7F, 0x80, 0xFF, rng.randrange(256)])
        batches.append(encode_batch(bytes(damaged), 12, codec=codec, base_offset=12 * i))
    directory = write_partition(tmp_path, batches)
    options = {"path": str(directory), "includeHeaders": "true", "rowsPerBatch": "25"}
    c, py = read_both(monkeypatch, capsys, options)
    assert_same(c, py)
    kept = sum(x.num_rows for x in c[0])
    assert 0 < kept < 12 * 150


def test_a_broken_buffer_of_the_c_builder_never_reaches_spark(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """kdump.spark.session turns Arrow Java's bounds checks off, so the reader validates what the C builder
    wrote before handing it on: a value offset past the data (a builder bug, simulated by breaking the
    builder's output; pyarrow's from_buffers checks only the last offset) fails the task with pyarrow's error
    instead of letting the JVM read past the buffer."""
    directory = write_partition(tmp_path, [encode_batch(good(20), 20)])
    selection = parse_options({"path": str(directory), "includeHeaders": "true"})
    (split,) = plan(selection).splits
    assert sum(b.num_rows for b in reader.read_split(split, selection.read)) == 20
    real = reader.BUILDER

    class Broken:
        def __init__(self, *args: Any) -> None:
            self.inner = real(*args)

        def __getattr__(self, name: str) -> Any:
            return getattr(self.inner, name)

        def finish(self) -> tuple:
            n, offsets, timestamps, keys, values, *rest = self.inner.finish()
            valid, nulls, value_offsets, data = values
            broken = bytearray(value_offsets)
            struct.pack_into("<i", broken, 4, len(data) + 1000)  # the first row ends past the data
            return (n, offsets, timestamps, keys, (valid, nulls, bytes(broken), data), *rest)

    monkeypatch.setattr(reader, "BUILDER", Broken)
    with pytest.raises(pa.ArrowInvalid):
        list(reader.read_split(split, selection.read))


def test_runs_of_batches_are_appended_in_c(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """The reader hands runs of batches to ``Builder.append_run`` (FileRecords.batches' ``runs``): of 200 plain
    and zstd batches, only those that end a run (an output batch full, a transactional one under
    read_committed, a control batch, the offset range's ends) are yielded one by one, and the rows are the
    pure-Python builder's."""
    from kdump.storage.file_records import FileRecords

    batches = []
    offsets: list[int] = []  # of the data records
    commit = record(0, struct.pack(">hh", 0, 1), struct.pack(">hi", 0, 0))  # a COMMIT marker
    for i in range(200):
        codec = ZSTD if i % 2 else NONE
        base = len(offsets) + len(batches) - i
        if i % 50 == 7:  # a committed transaction: its batch, then its marker
            txn = {"attributes": TRANSACTIONAL, "producer_id": 9}
            batches.append(encode_batch(good(10, base), 10, codec=codec, base_offset=base, **txn))
            marker = {"attributes": TRANSACTIONAL | CONTROL, "producer_id": 9}
            batches.append(encode_batch(commit, 1, base_offset=base + 10, **marker))
        else:
            batches.append(encode_batch(good(10, base), 10, codec=codec, base_offset=base))
        offsets += range(base, base + 10)
    directory = write_partition(tmp_path, batches)
    yielded = []
    original = FileRecords.batches

    def counting(self, *args, **kwargs):  # noqa: ANN001, ANN002, ANN003, ANN202
        for batch in original(self, *args, **kwargs):
            yielded.append(batch.position)
            yield batch

    # 4 markers; read_committed: and the 4 transactional batches and the first batch; a full output batch
    cases = (({}, 4), ({"isolation.level": "read_committed"}, 9), ({"rowsPerBatch": "95"}, 4 + 2000 // 95))
    for extra, most in cases:
        options = {"path": str(directory), "includeHeaders": "true", **extra}
        for change in (None, {"start_offset": 15, "end_offset": 1905}):
            c, py = read_both(monkeypatch, capsys, options, change)
            assert_same(c, py)
            lo, hi = (15, 1905) if change else (0, 1 << 62)
            assert [o for x in c[0] for o in x.column("offset").to_pylist()] == [
                o for o in offsets if lo <= o < hi
            ]
            selection = parse_options(options)
            (split,) = plan(selection).splits
            split = dataclasses.replace(split, **(change or {}))
            yielded.clear()
            with monkeypatch.context() as m:
                m.setattr(FileRecords, "batches", counting)
                rows = sum(x.num_rows for x in reader.read_split(split, selection.read))
            assert rows == sum(x.num_rows for x in c[0])
            # the first batches (before the start offset) and the one at the end offset are Python's too
            assert len(yielded) <= most + (3 if change else 0), (extra, change, yielded)
