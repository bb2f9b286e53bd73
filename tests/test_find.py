"""``kdump find``: offset and timestamp lookups agree with brute-force scans of whole partitions, read only what
the broker's read path reads, and report misses, gaps and usage errors the documented way."""

from __future__ import annotations

import builtins
import json
import math
import os
import shutil
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

import pytest
from click.testing import CliRunner

from kdump.analysis import log_search
from kdump.analysis.index_recovery import recover_indexes
from kdump.analysis.log_search import (
    BELOW_START,
    BEYOND_END,
    FOUND,
    GAP,
    NOT_FOUND,
    find_offset,
    find_timestamp,
    log_start,
)
from kdump.cli import cli
from kdump.render.json_lines import JSON_SCHEMA_VERSION
from kdump.render.json_schema import validate
from kdump.storage.file_records import FileRecords
from kdump.storage.local_log import LocalLog, find_partition_dirs
from kdump.storage.naming import offset_to_filename
from kdump.storage.offset_index import OffsetIndex
from kdump.storage.time_index import TimeIndex
from kdump.storage.timestamp_type import parse_timestamp
from tests.builder import SimpleRecord, build_v2_batch
from tests.corpus import CORPUS, FIXTURE_CORPUS
from tests.differential.kafka import run_script, script_unavailable_reason
from tests.partition_builder import BASE_TIMESTAMP, build_partition

CORPUS_DIRS = [CORPUS / "data", CORPUS / "data-kafka39-zk"]
needs_corpus = pytest.mark.skipif(not (CORPUS / "data").is_dir(), reason="../shared/kafka-corpus is absent")


# -- brute force ----------------------------------------------------------------------------------------------


@dataclass
class _Batch:
    segment: int
    position: int
    last_offset: int
    max_timestamp: int
    records: list[tuple[int, int]]  # (offset, timestamp)


def _scan_partition(directory: str) -> list[list[_Batch]]:
    """Every batch of every segment, records included, read from position 0 without any index."""
    segments = []
    for segment in LocalLog.scan(directory).log_segments:
        batches = []
        with segment.open_log() as records:
            for batch in records.batches():
                batches.append(
                    _Batch(
                        segment.base_offset,
                        batch.position,
                        batch.last_offset,
                        batch.max_timestamp,
                        [(r.offset, r.timestamp) for r in batch.records()],
                    )
                )
        segments.append(batches)
    return segments


def _expected_offset(segments: list[list[_Batch]], bases: list[int], log_start: int, offset: int):
    """The broker's answer computed the slow way: (status, segment base, batch position, record offset)."""
    if offset < log_start:
        return (BELOW_START, None, None, None)
    k = max(i for i, b in enumerate(bases) if b <= offset)
    for batches in segments[k:]:
        for b in batches:
            if b.last_offset >= offset:
                later = [o for o, _ in b.records if o >= offset]
                if later and later[0] == offset:
                    return (FOUND, b.segment, b.position, offset)
                return (GAP, b.segment, b.position, later[0] if later else None)
    return (BEYOND_END, None, None, None)


def _expected_timestamp(segments: list[list[_Batch]], bases: list[int], log_start: int, timestamp: int):
    """ListOffsets semantics the slow way: the first segment whose largest timestamp is >= T, then its first
    record with timestamp >= T and offset >= the log start offset.  (status, offset, timestamp)."""
    for base, batches in zip(bases, segments, strict=True):
        if base != bases[-1] and bases[bases.index(base) + 1] <= log_start:
            continue  # wholly below the log start: a broker deletes it
        if max((b.max_timestamp for b in batches), default=-1) >= timestamp:
            for b in batches:
                for offset, ts in b.records:
                    if ts >= timestamp and offset >= log_start:
                        return (FOUND, offset, ts)
            return (NOT_FOUND, None, None)
    return (NOT_FOUND, None, None)


def _check_partition(directory: str, timestamps: int | None = None) -> int:
    """Compare every offset (and timestamps around every record's) with the brute-force answers."""
    log = LocalLog.scan(directory)
    start = log_start(log)
    segments = _scan_partition(directory)
    bases = [s.base_offset for s in log.log_segments]
    if not bases:
        return 0
    end = max([bases[-1]] + [b.last_offset + 1 for batches in segments for b in batches])
    checked = 0
    for offset in range(max(0, min(bases[0], start.offset) - 2), end + 3):
        result = find_offset(log, offset, start)
        got = (
            result.status,
            None if result.segment is None else result.segment.base_offset,
            result.position,
            None if result.record is None else result.record.offset,
        )
        assert got == _expected_offset(segments, bases, start.offset, offset), (directory, offset)
        if result.status == BEYOND_END:
            assert result.log_end_offset == end, (directory, offset)
        checked += 1
    # Every record is found at its own batch: an invariant independent of the broker's algorithm.
    for batches in segments:
        for b in batches:
            for offset, _ts in b.records:
                if offset >= start.offset:
                    r = find_offset(log, offset, start)
                    assert (r.status, r.segment.base_offset, r.position) == (FOUND, b.segment, b.position)
    all_ts = sorted({ts for batches in segments for b in batches for _, ts in b.records})
    probes = {0, (all_ts[-1] + 1) if all_ts else 1}
    chosen = (
        all_ts if timestamps is None or len(all_ts) <= timestamps else all_ts[:: len(all_ts) // timestamps]
    )
    for ts in chosen:
        probes.update((ts - 1, ts, ts + 1))
    for ts in sorted(p for p in probes if p >= 0):
        result = find_timestamp(log, ts, start)
        got = (
            result.status,
            None if result.record is None else result.record.offset,
            None if result.record is None else result.record.timestamp,
        )
        assert got == _expected_timestamp(segments, bases, start.offset, ts), (directory, ts)
        checked += 1
    return checked


@needs_corpus
@pytest.mark.corpus
@pytest.mark.parametrize(
    "directory",
    [str(d) for root in CORPUS_DIRS if root.is_dir() for d in find_partition_dirs([root])],
    ids=lambda d: f"{Path(d).parent.name}/{Path(d).name}",
)
def test_every_offset_and_timestamp_of_every_corpus_partition(directory: str) -> None:
    assert _check_partition(directory, timestamps=400) > 0


def test_bundled_corpus_partitions() -> None:
    """The same walk over the partitions bundled in tests/fixtures (runs without ../shared)."""
    checked = 0
    for directory in find_partition_dirs([FIXTURE_CORPUS / "data"]):
        checked += _check_partition(directory, timestamps=100)
    assert checked > 0


def test_synthetic_partition_with_gaps(tmp_path: Path) -> None:
    """Gaps inside a batch, between batches and at the end of a segment; an empty batch; a segment that is
    empty; segment base offsets below their first record (as after compaction)."""
    d = tmp_path / "gaps-0"
    d.mkdir()
    ts = BASE_TIMESTAMP
    layout = {
        0: [
            build_v2_batch(
                [SimpleRecord(b"a", timestamp=ts, offset=0), SimpleRecord(b"b", timestamp=ts + 5, offset=3)]
            ),
            build_v2_batch([SimpleRecord(b"c", timestamp=ts + 2, offset=10)], base_offset=10),
            build_v2_batch([], base_offset=11, last_offset_delta=4, base_timestamp=ts, max_timestamp=ts),
            build_v2_batch([SimpleRecord(b"d" * 500, timestamp=ts + 9, offset=17)], base_offset=17),
        ],
        20: [
            build_v2_batch(
                [SimpleRecord(b"e" * 300, timestamp=ts + 1, offset=o) for o in (25, 26, 30)], base_offset=25
            ),
            build_v2_batch([SimpleRecord(b"f" * 300, timestamp=ts + 20, offset=40)], base_offset=40),
        ],
        50: [],
    }
    for base, batches in layout.items():
        log = b"".join(batches)
        (d / offset_to_filename(base, ".log")).write_bytes(log)
        rec = recover_indexes(FileRecords.from_bytes(log), base, 100)
        (d / offset_to_filename(base, ".index")).write_bytes(rec.offset_index_bytes())
        (d / offset_to_filename(base, ".timeindex")).write_bytes(rec.time_index_bytes())
    assert _check_partition(str(d)) > 0
    log = LocalLog.scan(d)
    assert find_offset(log, 1).status == GAP and find_offset(log, 1).record.offset == 3
    assert find_offset(log, 12).status == GAP  # inside the empty batch 11..15
    assert find_offset(log, 19).status == GAP and find_offset(log, 19).segment.base_offset == 20
    r = find_offset(log, 60)
    assert r.status == BEYOND_END and r.log_end_offset == 50


def test_generated_partition(tmp_path: Path) -> None:
    build_partition(str(tmp_path / "gen-0"), 40, index_interval_bytes=700, distinct_timestamps=True)
    assert _check_partition(str(tmp_path / "gen-0")) > 0


# -- damaged or missing indexes: still the right answer, with a note --------------------------------------------------


def _copy(src: Path, dst: Path) -> Path:
    shutil.copytree(src, dst)
    for p in dst.rglob("*"):
        p.chmod(0o755 if p.is_dir() else 0o644)
    dst.chmod(0o755)
    return dst


def test_damaged_indexes_do_not_mislead(tmp_path: Path) -> None:
    d = tmp_path / "dmg-0"
    build_partition(
        str(d),
        3,
        batches_per_segment=20,
        records_per_batch=1,
        index_interval_bytes=300,
        distinct_timestamps=True,
    )
    brute = _scan_partition(str(d))
    index = d / offset_to_filename(20, ".index")
    entries = list(OffsetIndex(str(index)))
    assert len(entries) > 3
    original = index.read_bytes()
    # Swap two entries' positions: entry 2 now points past the batch it names.
    data = bytearray(original)
    data[2 * 8 + 4 : 2 * 8 + 8], data[3 * 8 + 4 : 3 * 8 + 8] = (
        data[3 * 8 + 4 : 3 * 8 + 8],
        data[2 * 8 + 4 : 2 * 8 + 8],
    )
    index.write_bytes(bytes(data))
    log = LocalLog.scan(d)
    for batches in brute:
        for b in batches:
            for offset, _ in b.records:
                r = find_offset(log, offset)
                assert (r.status, r.segment.base_offset, r.position) == (FOUND, b.segment, b.position)
    r = find_offset(log, entries[2].offset)
    assert any("does not point at a valid batch" in n for n in r.notes)
    # A zero tail (never trimmed) and a missing index: not used, said so.
    index.write_bytes(original + bytes(64))
    (d / offset_to_filename(0, ".index")).unlink()
    log = LocalLog.scan(d)
    assert find_offset(log, 30).found and any("zero-filled" in n for n in find_offset(log, 30).notes)
    assert find_offset(log, 10).found and any("missing" in n for n in find_offset(log, 10).notes)
    # A time index whose first entry lies about its timestamp: the answer is still the first record at or
    # after the timestamp, found by a scan from the segment's first byte.
    tindex = d / offset_to_filename(40, ".timeindex")
    tentries = list(TimeIndex(str(tindex)))
    bad = bytearray(tindex.read_bytes())
    bad[0:8] = (tentries[0].timestamp - 1).to_bytes(8, "big")
    tindex.write_bytes(bytes(bad))
    target = tentries[0].timestamp - 1
    r = find_timestamp(LocalLog.scan(d), target)
    expected = target - BASE_TIMESTAMP - 2000 + 40
    assert r.found and (r.record.offset, r.record.timestamp) == (expected, target)
    assert any("does not match the log" in n for n in r.notes)


# -- cost: what a lookup reads does not grow with the number of segments ---------------------------------------------


class _Counter:
    def __init__(self, monkeypatch: pytest.MonkeyPatch) -> None:
        self.opens: list[str] = []
        self.probes = 0
        real_os_open = os.open
        real_open = builtins.open

        def counting_os_open(path, *args, **kwargs):  # noqa: ANN001, ANN202
            self.opens.append(os.fspath(path))
            return real_os_open(path, *args, **kwargs)

        def counting_open(file, *args, **kwargs):  # noqa: ANN001, ANN202
            self.opens.append(str(file))
            return real_open(file, *args, **kwargs)

        monkeypatch.setattr(os, "open", counting_os_open)
        monkeypatch.setattr(builtins, "open", counting_open)
        real_offset_at = OffsetIndex._offset_at
        real_timestamp_at = TimeIndex._timestamp_at

        def offset_at(index, n):  # noqa: ANN001, ANN202
            self.probes += 1
            return real_offset_at(index, n)

        def timestamp_at(index, n):  # noqa: ANN001, ANN202
            self.probes += 1
            return real_timestamp_at(index, n)

        monkeypatch.setattr(OffsetIndex, "_offset_at", offset_at)
        monkeypatch.setattr(TimeIndex, "_timestamp_at", timestamp_at)

    def reset(self) -> None:
        self.opens.clear()
        self.probes = 0


@pytest.fixture(scope="module")
def many_segments(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, list[tuple[int, int]]]:
    d = tmp_path_factory.mktemp("many") / "many-0"
    # 3,000 segments of 60 batches (~9 KiB each); index entries every ~1 KiB, so about 60 per segment.
    return d, build_partition(
        str(d), 3000, batches_per_segment=60, records_per_batch=1, index_interval_bytes=1024
    )


def test_offset_lookup_reads_o_log_n(many_segments, monkeypatch: pytest.MonkeyPatch) -> None:
    directory, segments = many_segments
    counter = _Counter(monkeypatch)
    log = LocalLog.scan(directory)  # lists the directory: no file is opened
    assert counter.opens == []
    with FileRecords(str(directory / offset_to_filename(0))) as records:
        batch_size = records.first_batch_in(0, 1 << 20).size_in_bytes
    entries = len(OffsetIndex(str(directory / offset_to_filename(0, ".index"))))
    counter.reset()
    for base, end in segments[:: len(segments) // 50]:
        for offset in (base, (base + end) // 2, end - 1):
            counter.reset()
            result = find_offset(log, offset)
            assert result.found and result.record.offset == offset
            # the segment's .log and .index, nothing else (no other segment, no checkpoint in tmp)
            assert sorted(os.path.basename(p) for p in counter.opens) == [
                offset_to_filename(base, ".index"),
                offset_to_filename(base, ".log"),
            ]
            # Kafka's binary search over the index: O(log n) probes of one segment's entries
            assert counter.probes <= 2 * math.ceil(math.log2(entries + 1)) + 2
            # one bounded scan: from the entry at or below the offset to the batch holding it
            assert result.scanned_bytes <= 1024 + 2 * batch_size


def test_timestamp_lookup_reads_12_bytes_per_segment_before_the_answer(many_segments, monkeypatch) -> None:
    directory, segments = many_segments
    counter = _Counter(monkeypatch)
    log = LocalLog.scan(directory)
    for i in (0, 1, 1500, 2999):
        counter.reset()
        target = BASE_TIMESTAMP + i * 1000  # every record of segment i has this timestamp
        result = find_timestamp(log, target)
        assert result.found and result.record.offset == segments[i][0]
        names = [os.path.basename(p) for p in counter.opens]
        # the time index of every segment up to the answer (12 bytes each, read with pread), then the
        # answer's .timeindex, .index and .log
        assert len(names) <= (i + 1) + 3 + 1
        assert names.count(offset_to_filename(segments[i][0], ".log")) == 1
        assert counter.probes <= 4 * math.ceil(math.log2(120)) + 4
        assert result.scanned_bytes <= 1024 + 2 * 200 + 1024


# -- command line ------------------------------------------------------------------------------------------------


def _run(args: list[str], cwd: Path | None = None) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "kdump", "find", *args], capture_output=True, text=True, cwd=cwd, check=False
    )


@pytest.fixture()
def partition(tmp_path: Path) -> Path:
    d = tmp_path / "logdir" / "orders-3"
    build_partition(
        str(d),
        4,
        batches_per_segment=10,
        records_per_batch=3,
        index_interval_bytes=500,
        distinct_timestamps=True,
    )
    return d


def test_text_output(partition: Path) -> None:
    r = _run(["--offset", "50", str(partition)])
    assert r.returncode == 0 and r.stderr == ""
    lines = r.stdout.splitlines()
    assert lines[0] == f"segment: {partition / offset_to_filename(30)} baseOffset: 30"
    assert lines[1].startswith(f"indexEntry: {partition / offset_to_filename(30, '.index')} slot: ")
    assert lines[2].startswith("baseOffset: 48 lastOffset: 50 count: 3 ") and " isvalid: true" in lines[2]
    assert len(lines) == 3


def test_print_data_log_matches_kdump_files(partition: Path) -> None:
    """The record line is the one `kdump files --print-data-log` prints for that record; the batch line too."""
    r = _run(["--offset", "50", "--print-data-log", str(partition)])
    dump = subprocess.run(
        [sys.executable, "-m", "kdump", "files", "--print-data-log", str(partition / offset_to_filename(30))],
        capture_output=True,
        text=True,
        check=True,
    ).stdout.splitlines()
    batch_line, record_line = r.stdout.splitlines()[2:4]
    assert record_line.startswith("| offset: 50 ") and record_line in dump
    assert batch_line in dump


def test_json_and_log_dir_with_topic_and_partition(partition: Path) -> None:
    r = _run(["--offset", "50", "--json", "--topic", "orders", "--partition", "3", str(partition.parent)])
    assert r.returncode == 0
    obj = json.loads(r.stdout)
    assert obj["segment"] == str(partition / offset_to_filename(30))
    batch = obj["batch"]
    assert (batch["baseOffset"], batch["lastOffset"], obj["offset"], obj["segmentBaseOffset"]) == (
        48,
        50,
        50,
        30,
    )
    assert obj["indexEntry"]["offset"] <= 50 and obj["position"] >= obj["indexEntry"]["position"]
    assert batch["position"] == obj["position"] and obj["indexEntry"]["entry"] >= 0
    assert obj["found"] is True and obj["gap"] is False and obj["message"] is None


def test_json_batch_and_record_are_kdump_files_objects(partition: Path) -> None:
    """find --json names its batch and record as kdump files --json does: the same objects, field for field."""
    segment = str(partition / offset_to_filename(30))
    dump = subprocess.run(
        [sys.executable, "-m", "kdump", "files", "--json", "--print-data-log", "--files", segment],
        capture_output=True,
        text=True,
        check=True,
    ).stdout
    objects = [json.loads(line) for line in dump.splitlines()]
    for offset in (30, 50, 59):
        r = _run(["--offset", str(offset), "--json", "--print-data-log", str(partition)])
        obj = json.loads(r.stdout)
        assert r.returncode == 0 and obj["version"] == JSON_SCHEMA_VERSION == 3
        batches = [o for o in objects if o["type"] == "batch" and o["position"] == obj["position"]]
        records = [o for o in objects if o["type"] == "record" and o["offset"] == offset]
        assert [obj["batch"]] == batches and [obj["record"]] == records
        assert validate(obj) == []
        assert not {"maxTimestamp", "baseOffset", "value"} & (set(obj) | set(obj["record"]))


def test_timestamp_epoch_and_iso(partition: Path) -> None:
    target = BASE_TIMESTAMP + 2000 + 7  # segment 2, record 7
    iso = "2023-11-14T22:13:22.007Z"
    assert parse_timestamp(iso) == target
    assert parse_timestamp("2023-11-14 22:13:22.007") == target  # no zone: UTC
    assert parse_timestamp("2023-11-14T23:13:22.007+01:00") == target
    for text in (str(target), iso):
        r = _run(["--timestamp", text, "--json", str(partition)])
        obj = json.loads(r.stdout)
        assert r.returncode == 0 and (obj["offset"], obj["timestamp"]) == (67, target)
    r = _run(["--timestamp", str(target), str(partition)])
    assert r.stdout.splitlines()[0] == f"offset: 67 timestamp: {target}"
    assert r.stdout.splitlines()[2].startswith("timeIndexEntry: ")


def test_misses_exit_1_with_one_line(partition: Path, tmp_path: Path) -> None:
    r = _run(["--offset", "120", str(partition)])
    assert r.returncode == 1 and r.stdout == ""
    assert (
        r.stderr
        == f"kdump: offset 120 is beyond the end of {partition}: the log end offset (the next offset to be written) is 120\n"
    )
    r = _run(["--timestamp", str(BASE_TIMESTAMP + 10**6), str(partition)])
    assert r.returncode == 1 and "no record" in r.stderr and "largest timestamp is" in r.stderr
    # below the log start offset from ../log-start-offset-checkpoint
    (partition.parent / "log-start-offset-checkpoint").write_text("0\n1\norders 3 40\n")
    r = _run(["--offset", "12", str(partition)])
    assert (
        r.returncode == 1
        and "below the log start offset 40" in r.stderr
        and "log-start-offset-checkpoint" in r.stderr
    )
    assert _run(["--offset", "12", "--log-start-offset", "0", str(partition)]).returncode == 0
    r = _run(["--offset", "12"], cwd=partition)  # the current directory, by default
    assert r.returncode == 1 and "below the log start offset 40 of . " in r.stderr
    r = _run(["--offset", "12", "--json", str(partition)])
    assert json.loads(r.stdout)["status"] == BELOW_START and r.returncode == 1


def test_gap_prints_next_batch_and_exits_1(tmp_path: Path) -> None:
    d = tmp_path / "c-0"
    d.mkdir()
    log = build_v2_batch([SimpleRecord(b"x", timestamp=1, offset=5)], base_offset=5)
    (d / offset_to_filename(0)).write_bytes(log)
    r = _run(["--offset", "2", str(d)])
    assert r.returncode == 1
    assert r.stdout.splitlines()[-1].startswith("baseOffset: 5 lastOffset: 5 ")
    assert "no record has it" in r.stderr and "the next record is offset 5" in r.stderr
    assert "missing" in r.stderr  # no .index: a note says the segment was scanned from its first byte


@pytest.mark.parametrize(
    "args",
    [
        [],
        ["--offset", "1", "--timestamp", "1"],
        ["--timestamp", "yesterday"],
        ["--timestamp", "-5"],
        ["--offset", "-1"],
        ["--offset", "1", "--topic", "orders"],
        ["--offset", "1", "/no/such/dir"],
    ],
)
def test_usage_errors_exit_2(args: list[str], partition: Path) -> None:
    r = _run(args, cwd=partition)
    assert r.returncode == 2 and "Traceback" not in r.stderr


def test_log_dir_without_topic_is_a_usage_error(partition: Path) -> None:
    r = _run(["--offset", "1", str(partition.parent)])
    assert r.returncode == 2 and "--topic and --partition" in r.stderr


def test_corrupt_batch_is_one_line_naming_file_and_byte(tmp_path: Path) -> None:
    src = FIXTURE_CORPUS / "damaged" / "crc-flip-compressed" / "codec-gzip-0"
    if not src.is_dir():
        src = CORPUS / "damaged" / "crc-flip-compressed" / "codec-gzip-0"
    if not src.is_dir():
        pytest.skip("damaged corpus case not available")
    d = _copy(src, tmp_path / "codec-gzip-0")
    r = _run(["--offset", "45", "--print-data-log", str(d)])
    assert r.returncode == 1 and "Traceback" not in r.stderr
    error = [line for line in r.stderr.splitlines() if not line.startswith("kdump: note:")]
    assert len(error) == 1 and "00000000000000000000.log: byte 918: " in error[0]


def test_click_runner_in_process(partition: Path) -> None:
    result = CliRunner().invoke(cli, ["find", "--offset", "0", str(partition)])
    assert result.exit_code == 0 and "baseOffset: 0 lastOffset: 2" in result.output


def test_module_search_result_is_usable_after_close(partition: Path) -> None:
    r = log_search.find_offset(LocalLog.scan(partition), 31)
    assert r.found and r.batch is not None and [x.offset for x in r.batch.records()] == [30, 31, 32]


@pytest.mark.skipif(not (CORPUS / "synthetic-legacy").is_dir(), reason="../shared/kafka-corpus is absent")
@pytest.mark.parametrize("name", ["legacy-v0-0", "legacy-v1-0", "legacy-mixed-0"])
def test_timestamp_record_of_legacy_batches_is_usable_after_close(name: str) -> None:
    """A legacy record reads its batch's bytes lazily: the record a timestamp search returns is the one of the
    private copy, not of the closed map (``--print-data-log`` once failed with "mmap closed")."""
    directory = CORPUS / "synthetic-legacy" / name
    log = LocalLog.scan(directory)
    expected = {}
    for segment in log.log_segments:
        with FileRecords(segment.log_path) as records:
            for batch in records.batches():
                for r in batch.records():
                    expected.setdefault(r.timestamp, (r.offset, bytes(r.key or b""), bytes(r.value or b"")))
    assert expected
    for timestamp, (offset, key, value) in sorted(expected.items())[:20]:
        r = find_timestamp(log, timestamp)
        if r.found and r.record.timestamp == timestamp:
            assert (r.record.offset, bytes(r.record.key or b""), bytes(r.record.value or b"")) == (
                offset,
                key,
                value,
            )
    out = _run(["--timestamp", "0", "--print-data-log", str(directory)])
    assert "internal error" not in out.stderr
    # magic 0 messages have no timestamp: no record is at or after 0
    assert out.stdout.count("\n| offset: ") == (0 if name == "legacy-v0-0" else 1)


def test_log_start_offset_is_the_greater_of_first_base_offset_and_checkpoint(tmp_path: Path) -> None:
    """UnifiedLog on load: max(log-start-offset-checkpoint entry, first segment's base offset); no segment, no
    log start offset (ls) -- but a search on an empty partition still starts at a positive checkpoint entry."""
    partition = tmp_path / "orders-0"
    partition.mkdir()
    assert LocalLog.scan(str(partition)).log_start_offset(7) is None
    for base in (100, 200):
        (partition / offset_to_filename(base)).write_bytes(b"")
    log = LocalLog.scan(str(partition))
    assert [log.log_start_offset(c) for c in (None, 50, 100, 150, 250)] == [100, 100, 100, 150, 250]
    (tmp_path / "log-start-offset-checkpoint").write_text("0\n1\norders 0 150\n")
    assert tuple(log_search.log_start(log)) == (150, "log-start-offset-checkpoint")
    for p in partition.iterdir():
        p.unlink()
    assert tuple(log_search.log_start(LocalLog.scan(str(partition)))) == (150, "log-start-offset-checkpoint")


def test_offset_below_every_segment_is_looked_for_in_the_first(partition: Path) -> None:
    """With a log start offset given below the first segment (its records deleted), an offset before the first
    segment is not in the partition and the next record is the first segment's first, not the last's."""
    for path in partition.glob("00000000000000000000.*"):
        path.unlink()
    r = _run(["--offset", "5", "--log-start-offset", "0", str(partition)])
    assert r.returncode == 1
    assert r.stdout.splitlines()[0] == f"segment: {partition}/00000000000000000030.log baseOffset: 30"
    assert "the next record is offset 30" in r.stderr


# -- a record that cannot be shown: the one line kdump files gives -------------------------------------------

#: control records Kafka's tool cannot print (``ControlRecordType.parseTypeId``, ``EndTransactionMarker
#: .deserializeValue``, the generated ``SnapshotHeaderRecord`` reader): (key, value)
BAD_CONTROL_RECORDS = {
    "null key": (None, b"\x00\x00\x00\x00\x00\x05"),
    "key under 4 bytes": (b"\x00\x00", b"\x00\x00\x00\x00\x00\x05"),
    "negative key version": (b"\xff\xff\x00\x01", b"\x00\x00\x00\x00\x00\x05"),
    "end-transaction value under 6 bytes": (b"\x00\x00\x00\x01", b"\x00\x00\x00\x00"),
    "end-transaction null value": (b"\x00\x00\x00\x01", None),
    "a field past the end of the message": (b"\x00\x00\x00\x03", b"\x00\x00\x00"),  # SnapshotHeader v0, cut
}


def _bad_control_segment(directory: Path, case: str) -> Path:
    key, value = BAD_CONTROL_RECORDS[case]
    directory.mkdir(parents=True)
    segment = directory / offset_to_filename(0)
    segment.write_bytes(
        build_v2_batch([SimpleRecord(b"v", key=b"k", timestamp=1)], base_offset=0)
        + build_v2_batch(
            [SimpleRecord(value, key=key, timestamp=2)],
            base_offset=1,
            is_control=True,
            producer_id=7,
            producer_epoch=0,
            is_transactional=True,
        )
    )
    return segment


def _files(segment: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "kdump", "files", "--print-data-log", "--files", str(segment)],
        capture_output=True,
        text=True,
        check=False,
    )


@pytest.mark.parametrize("case", list(BAD_CONTROL_RECORDS))
@pytest.mark.parametrize("as_json", [False, True], ids=["text", "json"])
def test_an_unprintable_control_record_is_files_one_line_error(
    tmp_path: Path, case: str, as_json: bool
) -> None:
    """Before: ``internal error (PartialLineError ...)`` (text) or the message without file and byte (JSON)."""
    segment = _bad_control_segment(tmp_path / "t-0", case)
    files = _files(segment)
    assert files.returncode == 1 and files.stderr.startswith(f"kdump: {segment}: byte 70: ")
    assert files.stderr.count("\n") == 1 and "internal error" not in files.stderr
    found = _run(["--offset", "1", "--print-data-log", *(["--json"] if as_json else []), str(segment.parent)])
    error_lines = [line for line in found.stderr.splitlines(True) if not line.startswith("kdump: note: ")]
    assert (found.returncode, error_lines) == (files.returncode, [files.stderr])
    assert found.stdout == ""  # find writes its answer at the end; an error stops it before


@pytest.mark.kafka
@pytest.mark.skipif(script_unavailable_reason() is not None, reason=str(script_unavailable_reason()))
def test_the_real_tool_stops_at_the_same_control_records(tmp_path: Path) -> None:
    """Kafka's tool prints what ``kdump files`` prints, then dies on the record (exit 1); where it throws
    InvalidRecordException, with kdump's words (a null key or value is a NullPointerException there)."""
    for i, case in enumerate(BAD_CONTROL_RECORDS):
        segment = _bad_control_segment(tmp_path / str(i) / "t-0", case)
        files = _files(segment)
        kafka = run_script(["--files", str(segment), "--print-data-log"], cwd=tmp_path)
        assert (kafka.code, kafka.out.decode()) == (1, files.stdout), case
        message = files.stderr.split(": byte 70: ", 1)[1].strip()
        if "InvalidRecordException" in kafka.err.decode():
            assert f"InvalidRecordException: {message}" in kafka.err.decode(), case
