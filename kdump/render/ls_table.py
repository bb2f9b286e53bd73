"""``kdump ls`` on a terminal: the table fitted to the width (:mod:`kdump.render.table_fit`), never a cut cell.

Sizes are human (KiB, MiB, GiB) and timestamps ISO-8601; to fit, the table uses short headers and then leaves out
whole columns, least needed first, and says so under the table; ``--wide`` keeps every column, ``--columns``
picks them.  When even topic, partition, size, offsets and anomalies do not fit, every partition is printed as
a block of ``NAME  value`` lines.  Over several log directories a ``DIR`` column numbers them and a legend
names each (with its broker id from ``meta.properties``).
"""

from __future__ import annotations

import os
import textwrap
from collections.abc import Sequence
from datetime import tzinfo

from kdump.analysis.log_summary import PartitionSummary
from kdump.facts.ls import LogDir
from kdump.render import color
from kdump.render.log_summary import anomaly_texts, human_size, iso_time
from kdump.render.safe_text import safe_text
from kdump.render.table_fit import Column, blocks, fit
from kdump.render.tables import partition_list, printable, wrap

#: Every column of ``kdump ls``, in order: full header, short header, order of leaving out (0 = never).
COLUMNS: tuple[Column, ...] = (
    Column("DIR", "DIR"),
    Column("TOPIC", "TOPIC", right=False),
    Column("PARTITION", "PART"),
    Column("SEGMENTS", "SEGS", drop=7),
    Column("SIZE", "SIZE"),
    # ls --remote-root: how many of the segments, and how many bytes, are in remote storage
    Column("REMOTE", "REMOTE", drop=1),
    Column("LOG-START", "START"),
    Column("LOG-END", "END"),
    Column("HIGH-WATERMARK", "HWM", drop=4),
    Column("RECOVERY-POINT", "RECOVERY", drop=9),
    Column("RECORDS", "RECORDS", drop=5),
    Column("MIN-TIMESTAMP", "MIN-TIME", drop=6),
    Column("MAX-TIMESTAMP", "MAX-TIME", drop=3),
    Column("CODECS", "CODECS", drop=10, right=False),
    Column("PRODUCERS", "PIDS", drop=8),
    Column("OPEN-TXNS", "TXNS", drop=2),
    Column("ANOMALIES", "ANOM"),
)

NAMES = tuple(c.name for c in COLUMNS)


def is_empty(s: PartitionSummary) -> bool:
    """Nothing to look at: no records, no anomaly, no open transaction."""
    return s.records == 0 and not s.anomalies and not s.open_transactions


def log_dir_of(s: PartitionSummary) -> str:
    return os.path.dirname(os.path.abspath(s.directory))


def parse_columns(spec: str) -> list[str]:
    """``--columns topic,partition,log-end``: names (full or short, any case) in the order given."""
    by_name = {c.name: c.name for c in COLUMNS} | {c.short: c.name for c in COLUMNS}
    chosen = []
    for raw in spec.split(","):
        name = by_name.get(raw.strip().upper())
        if name is None:
            raise ValueError(f"--columns: no column {raw.strip()!r}; the columns: {', '.join(NAMES).lower()}")
        chosen.append(name)
    return chosen


def cells(s: PartitionSummary, dir_number: str, tz: tzinfo | None = None) -> dict[str, str]:
    """The terminal forms of one partition's cells, by column name."""

    def opt(v: int | None) -> str:
        return "-" if v is None else str(v)

    return {
        "DIR": dir_number,
        "TOPIC": safe_text(s.topic if s.topic is not None else s.directory),
        "PARTITION": opt(s.partition),
        "SEGMENTS": str(s.segments),
        "SIZE": human_size(s.size_bytes),
        "REMOTE": "-"
        if s.remote_segments is None
        else f"{s.remote_segments}: {human_size(s.remote_bytes or 0)}",
        "LOG-START": opt(s.log_start_offset),
        "LOG-END": opt(s.log_end_offset),
        "HIGH-WATERMARK": opt(s.high_watermark),
        "RECOVERY-POINT": opt(s.recovery_point),
        "RECORDS": str(s.records),
        "MIN-TIMESTAMP": iso_time(s.min_timestamp, tz),
        "MAX-TIMESTAMP": iso_time(s.max_timestamp, tz),
        "CODECS": ",".join(s.codecs) or "-",
        "PRODUCERS": str(len(s.producers)),
        "OPEN-TXNS": str(len(s.open_transactions)),
        "ANOMALIES": str(len(s.anomalies)),
    }


def terminal_text(
    summaries: Sequence[PartitionSummary],
    log_dirs: Sequence[LogDir],
    width: int,
    *,
    wide: bool = False,
    columns: Sequence[str] | None = None,
    use_color: bool = False,
    tz: tzinfo | None = None,
    fold_empty: bool = False,
    verbose: bool = False,
) -> str:
    """The whole ``kdump ls`` output for a terminal of ``width`` columns.  ``fold_empty``: the partitions
    without records, anomalies or open transactions are one line after the table rather than rows."""
    folded: list[PartitionSummary] = []
    if fold_empty:
        folded = [s for s in summaries if is_empty(s)]
        if len(folded) < 2:
            folded = []
        elif len(folded) == len(summaries):
            folded = []  # nothing but empty partitions: the table is the answer
        summaries = [s for s in summaries if not is_empty(s)] if folded else summaries
    numbers = {d.path: str(n) for n, d in enumerate(log_dirs, 1)}
    tiered = any(s.remote_segments is not None for s in summaries)
    names = (
        list(columns)
        if columns
        else [n for n in NAMES if (n != "DIR" or len(log_dirs) > 1) and (n != "REMOTE" or tiered)]
    )
    chosen = [c for name in names for c in COLUMNS if c.name == name]
    if columns:  # asked for by name: never left out
        chosen = [Column(c.name, c.short, 0, c.right) for c in chosen]
    rows = []
    for s in summaries:
        by_name = cells(s, numbers.get(log_dir_of(s), "-"), tz)
        rows.append([by_name[c.name] for c in chosen])
    table = fit(chosen, rows, width, wide=wide)
    lines: list[str] = []
    if table is None:
        for n, (s, block) in enumerate(zip(summaries, blocks(chosen, rows), strict=True)):
            if n:
                lines.append("")
            lines.extend(color.paint(line, "red" if s.anomalies else None, use_color) for line in block)
    else:
        lines.append(color.paint(table.header, "bold", use_color))
        for s, line in zip(summaries, table.rows, strict=True):
            lines.append(color.paint(line, "red" if s.anomalies else None, use_color))
        if table.hidden:
            note = (
                f"({len(table.hidden)} columns left out to fit {width} columns: {', '.join(table.hidden)}; "
                "--wide shows all, --columns picks)"
            )
            lines.extend(
                color.paint(line, "dim", use_color)
                for line in textwrap.wrap(note, max(width, 20), break_on_hyphens=False)
            )
    if folded:
        empty = partition_list([(s.topic, s.partition, s.directory) for s in folded])
        lines.extend(
            color.paint(line, "dim", use_color)
            for line in wrap(f"{len(folded)} partitions without records (--all lists them): {empty}", width)
        )
    if len(log_dirs) > 1:
        lines.extend(safe_text(f"DIR {numbers[d.path]}: {d.describe()}") for d in log_dirs)
    for s in summaries:
        for a in anomaly_texts(s.anomalies, verbose=verbose):
            name = printable(s.directory)
            first, *rest = wrap(f"{s.directory}: {a}", width)
            lines.append(color.paint(name, "red", use_color) + first[len(name) :])
            lines.extend(rest)
    return "\n".join(lines) + "\n"
