"""``--human-time``: ISO-8601 beside epoch milliseconds (UTC, or the zone of ``--tz``).

In ``kdump files`` text a timestamp ``1700000000390`` becomes ``1700000000390 (2023-11-14T22:13:20.390Z)`` where
the Kafka text labels it (``CreateTime:``/``LogAppendTime:`` of batch and record lines, ``timestamp:`` of time
index entries, ``lastTimestamp:`` of producer snapshot entries); -1 (no timestamp) stays as it is.
"""

from __future__ import annotations

import re
from datetime import UTC, datetime, timedelta, timezone, tzinfo

from kdump.facts.output import Output

_OFFSET = re.compile(r"^([+-])(\d{2}):?(\d{2})$")


def parse_tz(text: str) -> tzinfo:
    """``UTC``, ``Z``, an offset (``+02:00``, ``-0530``) or an IANA zone name (``Europe/Berlin``)."""
    if text.upper() in ("UTC", "Z"):
        return UTC
    m = _OFFSET.match(text)
    if m:
        minutes = int(m[2]) * 60 + int(m[3])
        if minutes >= 24 * 60:
            raise ValueError(f"{text!r}: an offset must be under 24 hours")
        return timezone(timedelta(minutes=-minutes if m[1] == "-" else minutes))
    from zoneinfo import ZoneInfo, ZoneInfoNotFoundError

    try:
        return ZoneInfo(text)
    except (ZoneInfoNotFoundError, ValueError):
        raise ValueError(
            f"{text!r} is not UTC, an offset like +02:00 or a time zone name like Europe/Berlin"
        ) from None


def iso(ms: int, tz: tzinfo | None = None) -> str:
    """Epoch milliseconds as ISO-8601 with milliseconds; ``Z`` for UTC."""
    try:
        text = datetime.fromtimestamp(ms / 1000, tz=tz or UTC).isoformat(timespec="milliseconds")
    except (OverflowError, OSError, ValueError):
        return str(ms)
    return text[:-6] + "Z" if text.endswith("+00:00") and (tz is None or tz is UTC) else text


_LABELLED = re.compile(
    r"((?:^|\| offset: -?\d+ |position: -?\d+ )(?:CreateTime|LogAppendTime): |^timestamp: |lastTimestamp: | offsetDelta: -?\d+ timestamp: )(\d+)",
    re.M,
)


class HumanTimeOutput(Output):
    """An :class:`Output` that adds ``(ISO-8601)`` after every labelled timestamp of Kafka's text."""

    __slots__ = ("inner", "tz")

    def __init__(self, inner: Output, tz: tzinfo | None = None) -> None:
        super().__init__(inner.stream, inner.chunk)
        self.inner = inner
        self.tz = tz

    def write(self, text: str) -> None:
        self.inner.write(_LABELLED.sub(lambda m: f"{m[1]}{m[2]} ({iso(int(m[2]), self.tz)})", text))

    def flush(self) -> None:
        self.inner.flush()
