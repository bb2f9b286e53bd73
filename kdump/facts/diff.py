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


@dataclass
class Divergence:
    offset: int
    kind: str  # "crc", "leader epoch", "batch boundaries"
    a: BatchHeader | None
    b: BatchHeader | None
    #: Records of the two batches that differ, as (offset, key) text, decoded only for this pair.
    detail: list[str] = field(default_factory=list)


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


@dataclass
class Truncation:
    follower: int
    leader: int
    #: The offset the follower truncates to, and how many of its offsets that removes.
    offset: int | None
    removed_offsets: int
    steps: list[str]


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
