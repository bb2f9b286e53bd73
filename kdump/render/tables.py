"""Tables of the forensic commands (``txn``, ``diff``, ``retention``, ``find --group``): one
:class:`Section` (a title, columns, rows, notes) is written as aligned plain text in a pipe or as a rich table on
a terminal, as ``kdump ls`` does."""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import UTC, datetime

from kdump.render.output import Output
from kdump.render.safe_text import safe_text


@dataclass
class Section:
    title: str
    columns: tuple[str, ...] = ()
    rows: list[list[str]] = field(default_factory=list)
    #: Lines printed after the table (findings, commands to run, the configuration used).
    notes: list[str] = field(default_factory=list)
    #: Rows (by index) to highlight on a terminal.
    flagged: set[int] = field(default_factory=set)


#: Cells, titles and notes with control characters escaped (names from disk, metadata strings holding NULs).
printable = safe_text


def opt(value: object) -> str:
    return "-" if value is None else str(value)


def iso_time(ms: int | None) -> str:
    if ms is None or ms < 0:
        return "-"
    try:
        return datetime.fromtimestamp(ms / 1000, tz=UTC).isoformat(timespec="milliseconds")
    except (OverflowError, OSError, ValueError):
        return str(ms)


def duration(ms: int | None) -> str:
    """``1d2h3m4.5s``-style text of a duration in milliseconds (``-`` when unknown)."""
    if ms is None:
        return "-"
    sign = "-" if ms < 0 else ""
    ms = abs(ms)
    days, rest = divmod(ms, 86_400_000)
    hours, rest = divmod(rest, 3_600_000)
    minutes, rest = divmod(rest, 60_000)
    seconds = rest / 1000
    parts = []
    if days:
        parts.append(f"{days}d")
    if hours:
        parts.append(f"{hours}h")
    if minutes:
        parts.append(f"{minutes}m")
    if seconds or not parts:
        parts.append(f"{seconds:g}s")
    return sign + "".join(parts)


def plain(sections: list[Section]) -> str:
    """Each section: its title, the columns padded to their widest cell two spaces apart (no trailing blanks),
    its notes; a blank line between sections."""
    chunks = []
    for s in sections:
        lines = [printable(s.title)] if s.title else []
        if s.columns:
            rows = [list(s.columns)] + [[printable(c) for c in r] for r in s.rows]
            widths = [max(len(r[i]) for r in rows) for i in range(len(s.columns))]
            lines.extend("  ".join(c.ljust(w) for c, w in zip(r, widths, strict=True)).rstrip() for r in rows)
        lines.extend(map(printable, s.notes))
        chunks.append("\n".join(lines))
    return "\n\n".join(chunks) + "\n" if chunks else ""


def print_rich(sections: list[Section]) -> None:
    from rich.console import Console
    from rich.table import Table
    from rich.text import Text

    console = Console()
    for i, s in enumerate(sections):
        if i:
            console.print()
        if s.title:
            console.print(Text(printable(s.title), style="bold"), highlight=False)
        if s.columns:
            table = Table(box=None, header_style="bold")
            for column in s.columns:
                table.add_column(column, no_wrap=True)
            for n, r in enumerate(s.rows):
                table.add_row(*(printable(c) for c in r), style="red" if n in s.flagged else None)
            console.print(table)
        for note in s.notes:
            console.print(Text(printable(note)), highlight=False)


def write(out: Output, sections: list[Section], *, rich_table: bool) -> None:
    if rich_table:
        out.flush()
        print_rich(sections)
    else:
        out.write(plain(sections))
