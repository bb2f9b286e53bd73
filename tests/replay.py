"""Replaying a MANIFEST run through kdump in-process and comparing with what the real tool printed."""

from __future__ import annotations

import io
import os
from pathlib import Path

from kdump.cli import files, run_guarded
from tests.corpus import Run
from tests.state_file_oracle import expected_dump


def run_kdump(argv: list[str]) -> tuple[int, bytes, bytes]:
    out, err = io.BytesIO(), io.BytesIO()
    code = run_guarded(lambda o, e: files.run(argv, o, e), out, err)
    return code, out.getvalue(), err.getvalue()


def assert_replays(root: Path, run: Run) -> None:
    """Run ``kdump files`` with the run's arguments in ``root`` and compare with the stored output.

    stdout and the exit status must be identical.  stderr too, except where the real tool died with a JVM
    exception: there kdump prints exactly one line, ``kdump: <file>: ...``, instead of the stack trace.
    """
    previous = os.getcwd()
    os.chdir(root)
    try:
        cwd = os.getcwd().encode()
        code, out, err = run_kdump(list(run.argv))
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
    if run.kafka_died:
        assert err.count(b"\n") == 1 and err.endswith(b"\n"), f"expected one error line, got {err!r}"
        assert err.startswith(b"kdump: "), err
        if run.files:
            assert any(f.encode() in err for f in run.files), (
                f"the error line does not name the file: {err!r}"
            )
    else:
        assert err == run.expected_stderr(root).replace(b"${CORPUS_ROOT}", cwd)
