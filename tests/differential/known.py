"""Divergences still open in another issue, recognised by the first line of Kafka's stack trace.

Remove an entry when its fix lands: the CI sample (tests/test_differential.py) then holds kdump to Kafka on those
cases too, and ``python -m tests.differential`` stops counting them apart.
"""

from __future__ import annotations

#: Issue 15's four classes (signed magic, slicing preconditions, record iterator order, decoder classes) were
#: fixed and removed; a 20,000-case run shows none of them.
OPEN: dict[bytes, str] = {}


def open_issue(kafka_err: bytes) -> str | None:
    """The open issue a divergence belongs to, from Kafka's stderr (None: not a known open class)."""
    head = next((line for line in kafka_err.splitlines() if line.startswith(b"Exception in thread")), b"")
    return next((issue for text, issue in OPEN.items() if text in head), None)
