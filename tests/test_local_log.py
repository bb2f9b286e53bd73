"""LocalLog.scan classifies a partition directory's names as Kafka's name rules do (checked against those rules
written out with regular expressions and Java's Long.parseLong, as kdump had them before scan was sped up)."""

from __future__ import annotations

import re
from pathlib import Path

from kdump.storage import naming
from kdump.storage.local_log import LocalLog

_SEGMENT_FILE = re.compile(r"^([0-9]+)(\.log|\.index|\.timeindex|\.txnindex)\Z")

NAMES = [
    "00000000000000000000.log",
    "00000000000000000000.index",
    "00000000000000000000.timeindex",
    "00000000000000000000.txnindex",
    "00000000000000000042.log",
    "42.index",  # the same segment as 00000000000000000042.log: Kafka parses the number
    "7.log",
    "09223372036854775807.log",  # Long.MAX_VALUE with a leading zero
    "9223372036854775808.log",  # one past it: not a segment
    "000000000000000000000000000000000000000000001.timeindex",
    "\u0661.log",  # an Arabic-Indic digit: Long.parseLong takes it, the file pattern does not
    "00000000000000000000.log.deleted",
    "00000000000000000000.snapshot",
    "00000000000000000012-0000000001.checkpoint",
    "leader-epoch-checkpoint",
    "abc.log",
    ".log",
    "5.LOG",
    "5.log.swap",
    "5.indexx",
]


def _expected(names: list[str]) -> dict[int, dict[str, str]]:
    segments: dict[int, dict[str, str]] = {}
    for name in sorted(names):
        m = _SEGMENT_FILE.match(name)
        if m is None:
            continue
        try:
            base = naming.parse_java_long(m.group(1))
        except naming.NumberFormatError:
            continue
        segments.setdefault(base, {})[m.group(2)] = name
    return dict(sorted(segments.items()))


def test_scan_classifies_segment_files_as_kafkas_rules_do(tmp_path: Path) -> None:
    d = tmp_path / "t-0"
    d.mkdir()
    for name in NAMES:
        (d / name).write_bytes(b"")
    (d / "8.log").mkdir()  # a directory is never a segment file
    log = LocalLog.scan(d)
    got = {s.base_offset: {k: Path(v).name for k, v in s.files.items()} for s in log.segments}
    assert got == _expected(NAMES)
    assert 2**63 - 1 in got and 2**63 not in got and 8 not in got
    seen = {Path(p).name for s in log.segments for p in s.files.values()}
    others = log.other_files + log.transient_files + log.kraft_snapshots + list(log.state_files.values())
    rest = sorted([Path(p).name for p in others] + [Path(p).name for _, p in log.producer_snapshots])
    assert rest == sorted(set(NAMES) - seen)  # every other name is listed once, in one of the other lists
    assert all(str(p).startswith(str(d)) for s in log.segments for p in s.files.values())
