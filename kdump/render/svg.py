"""Charts as inline SVG, written in Python (``kdump report``): no plotting library, no script, nothing fetched;
the page draws the same in any browser from disk and weighs a few KiB per chart.

A :class:`Chart` has a plot area with a linear x and y scale, axes with "nice" ticks (numbers, or UTC times
when the axis is a time axis) and adds marks: every element that shows data carries the class ``mark`` (the
tests count them: a chart is never drawn without data) and a ``<title>`` (the browser's tooltip)."""

from __future__ import annotations

import math
from dataclasses import dataclass
from datetime import UTC, datetime
from html import escape as _html_escape

from kdump.render.safe_text import safe_text


def escape(text: str) -> str:
    """Text for the page: control characters of names from disk escaped as kdump's own text escapes them
    (:func:`kdump.render.safe_text.safe_text`: ``\\x1b``, ``\\n``), then HTML's special characters."""
    return _html_escape(safe_text(text))


WIDTH = 960


def _num(v: float) -> str:
    return f"{v:.1f}".rstrip("0").rstrip(".")


def nice_ticks(lo: float, hi: float, count: int = 6, min_step: float = 0.0) -> list[float]:
    """Round tick values covering ``lo``..``hi`` (1, 2, 5 times a power of ten, at least ``min_step`` apart:
    1 for an axis of whole numbers such as partitions)."""
    if hi <= lo:
        return [lo]
    raw = max((hi - lo) / max(count, 1), min_step)
    power = 10 ** math.floor(math.log10(raw))
    step = next(m * power for m in (1, 2, 5, 10) if m * power >= raw)
    first = math.ceil(lo / step) * step
    ticks: list[float] = []
    v = first
    while v <= hi + step * 1e-9 and len(ticks) < 50:
        ticks.append(v)
        v += step
    return ticks


#: Time tick steps (ms) and how a tick is labelled.
_TIME_STEPS = (
    (1, "%S.%f"),
    (2, "%S.%f"),
    (5, "%S.%f"),
    (10, "%S.%f"),
    (20, "%S.%f"),
    (50, "%S.%f"),
    (100, "%H:%M:%S.%f"),
    (200, "%H:%M:%S.%f"),
    (500, "%H:%M:%S.%f"),
    (1000, "%H:%M:%S"),
    (5000, "%H:%M:%S"),
    (15_000, "%H:%M:%S"),
    (60_000, "%H:%M"),
    (300_000, "%H:%M"),
    (900_000, "%H:%M"),
    (3_600_000, "%d %H:%M"),
    (3 * 3_600_000, "%d %H:%M"),
    (6 * 3_600_000, "%m-%d %H:%M"),
    (12 * 3_600_000, "%m-%d %H:%M"),
    (86_400_000, "%Y-%m-%d"),
    (7 * 86_400_000, "%Y-%m-%d"),
    (30 * 86_400_000, "%Y-%m-%d"),
    (365 * 86_400_000, "%Y"),
)


def log_ticks(lo: float, hi: float) -> list[float]:
    """Ticks of a log scale from ``lo`` to ``hi`` (both > 0): the powers of ten, and 2 and 5 times them when the
    scale spans fewer than three decades."""
    a, b = math.floor(math.log10(lo)), math.ceil(math.log10(hi))
    steps = (1,) if b - a >= 3 else (1, 2, 5)
    return [m * 10.0**e for e in range(a, b + 1) for m in steps if lo <= m * 10.0**e <= hi * (1 + 1e-9)]


def log_floor(smallest: float) -> float:
    """The bottom of a log scale whose smallest bar is ``smallest`` (> 0): the power of ten at least half a
    decade below it, so that the smallest bar is drawn with a height (a log scale has no zero)."""
    return 10.0 ** math.floor(math.log10(smallest) - 0.5)


#: A bar more than this many times the median bar is an outlier: on a linear scale set by it, half the bars
#: would be under 1/20 of the plot, a few pixels.
OUTLIER = 20

#: Up to this many outliers are cut at the end of the scale the other bars set (each with its figure written
#: beside it, as the lag charts cut the others' summed bar); more turn the chart to a log scale.
MAX_CUT = 3


@dataclass(frozen=True)
class SizeScale:
    """The value axis of a chart of sizes (or counts): linear from 0 to ``hi``, with the ``cut`` largest bars
    going past ``hi`` (drawn to the end of the plot with a break), or (``log``) a log scale from ``lo``."""

    lo: float
    hi: float
    log: bool = False
    cut: int = 0

    @property
    def note(self) -> str:
        """What a chart's title says of its scale ("" when plain; its cut bars say the rest on them)."""
        if self.log:
            return " (log scale)"
        if self.cut:
            return " (the largest cut)" if self.cut == 1 else f" (the {self.cut} largest cut)"
        return ""


def size_scale(values: list[float]) -> SizeScale:
    """The scale of bars of ``values`` (:data:`OUTLIER`, :data:`MAX_CUT`): one partition a thousand times the
    others is cut and labelled; many of them (or a spread of sizes) take a log scale."""
    positive = sorted(v for v in values if v > 0)
    if not positive:
        return SizeScale(0, 1)
    median = positive[(len(positive) - 1) // 2]
    kept = [v for v in positive if v <= OUTLIER * median]
    cut = len(positive) - len(kept)
    if cut == 0:
        return SizeScale(0, positive[-1])
    if cut <= MAX_CUT:
        return SizeScale(0, kept[-1], cut=cut)
    return SizeScale(log_floor(positive[0]), positive[-1], log=True)


def _text_width(text: str, size: float = 11.0) -> float:
    """About how wide ``text`` is drawn in pixels at font ``size`` (a sans-serif's mean advance)."""
    return len(text) * size * 0.58


def time_ticks(lo: int, hi: int, count: int = 8) -> list[tuple[int, str]]:
    span = max(hi - lo, 1)
    step, fmt = next(((s, f) for s, f in _TIME_STEPS if span / s <= count), (span // count or 1, "%Y-%m-%d"))
    first = (lo // step + (1 if lo % step else 0)) * step
    # %f is microseconds: milliseconds are its first three digits
    return [(t, utc(t, fmt)[:-3] if fmt.endswith("%f") else utc(t, fmt)) for t in range(first, hi + 1, step)][
        :20
    ]


def utc(ms: int, fmt: str = "%Y-%m-%d %H:%M:%S") -> str:
    return datetime.fromtimestamp(ms / 1000, tz=UTC).strftime(fmt)


def iso(ms: int | None) -> str:
    if ms is None or ms < 0:
        return "-"
    return datetime.fromtimestamp(ms / 1000, tz=UTC).strftime("%Y-%m-%dT%H:%M:%S.") + f"{ms % 1000:03d}Z"


def short_number(v: float) -> str:
    a = abs(v)
    for size, unit in ((1e12, "T"), (1e9, "G"), (1e6, "M"), (1e3, "k")):
        if a >= size:
            return f"{v / size:.3g}{unit}"
    return f"{v:.3g}" if a < 1000 and v != int(v) else str(int(v))


class Chart:
    """An SVG chart: ``x`` from ``x0`` to ``x1`` (``time_x``: epoch ms), ``y`` from ``y0`` to ``y1``."""

    def __init__(
        self,
        title: str,
        x0: float,
        x1: float,
        y0: float,
        y1: float,
        *,
        height: int = 240,
        width: int = WIDTH,
        time_x: bool = False,
        x_label: str = "",
        y_label: str = "",
        y_ticks: bool = True,
        left: int = 70,
        chart_id: str | None = None,
        log_x: bool = False,
        log_y: bool = False,
        integer_x: bool = False,
    ) -> None:
        if x1 <= x0:
            x1 = x0 + 1
        if y1 <= y0:
            y1 = y0 + 1
        # a log scale starts above zero (its x0/y0 is the floor: :func:`log_floor`); values below it are drawn at it
        self.log_x, self.log_y, self.integer_x = log_x, log_y, integer_x
        self.title = title
        self.x0, self.x1, self.y0, self.y1 = x0, x1, y0, y1
        self.width, self.height = width, height
        self.left, self.right, self.top, self.bottom = left, 16, 26, 34
        self.time_x = time_x
        self.x_label, self.y_label = x_label, y_label
        self.y_ticks = y_ticks
        self.chart_id = chart_id
        self.back: list[str] = []
        self.parts: list[str] = []
        # the bands' and vertical lines' labels, placed when drawn: (x, low, text, class)
        self.labels: list[tuple[float, bool, str, str]] = []
        self.marks = 0

    # scales
    @staticmethod
    def _frac(v: float, lo: float, hi: float, log: bool) -> float:
        if log:
            v = max(v, lo)
            return (math.log10(v) - math.log10(lo)) / (math.log10(hi) - math.log10(lo))
        return (v - lo) / (hi - lo)

    def x(self, v: float) -> float:
        w = self.width - self.left - self.right
        return self.left + self._frac(v, self.x0, self.x1, self.log_x) * w

    def y(self, v: float) -> float:
        h = self.height - self.top - self.bottom
        return self.top + h - self._frac(v, self.y0, self.y1, self.log_y) * h

    def clamp_x(self, v: float) -> float:
        return min(max(self.x(v), self.left), self.width - self.right)

    @property
    def plot_bottom(self) -> float:
        return self.height - self.bottom

    # marks
    def polyline(self, points: list[tuple[float, float]], cls: str, title: str) -> None:
        if not points:
            return
        pts = " ".join(f"{_num(self.x(a))},{_num(self.y(b))}" for a, b in points)
        self.parts.append(
            f'<polyline class="mark {cls}" points="{pts}"><title>{escape(title)}</title></polyline>'
        )
        self.marks += 1

    def dots(self, points: list[tuple[float, float, str]], cls: str, r: float = 2.5) -> None:
        for a, b, title in points:
            self.parts.append(
                f'<circle class="mark {cls}" cx="{_num(self.x(a))}" cy="{_num(self.y(b))}" r="{r}">'
                f"<title>{escape(title)}</title></circle>"
            )
            self.marks += 1

    def bar(
        self,
        xa: float,
        xb: float,
        ya: float,
        yb: float,
        cls: str,
        title: str,
        *,
        back: bool = False,
        href: str | None = None,
        min_width: float = 3.0,
    ) -> None:
        """A rectangle from (xa, ya) to (xb, yb) in data units (``back``: behind the other marks; ``href``: a
        link within the page, ``#...``)."""
        x = self.clamp_x(min(xa, xb))
        w = self.clamp_x(max(xa, xb)) - x
        if w < min_width:  # a bar of a moment stays visible (3 pixels by default), inside the plot
            x, w = min(x, self.width - self.right - min_width), min_width
        top = min(self.y(ya), self.y(yb))
        h = max(abs(self.y(ya) - self.y(yb)), 1.0)
        el = (
            f'<rect class="mark {cls}" x="{_num(x)}" y="{_num(top)}" width="{_num(w)}" height="{_num(h)}">'
            f"<title>{escape(title)}</title></rect>"
        )
        if href is not None:
            el = f'<a href="{escape(href)}">{el}</a>'
        (self.back if back else self.parts).append(el)
        self.marks += 1

    def cut(self, v: float, ya: float, yb: float) -> None:
        """A break across a bar at ``v`` (two slanted strokes of the background's colour): the bar goes on past
        the end of the scale (its figure is written on it)."""
        x = self.x(v)
        top, bottom = min(self.y(ya), self.y(yb)) - 2, max(self.y(ya), self.y(yb)) + 2
        d = " ".join(
            f"M{_num(x + dx - 3)},{_num(bottom)} L{_num(x + dx + 3)},{_num(top)}" for dx in (0.0, 5.0)
        )
        self.parts.append(f'<path class="cut" d="{d}"/>')

    def cut_column(self, xa: float, xb: float, v: float) -> None:
        """A break across a column from ``xa`` to ``xb`` at height ``v`` (two slanted strokes of the background's
        colour): the column goes on past the end of the scale."""
        y = self.y(v)
        left, right = self.x(min(xa, xb)) - 2, max(self.x(max(xa, xb)), self.x(min(xa, xb)) + 3) + 2
        d = " ".join(
            f"M{_num(left)},{_num(y + dy + 2)} L{_num(right)},{_num(y + dy - 2)}" for dy in (0.0, 5.0)
        )
        self.parts.append(f'<path class="cut" d="{d}"/>')

    def note(self, x: float, line: int, s: str, cls: str = "cut-label") -> None:
        """Words at pixel ``x`` on line ``line`` from the top of the plot (a halo keeps them readable over the
        marks), moved left to end inside the plot."""
        right = self.width - self.right
        at = max(min(x, right - 3 - _text_width(s, 10.5)), self.left + 3)
        self.parts.append(
            f'<text class="{cls}" x="{_num(at)}" y="{self.top + 12 + 13 * line}">{escape(s)}</text>'
        )

    def band(self, xa: float, xb: float, cls: str, title: str, label: str = "", low: bool = False) -> None:
        """A shaded band across the whole plot height between xa and xb (``label`` written at the top of the
        plot, or at its bottom when ``low``: where the marks leave room)."""
        x = self.clamp_x(min(xa, xb))
        w = max(self.clamp_x(max(xa, xb)) - x, 2.0)
        h = self.plot_bottom - self.top
        self.back.append(
            f'<rect class="mark {cls}" x="{_num(x)}" y="{self.top}" width="{_num(w)}" height="{_num(h)}">'
            f"<title>{escape(title)}</title></rect>"
        )
        if label:
            self.labels.append((x, low, label, "band-label"))
        self.marks += 1

    def _band_labels(self) -> list[str]:
        """The labels of the bands and vertical lines, drawn over the marks (with a halo) at the top of the plot
        (or its bottom): each starts at its band or line and is moved left to end inside the plot; one that would
        overlap another goes a line down, and one that finds no room in three lines is left to the tooltip."""
        out: list[str] = []
        lines: dict[bool, list[list[tuple[float, float]]]] = {False: [[], [], []], True: [[], [], []]}
        right = self.width - self.right
        for x, low, label, cls in sorted(self.labels):
            w = _text_width(label, 10.5)
            a = max(min(x + 3, right - 3 - w), self.left + 3)
            for i, taken in enumerate(lines[low]):
                if all(a + w + 6 <= b0 or a >= b1 + 6 for b0, b1 in taken):
                    taken.append((a, a + w))
                    y = self.plot_bottom - 5 - 13 * i if low else self.top + 12 + 13 * i
                    out.append(f'<text class="{cls}" x="{_num(a)}" y="{_num(y)}">{escape(label)}</text>')
                    break
        return out

    def _line(self, x1: str, x2: str, y1: str, y2: str, cls: str, title: str) -> None:
        self.parts.append(
            f'<line class="mark {cls}" x1="{x1}" x2="{x2}" y1="{y1}" y2="{y2}"><title>{escape(title)}</title></line>'
        )
        self.marks += 1

    def vline(self, v: float, cls: str, title: str, label: str = "") -> None:
        x = _num(self.x(v))
        self._line(x, x, str(self.top), _num(self.plot_bottom), cls, title)
        if label:  # inside the plot, beside the line (above it, it ran into the chart's title)
            self.labels.append((self.x(v), False, label, f"vlabel {cls}"))

    def hline(self, v: float, cls: str, title: str, label: str = "") -> None:
        y = _num(self.y(v))
        self._line(str(self.left), str(self.width - self.right), y, y, cls, title)
        if label:
            # above the line, or below it when the line runs along the top of the plot (the bands' labels are there)
            at = self.y(v) - 4 if self.y(v) - 4 > self.top + 16 else self.y(v) + 12
            self.parts.append(
                f'<text class="hlabel {cls}" x="{self.width - self.right - 4}" y="{_num(at)}" '
                f'text-anchor="end">{escape(label)}</text>'
            )

    def text(self, x: float, y: float, s: str, cls: str = "", anchor: str = "start") -> None:
        self.parts.append(
            f'<text class="{cls}" x="{_num(self.x(x))}" y="{_num(self.y(y))}" text-anchor="{anchor}">{escape(s)}</text>'
        )

    def row_label(self, y: float, s: str) -> None:
        self.parts.append(
            f'<text class="row-label" x="{self.left - 6}" y="{_num(self.y(y) + 4)}" text-anchor="end">{escape(s)}</text>'
        )

    # the frame
    def _axes(self) -> list[str]:
        out = []
        bottom = self.plot_bottom
        right = self.width - self.right
        out.append(
            f'<rect class="frame" x="{self.left}" y="{self.top}" width="{right - self.left}" height="{_num(bottom - self.top)}"/>'
        )
        if self.time_x:
            x_ticks = [(float(t), label) for t, label in time_ticks(int(self.x0), int(self.x1))]
        elif self.log_x:
            x_ticks = [(v, short_number(v)) for v in log_ticks(self.x0, self.x1)]
        else:
            x_ticks = [
                (v, short_number(v))
                for v in nice_ticks(self.x0, self.x1, min_step=1 if self.integer_x else 0)
            ]
        for v, label in x_ticks:
            x = self.x(v)
            out.append(
                f'<line class="grid" x1="{_num(x)}" x2="{_num(x)}" y1="{self.top}" y2="{_num(bottom)}"/>'
            )
            # a label at the edge ends (or starts) at its tick rather than running out of the chart
            half = _text_width(label) / 2
            # (at the plot's left edge, under the y axis's lowest tick label, it starts at its tick)
            left_edge = self.left - 4 if self.y_ticks else 2
            anchor = "end" if x + half > self.width - 2 else "start" if x - half < left_edge else "middle"
            out.append(
                f'<text class="tick" x="{_num(x)}" y="{_num(bottom + 14)}" text-anchor="{anchor}">{escape(label)}</text>'
            )
        if self.y_ticks:
            for v in log_ticks(self.y0, self.y1) if self.log_y else nice_ticks(self.y0, self.y1, 4):
                y = _num(self.y(v))
                out.append(f'<line class="grid" x1="{self.left}" x2="{right}" y1="{y}" y2="{y}"/>')
                out.append(
                    f'<text class="tick" x="{self.left - 6}" y="{_num(self.y(v) + 4)}" text-anchor="end">{short_number(v)}</text>'
                )
        if self.x_label:
            out.append(
                f'<text class="axis-label" x="{right}" y="{self.height - 4}" text-anchor="end">{escape(self.x_label)}</text>'
            )
        if self.y_label:
            out.append(f'<text class="axis-label" x="4" y="{self.top - 10}">{escape(self.y_label)}</text>')
        out.append(f'<text class="chart-title" x="{self.left}" y="14">{escape(self.title)}</text>')
        return out

    def svg(self) -> str:
        ident = f' id="{escape(self.chart_id)}"' if self.chart_id else ""
        return (
            f'<svg class="chart" data-marks="{self.marks}"{ident} viewBox="0 0 {self.width} {self.height}" '
            f'width="{self.width}" height="{self.height}" role="img" aria-label="{escape(self.title)}">'
            + "".join(self._axes()[:1])
            + "".join(self.back)
            + "".join(self._axes()[1:])
            + "".join(self.parts)
            + "".join(self._band_labels())
            + "</svg>"
        )
