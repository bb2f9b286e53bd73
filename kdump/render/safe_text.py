"""Names from disk never reach a terminal raw: kdump's own text (tables, its error, problem and note lines)
shows control characters escaped.

A topic directory may be named with anything a file system takes, escape sequences and newlines included
(``ev\\x1b]0;PWNED\\x07\\x1b[2J-0`` sets a terminal's title and clears its screen when printed raw; a newline
splits a table row or fakes a line).  :func:`safe_text` is the one rule, applied where kdump writes a value of
its own text:

* every character that Python's ``str.isprintable`` refuses, except the space, is written as Python's ``repr``
  writes it: ``\\n``, ``\\r``, ``\\t``, ``\\xNN`` (other C0 controls, DEL, C1 controls), ``\\uNNNN`` and
  ``\\UNNNNNNNN`` (Unicode format and separator characters -- bidirectional overrides, zero-width characters,
  line and paragraph separators --, unassigned code points);
* a byte of a name that is not UTF-8 (kept by Python as a lone surrogate U+DC80..U+DCFF) is written as that
  byte, ``\\xNN``;
* everything else, a backslash included, is itself (so ``\\x1b`` in a name and an escaped ESC read the same;
  the JSON output, which escapes by JSON's rules, tells them apart).

Text that is Kafka's (``kdump files``' default output, ``Dumping <path>`` included) is not passed through it:
it stays byte-identical to ``kafka-dump-log.sh``.
"""

from __future__ import annotations

_SHORT = {"\n": "\\n", "\r": "\\r", "\t": "\\t"}


def _escape(c: str) -> str:
    if c.isprintable() or c == " ":
        return c
    short = _SHORT.get(c)
    if short is not None:
        return short
    n = ord(c)
    if 0xDC80 <= n <= 0xDCFF:  # a byte that was not UTF-8 (os.fsdecode's surrogateescape)
        return f"\\x{n - 0xDC00:02x}"
    if n < 0x100:
        return f"\\x{n:02x}"
    if n < 0x10000:
        return f"\\u{n:04x}"
    return f"\\U{n:08x}"


def safe_text(text: str) -> str:
    """``text`` with the characters a terminal would act on (or that would fake a line) escaped; the same
    string when there are none (the common case costs one C-level check)."""
    if text.isprintable():
        return text
    return "".join(map(_escape, text))
