"""A partition's compression ratio, from a bounded sample of its batches.

A v2 batch header says which codec compressed the records, not how large they were before: Kafka keeps no
uncompressed size anywhere on disk.  The exact ratio would need every batch decompressed (the whole log read
and inflated: what ``kdump report`` avoids).  So the ratio is measured on at most :data:`SAMPLES` compressed
batches per partition, spread evenly through its log by byte position (one every ``log bytes / SAMPLES``), each
decompressed whole (bounded by the batch's decompression limit) and counted, never decoded into records.  The
figure is labelled with how many of the compressed batches were sampled; it is exact when all of them were.
Legacy (v0/v1) compressed wrappers are not sampled.  Pure: fed by the partition's one header pass
(:mod:`kdump.analysis.segment_walk`).
"""

from __future__ import annotations

from dataclasses import dataclass

from kdump.analysis.header_run import HeaderRun, RunLimits
from kdump.analysis.segment_walk import SegmentVisitor
from kdump.errors import KdumpError
from kdump.storage import compression, naming
from kdump.storage.file_records import FileRecords, RecordBatch
from kdump.storage.local_log import LocalLog
from kdump.storage.log_segment import LogSegment
from kdump.storage.record_batch import COMPRESSION_CODEC_MASK, RECORD_BATCH_OVERHEAD

#: Compressed batches decompressed per partition, at most.
SAMPLES = 32


@dataclass
class CompressionSample:
    """What the sample found: ``uncompressed_bytes / sampled_bytes`` is the ratio."""

    #: Compressed v2 batches in the partition (every one, from the headers).
    compressed_batches: int = 0
    #: Bytes of those batches on disk.
    compressed_bytes: int = 0
    #: Batches decompressed, their bytes on disk, and their size with the records uncompressed (header
    #: included, as a batch of codec ``none`` would be).
    sampled_batches: int = 0
    sampled_bytes: int = 0
    uncompressed_bytes: int = 0
    #: Sampled batches that could not be decompressed (not in the figures; ``verify --deep`` says why).
    failed: int = 0

    @property
    def ratio(self) -> float | None:
        """Uncompressed over compressed size of the sampled batches (None: none sampled)."""
        return self.uncompressed_bytes / self.sampled_bytes if self.sampled_bytes else None

    @property
    def exact(self) -> bool:
        """Whether every compressed batch was sampled (the ratio is then the partition's own)."""
        return self.sampled_batches + self.failed == self.compressed_batches


class CompressionSampler(SegmentVisitor):
    """The sample, taken in a partition's header pass; :attr:`sample` when the pass is over."""

    def __init__(self, log: LocalLog, samples: int = SAMPLES) -> None:
        total = sum(s.log_size for s in log.log_segments)
        #: Log bytes between two samples, over the partition's segments end to end.
        self.stride = max(1, total // samples) if samples > 0 else 0
        self.samples = samples
        self.sample = CompressionSample()
        self.start_of_segment = 0
        self.next_at = 0
        self.size = 0

    def start(self, segment: LogSegment) -> bool:
        self.start_of_segment += self.size
        self.size = 0
        return segment.has(naming.LOG_FILE_SUFFIX)

    def opened(self, records: FileRecords) -> None:
        self.size = records.size_in_bytes

    runs = True

    def limit(self, limits: RunLimits) -> None:
        s = self.sample
        if s.sampled_batches + s.failed < self.samples:
            limits.sample_at = min(limits.sample_at, self.next_at - self.start_of_segment)

    def run(self, run: HeaderRun) -> None:
        self.sample.compressed_batches += run.compressed_batches
        self.sample.compressed_bytes += run.compressed_bytes

    def batch(self, batch: RecordBatch) -> None:
        if batch.magic != 2 or not batch.attributes & COMPRESSION_CODEC_MASK:
            return
        s = self.sample
        s.compressed_batches += 1
        s.compressed_bytes += batch.size_in_bytes
        at = self.start_of_segment + batch.position
        if at < self.next_at or s.sampled_batches + s.failed >= self.samples:
            return
        self.next_at = at + self.stride
        try:
            size = RECORD_BATCH_OVERHEAD + _decompressed_size(batch)
        except (KdumpError, ValueError):
            s.failed += 1
            return
        s.sampled_batches += 1
        s.sampled_bytes += batch.size_in_bytes
        s.uncompressed_bytes += size


def _decompressed_size(batch: RecordBatch) -> int:
    """Bytes of ``batch``'s records once decompressed, read a piece at a time (nothing kept)."""
    start = batch.position + RECORD_BATCH_OVERHEAD
    data = batch.buf[start : batch.position + batch.size_in_bytes]  # type: ignore[attr-defined]
    reader = compression.open_eager_decompressor(
        batch.attributes & COMPRESSION_CODEC_MASK, data, limit=batch.decompression_limit
    )
    n = 0
    while True:
        piece = reader.read(1 << 20)
        if not piece:
            return n
        n += len(piece)
