"""The SIGBUS guard's span list survives a mapping's finalizer running in the middle of a registration: the
collector may run on any allocation, including the ones that build the spans' tuple, and a collected mapping's
finalizer unregisters it on the same thread (the guard's lock is re-entrant).  Seen once in the suite as
``RuntimeError: dictionary changed size during iteration`` from ``register`` (an index opened by a test).
Before the fix this test failed with that error."""

from __future__ import annotations

import gc
import mmap
import sys
from pathlib import Path

from kdump.storage import sigbus_guard


def test_a_finalizer_during_registration_leaves_the_spans_right(tmp_path: Path) -> None:
    path = tmp_path / "f"
    path.write_bytes(b"x" * 8192)
    with open(path, "rb") as f:
        maps = [mmap.mmap(f.fileno(), 0, access=mmap.ACCESS_READ) for _ in range(40)]
    tokens = [sigbus_guard.register(m) for m in maps[:-4]]  # more spans than a small tuple: allocated
    if None in tokens:  # pragma: no cover - a platform where the guard cannot be installed
        return
    victims = tokens[1:]
    popped: list[int | None] = []

    def finalize_during_collection(phase: str, info: dict) -> None:
        # a collection while the guard's own code runs (registering, building the view) collects a victim
        inside = sys._getframe(1).f_code.co_name in ("register", "_refresh_view")
        if phase == "start" and inside and victims:
            victim = victims.pop()
            popped.append(victim)
            sigbus_guard.unregister(victim)  # what a collected mapping's weakref.finalize does

    last = []
    gc.callbacks.append(finalize_during_collection)
    gc.set_threshold(1)  # a collection every other allocation of a tracked object: try both parities
    try:
        for shift in range(4):
            padding = [[] for _ in range(shift)]
            last.append(sigbus_guard.register(maps[-1 - shift]))
            del padding
    finally:
        gc.set_threshold(700, 10, 10)
        gc.callbacks.remove(finalize_during_collection)
    try:
        assert popped, "no collection ran while the registration built the view"
        assert set(sigbus_guard._spans_view) == set(sigbus_guard._spans.values())
        assert not set(popped) & set(sigbus_guard._spans)
        assert {tokens[0], *last} <= set(sigbus_guard._spans)
    finally:
        for token in [*tokens, *last]:
            sigbus_guard.unregister(token)
        for m in maps:
            m.close()
