"""Rendering: Kafka's text, kdump's JSON lines, tables and reports (no decoding here)."""

from __future__ import annotations


def plural(n: int, word: str, plural_form: str | None = None) -> str:
    """``1 segment``, ``2 segments``; ``plural_form`` for irregular words (``entry``/``entries``)."""
    return f"{n} {word}" if n == 1 else f"{n} {plural_form or word + 's'}"
