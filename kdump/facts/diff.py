"""The facts of ``kdump diff``: the copies of a partition compared (:class:`Copy`), where two copies part
(:class:`Divergence`, :class:`PairDiff`), the truncation a follower would perform (:class:`Truncation`) and a
partition's whole comparison (:class:`PartitionDiff`); :mod:`kdump.render.diff` writes them."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import NamedTuple

from kdump.problem import Problem


class BatchHeader(NamedTuple):
    base_offset: int
    last_offset: int
    leader_epoch: int
    crc: int
    records: int
    file: str
    position: int
    #: Whether the stored CRC matches the batch's bytes (``RecordBatch.isValid``).
    valid: bool = True


@dataclass
class Copy:
    """One copy of the partition: its directory, offsets and epoch lineage."""

    directory: str
    log_start_offset: int | None = None
    log_end_offset: int | None = None
    high_watermark: int | None = None
    batches: int = 0
    #: ``leader-epoch-checkpoint`` entries (epoch, start offset); None when the file is absent or unreadable.
    checkpoint_epochs: list[tuple[int, int]] | None = None
    #: (epoch, first offset) of each change of partition leader epoch along the batches.
    batch_epochs: list[tuple[int, int]] = field(default_factory=list)
    problems: list[Problem] = field(default_factory=list)

    @property
    def epochs(self) -> list[tuple[int, int]]:
        """The epoch cache a broker loads: the checkpoint, else what the batches say."""
        return self.checkpoint_epochs if self.checkpoint_epochs is not None else self.batch_epochs


@dataclass(frozen=True)
class RecordDifference:
    """A record the two first differing batches do not agree on: its offset, its key in each (None: no key;
    ``absent_a``/``absent_b``: the batch has no record at this offset) and its value's size in each (None: a
    null value)."""

    offset: int
    key_a: bytes | None
    key_b: bytes | None
    value_size_a: int | None
    value_size_b: int | None
    absent_a: bool = False
    absent_b: bool = False


@dataclass
class Divergence:
    offset: int
    kind: str  # "crc", "leader epoch", "batch boundaries"
    a: BatchHeader | None
    b: BatchHeader | None
    #: The records of the two batches that differ (decoded only for this pair; at most MAX_RECORDS of them).
    records: list[RecordDifference] = field(default_factory=list)
    #: More records differ than ``records`` holds.
    more_records: bool = False
    #: Why the two batches' records could not be compared (a batch that cannot be decoded).
    undecodable: Problem | None = None


@dataclass
class PairDiff:
    a: int
    b: int
    matching_batches: int = 0
    diverged_batches: int = 0
    first_divergence: Divergence | None = None
    only_in_a: list[tuple[int, int]] = field(default_factory=list)
    only_in_b: list[tuple[int, int]] = field(default_factory=list)
    offsets_only_in_a: int = 0
    offsets_only_in_b: int = 0
    #: Offsets one copy lacks between offsets both hold (a hole, not a shorter end or a later log start).
    inner_offsets_only: int = 0

    @property
    def identical(self) -> bool:
        return not (self.diverged_batches or self.offsets_only_in_a or self.offsets_only_in_b)

    @property
    def diverged(self) -> bool:
        """Whether the copies disagree: batches that differ (or whose CRC fails), or offsets one lacks between
        offsets both hold.  A copy that only ends earlier (a follower behind) or starts later (retention ran
        on it) has not diverged: as a follower it truncates nothing
        (``AbstractFetcherThread``'s leader-epoch truncation ends at or after its log end)."""
        return bool(self.diverged_batches or self.inner_offsets_only)


# The steps of the leader-epoch protocol a follower goes through (TruncationStep.kind).
ELECTED = "elected"  # the leader is elected at ``epoch`` from ``offset`` (its log end offset)
ASKED = "asked"  # OffsetsForLeaderEpoch(requested) -> ``epoch``, ``offset``
UNDEFINED = "undefined"  # the answer is undefined: truncate to the high watermark
LACKS_EPOCH = "lacks-epoch"  # the follower lacks ``epoch``: truncate to ``offset`` and ask again
NO_ANSWER = "no-answer"  # no answer after 100 rounds


@dataclass(frozen=True)
class TruncationStep:
    kind: str
    epoch: int | None = None
    offset: int | None = None
    requested: int | None = None


@dataclass
class Truncation:
    follower: int
    leader: int
    #: The offset the follower truncates to, and how many of its offsets that removes.
    offset: int | None
    removed_offsets: int
    steps: list[TruncationStep]


@dataclass
class PartitionDiff:
    name: str
    copies: list[Copy]
    pairs: list[PairDiff]
    truncations: list[Truncation]

    @property
    def diverged(self) -> bool:
        return any(p.diverged for p in self.pairs)

    @property
    def identical(self) -> bool:
        return all(p.identical for p in self.pairs)
