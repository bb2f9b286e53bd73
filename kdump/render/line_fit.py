"""kdump's own lines fitted to a terminal (issue 31): a line wider than the terminal is broken between words,
never inside one, and continued on lines indented under it; a word wider than the terminal (a long path) stays
whole on a line of its own, and a suggested command line (``kafka-transactions.sh ...``) is never broken.
``label: value`` stays together when it fits.  Only on a terminal: in a pipe every
problem stays one line for grep, and ``kdump files`` (Kafka's text) is never fitted."""

from __future__ import annotations

import re
from typing import BinaryIO

from kdump.facts.output import Output

#: A colour or style sequence (takes no column).
_SGR = re.compile(r"\x1b\[[0-9;]*m")

#: A field's label as Kafka's text writes it (``baseOffset:``, ``CreateTime:``): kept with its value.
_LABEL = re.compile(r"[A-Za-z][A-Za-z0-9_-]*:$")

#: A suggested command line (one of Kafka's tools): never broken, so that it can be copied whole.
_COMMAND = re.compile(r"[\w.-]+\.sh ")

#: How much deeper than the line's own indentation its continuation lines are indented.
CONTINUATION = "    "


def fit_line(line: str, width: int) -> list[str]:
    """``line`` (without its newline) as lines of at most ``width`` columns, but for words longer than that.

    Words are filled greedily; ``label: value`` (a Kafka-style field, ``baseOffset: 2229981``) stays together,
    and a line is preferably broken after a word that ends a part of a sentence with ``:`` (``file.log: byte
    918:`` / ``kind: message``) when that leaves the line at least a third full."""
    if width <= 0 or len(line) <= width or _width(line) <= width:
        return [line]
    body = line.lstrip(" ")
    if _COMMAND.match(body):  # a command line to copy and paste (kafka-transactions.sh ... abort): whole
        return [line]
    lead = line[: len(line) - len(body)]
    more = lead + CONTINUATION
    words = [w for w in body.split(" ") if w]
    units: list[str] = []
    i = 0
    while i < len(words):
        unit = words[i]
        i += 1
        if (
            _LABEL.match(unit)
            and i < len(words)
            and not words[i].endswith(":")
            and _width(f"{more}{unit} {words[i]}") <= width
        ):
            unit += " " + words[i]
            i += 1
        units.append(unit)
    lines: list[str] = []
    current: list[str] = []
    prefix = lead

    def length(parts: list[str]) -> int:
        return _width(prefix) + sum(_width(p) for p in parts) + max(len(parts) - 1, 0)

    for unit in units:
        if not current or length([*current, unit]) <= width:
            current.append(unit)
            continue
        cut = len(current)
        for j in range(len(current) - 1, 0, -1):
            if current[j - 1].endswith(":") and length(current[:j]) * 3 >= width:
                cut = j
                break
        lines.append(prefix + " ".join(current[:cut]))
        prefix = more
        current = [*current[cut:], unit]
        while len(current) > 1 and length(current) > width:  # what was carried over may not fit either
            lines.append(prefix + " ".join(current[:-1]))
            current = current[-1:]
    lines.append(prefix + " ".join(current))
    return lines


def _width(text: str) -> int:
    return len(_SGR.sub("", text)) if "\x1b" in text else len(text)


class FittedOutput(Output):
    """An :class:`Output` to a terminal of ``width`` columns that fits every line it is given (whole lines are
    fitted as they are completed; a partial line waits for its end or the next flush)."""

    __slots__ = ("width", "partial")

    def __init__(
        self, stream: BinaryIO, width: int, chunk: int = 1 << 16, name: str = "standard output"
    ) -> None:
        super().__init__(stream, chunk, name)
        self.width = width
        self.partial = ""

    def write(self, text: str) -> None:
        if "\n" not in text:
            self.partial += text
            return
        text = self.partial + text
        *complete, self.partial = text.split("\n")
        fitted = "".join("\n".join(fit_line(line, self.width)) + "\n" for line in complete)
        self.parts.append(fitted)
        self.pending += len(fitted)
        if self.pending >= self.chunk:
            Output.flush(self)  # what is complete; a partial line waits

    def discard(self) -> None:
        self.partial = ""
        super().discard()

    def flush(self) -> None:
        if self.partial:
            tail, self.partial = self.partial, ""
            fitted = "\n".join(fit_line(tail, self.width))
            self.parts.append(fitted)
            self.pending += len(fitted)
        Output.flush(self)
