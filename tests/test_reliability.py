"""Field reliability (issue 13): live brokers and file-system edges.  Every hostile input is generated here,
small; each case must end with one clear line naming the path and a defined exit status, never a traceback, an
"internal error", a hang or a crash."""

from __future__ import annotations

import json
import os
import re
import shutil
import stat
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest
from click.testing import CliRunner

from kdump.cli import cli
from kdump.storage import local_log
from kdump.storage.atomic_write import lock_holder
from kdump.storage.naming import offset_to_filename
from tests.partition_builder import build_partition

SEGMENT = offset_to_filename(0, ".log")
INDEX = offset_to_filename(0, ".index")
TIME_INDEX = offset_to_filename(0, ".timeindex")


def _kdump(*args: str, timeout: float = 60, stdout: object = subprocess.PIPE) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "-m", "kdump", *args],
        stdout=stdout,
        stderr=subprocess.PIPE,
        text=True,
        timeout=timeout,
        check=False,
    )


def _clean(r: subprocess.CompletedProcess) -> None:
    assert "Traceback" not in r.stderr and "internal error" not in r.stderr, r.stderr


@pytest.fixture
def partition(tmp_path: Path) -> Path:
    directory = tmp_path / "logs" / "orders-0"
    build_partition(str(directory), 3, batches_per_segment=4, records_per_batch=5)
    (tmp_path / "logs" / "meta.properties").write_text("version=1\nnode.id=1\n")
    return directory


# -- non-regular files named like Kafka files ---------------------------------------------------------------------


@pytest.mark.parametrize("name", [SEGMENT, INDEX, TIME_INDEX])
def test_a_fifo_named_like_a_kafka_file_does_not_hang(partition: Path, name: str) -> None:
    (partition / name).unlink()
    os.mkfifo(partition / name)
    fifo = str(partition / name)
    for args in (
        ["files", "--files", fifo],
        ["ls", str(partition.parent)],
        ["verify-index", str(partition)],
        ["find", str(partition), "--offset", "3"],
        ["rebuild-index", "--dry-run", str(partition)],
    ):
        r = _kdump(*args, timeout=30)  # a hang is a TimeoutExpired
        _clean(r)
        assert r.returncode in (0, 1), (args, r.stderr)
        said = r.stdout + r.stderr
        if (
            args[0] in ("files", "verify-index", "rebuild-index") or name == SEGMENT
        ):  # ls, find: no need to read
            assert "not a regular file: it is a named pipe (FIFO)" in said, (args, said)


def test_dev_zero_as_an_index_is_one_line(partition: Path) -> None:
    index = partition / INDEX
    index.unlink()
    index.symlink_to("/dev/zero")
    r = _kdump("files", "--files", str(index))
    _clean(r)
    assert r.returncode == 1
    assert r.stderr.strip().splitlines() == [f"kdump: {index}: not a regular file: it is a character device"]
    r = _kdump("verify-index", str(partition))
    _clean(r)
    assert (
        r.returncode == 1 and f"{index}: unreadable: not a regular file: it is a character device" in r.stdout
    )


def _peak_rss_mib(args: list[str]) -> tuple[float, subprocess.CompletedProcess]:
    """Run kdump in a child of a fresh interpreter and return the child's peak RSS (MiB) and its result."""
    probe = textwrap.dedent(
        """
        import resource, subprocess, sys
        r = subprocess.run([sys.executable, "-m", "kdump", *sys.argv[1:]], capture_output=True, text=True)
        sys.stdout.write(f"{resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss}\\n{r.returncode}\\n")
        sys.stdout.write(r.stderr)
        """
    )
    r = subprocess.run([sys.executable, "-c", probe, *args], capture_output=True, text=True, check=True)
    kib, status, *err = r.stdout.split("\n")
    return int(kib) / 1024, subprocess.CompletedProcess(args, int(status), "", "\n".join(err))


def test_a_huge_sparse_index_is_read_in_pieces(partition: Path) -> None:
    """A 256 MiB sparse (all-zero) index: read whole it cost ~11x its size; through the map in pieces it costs
    a few MiB, and verify-index reports the zero tail once."""
    with open(partition / INDEX, "r+b") as f:
        f.truncate(256 << 20)
    with open(partition / TIME_INDEX, "r+b") as f:
        f.truncate((256 << 20) // 12 * 12)
    peak, r = _peak_rss_mib(["verify-index", str(partition)])
    _clean(r)
    assert r.returncode == 1
    assert peak < 150, f"verify-index peaked at {peak:.0f} MiB"
    peak, r = _peak_rss_mib(["files", "--files", str(partition / TIME_INDEX)])
    _clean(r)
    assert peak < 150, f"files peaked at {peak:.0f} MiB"


# -- output that cannot be written ------------------------------------------------------------------------------------


@pytest.mark.skipif(not os.path.exists("/dev/full"), reason="no /dev/full on this system")
@pytest.mark.parametrize(
    "args",
    [["files", "--deep-iteration", "--files", "{log}"], ["ls", "{logs}"], ["verify-index", "{partition}"]],
)
def test_a_full_disk_is_one_line_naming_the_output(partition: Path, args: list[str]) -> None:
    values = {"log": str(partition / SEGMENT), "logs": str(partition.parent), "partition": str(partition)}
    with open("/dev/full", "w") as full:
        r = _kdump(*(a.format(**values) for a in args), stdout=full)
    _clean(r)
    assert r.returncode == 1
    assert r.stderr == "kdump: standard output: cannot write: No space left on device\n"


# -- live brokers: mappings, vanishing files ------------------------------------------------------------------


def test_index_mappings_survive_a_trim_underneath(partition: Path) -> None:
    """Every index kdump maps is registered with the SIGBUS guard: a broker trimming the file while it is
    mapped leaves zeros to read, not a dead process (run in a child: without the guard it dies of SIGBUS)."""
    code = textwrap.dedent(
        """
        import os, sys
        from kdump.storage import sigbus_guard
        from kdump.storage.offset_index import OffsetIndex
        from kdump.storage.time_index import TimeIndex
        from kdump.storage.transaction_index import TransactionIndex
        if not sigbus_guard.available():
            print("unguarded"); sys.exit(0)
        index_path, time_path = sys.argv[1], sys.argv[2]
        with open(index_path, "r+b") as f:
            f.truncate(1 << 20)
        index = OffsetIndex(index_path)
        time_index = TimeIndex(time_path)
        os.truncate(index_path, 0)
        os.truncate(time_path, 0)
        print(index.entry(index.entry_count - 1), time_index.entry(time_index.entry_count - 1))
        print(sigbus_guard.fault_count() >= 2)
        """
    )
    r = subprocess.run(
        [sys.executable, "-c", code, str(partition / INDEX), str(partition / TIME_INDEX)],
        capture_output=True,
        text=True,
        check=False,
    )
    assert r.returncode == 0, r.stderr
    if r.stdout.strip() == "unguarded":
        pytest.skip("the SIGBUS guard cannot be installed on this platform")
    assert r.stdout.splitlines()[1] == "True"


def _vanish_after(monkeypatch: pytest.MonkeyPatch, victim: str, when: str) -> None:
    """Delete the partition directory named ``victim`` right after the walk recognised it (``detect``) or
    right after its files were listed (``scan``): a broker deleting a partition at the worst moment."""
    if when == "detect":
        original = local_log.is_partition_dir

        def is_partition_dir(directory: str | os.PathLike[str]) -> bool:
            found = original(directory)
            if os.path.basename(os.fspath(directory)) == victim:
                shutil.rmtree(directory, ignore_errors=True)
            return found

        monkeypatch.setattr(local_log, "is_partition_dir", is_partition_dir)
    else:
        scan = local_log.LocalLog.scan.__func__  # type: ignore[attr-defined]

        def scan_then_delete(cls: type, directory: str) -> local_log.LocalLog:
            log = scan(cls, directory)
            if os.path.basename(os.fspath(directory)) == victim:
                shutil.rmtree(directory, ignore_errors=True)
            return log

        monkeypatch.setattr(local_log.LocalLog, "scan", classmethod(scan_then_delete))


@pytest.mark.parametrize("when", ["detect", "scan"])
@pytest.mark.parametrize(
    "command", [["verify-index"], ["ls"], ["rebuild-index", "--dry-run"], ["rebuild-index"]]
)
def test_a_partition_deleted_during_the_walk_is_reported_and_the_walk_goes_on(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, command: list[str], when: str
) -> None:
    logs = tmp_path / "logs"
    for name in ("a-0", "b-0", "c-0"):
        build_partition(str(logs / name), 2, batches_per_segment=3, records_per_batch=4)
    _vanish_after(monkeypatch, "b-0", when)
    r = CliRunner().invoke(cli, [*command, str(logs)])
    assert r.exception is None or isinstance(r.exception, SystemExit), r.exception
    output = r.output
    assert "Traceback" not in output and "internal error" not in output
    assert str(logs / "b-0") in output
    if when == "detect":
        assert "it vanished while kdump was walking the directory" in output
    # the walk went on past b-0
    if command == ["ls"]:
        assert any(line.split()[:2] == ["c", "0"] for line in output.splitlines())
    elif command[0] == "rebuild-index":
        assert re.search(r"\b[46] segments in [23] partitions", output), output
    assert r.exit_code == 1  # the one rule for what cannot be read (man kdump), ls included (issue 31)
    if command[0] == "verify-index":
        assert "in 3 partitions" in output and "c-0" not in output.split("Checked")[0].replace("b-0", "")


def _remove_deep_tree(deep: Path) -> None:
    """Remove the chain of ``d`` directories bottom-up without recursion (``shutil.rmtree`` and pytest's own
    clean-up of old temporary directories recurse, and would die of RecursionError on it)."""
    subprocess.run(["rm", "-rf", "--", str(deep)], check=False)
    if deep.exists():  # no rm: walk down and back up by descriptors
        fds = [os.open(deep, os.O_RDONLY)]
        while "d" in os.listdir(fds[-1]):
            fds.append(os.open("d", os.O_RDONLY, dir_fd=fds[-1]))
        for child, parent in zip(fds[:0:-1], fds[-2::-1], strict=True):
            for name in os.listdir(child):
                if name != "d":
                    shutil.rmtree(os.path.join(f"/proc/self/fd/{child}", name), ignore_errors=True)
            os.close(child)
            os.rmdir("d", dir_fd=parent)
        os.close(fds[0])
        shutil.rmtree(deep, ignore_errors=True)


def test_a_tree_a_thousand_levels_deep(tmp_path: Path) -> None:
    deep = tmp_path / "deep"
    deep.mkdir()
    try:
        _check_deep_tree(deep)
    finally:
        _remove_deep_tree(deep)
    assert not deep.exists()


def _check_deep_tree(deep: Path) -> None:
    fd = os.open(deep, os.O_RDONLY)
    try:
        for _ in range(1000):  # os.makedirs itself recurses
            os.mkdir("d", dir_fd=fd)
            fd, parent = os.open("d", os.O_RDONLY, dir_fd=fd), fd
            os.close(parent)
    finally:
        os.close(fd)
    path = Path(os.path.join(deep, *["d"] * 1000))
    build_partition(str(path / "t-0"), 1)
    for args in (["ls"], ["verify-index"], ["rebuild-index", "--dry-run"]):
        r = _kdump(*args, str(deep))
        _clean(r)
        assert r.returncode == 0, (args, r.stderr)
        found = {
            "ls": any(line.split()[:2] == ["t", "0"] for line in r.stdout.splitlines()),
            "verify-index": "Checked 1 segment in 1 partition" in r.stdout,
            "rebuild-index": "over 1 segment in 1 partition" in r.stdout,
        }
        assert found[args[0]], r.stdout


# -- permissions (without root's override) ----------------------------------------------------------------------------

SETPRIV = shutil.which("setpriv")


def _without_override(*args: str) -> subprocess.CompletedProcess:
    """kdump as root without CAP_DAC_OVERRIDE / CAP_DAC_READ_SEARCH (an ordinary user otherwise)."""
    prefix = [SETPRIV, "--bounding-set", "-dac_override,-dac_read_search"] if os.geteuid() == 0 else []
    return subprocess.run(
        [*prefix, sys.executable, "-m", "kdump", *args],
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )


@pytest.mark.skipif(
    os.geteuid() == 0 and SETPRIV is None, reason="root without setpriv cannot drop its override"
)
def test_unreadable_directories_and_files(tmp_path: Path) -> None:
    logs = tmp_path / "logs"
    for name in ("a-0", "b-0", "c-0"):
        build_partition(str(logs / name), 2, batches_per_segment=3, records_per_batch=4)
    (logs / "a-0" / SEGMENT).chmod(0)
    (logs / "c-0" / TIME_INDEX).chmod(0)
    (logs / "b-0").chmod(0)
    try:
        probe = _without_override("files", "--files", str(logs / "a-0" / SEGMENT))
        if probe.returncode == 0:
            pytest.skip("this process can read files without permission (capabilities not dropped)")
        assert probe.stderr.splitlines()[-1] == f"kdump: {logs / 'a-0' / SEGMENT}: Permission denied"
        for args in (["ls"], ["verify-index"], ["rebuild-index", "--dry-run"]):
            r = _without_override(*args, str(logs))
            _clean(r)
            said = r.stdout + r.stderr
            assert f"{logs / 'b-0'}: " in said and "cannot read the directory: Permission denied" in said, (
                said
            )
            assert f"{logs / 'a-0' / SEGMENT}: " in said and "Permission denied" in said
            if args[0] != "ls":
                assert f"{logs / 'c-0' / TIME_INDEX}: " in said
            assert r.returncode == 1  # the one rule for what cannot be read, ls included (issue 31)
        r = _without_override("files", "--files", str(logs / "c-0" / TIME_INDEX))
        _clean(r)
        assert (
            r.returncode == 1
            and r.stderr.splitlines()[-1] == f"kdump: {logs / 'c-0' / TIME_INDEX}: Permission denied"
        )
    finally:
        (logs / "b-0").chmod(stat.S_IRWXU)


# -- rebuild-index through a symbolic link ------------------------------------------------------------------------

_LOCKER = textwrap.dedent(
    """
    import fcntl, os, sys, time
    fd = os.open(sys.argv[1], os.O_RDWR | os.O_CREAT)
    fcntl.lockf(fd, fcntl.LOCK_EX)
    print("locked", flush=True)
    time.sleep(60)
    """
)


def test_rebuild_index_through_a_symlink_checks_the_real_log_dirs_lock(
    partition: Path, tmp_path: Path
) -> None:
    lock = partition.parent / ".lock"
    index = partition / INDEX
    index.write_bytes(b"\0" * 8 * 5)  # damaged: rebuild-index would rewrite it
    spoiled = index.read_bytes()
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    link = elsewhere / "orders-0"
    link.symlink_to(partition, target_is_directory=True)
    locker = subprocess.Popen([sys.executable, "-c", _LOCKER, str(lock)], stdout=subprocess.PIPE, text=True)
    try:
        assert locker.stdout is not None and locker.stdout.readline() == "locked\n"
        assert lock_holder(str(partition.parent)) == locker.pid
        r = _kdump("rebuild-index", str(link))
        _clean(r)
        assert r.returncode == 1 and index.read_bytes() == spoiled
        assert f"kdump: {lock}: held by process {locker.pid} (a running broker?)" in r.stderr
    finally:
        locker.kill()
        locker.wait()


# -- kdump files X.timeindex ----------------------------------------------------------------------------------


def test_a_negative_position_in_the_offset_index_of_a_time_index_dump(partition: Path) -> None:
    """Kafka dies of IllegalArgumentException ("Invalid position: -5 in read from FileRecords(...)") after the
    Dumping line; kdump prints the same and one line naming both files."""
    import struct

    (partition / INDEX).write_bytes(struct.pack(">ii", 0, -5))  # offset 0 at position -5
    time_index = partition / TIME_INDEX
    r = _kdump("files", "--files", str(time_index))
    _clean(r)
    assert r.returncode == 1
    assert r.stdout == f"Dumping {time_index}\n"
    (line,) = r.stderr.splitlines()
    assert line.startswith(f"kdump: {time_index}: byte 0: entry 0 (")
    # Kafka's own text (FileRecords.slice's precondition), which names the .log through FileRecords.toString
    assert "Invalid position: -5 in read from FileRecords(size=" in line
    assert f"file={partition / SEGMENT}, start=0, end=2147483647)" in line


# -- files over 2 GiB ----------------------------------------------------------------------------------------------


def test_a_segment_over_2_gib_shows_its_real_size_and_says_what_was_read(partition: Path) -> None:
    """Kafka's FileRecords is int-sized: it reads the first 2147483647 bytes of a segment.  `ls` used to show
    that clamp as the size; the real size is shown and an anomaly says what was read; `verify` reports it."""
    last = sorted(partition.glob("*.log"))[-1]
    sizes = {p.name: p.stat().st_size for p in partition.glob("*.log")}
    os.truncate(last, 3 << 30)  # sparse: no disk used
    r = _kdump("ls", str(partition.parent))
    _clean(r)
    row = next(line.split() for line in r.stdout.splitlines() if line.startswith("orders"))
    expected = sum(sizes.values()) - sizes[last.name] + (3 << 30)
    assert row[3] == str(expected)
    assert f"{last.name}: {3 << 30} bytes: only the first 2147483647 were read" in r.stdout + r.stderr
    v = _kdump("verify", str(partition.parent))
    _clean(v)
    assert v.returncode == 1
    assert f"{last}: segment-size: {3 << 30} bytes: larger than any segment Kafka writes" in v.stdout


# -- the active segment's preallocated index files -------------------------------------------------------------


def _preallocate(path: Path, entry_size: int) -> None:
    """What a running broker leaves: the index file grown to its maximum size (``log.index.size.max.bytes``,
    10 MiB by default, rounded down to whole entries), zero-filled after the written entries."""
    os.truncate(path, (10 * 1024 * 1024) // entry_size * entry_size)


@pytest.mark.parametrize("command", [["verify-index"], ["verify"], ["verify", "--json"]])
def test_the_active_segments_preallocated_indexes_are_noted_not_reported(
    partition: Path, command: list
) -> None:
    segments = sorted(partition.glob("*.log"))
    active = segments[-1]
    _preallocate(active.with_suffix(".index"), 8)
    _preallocate(active.with_suffix(".timeindex"), 12)
    r = _kdump(*command, str(partition.parent))
    _clean(r)
    assert r.returncode == 0, r.stdout
    text = r.stdout
    assert "zero-tail" not in text and "sanity-check" not in text
    for suffix in (".index", ".timeindex"):
        assert f"{active.with_suffix(suffix)}" in text
    assert text.count("active-segment") == 3  # two zero tails, and the time index's start-up sanity check
    if "--json" in command:
        summary = json.loads(text.splitlines()[-1])
        assert summary["activeSegmentNotes"] == 3 and summary["problems"] == 0
        assert summary["entries"] < 100  # the written entries, not the 1.3M preallocated slots


def test_a_zero_tail_outside_the_active_segment_is_still_reported(partition: Path) -> None:
    first = sorted(partition.glob("*.index"))[0]
    _preallocate(first, 8)
    r = _kdump("verify-index", str(partition.parent))
    _clean(r)
    assert r.returncode == 1
    assert f"{first}: entry 1 (byte 8): zero-tail: " in r.stdout
    assert "active-segment" not in r.stdout
