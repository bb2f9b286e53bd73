"""A short, deterministic fuzzing run of every parser (the long run: ``python -m tests.fuzz``, see README,
Hardening).  Seeds come from built files and the bundled fixtures only, so the run is the same everywhere."""

from __future__ import annotations

import os
import tempfile
import time
from pathlib import Path

import pytest

from tests.fuzz.harness import build_targets, fuzz_target

#: Inputs per target: about three seconds in all (on tmpfs).
ITERATIONS = {
    "segment": 600,
    "kraft-snapshot": 150,
    "offset-index": 250,
    "time-index": 150,
    "txn-index": 300,
    "producer-snapshot": 300,
    "state-file": 300,
    "internal-topic": 250,
}
TARGETS = build_targets(None)


def test_every_target_is_fuzzed() -> None:
    assert set(ITERATIONS) == set(TARGETS)
    assert all(len(t.seeds) >= 3 for t in TARGETS.values())


def _workdir() -> tempfile.TemporaryDirectory[str]:
    # tmpfs when there is one: each input is written to disk, and salvage fsyncs what it writes
    shm = "/dev/shm" if os.path.isdir("/dev/shm") and os.access("/dev/shm", os.W_OK) else None
    return tempfile.TemporaryDirectory(prefix="kdump-fuzz-", dir=shm)


@pytest.mark.parametrize("name", sorted(ITERATIONS))
def test_fuzz(name: str) -> None:
    with _workdir() as work:
        done, findings = fuzz_target(
            TARGETS[name], seed=0, start=0, iterations=ITERATIONS[name], workdir=Path(work), timeout=20
        )
    assert done == ITERATIONS[name]
    assert not findings, "\n\n".join(f.describe() for f in findings[:3])


def test_fuzz_segments_read_through_small_windows(monkeypatch: pytest.MonkeyPatch) -> None:
    """The segment target again with compressed payloads read a few bytes at a time (the path of payloads over
    16 MiB) and every key and value a view: the windowed readers and the pieces of text are fuzzed too."""
    from kdump.storage import legacy_record, record_batch

    for module in (record_batch, legacy_record):
        monkeypatch.setattr(module, "STREAMED_RECORDS_BYTES", 0)
        monkeypatch.setattr(module, "WINDOW_BYTES", 7)
    monkeypatch.setattr(record_batch, "MAX_EAGER_BYTES", 0)
    monkeypatch.setattr(record_batch, "ACCELERATOR", None)  # its own bound for views is 1 MiB
    with _workdir() as work:
        done, findings = fuzz_target(
            TARGETS["segment"], seed=1, start=0, iterations=300, workdir=Path(work), timeout=20
        )
    assert done == 300
    assert not findings, "\n\n".join(f.describe() for f in findings[:3])


def test_the_harness_reports_what_it_is_looking_for(monkeypatch: pytest.MonkeyPatch) -> None:
    """A planted bug (an IndexError for long inputs), a KdumpError without a position and a hang are findings,
    each with what it takes to reproduce it."""
    from kdump.errors import KdumpError
    from kdump.storage.transaction_index import TransactionIndex

    real = TransactionIndex.aborted_txns

    def planted(self: TransactionIndex) -> list:
        if self.entry_count > 3:
            raise IndexError("planted")
        if self.entry_count == 0:
            raise KdumpError("planted, without a position", path=self.path)
        if self.entry_count == 1 and self.partial_tail_length == 24:
            time.sleep(5)
        return real(self)

    monkeypatch.setattr(TransactionIndex, "aborted_txns", planted)
    with _workdir() as work:
        _, findings = fuzz_target(
            TARGETS["txn-index"], seed=0, start=0, iterations=60, workdir=Path(work), timeout=0.1
        )
    kinds = {f.kind for f in findings}
    assert kinds == {"uncaught IndexError", "unlocated error", "hang"}, kinds
    planted_error = next(f for f in findings if f.kind == "uncaught IndexError")
    assert "planted" in planted_error.detail and planted_error.target == "txn-index"
    assert f"iteration={planted_error.iteration}" in planted_error.describe()
