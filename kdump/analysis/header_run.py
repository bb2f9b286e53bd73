"""Runs of plain batch headers read in one loop: the one header pass's readers work per run, not per batch.

``kdump report`` (and ``kdump verify``) read every batch header of every segment through several readers at
once (:mod:`kdump.analysis.segment_walk`): verify's checks of the log and of its indexes, ``ls``'s summary and
timeline, ``txn``'s, ``retention``'s and the compression sample.  Each costs some Python per batch; over a data
directory of 100 GB (six million batches) that was minutes.  Most batches are plain: a v2 data batch that follows
the previous one, valid, neither transactional nor a marker, in the same leader epoch, whose index entries name
it as they should.  Over such a run every reader only adds up: counts, bytes, the least and largest timestamp,
its producers, the timeline's buckets and silences.  :func:`header_run` reads a run (in C,
``kdump._speedups.header_run``, or in :func:`header_run_py`, its pure-Python twin: the same results, tested
against each other) and gives those sums as one :class:`HeaderRun`; every reader applies it at once
(``run``), exactly as it would have applied the run's batches one by one (``tests/test_header_run.py`` compares
the facts of both ways).  The first batch that is not plain, and the first batch of each segment, still go to
each reader's ``batch``: everything the readers say about a batch (a problem, an epoch change, a transaction)
comes from that code alone.

A reader that takes runs sets ``runs = True`` and has ``limit(limits)`` (it says what a run must respect: the
previous batch's last offset, the leader epoch, its pending index entries, the offsets it wants to see as
batches) and ``run(run)``.  :class:`RunWalk` is the callback ``FileRecords.batches(runs=...)`` calls between
batches; it is only made when every reader of the pass takes runs.
"""

from __future__ import annotations

import os
import struct
from array import array
from collections.abc import Callable, Sequence
from typing import Any, NamedTuple

from kdump.storage import record_batch
from kdump.storage.checksum import crc32c

#: A batch bigger than this is left to the caller (``_speedups``' BIG_BATCH, ``record_batch._CHECKSUM_PIECE``).
BIG_BATCH = 8 << 20
#: Producer ids of one run, at most (a ninth ends the run).
RUN_PRODUCERS = 8
#: Silences kept per run (:data:`kdump.analysis.timeline.MAX_SILENCES`).
RUN_SILENCES = 3
#: No limit on an int64 position or offset.
NO_LIMIT = (1 << 63) - 1

_HEADER = struct.Struct(">qiibIhiqqqhii")


class HeaderRun(NamedTuple):
    """A run of plain batches (see the module docstring): where it ends and what the readers add up."""

    end: int
    batches: int
    records: int
    bytes: int
    last_base: int
    last_offset: int
    last_position: int
    last_size: int
    last_max_timestamp: int
    last_count: int
    #: Bit ``1 << id`` for every compression codec id of the run.
    codecs: int
    #: The least max-timestamp >= 0 (-1: none), the largest max-timestamp.
    min_timestamp: int
    max_timestamp: int
    #: Offset- and time-index entries the run's batches answer; time entries on batches of more than one record.
    offset_entries: int
    time_entries: int
    time_rules: int
    #: The time-index checker's largest timestamp so far, and the last offset of its batch (-1: it did not grow).
    max_so_far: int
    offset_of_max: int
    compressed_batches: int
    compressed_bytes: int
    #: The latest max-timestamp >= 0 at the run's end (-1: none yet).
    last_timestamp: int
    #: (pid, first base, first last offset, first max-timestamp, latest epoch, last offset, batches, records,
    #: least and largest max-timestamp >= 0 or -1), in order of their first batch.
    producers: list[tuple[int, int, int, int, int, int, int, int, int, int]]
    #: The longest silences: (start, end, after offset, before offset), longest first.
    silences: list[tuple[int, int, int, int]]
    #: The timeline's buckets: (first offset, last offset, min ts, max ts, batches, records, bytes, largest batch).
    buckets: list[tuple[int, int, int, int, int, int, int, int]]
    #: Whether ``buckets[0]`` continues the open bucket.
    continued: bool


class IndexEntries:
    """An index's entries that the walk of the log has not met yet (an index checker's ``pending``), in the order
    it meets them, as int64 columns: ``keys`` orders them (an offset-index entry's log position, a time-index
    entry's offset), ``values`` is the other field (the entry's offset, its timestamp) and ``slots`` their slots in
    the index file (None: entry i is slot i); the entries from ``next`` on are pending.  Columns rather than a
    tuple an entry: a segment of 16,000 batches has 32,000 entries, whose tuples (built, collected by the garbage
    collector, converted back by the C loop) were a fifth of ``kdump verify``'s time."""

    __slots__ = ("keys", "values", "slots", "next")

    def __init__(self, keys: array[int], values: array[int], slots: array[int] | None = None) -> None:
        self.keys = keys
        self.values = values
        self.slots = slots
        self.next = 0

    @classmethod
    def of(cls, entries: Sequence[tuple[int, int, int]]) -> IndexEntries:
        """From ``(key, slot, value)`` tuples in the order the walk meets them."""
        return cls(
            array("q", [e[0] for e in entries]),
            array("q", [e[2] for e in entries]),
            array("q", [e[1] for e in entries]),
        )

    def __len__(self) -> int:
        return len(self.keys) - self.next

    def first_key(self) -> int:
        """The key of the next entry (there is one)."""
        return self.keys[self.next]

    def pop(self) -> tuple[int, int, int]:
        """The next entry as ``(key, slot, value)``, met."""
        i = self.next
        self.next = i + 1
        return self.keys[i], i if self.slots is None else self.slots[i], self.values[i]

    def rest(self) -> list[tuple[int, int, int]]:
        """The entries not met, as ``(key, slot, value)``, and none pending any more."""
        out = [self.pop() for _ in range(len(self))]
        return out

    def columns(self) -> tuple[array[int], array[int], int]:
        """What :func:`header_run` reads: ``(keys, values, next)``."""
        return self.keys, self.values, self.next


class RunLimits:
    """What a run must respect, gathered from the readers before each run (``limit``)."""

    __slots__ = (
        "ok",
        "crc",
        "segment_base",
        "previous_last",
        "epoch",
        "max_so_far",
        "sample_at",
        "per_bucket",
        "fill",
        "allowance",
        "last_timestamp",
        "offset_pending",
        "time_pending",
        "wanted_last",
        "wanted_base",
    )

    def __init__(self) -> None:
        self.ok = True
        #: Whether a run's batches must have valid CRCs (a reader that judges none, as ``kdump report``'s
        #: header pass, says False: the run then reads the 61-byte headers only, never a record's bytes).
        self.crc = True
        self.segment_base = -NO_LIMIT - 1
        self.previous_last: int | None = None
        self.epoch: int | None = None
        self.max_so_far = -1
        self.sample_at = NO_LIMIT
        #: Without a timeline: one bucket that never fills (the caller ignores it).
        self.per_bucket = NO_LIMIT
        self.fill = 0
        self.allowance = NO_LIMIT
        self.last_timestamp = -1
        self.offset_pending: IndexEntries | None = None
        self.time_pending: IndexEntries | None = None
        self.wanted_last: frozenset[int] | set[int] | None = None
        self.wanted_base: frozenset[int] | set[int] | None = None

    def previous(self, last: int | None) -> None:
        """A reader's last offset of the previous batch (None: it knows none, so no run)."""
        if last is None or (self.previous_last is not None and last != self.previous_last):
            self.ok = False
        else:
            self.previous_last = last

    def leader_epoch(self, epoch: int | None) -> None:
        """A reader's current partition leader epoch (a run keeps it)."""
        if epoch is None or (self.epoch is not None and epoch != self.epoch):
            self.ok = False
        else:
            self.epoch = epoch


def header_run_py(
    buf: Any,
    pos: int,
    end: int,
    stop: int,
    crc: Callable[[Any], int] | None,
    limits: tuple[int, ...],
    offset_pending: tuple[array[int], array[int], int] | None,
    time_pending: tuple[array[int], array[int], int] | None,
    wanted_last: frozenset[int] | set[int] | None,
    wanted_base: frozenset[int] | set[int] | None,
) -> tuple[Any, ...] | None:
    """The pure-Python twin of ``kdump._speedups.header_run`` (its comment says what a plain batch is): the same
    tuple, or None when the batch at ``pos`` is not plain.  ``buf`` is the segment's bytes, or a file descriptor
    (an int) read with ``os.pread`` (61 bytes a header; a batch's bytes when its CRC is checked): a read that
    comes back short (the file ends sooner, or shrank) ends the run there, as the end of a buffer does."""
    segment_base, previous, epoch, max_so_far, sample_at, per_bucket, fill, allowance, last_ts = limits
    fd = buf if isinstance(buf, int) else -1
    if fd < 0:
        end = min(end, len(buf))
        mv = memoryview(buf)
    unpack = _HEADER.unpack_from
    pread = os.pread
    off_keys, off_values, off_next = offset_pending or ((), (), 0)
    time_keys, time_values, time_next = time_pending or ((), (), 0)
    off_n, time_n = max(0, len(off_keys) - off_next), max(0, len(time_keys) - time_next)
    off_used = time_used = 0
    batches = records = total = last_base = last_size = last_max = last_count = codecs = 0
    last_offset, last_position = previous, pos
    min_ts, max_ts = -1, -(1 << 63)
    rules = compressed = compressed_bytes = opened = 0
    offset_of_max = -1
    producers: dict[int, list[int]] = {}
    silences: list[tuple[int, int, int, int]] = []
    buckets: list[list[int]] = []
    continued = fill < per_bucket
    while 0 <= pos < stop and end - pos >= 61:
        if fd >= 0:
            header = pread(fd, 61, pos)
            if len(header) < 61:
                break
        else:
            header = buf
        (
            base,
            length,
            leader_epoch,
            magic,
            checksum,
            attributes,
            delta,
            _,
            ts,
            pid,
            producer_epoch,
            _,
            count,
        ) = unpack(header, 0 if fd >= 0 else pos)
        if length < 49 or length > BIG_BATCH or magic != 2 or length > end - pos - 12:
            break
        codec = attributes & 0x07
        if codec > 4 or attributes & 0x70:
            break
        if (
            delta < 0
            or count < 0
            or previous == NO_LIMIT
            or base != previous + 1
            or base < segment_base
            or base > NO_LIMIT - delta
            or leader_epoch != epoch
        ):
            break
        last = base + delta
        size = 12 + length
        if codec != 0 and pos >= sample_at:
            break
        if pid >= 0 and ((wanted_last and last in wanted_last) or (wanted_base and base in wanted_base)):
            break
        if pid >= 0 and pid not in producers and len(producers) == RUN_PRODUCERS:
            break
        off_k, time_k = off_used, time_used
        plain = True
        while off_k < off_n:
            position, offset = off_keys[off_next + off_k], off_values[off_next + off_k]
            if position >= pos + size:
                break
            if position != pos or offset != last:
                plain = False
                break
            off_k += 1
        new_max = ts if ts > max_so_far else max_so_far
        new_rules = 0
        while plain and time_k < time_n:
            offset, timestamp = time_keys[time_next + time_k], time_values[time_next + time_k]
            if offset > last:
                break
            if offset != last or timestamp != ts or new_max > timestamp:
                plain = False
                break
            if last > base:
                new_rules += 1
            time_k += 1
        if not plain:
            break
        if crc is not None:
            if fd >= 0:
                body = pread(fd, size - 21, pos + 21)
                if len(body) < size - 21 or crc(body) != checksum:
                    break
            elif crc(mv[pos + 21 : pos + size]) != checksum:
                break
        if fill < per_bucket:
            if not buckets:
                buckets.append([base, last, ts, ts, 0, 0, 0, 0])
        else:
            buckets.append([base, last, ts, ts, 0, 0, 0, 0])
            fill = 0
            opened += 1
        bucket = buckets[-1]
        fill += 1
        bucket[1] = last
        if ts >= 0 and (bucket[2] < 0 or ts < bucket[2]):
            bucket[2] = ts
        if ts > bucket[3]:
            bucket[3] = ts
        bucket[4] += 1
        bucket[5] += count
        bucket[6] += size
        if size > bucket[7]:
            bucket[7] = size
        off_used, time_used = off_k, time_k
        rules += new_rules
        if ts > max_so_far:
            max_so_far, offset_of_max = ts, last
        if ts >= 0 and last_ts >= 0 and ts > last_ts:
            duration = ts - last_ts
            if len(silences) < RUN_SILENCES or duration > silences[-1][1] - silences[-1][0]:
                silences.append((last_ts, ts, previous, base))
                silences.sort(key=lambda g: g[0] - g[1])
                del silences[RUN_SILENCES:]
        if pid >= 0:
            p = producers.get(pid)
            if p is None:
                p = producers[pid] = [pid, base, last, ts, 0, 0, 0, 0, -1, -1]
            p[4], p[5] = producer_epoch, last
            p[6] += 1
            p[7] += count
            if ts >= 0:
                if p[8] < 0 or ts < p[8]:
                    p[8] = ts
                if ts > p[9]:
                    p[9] = ts
        if codec != 0:
            compressed += 1
            compressed_bytes += size
        codecs |= 1 << codec
        if ts >= 0:
            if min_ts < 0 or ts < min_ts:
                min_ts = ts
            last_ts = ts
        if ts > max_ts:
            max_ts = ts
        batches += 1
        records += count
        total += size
        last_base, last_offset, last_position, last_size, last_max, last_count = (
            base,
            last,
            pos,
            size,
            ts,
            count,
        )
        previous = last
        pos += size
        if opened and opened >= allowance:
            break  # the caller folds its buckets after this one
    if not batches:
        return None
    return (
        pos,
        batches,
        records,
        total,
        last_base,
        last_offset,
        last_position,
        last_size,
        last_max,
        last_count,
        codecs,
        min_ts,
        max_ts,
        off_used,
        time_used,
        rules,
        max_so_far,
        offset_of_max,
        compressed,
        compressed_bytes,
        last_ts,
        [tuple(p) for p in producers.values()],
        silences,
        [tuple(b) for b in buckets],
        continued,
    )


def _header_run_function() -> Callable[..., tuple[Any, ...] | None]:
    fast = getattr(record_batch._SPEEDUPS, "header_run", None)
    return fast if fast is not None else header_run_py


#: ``kdump._speedups.header_run`` where it is built (and ``KDUMP_PURE_PYTHON`` is not set), else the twin.
header_run = _header_run_function()

#: ``KDUMP_HEADER_RUNS=0`` turns runs off: every batch goes to every reader (the tests compare both ways).
ENABLED = os.environ.get("KDUMP_HEADER_RUNS", "1") != "0"


class RunWalk:
    """The ``runs`` callback of ``FileRecords.batches``: ``(buf, pos, end, stop, fd) -> end of the run | None``.
    Before each run every reader says its limits; after it every reader takes the run.  ``fd`` (``takes_fd``:
    ``FileRecords.batches`` opens one for a mapped file; -1: none) is read with pread instead of the map ``buf``
    when no CRC is checked (``kdump report``'s header pass and the index checks alone read 61 bytes a batch: a
    map's fault maps 64 KiB); a run that checks CRCs reads the map (reading every byte through the descriptor
    instead cost as much: the kernel's copy for the page faults)."""

    __slots__ = ("readers", "function")

    #: ``FileRecords.batches`` passes a file descriptor of the file as ``fd``.
    takes_fd = True

    def __init__(self, readers: Sequence[Any]) -> None:
        self.readers = readers
        self.function = header_run

    def __call__(self, buf: Any, pos: int, end: int, stop: int, fd: int = -1) -> int | None:
        limits = RunLimits()
        for reader in self.readers:
            reader.limit(limits)
            if not limits.ok:
                return None
        if limits.previous_last is None or limits.epoch is None:
            return None
        found = self.function(
            fd if fd >= 0 and not limits.crc else buf,
            pos,
            end,
            stop,
            crc32c if limits.crc else None,
            (
                limits.segment_base,
                limits.previous_last,
                limits.epoch,
                limits.max_so_far,
                limits.sample_at,
                limits.per_bucket,
                limits.fill,
                limits.allowance,
                limits.last_timestamp,
            ),
            None if limits.offset_pending is None else limits.offset_pending.columns(),
            None if limits.time_pending is None else limits.time_pending.columns(),
            limits.wanted_last or None,
            limits.wanted_base or None,
        )
        if found is None:
            return None
        run = HeaderRun._make(found)
        for reader in self.readers:
            reader.run(run)
        return run.end


def run_walk(readers: Sequence[Any]) -> RunWalk | None:
    """A :class:`RunWalk` over ``readers``, or None when runs are off or one of them takes no runs."""
    if not ENABLED or not all(getattr(r, "runs", False) for r in readers):
        return None
    return RunWalk(readers)
