"""Names from disk never reach a terminal raw (issue 27): a topic directory named with escape sequences, a BEL,
a carriage return or a newline is shown escaped (:func:`kdump.render.safe_text.safe_text`: ``\\x1b``, ``\\x07``,
``\\r``, ``\\n``) in kdump's own lines -- ``ls``'s table (in a pseudo-terminal and in a pipe), the problem and
note lines of ``verify``, ``txn``, ``retention``, ``find``, ``salvage`` and the one-line errors of every
command, ``kdump files``' included -- while the text that is Kafka's (``Dumping <path>``) stays byte-identical,
and JSON carries the exact name, escaped by JSON's rules.

Before: ``ls`` drawing its table set the terminal's title to PWNED and cleared the screen, a newline in a name
split a table row, and the same in ``verify``'s, ``txn``'s, ``retention``'s and ``files``' error lines.
"""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

import pytest

from kdump.render.safe_text import safe_text
from kdump.storage.naming import offset_to_filename
from tests.builder import SimpleRecord, build_v2_batch
from tests.hostile_batches import record, v2_batch
from tests.pty_run import run_in_pipe, run_in_pty

NAMES = ["ev\x1b]0;PWNED\x07\x1b[2J-0", "new\nline-0", "cr\rret-0", "bidi\u202eevil-0"]
#: what must never come out of kdump's own text: a byte of a name that a terminal acts on
FORBIDDEN = (b"\x1b", b"\x07", b"\r", "\u202e".encode())


def test_the_rule() -> None:
    assert safe_text("ev\x1b]0;PWNED\x07\x1b[2J-0") == "ev\\x1b]0;PWNED\\x07\\x1b[2J-0"
    assert safe_text("a\nb\rc\td\x00e\x7ff\x9b") == "a\\nb\\rc\\td\\x00e\\x7ff\\x9b"
    assert safe_text("bidi\u202e\u200b\u2028x") == "bidi\\u202e\\u200b\\u2028x"
    assert safe_text("\U000e0001") == "\\U000e0001"  # a format character beyond the BMP
    assert safe_text("\udc9bz") == "\\x9bz"  # a byte that is not UTF-8 (surrogateescape): the byte
    plain = "orders-0 é 日本 \\x1b back\\slash"
    assert safe_text(plain) is plain  # printable text (a backslash too) is itself
    for c in map(chr, range(0x110000)):
        escaped = safe_text(c)
        assert escaped == c or escaped == repr(c)[1:-1] or 0xDC80 <= ord(c) <= 0xDCFF


@pytest.fixture
def log_dir(tmp_path: Path) -> Path:
    """A log directory of partitions with hostile names, each segment ending in 19 bytes of a torn batch."""
    root = tmp_path / "logs"
    for name in NAMES:
        d = root / name
        d.mkdir(parents=True)
        (d / offset_to_filename(0)).write_bytes(
            build_v2_batch([SimpleRecord(b"v", key=b"k", timestamp=1)], base_offset=0)
            + b"\x00" * 8
            + b"\x00\x00\x00\x30garbage"
        )
    return root


def _kdump(*args: str, cwd: Path) -> subprocess.CompletedProcess[bytes]:
    return run_in_pipe(list(args), cwd=cwd)


def _in_pty(*args: str, cwd: Path, columns: int = 200) -> bytes:
    """``kdump <args>`` on a pseudo-terminal (stdout and stderr), colors off: every byte it writes."""
    return run_in_pty(list(args), columns, cwd=cwd, env={"NO_COLOR": "1"}).output


def _check(
    output: bytes, lines_per_name: int | None = None, forbidden_bytes: tuple[bytes, ...] = FORBIDDEN
) -> str:
    for forbidden in forbidden_bytes:
        assert forbidden not in output, (forbidden, output[:3000])
    text = output.decode()
    for name in NAMES if forbidden_bytes == FORBIDDEN else ():  # kdump's text: no raw name
        assert name.split("-")[0] not in text or safe_text(name) in text or name.isprintable()
    if lines_per_name is not None:  # no line split by a name's newline
        assert text.count("new\\nline") == lines_per_name
        assert not any(line.startswith("line-0") for line in text.splitlines())
    return text


@pytest.mark.parametrize("command", ["txn", "retention"])
def test_other_tables_on_a_terminal(log_dir: Path, command: str) -> None:
    text = _check(_in_pty(command, str(log_dir), cwd=log_dir.parent, columns=100))
    assert "ev\\x1b]0;PWNED\\x07\\x1b[2J" in text and "new\\nline-0" in text


def test_ls_table_on_a_terminal_and_in_a_pipe(log_dir: Path) -> None:
    text = _check(_in_pty("ls", str(log_dir), cwd=log_dir.parent))
    assert "ev\\x1b]0;PWNED\\x07\\x1b[2J" in text and "cr\\rret" in text and "new\\nline" in text
    piped = _kdump("ls", str(log_dir), cwd=log_dir.parent)
    text = _check(piped.stdout + piped.stderr)
    topics = ("ev\\x1b]0;PWNED\\x07\\x1b[2J", "cr\\rret", "bidi\\u202eevil", f"{log_dir}/new\\nline-0")
    rows = [line for line in text.splitlines() if line.split("  ")[0] in topics]
    assert (
        len(rows) == 4 and "ev\\x1b]0;PWNED\\x07\\x1b[2J  " in text
    )  # the escaped name, padded in its column


@pytest.mark.parametrize(
    "command",
    [
        ["verify"],
        ["txn"],
        ["retention"],
        ["ls", "--json"],
        ["verify", "--json"],
    ],
    ids=lambda c: " ".join(c),
)
def test_problem_and_note_lines(log_dir: Path, command: list[str]) -> None:
    r = _kdump(*command, str(log_dir), cwd=log_dir.parent)
    assert b"internal error" not in r.stderr
    # JSON escapes the C0 controls (RFC 8259); other characters, U+202E included, are JSON text as they are
    text = _check(r.stdout + r.stderr, forbidden_bytes=FORBIDDEN[:3] if "--json" in command else FORBIDDEN)
    if "--json" in command:  # the exact names, escaped by JSON's rules
        objs = [json.loads(line) for line in r.stdout.decode().splitlines()]
        named = json.dumps(objs, ensure_ascii=False)
        assert all(json.dumps(name, ensure_ascii=False)[1:-1] in named for name in NAMES)
    else:
        assert "ev\\x1b]0;PWNED\\x07\\x1b[2J" in text and "new\\nline-0" in text


def test_files_error_line_escaped_and_kafka_text_identical(log_dir: Path) -> None:
    """``Dumping <path>`` is Kafka's line: the name as it is (as kafka-dump-log.sh prints it); kdump's one-line
    error after it names the file escaped."""
    name = NAMES[0]
    segment = log_dir / name / offset_to_filename(0)
    segment.write_bytes(v2_batch(record(0, b"\x01\x01\x00"), 3))  # 3 records declared, 1 there
    r = _kdump("files", "--files", str(segment), "--deep-iteration", cwd=log_dir.parent)
    assert r.stdout.startswith(f"Dumping {segment}\n".encode())  # raw, byte-identical to Kafka's tool
    assert r.stderr.startswith(b"kdump: ") and r.stderr.count(b"\n") == 1
    for forbidden in FORBIDDEN:
        assert forbidden not in r.stderr
    assert f"kdump: {safe_text(str(segment))}: byte ".encode() in r.stderr


def test_find_lines_and_errors(log_dir: Path) -> None:
    r = _kdump("find", "--offset", "0", str(log_dir / NAMES[1]), cwd=log_dir.parent)
    text = _check(r.stdout + r.stderr, lines_per_name=2)  # the segment line and the note
    assert text.startswith(f"segment: {safe_text(str(log_dir / NAMES[1]))}/")
    missing = _kdump("find", "--offset", "0", str(log_dir / "gone\x1b[2J-0"), cwd=log_dir.parent)
    assert missing.returncode != 0 and b"gone\\x1b[2J-0" in missing.stderr and b"\x1b" not in missing.stderr
