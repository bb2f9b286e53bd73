"""What one pass of Kafka's log cleaner would keep of a compacted partition, record by record, by the rules of
Kafka 4.0's ``Cleaner`` (``core/.../LogCleaner.scala``; ``storage/.../Cleaner.java`` in 4.1):

* ``Cleaner.buildOffsetMap`` maps each key to its latest offset in the dirty section, from the first dirty
  offset to the first uncleanable segment's base offset: records of aborted transactions (the ``.txnindex``
  entries, ``CleanedTransactionMetadata.onBatchRead``) and control batches put nothing in the map; the map's
  latest offset is the last offset of each batch read, then, at the end of each segment, the next segment's base
  offset less one (``buildOffsetMapForSegment``: "in the case of offsets gap, fast forward"; the last dirty
  segment's next is the first uncleanable segment's base);
* ``Cleaner.doClean`` cleans every segment from the log's first up to that latest offset (``logSegments(0,
  endOffset)``) with ``cleanInto``: an aborted transaction's batches are dropped whole; of the others,
  ``Cleaner.shouldRetainRecord`` keeps a record past the map's latest offset, drops one without a key, and keeps
  one with a key only when no later offset of its key is in the map and it has a value or is a tombstone whose
  batch has no delete horizon yet or one still ahead (``currentTime < deleteHorizonMs``; KIP-534: the cleaning
  gives a batch with tombstones its horizon, ``now + delete.retention.ms``, so a tombstone goes at the earliest
  at the cleaning after that).  Legacy (v0/v1) tombstones are kept while their segment was modified after the
  last clean segment's modification time less ``delete.retention.ms``.

The map is Kafka's ``SkimpyOffsetMap``: 128 MiB of ``log.cleaner.dedupe.buffer.size`` at 24 bytes a slot and a
load factor of 0.9 hold about 5 million keys; a dirty section with more keys is cleaned in parts.  kdump maps as
many keys as its memory budget holds (``max_keys``; its memory stays flat) and says "not predicted" past that.
"""

from __future__ import annotations

import os
from dataclasses import dataclass

from kdump import problem as pk
from kdump.analysis.consumer_view import read_aborted_txns
from kdump.analysis.digest_map import DIGESTS, ENTRY, DigestTable, batch_entries, digest, flags_of
from kdump.errors import KdumpError
from kdump.problem import Problem, problem, problem_of
from kdump.storage.local_log import LocalLog
from kdump.storage.record import Record
from kdump.storage.record_batch import RecordBatch
from kdump.storage.transaction_index import AbortedTxn

#: Memory per mapped key (an MD5 digest and an offset, as Kafka's map holds them, in a dict): the caller's
#: budget over this is how many keys kdump maps.
MAP_ENTRY_BYTES = 128


@dataclass
class CleaningPrediction:
    """What one cleaning at ``now`` would do (``kdump.analysis.cleaning``): the offset it cleans up to
    (exclusive), the records of the partition it keeps (those it does not clean included) and those it removes, by
    reason."""

    cleaned_up_to: int
    records_kept: int = 0
    tombstones_kept: int = 0
    removed_superseded: int = 0
    removed_tombstones: int = 0
    removed_without_key: int = 0
    removed_aborted: int = 0

    @property
    def removed(self) -> int:
        return (
            self.removed_superseded
            + self.removed_tombstones
            + self.removed_without_key
            + self.removed_aborted
        )


class _Aborted:
    """``CleanedTransactionMetadata``'s view of aborted transactions: entries enter by first offset as the
    batches pass; a transactional batch of a producer with an entered entry is aborted; its ABORT marker ends
    it."""

    def __init__(self, aborted: list[AbortedTxn]) -> None:
        self.pending = sorted(aborted, key=lambda t: t.first_offset)
        self.next = 0
        self.ongoing: set[int] = set()

    def _consume_up_to(self, offset: int) -> None:
        while self.next < len(self.pending) and self.pending[self.next].first_offset <= offset:
            self.ongoing.add(self.pending[self.next].producer_id)
            self.next += 1

    def batch_is_aborted(self, batch: RecordBatch) -> bool:
        self._consume_up_to(batch.last_offset)
        if batch.is_control_batch:
            self.ongoing.discard(
                batch.producer_id
            )  # an ABORT ends it; a COMMIT of the producer cannot follow one
            return False
        return batch.is_transactional and batch.producer_id in self.ongoing


_digest = digest  # the hash Kafka's SkimpyOffsetMap keys by (MD5)


def predict_cleaning(
    log: LocalLog,
    first_dirty: int,
    first_uncleanable_segment: int,
    now: int,
    delete_retention_ms: int,
    problems: list[Problem],
    max_keys: int,
    counted: dict[int, tuple[int, int]] | None = None,
) -> CleaningPrediction | None:
    """What one cleaning at ``now`` keeps of ``log`` (module docstring); None when it cannot be predicted (the
    reason appended to ``problems``).  ``counted``: segments already read whole, by base offset, with their
    data records and keyed tombstones (all kept where the cleaning does not reach)."""
    aborted, more = read_aborted_txns(log)
    if more:
        problems.extend(more)
        problems.append(problem(pk.CLEANING_NOT_PREDICTED, reason="a transaction index could not be read"))
        return None
    segments = log.log_segments
    latest: dict[bytes, int] = {}
    # with the C accelerator, Kafka's own shape: digests in 24-byte slots of one bytearray (load <= 0.5)
    table = None if DIGESTS is None else DigestTable(2 * max_keys + 2)
    latest_offset = -1
    # collectAbortedTransactions(start, end): the aborted transactions that reach into the dirty section
    metadata = _Aborted([t for t in aborted if t.last_offset >= first_dirty])
    try:
        for i, segment in enumerate(segments):
            if segment.base_offset >= first_uncleanable_segment:
                break
            if i + 1 < len(segments) and segments[i + 1].base_offset <= first_dirty:
                continue  # wholly clean: logSegments(start, end) starts at the segment holding start
            with segment.open_log() as records:
                for batch in records.batches():
                    if batch.last_offset < first_dirty:
                        metadata.batch_is_aborted(batch)
                        continue
                    if not metadata.batch_is_aborted(batch) and not batch.is_control_batch:
                        if table is not None:
                            entries, error = batch_entries(batch)
                            if error is not None:
                                raise error
                            table.put(entries, max_keys + 1, 0, first_dirty)
                        else:
                            for record in batch.records():
                                if record.key is not None and record.offset >= first_dirty:
                                    latest[_digest(record.key)] = record.offset
                        if (len(latest) if table is None else table.size) > max_keys:
                            problems.append(
                                problem(
                                    pk.CLEANING_NOT_PREDICTED,
                                    reason=f"the dirty section has more than {max_keys} keys (KDUMP_KEY_BUDGET)",
                                )
                            )
                            return None
                    latest_offset = batch.last_offset
            # buildOffsetMapForSegment ends with map.updateLatestOffset(nextSegmentStartOffset - 1): over a gap at
            # a segment's end (a follower's copy of a compacted log) the map reaches the next segment's base
            nxt = segments[i + 1].base_offset if i + 1 < len(segments) else first_uncleanable_segment
            latest_offset = min(nxt, first_uncleanable_segment) - 1
    except KdumpError as e:
        problems.append(problem_of(e))
        problems.append(problem(pk.CLEANING_NOT_PREDICTED, reason="a segment could not be read"))
        return None
    end = latest_offset + 1
    prediction = CleaningPrediction(end)
    clean_segments = [s for s in segments if s.base_offset < first_dirty]
    legacy_horizon = 0
    if clean_segments:
        legacy_horizon = _mtime(clean_segments[-1].log_path) - delete_retention_ms
    metadata = _Aborted(aborted)
    try:
        for segment in segments:
            cleaned = segment.base_offset < end
            if not cleaned and counted is not None and segment.base_offset in counted:
                records_kept, tombstones_kept = counted[segment.base_offset]
                prediction.records_kept += records_kept
                prediction.tombstones_kept += tombstones_kept
                continue  # the segments not cleaned are the last ones: no transaction state matters after
            retain_legacy_deletes = _mtime(segment.log_path) > legacy_horizon
            with segment.open_log() as records:
                for batch in records.batches():
                    if batch.is_control_batch:
                        metadata.batch_is_aborted(batch)
                        continue
                    if table is not None:
                        _judge_batch(
                            batch,
                            cleaned,
                            metadata,
                            table,
                            latest_offset,
                            now,
                            retain_legacy_deletes,
                            prediction,
                        )
                        continue
                    if not cleaned:
                        for record in batch.records():
                            prediction.records_kept += 1
                            prediction.tombstones_kept += record.key is not None and record.value is None
                        continue
                    if metadata.batch_is_aborted(batch):
                        prediction.removed_aborted += sum(1 for _ in batch.records())
                        continue
                    horizon = batch.delete_horizon_ms
                    for record in batch.records():
                        _judge(
                            record,
                            batch.magic,
                            horizon,
                            latest,
                            latest_offset,
                            now,
                            retain_legacy_deletes,
                            prediction,
                        )
    except KdumpError as e:
        problems.append(problem_of(e))
        problems.append(problem(pk.CLEANING_NOT_PREDICTED, reason="a segment could not be read"))
        return None
    return prediction


def _judge_batch(
    batch: RecordBatch,
    cleaned: bool,
    metadata: _Aborted,
    table: DigestTable,
    latest_offset: int,
    now: int,
    retain_legacy_deletes: bool,
    p: CleaningPrediction,
) -> None:
    """The records of a data batch judged at once from its entries (the C accelerator's path; the same
    counts as :func:`_judge` record by record)."""
    if not cleaned:
        entries, error = batch_entries(batch, digests=False)
        flags = flags_of(entries)
        p.records_kept += len(flags)
        p.tombstones_kept += flags.count(3)
    elif metadata.batch_is_aborted(batch):
        entries, error = batch_entries(batch, digests=False)
        p.removed_aborted += len(entries) // ENTRY
    else:
        entries, error = batch_entries(batch)
        horizon = batch.delete_horizon_ms
        keep = (horizon is None or now < horizon) if batch.magic >= 2 else retain_legacy_deletes
        kept, tombstones_kept, superseded, tombstones_removed, without_key = table.judge(
            entries, latest_offset, keep
        )
        p.records_kept += kept
        p.tombstones_kept += tombstones_kept
        p.removed_superseded += superseded
        p.removed_tombstones += tombstones_removed
        p.removed_without_key += without_key
    if error is not None:
        raise error


def _judge(
    record: Record,
    magic: int,
    horizon: int | None,
    latest: dict[bytes, int],
    latest_offset: int,
    now: int,
    retain_legacy_deletes: bool,
    p: CleaningPrediction,
) -> None:
    """``Cleaner.shouldRetainRecord`` for one record, counted into ``p``."""
    tomb = record.value is None
    if record.offset > latest_offset:
        p.records_kept += 1
        p.tombstones_kept += record.key is not None and tomb
        return
    if record.key is None:
        p.removed_without_key += 1
        return
    if record.offset < latest.get(_digest(record.key), -1):
        p.removed_superseded += 1
        return
    if tomb:
        keep = (horizon is None or now < horizon) if magic >= 2 else retain_legacy_deletes
        if not keep:
            p.removed_tombstones += 1
            return
        p.tombstones_kept += 1
    p.records_kept += 1


def _mtime(path: str) -> int:
    try:
        return int(os.path.getmtime(path) * 1000)
    except OSError:
        return 0
