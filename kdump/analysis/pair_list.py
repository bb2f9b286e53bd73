"""An append-only list of ``(long, long)`` pairs whose older part lives in a temporary file.

Kafka's tool keeps every pair of non-consecutive offsets of a dump in memory and prints them all at the end
(``DumpLogSegments``' ``nonConsecutivePairsForLogFilesMap``, newest first).  One batch of millions of records
whose offsets do not advance is a few KB of zstd and millions of pairs, so kdump keeps the newest
:data:`SPILL_PAIRS` in a list and writes the older ones, 16 bytes a pair, to an unnamed temporary file, read
back block by block when the pairs are printed: memory stays flat, the list printed is the same.
"""

from __future__ import annotations

import os
import struct
from collections.abc import Iterable, Iterator
from typing import IO, Any


#: Pairs held in memory before they are written out (about 8 MiB of tuples); ``KDUMP_SPILL_PAIRS`` sets another
#: count (the tests make it small to spill small inputs).
def _spill_pairs() -> int:
    try:
        return max(1, int(os.environ.get("KDUMP_SPILL_PAIRS") or 1 << 16))
    except ValueError:
        return 1 << 16


SPILL_PAIRS = _spill_pairs()
#: Pairs read back from the file at a time.
_READ_PAIRS = 1 << 14
_PAIR = struct.Struct(">qq")


def _spill_file() -> IO[bytes]:
    import tempfile  # only when a dump has this many gaps: kdump files' start stays lean

    return tempfile.TemporaryFile(prefix="kdump-pairs-")


class PairList:
    """Pairs in the order appended; :attr:`tail` (a plain list, appended to directly by hot loops, which then
    call :meth:`spill_if_full`) holds the newest, the file the older ones."""

    __slots__ = ("_file", "_spilled", "tail")

    def __init__(self, pairs: Iterable[tuple[int, int]] = ()) -> None:
        self.tail: list[tuple[int, int]] = []
        self._file: IO[bytes] | None = None
        self._spilled = 0
        for pair in pairs:
            self.append(pair)

    # -- adding ------------------------------------------------------------------------------------------------

    def append(self, pair: tuple[int, int]) -> None:
        self.tail.append(pair)
        if len(self.tail) >= SPILL_PAIRS:
            self.spill()

    def spill_if_full(self) -> None:
        if len(self.tail) >= SPILL_PAIRS:
            self.spill()

    def spill(self) -> None:
        """Write the pairs held in memory to the file (the list object stays the same, emptied)."""
        if not self.tail:
            return
        if self._file is None:
            self._file = _spill_file()
        pack = _PAIR.pack
        self._file.seek(0, os.SEEK_END)
        self._file.write(b"".join([pack(a, b) for a, b in self.tail]))
        self._spilled += len(self.tail)
        self.tail.clear()

    def extend(self, later: PairList | Iterable[tuple[int, int]]) -> None:
        """Append ``later``'s pairs, oldest first (a :class:`PairList` is read block by block)."""
        if isinstance(later, PairList):
            for block in later._blocks():
                self.tail.extend(block)
                self.spill_if_full()
            self.tail.extend(later.tail)
            self.spill_if_full()
        else:
            for pair in later:
                self.append(pair)

    # -- reading -----------------------------------------------------------------------------------------------

    def __len__(self) -> int:
        return self._spilled + len(self.tail)

    def __bool__(self) -> bool:
        return bool(self.tail) or self._spilled > 0

    def _blocks(self, newest_first: bool = False) -> Iterator[list[tuple[int, int]]]:
        """The spilled pairs in blocks of at most ``_READ_PAIRS``, oldest block first (or newest first)."""
        if self._file is None or not self._spilled:
            return
        f = self._file
        starts = range(0, self._spilled, _READ_PAIRS)
        for start in reversed(starts) if newest_first else starts:
            count = min(_READ_PAIRS, self._spilled - start)
            f.seek(start * _PAIR.size)
            data = f.read(count * _PAIR.size)
            block = list(_PAIR.iter_unpack(data))
            if newest_first:
                block.reverse()
            yield block

    def __iter__(self) -> Iterator[tuple[int, int]]:
        for block in self._blocks():
            yield from block
        yield from list(self.tail)

    def newest_first(self) -> Iterator[tuple[int, int]]:
        """The pairs newest first (Kafka's order: it prepends each pair to its list)."""
        yield from reversed(list(self.tail))
        for block in self._blocks(newest_first=True):
            yield from block

    def close(self) -> None:
        if self._file is not None:
            self._file.close()
            self._file = None
        self._spilled = 0
        self.tail.clear()

    # -- between processes (the workers of kdump.commands.parallel) -------------------------------------------

    def __getstate__(self) -> dict[str, Any]:
        """A spilled list travels as a named copy of its file, which the receiving side opens and unlinks."""
        path = None
        if self._file is not None and self._spilled:
            import shutil
            import tempfile

            fd, path = tempfile.mkstemp(prefix="kdump-pairs-")
            with os.fdopen(fd, "wb") as copy:
                self._file.seek(0)
                shutil.copyfileobj(self._file, copy)
        return {"tail": self.tail, "path": path, "spilled": self._spilled if path else 0}

    def __setstate__(self, state: dict[str, Any]) -> None:
        self.tail = state["tail"]
        self._file = None
        self._spilled = state["spilled"]
        path = state["path"]
        if path is not None:
            self._file = open(path, "r+b")  # noqa: SIM115 - held for the list's life
            os.unlink(path)

    def __eq__(self, other: object) -> bool:
        if isinstance(other, PairList):
            return list(self) == list(other)
        if isinstance(other, list):
            return list(self) == other
        return NotImplemented

    __hash__ = None  # type: ignore[assignment]

    def __repr__(self) -> str:
        return f"PairList({len(self)} pairs, {self._spilled} on disk)"


__all__ = ["SPILL_PAIRS", "PairList"]
