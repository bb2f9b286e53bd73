"""Offsets that do not follow each other (Kafka's DumpLogSegments ``nonConsecutivePairsForLogFilesMap``): the
one check of it, fed every record (or batch) in file order by the text renderer, the batch-by-batch loop and the
parallel chunks (joined with :meth:`OffsetGaps.extend`)."""

from __future__ import annotations

from collections.abc import Generator, Iterable
from dataclasses import dataclass, field
from typing import NamedTuple, Protocol, TypeVar

from kdump.analysis.pair_list import SPILL_PAIRS, PairList

#: ``offset - lastOffset`` where Kafka's ``offset != lastOffset + 1`` holds only by Java's long overflow
#: (``Long.MAX_VALUE + 1`` is ``Long.MIN_VALUE``): such a pair is consecutive to Kafka.  Tested second, after the
#: plain comparison, so the usual path costs nothing more.
LONG_WRAP_STEP = 1 - 2**64


class _HasOffset(Protocol):
    @property
    def offset(self) -> int: ...


_R = TypeVar("_R", bound=_HasOffset)


class _First(NamedTuple):
    offset: int


@dataclass
class OffsetGaps:
    """Deep iteration's check for non-consecutive offsets over a run of batches: the first and last record
    offsets seen (-1: none yet) and the gaps, in file order.

    :meth:`see` is the one place the check is made: every loop over records (the Kafka-text renderer, the
    opt-in loop of ``kdump files``) passes its records through it, and :meth:`extend` joins the findings of
    runs checked apart (the chunks of :func:`dump_batches`) through it too."""

    first_offset: int = -1
    last_offset: int = -1
    #: The gaps, oldest first; past :data:`~kdump.analysis.pair_list.SPILL_PAIRS` the older ones are on disk
    #: (one batch of millions of records at one offset is millions of gaps).
    pairs: PairList = field(default_factory=PairList)

    def see(self, records: Iterable[_R]) -> Generator[_R, None, None]:
        """``records``, unchanged, noting gaps between their offsets (and from the last offset seen before).

        A generator: a loop over it costs one resume per record and no call (the default text path's budget).
        ``last_offset`` is brought up to date when the records end, raise, or the generator is closed."""
        last = self.last_offset
        gaps = self.pairs
        pairs = gaps.tail
        try:
            for record in records:
                offset = record.offset
                if last == -1:
                    if self.first_offset == -1:
                        self.first_offset = offset
                elif offset != last + 1 and offset - last != LONG_WRAP_STEP:
                    pairs.append((last, offset))
                    if len(pairs) >= SPILL_PAIRS:
                        gaps.spill()
                last = offset
                yield record
        finally:
            self.last_offset = last

    def see_run(self, first: int, last: int) -> None:
        """:meth:`see` of records whose offsets run from ``first`` to ``last`` one after the other (a batch
        rendered whole by the C accelerator): only the step from the last offset seen can be a gap."""
        previous = self.last_offset
        if previous == -1:
            if self.first_offset == -1:
                self.first_offset = first
        elif first != previous + 1 and first - previous != LONG_WRAP_STEP:
            pairs = self.pairs.tail
            pairs.append((previous, first))
            if len(pairs) >= SPILL_PAIRS:
                self.pairs.spill()
        self.last_offset = last

    def extend(self, later: OffsetGaps) -> None:
        """Append the findings of the run that follows this one (checked apart): the gap across the boundary,
        if any, then its own."""
        if later.first_offset != -1:
            for _ in self.see((_First(later.first_offset),)):
                pass
            self.last_offset = later.last_offset
        self.pairs.extend(later.pairs)
