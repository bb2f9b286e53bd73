"""Build synthetic partition directories of many small segments, with the indexes a broker would write (made
with kdump's own recovery, :func:`kdump.analysis.index_recovery.recover_indexes`).  Used by the tests of
``kdump find`` / ``kdump rebuild-index`` and by ``bench/find_bench.py``."""

from __future__ import annotations

import os
import struct

from kdump.analysis.index_recovery import recover_indexes
from kdump.storage.file_records import FileRecords
from kdump.storage.naming import offset_to_filename
from tests.builder import SimpleRecord, build_v2_batch

BASE_TIMESTAMP = 1_700_000_000_000
_OFFSET = struct.Struct(">q")


def build_partition(
    directory: str,
    segments: int,
    *,
    batches_per_segment: int = 8,
    records_per_batch: int = 5,
    value_size: int = 100,
    index_interval_bytes: int = 1024,
    distinct_timestamps: bool = False,
) -> list[tuple[int, int]]:
    """Write ``segments`` segments (``.log``, ``.index``, ``.timeindex``) into ``directory``; return each
    segment's (base offset, next offset).

    Segment ``i`` holds offsets ``i * batches_per_segment * records_per_batch`` onwards.  By default one batch
    is encoded per segment and copied with its base offset rewritten (the CRC does not cover the base offset),
    so thousands of segments take seconds; record ``j`` of every batch of segment ``i`` then has timestamp
    ``BASE_TIMESTAMP + i * 1000 + j``.  With ``distinct_timestamps`` every batch is encoded on its own and the
    record at offset ``o`` of segment ``i`` has timestamp ``BASE_TIMESTAMP + i * 1000 + (o - base offset)``.
    """
    os.makedirs(directory, exist_ok=True)
    per_segment = batches_per_segment * records_per_batch
    out = []
    value = b"v" * value_size
    for i in range(segments):
        base = i * per_segment
        if distinct_timestamps:
            log = b"".join(
                build_v2_batch(
                    [
                        SimpleRecord(
                            value,
                            key=b"k%d" % j,
                            timestamp=BASE_TIMESTAMP + i * 1000 + b * records_per_batch + j,
                        )
                        for j in range(records_per_batch)
                    ],
                    base_offset=base + b * records_per_batch,
                )
                for b in range(batches_per_segment)
            )
        else:
            template = build_v2_batch(
                [
                    SimpleRecord(value, key=b"k%d" % j, timestamp=BASE_TIMESTAMP + i * 1000 + j)
                    for j in range(records_per_batch)
                ]
            )
            body = template[8:]
            log = b"".join(
                _OFFSET.pack(base + b * records_per_batch) + body for b in range(batches_per_segment)
            )
        with open(os.path.join(directory, offset_to_filename(base, ".log")), "wb") as f:
            f.write(log)
        recovered = recover_indexes(FileRecords.from_bytes(log), base, index_interval_bytes)
        with open(os.path.join(directory, offset_to_filename(base, ".index")), "wb") as f:
            f.write(recovered.offset_index_bytes())
        with open(os.path.join(directory, offset_to_filename(base, ".timeindex")), "wb") as f:
            f.write(recovered.time_index_bytes())
        out.append((base, base + per_segment))
    return out
