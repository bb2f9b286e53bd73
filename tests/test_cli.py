"""The command line: jopt-simple compatible parsing, errors as one line, streaming into closed pipes."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from tests.corpus import FIXTURE_CORPUS
from tests.replay import run_kdump

PLAIN = "data/plain-0/00000000000000000000.log"
EXPECTED = FIXTURE_CORPUS / "expected"


@pytest.fixture(autouse=True)
def in_fixture_corpus(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(FIXTURE_CORPUS)


def expected(name: str) -> bytes:
    return (EXPECTED / name).read_bytes()


def test_equals_form_and_positional_paths() -> None:
    want = expected(PLAIN + ".print-data-log.txt")
    assert run_kdump(["--files=" + PLAIN, "--print-data-log"]) == (0, want, b"")
    assert run_kdump([PLAIN, "--print-data-log"]) == (0, want, b"")
    assert run_kdump(["--print-data-log", "--", PLAIN]) == (0, want, b"")


def test_positional_paths_ignored_with_files_option() -> None:
    """Kafka reads --files only: other non-option arguments are ignored when it is given (the real tool's
    behaviour, recorded in tests/fixtures/differential/non-options-ignored-with-files); kdump dumps them only
    where Kafka would stop with 'Missing required argument'."""
    a = "data/codec-gzip-0/00000000000000000000.log"
    code, out, _ = run_kdump(["--files", a, PLAIN])
    assert code == 0
    assert out == expected(a + ".default.txt")


def test_optional_decoder_argument_and_old_package_names() -> None:
    want = expected(PLAIN + ".print-data-log.txt")
    assert run_kdump(["--files", PLAIN, "--value-decoder-class", "--key-decoder-class"]) == (0, want, b"")
    old = [
        "--key-decoder-class",
        "kafka.serializer.StringDecoder",
        "--value-decoder-class=kafka.serializer.StringDecoder",
    ]
    assert run_kdump(["--files", PLAIN, *old]) == (0, want, b"")


def test_integer_decoder_reads_big_endian() -> None:
    # The first record of plain-0 has key "key-0": 6b 65 79 2d -> 0x6b65792d.
    code, out, _ = run_kdump(
        ["--files", PLAIN, "--key-decoder-class", "org.apache.kafka.tools.api.IntegerDecoder"]
    )
    first = [line for line in out.split(b"\n") if line.startswith(b"| offset: 0 ")][0]
    assert f"key: {0x6B65792D}".encode() in first
    assert code == 1  # a later record has a key shorter than 4 bytes, which Kafka's decoder cannot read


def test_unknown_decoder_class_fails_at_the_first_segment() -> None:
    code, out, err = run_kdump(["--files", PLAIN, "--value-decoder-class", "com.example.Nope"])
    assert (code, out) == (1, f"Dumping {PLAIN}\n".encode())
    assert err.startswith(b"kdump: ") and b"com.example.Nope" in err and err.count(b"\n") == 1


def test_unknown_option_and_missing_argument() -> None:
    for argv in (["--files", PLAIN, "--print-data"], ["--files"]):
        code, out, err = run_kdump(argv)
        assert (code, out) == (1, b"")
        assert err.startswith(b"kdump: ") and err.count(b"\n") == 1


def test_bad_integer_argument_fails_where_kafka_first_reads_it() -> None:
    """Kafka's options are lazy vals: --max-bytes is converted for the first .log, after its Dumping line
    (the real tool's output: tests/fixtures/differential/max-bytes-converted-per-log)."""
    code, out, err = run_kdump(["--max-bytes", "x", "--files", PLAIN])
    assert (code, out) == (1, f"Dumping {PLAIN}\n".encode())
    assert err == b"kdump: Cannot parse argument 'x' of option max-bytes\n"
    # never read for a file of another kind
    assert run_kdump(["--max-bytes", "x", "--files", "notes.txt"]) == (
        0,
        b"Dumping notes.txt\n",
        b"Ignoring unknown file notes.txt\n",
    )


def test_negative_max_bytes_is_an_error() -> None:
    code, out, err = run_kdump(["--files", PLAIN, "--max-bytes", "-1"])
    assert code == 1 and out.startswith(b"Dumping") and err.count(b"\n") == 1


def test_missing_files_prints_usage() -> None:
    code, out, err = run_kdump(["--print-data-log"])
    assert code == 1 and out == b""
    assert err.startswith(b'Missing required argument "[files]"\nOption ')
    assert err.endswith(expected("help.help.stderr.txt").split(b"\n", 1)[1])


def test_internal_decoder_flags_parse() -> None:
    for flag in (
        "--offsets-decoder",
        "--transaction-log-decoder",
        "--cluster-metadata-decoder",
        "--remote-log-metadata-decoder",
        "--share-group-state-decoder",
    ):
        code, out, err = run_kdump(["--files", "notes.txt", flag])
        assert (code, err) == (0, b"Ignoring unknown file notes.txt\n")


def test_dotless_file_name_is_one_error_line() -> None:
    code, out, err = run_kdump(["--files", "data/plain-0/some-checkpoint"])
    assert (code, out) == (1, b"Dumping data/plain-0/some-checkpoint\n")
    assert err.startswith(b"kdump: data/plain-0/some-checkpoint: ") and err.count(b"\n") == 1


def _kdump(*args: str, **kw) -> subprocess.CompletedProcess:  # noqa: ANN003
    return subprocess.run(
        [sys.executable, "-m", "kdump", *args], capture_output=True, cwd=FIXTURE_CORPUS, **kw
    )


def test_python_dash_m_and_versions() -> None:
    assert _kdump("files", "--version").stdout == expected("version.version.txt")
    top = _kdump("--version")
    assert top.returncode == 0 and top.stdout.startswith(b"kdump 0.1.0")


def test_closed_pipe_stops_quietly(tmp_path: Path) -> None:
    big = tmp_path / "00000000000000000000.log"
    big.write_bytes((FIXTURE_CORPUS / PLAIN).read_bytes() * 200)
    proc = subprocess.Popen(
        [sys.executable, "-m", "kdump", "files", "--files", str(big), "--print-data-log"],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        env={**os.environ, "PYTHONUNBUFFERED": "1"},
    )
    assert proc.stdout is not None and proc.stderr is not None
    first = proc.stdout.readline()
    proc.stdout.close()
    err = proc.stderr.read()
    assert proc.wait(timeout=60) == 0
    assert first.startswith(b"Dumping ")
    assert b"Traceback" not in err and b"BrokenPipe" not in err
