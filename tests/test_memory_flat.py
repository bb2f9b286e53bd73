"""Memory that stays flat on small files that expand into millions of things (issue 27): the runs happen in child
processes under an address-space limit, and their output is checked against what the test built (independently
of kdump: the batches are encoded by ``tests/hostile_batches``, the expected lines spelt out from the offsets,
headers and values encoded).  The full-size cases, with their numbers, are in ``bench/memory_bench.py``."""

from __future__ import annotations

import json
import os
import struct
import subprocess
import sys
import zlib
from pathlib import Path

import pytest

from kdump.analysis.pair_list import PairList
from kdump.storage.compression import GZIP, ZSTD, compress
from tests.hostile_batches import record, v2_batch, zigzag_varint

REPO = Path(__file__).resolve().parents[1]
MIB = 1 << 20

#: Runs kdump under an address-space limit from a parent that holds nothing, so that RUSAGE_CHILDREN's
#: ru_maxrss is kdump's own peak; prints the exit status and that peak (KiB).
_CHILD = """
import resource, subprocess, sys
limit = int(sys.argv[1])
def cap():
    resource.setrlimit(resource.RLIMIT_AS, (limit, limit))
with open(sys.argv[2], "wb") as out, open(sys.argv[3], "wb") as err:
    code = subprocess.run([sys.executable, "-m", "kdump", *sys.argv[4:]], stdout=out, stderr=err,
                          preexec_fn=cap).returncode
print(code, resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss)
"""


def run_limited(
    tmp_path: Path, *args: str, limit: int = 512 * MIB, env: dict[str, str] | None = None
) -> tuple[int, float, bytes, bytes]:
    """kdump ``args`` under an address-space ``limit``: exit status, peak RSS (MiB), stdout, stderr."""
    out, err = tmp_path / "stdout", tmp_path / "stderr"
    done = subprocess.run(
        [sys.executable, "-c", _CHILD, str(limit), str(out), str(err), *args],
        capture_output=True,
        text=True,
        check=True,
        cwd=REPO,
        env={**os.environ, **(env or {})},
        timeout=120,
    )
    code, peak_kib = map(int, done.stdout.split())
    return code, peak_kib / 1024, out.read_bytes(), err.read_bytes()


def _empty_record(offset_delta: int) -> bytes:
    return record(offset_delta, b"\x01\x01\x00")  # key null, value null, no headers


def _segment(tmp_path: Path, data: bytes, name: str = "gaps-0") -> Path:
    log = tmp_path / name / "00000000000000000000.log"
    log.parent.mkdir()
    log.write_bytes(data)
    return log


def _gaps(offsets: list[int]) -> list[tuple[int, int]]:
    """Kafka's non-consecutive pairs of ``offsets`` (DumpLogSegments: ``offset != lastOffset + 1``), newest
    first, as it prepends each pair to its list."""
    pairs = [(a, b) for a, b in zip(offsets, offsets[1:], strict=False) if b != a + 1]
    return pairs[::-1]


# -- non-consecutive offsets: kept on disk past a bound, printed as Kafka prints them -----------------------------


def _scrambled(tmp_path: Path) -> tuple[Path, list[int]]:
    """Three batches of 2,000 records whose offset deltas jump about: thousands of distinct gaps."""
    deltas = [(i * 7919) % 1000 for i in range(2000)]
    records = b"".join(_empty_record(d) for d in deltas)
    data = b"".join(v2_batch(records, len(deltas), ZSTD, base_offset=base) for base in (0, 5000, 10000))
    return _segment(tmp_path, data), [base + d for base in (0, 5000, 10000) for d in deltas]


@pytest.mark.parametrize("spill", ["1", "100", None], ids=["spill-each", "spill-100", "in-memory"])
@pytest.mark.parametrize("parallel", [False, True], ids=["sequential", "chunks"])
def test_gaps_come_out_newest_first_whether_spilled_or_not(
    tmp_path: Path, spill: str | None, parallel: bool
) -> None:
    log, offsets = _scrambled(tmp_path)
    env = {} if spill is None else {"KDUMP_SPILL_PAIRS": spill}
    if parallel:  # every batch a chunk of its own, rendered by forked workers (their gaps travel by pickle)
        env |= {"KDUMP_PARALLEL_MIN_BYTES": "0", "KDUMP_CHUNK_BYTES": "1", "KDUMP_WORKERS": "2"}
    code, _, out, err = run_limited(tmp_path, "files", "--deep-iteration", "--files", str(log), env=env)
    assert code == 0
    expected = f"Non-consecutive offsets in {log}\n" + "".join(
        f"  {a} is followed by {b}\n" for a, b in _gaps(offsets)
    )
    assert len(expected.splitlines()) > 5000
    assert err.decode() == expected
    assert out.count(b"\n| offset: ") == len(offsets)


def test_json_gaps_are_the_same_list(tmp_path: Path) -> None:
    log, offsets = _scrambled(tmp_path)
    code, _, out, err = run_limited(
        tmp_path, "files", "--json", "--deep-iteration", "--files", str(log), env={"KDUMP_SPILL_PAIRS": "64"}
    )
    assert code == 0 and err == b""
    objects = [json.loads(line) for line in out.splitlines()]
    found = [(o["offset"], o["nextOffset"]) for o in objects if o["type"] == "nonConsecutiveOffsets"]
    assert found == _gaps(offsets)
    assert {o["file"] for o in objects if o["type"] == "nonConsecutiveOffsets"} == {str(log)}


@pytest.mark.parametrize(
    ("json_lines", "n"), [(False, 400_000), (True, 200_000)], ids=["text", "json-print-data-log"]
)
def test_a_batch_of_records_at_one_offset_stays_flat(tmp_path: Path, json_lines: bool, n: int) -> None:
    """One zstd batch of records whose offsets do not advance: a gap per record (a few KB on disk).  Each gap
    held in memory took ~100 bytes, and JSON's summary another line each (92 MiB / 141 MiB peak here before,
    51 / 48 MiB now)."""
    log = _segment(tmp_path, v2_batch(_empty_record(0) * n, n, ZSTD))
    assert log.stat().st_size < 2000
    args = ["files", "--deep-iteration", "--files", str(log)]
    if json_lines:
        args += ["--json", "--print-data-log"]
    code, peak, out, err = run_limited(tmp_path, *args)
    assert code == 0, err[-300:]
    assert peak < 72, f"peak RSS {peak:.0f} MiB"
    if json_lines:
        assert err == b""
        gap = json.dumps({"type": "nonConsecutiveOffsets", "file": str(log), "offset": 0, "nextOffset": 0})
        lines = out.splitlines()
        assert lines[-(n - 1) :] == [gap.replace(" ", "").encode()] * (n - 1)
        assert lines[-n].startswith(b'{"type":"record"')
    else:
        assert err == f"Non-consecutive offsets in {log}\n".encode() + b"  0 is followed by 0\n" * (n - 1)


def test_a_legacy_wrapper_of_messages_at_one_offset_stays_flat(tmp_path: Path) -> None:
    """A v0 gzip wrapper of inner messages all at offset 0 (Kafka's v0 inner offsets are absolute): 28 MiB
    peak here, 53 MiB when each gap was held in memory."""
    n = 200_000
    body = b"\x00\x00" + b"\xff\xff\xff\xff" * 2  # magic 0, attributes 0, key null, value null
    message = struct.pack(">I", zlib.crc32(body)) + body
    value = compress(GZIP, (struct.pack(">qi", 0, len(message)) + message) * n, magic=0)
    wrapper_body = b"\x00\x01" + b"\xff\xff\xff\xff" + struct.pack(">i", len(value)) + value
    wrapper = struct.pack(">I", zlib.crc32(wrapper_body)) + wrapper_body
    log = _segment(tmp_path, struct.pack(">qi", 0, len(wrapper)) + wrapper, "legacy-0")
    code, peak, out, err = run_limited(
        tmp_path, "files", "--deep-iteration", "--files", str(log), env={"KDUMP_SPILL_PAIRS": "4096"}
    )
    assert code == 0, err[-300:]
    line = (
        f"| offset: 0 NoTimestampType: -1 keySize: -1 valueSize: -1 isValid: true crc: {zlib.crc32(body)}}}\n"
    )
    assert out.endswith(line.encode() * n)
    assert err == f"Non-consecutive offsets in {log}\n".encode() + b"  0 is followed by 0\n" * (n - 1)
    assert peak < 40, f"peak RSS {peak:.0f} MiB"  # 53 MiB when each gap was held in memory


def test_a_pair_list_keeps_its_order_across_the_file(monkeypatch: pytest.MonkeyPatch) -> None:
    import pickle

    from kdump.analysis import pair_list

    monkeypatch.setattr(pair_list, "SPILL_PAIRS", 10)
    monkeypatch.setattr(pair_list, "_READ_PAIRS", 7)
    pairs = [(i, -i * 2**40) for i in range(95)]
    a = PairList(pairs[:50])
    assert len(a.tail) < 10 and len(a) == 50
    b = PairList(pairs[50:])
    a.extend(b)
    assert list(a) == pairs and list(a.newest_first()) == pairs[::-1]
    copy = pickle.loads(pickle.dumps(a))
    assert list(copy.newest_first()) == pairs[::-1] and len(copy) == 95
    empty = PairList()
    assert not empty and list(empty.newest_first()) == []


# -- records of many headers: the line is written in pieces, whatever prints it ------------------------------------


def _many_headers(n: int) -> tuple[bytes, str, str]:
    """A record (key ``K``, value ``val``) of ``n`` headers of every kind of key, some values null: its encoding,
    and the ``headerKeys``/``headerValues`` lists as Java prints them (U+FFFD for a bad byte)."""
    keys = [[b"", b"k", "é".encode(), b"\xff"][i % 4] for i in range(n)]
    values = [None if i % 3 == 0 else b"v\xff" for i in range(n)]
    encoded = b"".join(
        zigzag_varint(len(k)) + k + (zigzag_varint(-1) if v is None else zigzag_varint(len(v)) + v)
        for k, v in zip(keys, values, strict=True)
    )
    tail = b"\x02K\x06val" + zigzag_varint(n) + encoded
    key_text = "[" + ",".join(k.decode("utf-8", "replace") for k in keys) + "]"
    value_text = "[" + ",".join("null" if v is None else "v\ufffd" for v in values) + "]"
    return record(0, tail), key_text, value_text


@pytest.mark.parametrize(
    "options",
    [
        ["--deep-iteration"],
        ["--print-data-log"],
        ["--print-data-log", "--print-header-values"],
        ["--deep-iteration", "--print-header-values"],
        ["--print-data-log", "--skip-record-metadata"],
    ],
    ids=["deep", "print", "print-header-values", "deep-header-values", "skip-metadata"],
)
def test_a_record_of_many_headers_is_one_line_of_kafkas_text(tmp_path: Path, options: list[str]) -> None:
    rec, keys, values = _many_headers(9000)
    log = _segment(tmp_path, v2_batch(rec, 1, ZSTD), "headers-0")
    code, _, out, err = run_limited(tmp_path, "files", *options, "--files", str(log))
    assert code == 0 and err == b""
    line = out.decode().splitlines()[-1]
    if "--skip-record-metadata" in options:
        assert line == "| key: K payload: val"
        return
    expected = f"| offset: 0 CreateTime: 7 keySize: 1 valueSize: 3 sequence: -1 headerKeys: {keys}"
    if "--print-header-values" in options:
        expected += f" headerValues: {values}"
    if "--print-data-log" in options:
        expected += " key: K payload: val"
    assert line == expected


def test_find_prints_a_record_of_many_headers(tmp_path: Path) -> None:
    rec, keys, _ = _many_headers(9000)
    log = _segment(tmp_path, v2_batch(rec, 1, ZSTD), "headers-0")
    code, _, out, err = run_limited(tmp_path, "find", str(log.parent), "--offset", "0", "--print-data-log")
    assert code == 0, err
    expected = f"| offset: 0 CreateTime: 7 keySize: 1 valueSize: 3 sequence: -1 headerKeys: {keys} key: K payload: val"
    assert expected in out.decode().splitlines()


def test_millions_of_header_values_stay_flat(tmp_path: Path) -> None:
    """``--print-header-values`` of 2M headers (empty key, null value: two bytes each, a few KB of zstd): the
    line was built whole, in several copies (60 MiB peak here before, 28 MiB now; 10M: 229 MiB before)."""
    n = 2_000_000
    tail = (
        b"\x01\x01" + zigzag_varint(n) + b"\x00\x01" * n
    )  # key and value null; n headers: empty key, null value
    log = _segment(tmp_path, v2_batch(record(0, tail), 1, ZSTD), "headers-0")
    assert log.stat().st_size < 10_000
    code, peak, out, err = run_limited(
        tmp_path, "files", "--deep-iteration", "--print-header-values", "--files", str(log)
    )
    assert code == 0, err
    expected = "headerKeys: [" + "," * (n - 1) + "] headerValues: [" + ",".join(["null"] * n) + "]\n"
    assert out.endswith(expected.encode())
    assert peak < 40, f"peak RSS {peak:.0f} MiB"


# -- retention's census of the keys of a compacted partition ----------------------------------------------------


def _compacted(tmp_path: Path, n: int, distinct: int) -> tuple[Path, dict[str, int]]:
    """A partition of ``n`` keyed records over ``distinct`` keys (every 7th record a tombstone), in zstd batches
    of 1,000 over two segments; the compaction figures expected, counted here from what was written."""
    part = tmp_path / "compacted-0"
    part.mkdir()
    latest: dict[bytes, bool] = {}
    tombstones = 0
    segments: list[list[bytes]] = [[], []]
    for start in range(0, n, 1000):
        count = min(1000, n - start)
        records = []
        for i in range(start, start + count):
            key = b"key-%d" % ((i * 7919) % distinct)
            tomb = i % 7 == 3
            tombstones += tomb
            latest[key] = tomb
            value = b"\x01" if tomb else b"\x02v"  # null, or one byte
            records.append(record(i - start, zigzag_varint(len(key)) + key + value + b"\x00"))
        batch = v2_batch(b"".join(records), count, ZSTD, base_offset=start)
        segments[start >= n // 2].append(batch)
    (part / "00000000000000000000.log").write_bytes(b"".join(segments[0]))
    second = (n // 2 + 999) // 1000 * 1000
    (part / f"{second:020d}.log").write_bytes(b"".join(segments[1]))
    expected = {
        "records": n,
        "distinctKeys": len(latest),
        "superseded": n - len(latest),
        "tombstones": tombstones,
        "liveTombstones": sum(latest.values()),
    }
    return part, expected


def _compaction(out: bytes) -> dict[str, int]:
    [obj] = [json.loads(line) for line in out.splitlines()]
    c = obj["compaction"]
    return {k: c[k] for k in ("records", "distinctKeys", "superseded", "tombstones", "liveTombstones")}


@pytest.mark.parametrize("budget", ["3000", None], ids=["spilled", "in-memory"])
def test_retention_counts_the_keys_exactly_spilled_or_not(tmp_path: Path, budget: str | None) -> None:
    part, expected = _compacted(tmp_path, 20_000, 6_000)
    env = {} if budget is None else {"KDUMP_KEY_BUDGET": budget}
    code, _, out, err = run_limited(
        tmp_path, "retention", "--json", "--config", "cleanup.policy=compact", str(part), env=env
    )
    assert code == 0, err
    assert _compaction(out) == expected


def test_retention_of_many_keys_stays_flat(tmp_path: Path) -> None:
    """400k distinct keys, a dict entry each before (67 MiB peak here); past a 4 MiB budget they go to disk."""
    part, expected = _compacted(tmp_path, 400_000, 400_000)
    code, peak, out, err = run_limited(
        tmp_path,
        "retention", "--json", "--config", "cleanup.policy=compact", str(part),
        env={"KDUMP_KEY_BUDGET": str(4 << 20)},
    )  # fmt: skip
    assert code == 0, err
    assert _compaction(out) == expected
    assert peak < 50, f"peak RSS {peak:.0f} MiB"


def test_a_key_census_splits_a_bucket_that_does_not_fit(monkeypatch: pytest.MonkeyPatch) -> None:
    from kdump.commands import key_census

    monkeypatch.setattr(key_census, "BUCKETS", 4)
    monkeypatch.setattr(key_census, "BUDGET_BYTES", 2000)
    census = key_census.KeyCensus()
    reference: dict[bytes, bool] = {}
    held = 0
    for i in range(5000):
        key = b"%d" % ((i * 31) % 1700)
        tomb = i % 5 == 0
        reference[key] = tomb
        census.parts[hash(key) & census.mask][key] = tomb
        held += len(key) + key_census.ENTRY_BYTES
        if held > key_census.BUDGET_BYTES:
            census.spill()
            held = 0
    assert census.counts() == (len(reference), sum(reference.values()))


# -- a record too big for a window of its decompressed batch ----------------------------------------------------


def _mixed_bytes(n: int, seed: int) -> bytes:
    """``n`` bytes of runs of ASCII, multi-byte characters, encoded surrogates, stray continuation and lead
    bytes, quotes, backslashes, NULs and newlines: every way a piece boundary of the text can go wrong."""
    import random

    rnd = random.Random(seed)
    atoms = [b"a", b" ", b"\xc3\xa9", b"\xe2\x82\xac", b"\xf0\x9f\x98\x80", b"\xed\xa0\x80", b"\xff", b"\x80"]
    atoms += [b"\xc3", b"\n", b'"', b"\\", b"\x00"]
    out = bytearray()
    while len(out) < n:
        out += rnd.choice(atoms) * rnd.randint(1, 4000)
    return bytes(out[:n])


def _big_records_batch(key: bytes, value: bytes) -> tuple[bytes, list[tuple[bytes | None, bytes | None]]]:
    """A zstd batch of small records around one of ``key`` and ``value`` and a second big one (9 MiB): its
    decompressed records are past the 16 MiB window, the big ones past the 8 MiB a window holds."""
    kvs: list[tuple[bytes | None, bytes | None]] = [
        (b"small", b"before"),
        (key, value),
        (None, b"after"),
        (b"k", _mixed_bytes(9 * MIB, 3)),
        (b"z", None),
    ]

    def field(data: bytes | None) -> bytes:
        return b"\x01" if data is None else zigzag_varint(len(data)) + data

    records = b"".join(record(i, field(k) + field(v) + b"\x02\x02h\x02v") for i, (k, v) in enumerate(kvs))
    return v2_batch(records, len(kvs), ZSTD), kvs


@pytest.mark.parametrize("json_lines", [False, True], ids=["text", "json"])
def test_a_big_record_of_a_compressed_batch_streams(tmp_path: Path, json_lines: bool) -> None:
    """A 32 MiB value in a zstd batch: the window grew to hold it, twice, and its text was one string (424 MiB
    peak here before, 53 MiB now; one of 200 MiB: 1,030 MiB).  Now it goes through a temporary file, its text
    written a piece at a time; the lines are what the test spells out of the values it wrote."""
    value = ('é€😀"\\\n\x00a' * (32 * MIB // 14)).encode()
    data, kvs = _big_records_batch(b"key", value)
    log = _segment(tmp_path, data, "big-0")
    assert log.stat().st_size < 12 * MIB
    args = ["files", "--print-data-log", "--files", str(log)] + (["--json"] if json_lines else [])
    code, peak, out, err = run_limited(tmp_path, *args)
    assert code == 0 and err == b"", err
    assert peak < 80, f"peak RSS {peak:.0f} MiB"
    if json_lines:
        objects = [json.loads(line) for line in out.splitlines() if line.startswith(b'{"type":"record"')]
        assert [(o["key"], o["payload"]) for o in objects[:3]] == [
            ("small", "before"),
            ("key", value.decode()),
            (None, "after"),
        ]
        assert "payloadEncoding" not in objects[1] and objects[1]["valueSize"] == len(value)
        assert [o["offset"] for o in objects] == [0, 1, 2, 3, 4]
    else:
        lines = out.split(b"\n| offset: ")[1:]
        assert len(lines) == 5
        head = f"1 CreateTime: 7 keySize: 3 valueSize: {len(value)} sequence: -1 headerKeys: [h] key: key payload: "
        # the value's own newlines are written as they are, as Kafka writes them
        assert lines[1] == head.encode() + value
        assert (
            lines[2]
            == b"2 CreateTime: 7 keySize: -1 valueSize: 5 sequence: -1 headerKeys: [h] payload: after"
        )


def test_a_big_record_of_mixed_bytes_is_written_as_json_strings_or_base64(tmp_path: Path) -> None:
    """Keys and values handed out as views are written a piece at a time: the JSON is what ``json`` makes of the
    whole value (text when it is valid UTF-8, base64 otherwise), piece boundaries anywhere."""
    import base64

    key = _mixed_bytes(2 * MIB, 2)
    value = _mixed_bytes(12 * MIB, 1)
    data, kvs = _big_records_batch(key, value)
    log = _segment(tmp_path, data, "big-0")
    code, peak, out, err = run_limited(tmp_path, "files", "--print-data-log", "--json", "--files", str(log))
    assert code == 0 and err == b"", err
    objects = [json.loads(line) for line in out.splitlines() if line.startswith(b'{"type":"record"')]
    assert len(objects) == len(kvs)
    for o, (k, v) in zip(objects, kvs, strict=True):
        for name, data in (("key", k), ("payload", v)):
            try:
                shown = None if data is None else data.decode("utf-8")
            except UnicodeDecodeError:
                shown = base64.b64encode(data).decode("ascii")
                assert o[name + "Encoding"] == "base64"
            assert o[name] == shown


@pytest.mark.kafka
def test_a_big_record_of_mixed_bytes_is_kafkas_text(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The real 4.0 tool on a 12 MiB value (and a 2 MiB key, and a 9 MiB value) of mixed bytes in one zstd
    batch, written through the temporary file a piece at a time: the same bytes, replacement characters and
    all."""
    from tests.differential.kafka import run_script, unavailable_reason

    reason = unavailable_reason()
    if reason is not None:
        pytest.skip(f"the real tool cannot run: {reason}")
    data, _ = _big_records_batch(_mixed_bytes(2 * MIB, 2), _mixed_bytes(12 * MIB, 1))
    log = _segment(tmp_path, data, "big-0")
    monkeypatch.setenv("KAFKA_HEAP_OPTS", "-Xmx1g")
    kafka = run_script(["--print-data-log", "--files", str(log)], tmp_path, timeout=300)
    assert kafka.code == 0, kafka.err[-500:]
    code, _, out, err = run_limited(tmp_path, "files", "--print-data-log", "--files", str(log))
    assert (code, out, err) == (kafka.code, kafka.out, kafka.err)
