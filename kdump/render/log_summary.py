"""The forms of ``kdump ls``: aligned plain text (for pipes) and JSON lines (the terminal table:
:mod:`kdump.render.ls_table`)."""

from __future__ import annotations

import os
from collections.abc import Sequence
from datetime import tzinfo
from typing import TYPE_CHECKING, Any

from kdump.analysis.log_summary import PartitionSummary
from kdump.problem import LEFT_OVER_FILE, Problem
from kdump.render.human_time import iso
from kdump.render.json_lines import head, line
from kdump.render.problem_text import details, sentence, sentences
from kdump.render.safe_text import safe_text

if TYPE_CHECKING:
    from kdump.facts.ls import LogDir

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


def iso_time(ms: int | None, tz: tzinfo | None = None) -> str:
    return "-" if ms is None else iso(ms, tz)


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


def plain_table(
    summaries: list[PartitionSummary],
    *,
    columns: Sequence[str] | None = None,
    log_dirs: Sequence[LogDir] | None = None,
    human_time: bool = False,
    tz: tzinfo | None = None,
    verbose: bool = False,
) -> str:
    """Columns padded to their widest cell, two spaces apart, no trailing blanks; then one
    ``<directory>: <anomaly>`` line per anomaly.  ``columns``: only these (``DIR`` is ``LOG-DIR``);
    ``log_dirs`` (several log directories): ``LOG-DIR`` and ``BROKER`` columns at the end; ``human_time``:
    ``MIN-TIME``/``MAX-TIME`` (ISO-8601) after ``MIN-TIMESTAMP``/``MAX-TIMESTAMP``."""
    brokers = {d.path: d.broker_id for d in log_dirs or ()}
    names = list(COLUMNS)
    if any(s.remote_segments is not None for s in summaries):  # ls --remote-root: a tiered partition's part
        names[names.index("SIZE") + 1 : names.index("SIZE") + 1] = ["REMOTE-SEGMENTS", "REMOTE-BYTES"]
    if log_dirs:
        names += ["LOG-DIR", "BROKER"]
    if columns:
        names = ["LOG-DIR" if c == "DIR" else c for c in columns]
    if human_time:
        for ms_name, iso_name in (("MIN-TIMESTAMP", "MIN-TIME"), ("MAX-TIMESTAMP", "MAX-TIME")):
            if ms_name in names:
                names.insert(names.index(ms_name) + 1, iso_name)
    rows = [names]
    for s in summaries:
        log_dir = os.path.dirname(os.path.abspath(s.directory))
        broker = brokers.get(log_dir)
        cells = dict(zip(COLUMNS, row(s), strict=True))
        cells.update(
            {
                "LOG-DIR": log_dir,
                "BROKER": "-" if broker is None else str(broker),
                "REMOTE-SEGMENTS": _opt(s.remote_segments),
                "REMOTE-BYTES": _opt(s.remote_bytes),
                "MIN-TIME": iso_time(s.min_timestamp, tz),
                "MAX-TIME": iso_time(s.max_timestamp, tz),
            }
        )
        rows.append([safe_text(cells[n]) for n in names])
    widths = [max(len(r[i]) for r in rows) for i in range(len(names))]
    lines = ["  ".join(cell.ljust(w) for cell, w in zip(r, widths, strict=True)).rstrip() for r in rows]
    for s in summaries:
        lines.extend(safe_text(f"{s.directory}: {a}") for a in anomaly_texts(s.anomalies, verbose=verbose))
    return "\n".join(lines) + "\n"


def anomaly_texts(anomalies: Sequence[Problem], *, verbose: bool = False) -> list[str]:
    """A partition's anomalies as lines: the left-over files of a deletion or cleaning (``.deleted``,
    ``.cleaned``, ``.swap``; a broker deletes them ``file.delete.delay.ms`` later) counted by kind, one line
    each with ``verbose``."""
    if verbose:
        return sentences(anomalies)
    left_over: dict[str, list[Problem]] = {}
    lines: list[str | list[Problem]] = []
    for a in anomalies:
        if a.kind == LEFT_OVER_FILE:
            suffix = "." + str(a["name"]).rsplit(".", 1)[-1]
            if suffix not in left_over:
                left_over[suffix] = []
                lines.append(left_over[suffix])  # where the count goes, in the order first seen
            left_over[suffix].append(a)
        else:
            lines.append(sentence(a))
    suffix_of = {id(files): suffix for suffix, files in left_over.items()}
    return list(
        dict.fromkeys(
            line
            if isinstance(line, str)
            else (
                f"{len(line)} left-over {suffix_of[id(line)]} files (-v lists them)"
                if len(line) > 1
                else sentence(line[0])
            )
            for line in lines
        )
    )


def summary_object(
    s: PartitionSummary, *, log_dir: str | None = None, broker_id: int | None = None
) -> dict[str, Any]:
    return head(
        "partition",
        directory=s.directory,
        logDir=log_dir if log_dir is not None else os.path.dirname(os.path.abspath(s.directory)),
        brokerId=broker_id,
        topic=s.topic,
        partition=s.partition,
        segments=s.segments,
        sizeBytes=s.size_bytes,
        firstSegmentBaseOffset=s.first_segment_base_offset,
        logStartOffset=s.log_start_offset,
        logStartOffsetCheckpoint=s.log_start_offset_checkpoint,
        logEndOffset=s.log_end_offset,
        highWatermark=s.high_watermark,
        recoveryPoint=s.recovery_point,
        cleanerCheckpoint=s.cleaner_checkpoint,
        batches=s.batches,
        records=s.records,
        minTimestamp=s.min_timestamp,
        maxTimestamp=s.max_timestamp,
        codecs=s.codecs,
        producers=s.producers,
        openTransactions=[
            {"producerId": t.producer_id, "producerEpoch": t.producer_epoch, "firstOffset": t.first_offset}
            for t in s.open_transactions
        ],
        anomalies=sentences(s.anomalies),
        anomalyDetails=details(s.anomalies),
        **(
            {}
            if s.remote_segments is None
            else {"remoteSegments": s.remote_segments, "remoteBytes": s.remote_bytes or 0}
        ),
    )


def summary_json(s: PartitionSummary, *, log_dir: str | None = None, broker_id: int | None = None) -> str:
    return line(summary_object(s, log_dir=log_dir, broker_id=broker_id))
