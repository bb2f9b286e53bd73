"""Situations built for the forensic commands' tests (``kdump txn``, ``find --group``, ``diff``,
``retention``): partitions written with kdump's encoder, and internal-topic records encoded here by hand with
``struct`` from Kafka's message definitions (an encoder independent of kdump's schema reader)."""

from __future__ import annotations

import os
import struct

from kdump.storage.control_record import ControlRecordType
from kdump.storage.naming import offset_to_filename
from kdump.storage.offset_checkpoint import encode_offset_checkpoint
from kdump.storage.transaction_index import AbortedTxn, encode_transaction_index
from tests.builder import SimpleRecord, build_end_txn_marker_batch, build_v2_batch

T0 = 1_700_000_000_000


def _string(text: str) -> bytes:
    data = text.encode()
    return struct.pack(">h", len(data)) + data


def txn_log_key(transactional_id: str) -> bytes:
    """``TransactionLogKey`` v0: int16 version, string transactional id."""
    return struct.pack(">h", 0) + _string(transactional_id)


def txn_log_value(
    producer_id: int,
    epoch: int,
    timeout_ms: int,
    status: int,
    partitions: dict[str, list[int]],
    last_update: int,
    start: int,
) -> bytes:
    """``TransactionLogValue`` v0 (non-flexible): pid, epoch, timeout, status, partitions, timestamps."""
    body = struct.pack(">hqhib", 0, producer_id, epoch, timeout_ms, status)
    body += struct.pack(">i", len(partitions))
    for topic, ids in partitions.items():
        body += _string(topic) + struct.pack(">i", len(ids)) + b"".join(struct.pack(">i", i) for i in ids)
    return body + struct.pack(">qq", last_update, start)


def offset_commit_key(group: str, topic: str, partition: int) -> bytes:
    """``OffsetCommitKey`` as record type 1: int16 type, group, topic, int32 partition."""
    return struct.pack(">h", 1) + _string(group) + _string(topic) + struct.pack(">i", partition)


def offset_commit_value(offset: int, leader_epoch: int, metadata: str, commit_ts: int) -> bytes:
    """``OffsetCommitValue`` v3: offset, leader epoch, metadata, commit timestamp."""
    return struct.pack(">hqi", 3, offset, leader_epoch) + _string(metadata) + struct.pack(">q", commit_ts)


def write_segment(directory: str, base_offset: int, batches: list[bytes]) -> None:
    os.makedirs(directory, exist_ok=True)
    with open(os.path.join(directory, offset_to_filename(base_offset, ".log")), "wb") as f:
        f.write(b"".join(batches))


def records_batch(
    offset: int, values: list[bytes], *, ts: int, keys: list[bytes | None] | None = None, **kw: int | bool
) -> bytes:
    keys = keys or [b"k%d" % (offset + i) for i in range(len(values))]
    return build_v2_batch(
        [SimpleRecord(v, key=k, timestamp=ts + i) for i, (k, v) in enumerate(zip(keys, values, strict=True))],
        base_offset=offset,
        **kw,  # type: ignore[arg-type]
    )


def stuck_transaction_log_dir(log_dir: str, *, coordinator_status: int | None) -> None:
    """A data directory where producer 7 died mid-transaction on ``txn-0``.

    ``txn-0``: producer 5 commits offsets 0-2 (marker 3); producer 7 (epoch 1) opens a transaction at offset 4
    (offsets 4-5) and never ends it; producer 5 aborts offsets 6-7 (marker 8, ``.txnindex`` entry); a plain
    batch at 9.  High watermark 10.  When ``coordinator_status`` is given, ``__transaction_state-0`` holds
    transactional id ``app-7`` for producer 7 in that ``TransactionState`` (with ``txn-0`` among its
    partitions) and ``app-5`` CompleteAbort.
    """
    part = os.path.join(log_dir, "txn-0")
    batches = [
        records_batch(0, [b"a", b"b", b"c"], ts=T0, producer_id=5, producer_epoch=0, base_sequence=0,
                      is_transactional=True),
        build_end_txn_marker_batch(ControlRecordType.COMMIT, coordinator_epoch=0, producer_id=5,
                                   producer_epoch=0, base_offset=3, timestamp=T0 + 50),
        records_batch(4, [b"d", b"e"], ts=T0 + 100, producer_id=7, producer_epoch=1, base_sequence=0,
                      is_transactional=True),
        records_batch(6, [b"f", b"g"], ts=T0 + 200, producer_id=5, producer_epoch=0, base_sequence=3,
                      is_transactional=True),
        build_end_txn_marker_batch(ControlRecordType.ABORT, coordinator_epoch=0, producer_id=5,
                                   producer_epoch=0, base_offset=8, timestamp=T0 + 230),
        records_batch(9, [b"h"], ts=T0 + 300),
    ]  # fmt: skip
    write_segment(part, 0, batches)
    with open(os.path.join(part, offset_to_filename(0, ".txnindex")), "wb") as f:
        f.write(encode_transaction_index([AbortedTxn(0, 5, 6, 8, 4)]))
    with open(os.path.join(log_dir, "replication-offset-checkpoint"), "wb") as f:
        f.write(encode_offset_checkpoint({("txn", 0): 10}))
    if coordinator_status is not None:
        state = os.path.join(log_dir, "__transaction_state-0")
        values = [
            (b"app-5", txn_log_value(5, 0, 60000, 5, {}, T0 + 230, T0 + 200)),
            (b"app-7", txn_log_value(7, 1, 60000, 1, {"txn": [0]}, T0 + 100, T0 + 100)),
            (b"app-7", txn_log_value(7, 1, 60000, coordinator_status, {"txn": [0]}, T0 + 400, T0 + 100)),
        ]
        write_segment(
            state,
            0,
            [
                build_v2_batch(
                    [SimpleRecord(v, key=txn_log_key(k.decode()), timestamp=T0 + i)], base_offset=i
                )
                for i, (k, v) in enumerate(values)
            ],
        )
