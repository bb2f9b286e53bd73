"""``kdump rebuild-index``: Kafka's recovery reproduces the broker's index files byte for byte, damaged indexes are
repaired, writes are atomic (a kill -9 at any moment leaves the old or the new file), a running broker's log
directory is left alone, and a ``.log`` is never changed."""

from __future__ import annotations

import hashlib
import json
import os
import random
import shutil
import signal
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import pytest
from click.testing import CliRunner

from kdump.analysis.index_recovery import IndexRecoveryError, recover_indexes
from kdump.analysis.index_verification import verify_segment
from kdump.analysis.topic_config import read_cluster_config
from kdump.cli import cli
from kdump.commands import rebuild_index
from kdump.exit_status import ExitStatus
from kdump.render.rebuild_report import problem_text
from kdump.storage.atomic_write import lock_holder, replace_file
from kdump.storage.file_records import FileRecords
from kdump.storage.local_log import LocalLog, find_partition_dirs
from kdump.storage.naming import offset_to_filename
from kdump.storage.offset_index import OffsetPosition
from kdump.storage.time_index import TimestampOffset
from tests.builder import SimpleRecord, build_legacy_message, build_v2_batch
from tests.corpus import CORPUS, FIXTURE_CORPUS
from tests.partition_builder import build_partition

REPO = Path(__file__).resolve().parents[1]
needs_corpus = pytest.mark.skipif(not (CORPUS / "data").is_dir(), reason="../shared/kafka-corpus is absent")

#: The partitions of the issue's "done when", with the index.interval.bytes their topics were created with.
REFERENCE_PARTITIONS = {"segments-0": 4096, "small-index-0": 100, "idempotent-0": 4096, "txn-0": 4096}
#: Index kinds of kdump verify-index (everything else it reports is about the .log or orphaned files).
INDEX_PROBLEM_KINDS = {
    "sanity-check",
    "bad-length",
    "zero-tail",
    "out-of-order",
    "not-batch-start",
    "offset-mismatch",
    "timestamp-mismatch",
    "past-end",
    "missing-index",
    "unreadable",
}


def _copy_tree(src: Path, dst: Path) -> Path:
    shutil.copytree(src, dst)
    for p in [dst, *dst.rglob("*")]:
        p.chmod(0o755 if p.is_dir() else 0o644)
    return dst


def _hashes(root: Path, suffix: str) -> dict[str, str]:
    return {
        str(p.relative_to(root)): hashlib.sha256(p.read_bytes()).hexdigest() for p in root.rglob(f"*{suffix}")
    }


def _run(args: list[str], cwd: Path | None = None) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "kdump", "rebuild-index", *args],
        capture_output=True,
        text=True,
        cwd=cwd,
        check=False,
    )


# -- the recovery algorithm against the broker's own files ------------------------------------------------------------


@needs_corpus
@pytest.mark.corpus
@pytest.mark.parametrize("name", sorted(REFERENCE_PARTITIONS))
def test_rebuilt_indexes_are_byte_identical_to_the_brokers(name: str) -> None:
    segments = LocalLog.scan(CORPUS / "data" / name).log_segments
    assert segments
    for segment in segments:
        with segment.open_log() as records:
            recovered = recover_indexes(records, segment.base_offset, REFERENCE_PARTITIONS[name])
        assert recovered.invalid_bytes == 0
        assert recovered.offset_index_bytes() == Path(segment.index_path).read_bytes(), segment.index_path
        assert recovered.time_index_bytes() == Path(segment.time_index_path).read_bytes(), (
            segment.time_index_path
        )


def test_bundled_reference_segment_is_byte_identical() -> None:
    segment = next(s for s in LocalLog.scan(FIXTURE_CORPUS / "data" / "small-index-0").log_segments)
    with segment.open_log() as records:
        recovered = recover_indexes(records, segment.base_offset, 100)
    assert recovered.offset_index_bytes() == Path(segment.index_path).read_bytes()
    assert recovered.time_index_bytes() == Path(segment.time_index_path).read_bytes()


@needs_corpus
@pytest.mark.corpus
def test_whole_log_dir_rewrites_only_the_explained_files(tmp_path: Path) -> None:
    """On a copy of the 4.0 log dir the interval comes from the cluster metadata (small-index: 100), every
    .log is untouched, and only the two files with a broker-restart history change (see the man page)."""
    data = _copy_tree(CORPUS / "data", tmp_path / "data")
    logs = _hashes(data, ".log")
    explained = [
        str(data / "__cluster_metadata-0" / "00000000000000000000.index"),
        str(data / "__cluster_metadata-0" / "00000000000000000000.timeindex"),
        str(data / "plain-0" / "00000000000000000000.timeindex"),
    ]
    # by default the three are sound (verify-index finds nothing wrong with them) and left alone
    before = _hashes(data, "index")
    r = _run([str(data)])
    assert r.returncode == 0, r.stderr
    assert _hashes(data, "index") == before
    sound = sorted(
        line.split(": ")[0] for line in r.stdout.splitlines() if ": sound, differs from a rebuild" in line
    )
    assert sound == explained and ": rewritten (" not in r.stdout
    assert (
        "Rebuilt the indexes of 61 segments in 21 partitions: 0 index files rewritten, 0 created, 119 unchanged, "
        "3 sound left alone." in r.stdout
    )
    # the interval is said once, and again only for the partition whose topic sets another
    interval_lines = [
        line for line in r.stdout.splitlines() if "index.interval.bytes " in line and "sound" not in line
    ]
    assert interval_lines[0].startswith("index.interval.bytes 4096 (Kafka's default; ")
    assert interval_lines[1].startswith(
        f"{data / 'small-index-0'}: index.interval.bytes 100 (the topic's configuration in"
    )
    assert len(interval_lines) == 2
    r = _run(["--force", str(data)])
    assert r.returncode == 0, r.stderr
    rewritten = sorted(line.split(": ")[0] for line in r.stdout.splitlines() if ": rewritten (" in line)
    assert rewritten == explained
    assert all(
        "sound: the differences are history a rebuild cannot know" in line
        for line in r.stdout.splitlines()
        if ": rewritten (" in line
    )
    assert r.stdout.splitlines()[-1] == (
        "Rebuilt the indexes of 61 segments in 21 partitions: 3 index files rewritten, 0 created, 119 unchanged."
    )
    assert _hashes(data, ".log") == logs
    # idempotent: a second run changes nothing, and the backups are what the broker wrote
    r2 = _run([str(data), "--no-backup"])
    assert ": rewritten" not in r2.stdout and r2.returncode == 0
    bak = data / "plain-0" / "00000000000000000000.timeindex.bak"
    assert bak.read_bytes() == (CORPUS / "data" / "plain-0" / "00000000000000000000.timeindex").read_bytes()


def test_interval_from_cluster_metadata() -> None:
    config = read_cluster_config(str(FIXTURE_CORPUS / "data"))
    assert config is not None
    assert config.topic_value("small-index", "index.interval.bytes") == "100"
    assert config.topic_value("segments", "index.interval.bytes") is None
    assert config.topic_value("segments", "segment.bytes") == "16384"
    assert read_cluster_config(str(FIXTURE_CORPUS / "data-kafka39-zk")) is None


# -- the algorithm on crafted logs --------------------------------------------------------------------------------


def _batches(n: int, size_records: int = 3, start_ts: int = 1000) -> list[bytes]:
    out = []
    for i in range(n):
        recs = [SimpleRecord(b"x" * 20, timestamp=start_ts + 10 * i + j) for j in range(size_records)]
        out.append(build_v2_batch(recs, base_offset=i * size_records))
    return out


def test_entry_only_when_more_than_the_interval_was_read() -> None:
    batches = _batches(6)
    size = len(batches[0])
    assert all(len(b) == size for b in batches)
    log = FileRecords.from_bytes(b"".join(batches))
    # exactly one batch since the last entry is not "more than" one batch's size: every other batch
    r = recover_indexes(log, 0, size)
    assert r.offset_entries == [OffsetPosition(8, 2 * size), OffsetPosition(14, 4 * size)]
    assert r.time_entries == [
        TimestampOffset(1000 + 22, 8),
        TimestampOffset(1000 + 42, 14),
        TimestampOffset(1000 + 52, 17),  # the roll entry
    ]
    r = recover_indexes(log, 0, size - 1)
    assert [e.position for e in r.offset_entries] == [size * i for i in range(1, 6)]
    r = recover_indexes(log, 0, 0)  # every batch but the first
    assert len(r.offset_entries) == 5
    r = recover_indexes(log, 0, size, rolled=False)
    assert r.time_entries[-1] == TimestampOffset(1000 + 42, 14)


def test_time_index_keeps_max_timestamp_and_its_offset() -> None:
    ts = [100, 300, 200, 400, 50]
    batches = [build_v2_batch([SimpleRecord(b"v", timestamp=t)], base_offset=i) for i, t in enumerate(ts)]
    r = recover_indexes(FileRecords.from_bytes(b"".join(batches)), 0, 0)
    # an entry at each of batches 1..4, after the batch's own timestamp is taken in: max so far 300 (offset 1),
    # 300 again (no entry), 400 (offset 3), 400 again (no entry); the roll entry adds nothing new
    assert r.time_entries == [TimestampOffset(300, 1), TimestampOffset(400, 3)]
    assert r.max_timestamp == 400 and r.offset_of_max_timestamp == 3


def test_v0_messages_give_an_empty_time_index() -> None:
    log = b"".join(build_legacy_message(SimpleRecord(b"v" * 50), offset=i, magic=0) for i in range(20))
    r = recover_indexes(FileRecords.from_bytes(log), 0, 100)
    assert r.time_entries == [] and len(r.offset_entries) > 3


def test_corrupt_and_torn_tails_end_the_valid_part() -> None:
    batches = _batches(4)
    size = len(batches[0])
    torn = b"".join(batches) + batches[0][:40]
    r = recover_indexes(FileRecords.from_bytes(torn), 0, 0)
    assert (r.valid_bytes, r.invalid_bytes, r.batches) == (4 * size, 40, 4) and "torn" in r.stop_reason
    corrupt = bytearray(b"".join(batches))
    corrupt[2 * size + 70] ^= 0xFF
    r = recover_indexes(FileRecords.from_bytes(bytes(corrupt)), 0, 0)
    assert r.valid_bytes == 2 * size and "Record is corrupt (stored crc = " in r.stop_reason
    short = b"".join(batches[:1]) + (0).to_bytes(8, "big") + (3).to_bytes(4, "big") + bytes(20)
    r = recover_indexes(FileRecords.from_bytes(short), 0, 0)
    assert r.valid_bytes == size and "smaller than minimum record overhead" in r.stop_reason


def test_offsets_that_do_not_fit_are_an_error() -> None:
    log = build_v2_batch([SimpleRecord(b"v", timestamp=1)], base_offset=1 << 31)
    with pytest.raises(IndexRecoveryError, match="LogSegmentOffsetOverflowException"):
        recover_indexes(FileRecords.from_bytes(log), 0)
    backwards = b"".join(
        build_v2_batch([SimpleRecord(b"v" * 50, timestamp=1)], base_offset=o) for o in (5, 9, 7)
    )
    with pytest.raises(IndexRecoveryError, match="InvalidOffsetException"):
        recover_indexes(FileRecords.from_bytes(backwards), 0, 0)


# -- damaged corpus cases --------------------------------------------------------------------------------------


def _damaged_root() -> Path:
    return CORPUS / "damaged" if (CORPUS / "damaged").is_dir() else FIXTURE_CORPUS / "damaged"


def test_damaged_cases_are_repaired_and_pass_verify_index(tmp_path: Path) -> None:
    damaged = _copy_tree(_damaged_root(), tmp_path / "damaged")
    logs = _hashes(damaged, ".log")
    before = {}
    for directory in find_partition_dirs([damaged]):
        for segment in LocalLog.scan(directory).log_segments:
            before[segment.log_path] = {p.kind for p in verify_segment(segment).problems}
    assert any(kinds & INDEX_PROBLEM_KINDS for kinds in before.values())
    small = [str(d) for d in find_partition_dirs([damaged]) if d.endswith("small-index-0")]
    others = [str(d) for d in find_partition_dirs([damaged]) if not d.endswith("small-index-0")]
    r1 = _run(["--index-interval-bytes", "100", *small])
    r2 = _run(others)
    assert "Traceback" not in r1.stderr + r2.stderr
    after = {}
    for directory in find_partition_dirs([damaged]):
        for segment in LocalLog.scan(directory).log_segments:
            after[segment.log_path] = {p.kind for p in verify_segment(segment).problems}
    assert set(after) == set(before)
    assert all(not (kinds & INDEX_PROBLEM_KINDS) for kinds in after.values()), after
    assert _hashes(damaged, ".log") == logs  # the .log files are never changed
    # torn or corrupt tails are reported (exit 1), one line each naming the file and byte
    assert r2.returncode == 1
    problems = [line for line in r2.stderr.splitlines() if line.startswith("kdump: ")]
    assert any(
        "truncated-mid-batch/plain-0/00000000000000000000.log: byte 2468: " in line for line in problems
    )
    assert any("the .log is left unchanged" in line for line in problems)


def test_dry_run_reports_entries_and_writes_nothing(tmp_path: Path) -> None:
    src = _damaged_root() / "index-wrong-offset" / "small-index-0"
    d = _copy_tree(src, tmp_path / "small-index-0")
    listing = {p.name: (p.stat().st_mtime_ns, p.read_bytes()) for p in d.iterdir()}
    r = _run(["--dry-run", "--index-interval-bytes", "100", str(d)])
    assert r.returncode == 0
    assert {p.name: (p.stat().st_mtime_ns, p.read_bytes()) for p in d.iterdir()} == listing
    index = d / "00000000000000000180.index"
    assert f"{index}: would rewrite (7 entries, was 56 bytes = 7 entries)" in r.stdout
    lines = r.stdout.splitlines()
    i = lines.index(f"{index}: would rewrite (7 entries, was 56 bytes = 7 entries)")
    assert (
        lines[i + 1].startswith("  entry 3: offset 285 position ")
        and " -> offset 290 position " in lines[i + 1]
    )
    assert f"{d / '00000000000000000180.timeindex'}: would create (" in r.stdout
    assert lines[-1].startswith(
        "Dry run over 1 segment in 1 partition: 1 index files would be rewritten, 1 created"
    )


def test_dry_run_shows_zero_tail_and_partial_entry(tmp_path: Path) -> None:
    d = _copy_tree(_damaged_root() / "index-zero-tail" / "small-index-0", tmp_path / "small-index-0")
    r = _run(["--dry-run", "--index-interval-bytes", "100", str(d)])
    assert "  entries 7..16: - 10 zero-filled slots (a preallocated index never trimmed)" in r.stdout
    d = _copy_tree(_damaged_root() / "index-bad-length" / "small-index-0", tmp_path / "bad" / "small-index-0")
    r = _run(["--dry-run", "--index-interval-bytes", "100", str(d)])
    assert "  bytes 56..60: - 5 bytes that are not a whole entry" in r.stdout


# -- writing: backups, atomicity, the broker's lock ----------------------------------------------------------------


@pytest.fixture()
def partition(tmp_path: Path) -> Path:
    d = tmp_path / "logdir" / "orders-0"
    build_partition(str(d), 3, batches_per_segment=40, index_interval_bytes=4096, distinct_timestamps=True)
    return d


def _spoil(path: Path) -> bytes:
    """Damage an index file (swap its first two entries); return the correct content."""
    good = path.read_bytes()
    size = 8 if path.suffix == ".index" else 12
    path.write_bytes(good[size : 2 * size] + good[:size] + good[2 * size :])
    return good


def test_backup_names_and_no_backup(partition: Path) -> None:
    index = partition / offset_to_filename(0, ".index")
    good = _spoil(index)
    spoiled = index.read_bytes()
    r = _run([str(index)])
    assert r.returncode == 0 and index.read_bytes() == good
    assert (partition / (index.name + ".bak")).read_bytes() == spoiled
    assert f"the old file is kept as {index}.bak" in r.stdout
    _spoil(index)
    _run([str(partition / offset_to_filename(0))])
    assert (partition / (index.name + ".bak.1")).exists()
    _spoil(index)
    r = _run(["--no-backup", str(partition)])
    assert index.read_bytes() == good and not (partition / (index.name + ".bak.2")).exists()
    assert not list(partition.glob("*.kdump-tmp"))


def test_file_mode_is_kept(partition: Path) -> None:
    index = partition / offset_to_filename(0, ".index")
    _spoil(index)
    index.chmod(0o444)
    assert _run([str(partition)]).returncode == 0
    assert index.stat().st_mode & 0o777 == 0o444


_CRASH_CHILD = textwrap.dedent(
    """
    import os, signal, sys
    import kdump.commands.rebuild_index as rebuild
    from kdump.storage import atomic_write
    target = sys.argv[1]
    def crashing(path, data, *, backup=True, step=None):
        def hook(name):
            if name == target:
                os.kill(os.getpid(), signal.SIGKILL)
        return atomic_write.replace_file(path, data, backup=backup, step=hook)
    rebuild.replace_file = crashing
    from kdump.cli import cli
    cli.main(sys.argv[2:], prog_name="kdump")
    """
)

STEPS = ["write-temp", "fsync-temp", "backup", "fsync-dir-backup", "rename", "fsync-dir"]


@pytest.mark.parametrize("step", STEPS)
def test_kill_9_at_each_step_leaves_old_or_new(step: str, partition: Path) -> None:
    index = partition / offset_to_filename(40 * 5, ".index")
    good = _spoil(index)
    old = index.read_bytes()
    r = subprocess.run(
        [sys.executable, "-c", _CRASH_CHILD, step, "rebuild-index", str(index)],
        capture_output=True,
        check=False,
    )
    assert r.returncode == -signal.SIGKILL
    expected = good if STEPS.index(step) > STEPS.index("rename") else old
    assert index.read_bytes() == expected
    if step == "fsync-dir":
        assert index.read_bytes() == good
    # the next run finishes the job and leaves no temporary file behind
    assert _run([str(partition)]).returncode == 0
    assert index.read_bytes() == good
    assert not list(partition.glob("*.kdump-tmp"))


def test_kill_9_at_random_moments(tmp_path: Path) -> None:
    """A segment whose index is ~1 MiB, rebuilt by processes killed after random delays: the index is always
    either the old or the new file, whole."""
    d = tmp_path / "big-0"
    build_partition(
        str(d), 1, batches_per_segment=120_000, records_per_batch=1, value_size=10, index_interval_bytes=0
    )
    index = d / offset_to_filename(0, ".index")
    good = index.read_bytes()
    assert len(good) > 900_000
    old = good[:-8]  # a valid but different old index
    rng = random.Random(4)
    outcomes = set()
    for _ in range(12):
        index.write_bytes(old)
        for p in d.glob("*.bak*"):
            p.unlink()
        child = subprocess.Popen(
            [
                sys.executable,
                "-m",
                "kdump",
                "rebuild-index",
                "--no-backup",
                "--index-interval-bytes",
                "0",
                str(d),
            ],
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
        )
        time.sleep(rng.uniform(0.2, 1.2))
        child.send_signal(signal.SIGKILL)
        child.wait()
        content = index.read_bytes()
        assert content in (old, good)
        outcomes.add(content == good)
    assert outcomes  # (which outcomes occur depends on the machine's speed)


def test_replace_file_keeps_old_content_if_rename_fails(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    path = tmp_path / "x.index"
    path.write_bytes(b"old")

    def failing(*args: object) -> None:
        raise OSError(28, "No space left on device")

    monkeypatch.setattr(os, "replace", failing)
    with pytest.raises(OSError):
        replace_file(str(path), b"new")
    assert path.read_bytes() == b"old" and not (tmp_path / "x.index.kdump-tmp").exists()


def test_write_error_is_one_line(partition: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    import kdump.commands.rebuild_index as rebuild

    def failing(*args: object, **kwargs: object) -> None:
        raise PermissionError(13, "Permission denied")

    monkeypatch.setattr(rebuild, "replace_file", failing)
    _spoil(partition / offset_to_filename(0, ".index"))
    result = CliRunner().invoke(cli, ["rebuild-index", str(partition)])
    assert result.exit_code == 1
    assert (
        f"kdump: {partition / offset_to_filename(0, '.index')}: cannot write it: Permission denied"
        in result.output
    )


_LOCKER = textwrap.dedent(
    """
    import fcntl, os, sys, time
    fd = os.open(sys.argv[1], os.O_RDWR | os.O_CREAT)
    fcntl.lockf(fd, fcntl.LOCK_EX)
    print("locked", flush=True)
    time.sleep(60)
    """
)


def test_refuses_a_log_dir_locked_by_a_broker(partition: Path) -> None:
    lock = partition.parent / ".lock"
    locker = subprocess.Popen([sys.executable, "-c", _LOCKER, str(lock)], stdout=subprocess.PIPE, text=True)
    try:
        assert locker.stdout is not None and locker.stdout.readline() == "locked\n"
        assert lock_holder(str(partition.parent)) == locker.pid
        index = partition / offset_to_filename(0, ".index")
        _spoil(index)
        spoiled = index.read_bytes()
        r = _run([str(partition.parent)])
        assert r.returncode == 1 and index.read_bytes() == spoiled
        assert f"kdump: {lock}: held by process {locker.pid} (a running broker?)" in r.stderr
        assert "--force" in r.stderr
        assert _run(["--dry-run", str(partition.parent)]).returncode == 0  # reading is fine
        r = _run(["--force", str(partition.parent)])
        assert r.returncode == 0 and index.read_bytes() != spoiled
    finally:
        locker.kill()
        locker.wait()
    assert lock_holder(str(partition.parent)) is None


@pytest.mark.parametrize(
    "args",
    [[], ["/no/such/path"], ["--index-interval-bytes", "-1", "."], ["--index-interval-bytes", "x", "."]],
)
def test_usage_errors_exit_2(args: list[str], partition: Path) -> None:
    r = _run(args, cwd=partition)
    assert r.returncode == 2 and "Traceback" not in r.stderr


def test_a_file_that_is_not_a_segment_is_a_usage_error(partition: Path) -> None:
    (partition / "leader-epoch-checkpoint").write_text("0\n0\n")
    r = _run([str(partition / "leader-epoch-checkpoint")])
    assert r.returncode == 2 and "not a .log, .index or .timeindex" in r.stderr


def test_offset_overflow_is_reported_and_nothing_written(tmp_path: Path) -> None:
    d = tmp_path / "o-0"
    d.mkdir()
    (d / offset_to_filename(0)).write_bytes(
        build_v2_batch([SimpleRecord(b"v", timestamp=1)], base_offset=1 << 32)
    )
    r = _run([str(d)])
    assert r.returncode == 1 and "LogSegmentOffsetOverflowException" in r.stderr
    assert sorted(p.name for p in d.iterdir()) == [offset_to_filename(0)]


def test_missing_indexes_are_created(partition: Path) -> None:
    index = partition / offset_to_filename(0, ".index")
    good = index.read_bytes()
    index.unlink()
    r = _run([str(partition)])
    assert r.returncode == 0 and index.read_bytes() == good and f"{index}: created (" in r.stdout
    assert json.dumps(r.stdout)  # plain text, no traceback


def test_a_sound_index_is_left_alone_unless_forced(tmp_path: Path) -> None:
    """An index a broker wrote at index.interval.bytes 4096 is sound; rebuilt at 100 it would differ (history a
    rebuild cannot know): left alone by default, said so in the dry run, rewritten with --force."""
    d = tmp_path / "logdir" / "orders-0"
    build_partition(str(d), 1, batches_per_segment=40, index_interval_bytes=4096, distinct_timestamps=True)
    index = d / "00000000000000000000.index"
    before = index.read_bytes()
    dry = _run(["--dry-run", "--index-interval-bytes", "100", str(d)])
    assert dry.returncode == 0
    assert f"{index}: sound, differs from a rebuild (" in dry.stdout and "would leave it alone" in dry.stdout
    assert "--force rewrites sound files too" in dry.stdout
    r = _run(["--index-interval-bytes", "100", str(d)])
    assert r.returncode == 0 and index.read_bytes() == before
    forced = _run(["--force", "--index-interval-bytes", "100", str(d)])
    assert forced.returncode == 0 and f"{index}: rewritten (" in forced.stdout
    assert len(index.read_bytes()) > len(before)  # entries every 100 bytes instead of every 4096


# -- problems are typed facts ------------------------------------------------------------------------------------


class _RecordingSink:
    """A sink that keeps the facts it is handed (the problems as the command made them, before any wording)."""

    def __init__(self) -> None:
        self.problems: list[rebuild_index.RebuildProblem] = []
        self.outcomes: list[rebuild_index.IndexFileOutcome] = []
        self.summaries: list[rebuild_index.RebuildSummary] = []

    def interval(self, interval: rebuild_index.Interval) -> None:
        pass

    def orphans(self, orphans: rebuild_index.Orphans) -> None:
        pass

    def index_file(self, outcome: rebuild_index.IndexFileOutcome) -> None:
        self.outcomes.append(outcome)

    def problem(self, problem: rebuild_index.RebuildProblem) -> None:
        self.problems.append(problem)

    def summary(self, summary: rebuild_index.RebuildSummary) -> None:
        self.summaries.append(summary)


def _record(paths: list[Path], *, dry_run: bool = False) -> tuple[_RecordingSink, ExitStatus]:
    sink = _RecordingSink()
    targets = rebuild_index.select_targets([str(p) for p in paths])
    status = rebuild_index.RebuildIndex(targets, rebuild_index.RebuildOptions(dry_run=dry_run), sink).run()
    return sink, status


def test_problems_are_typed_facts_with_the_damaged_files_positions(tmp_path: Path) -> None:
    """Torn and corrupt tails, an offset that does not fit, an unreadable index: each problem is a fact whose
    position and sizes are those of the bytes the test wrote (not what kdump measures)."""
    batches = _batches(5)
    whole = b"".join(batches)
    torn = tmp_path / "torn-0"
    torn.mkdir()
    (torn / offset_to_filename(0)).write_bytes(whole + batches[0][:37])
    corrupt = tmp_path / "corrupt-0"
    corrupt.mkdir()
    damaged = bytearray(whole)
    third = len(batches[0]) + len(batches[1])
    damaged[third + len(batches[2]) - 1] ^= 0xFF  # the third batch's last byte: its CRC no longer matches
    (corrupt / offset_to_filename(0)).write_bytes(bytes(damaged))
    overflow = tmp_path / "overflow-0"
    overflow.mkdir()
    (overflow / offset_to_filename(0)).write_bytes(
        build_v2_batch([SimpleRecord(b"v", timestamp=1)], base_offset=1 << 32)
    )
    unreadable = tmp_path / "unreadable-0"
    unreadable.mkdir()
    (unreadable / offset_to_filename(0)).write_bytes(whole)
    (unreadable / offset_to_filename(0, ".index")).mkdir()  # an index that is a directory cannot be read

    sink, status = _record([torn, corrupt, overflow, unreadable], dry_run=True)
    assert status == ExitStatus.PROBLEMS
    by_kind = [(p.kind, p.path, p.position, p.invalid_bytes) for p in sink.problems]
    assert by_kind == [
        (rebuild_index.INVALID_TAIL, str(torn / offset_to_filename(0)), len(whole), 37),
        (rebuild_index.INVALID_TAIL, str(corrupt / offset_to_filename(0)), third, len(whole) - third),
        (rebuild_index.UNINDEXABLE_LOG, str(overflow / offset_to_filename(0)), 0, None),
        (rebuild_index.UNREADABLE_INDEX, str(unreadable / offset_to_filename(0, ".index")), None, None),
    ]
    torn_tail, corrupt_tail, overflowing, index = sink.problems
    assert corrupt_tail.reason is not None and "Record is corrupt (stored crc = " in corrupt_tail.reason
    assert torn_tail.reason is not None and "not a whole batch" in torn_tail.reason
    assert overflowing.reason is not None and "LogSegmentOffsetOverflowException" in overflowing.reason
    assert index.reason is not None and "directory" in index.reason
    assert sink.summaries[0].problems == 4
    # The text sink words the same facts as before they were facts: the corpus runs compare it byte for byte.
    assert problem_text(torn_tail) == (
        f"{torn / offset_to_filename(0)}: byte {len(whole)}: {torn_tail.reason}; the indexes cover the "
        f"{len(whole)} valid bytes before it and the .log is left unchanged (a broker would truncate its last 37 "
        "bytes)"
    )


def test_locked_log_directory_and_write_error_are_typed_facts(
    partition: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    lock = partition.parent / ".lock"
    locker = subprocess.Popen([sys.executable, "-c", _LOCKER, str(lock)], stdout=subprocess.PIPE, text=True)
    try:
        assert locker.stdout is not None and locker.stdout.readline() == "locked\n"
        _spoil(partition / offset_to_filename(0, ".index"))
        sink, status = _record([partition])
        assert status == ExitStatus.PROBLEMS and not sink.outcomes
        assert sink.problems == [
            rebuild_index.RebuildProblem(
                rebuild_index.LOCKED_LOG_DIR, str(lock), directory=str(partition), holder=locker.pid
            )
        ]
        assert problem_text(sink.problems[0]) == (
            f"{lock}: held by process {locker.pid} (a running broker?): nothing written in {partition}; stop the "
            "broker, or pass --force"
        )
    finally:
        locker.kill()
        locker.wait()

    def failing(*args: object, **kwargs: object) -> None:
        raise OSError(28, "No space left on device")

    monkeypatch.setattr(rebuild_index, "replace_file", failing)
    sink, status = _record([partition])
    index = str(partition / offset_to_filename(0, ".index"))
    assert status == ExitStatus.PROBLEMS
    assert sink.problems == [
        rebuild_index.RebuildProblem(rebuild_index.WRITE_ERROR, index, reason="No space left on device")
    ]


def test_unreadable_directory_is_a_typed_fact(partition: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    def vanished(directory: object) -> LocalLog:
        raise FileNotFoundError(2, "No such file or directory")

    monkeypatch.setattr(rebuild_index.LocalLog, "scan", vanished)
    sink, status = _record([partition])
    assert status == ExitStatus.PROBLEMS
    (problem,) = sink.problems
    assert (problem.kind, problem.path) == (rebuild_index.UNREADABLE_DIRECTORY, str(partition))
    assert problem.reason is not None and problem.reason.startswith("No such file or directory: it vanished")
