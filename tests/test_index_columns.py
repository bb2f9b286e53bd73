"""An index read as two int64 columns (``kdump._speedups.index_columns`` and its pure-Python twin
``index_verification.index_columns_py``): the same columns and order flags on every index of the corpus and on
random slots (in order, out of order, equal neighbours, negative and large bases), and the same as reading the
index entry by entry (``OffsetIndex`` / ``TimeIndex``); and the index checkers' pending entries
(``header_run.IndexEntries``) met in the order of the old tuple lists."""

from __future__ import annotations

import random
import struct
from array import array
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from kdump.analysis import index_verification as iv
from kdump.analysis.header_run import IndexEntries
from kdump.storage import record_batch
from kdump.storage.offset_index import OffsetIndex
from kdump.storage.time_index import TimeIndex
from tests.corpus import CORPUS, FIXTURE_CORPUS, corpus_available

C_COLUMNS: Callable[..., Any] | None = getattr(record_batch._SPEEDUPS, "index_columns", None)
needs_c = pytest.mark.skipif(
    C_COLUMNS is None, reason="the C accelerator is not built (or KDUMP_PURE_PYTHON is set)"
)


def _int64(data: bytes) -> list[int]:
    column = array("q")
    column.frombytes(data)
    return column.tolist()


def _random_slots(rng: random.Random, entry_size: int, n: int, ordered: bool) -> bytes:
    out = bytearray()
    a, b = rng.randint(-5, 5), rng.randint(-5, 5)
    for _ in range(n):
        if ordered:
            a += rng.choice([0, 1, 1, 7, 1 << 20])
            b += rng.choice([0, 1, 1, 9, 1 << 16])
        else:
            a, b = rng.randint(-(1 << 31), (1 << 31) - 1), rng.randint(-(1 << 31), (1 << 31) - 1)
        a = max(-(1 << 31), min(a, (1 << 31) - 1))
        b = max(-(1 << 31), min(b, (1 << 31) - 1))
        if entry_size == 8:
            out += struct.pack(">ii", a, b)
        else:
            out += struct.pack(">qi", a * rng.choice([1, 1 << 20]), b)
    return bytes(out + bytes(rng.randint(0, entry_size - 1)))  # a partial slot at the end is not read


@needs_c
@pytest.mark.parametrize("seed", range(6))
def test_c_and_twin_agree_on_random_slots(seed: int) -> None:
    assert C_COLUMNS is not None
    rng = random.Random(seed)
    for _ in range(60):
        entry_size = rng.choice([8, 12])
        data = _random_slots(rng, entry_size, rng.choice([0, 1, 2, 3, 50]), rng.random() < 0.7)
        base = rng.choice([0, 7, -(1 << 40), (1 << 62), (1 << 63) - 1 - (1 << 31), -(1 << 63) + (1 << 31)])
        assert C_COLUMNS(data, entry_size, base) == iv.index_columns_py(data, entry_size, base)
        assert C_COLUMNS(memoryview(data), entry_size, base) == iv.index_columns_py(data, entry_size, base)
    assert C_COLUMNS(b"x" * 16, 10, 0) is None and iv.index_columns_py(b"x" * 16, 10, 0) is None


def _indexes() -> list[Path]:
    roots = [FIXTURE_CORPUS] + ([CORPUS] if corpus_available() else [])
    return sorted(p for root in roots for p in root.rglob("*") if p.suffix in (".index", ".timeindex"))


def test_columns_are_the_entries_read_one_by_one() -> None:
    """On the corpus's indexes, both functions give each slot as ``OffsetIndex``/``TimeIndex`` read it, and the
    order flags the checkers used to compute from those entries."""
    functions = [iv.index_columns_py] + ([C_COLUMNS] if C_COLUMNS is not None else [])
    checked = 0
    for path in _indexes():
        try:
            base = int(path.stem)
        except ValueError:
            continue
        index = OffsetIndex(str(path), base) if path.suffix == ".index" else TimeIndex(str(path), base)
        if index.entry_count == 0 or not iv._NO_WRAP[0] <= base <= iv._NO_WRAP[1]:
            continue
        entries = [tuple(index.entry(i)) for i in range(index.entry_count)]
        firsts = [e[0] for e in entries]
        seconds = [e[1] for e in entries]
        data = path.read_bytes()[: index.entry_count * index.ENTRY_SIZE]
        for function in functions:
            found = function(data, index.ENTRY_SIZE, base)
            assert found is not None
            x, y, increasing, order = found
            assert (_int64(x), _int64(y)) == (firsts, seconds), path
            assert increasing == all(a < b for a, b in zip(firsts, firsts[1:], strict=False))
            strict = all(a < b for a, b in zip(seconds, seconds[1:], strict=False))
            monotone = all(a <= b for a, b in zip(seconds, seconds[1:], strict=False))
            assert order == (2 if strict else 1 if monotone else 0)
        checked += 1
    assert checked > 10


def test_pending_entries_are_met_in_order() -> None:
    entries = [(10, 2, 100), (20, 0, 200), (20, 1, 250), (35, 3, 300)]
    pending = IndexEntries.of(entries)
    assert len(pending) == 4 and pending.first_key() == 10
    assert pending.pop() == (10, 2, 100)
    pending.next += 1  # a run met one
    assert pending.columns()[2] == 2 and pending.first_key() == 20
    assert pending.rest() == [(20, 1, 250), (35, 3, 300)]
    assert not pending and pending.rest() == []
    by_slot = IndexEntries(array("q", [5, 6]), array("q", [50, 60]))
    assert [by_slot.pop(), by_slot.pop()] == [(5, 0, 50), (6, 1, 60)]
