"""The distinct keys of a compacted partition and whether each one's latest record is a tombstone, counted in
bounded memory (``kdump retention``).

The log cleaner keeps the latest record of every key (Kafka's ``LogCleaner`` builds an ``OffsetMap`` of them,
itself bounded: ``log.cleaner.dedupe.buffer.size``, cleaning in several passes when the keys do not fit).  kdump
only counts them, exactly: the keys go into a dict (latest wins) until it holds about :data:`BUDGET_BYTES`, then
its entries are written, in order, to one of :data:`BUCKETS` temporary files chosen by the key's hash, and the
dict starts again.  At the end each file is read back alone (latest wins again, as the entries of one key are in
the order they were seen) and counted; a file still too big for one dict is split again with another hash.
"""

from __future__ import annotations

import os
import pickle
from collections.abc import Iterator
from typing import IO


def _budget() -> int:
    try:
        return max(1, int(os.environ.get("KDUMP_KEY_BUDGET") or 24 << 20))
    except ValueError:
        return 24 << 20


#: What the dict may hold before it is written out: key bytes plus :data:`ENTRY_BYTES` a key (~330k 9-byte keys,
#: ~45 MiB; with the up to 64 MiB of segment pages a walk keeps resident, well under 150 MiB).
#: ``KDUMP_KEY_BUDGET`` sets another (the tests make it small to spill small partitions).
BUDGET_BYTES = _budget()
#: The dict's and the key object's own memory per key, roughly.
ENTRY_BYTES = 64
#: Files the keys are spread over once they do not fit.
BUCKETS = 64
#: Splits of a bucket at most (64**5 buckets: more keys than any partition holds).
_MAX_LEVEL = 5


class KeyCensus:
    """``latest`` (key -> its latest record is a tombstone) is filled directly by the caller's loop, which counts
    ``len(key) + ENTRY_BYTES`` for each keyed record and calls :meth:`spill` past :data:`BUDGET_BYTES`;
    :meth:`counts` gives the distinct keys and those whose latest record is a tombstone."""

    __slots__ = ("_files", "latest")

    def __init__(self) -> None:
        self.latest: dict[bytes, bool] = {}
        self._files: list[IO[bytes]] | None = None

    def spill(self) -> None:
        """Write the dict's entries to the bucket files (in the dict's order) and empty it."""
        if self._files is None:
            import tempfile  # only for a partition of this many keys

            self._files = [tempfile.TemporaryFile(prefix="kdump-keys-") for _ in range(BUCKETS)]
        _scatter(self.latest.items(), self._files, 0)
        self.latest.clear()

    def counts(self) -> tuple[int, int]:
        """(distinct keys, keys whose latest record is a tombstone)."""
        if self._files is None:
            return len(self.latest), sum(self.latest.values())
        self.spill()
        distinct = tombstones = 0
        files, self._files = self._files, None
        for f in files:
            d, t = _count(f, 1)
            distinct += d
            tombstones += t
        return distinct, tombstones


def _scatter(items: object, files: list[IO[bytes]], level: int) -> None:
    """Append ``items`` ((key, tombstone) pairs) to ``files`` by the key's hash at ``level``, one pickled list a
    file."""
    parts: list[list[tuple[bytes, bool]]] = [[] for _ in files]
    n = len(files)
    if level == 0 and n == 64:
        for item in items:  # type: ignore[attr-defined]
            parts[hash(item[0]) & 63].append(item)
    elif level == 0:
        for item in items:  # type: ignore[attr-defined]
            parts[hash(item[0]) % n].append(item)
    else:
        for item in items:  # type: ignore[attr-defined]
            parts[hash((level, item[0])) % n].append(item)
    for f, part in zip(files, parts, strict=True):
        if part:
            pickle.dump(part, f, protocol=pickle.HIGHEST_PROTOCOL)


def _chunks(f: IO[bytes]) -> Iterator[list[tuple[bytes, bool]]]:
    while True:
        try:
            yield pickle.load(f)  # noqa: S301 - kdump's own unnamed temporary file
        except EOFError:
            return


def _count(f: IO[bytes], level: int) -> tuple[int, int]:
    """Count one bucket file (then closed): in one dict when it fits, else split again with the hash of
    ``level``."""
    latest: dict[bytes, bool] = {}
    held = 0
    split: list[IO[bytes]] | None = None
    with f:
        f.seek(0)
        read = 0
        for chunk in _chunks(f):
            latest.update(chunk)
            at = f.tell()  # the pickled keys' size stands for their bytes (C speed, no pass over them)
            held += at - read + ENTRY_BYTES * len(chunk)
            read = at
            if held > BUDGET_BYTES and level < _MAX_LEVEL:
                if split is None:
                    import tempfile

                    split = [tempfile.TemporaryFile(prefix="kdump-keys-") for _ in range(BUCKETS)]
                _scatter(latest.items(), split, level)
                latest.clear()
                held = 0
        if split is None:
            return len(latest), sum(latest.values())
        _scatter(latest.items(), split, level)
    distinct = tombstones = 0
    for part in split:
        d, t = _count(part, level + 1)
        distinct += d
        tombstones += t
    return distinct, tombstones


__all__ = ["BUDGET_BYTES", "ENTRY_BYTES", "KeyCensus"]
