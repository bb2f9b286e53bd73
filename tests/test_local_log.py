"""LocalLog.scan classifies a partition directory's names as Kafka's name rules do (checked against those rules
written out with regular expressions and Java's Long.parseLong, as kdump had them before scan was sped up)."""

from __future__ import annotations

import random
import re
from pathlib import Path

from kdump.storage import naming
from kdump.storage.local_log import LocalLog, is_partition_dir

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


def _with_log(expected: dict[int, dict[str, str]]) -> dict[int, dict[str, str]]:
    return {base: files for base, files in expected.items() if ".log" in files}


def test_scan_segments_lists_the_segments_with_a_log_as_kafkas_rules_do(tmp_path: Path) -> None:
    """The segments-only listing (what find uses) names the same segments and files as the rules, for the segments
    that have a .log, and classifies nothing else."""
    d = tmp_path / "t-0"
    d.mkdir()
    for name in NAMES:
        (d / name).write_bytes(b"")
    (d / "8.log").mkdir()
    (d / "00000000000000000009.log").mkdir()
    log = LocalLog.scan_segments(d)
    assert log.segments_only and not (log.other_files or log.producer_snapshots or log.state_files)
    assert log.log_base_offsets == sorted(_with_log(_expected(NAMES)))
    got = {s.base_offset: {k: Path(v).name for k, v in s.files.items()} for s in log.segments}
    assert got == _with_log(_expected(NAMES))
    assert log.segments == LocalLog.scan(d).log_segments


def test_scan_segments_agrees_with_scan_on_random_listings(tmp_path: Path) -> None:
    """Random directories of segment files spelt in several ways (20 digits, fewer, more, out of a long's range,
    directories named like files): both scans give the same segments with a .log, file for file."""
    rng = random.Random(17)
    suffixes = [".log", ".index", ".timeindex", ".txnindex", ".snapshot", ".log.deleted", ".idx"]
    for trial in range(40):
        d = tmp_path / f"r-{trial}"
        d.mkdir()
        for _ in range(rng.randrange(1, 40)):
            base = rng.choice([0, 1, 7, 42, 1000, rng.randrange(10**6), 2**63 - 1, 2**63, 10**19])
            digits = rng.choice([f"{base:020d}", str(base), f"{base:025d}", f"0{base}"])
            name = digits + rng.choice(suffixes)
            if not (d / name).exists():
                if rng.random() < 0.05:
                    (d / name).mkdir()
                else:
                    (d / name).write_bytes(b"")
        names = [p.name for p in d.iterdir() if not p.is_dir()]
        fast = LocalLog.scan_segments(d)
        full = LocalLog.scan(d)
        files = {s.base_offset: {k: Path(v).name for k, v in s.files.items()} for s in fast.segments}
        assert files == _with_log(_expected(names)), sorted(names)
        assert fast.segments == full.log_segments
        assert fast.log_base_offsets == full.log_base_offsets
        for offset in (0, 5, 42, 999, 2**63 - 1):
            assert fast.segment_for(offset) == full.segment_for(offset)
            assert fast.log_start_offset(offset) == full.log_start_offset(offset)
        assert fast.active_base_offset == full.active_base_offset


def test_is_partition_dir_reads_names_not_kinds(tmp_path: Path) -> None:
    """A partition directory holds a partition's files and none of a log directory's; a sub-directory named like
    either is neither (is_partition_dir reads the listing only up to the first partition file)."""
    d = tmp_path / "t-0"
    d.mkdir()
    assert not is_partition_dir(d)
    (d / "00000000000000000000.log").mkdir()
    assert not is_partition_dir(d)
    (d / "00000000000000000000.index").write_bytes(b"")
    assert is_partition_dir(d)
    (d / "meta.properties").mkdir()
    assert is_partition_dir(d)
    (d / "replication-offset-checkpoint").write_bytes(b"")
    assert not is_partition_dir(d)
    (d / "replication-offset-checkpoint").unlink()
    (d / ".kafka_cleanshutdown").symlink_to(tmp_path)  # a link is not followed: a file by its name
    assert not is_partition_dir(d)
    assert not is_partition_dir(d / "00000000000000000000.index")  # not a directory


def test_a_segments_files_keep_the_order_they_were_met_in(tmp_path: Path) -> None:
    """A segment named as Kafka names its files keeps only which suffixes it has (a partition may hold 100,000):
    its files, paths and ``has`` are still the dict a scan builds in name order (the rules above, in order), and
    a segment made of one file lists its files in ``SEGMENT_SUFFIXES`` order, as it always did."""
    from kdump.storage.log_segment import SEGMENT_SUFFIXES, LogSegment

    rng = random.Random(29)
    for trial in range(30):
        d = tmp_path / f"o-{trial}"
        d.mkdir()
        for _ in range(rng.randrange(1, 30)):
            base = rng.choice([0, 7, 42, 1000, 2**63 - 1])
            digits = rng.choice([f"{base:020d}", f"{base:020d}", str(base), f"{base:025d}"])
            (d / (digits + rng.choice(SEGMENT_SUFFIXES))).write_bytes(b"")
        names = [p.name for p in d.iterdir()]
        expected = _expected(names)
        for s in LocalLog.scan(d).segments:
            want = expected[s.base_offset]
            assert [(k, Path(v).name) for k, v in s.files.items()] == list(want.items()), sorted(names)
            for suffix in SEGMENT_SUFFIXES:
                assert s.has(suffix) == (suffix in want)
                named = want.get(suffix, naming.offset_to_filename(s.base_offset, suffix))
                assert s.path(suffix) == str(d / named)
        one = LogSegment.of_file(str(d / names[0]))
        canonical = [
            x for x in SEGMENT_SUFFIXES if (d / naming.offset_to_filename(one.base_offset, x)).exists()
        ]
        assert list(one.files) == canonical
