"""Whether kdump colours its output: ``--color auto|always|never`` (``kdump --color``, ``kdump ls --color``),
else the ``NO_COLOR`` convention (https://no-color.org: set and not empty means no colour), else colour only on a
terminal (not ``TERM=dumb``)."""

from __future__ import annotations

import os
from typing import IO

CHOICES = ("auto", "always", "never")

#: Set by ``--color``; "auto" decides by ``NO_COLOR`` and the stream.
mode = "auto"

_SGR = {"bold": "1", "dim": "2", "red": "31"}


def enabled(stream: IO | None) -> bool:
    if mode == "always":
        return True
    if mode == "never" or os.environ.get("NO_COLOR"):
        return False
    if os.environ.get("TERM") == "dumb":
        return False
    try:
        return stream is not None and stream.isatty()
    except (AttributeError, ValueError):
        return False


def paint(text: str, style: str | None, use_color: bool) -> str:
    if not use_color or style is None or not text:
        return text
    return f"\x1b[{_SGR[style]}m{text}\x1b[0m"
