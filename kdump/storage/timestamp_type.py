"""Kafka's ``TimestampType``: which clock a batch's timestamps come from; and reading a timestamp given by a
user (epoch milliseconds or ISO-8601)."""

from __future__ import annotations

import datetime
import re

NO_TIMESTAMP_TYPE = "NoTimestampType"
CREATE_TIME = "CreateTime"
LOG_APPEND_TIME = "LogAppendTime"

#: Timestamp of records that have none (magic 0), Kafka's ``RecordBatch.NO_TIMESTAMP``.
NO_TIMESTAMP = -1

_EPOCH_MS = re.compile(r"^[0-9]+$")


def parse_timestamp(text: str) -> int:
    """Epoch milliseconds, or an ISO-8601 date and time (``2023-11-14T22:13:20.5Z``, ``2023-11-14 22:13:20+01:00``,
    ``2023-11-14``); no zone means UTC.  ValueError otherwise."""
    text = text.strip()
    if _EPOCH_MS.match(text):
        return int(text)
    if text.startswith("-") and text[1:].isdigit():
        raise ValueError(
            f"{text}: a timestamp must be at or after 1970-01-01 (Kafka reserves negative values)"
        )
    try:
        value = datetime.datetime.fromisoformat(text)
    except ValueError as e:
        if text.isdigit() or not any(c.isdigit() for c in text):
            raise ValueError(
                f"{text}: not epoch milliseconds nor an ISO-8601 date and time (e.g. 2023-11-14T22:13:20Z)"
            ) from None
        # it looks like a date: say what is wrong with it and which ISO-8601 forms are read
        reason = "" if str(e).startswith("Invalid isoformat") else f" ({e})"
        raise ValueError(
            f"{text}: not an ISO-8601 date and time{reason}; the forms read: 2023-11-14, 2023-11-14T22:13, "
            "2023-11-14T22:13:20, 2023-11-14T22:13:20.5Z, 2023-11-14 22:13:20+01:00 (no zone means UTC), or "
            "epoch milliseconds"
        ) from None
    if value.tzinfo is None:
        value = value.replace(tzinfo=datetime.UTC)
    millis = (value - datetime.datetime(1970, 1, 1, tzinfo=datetime.UTC)) // datetime.timedelta(
        milliseconds=1
    )
    if millis < 0:
        raise ValueError(
            f"{text}: a timestamp must be at or after 1970-01-01 (Kafka reserves negative values)"
        )
    return millis
