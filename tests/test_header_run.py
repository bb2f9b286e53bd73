"""Runs of plain batch headers (``kdump.analysis.header_run``): the C loop (``_speedups.header_run``) and its
pure-Python twin give the same answer at every batch of the corpus, of a mixed synthetic partition and of
damaged copies; and ``kdump verify`` and ``kdump report`` give the same facts with runs as with every batch
handed to every reader one by one (runs off), on the corpus, the broker fixture and damaged data."""

from __future__ import annotations

import json
import os
import random
import shutil
from bisect import bisect_left, bisect_right
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

from kdump.analysis import header_run as hr
from kdump.analysis.index_recovery import recover_indexes
from kdump.analysis.index_verification import _OffsetIndexChecker, _TimeIndexChecker
from kdump.cli import cli
from kdump.storage import record_batch
from kdump.storage.checksum import crc32c
from kdump.storage.control_record import ControlRecordType
from kdump.storage.file_records import FileRecords
from kdump.storage.naming import offset_to_filename
from kdump.storage.offset_index import OffsetIndex
from kdump.storage.time_index import TimeIndex
from tests.builder import GZIP, SimpleRecord, build_end_txn_marker_batch, build_v2_batch
from tests.corpus import CORPUS, FIXTURE_CORPUS, REPO, corpus_available

C_RUN = getattr(record_batch._SPEEDUPS, "header_run", None)
needs_c = pytest.mark.skipif(
    C_RUN is None, reason="the C accelerator is not built (or KDUMP_PURE_PYTHON is set)"
)
BROKER = REPO / "tests" / "fixtures" / "broker"
NOW = "2026-12-01T00:00:00Z"
T0 = 1_700_000_000_000


def mixed_partition(directory: Path, seed: int, *, segments: int = 3, batches: int = 700) -> None:
    """A partition the runs must stop in: 12 producers (a run takes 8), none on some batches, gzip batches,
    transactions with their markers, leader-epoch changes, offset gaps, silences, batches without a
    timestamp, and the indexes a broker writes (every 700 bytes)."""
    rng = random.Random(seed)
    directory.mkdir(parents=True, exist_ok=True)
    offset, ts, epoch = 0, T0, 0
    open_txn: dict[int, bool] = {}
    for _ in range(segments):
        base = offset
        log = bytearray()
        for _ in range(batches):
            roll = rng.random()
            if roll < 0.01:
                epoch += 1
            if roll > 0.995:
                offset += rng.randint(1, 5)  # a gap
            ts += rng.choice([0, 1, 5, 20, 3_600_000]) if rng.random() < 0.05 else rng.randint(0, 3)
            pid = rng.choice([-1, -1, *range(100, 112)])
            if pid >= 0 and open_txn.get(pid) and rng.random() < 0.3:
                kind = ControlRecordType.ABORT if rng.random() < 0.5 else ControlRecordType.COMMIT
                log += build_end_txn_marker_batch(
                    kind,
                    coordinator_epoch=0,
                    producer_id=pid,
                    producer_epoch=0,
                    base_offset=offset,
                    timestamp=ts,
                )
                open_txn[pid] = False
                offset += 1
                continue
            txn = pid >= 0 and rng.random() < 0.05
            if txn:
                open_txn[pid] = True
            n = rng.randint(1, 6)
            records = [SimpleRecord(b"v" * rng.randint(0, 300), key=b"k%d" % rng.randint(0, 50), timestamp=ts + j)
                       for j in range(n)]  # fmt: skip
            kw: dict[str, Any] = {}
            if rng.random() < 0.02:
                kw["max_timestamp"] = -1  # no timestamp
            log += build_v2_batch(
                records,
                base_offset=offset,
                compression=GZIP if rng.random() < 0.2 else 0,
                producer_id=pid,
                producer_epoch=0 if pid >= 0 else -1,
                base_sequence=0 if pid >= 0 else -1,
                partition_leader_epoch=epoch,
                is_transactional=txn or bool(pid >= 0 and open_txn.get(pid)),
                **kw,
            )
            offset += n
        data = bytes(log)
        (directory / offset_to_filename(base, ".log")).write_bytes(data)
        recovered = recover_indexes(FileRecords.from_bytes(data), base, 700)
        (directory / offset_to_filename(base, ".index")).write_bytes(recovered.offset_index_bytes())
        (directory / offset_to_filename(base, ".timeindex")).write_bytes(recovered.time_index_bytes())


def damage(directory: Path, seed: int, flips: int = 6) -> None:
    """Flip bytes here and there in the logs and indexes of ``directory``."""
    rng = random.Random(seed)
    files = sorted(p for p in directory.iterdir() if p.suffix in (".log", ".index", ".timeindex"))
    for _ in range(flips):
        path = rng.choice(files)
        data = bytearray(path.read_bytes())
        if data:
            data[rng.randrange(len(data))] ^= 1 << rng.randrange(8)
            path.write_bytes(bytes(data))


def _segments(root: Path) -> list[tuple[Path, int]]:
    out = []
    for log in sorted(root.rglob("*.log")):
        try:
            out.append((log, int(log.stem)))
        except ValueError:
            continue
    return out


def _compare_at_every_batch(log: Path, base_offset: int, rng: random.Random) -> int:
    """C and twin from every batch start of ``log``, with the limits the readers would give there (and random
    ones); returns how many runs were compared."""
    assert C_RUN is not None
    data = log.read_bytes()
    fr = FileRecords.from_bytes(data)
    index = log.with_suffix(".index")
    timeindex = log.with_suffix(".timeindex")
    offset_pending = time_pending = None
    if index.exists():
        offset_pending = _OffsetIndexChecker(OffsetIndex(str(index), base_offset), []).pending
    if timeindex.exists():
        time_pending = _TimeIndexChecker(TimeIndex(str(timeindex), base_offset), [], {}).pending
    fd = os.open(log, os.O_RDONLY)
    try:
        return _compare_runs(log, base_offset, rng, data, fr, fd, offset_pending, time_pending)
    finally:
        os.close(fd)


def _compare_runs(
    log: Path,
    base_offset: int,
    rng: random.Random,
    data: bytes,
    fr: FileRecords,
    fd: int,
    offset_pending: Any,
    time_pending: Any,
) -> int:
    assert C_RUN is not None
    compared = 0
    try:
        batches = list(fr.batches())
    except Exception:  # damaged: the batches before the damage
        batches = []
        try:
            for b in fr.batches():
                batches.append(b)
        except Exception:
            pass
    for i, batch in enumerate(batches):
        if batch.magic != 2:
            continue
        pos = batch.position + batch.size_in_bytes
        # the entries a checker still holds after this batch: offset entries at or after the next position, time
        # entries after the batch's last offset (keys ascending)
        offsets = (
            None
            if offset_pending is None
            else (*offset_pending.columns()[:2], bisect_left(offset_pending.keys, pos))
        )
        times = (
            None
            if time_pending is None
            else (*time_pending.columns()[:2], bisect_right(time_pending.keys, batch.last_offset))
        )
        limits = (
            rng.choice([base_offset, base_offset + rng.randint(0, 50)]),
            batch.last_offset,
            batch.partition_leader_epoch,
            rng.choice([-1, batch.max_timestamp, batch.max_timestamp + 5]),
            rng.choice([hr.NO_LIMIT, pos + rng.randint(0, 20_000), 0]),
            rng.choice([hr.NO_LIMIT, 1, 2, 7]),
            rng.randint(0, 8),
            rng.choice([hr.NO_LIMIT, 1, 3, 50]),
            rng.choice([-1, batch.max_timestamp]),
        )
        wanted_last = rng.choice([None, frozenset(), frozenset(b.last_offset for b in batches[i + 1 :: 7])])
        wanted_base = rng.choice([None, {b.base_offset for b in batches[i + 1 :: 11]}])
        stop = rng.choice([len(data), pos + rng.randint(0, 40_000)])
        crc = rng.choice([crc32c, None])  # None: kdump report's header pass, no CRC checked
        args = (data, pos, len(data), stop, crc, limits, offsets, times, wanted_last, wanted_base)
        expected = C_RUN(*args)
        assert expected == hr.header_run_py(*args), (log, pos, crc)
        # read from a file descriptor with pread (kdump report's header pass), in C and by the twin
        assert C_RUN(fd, *args[1:]) == expected == hr.header_run_py(fd, *args[1:]), (log, pos, crc, "fd")
        compared += 1
    return compared


@needs_c
def test_c_and_twin_agree_on_the_corpus() -> None:
    rng = random.Random(1)
    roots = [FIXTURE_CORPUS] + ([CORPUS] if corpus_available() else [])
    compared = sum(_compare_at_every_batch(log, base, rng) for root in roots for log, base in _segments(root))
    assert compared > 200


@needs_c
@pytest.mark.parametrize("seed", [1, 2, 3])
def test_c_and_twin_agree_on_mixed_and_damaged_data(tmp_path: Path, seed: int) -> None:
    rng = random.Random(seed)
    part = tmp_path / "mixed-0"
    mixed_partition(part, seed, segments=2, batches=400)
    compared = sum(_compare_at_every_batch(log, base, rng) for log, base in _segments(part))
    damage(part, seed, flips=20)
    compared += sum(_compare_at_every_batch(log, base, rng) for log, base in _segments(part))
    assert compared > 500


def test_most_batches_go_in_long_runs(tmp_path: Path) -> None:
    """A run is many batches, not one: on the mixed partition most batches are read in runs."""
    from kdump.analysis.log_verification import verify_log_segment
    from kdump.storage.local_log import LocalLog

    part = tmp_path / "mixed-0"
    mixed_partition(part, 7, segments=1, batches=600)
    visitor = _Counting()
    verify_log_segment(LocalLog.scan(str(part)).log_segments[0], also=[visitor])
    assert sum(visitor.taken) > 400 and max(visitor.taken) > 10, visitor.taken


class _Counting:
    """A segment reader that takes runs and keeps their lengths."""

    runs = True

    def __init__(self) -> None:
        self.taken: list[int] = []

    def opened(self, records: FileRecords) -> None:
        pass

    def batch(self, batch: Any) -> None:
        pass

    def done(self, records: FileRecords, valid: int) -> None:
        pass

    def failed(self, error: Exception) -> None:
        pass

    def limit(self, limits: hr.RunLimits) -> None:
        pass

    def run(self, run: hr.HeaderRun) -> None:
        self.taken.append(run.batches)


def _lines(*args: str) -> tuple[int, list[Any]]:
    result = CliRunner().invoke(cli, list(args))
    assert "Traceback" not in result.stderr and "internal error" not in result.stderr, result.stderr
    return result.exit_code, [json.loads(line) for line in result.stdout.splitlines()]


def _both_ways(monkeypatch: pytest.MonkeyPatch, *args: str) -> None:
    monkeypatch.setenv("KDUMP_WORKERS", "1")
    monkeypatch.setattr(hr, "ENABLED", True)
    with_runs = _lines(*args)
    monkeypatch.setattr(hr, "ENABLED", False)
    without = _lines(*args)
    assert with_runs == without


def _roots(tmp_path: Path) -> list[Path]:
    mixed = tmp_path / "mixed" / "mixed-0"
    mixed_partition(mixed, 11)
    damaged = tmp_path / "damaged" / "mixed-0"
    shutil.copytree(mixed, damaged)
    damage(damaged, 12)
    roots = [BROKER, FIXTURE_CORPUS / "data", mixed.parent, damaged.parent]
    if corpus_available():
        roots += [CORPUS / "data"]
    return roots


def test_verify_is_the_same_with_runs(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    for root in _roots(tmp_path):
        _both_ways(monkeypatch, "verify", "--json", str(root))
        _both_ways(monkeypatch, "verify-index", "--json", str(root))


def test_report_is_the_same_with_runs(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    for root in _roots(tmp_path):
        _both_ways(monkeypatch, "report", "--json", "--now", NOW, str(root))
        _both_ways(monkeypatch, "report", "--json", "--crc", "--now", NOW, str(root))


def test_damaged_corpus_cases_are_the_same_with_runs(monkeypatch: pytest.MonkeyPatch) -> None:
    root = FIXTURE_CORPUS / "damaged"
    for case in sorted(p for p in root.iterdir() if p.is_dir()):
        _both_ways(monkeypatch, "verify", "--json", str(case))
        _both_ways(monkeypatch, "verify-index", "--json", str(case))  # runs of headers alone: no CRC judged
        _both_ways(monkeypatch, "report", "--json", "--now", NOW, str(case))
        _both_ways(monkeypatch, "report", "--json", "--crc", "--now", NOW, str(case))


def test_runs_are_read_in_c_or_by_the_twin() -> None:
    expected = C_RUN if C_RUN is not None and not os.environ.get("KDUMP_PURE_PYTHON") else hr.header_run_py
    assert hr.header_run is expected
