"""Tables of the forensic commands (``txn``, ``diff``, ``retention``, ``find --group``/``--transactional-id``):
one :class:`Section` (a title, columns, rows, notes) is written as aligned plain text in a pipe, or, on a
terminal, fitted to its width by the writer of ``kdump ls`` (:mod:`kdump.render.table_fit`): a cell is never
cut; the table first takes the columns' short headers, then puts the columns marked ``own_line`` (long names,
paths) on a line of their own under each row, then leaves out whole columns in a fixed order and names them
under the table (``--wide`` keeps them all); when not even that fits, each row is a block of ``NAME  value``
lines.  Titles and notes are wrapped at the width, between words only; a :class:`Verbatim` note (a command to
copy and paste) is never broken.

Units: on a terminal durations are human (``1d 20h``, ``220 ms``, :func:`duration`) and timestamps ISO-8601
(:func:`iso_time`, the ``--human-time`` form); in a pipe and in JSON they stay plain numbers and the header
names the unit (``AGE-MS``).
"""

from __future__ import annotations

import textwrap
from dataclasses import dataclass, field

from kdump.facts.output import Output
from kdump.problem import Problem
from kdump.render import color
from kdump.render.human_time import iso
from kdump.render.problem_text import sentence
from kdump.render.safe_text import safe_text
from kdump.render.table_fit import Column, blocks, fit


class Verbatim(str):
    """A note written as it is, never wrapped: a command line to copy and paste."""

    __slots__ = ()


@dataclass
class Section:
    title: str
    columns: tuple[Column | str, ...] = ()
    rows: list[list[str]] = field(default_factory=list)
    #: Lines printed after the table (findings, commands to run, the configuration used).
    notes: list[str] = field(default_factory=list)
    #: Rows (by index) to highlight on a terminal.
    flagged: set[int] = field(default_factory=set)

    def column_specs(self) -> list[Column]:
        return [c if isinstance(c, Column) else Column(c, c, right=False) for c in self.columns]


#: Cells, titles and notes with control characters escaped (names from disk, metadata strings holding NULs):
#: the one rule of kdump's own text, :func:`kdump.render.safe_text.safe_text`.
printable = safe_text


def opt(value: object) -> str:
    return "-" if value is None else str(value)


def iso_time(ms: int | None) -> str:
    """ISO-8601 in UTC with milliseconds and ``Z`` (the ``--human-time`` form); ``-`` when unknown."""
    if ms is None or ms < 0:
        return "-"
    return iso(ms)


_UNITS = ((86_400_000, "d"), (3_600_000, "h"), (60_000, "m"), (1000, "s"))


def duration(ms: int | None) -> str:
    """A duration in milliseconds for a person: ``220 ms``, ``4.5 s``, ``3m 4s``, ``2h 5m``, ``1d 20h`` (the two
    largest units, rounded down); ``-`` when unknown."""
    if ms is None:
        return "-"
    sign = "-" if ms < 0 else ""
    ms = abs(ms)
    if ms < 1000:
        return f"{sign}{ms} ms"
    if ms < 60_000:
        return f"{sign}{ms // 100 / 10:g} s"
    parts: list[str] = []
    rest = ms
    for size, unit in _UNITS:
        n, rest = divmod(rest, size)
        if n or parts:
            parts.append(f"{n}{unit}")
        if len(parts) == 2:
            break
    if parts[-1].startswith("0"):
        parts.pop()
    return sign + " ".join(parts)


def partition_list(partitions: list[tuple[str | None, int | None, str]]) -> str:
    """``orders 0-11, payments 0-2,5``: partitions by topic, in order, consecutive numbers as ranges (a
    directory without a topic-partition name by its path)."""
    by_topic: dict[str, list[int]] = {}
    others = []
    for topic, partition, directory in partitions:
        if topic is None or partition is None:
            others.append(directory)
        else:
            by_topic.setdefault(topic, []).append(partition)
    parts = []
    for topic in sorted(by_topic):
        numbers = sorted(set(by_topic[topic]))
        spans: list[str] = []
        start = prev = numbers[0]
        for n in [*numbers[1:], None]:
            if n is not None and n == prev + 1:
                prev = n
                continue
            spans.append(str(start) if start == prev else f"{start}-{prev}")
            if n is not None:
                start = prev = n
        parts.append(f"{topic} {','.join(spans)}")
    return ", ".join(parts + others)


def unreadable_section(walk_errors: list[Problem]) -> list[Section]:
    """The directories a walk could not read, one ``problem:`` line each, at the end (the one rule for what
    cannot be read: named, and status 1)."""
    if not walk_errors:
        return []
    return [Section("", notes=[f"problem: {sentence(p)}" for p in walk_errors])]


def unique(lines: list[str]) -> list[str]:
    """``lines`` without repeats, in order (a file that cannot be read is named once)."""
    return list(dict.fromkeys(lines))


def plain(sections: list[Section]) -> str:
    """Each section: its title, the columns padded to their widest cell two spaces apart (no trailing blanks),
    its notes; a blank line between sections."""
    chunks = []
    for s in sections:
        lines = [printable(s.title)] if s.title else []
        if s.columns:
            rows = [[c.name for c in s.column_specs()]] + [[printable(c) for c in r] for r in s.rows]
            widths = [max(len(r[i]) for r in rows) for i in range(len(s.columns))]
            lines.extend("  ".join(c.ljust(w) for c, w in zip(r, widths, strict=True)).rstrip() for r in rows)
        lines.extend(printable(n) for n in s.notes)
        chunks.append("\n".join(lines))
    return "\n\n".join(chunks) + "\n" if chunks else ""


def wrap(text: str, width: int) -> list[str]:
    """``text`` broken between words to ``width`` (continuations indented two more than its own indent); a
    word longer than the width (a path) stays whole on its line; a :class:`Verbatim` text is never broken."""
    if isinstance(text, Verbatim) or len(text) <= width:
        return [printable(text)]
    text = printable(text)
    indent = text[: len(text) - len(text.lstrip(" "))]
    return textwrap.wrap(
        text,
        max(width, 20),
        subsequent_indent=indent + "  ",
        break_long_words=False,
        break_on_hyphens=False,
    ) or [text]


def table_lines(section: Section, width: int, *, wide: bool = False, use_color: bool = False) -> list[str]:
    """The section's table fitted to ``width`` (see the module's docstring)."""
    columns = section.column_specs()
    rows = [[printable(c) for c in r] for r in section.rows]
    table = fit(columns, rows, width, wide=wide)
    own: list[int] = []
    if not wide and (table is None or table.hidden) and any(c.own_line for c in columns):
        own = [i for i, c in enumerate(columns) if c.own_line]
        kept = [i for i in range(len(columns)) if i not in own]
        table = fit([columns[i] for i in kept], [[r[i] for i in kept] for r in rows], width)
    painted = [("red" if n in section.flagged else None) for n in range(len(rows))]
    lines: list[str] = []
    if table is None:
        for n, block in enumerate(blocks(columns, rows)):
            if n:
                lines.append("")
            lines.extend(color.paint(line, painted[n], use_color) for line in block)
        return lines
    lines.append(color.paint(table.header, "bold", use_color))
    for n, line in enumerate(table.rows):
        lines.append(color.paint(line, painted[n], use_color))
        for i in own:
            if rows[n][i] not in ("", "-"):
                lines.append(color.paint(f"  {columns[i].name}: {rows[n][i]}", painted[n], use_color))
    if table.hidden:
        note = (
            f"({len(table.hidden)} column{'s' if len(table.hidden) > 1 else ''} left out to fit {width} columns: "
            f"{', '.join(table.hidden)}; --wide shows all)"
        )
        lines.extend(color.paint(line, "dim", use_color) for line in wrap(note, width))
    return lines


def terminal(sections: list[Section], width: int, *, wide: bool = False, use_color: bool = False) -> str:
    """Every section fitted to a terminal of ``width`` columns; a blank line between sections."""
    chunks = []
    for s in sections:
        lines: list[str] = []
        if s.title:
            lines.extend(color.paint(line, "bold", use_color) for line in wrap(s.title, width))
        if s.columns:
            lines.extend(table_lines(s, width, wide=wide, use_color=use_color))
        for note in s.notes:
            lines.extend(wrap(note, width))
        chunks.append("\n".join(lines))
    return "\n\n".join(chunks) + "\n" if chunks else ""


def write(out: Output, sections: list[Section], *, terminal_width: int | None, wide: bool = False) -> None:
    """``terminal_width``: the width of the terminal standard output is (None: not a terminal, plain text)."""
    if terminal_width is None:
        out.write(plain(sections))
    else:
        import sys

        out.write(terminal(sections, terminal_width, wide=wide, use_color=color.enabled(sys.stdout)))
