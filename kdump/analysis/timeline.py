"""A partition's offsets against time, from its batch headers alone, in bounded memory (what ``kdump report``
draws): the batches in offset order folded into at most :data:`MAX_BUCKETS` buckets of consecutive batches
(records, bytes, timestamps, the largest batch), each segment's first and largest timestamp, the changes of the
batches' partition leader epoch (``RecordBatch.partitionLeaderEpoch``) and the longest silences between
consecutive batches (when records stopped arriving).  Pure: fed one batch at a time by the one header pass of
:func:`kdump.analysis.log_summary.summarize_partition`; nothing is decoded."""

from __future__ import annotations

from dataclasses import dataclass, field

from kdump.analysis.header_run import HeaderRun, RunLimits
from kdump.storage.record_batch import RecordBatch

#: Buckets kept per partition: when the batches would need more, neighbours are merged pairwise (and each
#: later bucket takes twice as many batches), so a partition of any size costs the same.
MAX_BUCKETS = 240
#: Leader-epoch changes kept per partition (a partition's leader changes rarely; more are counted only).
MAX_EPOCH_CHANGES = 500
#: Silences kept: the longest ones.
MAX_SILENCES = 3
#: Producer ids followed per partition (more are counted only).
MAX_PRODUCERS = 200


@dataclass
class Bucket:
    """Consecutive batches: offsets ``first_offset``..``last_offset``; timestamps are batch max-timestamps
    (-1 when none of the batches had one)."""

    first_offset: int
    last_offset: int
    min_timestamp: int
    max_timestamp: int
    batches: int
    records: int
    bytes: int
    max_batch_bytes: int

    def merge(self, other: Bucket) -> None:
        self.last_offset = other.last_offset
        if other.min_timestamp >= 0 and (self.min_timestamp < 0 or other.min_timestamp < self.min_timestamp):
            self.min_timestamp = other.min_timestamp
        self.max_timestamp = max(self.max_timestamp, other.max_timestamp)
        self.batches += other.batches
        self.records += other.records
        self.bytes += other.bytes
        self.max_batch_bytes = max(self.max_batch_bytes, other.max_batch_bytes)


@dataclass(frozen=True)
class SegmentSpan:
    """A segment as the timeline shows it: its base offset, first batch offset and max-timestamps (-1 when
    none), bytes of batches read."""

    base_offset: int
    first_offset: int | None
    first_timestamp: int
    largest_timestamp: int
    bytes: int


@dataclass(frozen=True)
class EpochChange:
    """The first batch of a new partition leader epoch: its offset and max-timestamp."""

    epoch: int
    offset: int
    timestamp: int


@dataclass(frozen=True)
class Silence:
    """No batch between ``after_offset`` (max-timestamp ``start``) and ``before_offset`` (``end``)."""

    start: int
    end: int
    after_offset: int
    before_offset: int

    @property
    def duration(self) -> int:
        return self.end - self.start


@dataclass
class ProducerActivity:
    """What one producer id wrote to the partition, from its batches' headers: the latest epoch, batches and
    records (control batches apart), offsets and max-timestamps of its first and last batch."""

    producer_id: int
    epoch: int
    batches: int
    records: int
    first_offset: int
    last_offset: int
    first_timestamp: int
    last_timestamp: int
    transactional: bool
    markers: int


@dataclass
class Timeline:
    buckets: list[Bucket] = field(default_factory=list)
    #: Batches per bucket now (doubles at each fold).
    per_bucket: int = 1
    segments: list[SegmentSpan] = field(default_factory=list)
    epoch_changes: list[EpochChange] = field(default_factory=list)
    epoch_changes_total: int = 0
    silences: list[Silence] = field(default_factory=list)
    #: Offsets skipped between consecutive batches (compaction, or a gap), and how many such jumps.
    offset_jumps: int = 0
    offsets_skipped: int = 0
    producers: dict[int, ProducerActivity] = field(default_factory=dict)
    #: Producer ids seen beyond :data:`MAX_PRODUCERS` (their batches not followed).
    producers_over: int = 0
    _epoch: int | None = None
    _last_offset: int | None = None
    _last_timestamp: int = -1
    _segment: list[int] | None = None

    def start_segment(self, base_offset: int) -> None:
        self.end_segment()
        # base offset, first offset (-1: none yet), first timestamp, largest timestamp, bytes
        self._segment = [base_offset, -1, -1, -1, 0]

    def end_segment(self) -> None:
        s = self._segment
        if s is not None:
            self.segments.append(SegmentSpan(s[0], None if s[1] < 0 else s[1], s[2], s[3], s[4]))
            self._segment = None

    def limit(self, limits: RunLimits) -> None:
        """What a run of plain batches (:mod:`kdump.analysis.header_run`) must respect here."""
        s = self._segment
        if s is None or s[1] < 0:
            limits.ok = False
            return
        limits.previous(self._last_offset)
        limits.leader_epoch(self._epoch)
        limits.last_timestamp = self._last_timestamp
        limits.per_bucket = self.per_bucket
        limits.fill = self.buckets[-1].batches if self.buckets else self.per_bucket
        limits.allowance = MAX_BUCKETS + 1 - len(self.buckets)

    def run(self, run: HeaderRun) -> None:
        """A run of plain batches, as :meth:`add` of each of them: no epoch change, no offset jump, producers
        that are not transactional."""
        s = self._segment
        if s is not None:
            if run.max_timestamp > s[3]:
                s[3] = run.max_timestamp
            s[4] += run.bytes
        if run.silences:
            silences = self.silences + [Silence(*g) for g in run.silences]
            silences.sort(key=lambda g: -g.duration)
            self.silences = silences[:MAX_SILENCES]
        producers = self.producers
        for (
            pid,
            first_base,
            first_last,
            first_ts,
            epoch,
            last,
            batches,
            records,
            least,
            largest,
        ) in run.producers:
            p = producers.get(pid)
            if p is None:
                if len(producers) >= MAX_PRODUCERS:
                    self.producers_over += batches
                    continue
                p = producers[pid] = ProducerActivity(
                    pid, epoch, 0, 0, first_base, first_last, first_ts, first_ts, False, 0
                )
            p.epoch = epoch
            p.last_offset = last
            if least >= 0:
                p.first_timestamp = least if p.first_timestamp < 0 else min(p.first_timestamp, least)
                p.last_timestamp = max(p.last_timestamp, largest)
            p.batches += batches
            p.records += records
        self._last_offset = run.last_offset
        self._last_timestamp = run.last_timestamp
        buckets = run.buckets
        if run.continued:
            self.buckets[-1].merge(Bucket(*buckets[0]))
            buckets = buckets[1:]
        self.buckets.extend(Bucket(*b) for b in buckets)
        if len(self.buckets) > MAX_BUCKETS:
            self._fold()

    def add(self, batch: RecordBatch, records: int) -> None:
        """One batch (in offset order) with its record count."""
        ts = batch.max_timestamp
        size = batch.size_in_bytes
        base, last = batch.base_offset, batch.last_offset
        s = self._segment
        if s is not None:
            if s[1] < 0:
                s[1], s[2] = base, ts
            if ts > s[3]:
                s[3] = ts
            s[4] += size
        epoch = batch.partition_leader_epoch
        if epoch != self._epoch:
            if self._epoch is not None or epoch >= 0:
                self.epoch_changes_total += 1
                if len(self.epoch_changes) < MAX_EPOCH_CHANGES:
                    self.epoch_changes.append(EpochChange(epoch, base, ts))
            self._epoch = epoch
        if self._last_offset is not None and base > self._last_offset + 1:
            self.offset_jumps += 1
            self.offsets_skipped += base - self._last_offset - 1
        if (
            ts >= 0
            and self._last_timestamp >= 0
            and ts > self._last_timestamp
            and self._last_offset is not None
        ):
            gap = Silence(self._last_timestamp, ts, self._last_offset, base)
            if len(self.silences) < MAX_SILENCES or gap.duration > self.silences[-1].duration:
                self.silences.append(gap)
                self.silences.sort(key=lambda g: -g.duration)
                del self.silences[MAX_SILENCES:]
        pid = batch.producer_id
        if pid >= 0:
            self._producer(batch, pid, records, ts)
        self._last_offset = last
        if ts >= 0:
            self._last_timestamp = ts
        b = self.buckets[-1] if self.buckets else None
        if b is not None and b.batches < self.per_bucket:  # Bucket.merge of this one batch, inlined (hot)
            b.last_offset = last
            if ts >= 0 and (b.min_timestamp < 0 or ts < b.min_timestamp):
                b.min_timestamp = ts
            if ts > b.max_timestamp:
                b.max_timestamp = ts
            b.batches += 1
            b.records += records
            b.bytes += size
            if size > b.max_batch_bytes:
                b.max_batch_bytes = size
            return
        self.buckets.append(Bucket(base, last, ts, ts, 1, records, size, size))
        if len(self.buckets) > MAX_BUCKETS:
            self._fold()

    def _producer(self, batch: RecordBatch, pid: int, records: int, ts: int) -> None:
        p = self.producers.get(pid)
        if p is None:
            if len(self.producers) >= MAX_PRODUCERS:
                self.producers_over += 1
                return
            p = self.producers[pid] = ProducerActivity(
                pid, batch.producer_epoch, 0, 0, batch.base_offset, batch.last_offset, ts, ts, False, 0
            )
        p.epoch = batch.producer_epoch
        p.last_offset = batch.last_offset
        if ts >= 0:
            p.first_timestamp = ts if p.first_timestamp < 0 else min(p.first_timestamp, ts)
            p.last_timestamp = max(p.last_timestamp, ts)
        if batch.is_control_batch:
            p.markers += 1
            return
        p.batches += 1
        p.records += records
        p.transactional = p.transactional or batch.is_transactional

    def _fold(self) -> None:
        folded = []
        for i in range(0, len(self.buckets), 2):
            b = self.buckets[i]
            if i + 1 < len(self.buckets):
                b.merge(self.buckets[i + 1])
            folded.append(b)
        self.buckets = folded
        self.per_bucket *= 2
