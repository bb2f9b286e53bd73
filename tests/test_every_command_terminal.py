"""Every kdump command on real pseudo-terminals of 80 and 120 columns (issue 31): ``files``, ``verify``,
``verify-index``, ``rebuild-index --dry-run``, ``find`` (offset, timestamp, group, transactional id),
``salvage``, ``spark``'s help and ``help`` here; ``ls``, ``txn``, ``diff``, ``retention`` and the two
coordinator lookups' tables in test_tables_terminal (with their columns) and find --group's lag in
test_find_group_lag; a real ``spark export`` in a pseudo-terminal in test_spark_progress.

The rule (:func:`tests.pty_run.lines_past`): no line wider than the terminal unless what makes it wider is one
word (a path; a suggested command line is never broken either), no value cut (never ``…``; the values written
here must appear whole).  ``kdump files`` prints Kafka's text, which is exempt from the width rule but must be
the same bytes on a terminal as in a pipe (stdout then stderr, as Kafka's tool writes them).
"""

from __future__ import annotations

import re
import shutil
import subprocess
import sys
import tempfile
from collections.abc import Iterator
from pathlib import Path

import pytest

from kdump.storage.naming import offset_to_filename
from tests.forensic_data import T0
from tests.pty_run import REPO, environment, lines_past, run_in_pty
from tests.test_tables_terminal import BASE, GROUP, PRODUCER, TOPIC, TXN_ID, _coordinators, _partition

PARTITION = f"{TOPIC}-12"


@pytest.fixture(scope="module")
def data() -> Iterator[Path]:
    """A log directory as test_tables_terminal writes it (values as wide as a real cluster's), with indexes
    for the partition and a second partition whose segment is torn (for verify, verify-index, salvage)."""
    root = Path(tempfile.mkdtemp(prefix="ke"))  # short: pytest's own base directories pass 80 columns
    log_dir = root / "broker1"
    _partition(log_dir)
    _coordinators(log_dir)
    part = log_dir / PARTITION
    subprocess.run(
        [sys.executable, "-m", "kdump", "rebuild-index", "--no-backup", str(part)],
        check=True,
        capture_output=True,
        env=environment(),
    )
    damaged = log_dir / f"{TOPIC}-13"
    damaged.mkdir()
    log = (part / offset_to_filename(BASE)).read_bytes()
    torn = bytearray(log)
    torn[200] ^= 0xFF  # inside the first batch: its CRC no longer verifies
    (damaged / offset_to_filename(BASE)).write_bytes(
        bytes(torn) + b"\x00\x00\x00\x00\x00\x00\x00\x07\x00\x00"
    )
    try:
        yield log_dir
    finally:
        shutil.rmtree(root, ignore_errors=True)


def _run(args: list[str], columns: int, **kw: object) -> tuple[int, str]:
    r = run_in_pty(args, columns, **kw)  # type: ignore[arg-type]
    text = r.text
    assert not lines_past(text, columns, allowed=("kafka-transactions.sh",)), lines_past(text, columns)
    assert "…" not in text and "Traceback" not in text, text
    return r.status, text


def _whole(text: str, *values: str) -> None:
    flat = " ".join(text.split())
    for value in values:
        assert value in flat, (value, text)


COLUMNS = [80, 120]


@pytest.mark.parametrize("columns", COLUMNS)
def test_verify(data: Path, columns: int) -> None:
    status, text = _run(["verify", str(data)], columns)
    assert status == 1
    _whole(text, f"{TOPIC}-13/{offset_to_filename(BASE)}: byte 0:", "Checked 4 partitions")


@pytest.mark.parametrize("columns", COLUMNS)
def test_verify_index(data: Path, columns: int) -> None:
    status, text = _run(["verify-index", str(data / PARTITION)], columns)
    assert status == 0
    _whole(
        text, "Checked 1 segment in 1 partition (2 index files, 1 entry, 1795 log bytes): no problems found."
    )


@pytest.mark.parametrize("columns", COLUMNS)
def test_rebuild_index_dry_run(data: Path, columns: int) -> None:
    status, text = _run(["rebuild-index", "--dry-run", str(data / PARTITION)], columns)
    assert status == 0
    _whole(text, "0 index files would be rewritten, 0 created, 2 unchanged; nothing was written.")


@pytest.mark.parametrize("columns", COLUMNS)
@pytest.mark.parametrize(
    "how",
    [["--offset", str(BASE + 25)], ["--timestamp", "2023-11-14T22:13:21Z"]],
    ids=["offset", "timestamp"],
)
def test_find_offset_and_timestamp(data: Path, columns: int, how: list[str]) -> None:
    status, text = _run(["find", *how, str(data / PARTITION)], columns)
    assert status == 0
    _whole(text, str(BASE + 21), offset_to_filename(BASE))


@pytest.mark.parametrize("columns", COLUMNS)
@pytest.mark.parametrize("how", [["--group", GROUP], ["--transactional-id", TXN_ID]], ids=["group", "txn-id"])
def test_find_coordinators(data: Path, columns: int, how: list[str]) -> None:
    status, text = _run(["find", *how, str(data)], columns)
    assert status == 0
    _whole(text, how[1])


@pytest.mark.parametrize("columns", COLUMNS)
def test_salvage(data: Path, columns: int, tmp_path: Path) -> None:
    segment = data / f"{TOPIC}-13" / offset_to_filename(BASE)
    status, text = _run(["salvage", "--out", str(tmp_path / "out"), str(segment)], columns)
    assert status == 1
    _whole(text, str(BASE + 20))


@pytest.mark.parametrize("columns", COLUMNS)
@pytest.mark.parametrize(
    "args",
    [["--help"], ["help"], ["help", "files"], ["help", "find"], ["spark", "-h"], ["spark", "export", "-h"]],
    ids=" ".join,
)
def test_help(columns: int, args: list[str]) -> None:
    status, text = _run(args, columns)
    assert status == 0 and text.strip()


def _verbatim(page: Path) -> set[str]:
    """The lines of ``page``'s verbatim blocks (``.nf`` ... ``.fi``: examples of commands, of output in a pipe,
    of JSON), as man shows them."""
    lines: set[str] = set()
    inside = False
    for line in page.read_text(encoding="utf-8").splitlines():
        if line.startswith((".nf", ".EX")):
            inside = True
        elif line.startswith((".fi", ".EE")):
            inside = False
        elif inside and not line.startswith("."):
            for escape, char in (("\\-", "-"), ("\\e", "\\"), ("\\(dq", '"'), ("\\(aq", "'"), ("\\(em", "—")):
                line = line.replace(escape, char)
            lines.add(re.sub(r"\\f[BIRP]", "", line).strip())
    return lines


@pytest.mark.parametrize("columns", COLUMNS)
@pytest.mark.parametrize("page", sorted(p.stem for p in (REPO / "man").glob("*.1")))
def test_help_man_on_a_terminal(columns: int, page: str) -> None:
    """Every manual page through ``kdump help --man`` fits the terminal, but for its verbatim examples (a
    command line, a line of output in a pipe, a JSON object: man never breaks those, and neither may kdump)."""
    if shutil.which("man") is None:
        pytest.skip("man is not installed")
    command = page.removeprefix("kdump").removeprefix("-")
    args = ["help", "--man", *([command] if command else [])]
    # man's bold and underline are overstrikes (c BS c) when not paged through less: no column each
    r = run_in_pty(args, columns, env={"MANPAGER": "cat", "PAGER": "cat"})
    text = re.sub(".\x08", "", r.text)
    assert r.status == 0
    verbatim = _verbatim(REPO / "man" / f"{page}.1")
    wide = [line for line in lines_past(text, columns) if line.strip() not in verbatim]
    assert not wide, wide
    _whole(text, page)


@pytest.mark.parametrize("columns", COLUMNS)
@pytest.mark.parametrize(
    "options",
    [[], ["--deep-iteration", "--print-data-log"], ["--print-data-log", "--human-time"]],
    ids=" ".join,
)
def test_files_is_the_same_bytes_on_a_terminal(data: Path, columns: int, options: list[str]) -> None:
    """Kafka's text: exempt from the width rule, but the same bytes on a terminal as in a pipe."""
    files = ",".join(
        str(data / PARTITION / offset_to_filename(BASE, suffix))
        for suffix in (".log", ".index", ".timeindex")
    )
    args = ["files", "--files", files, *options]
    on_terminal = run_in_pty(args, columns)
    piped = subprocess.run(
        [sys.executable, "-m", "kdump", *args], capture_output=True, env=environment(), check=False
    )
    assert on_terminal.status == piped.returncode == 0
    assert on_terminal.output == piped.stdout + piped.stderr
    assert str(PRODUCER) in on_terminal.raw


def test_the_data_is_what_the_tests_say() -> None:
    assert T0 == 1_700_000_000_000  # 2023-11-14T22:13:20Z: the timestamp asked above is one second later


def test_fit_line_rules() -> None:
    from kdump.render.line_fit import fit_line

    problem = (
        "/tmp/k/broker1/payments-eu-west-1-13/00000000000002229960.log: byte 0: lost bytes 0-1160 (1161 bytes): "
        "CRC mismatch (stored 3015085135, computed 1334840880)"
    )
    assert fit_line(problem, 80) == [
        "/tmp/k/broker1/payments-eu-west-1-13/00000000000002229960.log: byte 0:",
        "    lost bytes 0-1160 (1161 bytes):",  # broken after a part's ":" rather than mid-sentence
        "    CRC mismatch (stored 3015085135, computed 1334840880)",
    ]
    assert fit_line(problem, 200) == [problem]  # fits: unchanged
    kafka = "baseOffset: 2229981 lastOffset: 2229989 count: 9 baseSequence: 20 lastSequence: 28 producerId: 1"
    assert [line.split()[-2:] for line in fit_line(kafka, 40)] == [
        ["lastOffset:", "2229989"], ["baseSequence:", "20"], ["producerId:", "1"]
    ]  # fmt: skip
    long_word = "x" * 90
    assert fit_line(f"  {long_word} tail", 80) == [f"  {long_word}", "      tail"]  # a path is never broken
    command = "  kafka-transactions.sh --bootstrap-server BROKER:9092 abort --topic t --partition 1 --start-offset 5"
    assert fit_line(command, 80) == [command]  # copied whole
    coloured = "\x1b[1m" + "a " * 39 + "\x1b[0m"  # 78 columns, 86 characters
    assert fit_line(coloured, 80) == [coloured]


def test_a_problem_is_one_line_in_a_pipe(data: Path) -> None:
    r = subprocess.run(
        [sys.executable, "-m", "kdump", "verify", str(data)],
        capture_output=True,
        env=environment(),
        check=False,
    )
    lines = r.stdout.decode().splitlines()
    assert f"{data}/{TOPIC}-13/{offset_to_filename(BASE)}: byte 0: crc: stored CRC" in "\n".join(
        line for line in lines if line.startswith(str(data))
    )
    assert not any(line.startswith(" ") for line in lines)


@pytest.mark.parametrize("columns", COLUMNS)
def test_usage_errors_and_skipped_paths(data: Path, columns: int) -> None:
    """What is written outside a command's run: click's usage errors and the line for a plain file among the
    directories (a glob catching ``replication-offset-checkpoint``)."""
    status, text = _run(["find", "--timestamp", "2026-11-26T25:00", str(data / PARTITION)], columns)
    assert status == 2
    _whole(text, "2026-11-26T25:00: not an ISO-8601 date and time", "2023-11-14T22:13:20.5Z")
    status, text = _run(["ls", str(data / PARTITION), str(data / "replication-offset-checkpoint")], columns)
    assert status == 0
    _whole(text, f"kdump: {data}/replication-offset-checkpoint: not a directory", "skipped")
    r = subprocess.run(
        [sys.executable, "-m", "kdump", "find", "--timestamp", "2026-11-26T25:00", str(data / PARTITION)],
        capture_output=True,
        env=environment(),
        check=False,
    )
    assert (
        r.returncode == 2 and b"Error: Invalid value for '--timestamp': 2026-11-26T25:00: not an" in r.stderr
    )
