"""A table fitted to a terminal's width deliberately: cells are never cut.

To fit, the table first uses the columns' short headers, then leaves out whole columns in a fixed order (the
least needed first) and says which; when even the columns that are never left out do not fit, there is no
table (the caller prints one block per row instead).  ``wide`` keeps every column, whatever the width.
"""

from __future__ import annotations

from dataclasses import dataclass, field

SEPARATOR = "  "


@dataclass(frozen=True)
class Column:
    """``drop``: the order in which columns are left out to fit (higher first; 0 = never left out)."""

    name: str
    short: str
    drop: int = 0
    right: bool = True
    #: Long values (names, paths): rather than leave columns out, the table writer of the forensic commands
    #: (:mod:`kdump.render.tables`) puts this column on a line of its own under each row.
    own_line: bool = False


@dataclass
class FittedTable:
    header: str
    rows: list[str]
    #: Names of the columns left out to fit (empty when every column is shown).
    hidden: list[str] = field(default_factory=list)
    short_headers: bool = False

    @property
    def width(self) -> int:
        return max(len(line) for line in [self.header, *self.rows])


def _render(columns: list[Column], cells: list[list[str]], short: bool) -> tuple[str, list[str]]:
    headers = [c.short if short else c.name for c in columns]
    widths = [max([len(h)] + [len(row[i]) for row in cells]) for i, h in enumerate(headers)]

    def line(values: list[str]) -> str:
        parts = [
            v.rjust(w) if c.right else v.ljust(w) for c, v, w in zip(columns, values, widths, strict=True)
        ]
        return SEPARATOR.join(parts).rstrip()

    return line(headers), [line(row) for row in cells]


def fit(
    columns: list[Column], rows: list[list[str]], width: int, *, wide: bool = False
) -> FittedTable | None:
    """The widest form of the table that fits in ``width`` columns, or None when none does."""
    shown = list(range(len(columns)))

    def attempt(short: bool) -> FittedTable:
        cols = [columns[i] for i in shown]
        header, lines = _render(cols, [[row[i] for i in shown] for row in rows], short)
        hidden = [columns[i].name for i in range(len(columns)) if i not in shown]
        return FittedTable(header, lines, hidden, short)

    table = attempt(False)
    if wide or table.width <= width:
        return table
    table = attempt(True)
    dropped = []
    for i in sorted((i for i, c in enumerate(columns) if c.drop > 0), key=lambda i: -columns[i].drop):
        if table.width <= width:
            break
        shown.remove(i)
        dropped.append(i)
        table = attempt(True)
    if table.width > width:
        return None
    for i in reversed(dropped):  # a narrow column left out on the way may fit again beside the others
        shown.append(i)
        shown.sort()
        candidate = attempt(True)
        if candidate.width <= width:
            table = candidate
        else:
            shown.remove(i)
    return table


def blocks(columns: list[Column], rows: list[list[str]]) -> list[list[str]]:
    """The fallback for a terminal too narrow for any table: for each row, one ``NAME  value`` line per column."""
    label = max(len(c.name) for c in columns)
    return [[f"{c.name.ljust(label)}  {v}" for c, v in zip(columns, row, strict=True)] for row in rows]
