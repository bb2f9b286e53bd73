"""Offset index, time index and transaction index readers (kdump.storage.offset_index / time_index /
transaction_index), checked against hand-built files, random bytes and the real tool's output in the corpus."""

from __future__ import annotations

import os
import struct
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from kdump.errors import CorruptIndexError, KdumpError
from kdump.storage.offset_index import OffsetIndex, OffsetPosition
from kdump.storage.time_index import TimeIndex, TimestampOffset
from kdump.storage.transaction_index import (
    AbortedTxn,
    TransactionIndex,
    TxnIndexSearchResult,
    encode_transaction_index,
)
from tests.corpus import CORPUS

FIXTURES = Path(__file__).resolve().parent / "fixtures" / "corpus"
INDEX_SUFFIXES = (".index", ".timeindex", ".txnindex")
CORRUPT_INDEX_CLASS = "org.apache.kafka.storage.internals.log.CorruptIndexException"


# ---------------------------------------------------------------------------------------------------------------
# helpers


def offset_index_bytes(entries: list[tuple[int, int]]) -> bytes:
    return b"".join(struct.pack(">ii", rel, pos) for rel, pos in entries)


def time_index_bytes(entries: list[tuple[int, int]]) -> bytes:
    return b"".join(struct.pack(">qi", ts, rel) for ts, rel in entries)


def index_line(entry: OffsetPosition) -> str:
    return f"offset: {entry.offset} position: {entry.position}"


def time_index_line(entry: TimestampOffset) -> str:
    return f"timestamp: {entry.timestamp} offset: {entry.offset}"


def txn_line(txn: AbortedTxn) -> str:
    return (
        f"version: {txn.version} producerId: {txn.producer_id} firstOffset: {txn.first_offset} "
        f"lastOffset: {txn.last_offset} lastStableOffset: {txn.last_stable_offset}"
    )


def manifest_runs(
    root: Path, suffixes: tuple[str, ...], options: tuple[str, ...] = ()
) -> list[dict[str, str]]:
    """Rows of ``root/MANIFEST.tsv`` that dump one file ending in ``suffixes`` with exactly ``options``."""
    runs = []
    lines = (root / "MANIFEST.tsv").read_text(encoding="utf-8").splitlines()[1:]
    for line in lines:
        tool, code, stdout, stderr, command = line.split("\t")
        words = command.split()
        if len(words) < 3 or words[1] != "--files" or tuple(words[3:]) != options:
            continue
        if not words[2].endswith(suffixes) or "," in words[2]:
            continue
        runs.append(
            {"tool": tool, "exit": code, "stdout": stdout, "stderr": stderr, "file": words[2], "root": root}
        )
    return runs


def run_params(suffixes: tuple[str, ...], options: tuple[str, ...] = ()) -> list:
    params = [
        pytest.param(run, id=f"fixtures:{run['stdout']}")
        for run in manifest_runs(FIXTURES, suffixes, options)
    ]
    if CORPUS.is_dir():
        params += [
            pytest.param(run, id=f"corpus:{run['stdout']}")
            for run in manifest_runs(CORPUS, suffixes, options)
        ]
    else:
        params.append(pytest.param(None, marks=pytest.mark.skip(reason=f"corpus not found at {CORPUS}")))
    return params


def expected_lines(run: dict, prefix: str) -> list[str]:
    text = (run["root"] / run["stdout"]).read_text(encoding="utf-8")
    return [line for line in text.splitlines() if line.startswith(prefix)]


def stderr_first_line(run: dict) -> str | None:
    if run["stderr"] == "-":
        return None
    text = (run["root"] / run["stderr"]).read_text(encoding="utf-8")
    return text.splitlines()[0].replace("${CORPUS_ROOT}", os.path.realpath(run["root"]))


@pytest.fixture
def in_root(monkeypatch):
    """Run from the corpus root, like the real tool (its messages contain absolute paths built from it)."""

    def enter(run: dict) -> None:
        monkeypatch.chdir(run["root"])

    return enter


# ---------------------------------------------------------------------------------------------------------------
# corpus agreement


@pytest.mark.corpus
@pytest.mark.parametrize("run", run_params((".index",)))
def test_offset_index_entries_match_tool(run, in_root):
    in_root(run)
    index = OffsetIndex(run["file"])
    if run["exit"] != "0":  # the tool failed before printing entries (missing .log)
        assert index.entry_count >= 0
        return
    assert [index_line(e) for e in index.dump_entries()] == expected_lines(run, "offset: ")
    if index.entry_count == 0:
        assert expected_lines(run, run["file"]) == [f"{run['file']} is empty."]


@pytest.mark.corpus
@pytest.mark.parametrize("run", run_params((".timeindex",)))
def test_time_index_entries_match_tool(run, in_root):
    in_root(run)
    index = TimeIndex(run["file"])
    if run["exit"] != "0":
        return
    assert [time_index_line(e) for e in index.dump_entries()] == expected_lines(run, "timestamp: ")


@pytest.mark.corpus
@pytest.mark.parametrize("run", run_params((".txnindex",)))
def test_transaction_index_entries_match_tool(run, in_root):
    in_root(run)
    index = TransactionIndex(run["file"])
    assert [txn_line(t) for t in index.aborted_txns()] == expected_lines(run, "version: ")
    index.sanity_check()  # brokers run this one at startup: every real index passes


@pytest.mark.corpus
@pytest.mark.parametrize("run", run_params((".index", ".timeindex"), ("--index-sanity-check",)))
def test_sanity_check_matches_tool(run, in_root):
    in_root(run)
    name = run["file"]
    expected_error = stderr_first_line(run)
    if expected_error is not None and "NoSuchFileException" in expected_error:
        # The tool died on the missing segment before checking the index (test_replay covers kdump's line).
        assert not Path(name.rsplit(".", 1)[0] + ".log").exists()
        return
    index = OffsetIndex(name) if name.endswith(".index") else TimeIndex(name)
    stdout = (run["root"] / run["stdout"]).read_text(encoding="utf-8")
    if isinstance(index, OffsetIndex) and index.entry_count == 0:
        assert f"{name} is empty." in stdout  # the empty check comes before the sanity check
        return
    if expected_error is None:
        index.sanity_check()
        assert f"{name} passed sanity check." in stdout
    else:
        with pytest.raises(CorruptIndexError) as caught:
            index.sanity_check()
        assert f'Exception in thread "main" {CORRUPT_INDEX_CLASS}: {caught.value.message}' == expected_error
        assert caught.value.path == name


def test_fixture_runs_present():
    kinds = {Path(run["file"]).suffix for run in manifest_runs(FIXTURES, INDEX_SUFFIXES)}
    assert kinds == set(INDEX_SUFFIXES)
    assert len(manifest_runs(FIXTURES, (".index", ".timeindex"), ("--index-sanity-check",))) >= 4


# ---------------------------------------------------------------------------------------------------------------
# offset index


def test_offset_index_basics():
    data = offset_index_bytes([(5, 100), (9, 4200), (14, 8400)])
    index = OffsetIndex.from_bytes(data, 1000, "x/00000000000000001000.index")
    assert index.entry_count == len(index) == 3
    assert list(index) == [(1005, 100), (1009, 4200), (1014, 8400)]
    assert index.entry(1) == OffsetPosition(1009, 4200)
    assert index.last_offset == 1014
    assert index.last_entry == (1014, 8400)
    with pytest.raises(IndexError):
        index.entry(3)
    index.sanity_check()


def test_offset_index_lookup_sorted():
    index = OffsetIndex.from_bytes(offset_index_bytes([(5, 100), (9, 4200), (14, 8400)]), 1000)
    assert index.lookup(999) == (1000, 0)
    assert index.lookup(1004) == (1000, 0)
    assert index.lookup(1005) == (1005, 100)
    assert index.lookup(1008) == (1005, 100)
    assert index.lookup(1009) == (1009, 4200)
    assert index.lookup(10**12) == (1014, 8400)
    assert OffsetIndex.from_bytes(b"", 7).lookup(100) == (7, 0)
    assert index.fetch_upper_bound_offset(100, 4100) == (1009, 4200)
    assert index.fetch_upper_bound_offset(100, 4101) == (1014, 8400)
    assert index.fetch_upper_bound_offset(8400, 1) is None


def test_offset_index_zero_tail_semantics():
    """An untrimmed index: the zero slots count, the dump stops at them, last offset is the base offset, and
    Kafka's binary search lands in the zero tail (position 0) for targets beyond the first entry."""
    data = offset_index_bytes([(1, 10), (2, 20), (3, 30)]) + bytes(8 * 5)
    index = OffsetIndex.from_bytes(data, 100)
    assert index.entry_count == 8
    assert list(index.dump_entries()) == [(101, 10), (102, 20), (103, 30)]
    assert index.last_offset == 100
    index.sanity_check()  # passes: last offset == base offset
    assert index.lookup(50) == (100, 0)  # below the first entry
    assert index.lookup(101) == (101, 10)  # the first entry itself
    assert index.lookup(102) == (100, 0)  # the search walks into the zero tail
    assert index.lookup(103) == (100, 0)


def test_offset_index_zero_first_entry_is_printed():
    """Slot 0 is always visited, even when it is a zero entry (relative offset 0)."""
    index = OffsetIndex.from_bytes(bytes(16), 42)
    assert list(index.dump_entries()) == [(42, 0)]


def test_offset_index_warm_section():
    """More slots than the 8 KiB warm section: targets in the hot and the cold part both resolve."""
    entries = [(i * 3 + 1, i * 100) for i in range(3000)]
    index = OffsetIndex.from_bytes(offset_index_bytes(entries), 0)
    for target in (0, 1, 2, 4, 3000, 5975, 5977, 8000, 8998, 9000, 10**6):
        expected = max(((o, p) for o, p in entries if o <= target), default=(0, 0))
        assert index.lookup(target) == expected, target


@given(st.lists(st.integers(0, 2**31 - 1), unique=True, max_size=2500), st.integers(-5, 2**31 + 5))
@settings(max_examples=60, deadline=None)
def test_offset_index_lookup_equals_plain_search_on_sorted_index(offsets, target):
    offsets.sort()
    index = OffsetIndex.from_bytes(offset_index_bytes([(o, i) for i, o in enumerate(offsets)]), 0)
    expected = max(((o, i) for i, o in enumerate(offsets) if o <= target), default=(0, 0))
    assert index.lookup(target) == expected


def test_offset_index_sanity_messages(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    path = "00000000000000000050.index"
    Path(path).write_bytes(offset_index_bytes([(5, 0)]) + b"\x00\x01\x02")
    with pytest.raises(CorruptIndexError) as caught:
        OffsetIndex(path).sanity_check()
    assert caught.value.message == (
        f"Index file {tmp_path}/{path} is corrupt, found 11 bytes which is neither positive nor a multiple of 8"
    )
    assert caught.value.position == 8

    Path(path).write_bytes(offset_index_bytes([(5, 0), (-3, 100)]) + b"\x00")
    with pytest.raises(CorruptIndexError) as caught:
        OffsetIndex(path).sanity_check()  # the last-offset check comes first
    assert caught.value.message == (
        f"Corrupt index found, index file {tmp_path}/{path} has non-zero size but the last offset is 47 which "
        "is less than the base offset 50"
    )
    assert OffsetIndex(path, base_offset=7).base_offset == 7
    Path(path).write_bytes(b"\x00" * 7)  # no whole entry, bad length
    with pytest.raises(CorruptIndexError, match="found 7 bytes"):
        OffsetIndex(path).sanity_check()


def test_index_base_offset_from_name(tmp_path):
    (tmp_path / "00000000000000000123.index").write_bytes(b"")
    assert OffsetIndex(tmp_path / "00000000000000000123.index").base_offset == 123
    (tmp_path / "00000000000000000123.index.deleted").write_bytes(b"")
    assert OffsetIndex(tmp_path / "00000000000000000123.index.deleted").base_offset == 123
    (tmp_path / "garbage.index").write_bytes(b"")
    with pytest.raises(KdumpError, match='For input string: "garbage"'):
        OffsetIndex(tmp_path / "garbage.index")
    (tmp_path / "99999999999999999999.index").write_bytes(b"")
    with pytest.raises(KdumpError):
        OffsetIndex(tmp_path / "99999999999999999999.index")
    with pytest.raises(FileNotFoundError):
        OffsetIndex(tmp_path / "00000000000000000001.index")
    with pytest.raises(FileNotFoundError):
        TimeIndex(tmp_path / "00000000000000000001.timeindex")


def test_offsets_wrap_like_java_longs():
    index = OffsetIndex.from_bytes(offset_index_bytes([(1, 0)]), 2**63 - 1)
    assert index.entry(0).offset == -(2**63)


def test_fixture_zero_tail_lookups_fall_back_to_position_zero():
    path = FIXTURES / "damaged/index-zero-tail/small-index-0/00000000000000000358.index"
    index = OffsetIndex(path)
    assert index.entry_count == 17
    assert [e.offset for e in index.dump_entries()] == [399, 422, 444, 466, 487, 509, 531]
    assert index.last_offset == 358
    assert index.lookup(399) == (399, 1895)
    assert index.lookup(450) == (358, 0)
    trimmed = OffsetIndex.from_bytes(path.read_bytes()[: 7 * 8], 358)
    assert trimmed.lookup(450) == (444, 5456)


# ---------------------------------------------------------------------------------------------------------------
# time index


def test_time_index_basics():
    data = time_index_bytes([(1000, 3), (1500, 7), (1500, 9), (2000, 12)])
    index = TimeIndex.from_bytes(data, 50)
    assert index.entry_count == 4
    assert list(index) == [(1000, 53), (1500, 57), (1500, 59), (2000, 62)]
    assert index.entry(3) == TimestampOffset(2000, 62)
    assert index.last_entry == (2000, 62)
    assert index.lookup(999) == (-1, 50)
    assert index.lookup(1000) == (1000, 53)
    assert index.lookup(1700) in {(1500, 57), (1500, 59)}
    assert index.lookup(5000) == (2000, 62)
    assert TimeIndex.from_bytes(b"", 9).last_entry == (-1, 9)
    assert TimeIndex.from_bytes(b"", 9).lookup(0) == (-1, 9)
    index.sanity_check()
    with pytest.raises(IndexError):
        index.entry(-1)


def test_time_index_sanity_order_and_messages(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    path = "00000000000000000100.timeindex"
    # zero tail: last timestamp 0 < first timestamp -> check 1, even though the length is also wrong
    Path(path).write_bytes(time_index_bytes([(1700, 5), (0, 0)]) + b"\x01")
    with pytest.raises(CorruptIndexError) as caught:
        TimeIndex(path).sanity_check()
    assert caught.value.message == (
        f"Corrupt time index found, time index file ({tmp_path}/{path}) has non-zero size but the last "
        "timestamp is 0 which is less than the first timestamp 1700"
    )
    Path(path).write_bytes(time_index_bytes([(1700, 5), (1800, -1)]))
    with pytest.raises(CorruptIndexError) as caught:
        TimeIndex(path).sanity_check()
    assert caught.value.message == (
        f"Corrupt time index found, time index file ({tmp_path}/{path}) has non-zero size but the last "
        "offset is 99 which is less than the first offset 100"
    )
    Path(path).write_bytes(time_index_bytes([(1700, 5)]) + b"\x00" * 5)
    with pytest.raises(CorruptIndexError) as caught:
        TimeIndex(path).sanity_check()
    assert caught.value.message == (
        f"Time index file {tmp_path}/{path} is corrupt, found 17 bytes which is neither positive nor a "
        "multiple of 12"
    )
    # an untrimmed time index whose first timestamp is 0 or less passes
    TimeIndex.from_bytes(time_index_bytes([(0, 0), (0, 0)]), 3).sanity_check()


def test_time_index_zero_tail_dump_stops():
    path = FIXTURES / "damaged/index-zero-tail-base0/small-index-0/00000000000000000000.timeindex"
    index = TimeIndex(path)
    assert index.entry_count == 85
    dumped = list(index.dump_entries())
    assert len(dumped) == 7 and dumped[0] == (1700000004500, 45)
    assert index.last_entry == (0, 0)
    with pytest.raises(
        CorruptIndexError, match="the last timestamp is 0 which is less than the first timestamp"
    ):
        index.sanity_check()


# ---------------------------------------------------------------------------------------------------------------
# transaction index


def test_transaction_index_round_trip_and_partial_tail():
    txns = [AbortedTxn(0, 4000, 10, 25, 26), AbortedTxn(0, 7, 30, 40, 31)]
    data = encode_transaction_index(txns)
    assert data[:34].hex() == "00000000000000000fa0000000000000000a0000000000000019000000000000001a"
    index = TransactionIndex.from_bytes(data + b"\x00" * 20, 0)
    assert index.entry_count == 2 and index.partial_tail_length == 20
    assert index.aborted_txns() == txns
    assert (
        str(txns[0])
        == "AbortedTxn(version=0, producerId=4000, firstOffset=10, lastOffset=25, lastStableOffset=26)"
    )


def test_transaction_index_version_is_first_byte_only(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    good = AbortedTxn(0, 1, 2, 3, 4).encode()
    low_byte = b"\x00\x07" + good[2:]  # only the first byte counts: still version 0
    negative = b"\xff\x00" + good[2:]  # a signed byte: -1 is not > 0, so no error
    assert TransactionIndex.from_bytes(low_byte, 0).aborted_txns()[0].version == 0
    assert TransactionIndex.from_bytes(negative, 0).aborted_txns()[0].version == -1

    path = "00000000000000000000.txnindex"
    Path(path).write_bytes(good + b"\x01\x00" + good[2:])
    index = TransactionIndex(path)
    with pytest.raises(KdumpError) as caught:
        index.aborted_txns()  # fails as a whole
    assert caught.value.message == (
        f"Unexpected aborted transaction version 1 in transaction index {tmp_path}/{path}, current version is 0"
    )
    assert caught.value.position == 34
    assert caught.value.kafka_class == "org.apache.kafka.common.KafkaException"


def test_transaction_index_sanity_check(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    path = "00000000000000000100.txnindex"
    Path(path).write_bytes(
        encode_transaction_index([AbortedTxn(0, 9, 80, 120, 121), AbortedTxn(0, 9, 95, 99, 99)])
    )
    index = TransactionIndex(path)
    with pytest.raises(CorruptIndexError) as caught:
        index.sanity_check()
    assert caught.value.message == (
        "Last offset of aborted transaction AbortedTxn(version=0, producerId=9, firstOffset=95, lastOffset=99, "
        f"lastStableOffset=99) in index {tmp_path}/{path} is less than start offset 100"
    )
    assert caught.value.position == 34
    index.sanity_check(base_offset=50)


def test_transaction_index_collect_aborted():
    txns = [
        AbortedTxn(0, 1, 10, 20, 21),
        AbortedTxn(0, 2, 15, 30, 16),
        AbortedTxn(0, 3, 40, 50, 51),
    ]
    index = TransactionIndex.from_bytes(encode_transaction_index(txns), 0)
    assert index.collect_aborted_txns(0, 12) == TxnIndexSearchResult([txns[0]], True)
    assert index.collect_aborted_txns(21, 35) == TxnIndexSearchResult([txns[1]], True)
    assert index.collect_aborted_txns(25, 100) == TxnIndexSearchResult([txns[1], txns[2]], False)
    # the search stops before a later bad record, like Kafka's lazy iterator
    bad = encode_transaction_index(txns) + b"\x05" + bytes(33)
    assert TransactionIndex.from_bytes(bad, 0).collect_aborted_txns(0, 12).is_complete


def test_transaction_index_missing_file_is_empty(tmp_path):
    index = TransactionIndex(tmp_path / "00000000000000000007.txnindex")
    assert not index.exists and index.aborted_txns() == [] and index.start_offset == 7
    index.sanity_check()
    assert not (tmp_path / "00000000000000000007.txnindex").exists()  # never created


def test_fixture_partial_txnindex():
    index = TransactionIndex(FIXTURES / "damaged/txnindex-partial/txn-0/00000000000000000030.txnindex")
    assert index.entry_count == 1 and index.partial_tail_length == 24
    assert index.aborted_txns() == [AbortedTxn(0, 1, 31, 81, 82)]


# ---------------------------------------------------------------------------------------------------------------
# robustness: any bytes give a result or a KdumpError


@given(st.binary(max_size=400), st.integers(-(2**63), 2**63 - 1), st.integers(-(2**63), 2**63 - 1))
@settings(max_examples=300, deadline=None)
def test_offset_index_any_bytes(data, base, target):
    index = OffsetIndex.from_bytes(data, base)
    assert len(list(index)) == len(data) // 8
    list(index.dump_entries())
    index.lookup(target)
    index.fetch_upper_bound_offset(target % 2**31, 100)
    assert index.last_offset == (index.entry(index.entry_count - 1).offset if index.entry_count else base)
    try:
        index.sanity_check()
    except CorruptIndexError as error:
        assert error.message


@given(st.binary(max_size=400), st.integers(-(2**63), 2**63 - 1), st.integers(-(2**63), 2**63 - 1))
@settings(max_examples=300, deadline=None)
def test_time_index_any_bytes(data, base, target):
    index = TimeIndex.from_bytes(data, base)
    assert len(list(index)) == len(data) // 12
    list(index.dump_entries())
    index.lookup(target)
    assert index.last_entry
    try:
        index.sanity_check()
    except CorruptIndexError as error:
        assert error.message


@given(st.binary(max_size=400), st.integers(-(2**63), 2**63 - 1), st.integers(), st.integers())
@settings(max_examples=300, deadline=None)
def test_transaction_index_any_bytes(data, start, fetch, upper):
    index = TransactionIndex.from_bytes(data, start)
    assert index.entry_count * 34 + index.partial_tail_length == len(data)
    for operation in (
        index.aborted_txns,
        index.sanity_check,
        lambda: index.collect_aborted_txns(fetch, upper),
    ):
        try:
            operation()
        except KdumpError as error:
            assert error.message and error.position is not None
