"""What the Spark data source must return, computed without it: every record as the storage core decodes it,
and an independent read_committed view from the control markers alone.  Shared by test_spark_storage (no JVM)
and test_spark."""

from __future__ import annotations

import struct

from kdump.errors import KdumpError
from kdump.spark.planning import topic_partition
from kdump.storage.file_records import FileRecords
from kdump.storage.local_log import LocalLog, find_partition_dirs
from tests.corpus import FIXTURE_CORPUS

CORPUS_TREES = ("data", "data-kafka39-zk", "synthetic-legacy")
FIXTURE_TREES = [str(FIXTURE_CORPUS / t) for t in CORPUS_TREES if (FIXTURE_CORPUS / t).is_dir()]

# -- kdump's own decode, the reference for every read -------------------------------------------------------

_TS_TYPE = {"CreateTime": 0, "LogAppendTime": 1}


def expected_rows(
    paths: list[str], *, include_headers: bool = False, include_control: bool = False
) -> list[tuple]:
    """Every record under ``paths`` as decoded by the storage core, in the column order of the data source
    (timestamps in milliseconds), for batches that are whole, CRC-valid and decodable."""
    rows = []
    for directory in find_partition_dirs(paths):
        log = LocalLog.scan(directory)
        topic, partition = topic_partition(log)
        for segment in log.log_segments:
            with FileRecords(segment.log_path) as records:
                try:
                    batches = list(records.batches())
                except KdumpError:
                    continue
                for batch in batches:
                    if batch.magic > 2 or not batch.is_valid():
                        continue
                    if batch.is_control_batch and not include_control:  # a consumer never returns them
                        continue
                    try:
                        found = list(batch.records())
                    except KdumpError:
                        continue
                    for r in found:
                        row = [r.key, r.value, topic, partition, r.offset, r.timestamp]
                        row.append(_TS_TYPE.get(batch.timestamp_type, -1))
                        if include_headers:
                            row.append(
                                [(h.key.decode("utf-8", "replace"), h.value) for h in r.headers] or None
                            )
                        row += [
                            segment.log_path,
                            batch.position,
                            batch.base_offset,
                            batch.magic,
                            batch.producer_id,
                            batch.producer_epoch,
                            batch.base_sequence,
                            batch.is_transactional,
                            batch.is_control_batch,
                            batch.compression_name,
                            True,
                            batch.partition_leader_epoch,
                        ]
                        rows.append(tuple(row))
    return sorted(rows, key=row_order)


def row_order(row: tuple) -> tuple:
    return (row[2], row[3], row[4])


# -- an independent read_committed: from the control markers alone ------------------------------------------


def committed_offsets(directory: str) -> set[int]:
    """Offsets a read_committed consumer returns, computed from the markers only (no .txnindex): a
    transaction's records are visible when its producer's next marker is COMMIT; nothing at or after the first
    offset of a transaction without a marker is visible; control records never are."""
    visible: set[int] = set()
    pending: dict[int, list[int]] = {}
    first_pending: dict[int, int] = {}
    log = LocalLog.scan(directory)
    for segment in log.log_segments:
        with FileRecords(segment.log_path) as records:
            for batch in records.batches():
                offsets = [r.offset for r in batch.records()]
                if batch.magic < 2 or not batch.is_transactional:
                    visible.update(offsets)
                elif batch.is_control_batch:
                    key = next(iter(batch.records())).key
                    _version, kind = struct.unpack(">hh", key[:4])
                    if kind == 1:  # COMMIT
                        visible.update(pending.get(batch.producer_id, []))
                    pending.pop(batch.producer_id, None)
                    first_pending.pop(batch.producer_id, None)
                else:
                    pending.setdefault(batch.producer_id, []).extend(offsets)
                    first_pending.setdefault(batch.producer_id, batch.base_offset)
    lso = min(first_pending.values(), default=None)
    return {o for o in visible if lso is None or o < lso}
