"""Producer-state snapshot reader (kdump.storage.producer_snapshot): Kafka 4.0's exact validation order and
messages, the firstSequence wrap rule, round trips, random bytes and the real tool's output in the corpus."""

from __future__ import annotations

import struct
import time
from pathlib import Path

import crc32c
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from kdump.errors import CorruptSnapshotError
from kdump.storage.producer_snapshot import (
    ProducerSnapshotEntry,
    decrement_sequence,
    encode_producer_snapshot,
    parse_producer_snapshot,
    read_producer_snapshot,
)
from tests.corpus import CORPUS

FIXTURES = Path(__file__).resolve().parent / "fixtures" / "corpus"

SPEC_VECTOR = bytes.fromhex(
    "000199010138000000010000000000000fa00003000000090000000000000013000000090000018bcfe5680000000005"
    "ffffffffffffffff"
)
INT32_MAX = 2**31 - 1


def snapshot_line(entry: ProducerSnapshotEntry) -> str:
    """The line DumpLogSegments (Scala, 3.5+) prints per entry, trailing space included when there is no
    batch metadata."""
    txn = (
        "OptionalLong.empty" if entry.txn_first_offset is None else f"OptionalLong[{entry.txn_first_offset}]"
    )
    line = (
        f"producerId: {entry.producer_id} producerEpoch: {entry.producer_epoch} "
        f"coordinatorEpoch: {entry.coordinator_epoch} currentTxnFirstOffset: {txn} "
        f"lastTimestamp: {entry.last_timestamp} "
    )
    if entry.has_batch_metadata:
        line += (
            f"firstSequence: {entry.first_sequence} lastSequence: {entry.last_sequence} "
            f"lastOffset: {entry.last_offset} offsetDelta: {entry.offset_delta} timestamp: {entry.timestamp}"
        )
    return line


def snapshot_runs(root: Path) -> list[dict]:
    runs = []
    for line in (root / "MANIFEST.tsv").read_text(encoding="utf-8").splitlines()[1:]:
        tool, code, stdout, stderr, command = line.split("\t")
        words = command.split()
        if (
            len(words) == 3
            and words[1] == "--files"
            and words[2].endswith(".snapshot")
            and "," not in words[2]
        ):
            runs.append(
                {
                    "tool": tool,
                    "exit": code,
                    "stdout": stdout,
                    "stderr": stderr,
                    "file": words[2],
                    "root": root,
                }
            )
    return runs


def run_params() -> list:
    params = [pytest.param(run, id=f"fixtures:{run['stdout']}") for run in snapshot_runs(FIXTURES)]
    if CORPUS.is_dir():
        params += [pytest.param(run, id=f"corpus:{run['stdout']}") for run in snapshot_runs(CORPUS)]
    else:
        params.append(pytest.param(None, marks=pytest.mark.skip(reason=f"corpus not found at {CORPUS}")))
    return params


# ---------------------------------------------------------------------------------------------------------------


@pytest.mark.corpus
@pytest.mark.parametrize("run", run_params())
def test_snapshot_matches_tool(run):
    """Entry lines equal the tool's stdout; a CorruptSnapshotException message equals its stderr."""
    assert run["exit"] == "0"
    stdout = (run["root"] / run["stdout"]).read_text(encoding="utf-8").splitlines()
    expected = [line for line in stdout if not line.startswith("Dumping ")]
    expected_err = [] if run["stderr"] == "-" else (run["root"] / run["stderr"]).read_text().splitlines()
    try:
        lines = [snapshot_line(e) for e in read_producer_snapshot(run["root"] / run["file"]).entries]
        errors = []
    except CorruptSnapshotError as error:
        lines, errors = [], [error.message]
    assert lines == expected
    assert errors == expected_err


def test_fixture_snapshot_runs_present():
    names = {run["file"] for run in snapshot_runs(FIXTURES)}
    assert "damaged/snapshot-corrupt/idempotent-0/00000000000000000341.snapshot" in names
    assert "damaged/snapshot-truncated/idempotent-0/00000000000000000641.snapshot" in names


def test_spec_vector():
    snapshot = parse_producer_snapshot(SPEC_VECTOR)
    assert snapshot.version == 1 and snapshot.trailing_bytes == 0
    (entry,) = snapshot.entries
    assert entry == ProducerSnapshotEntry(4000, 3, 9, 19, 9, 1700000000000, 5, -1)
    assert snapshot_line(entry) == (
        "producerId: 4000 producerEpoch: 3 coordinatorEpoch: 5 currentTxnFirstOffset: OptionalLong.empty "
        "lastTimestamp: 1700000000000 firstSequence: 0 lastSequence: 9 lastOffset: 19 offsetDelta: 9 "
        "timestamp: 1700000000000"
    )
    assert encode_producer_snapshot(snapshot.entries) == SPEC_VECTOR
    assert snapshot.encode() == SPEC_VECTOR
    assert entry.first_offset == 10


def test_file_name_offset_and_fixture(tmp_path):
    snapshot = read_producer_snapshot(FIXTURES / "data/idempotent-0/00000000000000000341.snapshot")
    assert snapshot.offset == 341 and len(snapshot.entries) == 1
    odd = tmp_path / "not-an-offset.snapshot"
    odd.write_bytes(SPEC_VECTOR)
    assert read_producer_snapshot(odd).offset is None
    with pytest.raises(FileNotFoundError):
        read_producer_snapshot(tmp_path / "00000000000000000001.snapshot")


def test_no_batch_metadata_and_open_transaction():
    entry = ProducerSnapshotEntry(7, 1, -1, -1, 0, 123, 4, 55)
    data = encode_producer_snapshot([entry])
    (decoded,) = parse_producer_snapshot(data).entries
    assert not decoded.has_batch_metadata
    assert snapshot_line(decoded) == (
        "producerId: 7 producerEpoch: 1 coordinatorEpoch: 4 currentTxnFirstOffset: OptionalLong[55] "
        "lastTimestamp: 123 "
    )


@pytest.mark.parametrize(
    ("sequence", "decrement", "expected"),
    [
        (9, 9, 0),
        (19, 9, 10),
        (5, 10, INT32_MAX - 4),  # wraps below zero to the top of the int range
        (0, 1, INT32_MAX),
        (-1, 0, INT32_MAX),  # -1 < 0, so even a zero decrement wraps
        (INT32_MAX, -1, -(2**31)),  # Java int overflow
        (-(2**31), INT32_MAX, -(2**31) + 1),
    ],
)
def test_decrement_sequence(sequence, decrement, expected):
    assert decrement_sequence(sequence, decrement) == expected


def _header(version: int, crc: int, count: int) -> bytes:
    return struct.pack(">hIi", version, crc, count)


@pytest.mark.parametrize(
    ("data", "message", "position"),
    [
        (b"", "Snapshot failed schema validation: null", 0),
        (b"\x00", "Snapshot failed schema validation: null", 0),
        (b"\x00\x02", "Snapshot failed schema validation: Snapshot contained an unknown file version 2", 0),
        (
            b"\xff\xff" + bytes(60),
            "Snapshot failed schema validation: Snapshot contained an unknown file version -1",
            0,
        ),
        (b"\x00\x01\x00\x00", "Snapshot failed schema validation: null", 2),
        (b"\x00\x01" + bytes(7), "Snapshot failed schema validation: null", 6),
        (
            _header(1, 0, -1),
            "Snapshot failed schema validation: non-nullable field producerEntries was serialized as null",
            6,
        ),
        (
            _header(1, 0, 2**31 - 1) + bytes(50),
            "Snapshot failed schema validation: Tried to allocate a collection of size 2147483647, but there "
            "are only 50 bytes remaining.",
            6,
        ),
        (_header(1, 0, 2) + bytes(46 + 45), "Snapshot failed schema validation: null", 56),
    ],
)
def test_schema_errors(data, message, position):
    with pytest.raises(CorruptSnapshotError) as caught:
        parse_producer_snapshot(data, "x/00000000000000000010.snapshot")
    assert caught.value.message == message
    assert caught.value.position == position
    assert caught.value.path == "x/00000000000000000010.snapshot"


def test_huge_count_fails_fast():
    data = _header(1, 0, 2**31 - 1) + bytes(50)
    start = time.perf_counter()
    with pytest.raises(CorruptSnapshotError):
        parse_producer_snapshot(data)
    assert time.perf_counter() - start < 0.1


def test_crc_is_checked_after_parsing_and_covers_trailing_bytes():
    entry = ProducerSnapshotEntry(1, 0, 4, 4, 4, 99, -1, -1)
    good = encode_producer_snapshot([entry])
    stored = struct.unpack_from(">I", good, 2)[0]
    # trailing bytes are fine when the CRC covers them
    with_tail = encode_producer_snapshot([entry], trailing=b"tail")
    assert parse_producer_snapshot(with_tail).trailing_bytes == 4
    # appended afterwards they break the CRC
    broken = good + b"tail"
    computed = crc32c.crc32c(broken[6:])
    with pytest.raises(CorruptSnapshotError) as caught:
        parse_producer_snapshot(broken)
    assert caught.value.message == (
        f"Snapshot is corrupt (CRC is no longer valid). Stored crc: {stored}. Computed crc: {computed}"
    )
    assert caught.value.position == 2
    # a truncated file with a wrong CRC reports the schema failure, not the CRC
    with pytest.raises(CorruptSnapshotError, match="schema validation: null"):
        parse_producer_snapshot(encode_producer_snapshot([entry], crc=1)[:-1])
    # an unknown version is reported before anything else
    with pytest.raises(CorruptSnapshotError, match="unknown file version 2"):
        parse_producer_snapshot(encode_producer_snapshot([entry], version=2, crc=1))


def test_fixture_damaged_snapshots():
    with pytest.raises(CorruptSnapshotError) as caught:
        read_producer_snapshot(
            FIXTURES / "damaged/snapshot-corrupt/idempotent-0/00000000000000000341.snapshot"
        )
    assert caught.value.message == (
        "Snapshot is corrupt (CRC is no longer valid). Stored crc: 3647293171. Computed crc: 4106994428"
    )
    with pytest.raises(CorruptSnapshotError) as caught:
        read_producer_snapshot(
            FIXTURES / "damaged/snapshot-truncated/idempotent-0/00000000000000000641.snapshot"
        )
    assert caught.value.message == "Snapshot failed schema validation: null"


# ---------------------------------------------------------------------------------------------------------------

int16 = st.integers(-(2**15), 2**15 - 1)
int32 = st.integers(-(2**31), 2**31 - 1)
int64 = st.integers(-(2**63), 2**63 - 1)
entries_strategy = st.lists(
    st.builds(ProducerSnapshotEntry, int64, int16, int32, int64, int32, int64, int32, int64), max_size=20
)


@given(entries_strategy, st.binary(max_size=10))
@settings(max_examples=200, deadline=None)
def test_round_trip(entries, trailing):
    data = encode_producer_snapshot(entries, trailing=trailing)
    snapshot = parse_producer_snapshot(data)
    assert list(snapshot.entries) == entries
    assert snapshot.trailing_bytes == len(trailing)
    assert encode_producer_snapshot(snapshot.entries, trailing=trailing) == data
    for entry in snapshot.entries:
        assert -(2**31) <= entry.first_sequence <= 2**31 - 1
        snapshot_line(entry)


@given(st.binary(max_size=300))
@settings(max_examples=400, deadline=None)
def test_any_bytes(data):
    try:
        parse_producer_snapshot(data)
    except CorruptSnapshotError as error:
        assert error.message.startswith(("Snapshot failed schema validation: ", "Snapshot is corrupt"))
        assert error.position is not None


@given(int32, st.binary(max_size=200))
@settings(max_examples=200, deadline=None)
def test_any_count_with_valid_header(count, body):
    data = _header(1, 0, count) + body
    data = data[:2] + struct.pack(">I", crc32c.crc32c(data[6:])) + data[6:]
    try:
        snapshot = parse_producer_snapshot(data)
    except CorruptSnapshotError as error:
        assert "schema validation" in error.message
    else:
        assert len(snapshot.entries) == count
