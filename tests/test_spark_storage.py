"""The Spark pipeline without Spark: the consumer view (read_committed), offset and timestamp lookups, split
planning and the Arrow reader, checked against kdump's own record decoding and against an independent
computation of what a read_committed consumer sees.  These need pyarrow only (no JVM)."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from kdump.analysis.consumer_view import ReadCommittedFilter, transaction_state
from kdump.analysis.log_search import offset_start_position
from kdump.analysis.offset_lookup import cut_positions
from kdump.spark.options import OptionError, parse_options, parse_partitions
from kdump.spark.planning import offset_for_timestamp, plan
from kdump.storage.file_records import FileRecords
from kdump.storage.local_log import LocalLog
from tests.corpus import CORPUS, FIXTURE_CORPUS, corpus_available
from tests.spark_oracle import CORPUS_TREES, FIXTURE_TREES, committed_offsets, expected_rows, row_order

pa = pytest.importorskip("pyarrow")

from kdump.spark.reader import CorruptBatchError, read_split  # noqa: E402
from kdump.spark.schema import arrow_schema, column_names  # noqa: E402

NO_CORPUS = f"reference corpus not found at {CORPUS}"
needs_corpus = pytest.mark.skipif(not corpus_available(), reason=NO_CORPUS)


def arrow_rows(table_batches: list, include_headers: bool = False) -> list[tuple]:
    """Rows of Arrow batches in the layout of :func:`expected_rows`."""
    rows = []
    names = column_names(include_headers)
    for batch in table_batches:
        data = batch.to_pydict()
        ts = batch.column("timestamp").cast(pa.int64()).to_pylist()
        data["timestamp"] = [None if t is None else t // 1000 for t in ts]
        if include_headers:
            data["headers"] = [
                None if h is None else [(e["key"], e["value"]) for e in h] for h in data["headers"]
            ]
        rows.extend(zip(*(data[n] for n in names), strict=True))
    return sorted(rows, key=row_order)


def read_all(options: dict[str, str]) -> list:
    selection = parse_options(options)
    return [b for split in plan(selection).splits for b in read_split(split, selection.read)]


# -- tests -------------------------------------------------------------------------------------------------


def test_arrow_schema_is_what_pyspark_expects() -> None:
    types = pytest.importorskip("pyspark.sql.pandas.types")
    from kdump.spark.schema import spark_schema

    for headers in (False, True):
        for decoded in (False, True):
            want = types.to_arrow_schema(spark_schema(headers, decoded), timezone="UTC")
            assert arrow_schema(headers, decoded) == want


@pytest.mark.parametrize("headers", [False, True], ids=["plain", "headers"])
def test_reader_matches_core_decode_on_fixtures(headers: bool) -> None:
    options = {"paths": json.dumps(FIXTURE_TREES), "includeHeaders": str(headers).lower()}
    got = arrow_rows(read_all(options), headers)
    assert got == expected_rows(FIXTURE_TREES, include_headers=headers)
    assert len(got) > 1000


def test_control_records_only_when_asked_for(tmp_path: Path) -> None:
    """Like spark-sql-kafka (a consumer), no control records by default; includeControlRecords=true keeps them."""
    from kdump.storage.control_record import ControlRecordType
    from tests.builder import SimpleRecord, build_end_txn_marker_batch, build_v2_batch

    directory = tmp_path / "orders-0"
    directory.mkdir()
    data = build_v2_batch(
        [SimpleRecord(b"a"), SimpleRecord(b"b")], producer_id=7, producer_epoch=0, base_sequence=0,
        is_transactional=True,
    ) + build_end_txn_marker_batch(
        ControlRecordType.COMMIT, coordinator_epoch=1, producer_id=7, producer_epoch=0, base_offset=2, timestamp=5
    )  # fmt: skip
    (directory / "00000000000000000000.log").write_bytes(data)
    default = read_all({"path": str(directory)})
    assert [o for b in default for o in b.column("offset").to_pylist()] == [0, 1]
    assert arrow_rows(default) == expected_rows([str(directory)])
    kept = read_all({"path": str(directory), "includeControlRecords": "true"})
    assert [o for b in kept for o in b.column("offset").to_pylist()] == [0, 1, 2]
    assert [c for b in kept for c in b.column("isControl").to_pylist()] == [False, False, True]
    assert arrow_rows(kept) == expected_rows([str(directory)], include_control=True)


@needs_corpus
def test_reader_matches_core_decode_on_corpus() -> None:
    trees = [str(CORPUS / t) for t in CORPUS_TREES]
    got = arrow_rows(read_all({"paths": json.dumps(trees), "includeHeaders": "true"}), True)
    assert got == expected_rows(trees, include_headers=True)


def test_small_splits_read_the_same_records() -> None:
    directory = str(FIXTURE_CORPUS / "data" / "small-index-0")
    whole = arrow_rows(read_all({"path": directory}))
    selection = parse_options({"path": directory, "maxBytesPerSplit": "3000"})
    splits = plan(selection).splits
    assert len(splits) > len(LocalLog.scan(directory).log_segments)
    pieces = arrow_rows([b for s in splits for b in read_split(s, selection.read)])
    assert pieces == whole


def test_segments_without_index_are_cut_at_batch_headers() -> None:
    directory = str(FIXTURE_CORPUS / "data" / "plain-0")
    assert not LocalLog.scan(directory).log_segments[0].has(".index")
    selection = parse_options({"path": directory, "maxBytesPerSplit": "150"})
    splits = plan(selection).splits
    assert len(splits) >= 3
    assert arrow_rows([b for s in splits for b in read_split(s, selection.read)]) == expected_rows(
        [directory]
    )


def test_paths_may_be_globs_files_or_log_directories() -> None:
    data = FIXTURE_CORPUS / "data"
    topics = lambda opts: sorted({s.topic for s in plan(parse_options(opts)).splits})  # noqa: E731
    assert topics({"path": str(data / "codec-*-0")}) == sorted(
        p.name[:-2] for p in data.glob("codec-*-0") if any(p.glob("*.log"))
    )
    assert topics({"path": str(data / "plain-0" / "00000000000000000000.log")}) == ["plain"]
    assert "txn" in topics({"path": str(FIXTURE_CORPUS)})
    with pytest.raises(FileNotFoundError):
        plan(parse_options({"path": str(data / "no-such-dir")}))


def _committed_dirs(root: Path) -> list[str]:
    return [
        str(root / "data" / name)
        for name in ("txn-0", "plain-0", "idempotent-0")
        if (root / "data" / name).is_dir()
    ]


@pytest.mark.parametrize(
    "root", [FIXTURE_CORPUS, pytest.param(CORPUS, marks=needs_corpus)], ids=["fixtures", "corpus"]
)
def test_read_committed_matches_markers(root: Path) -> None:
    for directory in _committed_dirs(root):
        got = read_all({"path": directory, "isolation.level": "read_committed"})
        offsets = [o for b in got for o in b.column("offset").to_pylist()]
        assert sorted(offsets) == sorted(committed_offsets(directory)), directory
        assert not any(c for b in got for c in b.column("isControl").to_pylist())


@needs_corpus
def test_read_committed_on_corpus_txn_topic() -> None:
    directory = str(CORPUS / "data" / "txn-0")
    state = transaction_state(LocalLog.scan(directory))
    assert len(state.aborted) == 7 and state.last_stable_offset is None and not state.problems
    committed = committed_offsets(directory)
    uncommitted = {o for b in read_all({"path": directory}) for o in b.column("offset").to_pylist()}
    assert committed < uncommitted
    # the aborted transaction of producer 1 interleaved with producer 2's committed one and plain records
    assert {796, 799, 826, 827} & committed == set() and {797, 798, 800, 801} <= committed


def test_open_transaction_sets_the_last_stable_offset() -> None:
    # the fixture copy of txn-0 lacks segment 30, which holds the COMMIT marker of the transaction at 0..29
    log = LocalLog.scan(FIXTURE_CORPUS / "data" / "txn-0")
    assert transaction_state(log).last_stable_offset == 0
    assert read_all({"path": log.directory, "isolation.level": "read_committed"}) == []
    accept = ReadCommittedFilter([], 10)
    with FileRecords(log.log_segments[0].log_path) as records:
        assert [accept.accept(b) for b in records.batches()] == [True, False, False]


def _all_records(directory: str) -> list[tuple[int, int]]:
    out = []
    for segment in LocalLog.scan(directory).log_segments:
        with FileRecords(segment.log_path) as records:
            for batch in records.batches():
                out.extend((r.offset, r.timestamp) for r in batch.records())
    return out


@pytest.mark.parametrize("name", ["small-index-0", "logappend-0", "txn-0", "plain-0"])
def test_offset_for_timestamp_is_the_first_record_at_or_after(name: str) -> None:
    directory = str(FIXTURE_CORPUS / "data" / name)
    records = _all_records(directory)
    log = LocalLog.scan(directory)
    stamps = sorted({t for _, t in records})
    for target in [stamps[0] - 1, *stamps[:: max(1, len(stamps) // 25)], stamps[-1], stamps[-1] + 1]:
        expected = min((o for o, t in records if t >= target), default=None)
        assert offset_for_timestamp(log, target) == expected, target


def test_start_position_never_skips_the_offset() -> None:
    directory = FIXTURE_CORPUS / "data" / "small-index-0"
    for segment in LocalLog.scan(directory).log_segments:
        with FileRecords(segment.log_path) as records:
            batches = list(records.batches())
            for batch in batches:
                for offset in (batch.base_offset, batch.last_offset):
                    position = offset_start_position(segment, records, offset)
                    assert position <= batch.position
                    assert position in {b.position for b in batches} | {0}
            assert all(c in {b.position for b in batches} for c in cut_positions(segment, 2000, records))


def test_offset_and_timestamp_ranges() -> None:
    directory = str(FIXTURE_CORPUS / "data" / "small-index-0")
    records = _all_records(directory)
    start = json.dumps({"small-index": {"0": 100}})
    end = json.dumps({"small-index": {"0": 300}})
    got = [
        o
        for b in read_all({"path": directory, "startingOffsets": start, "endingOffsets": end})
        for o in b.column("offset").to_pylist()
    ]
    assert got == [o for o, _ in records if 100 <= o < 300]
    t0, t1 = records[len(records) // 5][1], records[len(records) * 3 // 4][1]
    got = [
        o
        for b in read_all({"path": directory, "startingTimestamp": str(t0), "endingTimestamp": str(t1)})
        for o in b.column("offset").to_pylist()
    ]
    assert got == [
        o
        for o, t in records
        if min(x for x, u in records if u >= t0) <= o < min(x for x, u in records if u >= t1)
    ]
    assert read_all({"path": directory, "startingOffsets": "latest"}) == []
    assert read_all({"path": directory, "startingTimestamp": str(records[-1][1] + 1)}) == []


def test_topic_and_partition_selection() -> None:
    root = str(FIXTURE_CORPUS / "data")
    topics = lambda opts: {b.column("topic")[0].as_py() for b in read_all({"path": root, **opts})}  # noqa: E731
    assert topics({"topics": "plain,txn"}) == {"plain", "txn"}
    assert topics({"topicPattern": "codec-.*"}) == {
        "codec-gzip",
        "codec-kpy-gzip",
        "codec-lz4",
        "codec-snappy",
        "codec-zstd",
    }
    assert topics({"assign": json.dumps({"plain": [0], "txn": [1]})}) == {"plain"}
    assert topics({"partitions": "1-3"}) == set()


def test_options_are_checked() -> None:
    assert parse_partitions("0, 2,5-7") == {0, 2, 5, 6, 7}
    for bad in (
        {"isolation.level": "dirty"},
        {"corruptBatches": "ignore"},
        {"startingOffsets": "{not json"},
        {"includeHeaders": "maybe"},
        {"topicPattern": "("},
        {"partitions": "3-1"},
    ):
        with pytest.raises(OptionError):
            parse_options({"path": "x", **bad})
    with pytest.raises(OptionError):
        parse_options({})


# -- damaged data ------------------------------------------------------------------------------------------

DAMAGED = CORPUS / "damaged"


def _damaged(case: str, policy: str = "skip", tmp: Path | None = None) -> tuple[list, list[dict]]:
    options = {"path": str(DAMAGED / case), "corruptBatches": policy}
    if tmp is not None:
        options["corruptReportDir"] = str(tmp)
    batches = read_all(options)
    reports = []
    if tmp is not None and tmp.is_dir():
        for name in sorted(os.listdir(tmp)):
            reports += [json.loads(line) for line in (tmp / name).read_text().splitlines()]
    return batches, reports


@needs_corpus
@pytest.mark.parametrize(
    "case, kind",
    [
        ("crc-flip-uncompressed", "crc"),
        ("crc-flip-compressed", "crc"),
        ("bad-magic", "magic"),
        ("truncated-mid-batch", "torn-tail"),
        ("truncated-in-header", "torn-tail"),
        ("oversized-length", "torn-tail"),
        ("garbage-tail", "torn-tail"),
    ],
)
def test_damaged_batches_are_skipped_and_reported(case: str, kind: str, tmp_path: Path) -> None:
    batches, reports = _damaged(case, tmp=tmp_path / "report")
    assert arrow_rows(batches) == expected_rows([str(DAMAGED / case)])
    assert [r["kind"] for r in reports] == [kind]
    assert reports[0]["action"] == "skipped" and reports[0]["position"] is not None
    with pytest.raises(CorruptBatchError):
        _damaged(case, "fail")


@needs_corpus
def test_keep_policy_keeps_decodable_crc_failures() -> None:
    kept, _ = _damaged("crc-flip-uncompressed", "keep")
    skipped, _ = _damaged("crc-flip-uncompressed")
    bad = [row for row in arrow_rows(kept) if row[-2] is False]
    assert bad and len(arrow_rows(kept)) == len(arrow_rows(skipped)) + len(bad)
    assert {row[4] for row in bad} == set(range(46, 46 + len(bad)))
    # a compressed batch whose stream no longer decodes is skipped even under keep
    kept, _ = _damaged("crc-flip-compressed", "keep")
    assert arrow_rows(kept) == arrow_rows(_damaged("crc-flip-compressed")[0])


@needs_corpus
def test_damaged_corpus_whole_tree_and_empty_log() -> None:
    assert read_all({"path": str(DAMAGED / "empty-log")}) == []
    got = arrow_rows(read_all({"path": str(DAMAGED)}))
    assert got == expected_rows([str(DAMAGED)])


def test_decoded_column_is_kdump_files_json_decoded() -> None:
    """The decoder option adds ``decoded``: the same data as ``kdump files --json``'s ``decoded`` field."""
    from tests.replay import run_kdump

    directory = FIXTURE_CORPUS / "data" / "__share_group_state-0"
    batches = read_all({"path": str(directory), "decoder": "share-group-state"})
    assert batches and batches[0].schema.names == column_names(False, True)
    got = {}
    for b in batches:
        data = b.to_pydict()
        got.update(zip(data["offset"], map(json.loads, data["decoded"]), strict=True))
    segment = directory / "00000000000000000000.log"
    code, out, _ = run_kdump(["--files", str(segment), "--json", "--share-group-state-decoder"])
    records = [json.loads(line) for line in out.decode().splitlines()]
    want = {o["offset"]: o["decoded"] for o in records if o["type"] == "record" and "decoded" in o}
    assert code == 0 and want and got == want
    with pytest.raises(Exception, match="decoder"):
        parse_options({"path": str(directory), "decoder": "nonsense"})
