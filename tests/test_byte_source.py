"""The byte-source seam (kdump.storage.byte_source): a segment, its indexes and the state files read from bytes
in memory or through ranged reads give exactly what the local memory-mapped path gives (the path the corpus
replay checks against Kafka's tool), and a ranged walk fetches each byte once, a window at a time."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from kdump.storage.byte_source import InMemory, LocalFile, RangedSource
from kdump.storage.checkpoint import read_checkpoint
from kdump.storage.file_records import FileRecords
from kdump.storage.offset_index import OffsetIndex
from kdump.storage.producer_snapshot import read_producer_snapshot
from kdump.storage.time_index import TimeIndex
from kdump.storage.transaction_index import TransactionIndex
from tests.corpus import FIXTURE_CORPUS

DATA = FIXTURE_CORPUS / "data"
SEGMENTS = sorted(p for p in DATA.glob("*/*") if p.suffix in (".log", ".checkpoint"))


def _ranged(path: Path, read_ahead: int) -> RangedSource:
    data = path.read_bytes()
    return RangedSource(str(path), len(data), lambda a, b: data[a:b], read_ahead=read_ahead)


def _walk(records: FileRecords) -> list[tuple[object, ...]]:
    out: list[tuple[object, ...]] = []
    with records:
        for batch in records.batches():
            out.append(
                (batch.position, batch.base_offset, batch.last_offset, batch.checksum, batch.is_valid())
            )
            out.extend((r.offset, r.timestamp, r.key, r.value) for r in batch.records())
    return out


def test_the_fixture_segments_are_there() -> None:
    assert len(SEGMENTS) >= 10


@pytest.mark.parametrize("path", SEGMENTS, ids=lambda p: f"{p.parent.name}/{p.name}")
@pytest.mark.parametrize("read_ahead", [1, 333, 1 << 20])
def test_ranged_and_in_memory_walks_equal_the_local_one(path: Path, read_ahead: int) -> None:
    local = _walk(FileRecords(str(path)))
    assert local == _walk(FileRecords.open(LocalFile(path)))
    assert local == _walk(FileRecords.open(InMemory(path.read_bytes(), str(path))))
    source = _ranged(path, read_ahead)
    assert local == _walk(FileRecords.open(source))
    # every byte the walk needed fetched once: the batches cover the file up to its torn tail at most
    assert source.bytes_fetched <= os.path.getsize(path)
    assert source.requests >= 1 or os.path.getsize(path) == 0


def test_a_ranged_walk_fetches_a_window_at_a_time() -> None:
    path = DATA / "plain-0" / "00000000000000000000.log"
    size = os.path.getsize(path)
    source = _ranged(path, 256)
    _walk(FileRecords.open(source))
    assert source.bytes_fetched == size
    # about one request per read-ahead window (a batch longer than a window is one request)
    assert size // 256 // 2 <= source.requests <= size // 256 + 2


def test_max_bytes_is_honoured_through_a_ranged_source() -> None:
    path = DATA / "plain-0" / "00000000000000000000.log"
    local = _walk(FileRecords(str(path), max_bytes=1000))
    source = _ranged(path, 256)
    assert _walk(FileRecords.open(source, max_bytes=1000)) == local
    assert source.bytes_fetched < os.path.getsize(path)


@pytest.mark.parametrize("suffix", [".index", ".timeindex", ".txnindex"])
def test_indexes_from_any_source_equal_the_mapped_ones(suffix: str) -> None:
    kinds = {".index": OffsetIndex, ".timeindex": TimeIndex, ".txnindex": TransactionIndex}
    files = sorted(DATA.glob(f"*/*{suffix}"))
    if not files:
        pytest.skip(f"no {suffix} among the fixtures")
    cls = kinds[suffix]
    for path in files:
        mapped = list(cls(str(path)))
        assert list(cls.open(InMemory(path.read_bytes(), str(path)))) == mapped
        assert list(cls.open(_ranged(path, 7))) == mapped


def test_state_files_and_snapshots_from_any_source() -> None:
    names = ["replication-offset-checkpoint", "meta.properties", "log-start-offset-checkpoint"]
    from kdump.storage.offset_checkpoint import read_offset_checkpoint

    assert read_offset_checkpoint(
        InMemory((DATA / names[0]).read_bytes(), str(DATA / names[0]))
    ) == read_checkpoint(DATA / names[0])
    for path in sorted(DATA.glob("*/*.snapshot")):
        assert read_producer_snapshot(_ranged(path, 5)) == read_producer_snapshot(path)
