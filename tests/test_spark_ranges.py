"""Offset ranges (startingOffsets/endingOffsets, and the offset filters pushed down by either engine) give the
rows of the whole read in that range: :func:`kdump.spark.reader.read_split` over the planner's splits for a range
equals the full read filtered by offset, on every fixture partition, legacy compressed wrappers included (whose
offset is their last inner record's: a range ending inside one used to end before it, and an offset range on
``legacy-v1-kpy`` gave no row).  Pure Python, no Spark."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

import pytest

from tests.spark_oracle import FIXTURE_TREES

pytest.importorskip("pyarrow")

from kdump.spark.options import Pushed, parse_options  # noqa: E402
from kdump.spark.planning import partition_dirs, plan  # noqa: E402
from kdump.spark.reader import read_split  # noqa: E402


def offsets(directory: str, lo: int | None = None, hi: int | None = None) -> list[tuple[str, int]]:
    selection = parse_options({"path": directory})
    selection = replace(selection, pushed=Pushed(offset_lo=lo, offset_hi=hi))
    out = []
    for split in plan(selection).splits:
        for batch in read_split(split, selection.read):
            out += [(Path(split.path).name, o) for o in batch.column("offset").to_pylist()]
    return sorted(out)


@pytest.mark.parametrize("directory", partition_dirs(FIXTURE_TREES), ids=lambda d: Path(d).name)
def test_offset_ranges_are_the_full_read_filtered(directory: str) -> None:
    full = offsets(directory)
    if not full:
        pytest.skip("no rows")
    top = max(o for _, o in full)
    ranges = [(0, 1), (1, 3), (top // 3, top // 2 + 1), (top, top + 1), (top // 2, None), (None, top // 2)]
    for lo, hi in ranges:
        want = [(n, o) for n, o in full if (lo is None or o >= lo) and (hi is None or o < hi)]
        assert offsets(directory, lo, hi) == want, (lo, hi)
