"""The optional C decoder (kdump/_speedups.c) gives exactly the pure-Python decoder's records, and leaves every
malformed batch to the pure-Python decoder (which owns the error messages).

Built with ``pip install -e .`` where a C compiler exists; without one kdump runs on the pure-Python decoder and
these tests are skipped with that reason (the rest of the suite covers the pure-Python path then)."""

from __future__ import annotations

import random
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from kdump.errors import KdumpError
from kdump.storage import record_batch
from kdump.storage.compression import GZIP, LZ4, NONE, SNAPPY, ZSTD, compress
from kdump.storage.file_records import FileRecords
from kdump.storage.record import Header, Record
from tests.builder import SimpleRecord, build_v2_batch, encode_v2_records
from tests.corpus import CORPUS, FIXTURE_CORPUS, corpus_available

pytestmark = pytest.mark.skipif(
    record_batch.ACCELERATOR is None,
    reason="kdump._speedups is not built (no C compiler) or KDUMP_PURE_PYTHON",
)
ROOT = CORPUS if corpus_available() else FIXTURE_CORPUS
CODECS = (NONE, GZIP, SNAPPY, LZ4, ZSTD)
FIELDS = Record.__slots__


def _as_tuple(r: Record) -> tuple:
    return tuple(
        tuple((h.key, h.value) for h in r.headers) if name == "headers" else getattr(r, name)
        for name in FIELDS
    )


def _pure(buf: bytes, pos: int, end: int, count: int, args: tuple, stream: bool) -> list[tuple] | str:
    try:
        return [_as_tuple(r) for r in record_batch._read_records(buf, pos, end, count, *args, stream=stream)]
    except KdumpError as e:
        return f"error: {e.message}"


def _fast(buf: bytes, pos: int, end: int, count: int, args: tuple) -> list[tuple] | None:
    rows = record_batch.ACCELERATOR(Record, Header, buf, pos, end, count, *args)
    return None if rows is None else [_as_tuple(r) for r in rows]


def _check(buf: bytes, pos: int, end: int, count: int, args: tuple, stream: bool = False) -> bool:
    """The accelerator agrees with the pure decoder, or declines; returns whether it decoded."""
    fast = _fast(buf, pos, end, count, args)
    pure = _pure(buf, pos, end, count, args, stream)
    if fast is None:
        return False
    assert fast == pure
    return True


def _batch_args(batch) -> tuple:  # noqa: ANN001
    log_append_time = batch.max_timestamp if batch.attributes & 0x08 else None
    return (batch.base_offset, batch.base_timestamp, batch.base_sequence, log_append_time)


def test_every_corpus_batch_decodes_identically() -> None:
    decoded = 0
    for path in sorted(ROOT.rglob("*.log")) + sorted(ROOT.rglob("*.checkpoint")):
        try:
            with FileRecords(str(path)) as records:
                for batch in records.batches():
                    if batch.magic != 2 or batch.is_compressed or batch.records_count < 0:
                        continue
                    start = batch.position + record_batch.RECORD_BATCH_OVERHEAD
                    end = batch.position + batch.size_in_bytes
                    buf = bytes(records.buf[: records.file_size])
                    decoded += _check(buf, start, end, batch.records_count, _batch_args(batch))
        except KdumpError:
            continue
    assert decoded > (1000 if corpus_available() else 100)  # the bundled subset holds ~150 such batches


records_strategy = st.lists(
    st.builds(
        SimpleRecord,
        value=st.one_of(st.none(), st.binary(max_size=40)),
        key=st.one_of(st.none(), st.binary(max_size=20)),
        headers=st.lists(
            st.tuples(st.binary(max_size=8), st.one_of(st.none(), st.binary(max_size=8))), max_size=3
        ).map(tuple),
        timestamp=st.integers(-1, 2**41),
    ),
    min_size=1,
    max_size=8,
)


@settings(max_examples=300, deadline=None)
@given(
    records=records_strategy,
    base_offset=st.integers(0, 2**62),
    base_sequence=st.integers(-1, 2**31 - 1),
    append_time=st.one_of(st.none(), st.integers(0, 2**41)),
)
def test_random_batches(records, base_offset, base_sequence, append_time) -> None:  # noqa: ANN001
    data = build_v2_batch(
        records, base_offset=base_offset, base_sequence=base_sequence, log_append_time=append_time
    )
    batch = next(FileRecords.from_bytes(data).batches())
    start = record_batch.RECORD_BATCH_OVERHEAD
    args = _batch_args(batch)
    wraps = base_sequence >= 0 and base_sequence + len(records) - 1 > 2**31 - 1
    assert _check(data, start, len(data), batch.records_count, args) != wraps  # declines only to wrap


def test_damaged_batches_are_left_to_the_pure_decoder() -> None:
    rng = random.Random(7)
    records = [
        SimpleRecord(b"value-%d" % i, b"k%d" % i, headers=(("h", b"v"),), timestamp=1000 + i)
        for i in range(6)
    ]
    data = build_v2_batch(records, base_offset=100, base_sequence=5)
    start = record_batch.RECORD_BATCH_OVERHEAD
    declined = 0
    for _ in range(3000):
        raw = bytearray(data)
        for _ in range(rng.randint(1, 3)):
            raw[rng.randrange(start, len(raw))] = rng.randrange(256)
        end = len(raw) - rng.choice((0, 0, 0, 1, 5))
        count = rng.choice((6, 6, 6, 5, 7, 0))
        if not _check(bytes(raw), start, end, count, (100, 1000, 5, None), stream=rng.random() < 0.5):
            declined += 1
    assert declined > 100


def test_pure_python_switch(tmp_path: Path) -> None:
    import subprocess
    import sys

    code = "from kdump.storage import record_batch; print(record_batch.ACCELERATOR is None)"
    env = {"KDUMP_PURE_PYTHON": "1", "PATH": "/usr/bin:/bin"}
    out = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "True"


# -- batch_lines: the shallow walk's batch lines -------------------------------------------------------------


def _shallow_text(records: FileRecords, fast: bool, monkeypatch: pytest.MonkeyPatch) -> str:
    """Kafka's shallow batch lines of ``records`` (and the error that stops the walk), through the C lines of
    plain batches when ``fast``, else every batch through kafka_text (the pure-Python path)."""
    from kdump.render import kafka_text

    with monkeypatch.context() as m:
        if not fast:
            m.setattr(record_batch, "BATCH_LINES", None)
        parts: list[str] = []
        try:
            for batch in records.batches(lines=lambda text, _next: parts.append(text)):
                parts.append(kafka_text.batch_line_head(batch))
                parts.append(kafka_text.batch_line_tail(batch, batch.position))
        except KdumpError as e:
            parts.append(f"error: {e.message} at {e.position}")
        return "".join(parts)


def test_every_corpus_segment_has_the_same_shallow_lines(monkeypatch: pytest.MonkeyPatch) -> None:
    compared = 0
    for path in sorted(ROOT.rglob("*.log")) + sorted(ROOT.rglob("*.checkpoint")):
        try:
            with FileRecords(str(path)) as records:
                fast = _shallow_text(records, True, monkeypatch)
                assert fast == _shallow_text(records, False, monkeypatch), path
        except KdumpError:
            continue
        compared += fast.count("\n")
    assert compared > (1000 if corpus_available() else 100)


int16 = st.integers(-(2**15), 2**15 - 1)
int32 = st.integers(-(2**31), 2**31 - 1)
int64 = st.integers(-(2**63), 2**63 - 1)

batch_strategy = st.fixed_dictionaries(
    {
        "records": st.lists(st.builds(SimpleRecord, value=st.binary(max_size=30)), max_size=3),
        "base_offset": int64,
        "producer_id": int64,
        "producer_epoch": int16,
        "base_sequence": st.one_of(st.just(-1), int32, st.integers(2**31 - 5, 2**31 - 1)),
        "partition_leader_epoch": int32,
        "records_count": st.one_of(st.none(), int32),
        "last_offset_delta": st.one_of(st.none(), int32),
        "base_timestamp": st.one_of(st.none(), int64),
        "max_timestamp": st.one_of(st.none(), int64),
        "attributes": st.one_of(st.none(), int16, st.integers(0, 0x7F)),
        "crc": st.one_of(st.none(), st.none(), st.integers(0, 2**32 - 1)),
    }
)


@settings(max_examples=150, deadline=None)
@given(
    batches=st.lists(batch_strategy, min_size=1, max_size=5),
    damage=st.lists(st.tuples(st.integers(0, 10**4), st.integers(0, 255)), max_size=3),
    cut=st.integers(0, 80),
)
def test_random_batch_headers_have_the_same_shallow_lines(batches, damage, cut) -> None:  # noqa: ANN001
    """Every header field at its extremes (Java int/long wrap-around, sequences that wrap, unknown codecs,
    wrong CRCs, flags), bytes changed anywhere (sizes, magic) and a cut end: the C lines agree with Kafka's
    text made by kafka_text, batch for batch, and the walk stops with the same error."""
    data = bytearray(b"".join(build_v2_batch(**fields) for fields in batches))
    for at, byte in damage:
        if data:
            data[at % len(data)] = byte
    data = data[: max(0, len(data) - cut)]
    records = FileRecords.from_bytes(bytes(data))
    monkeypatch = pytest.MonkeyPatch()
    try:
        assert _shallow_text(records, True, monkeypatch) == _shallow_text(records, False, monkeypatch)
    finally:
        monkeypatch.undo()


def test_batch_lines_declines_what_it_does_not_render() -> None:
    """A legacy entry, a batch with an unknown codec, a batch past the end: None (the caller frames it)."""
    plain = build_v2_batch([SimpleRecord(b"v")])
    lines = record_batch.record_batch_lines()
    assert lines is not None
    text, end = lines(plain, 0, len(plain), len(plain)) or ("", 0)
    assert end == len(plain) and text.startswith("baseOffset: 0 lastOffset: 0 count: 1 ")
    assert lines(plain, 0, len(plain) - 1, len(plain)) is None
    assert lines(build_v2_batch([SimpleRecord(b"v")], attributes=5), 0, len(plain), len(plain)) is None
    legacy = bytearray(plain)
    legacy[16] = 1
    assert lines(bytes(legacy), 0, len(plain), len(plain)) is None


# -- record_lines: a deep walk's record lines -----------------------------------------------------------------


def _python_record_lines(batch, print_contents: bool) -> str | None:  # noqa: ANN001
    """The record lines kafka_text's fused renderer gives (None: it raises, as Kafka's tool would die)."""
    from kdump.render import kafka_text
    from kdump.render.decoders import DecoderMessageParser, _string

    render = kafka_text.record_renderer(batch, print_contents, False, DecoderMessageParser(_string, _string))
    try:
        return "".join(render(r) for r in batch.records())
    except (KdumpError, kafka_text.PartialLineError):
        return None


def _c_record_lines(batch, print_contents: bool) -> tuple[str, int, int] | None:  # noqa: ANN001
    """The C record lines, checked against their pure-Python twin (kafka_text.record_lines): the same text,
    and the same batches declined."""
    from kdump.render import kafka_text

    assert record_batch.RECORD_LINES is not None
    fast = _record_lines(record_batch.RECORD_LINES, batch, print_contents)
    assert _record_lines(kafka_text.record_lines, batch, print_contents) == fast
    return fast


def _record_lines(function, batch, print_contents: bool) -> tuple[str, int, int] | None:  # noqa: ANN001
    """``function``'s lines of ``batch`` as kdump files takes them: an uncompressed batch's records where they
    lie, a compressed batch's decompressed stream (kafka_text.batch_record_lines)."""
    from kdump.facts.files import STREAM_LINES
    from kdump.render import kafka_text

    return kafka_text.batch_record_lines(batch, function, print_contents, STREAM_LINES)


def _check_record_lines(data: bytes) -> bool:
    """The C record lines of the first batch of ``data`` (any codec) are the Python renderer's, or it
    declines."""
    try:
        batch = next(FileRecords.from_bytes(data).batches())
    except (KdumpError, StopIteration):
        return False
    if batch.magic != 2 or batch.attributes & 0x20 or batch.records_count <= 0:
        return False
    accepted = False
    for print_contents in (False, True):
        fast = _c_record_lines(batch, print_contents)
        if fast is None:
            continue
        text, first, last = fast
        assert text == _python_record_lines(batch, print_contents)
        offsets = [r.offset for r in batch.records()]
        assert (first, last) == (offsets[0], offsets[-1]) and offsets == list(range(first, last + 1))
        accepted = True
    return accepted


text_bytes = st.one_of(
    st.none(),
    st.binary(max_size=12),
    st.text(max_size=8).map(lambda t: t.encode("utf-8", "surrogatepass")),
)


@settings(max_examples=200, deadline=None)
@given(
    records=st.lists(
        st.builds(
            SimpleRecord,
            value=text_bytes,
            key=text_bytes,
            headers=st.lists(
                st.tuples(st.text(max_size=6).map(lambda t: t.encode("utf-8", "surrogatepass")), text_bytes),
                max_size=3,
            ).map(tuple),
            timestamp=st.integers(-1, 2**41),
        ),
        min_size=1,
        max_size=6,
    ),
    base_offset=st.integers(0, 2**63 - 10),
    base_sequence=st.one_of(st.just(-1), st.integers(0, 2**31 - 1)),
    append_time=st.one_of(st.none(), st.integers(0, 2**41)),
    damage=st.lists(st.tuples(st.integers(61, 10**4), st.integers(0, 255)), max_size=2),
    codec=st.sampled_from(CODECS),
)
def test_random_record_lines(records, base_offset, base_sequence, append_time, damage, codec) -> None:  # noqa: ANN001
    """Keys, values and header keys of any bytes (invalid UTF-8 and encoded surrogates are declined), offsets
    and sequences near their ends, every codec, changed bytes (in a compressed batch: in its compressed
    stream): the C lines are the Python renderer's, or it declines."""
    data = bytearray(
        build_v2_batch(
            records,
            base_offset=base_offset,
            base_sequence=base_sequence,
            log_append_time=append_time,
            compression=codec,
        )
    )
    for at, byte in damage:
        data[61 + at % (len(data) - 61)] = byte
    _check_record_lines(bytes(data))


def test_record_lines_of_the_corpus() -> None:
    accepted = 0
    codecs: set[str] = set()
    for path in sorted(ROOT.rglob("*.log")):
        try:
            with FileRecords(str(path)) as records:
                for batch in records.batches():
                    if batch.magic == 2 and not batch.attributes & 0x20 and batch.records_count > 0:
                        taken = _check_record_lines(
                            bytes(records.buf[batch.position : batch.position + batch.size_in_bytes])
                        )
                        accepted += taken
                        if taken and batch.is_compressed:
                            codecs.add(batch.compression_name)
        except KdumpError:
            continue
    assert accepted > (1000 if corpus_available() else 50)
    assert codecs == {"gzip", "snappy", "lz4", "zstd"}  # the corpus's few compressed batches (~30) included


def test_record_lines_decline_a_gap_and_invalid_utf8() -> None:
    assert _check_record_lines(build_v2_batch([SimpleRecord(b"a", headers=(("h", b"v"), ("\u00e9", None)))]))
    gap = build_v2_batch([SimpleRecord(b"a"), SimpleRecord(b"b", offset=5)])
    assert _c_record_lines(next(FileRecords.from_bytes(gap).batches()), False) is None  # OffsetGaps notes it
    bad = build_v2_batch([SimpleRecord(b"\xff")])
    batch = next(FileRecords.from_bytes(bad).batches())
    assert _c_record_lines(batch, True) is None  # Java's replacement characters: the Python renderer's
    assert _c_record_lines(batch, False) is not None  # the value is not printed


def _random_value(rng: random.Random) -> bytes | None:
    kind = rng.random()
    if kind < 0.1:
        return None
    if kind < 0.102:
        return b"\xff\xfe" + bytes(rng.randrange(256) for _ in range(rng.randrange(4)))  # invalid UTF-8
    if kind < 0.15:
        return "\u00e9\u4e2d\U0001f600".encode()
    return bytes(rng.randrange(32, 127) for _ in range(rng.randrange(40)))


def _random_segment(rng: random.Random) -> bytes:
    """One to four v2 batches, each of any codec, some with a gap, an invalid UTF-8 text, a control flag, a
    changed byte in the (compressed) records, a compressed stream cut short inside its batch or a size field
    that disagrees with the records; the file itself sometimes cut anywhere."""
    out = bytearray()
    offset = rng.randrange(2**40)
    for _ in range(rng.randint(1, 4)):
        codec = rng.choice(CODECS)
        records = []
        for i in range(rng.randint(1, 40)):
            gap = 2 if i and rng.random() < 0.03 else 0
            offset += 1 + gap
            headers = tuple((f"h{k}", _random_value(rng)) for k in range(rng.choice((0, 0, 0, 1, 3))))
            records.append(
                SimpleRecord(
                    _random_value(rng), _random_value(rng), headers, 1_700_000_000_000 + i, offset=offset
                )
            )
        base = records[0].offset or 0
        fields = {"base_offset": base, "compression": codec, "base_sequence": rng.choice((-1, 0, 2**31 - 3))}
        damage = rng.random()
        if damage < 0.1 and codec != NONE:  # the compressed stream cut short, the batch's size saying so
            payload = compress(
                codec, encode_v2_records(records, base_offset=base, base_timestamp=1_700_000_000_000)
            )
            batch = build_v2_batch(records, payload=payload[: rng.randrange(len(payload))], **fields)
        elif damage < 0.15:
            batch = build_v2_batch(records, records_count=len(records) + rng.choice((-1, 1)), **fields)
        else:
            batch = build_v2_batch(records, is_control=rng.random() < 0.03, **fields)
        batch = bytearray(batch)
        if (
            0.15 <= damage < 0.35
        ):  # a changed byte in the records (the compressed stream of a compressed batch)
            batch[rng.randrange(61, len(batch))] = rng.randrange(256)
        out += batch
        offset += rng.choice((0, 0, 5))
    if rng.random() < 0.15:
        del out[rng.randrange(len(out)) :]
    return bytes(out)


@pytest.mark.parametrize("lines", ["c", "python"])
def test_whole_batch_lines_are_the_record_by_record_text(
    lines: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """``kdump files --deep-iteration [--print-data-log]`` on segments of batches of every codec, damaged and
    cut (:func:`_random_segment`): the whole-batch lines (the C accelerator's, or their pure-Python twin's, from
    the records of an uncompressed batch or the decompressed stream of a compressed one) give the same
    standard output, standard error and exit status as the record-by-record renderer."""
    from kdump.render import kafka_text
    from tests.replay import run_kdump

    monkeypatch.setenv("KDUMP_WORKERS", "1")
    taken = {"compressed": 0, "plain": 0}
    whole = kafka_text.batch_record_lines

    def counted(batch, *args):  # noqa: ANN001, ANN002, ANN202
        run = whole(batch, *args)
        if run is not None:
            taken["compressed" if batch.is_compressed else "plain"] += 1
        return run

    rng = random.Random(2711)
    segment = tmp_path / "00000000000000000000.log"
    for _ in range(80):
        segment.write_bytes(_random_segment(rng))
        for argv in (["--deep-iteration"], ["--print-data-log"]):
            with monkeypatch.context() as m:
                if lines == "python":
                    m.setattr(record_batch, "RECORD_LINES", None)
                m.setattr(kafka_text, "batch_record_lines", counted)
                fast = run_kdump(["--files", str(segment), *argv])
            with monkeypatch.context() as m:
                m.setattr(kafka_text, "batch_record_lines", lambda *_: None)
                slow = run_kdump(["--files", str(segment), *argv])
            assert fast == slow, (segment.read_bytes().hex(), argv)
    assert taken["compressed"] > 60 and taken["plain"] > 10


def test_every_accelerator_loads_where_one_does() -> None:
    """The three C modules are built by one compiler from one header (_batch_walk.h): where _speedups loads, a
    failure of _columns or _digests to load is a broken build (an undefined symbol after a header change, a stale
    REVISION), which would otherwise only show as their tests being skipped and Spark/retention running slower."""
    import importlib

    for name in ("kdump._columns", "kdump._digests"):
        importlib.import_module(name)  # ImportError (e.g. an undefined symbol) fails here
    pytest.importorskip("pyarrow")  # the Spark extra
    from kdump.spark import reader

    columns = importlib.import_module("kdump._columns")
    assert columns.REVISION == reader.COLUMNS_REVISION, "a stale build: pip install -e . rebuilds it"
    assert reader.BUILDER is not None
