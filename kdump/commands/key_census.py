"""The distinct keys of a compacted partition and whether each one's latest record is a tombstone, counted in
bounded memory (``kdump retention``).

The log cleaner keeps the latest record of every key (Kafka's ``LogCleaner`` builds an ``OffsetMap`` of them,
itself bounded: ``log.cleaner.dedupe.buffer.size``, cleaning in several passes when the keys do not fit).  kdump
only counts them, exactly: the keys go into one of :data:`BUCKETS` dicts chosen by the key's hash (latest wins)
until they hold about :data:`BUDGET_BYTES`, then each dict's entries are written, in order, to its temporary
file, and the dicts start again.  At the end each file is read back alone (latest wins again, as the entries of one key are in
the order they were seen) and counted; a file still too big for one dict is split again with another hash.
"""

from __future__ import annotations

import os
import pickle
from collections.abc import Iterable, Iterator
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
    """``parts`` (key -> its latest record is a tombstone, in :data:`BUCKETS` dicts by the key's hash: a key
    goes to ``parts[hash(key) & mask]``) are filled directly by the caller's loop, which counts
    ``len(key) + ENTRY_BYTES`` for each keyed record and calls :meth:`spill` past :data:`BUDGET_BYTES`;
    :meth:`counts` gives the distinct keys and those whose latest record is a tombstone.

    The keys are spread over the dicts as they come (a bytes object keeps its hash, so the dict does not hash
    it again): a spill then writes each dict to its file at C speed (its keys, and its tombstone flags as
    bytes), where spreading one dict's entries in a Python loop cost ~1 µs a key (retention of the bench
    segment took twice the CPU of the walk)."""

    __slots__ = ("_files", "mask", "parts")

    def __init__(self) -> None:
        assert BUCKETS & (BUCKETS - 1) == 0, "BUCKETS is a power of two"
        self.mask = BUCKETS - 1
        self.parts: list[dict[bytes, bool]] = [{} for _ in range(BUCKETS)]
        self._files: list[IO[bytes]] | None = None

    def spill(self) -> None:
        """Write each dict's entries to its bucket file (in the dict's order) and empty it."""
        if self._files is None:
            import tempfile  # only for a partition of this many keys

            self._files = [tempfile.TemporaryFile(prefix="kdump-keys-") for _ in range(BUCKETS)]
        for f, part in zip(self._files, self.parts, strict=True):
            if part:
                _dump(f, list(part), bytes(part.values()))
                part.clear()

    def counts(self) -> tuple[int, int]:
        """(distinct keys, keys whose latest record is a tombstone)."""
        if self._files is None:
            return sum(map(len, self.parts)), sum(sum(part.values()) for part in self.parts)
        self.spill()
        distinct = tombstones = 0
        files, self._files = self._files, None
        for f in files:
            d, t = _count(f, 1)
            distinct += d
            tombstones += t
        return distinct, tombstones


def _dump(f: IO[bytes], keys: list[bytes], tombstones: bytes) -> None:
    """One chunk of a bucket file: keys, and a byte each (1: the latest record is a tombstone), in order."""
    pickle.dump((keys, tombstones), f, protocol=pickle.HIGHEST_PROTOCOL)


def _scatter(items: Iterable[tuple[bytes, bool]], files: list[IO[bytes]], level: int) -> None:
    """Append ``items`` ((key, tombstone) pairs) to ``files`` by the hash of ``(level, key)``, one chunk a file
    (a bucket split again: rare, a Python loop)."""
    keys: list[list[bytes]] = [[] for _ in files]
    flags: list[list[bool]] = [[] for _ in files]
    n = len(files)
    for key, tomb in items:
        i = hash((level, key)) % n
        keys[i].append(key)
        flags[i].append(tomb)
    for f, part, tombs in zip(files, keys, flags, strict=True):
        if part:
            _dump(f, part, bytes(tombs))


def _chunks(f: IO[bytes]) -> Iterator[tuple[list[bytes], bytes]]:
    while True:
        try:
            yield pickle.load(f)  # noqa: S301 - kdump's own unnamed temporary file
        except EOFError:
            return


def _count(f: IO[bytes], level: int) -> tuple[int, int]:
    """Count one bucket file (then closed): in one dict when it fits, else split again with the hash of
    ``level``."""
    latest: dict[bytes, int] = {}
    held = 0
    split: list[IO[bytes]] | None = None
    with f:
        f.seek(0)
        read = 0
        for keys, flags in _chunks(f):
            latest.update(zip(keys, flags, strict=True))
            at = f.tell()  # the pickled keys' size stands for their bytes (C speed, no pass over them)
            held += at - read + ENTRY_BYTES * len(keys)
            read = at
            if held > BUDGET_BYTES and level < _MAX_LEVEL:
                if split is None:
                    import tempfile

                    split = [tempfile.TemporaryFile(prefix="kdump-keys-") for _ in range(BUCKETS)]
                _scatter(((k, bool(t)) for k, t in latest.items()), split, level)
                latest.clear()
                held = 0
        if split is None:
            return len(latest), sum(latest.values())
        _scatter(((k, bool(t)) for k, t in latest.items()), split, level)
    distinct = tombstones = 0
    for part in split:
        d, t = _count(part, level + 1)
        distinct += d
        tombstones += t
    return distinct, tombstones


__all__ = ["BUDGET_BYTES", "ENTRY_BYTES", "KeyCensus"]
