"""The facts of ``kdump retention``: each segment's predicted fate (:class:`SegmentFate`), a compacted
partition's figures (:class:`CompactionFacts`), and a partition's whole prediction (:class:`RetentionFacts`);
:mod:`kdump.render.retention` writes them."""

from __future__ import annotations

from dataclasses import dataclass, field

from kdump.problem import Problem


@dataclass
class SegmentFate:
    base_offset: int
    next_offset: int
    size: int
    largest_timestamp: int
    #: "time", "size", "log-start-offset" or None (kept).
    deleted_by: str | None
    #: When time retention would delete it (epoch ms), None when never or already deletable.
    deletable_at: int | None


@dataclass
class CompactionFacts:
    first_dirty_offset: int
    first_uncleanable_offset: int
    clean_bytes: int
    cleanable_bytes: int
    dirty_ratio: float
    min_cleanable_ratio: float
    would_clean: bool
    records: int = 0
    distinct_keys: int = 0
    superseded: int = 0
    tombstones: int = 0
    #: Tombstones still the latest value of their key.
    live_tombstones: int = 0
    #: Tombstones whose batch has a delete horizon, and the latest of those horizons.
    tombstones_with_horizon: int = 0
    latest_delete_horizon: int | None = None
    #: Tombstones whose horizon has passed at ``now`` (removed by the next cleaning).
    tombstones_past_horizon: int = 0
    records_without_key: int = 0


@dataclass
class RetentionFacts:
    directory: str
    topic: str | None
    partition: int | None
    now: int
    config: dict[str, str]
    config_sources: dict[str, str]
    log_start_offset: int | None
    log_start_offset_after: int | None
    log_end_offset: int | None
    high_watermark: int | None
    size_bytes: int
    segments: list[SegmentFate]
    compaction: CompactionFacts | None
    problems: list[Problem] = field(default_factory=list)

    @property
    def deleted(self) -> list[SegmentFate]:
        return [s for s in self.segments if s.deleted_by is not None]
