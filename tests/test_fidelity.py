"""Kafka 4.0's exact behaviour on malformed input, as rules read from its source (issue 15).

Each rule is checked twice: against text derived here from Kafka's source (small files built in the test, no
Java needed), and against the real ``kafka-dump-log.sh`` when Java and ``../shared/kafka-4.0.0`` are present.
The source lines each rule comes from are cited at the rule (Kafka 4.0 branch).

1. Magic is a signed Java byte: ``FileLogInputStream.nextBatch`` reads ``byte magic`` and takes the legacy class
   for ``magic < 2``, so 0x80-0xff is a *negative* legacy magic.  ``DumpLogSegments.printBatchLevel`` prints
   ``"offset: " + lastOffset`` (the log header's offset, no read) and then dies evaluating ``timestampType``:
   ``FileChannelRecordBatch.loadBatchHeader`` -> ``LegacyRecord.headerSize(magic)`` throws
   ``Invalid magic used in LegacyRecord: -1``.  Index dumps only read ``lastOffset`` (the header's offset);
   the time index iterates the records, which for an uncompressed legacy entry is the entry itself, its
   timestamp read as v1 (``LegacyRecord.timestamp``: magic != 0).
2. ``FileRecords.slice`` -> ``availableBytes`` checks, in order: position < 0 (``Invalid position``), position
   past the end (``Slice from position P exceeds end position of FileRecords(...)``), size < 0
   (``Invalid size``).  ``dumpIndex`` slices at each entry's position with ``--max-message-size``,
   ``dumpTimeIndex`` at the offset index's position for each entry with ``Int.MaxValue``.
3. ``DefaultRecordBatch.RecordIterator.next`` reads the record, then, for the last declared one, checks
   ``ensureNoneRemaining`` *before returning it*; an uncompressed batch that runs out of bytes is a
   ``BufferUnderflowException`` -> ``premature EOF``; a compressed batch is decoded completely before any
   record is returned (``iterator()``), so it prints none of its records.
4. ``DumpLogSegmentsOptions.messageParser`` creates the value decoder, then the key decoder, with
   ``CoreUtils.createObject`` (``Class.forName`` + no-arg constructor + cast) for each log it dumps, after the
   ``Dumping`` line; only the four ``org.apache.kafka.tools.api`` decoders load in 4.0.
"""

from __future__ import annotations

import os
import struct
import subprocess
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import pytest

from kdump.storage import record_batch
from kdump.storage.compression import GZIP, LZ4, NONE, SNAPPY, ZSTD
from tests import builder
from tests.builder import SimpleRecord
from tests.differential.kafka import LAUNCHER, script_unavailable_reason
from tests.replay import run_kdump

REPO = Path(__file__).resolve().parents[1]
LOG = "00000000000000000000.log"
INDEX = "00000000000000000000.index"
TIMEINDEX = "00000000000000000000.timeindex"
INT_MAX = 0x7FFFFFFF


# -- an independent formatter of the tool's lines (DumpLogSegments.printBatchLevel and dumpLog) -------------

_V2 = struct.Struct(">qiibIhiqqqhii")


def v2_batch_line(raw: bytes, position: int) -> str:
    """``printBatchLevel`` for a v2 batch at ``position`` of ``raw`` (magic >= 2, no delete horizon)."""
    (base, length, epoch, magic, crc, attrs, delta, _base_ts, max_ts, pid, pepoch, seq, count) = (
        _V2.unpack_from(raw, position)
    )
    codec = ["none", "gzip", "snappy", "lz4", "zstd"][attrs & 7]
    ts_type = "LogAppendTime" if attrs & 8 else "CreateTime"
    last_seq = -1 if seq == -1 else seq + delta
    return (
        f"baseOffset: {base} lastOffset: {base + delta} count: {count} baseSequence: {seq} lastSequence: {last_seq} "
        f"producerId: {pid} producerEpoch: {pepoch} partitionLeaderEpoch: {epoch} isTransactional: false "
        f"isControl: false deleteHorizonMs: OptionalLong.empty position: {position} {ts_type}: {max_ts} "
        f"size: {length + 12} magic: {magic} compresscodec: {codec} crc: {crc} isvalid: true\n"
    )


def record_line(offset: int, timestamp: int, key: bytes, value: bytes, *, data: bool) -> str:
    line = (
        f"| offset: {offset} CreateTime: {timestamp} keySize: {len(key)} valueSize: {len(value)} sequence: -1 "
        "headerKeys: []"
    )
    if data:
        line += f" key: {key.decode()} payload: {value.decode()}"
    return line + "\n"


def _records(first_offset: int, n: int, ts: int = 1000) -> list[SimpleRecord]:
    return [SimpleRecord(b"v%d" % (first_offset + i), key=b"k", timestamp=ts + i) for i in range(n)]


def _batch(offset: int, n: int = 1, **kwargs: object) -> bytes:
    return builder.build_v2_batch(_records(offset, n, 1000 + offset), base_offset=offset, **kwargs)  # type: ignore[arg-type]


def _offset_index(*entries: tuple[int, int]) -> bytes:
    return b"".join(struct.pack(">ii", relative, position) for relative, position in entries)


def _time_index(*entries: tuple[int, int]) -> bytes:
    return b"".join(struct.pack(">qi", timestamp, relative) for timestamp, relative in entries)


@dataclass
class Case:
    """One run: files to write, arguments, and what Kafka's source says it prints."""

    name: str
    files: dict[str, bytes]
    argv: list[str]  # file names are relative to the case directory and made absolute at run time
    stdout: str  # ``{d}`` stands for the case directory
    status: int
    #: Kafka dies: a fragment of its exception message that kdump's one error line also carries.
    error: str | None = None
    #: Kafka does not die: its stderr (the end-of-run summaries), ``{d}`` for the directory.
    stderr: str = ""


def _dumping(name: str) -> str:
    return "Dumping {d}/" + name + "\n"


# -- rule 1: the magic byte is a signed Java byte ---------------------------------------------------------


def _negative_magic_log(magic_byte: int, *, crc: int | None = None) -> tuple[bytes, bytes, bytes]:
    """A log of a healthy batch (offset 0) and a batch at offset 1 whose magic byte is ``magic_byte``, whose
    v2 lastOffsetDelta (4) would make its last offset 5."""
    first = _batch(0)
    second = bytearray(_batch(1, 5, crc=crc) if crc is not None else _batch(1, 5))
    second[16] = magic_byte
    return first, bytes(second), first + bytes(second)


def magic_cases() -> list[Case]:
    cases = []
    for magic_byte in (0x80, 0xC3, 0xFE, 0xFF):
        first, _second, log = _negative_magic_log(magic_byte)
        java_magic = magic_byte - 256
        for flags in ([], ["--deep-iteration"]):
            head = _dumping(LOG) + "Log starting offset: 0\n" + v2_batch_line(log, 0)
            if flags:
                head += record_line(0, 1000, b"k", b"v0", data=False)
            # printBatchLevel: "offset: " + lastOffset (the header's offset), then timestampType dies
            cases.append(
                Case(
                    f"log-magic-{magic_byte:#x}{'-deep' if flags else ''}",
                    {LOG: log},
                    ["--files", LOG, *flags],
                    head + "offset: 1",
                    1,
                    error=f"Invalid magic used in LegacyRecord: {java_magic}",
                )
            )
    # magic 3..127 is a v2 batch to Kafka (DefaultFileChannelRecordBatch): printed as it is, iterated as v2
    for magic in (3, 0x7F):
        raw = bytearray(_batch(0, 2))
        raw[16] = magic
        log = bytes(raw)
        cases.append(
            Case(
                f"log-magic-{magic}",
                {LOG: log},
                ["--files", LOG, "--print-data-log"],
                _dumping(LOG)
                + "Log starting offset: 0\n"
                + v2_batch_line(log, 0)
                + record_line(0, 1000, b"k", b"v0", data=True)
                + record_line(1, 1001, b"k", b"v1", data=True),
                0,
            )
        )
    # The offset index reads only lastOffset: of a legacy entry, the log header's offset (1), not the v2
    # baseOffset + lastOffsetDelta (5), so the entry matches and there is no mismatch report.
    first, _second, log = _negative_magic_log(0xFF)
    index = _offset_index((0, 0), (1, len(first)))
    cases.append(
        Case(
            "index-magic-0xff",
            {LOG: log, INDEX: index},
            ["--files", INDEX],
            _dumping(INDEX) + f"offset: 0 position: 0\noffset: 1 position: {len(first)}\n",
            0,
        )
    )
    # The time index finds the entry by lastOffset (1) and iterates its records: an uncompressed legacy entry
    # (attributes = the v2 CRC's first byte, 0 here) is its own record, whose timestamp is read as v1's, the
    # long at message byte 6, i.e. at bytes 18..26 of the entry.
    first, second, log = _negative_magic_log(0xFF, crc=0x00123456)
    legacy_timestamp = max(-1, struct.unpack_from(">q", second, 18)[0])  # maxTimestamp starts at -1
    cases.append(
        Case(
            "timeindex-magic-0xff",
            {LOG: log, INDEX: _offset_index((1, len(first))), TIMEINDEX: _time_index((1000, 0), (1234, 1))},
            ["--files", TIMEINDEX],
            _dumping(TIMEINDEX) + "timestamp: 1000 offset: 0\ntimestamp: 1234 offset: 1\n",
            0,
            stderr="Found timestamp mismatch in :{d}/"
            + TIMEINDEX
            + f"\n  Index timestamp: 1234, log timestamp: {legacy_timestamp}\n",
        )
    )
    return cases


# -- rule 2: the preconditions of FileRecords.slice ----------------------------------------------------------


def slice_cases() -> list[Case]:
    batches = [_batch(o) for o in range(3)]
    log = b"".join(batches)
    pos = [0, len(batches[0]), len(batches[0]) + len(batches[1])]
    past = len(log) + 100
    cases = []
    # dumpTimeIndex: index.lookup(offset).position, then fileRecords.slice(position, Int.MaxValue)
    for bad, message in (
        (past, f"Slice from position {past} exceeds end position of"),
        (-8, "Invalid position: -8"),
    ):
        files = {
            LOG: log,
            INDEX: _offset_index((1, pos[1]), (2, bad)),
            TIMEINDEX: _time_index((1001, 1), (1002, 2)),
        }
        cases.append(
            Case(
                f"timeindex-slice-{bad}",
                files,
                ["--files", TIMEINDEX],
                _dumping(TIMEINDEX) + "timestamp: 1001 offset: 1\n",
                1,
                error=message,
            )
        )
        cases.append(
            Case(
                f"timeindex-verify-slice-{bad}",
                files,
                ["--files", TIMEINDEX, "--verify-index-only"],
                _dumping(TIMEINDEX),
                1,
                error=message,
            )
        )
        # dumpIndex: fileRecords.slice(entry.position, maxMessageSize) for each entry
        cases.append(
            Case(
                f"index-slice-{bad}",
                {LOG: log, INDEX: _offset_index((0, 0), (1, pos[1]), (2, bad))},
                ["--files", INDEX],
                _dumping(INDEX) + f"offset: 0 position: 0\noffset: 1 position: {pos[1]}\n",
                1,
                error=message,
            )
        )
    # A position exactly at the end is a valid (empty) slice: the time index reports the offset as not found.
    cases.append(
        Case(
            "timeindex-slice-at-end",
            {
                LOG: log,
                INDEX: _offset_index((1, pos[1]), (2, len(log))),
                TIMEINDEX: _time_index((1001, 1), (1002, 2)),
            },
            ["--files", TIMEINDEX],
            _dumping(TIMEINDEX) + "timestamp: 1001 offset: 1\ntimestamp: 1002 offset: 2\n",
            0,
            stderr="The following indexed offsets are not found in the log.\nIndexed offset: 2, found log offset: -1\n",
        )
    )
    # The position is checked before the size: a negative --max-message-size fails at the first entry, after
    # a position past the end when that comes first.
    cases.append(
        Case(
            "index-slice-negative-size",
            {LOG: log, INDEX: _offset_index((0, 0), (1, pos[1]))},
            ["--files", INDEX, "--max-message-size", "-1"],
            _dumping(INDEX),
            1,
            error="Invalid size: -1",
        )
    )
    cases.append(
        Case(
            "index-slice-position-before-size",
            {LOG: log, INDEX: _offset_index((0, past))},
            ["--files", INDEX, "--max-message-size", "-1"],
            _dumping(INDEX),
            1,
            error=f"Slice from position {past} exceeds end position of",
        )
    )
    return cases


# -- rule 3: the record iterators' order of checks ----------------------------------------------------------


def iterator_cases() -> list[Case]:
    cases = []
    for codec in (NONE, GZIP, SNAPPY, LZ4, ZSTD):
        for declared, message in (
            (2, "Incorrect declared batch size, records still remaining in file"),
            (4, "Incorrect declared batch size, premature EOF reached"),
        ):
            head = _batch(0)
            bad = _batch(1, 3, compression=codec, records_count=declared)
            log = head + bad + _batch(4)
            for flag in ("--deep-iteration", "--print-data-log"):
                data = flag == "--print-data-log"
                out = (
                    _dumping(LOG)
                    + "Log starting offset: 0\n"
                    + v2_batch_line(log, 0)
                    + record_line(0, 1000, b"k", b"v0", data=data)
                    + v2_batch_line(log, len(head))
                )
                if codec == NONE:  # records come one at a time; the last declared one is never returned
                    shown = declared - 1 if declared <= 3 else 3
                    out += "".join(
                        record_line(1 + i, 1001 + i, b"k", b"v%d" % (1 + i), data=data) for i in range(shown)
                    )
                cases.append(
                    Case(
                        f"iterator-codec{codec}-count{declared}{flag[1:3]}",
                        {LOG: log},
                        ["--files", LOG, flag],
                        out,
                        1,
                        error=message,
                    )
                )
    cases += batch_size_cases()
    return cases


def batch_size_cases() -> list[Case]:
    """The batch's size against its records: 3 bytes more (zeros after the records region) or fewer (the
    region cut short) than the 3 declared records take.

    Uncompressed, the records are read from the batch's buffer: bytes left after the last declared record are
    ``records still remaining`` (that record not returned); a record cut short is ``Invalid record size: ...
    the buffer has only N remaining bytes`` (the records before it returned).  Compressed, the whole batch is
    decoded first (no record of it printed when anything fails) through the codec's stream, and bytes after the
    stream's end are the stream's business: Java's ``GZIPInputStream`` ignores trailing bytes that are not a
    gzip header, snappy-java's framing stops at an incomplete chunk header, ``KafkaLZ4BlockInputStream`` stops
    at the end mark, while zstd reads them as the next frame and fails.  A stream cut short fails everywhere.
    """
    cases = []
    for codec in (NONE, GZIP, SNAPPY, LZ4, ZSTD):
        for extra in (3, -3):
            records = builder.encode_v2_records(_records(1, 3, 1001), base_offset=1, base_timestamp=1001)
            if codec != NONE:
                records = builder._compress(codec, records, magic=2)
            payload = records + b"\x00" * extra if extra > 0 else records[:extra]
            head = _batch(0)
            log = head + builder.build_v2_batch(
                _records(1, 3, 1001), base_offset=1, compression=codec, payload=payload
            )
            out = (
                _dumping(LOG)
                + "Log starting offset: 0\n"
                + v2_batch_line(log, 0)
                + record_line(0, 1000, b"k", b"v0", data=False)
                + v2_batch_line(log, len(head))
            )
            tolerated = extra > 0 and codec in (GZIP, SNAPPY, LZ4)
            if codec == NONE or tolerated:
                shown = 3 if tolerated else 2
                out += "".join(
                    record_line(1 + i, 1001 + i, b"k", b"v%d" % (1 + i), data=False) for i in range(shown)
                )
            if codec == NONE:
                error = (
                    "records still remaining"
                    if extra > 0
                    else "Invalid record size: expected 9 bytes in record payload, but instead the buffer has only 6"
                )
            else:
                error = None if tolerated else ""  # the codec stream's own words (Kafka's and kdump's differ)
            cases.append(
                Case(
                    f"batch-size-codec{codec}{extra:+d}",
                    {LOG: log},
                    ["--files", LOG, "--deep-iteration"],
                    out,
                    0 if error is None else 1,
                    error=error,
                )
            )
    return cases


# -- rule 4: decoder classes ----------------------------------------------------------------------------------


STOCK = ("StringDecoder", "IntegerDecoder", "LongDecoder", "DefaultDecoder")


def decoder_cases() -> list[Case]:
    log = _batch(0)
    cases = []
    for bad in (
        "kafka.serializer.StringDecoder",  # named by 4.0's own --help, removed in 4.0: ClassNotFoundException
        "kafka.serializer.DefaultDecoder",
        "java.lang.String",  # loads, no Decoder: ClassCastException
        "org.apache.kafka.tools.api.Decoder",  # the interface: NoSuchMethodException
        "",  # ClassNotFoundException
    ):
        for option in ("--value-decoder-class", "--key-decoder-class"):
            cases.append(
                Case(
                    f"decoder-{option[2:5]}-{bad or 'empty'}",
                    {LOG: log},
                    ["--files", LOG, option, bad],
                    _dumping(LOG),
                    1,
                    error=repr(bad),
                )
            )
    # the value decoder is created first
    cases.append(
        Case(
            "decoder-value-first",
            {LOG: log},
            [
                "--files",
                LOG,
                "--key-decoder-class",
                "kafka.serializer.StringDecoder",
                "--value-decoder-class",
                "x.Y",
            ],
            _dumping(LOG),
            1,
            error="'x.Y'",
        )
    )
    # no parser is created for an index: a bad class does not matter there
    cases.append(
        Case(
            "decoder-not-loaded-for-index",
            {LOG: log, INDEX: _offset_index((0, 0))},
            ["--files", INDEX, "--value-decoder-class", "kafka.serializer.StringDecoder"],
            _dumping(INDEX) + "offset: 0 position: 0\n",
            0,
        )
    )
    # the stock decoders load; StringDecoder prints the text
    cases.append(
        Case(
            "decoder-stock-string",
            {LOG: log},
            ["--files", LOG, "--value-decoder-class", "org.apache.kafka.tools.api.StringDecoder"],
            _dumping(LOG)
            + "Log starting offset: 0\n"
            + v2_batch_line(log, 0)
            + record_line(0, 1000, b"k", b"v0", data=True),
            0,
        )
    )
    return cases


RULES: dict[str, Callable[[], list[Case]]] = {
    "magic": magic_cases,
    "slice": slice_cases,
    "iterator": iterator_cases,
    "decoder": decoder_cases,
}
ALL = [(rule, case) for rule, make in RULES.items() for case in make()]


def _write(case: Case, directory: Path) -> list[str]:
    directory.mkdir(parents=True, exist_ok=True)
    for name, data in case.files.items():
        (directory / name).write_bytes(data)
    return [str(directory / a) if a in case.files else a for a in case.argv]


def _assert_kafka_text(case: Case, directory: Path, code: int, out: bytes, err: bytes) -> None:
    d = str(directory)
    assert out.decode() == case.stdout.format(d=d), case.name
    assert code == case.status, (case.name, err)
    if case.error is None:
        assert err.decode() == case.stderr.format(d=d), case.name
    else:
        line = err.decode()
        assert line.count("\n") == 1 and line.startswith("kdump: "), line
        assert case.error in line, (case.name, line)
        assert "internal error" not in line


@pytest.mark.parametrize(("rule", "case"), ALL, ids=[f"{r}:{c.name}" for r, c in ALL])
def test_rule_from_kafka_source(rule: str, case: Case, tmp_path: Path) -> None:
    argv = _write(case, tmp_path)
    code, out, err = run_kdump(argv)
    _assert_kafka_text(case, tmp_path, code, out, err)


@pytest.mark.parametrize(("rule", "case"), ALL, ids=[f"{r}:{c.name}" for r, c in ALL])
def test_rule_without_the_accelerator(
    rule: str, case: Case, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The pure-Python decoder gives the same text: the C accelerator only declines, never decides."""
    monkeypatch.setattr(record_batch, "ACCELERATOR", None)
    argv = _write(case, tmp_path)
    code, out, err = run_kdump(argv)
    _assert_kafka_text(case, tmp_path, code, out, err)


@pytest.mark.skipif(record_batch.ACCELERATOR is None, reason="the C accelerator is not built")
@pytest.mark.parametrize("declared", [0, 2, 4, -1])
def test_accelerator_declines_miscounted_batches(declared: int) -> None:
    """``read_records`` returns None (hand the batch to the pure-Python decoder) for a declared count that does
    not match the records (0 here stands for the right count, 3)."""
    records = builder.encode_v2_records(_records(0, 3), base_offset=0, base_timestamp=1000)
    args = (0, 1000, -1, None)
    accelerate = record_batch.ACCELERATOR
    assert accelerate is not None
    if declared == 0:
        assert (
            len(accelerate(record_batch.Record, record_batch.Header, records, 0, len(records), 3, *args)) == 3
        )
        return
    assert (
        accelerate(record_batch.Record, record_batch.Header, records, 0, len(records), declared, *args)
        is None
    )


# -- the same runs against the real tool -------------------------------------------------------------------


def _on_the_real_tool(name: str) -> bool:
    """The cases run through the real tool too: one of each kind (a JVM start takes seconds; the Java-free
    tests above run them all)."""
    if name.startswith("log-magic-0x"):
        return name in ("log-magic-0x80", "log-magic-0xff", "log-magic-0xff-deep")
    if name.startswith("iterator-"):
        return name.endswith("-d") and (
            "codec0" in name
            or "codec1" in name
            or name in ("iterator-codec2-count4-d", "iterator-codec3-count2-d", "iterator-codec4-count2-d")
        )
    if name.startswith("batch-size-"):
        return name in (
            "batch-size-codec0+3",
            "batch-size-codec0-3",
            "batch-size-codec1+3",
            "batch-size-codec4+3",
        )
    if name.startswith("decoder-key-"):
        return False
    return name not in ("decoder-val-kafka.serializer.DefaultDecoder", "log-magic-127")


@pytest.mark.skipif(script_unavailable_reason() is not None, reason=str(script_unavailable_reason()))
@pytest.mark.parametrize("rule", list(RULES))
def test_rule_against_the_real_tool(rule: str, tmp_path: Path) -> None:
    """Kafka's own tool prints the text derived from its source, and kdump the same stdout, status and
    summaries; where Kafka dies, its exception carries the message kdump's one line carries."""
    cases = [c for c in RULES[rule]() if _on_the_real_tool(c.name)]
    for i, case in enumerate(cases):
        directory = tmp_path / str(i)
        argv = _write(case, directory)
        env = dict(os.environ, LANG="C.UTF-8")
        kafka = subprocess.run(
            [str(LAUNCHER), "kafka-dump-log.sh", *argv],
            capture_output=True,
            timeout=120,
            env=env,
            check=False,
        )
        d = str(directory)
        assert kafka.stdout.decode() == case.stdout.format(d=d), (case.name, kafka.stderr.decode()[-2000:])
        assert kafka.returncode == case.status, (case.name, kafka.stderr.decode()[-2000:])
        if case.error is None:
            assert kafka.stderr.decode() == case.stderr.format(d=d), case.name
        else:
            first = kafka.stderr.decode().split("\n", 1)[0]
            assert "Exception" in first, (case.name, first)
            if not case.error.startswith("'"):  # kdump quotes the class name; Kafka does not
                assert case.error in first, (case.name, first)
            elif case.error != "''":
                assert case.error.strip("'") in first, (case.name, first)
        code, out, err = run_kdump(argv)
        assert (code, out) == (kafka.returncode, kafka.stdout), case.name
        if case.error is None:
            assert err == kafka.stderr, case.name
