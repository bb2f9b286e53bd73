"""Divergences still open in another issue, recognised by the first line of Kafka's stack trace.

Remove an entry when its fix lands: the CI sample (tests/test_differential.py) then holds kdump to Kafka on those
cases too, and ``python -m tests.differential`` stops counting them apart.
"""

from __future__ import annotations

OPEN: dict[bytes, str] = {
    b"Invalid magic used in LegacyRecord": "issue 15 (signed magic byte)",
    b"Slice from position": "issue 15 (slicing preconditions)",
    b"Incorrect declared batch size": "issue 15 (record iterator order of checks)",
    b"java.lang.ClassNotFoundException": "issue 15 (decoder classes)",
    b"java.lang.NoSuchMethodException": "issue 15 (decoder classes)",
    b"java.lang.ClassCastException": "issue 15 (decoder classes)",
}


def open_issue(kafka_err: bytes) -> str | None:
    """The open issue a divergence belongs to, from Kafka's stderr (None: not a known open class)."""
    head = next((line for line in kafka_err.splitlines() if line.startswith(b"Exception in thread")), b"")
    return next((issue for text, issue in OPEN.items() if text in head), None)
