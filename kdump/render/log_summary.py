"""The forms of ``kdump ls``: aligned plain text (for pipes), JSON lines, and the rows of the rich table."""

from __future__ import annotations

import json
from datetime import UTC, datetime
from typing import Any

from kdump.storage.log_summary import PartitionSummary

#: Version of the ``kdump ls --json`` objects.
JSON_SCHEMA_VERSION = 1

COLUMNS = (
    "TOPIC",
    "PARTITION",
    "SEGMENTS",
    "SIZE",
    "LOG-START",
    "LOG-END",
    "HIGH-WATERMARK",
    "RECOVERY-POINT",
    "RECORDS",
    "MIN-TIMESTAMP",
    "MAX-TIMESTAMP",
    "CODECS",
    "PRODUCERS",
    "OPEN-TXNS",
    "ANOMALIES",
)


def _opt(value: int | None) -> str:
    return "-" if value is None else str(value)


def iso_time(ms: int | None) -> str:
    if ms is None:
        return "-"
    try:
        return datetime.fromtimestamp(ms / 1000, tz=UTC).isoformat(timespec="milliseconds")
    except (OverflowError, OSError, ValueError):
        return str(ms)


def row(s: PartitionSummary, *, human: bool = False) -> list[str]:
    """One table row; ``human`` uses ISO times and sizes in KiB/MiB/GiB (the terminal table)."""
    return [
        s.topic if s.topic is not None else s.directory,
        _opt(s.partition),
        str(s.segments),
        human_size(s.size_bytes) if human else str(s.size_bytes),
        _opt(s.log_start_offset),
        _opt(s.log_end_offset),
        _opt(s.high_watermark),
        _opt(s.recovery_point),
        str(s.records),
        iso_time(s.min_timestamp) if human else _opt(s.min_timestamp),
        iso_time(s.max_timestamp) if human else _opt(s.max_timestamp),
        ",".join(s.codecs) or "-",
        str(len(s.producers)),
        str(len(s.open_transactions)),
        str(len(s.anomalies)),
    ]


def human_size(n: int) -> str:
    size = float(n)
    for unit in ("B", "KiB", "MiB", "GiB", "TiB"):
        if size < 1024 or unit == "TiB":
            return f"{n} B" if unit == "B" else f"{size:.1f} {unit}"
        size /= 1024
    return f"{n} B"  # pragma: no cover


def plain_table(summaries: list[PartitionSummary]) -> str:
    """Columns padded to their widest cell, two spaces apart, no trailing blanks; then one
    ``<directory>: <anomaly>`` line per anomaly."""
    rows = [list(COLUMNS)] + [row(s) for s in summaries]
    widths = [max(len(r[i]) for r in rows) for i in range(len(COLUMNS))]
    lines = ["  ".join(cell.ljust(w) for cell, w in zip(r, widths, strict=True)).rstrip() for r in rows]
    for s in summaries:
        lines.extend(f"{s.directory}: {a}" for a in s.anomalies)
    return "\n".join(lines) + "\n"


def summary_object(s: PartitionSummary) -> dict[str, Any]:
    return {
        "type": "partition",
        "version": JSON_SCHEMA_VERSION,
        "directory": s.directory,
        "topic": s.topic,
        "partition": s.partition,
        "segments": s.segments,
        "sizeBytes": s.size_bytes,
        "firstSegmentBaseOffset": s.first_segment_base_offset,
        "logStartOffset": s.log_start_offset,
        "logStartOffsetCheckpoint": s.log_start_offset_checkpoint,
        "logEndOffset": s.log_end_offset,
        "highWatermark": s.high_watermark,
        "recoveryPoint": s.recovery_point,
        "cleanerCheckpoint": s.cleaner_checkpoint,
        "batches": s.batches,
        "records": s.records,
        "minTimestamp": s.min_timestamp,
        "maxTimestamp": s.max_timestamp,
        "codecs": s.codecs,
        "producers": s.producers,
        "openTransactions": [
            {"producerId": t.producer_id, "producerEpoch": t.producer_epoch, "firstOffset": t.first_offset}
            for t in s.open_transactions
        ],
        "anomalies": s.anomalies,
    }


def summary_json(s: PartitionSummary) -> str:
    return json.dumps(summary_object(s), ensure_ascii=False) + "\n"
