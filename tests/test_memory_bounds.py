"""Memory that stays flat whatever a batch holds (issue 13): records of many headers keep them encoded
(``LazyHeaders``) and print Kafka's text; JSON and Spark stop at a documented bound with one clear line.

The hostile batches are encoded here by hand (independently of kdump's builder), and the expected text is
spelt out from what was encoded; where the Kafka tool is present, it is the oracle too."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from kdump.storage import record_batch
from kdump.storage.compression import NONE, ZSTD
from kdump.storage.record import MAX_EAGER_HEADERS, MAX_OBJECT_HEADERS, Header, LazyHeaders
from tests.differential.kafka import LAUNCHER, script_unavailable_reason
from tests.hostile_batches import record, run_kdump, v2_batch, zigzag_varint

REPO = Path(__file__).resolve().parents[1]
_varint = zigzag_varint


def _batch(records: bytes, count: int, codec: int = NONE) -> bytes:
    return v2_batch(records, count, codec)


def _record(headers: list[tuple[bytes, bytes | None]], *, raw_headers: bytes | None = None) -> bytes:
    """One record (key and value null) with ``headers``; ``raw_headers`` replaces their encoding."""
    if raw_headers is None:
        raw_headers = _varint(len(headers)) + b"".join(
            _varint(len(k)) + k + (_varint(-1) if v is None else _varint(len(v)) + v) for k, v in headers
        )
    return record(0, _varint(-1) + _varint(-1) + raw_headers)


def _keys(n: int) -> list[bytes]:
    """Keys of every kind the text must get right: ASCII, multi-byte UTF-8, invalid UTF-8, empty."""
    kinds = [b"trace-id", "clé-€".encode(), b"\xff\xfe", b""]
    return [kinds[i % 4] + str(i).encode() if i % 4 != 3 else b"" for i in range(n)]


def _java_text(key: bytes) -> str:
    return key.decode("utf-8", errors="replace")  # U+FFFD per bad byte here, as Java does for these bytes


@pytest.mark.parametrize("pure", [False, True], ids=["accelerator", "pure-python"])
def test_a_record_of_many_headers_prints_every_key(tmp_path: Path, pure: bool) -> None:
    n = MAX_EAGER_HEADERS * 2 + 3
    keys = _keys(n)
    log = tmp_path / "00000000000000000000.log"
    log.write_bytes(_batch(_record([(k, None if i % 3 else b"v") for i, k in enumerate(keys)]), 1, ZSTD))
    r = run_kdump("files", "--deep-iteration", "--files", str(log), pure=pure)
    assert r.returncode == 0, r.stderr
    record_line = r.stdout.decode().splitlines()[-1]
    expected = "headerKeys: [" + ",".join(_java_text(k) for k in keys) + "]"
    assert record_line.endswith(expected)
    assert record_line.startswith("| offset: 0 CreateTime: 7 keySize: -1 valueSize: -1 sequence: -1 ")


def test_lazy_headers_behave_as_the_tuple_they_stand_for() -> None:
    headers = [(b"a", b"1"), (b"", None), ("é".encode(), b"")] * 2000
    encoded = b"".join(
        _varint(len(k)) + k + (_varint(-1) if v is None else _varint(len(v)) + v) for k, v in headers
    )
    lazy = LazyHeaders(encoded, 0, len(encoded), len(headers))
    eager = tuple(Header(k, v) for k, v in headers)
    assert len(lazy) == len(eager) and bool(lazy)
    assert lazy == eager and list(lazy) == list(eager)
    assert lazy[0] == eager[0] and lazy[-1] == eager[-1] and lazy[4001] == eager[4001]
    assert list(lazy.keys()) == [k for k, _ in headers]
    with pytest.raises(IndexError):
        lazy[len(headers)]


def test_the_decoder_keeps_many_headers_encoded() -> None:
    n = MAX_EAGER_HEADERS + 1
    raw = _record([(b"k", None)] * n)
    (record,) = record_batch._read_records(raw, 0, len(raw), 1, 0, 0, -1, None, stream=False)
    assert isinstance(record.headers, LazyHeaders) and len(record.headers) == n
    few = _record([(b"k", None)] * 3)
    (record,) = record_batch._read_records(few, 0, len(few), 1, 0, 0, -1, None, stream=False)
    assert isinstance(record.headers, tuple)


@pytest.mark.parametrize("bad", ["negative-key-size", "truncated"])
def test_bad_headers_past_the_eager_bound_give_the_eager_paths_error(tmp_path: Path, bad: str) -> None:
    """The lazy path checks the headers as the eager one does: same error, same place, for 5 or 5,000 headers."""
    outputs = []
    for n in (5, MAX_EAGER_HEADERS + 5):
        good = b"".join(_varint(1) + b"k" + _varint(-1) for _ in range(n - 1))
        last = _varint(-2) + b"k" + _varint(-1) if bad == "negative-key-size" else _varint(5) + b"k"
        record = _record([], raw_headers=_varint(n) + good + last)
        log = tmp_path / f"{n}" / "00000000000000000000.log"
        log.parent.mkdir()
        log.write_bytes(_batch(record, 1))
        r = run_kdump("files", "--deep-iteration", "--files", str(log), pure=True)
        # the batch line differs (size, CRC); what follows it must not
        outputs.append((r.returncode, r.stdout.count(b"\n"), r.stderr.replace(str(log).encode(), b"F")))
    assert outputs[0] == outputs[1]
    assert outputs[0][0] == 1
    word = (
        b"Invalid negative header key size -2"
        if bad == "negative-key-size"
        else b"Found invalid record structure"
    )
    assert word in outputs[0][2]


def test_json_stops_at_the_documented_bound_with_one_line(tmp_path: Path) -> None:
    n = MAX_OBJECT_HEADERS + 1
    log = tmp_path / "00000000000000000000.log"
    log.write_bytes(_batch(_record([(b"h", None)] * n), 1, ZSTD))
    r = run_kdump("files", "--json", "--deep-iteration", "--files", str(log))
    assert r.returncode == 1
    err = r.stderr.decode().splitlines()
    assert len(err) == 1 and f"has {n} headers, more than the {MAX_OBJECT_HEADERS}" in err[0]
    objects = [json.loads(line) for line in r.stdout.decode().splitlines()]
    assert objects[-1]["type"] == "error"


def test_a_million_headers_stay_flat(tmp_path: Path) -> None:
    """Peak RSS of the child well under issue 13's 150 MiB for a million headers (a few KB of zstd)."""
    n = 1_000_000
    log = tmp_path / "00000000000000000000.log"
    log.write_bytes(_batch(_record([(b"h", None)] * n), 1, ZSTD))
    assert log.stat().st_size < 10_000
    out = tmp_path / "out.txt"
    # a fresh parent whose only child is kdump: RUSAGE_CHILDREN's ru_maxrss is then kdump's peak
    measure = (
        "import resource, subprocess, sys\n"
        f"with open({str(out)!r}, 'wb') as f:\n"
        f"    code = subprocess.run([sys.executable, '-m', 'kdump', 'files', '--deep-iteration', '--files', "
        f"{str(log)!r}], stdout=f).returncode\n"
        "print(code, resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss)\n"
    )
    code, peak_kib = map(
        int,
        subprocess.run(
            [sys.executable, "-c", measure], capture_output=True, text=True, check=True
        ).stdout.split(),
    )
    assert code == 0
    assert peak_kib < 64 * 1024, f"peak RSS {peak_kib} KiB"  # one object per header took 87 MiB
    data = out.read_bytes()
    assert data.endswith(b"headerKeys: [" + b",".join([b"h"] * n) + b"]\n")


@pytest.mark.skipif(script_unavailable_reason() is not None, reason=str(script_unavailable_reason()))
def test_many_headers_print_what_the_real_tool_prints(tmp_path: Path) -> None:
    n = 50_000
    log = tmp_path / "00000000000000000000.log"
    log.write_bytes(_batch(_record([(k, None) for k in _keys(n)]), 1, ZSTD))
    args = ["--deep-iteration", "--print-data-log", "--files", str(log)]
    kafka = subprocess.run(
        [str(LAUNCHER), "kafka-dump-log.sh", *args], capture_output=True, timeout=300, check=False
    )
    r = run_kdump("files", *args)
    assert (r.returncode, r.stdout) == (kafka.returncode, kafka.stdout)
