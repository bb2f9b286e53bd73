"""Split planning of the ``kafka-log`` source without Spark: the splits of every segment cover its batches
exactly once (each split starts at a batch of the whole walk: cuts come from the offset index or the batch
headers, never from a guessed byte), small partitions are packed into few tasks, and one large segment is
cut for every core.  The oracle is the storage core's own walk of each whole segment (and, for the reader,
the records it decodes)."""

from __future__ import annotations

import json
from collections import defaultdict
from pathlib import Path

import pytest

from kdump.spark.options import OptionError, parse_options
from kdump.spark.planning import Split, pack, plan, target_split_bytes
from kdump.storage.file_records import FileRecords
from kdump.storage.local_log import LocalLog
from kdump.storage.offset_index import OffsetIndex
from tests.partition_builder import build_partition
from tests.spark_oracle import FIXTURE_TREES


def batch_positions(path: str, start: int = 0, end: int | None = None) -> list[int]:
    with FileRecords(path) as records:
        return [b.position for b in records.batches(start, end)]


def assert_splits_cover_every_batch_once(splits: list[Split]) -> int:
    """Per segment, the batches of its splits (in plan order) are the batches of the whole file, each once;
    returns how many segments were cut."""
    by_path: dict[str, list[Split]] = defaultdict(list)
    for s in splits:
        by_path[s.path].append(s)
    cut = 0
    for path, pieces in by_path.items():
        whole = batch_positions(path)
        got: list[int] = []
        for i, s in enumerate(pieces):
            if i > 0:
                assert s.start_position == pieces[i - 1].end_position, path
            if s.start_position:
                assert s.start_position in whole, f"{path}: split starts at {s.start_position}, not a batch"
            got += batch_positions(path, s.start_position, s.end_position)
        assert pieces[0].start_position == 0 and pieces[-1].end_position is None
        assert got == whole, path
        cut += len(pieces) > 1
    return cut


def assert_tasks_hold_every_split_once(result) -> None:  # noqa: ANN001
    assert [s for task in result.tasks for s in task] == result.splits
    assert all(task for task in result.tasks)


@pytest.mark.parametrize("max_bytes", ["100", "3000", "65536", "134217728"])
@pytest.mark.parametrize("min_partitions", ["1", "2", "64"])
def test_union_of_splits_is_every_batch_of_the_fixtures(max_bytes: str, min_partitions: str) -> None:
    options = {
        "paths": json.dumps(FIXTURE_TREES),
        "maxBytesPerSplit": max_bytes,
        "minPartitions": min_partitions,
        "openCostInBytes": "0",
    }
    result = plan(parse_options(options))
    cut = assert_splits_cover_every_batch_once(result.splits)
    assert_tasks_hold_every_split_once(result)
    every_segment = sum(
        1 for _, _, d in result.partitions for s in LocalLog.scan(d).log_segments if s.log_size > 0
    )
    assert len({s.path for s in result.splits}) == every_segment
    if max_bytes == "100":
        assert cut > 5  # the small limit really cut segments


def test_a_large_segment_with_a_sparse_index_is_cut_at_its_entries_for_every_core(tmp_path: Path) -> None:
    """One segment of about 6 MB whose offset index has an entry every 256 KiB: with minPartitions 4 it is
    read by 4 or more tasks, each starting at an index entry's position (a batch start), no batch twice."""
    directory = tmp_path / "big-0"
    build_partition(
        str(directory), 1, batches_per_segment=600, records_per_batch=10, value_size=1000,
        index_interval_bytes=256 * 1024,
    )  # fmt: skip
    segment = LocalLog.scan(str(directory)).log_segments[0]
    entries = {e.position for e in OffsetIndex(segment.index_path, 0).dump_entries()}
    assert 10 < len(entries) < 40  # sparse: one entry for about 25 batches
    result = plan(parse_options({"path": str(directory), "minPartitions": "4", "openCostInBytes": "0"}))
    assert len(result.splits) >= 4 and len(result.tasks) >= 4
    assert {s.start_position for s in result.splits[1:]} <= entries
    assert_splits_cover_every_batch_once(result.splits)
    sizes = [s.size for s in result.splits]
    assert max(sizes) < 2 * segment.log_size / 4  # about even
    # the default open cost does not change that: 6 MB is worth several tasks
    assert len(plan(parse_options({"path": str(directory), "minPartitions": "4"})).tasks) >= 4


def test_a_large_segment_without_an_index_is_cut_at_batch_headers(tmp_path: Path) -> None:
    directory = tmp_path / "noindex-0"
    build_partition(str(directory), 1, batches_per_segment=300, records_per_batch=10, value_size=1000)
    (directory / "00000000000000000000.index").unlink()
    result = plan(parse_options({"path": str(directory), "minPartitions": "3", "openCostInBytes": "0"}))
    assert len(result.splits) >= 3
    assert_splits_cover_every_batch_once(result.splits)


def test_many_small_partitions_are_packed_into_few_tasks(tmp_path: Path) -> None:
    for p in range(300):
        build_partition(str(tmp_path / f"orders-{p}"), 1, batches_per_segment=2)
    result = plan(parse_options({"path": str(tmp_path), "minPartitions": "2"}))
    assert len(result.splits) == 300 and len(result.partitions) == 300
    # 300 x (1.2 KB + 1 MiB open cost) / 2 cores: two or three tasks of ~128 segments, not 300 tasks
    assert 2 <= len(result.tasks) <= 4
    assert_tasks_hold_every_split_once(result)
    # minPartitions spreads them over more tasks when asked
    assert len(plan(parse_options({"path": str(tmp_path), "minPartitions": "16"})).tasks) >= 16


def test_packing_is_sparks_file_partition_rule() -> None:
    """FilePartition.getFilePartitions: a task is closed when the next piece would take it past the target;
    each piece adds the open cost."""

    def piece(size: int) -> Split:
        return Split("x.log", "t", 0, 0, size=size)

    sizes = [5, 5, 5, 20, 1, 1, 1, 1]
    tasks = pack([piece(s) for s in sizes], target=12, open_cost=1)
    assert [[s.size for s in t] for t in tasks] == [[5, 5], [5], [20], [1, 1, 1, 1]]
    assert target_split_bytes(total=100, min_partitions=4, max_split_bytes=1000, open_cost=10) == 25
    assert target_split_bytes(total=100, min_partitions=40, max_split_bytes=1000, open_cost=10) == 10
    assert target_split_bytes(total=10**12, min_partitions=4, max_split_bytes=1000, open_cost=10) == 1000


def test_split_options_are_checked() -> None:
    for bad in ({"minPartitions": "0"}, {"minPartitions": "x"}, {"openCostInBytes": "-1"}):
        with pytest.raises(OptionError):
            parse_options({"path": "/x", **bad})
