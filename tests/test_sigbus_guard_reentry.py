"""The SIGBUS guard's span list survives a mapping's finalizer running while the guard reads its spans: the
collector may run on any allocation, including the ones that rebuild the view the handler reads, and a
collected mapping's ``weakref.finalize`` unregisters it on the same thread (the guard's lock is re-entrant).
Seen once in the suite as ``RuntimeError: dictionary changed size during iteration`` from ``register``.

Whether the collector runs at that moment depends on allocation counts, so the finalizer is made to run there:
the spans' dict calls ``unregister`` from inside the reads the guard makes of it (iterating its values, as the
old code did; copying it, as the fixed code does)."""

from __future__ import annotations

import mmap
from collections.abc import Iterator
from pathlib import Path

import pytest

from kdump.storage import sigbus_guard


class _FinalizerInside(dict):
    """``_spans`` whose reads run a pending finalizer (``unregister`` of a victim) once, midway."""

    victims: list[int]

    def _finalize(self) -> None:
        if self.victims:
            sigbus_guard.unregister(self.victims.pop())

    def values(self) -> Iterator[tuple[int, int]]:  # type: ignore[override]
        for i, value in enumerate(dict.values(self)):
            if i == 1:
                self._finalize()
            yield value

    def copy(self) -> dict[int, tuple[int, int]]:
        self._finalize()  # (a collection on the copy's allocation)
        return dict(dict.items(self))


def test_a_finalizer_while_the_view_is_rebuilt_leaves_the_spans_right(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    path = tmp_path / "f"
    path.write_bytes(b"x" * 8192)
    with open(path, "rb") as f:
        maps = [mmap.mmap(f.fileno(), 0, access=mmap.ACCESS_READ) for _ in range(6)]
    tokens = [sigbus_guard.register(m) for m in maps[:-1]]
    if None in tokens:  # pragma: no cover - a platform where the guard cannot be installed
        return
    spans = _FinalizerInside(sigbus_guard._spans)
    spans.victims = [tokens[2]]
    monkeypatch.setattr(sigbus_guard, "_spans", spans)
    try:
        last = sigbus_guard.register(maps[-1])
        assert not spans.victims, "the finalizer did not run"
        assert tokens[2] not in sigbus_guard._spans
        assert set(sigbus_guard._spans_view) == set(dict.values(sigbus_guard._spans))
        assert last in sigbus_guard._spans
    finally:
        for token in [*tokens, last]:
            sigbus_guard.unregister(token)
        monkeypatch.undo()
        for m in maps:
            m.close()
