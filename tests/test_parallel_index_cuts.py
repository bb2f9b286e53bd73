"""``kdump files`` cuts a big segment for its workers where the segment's offset index says batches start
(:func:`kdump.commands.parallel.index_bounds`), or without an index where a CRC-checked batch header stands near
each cut (:func:`kdump.commands.parallel.probe_bounds`), shallow dumps included, and trusts none of it: a chunk whose walk
does not end where the next one starts hands over to the sequential code.  Whatever the index says -- right,
shifted off the batch starts, another segment's, garbage -- and whatever the log holds (a corrupt size field, a
torn tail), the output is the sequential run's byte for byte: stdout, stderr, exit status.  The sequential run is
the path the corpus replay holds to Kafka's tool."""

from __future__ import annotations

import os
import struct
import subprocess
import sys
from pathlib import Path

import pytest

from kdump.commands import parallel
from kdump.storage.file_records import FileRecords
from tests.partition_builder import build_partition

SEGMENT = "00000000000000000000.log"
INDEX = "00000000000000000000.index"
OPTIONS = [[], ["--deep-iteration"], ["--print-data-log"]]


def kdump(path: Path, options: list[str], workers: int, chunk: int = 20_000) -> subprocess.CompletedProcess:
    env = dict(
        os.environ, KDUMP_WORKERS=str(workers), KDUMP_PARALLEL_MIN_BYTES="0", KDUMP_CHUNK_BYTES=str(chunk)
    )
    return subprocess.run(
        [sys.executable, "-m", "kdump", "files", "--files", str(path), *options],
        env=env,
        capture_output=True,
        timeout=120,
    )


def assert_same(
    path: Path, options: list[str], workers: int = 2, chunk: int = 20_000
) -> subprocess.CompletedProcess:
    sequential = kdump(path, options, 1)
    cut = kdump(path, options, workers, chunk)
    assert cut.stdout == sequential.stdout
    assert cut.stderr == sequential.stderr
    assert cut.returncode == sequential.returncode
    return sequential


@pytest.fixture(scope="module")
def partition(tmp_path_factory: pytest.TempPathFactory) -> Path:
    directory = tmp_path_factory.mktemp("cuts") / "orders-0"
    build_partition(str(directory), 1, batches_per_segment=400, records_per_batch=5, distinct_timestamps=True)
    return directory


def batch_starts(log: Path) -> set[int]:
    return {b.position for b in FileRecords(str(log)).batches()}


def copy_with_index(partition: Path, tmp_path: Path, index: bytes, log: bytes | None = None) -> Path:
    directory = tmp_path / "orders-0"
    directory.mkdir()
    (directory / SEGMENT).write_bytes((partition / SEGMENT).read_bytes() if log is None else log)
    (directory / INDEX).write_bytes(index)
    return directory / SEGMENT


def test_the_index_cuts_the_segment_at_batch_starts(partition: Path) -> None:
    log = partition / SEGMENT
    bounds = parallel.index_bounds(str(log), FileRecords(str(log)), 20_000)
    assert bounds is not None and len(bounds) >= 10
    assert bounds[0][0] == 0 and bounds[-1][1] is None
    assert {start for start, _ in bounds} <= batch_starts(log)


@pytest.mark.parametrize("options", OPTIONS, ids=["shallow", "deep", "print"])
@pytest.mark.parametrize("workers", [2, 3])
def test_cut_at_the_index_equals_sequential(partition: Path, options: list[str], workers: int) -> None:
    done = assert_same(partition / SEGMENT, options, workers)
    assert done.returncode == 0 and done.stdout.count(b"baseOffset:") == 400


def _entries(index: bytes) -> list[tuple[int, int]]:
    return [struct.unpack_from(">ii", index, i) for i in range(0, len(index), 8)]


def _index(entries: list[tuple[int, int]]) -> bytes:
    return b"".join(struct.pack(">ii", o, p) for o, p in entries)


@pytest.mark.parametrize("case", ["shifted", "other-segment", "descending", "past-the-end", "zeros-after"])
@pytest.mark.parametrize("options", OPTIONS, ids=["shallow", "deep", "print"])
def test_a_wrong_index_costs_no_byte(partition: Path, tmp_path: Path, case: str, options: list[str]) -> None:
    entries = _entries((partition / INDEX).read_bytes())
    if case == "shifted":  # every position 7 bytes into a batch: every cut is inside one
        wrong = [(o, p + 7) for o, p in entries]
    elif case == "other-segment":  # a segment of bigger batches: its positions fall anywhere
        other = tmp_path / "other"
        build_partition(str(other), 1, batches_per_segment=120, records_per_batch=17)
        wrong = _entries((other / INDEX).read_bytes())
    elif case == "descending":
        wrong = [(o, p) for o, p in reversed(entries)]
    elif case == "past-the-end":
        wrong = [(o, p + (1 << 30)) for o, p in entries]
    else:  # an active segment's preallocated index: zeros after the entries
        wrong = entries
    index = _index(wrong) + (b"\0" * 8 * 1000 if case == "zeros-after" else b"")
    log = copy_with_index(partition, tmp_path, index)
    if case == "shifted":
        bounds = parallel.index_bounds(str(log), FileRecords(str(log)), 20_000)
        assert bounds is not None and not {s for s, _ in bounds[1:]} & batch_starts(log)  # take-over is run
    done = assert_same(log, options)
    assert done.returncode == 0 and done.stdout.count(b"baseOffset:") == 400


@pytest.mark.parametrize("damage", ["size-below-minimum", "torn-tail", "crc-flip"])
@pytest.mark.parametrize("options", OPTIONS, ids=["shallow", "deep", "print"])
def test_damage_after_a_cut_is_the_sequential_runs(
    partition: Path, tmp_path: Path, damage: str, options: list[str]
) -> None:
    log = bytearray((partition / SEGMENT).read_bytes())
    starts = sorted(batch_starts(partition / SEGMENT))
    middle = starts[len(starts) * 2 // 3]
    if damage == "size-below-minimum":  # Kafka's tool dies there: CorruptRecordException
        struct.pack_into(">i", log, middle + 8, 5)
    elif damage == "torn-tail":
        del log[middle + 30 :]
    else:
        log[middle + 70] ^= 0xFF  # a record byte: the batch's CRC no longer matches
    path = copy_with_index(partition, tmp_path, (partition / INDEX).read_bytes(), bytes(log))
    done = assert_same(path, options)
    if damage == "size-below-minimum":
        assert done.returncode == 1 and b"smaller than minimum record overhead" in done.stderr


# -- without an index: cuts at batch headers found by their CRC (probe_bounds) ----------------------------------


@pytest.mark.parametrize("options", OPTIONS, ids=["shallow", "deep", "print"])
def test_without_an_index_the_probes_cut_at_batch_starts(
    partition: Path, tmp_path: Path, options: list[str]
) -> None:
    directory = tmp_path / "orders-0"
    directory.mkdir()
    log = directory / SEGMENT
    log.write_bytes((partition / SEGMENT).read_bytes())
    assert parallel.index_bounds(str(log), FileRecords(str(log)), 20_000) is None
    bounds = parallel.probe_bounds(str(log), FileRecords(str(log)), 20_000)
    assert bounds is not None and len(bounds) >= 10
    assert {start for start, _ in bounds} <= batch_starts(log)
    done = assert_same(log, options)
    assert done.returncode == 0 and done.stdout.count(b"baseOffset:") == 400


@pytest.mark.parametrize("options", OPTIONS, ids=["shallow", "deep", "print"])
def test_a_batch_inside_a_value_fools_the_probe_and_costs_no_byte(tmp_path: Path, options: list[str]) -> None:
    """Record values holding two whole, valid batches: a probe landing inside an outer batch finds the inner
    one (its CRC right, a header after it), a cut off the walk's chain; the chunk before it hands over."""
    from tests.builder import SimpleRecord, build_v2_batch

    inner = build_v2_batch([SimpleRecord(b"i" * 40, key=b"inner")], base_offset=7)
    value = inner + inner
    batches = [
        build_v2_batch([SimpleRecord(value, key=b"k%d" % j) for j in range(3)], base_offset=b * 3)
        for b in range(300)
    ]
    size = len(batches[0])
    assert {len(b) for b in batches} == {size} and 40 < batches[0].find(inner) < 100
    chunk = size * 25 + 40  # every probe starts 40 bytes into an outer batch, before the inner ones
    directory = tmp_path / "orders-0"
    directory.mkdir()
    path = directory / SEGMENT
    path.write_bytes(b"".join(batches))
    bounds = parallel.probe_bounds(str(path), FileRecords(str(path)), chunk)
    assert bounds is not None
    assert {start for start, _ in bounds[1:]} - batch_starts(path)  # cuts inside a value: hand-overs
    done = assert_same(path, options, chunk=chunk)
    assert done.returncode == 0 and done.stdout.count(b"baseOffset:") == 300
