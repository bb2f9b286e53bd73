"""Replaying a MANIFEST run through kdump in-process and comparing with what the real tool printed."""

from __future__ import annotations

import io
import os
import re
from pathlib import Path

from kdump.cli import files, run_guarded
from tests.corpus import Run
from tests.state_file_oracle import expected_dump


def run_kdump(argv: list[str]) -> tuple[int, bytes, bytes]:
    out, err = io.BytesIO(), io.BytesIO()
    code = run_guarded(lambda o, e: files.run(argv, o, e), out, err)
    return code, out.getvalue(), err.getvalue()


JVM_DEATH = b"Exception in thread "


def kafka_died(code: int, err: bytes) -> bool:
    """True when the real tool ended with an uncaught JVM exception (its stderr ends in a stack trace)."""
    return code != 0 and (err.startswith(JVM_DEATH) or b"\n" + JVM_DEATH in err)


#: ``Object.toString`` of a Java byte[] (what DefaultDecoder's output prints): an identity hash that differs
#: from run to run of the same JVM, so never comparable.
IDENTITY_HASH = re.compile(rb"\[B@[0-9a-f]{1,8}")


def _last_dumped(out: bytes) -> bytes:
    at = out.rfind(b"Dumping ")
    if at < 0 or (at > 0 and out[at - 1 : at] != b"\n"):
        return b""
    return out[at + len(b"Dumping ") :].split(b"\n", 1)[0]


def differences(
    expected: tuple[int, bytes, bytes], actual: tuple[int, bytes, bytes], files: list[str]
) -> list[str]:
    """How kdump's (exit status, stdout, stderr) differs from the real tool's for one run, by the contract.

    stdout and the exit status must be identical, stderr too, except where the real tool died with a JVM
    exception: there kdump prints what Kafka printed on stderr before the stack trace, then exactly one line
    ``kdump: <file>: ...`` naming one of the files, instead of the trace (compared by exit status only).
    An empty list means no difference.
    """
    (code, out, err), (kcode, kout, kerr) = expected, actual
    problems = []
    if IDENTITY_HASH.sub(b"[B@", kout) != IDENTITY_HASH.sub(b"[B@", out):
        problems.append("stdout")
    if kcode != code:
        problems.append(f"exit status {kcode}, Kafka's was {code}")
    if kafka_died(code, err):
        head = err[: err.find(JVM_DEATH)]
        line = kerr[len(head) :]
        if not kerr.startswith(head) or line.count(b"\n") != 1 or not line.endswith(b"\n"):
            problems.append("stderr: expected Kafka's lines before the trace, then one kdump line")
        elif not line.startswith(b"kdump: "):
            problems.append("stderr: the error line does not start with 'kdump: '")
        elif not _names_file(err[len(head) :], line, _last_dumped(out)):
            problems.append("stderr: the error line does not name the file")
    elif kerr != err:
        problems.append("stderr")
    return problems


def _names_file(trace: bytes, line: bytes, dumped: bytes) -> bool:
    """Whether kdump's error line names the file Kafka died on (the last one it was dumping, or the segment's
    .log/.index it opened for it).  Errors in the command line itself (joptsimple's) name no file."""
    if not dumped or b" joptsimple." in trace.split(b"\n", 1)[0]:
        return True
    stem = dumped.rsplit(b".", 1)[0] if b"." in dumped.rsplit(b"/", 1)[-1] else dumped
    return stem in line


def assert_replays(root: Path, run: Run, version: str | None = None) -> None:
    """Run ``kdump files --kafka-version V`` with the run's arguments in ``root`` and compare with the stored
    output (V: ``version``, else the release of the run's tool).

    stdout and the exit status must be identical.  stderr too, except where the real tool died with a JVM
    exception: there kdump prints exactly one line, ``kdump: <file>: ...``, instead of the stack trace.
    """
    previous = os.getcwd()
    os.chdir(root)
    try:
        cwd = os.getcwd().encode()
        code, out, err = run_kdump(["--kafka-version", version or run.kafka_version, *run.argv])
    finally:
        os.chdir(previous)
    expected_out = run.expected_stdout(root).replace(b"${CORPUS_ROOT}", cwd)
    if run.category == "state-file":
        # A deliberate difference: Kafka crashes on (or ignores) these files, kdump parses them.  The first
        # line is still Kafka's; the rest must match an independent reading of the file.
        first = expected_out.split(b"\n", 1)[0] + b"\n"
        assert out == first + expected_dump(root / run.files[0], run.files[0]).encode(), (
            f"stdout differs for {run.argv}"
        )
        assert (code, err) == (0, b""), (code, err)
        return
    assert out == expected_out, f"stdout differs for {run.argv}"
    assert code == run.exit_code, f"exit status {code}, Kafka's was {run.exit_code}"
    expected_err = run.expected_stderr(root).replace(b"${CORPUS_ROOT}", cwd)
    problems = differences((run.exit_code, expected_out, expected_err), (code, out, err), run.files)
    assert not problems, f"{problems} for {run.argv}: {err!r}"
