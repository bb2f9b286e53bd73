"""The real tools: the Kafka 4.0 and 4.1 distributions at ``../shared/kafka-4.0.0`` and ``../shared/kafka-4.1.0``
run as ``kafka-dump-log.sh`` or, for speed, as a resident JVM running the same ``kafka.tools.DumpLogSegments``
many times (``KafkaDumpServer.java``), one JVM per release.

The resident JVM is started through the distribution's ``kafka-run-class.sh`` (the same JVM options as the
script); ``python -m tests.differential --check-server`` replays the corpus through it to show it prints what the
script printed, byte for byte.
"""

from __future__ import annotations

import os
import select
import shutil
import subprocess
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path

HERE = Path(__file__).resolve().parent
REPO = HERE.parents[1]
DISTRIBUTION = Path(os.environ.get("KDUMP_KAFKA_DIST", REPO.parent / "shared" / "kafka-4.0.0"))
LAUNCHER = DISTRIBUTION / "kafka"
#: The real releases by kdump's ``--kafka-version`` name (4.2 changed only a help text: no distribution of it here).
DISTRIBUTIONS: dict[str, Path] = {
    "4.0": DISTRIBUTION,
    "4.1": Path(os.environ.get("KDUMP_KAFKA41_DIST", REPO.parent / "shared" / "kafka-4.1.0")),
}


def launcher(version: str = "4.0") -> Path:
    """The launcher script of the real release ``version`` (``kafka SCRIPT ARGS...``)."""
    return DISTRIBUTIONS[version] / "kafka"


SERVER_SOURCE = HERE / "KafkaDumpServer.java"


@dataclass(frozen=True)
class Outcome:
    """What one run printed: exit status, stdout, stderr."""

    code: int
    out: bytes
    err: bytes

    def triple(self) -> tuple[int, bytes, bytes]:
        return self.code, self.out, self.err


def script_unavailable_reason(version: str = "4.0") -> str | None:
    """Why ``kafka-dump-log.sh`` of release ``version`` cannot run here (None when it can)."""
    if not launcher(version).is_file():
        return f"the Kafka {version} distribution is not at {DISTRIBUTIONS[version]}"
    if shutil.which("java") is None:
        return "java is not installed"
    return None


def unavailable_reason(version: str = "4.0") -> str | None:
    """Why the real tool, also as the resident runner, cannot run here (None when it can)."""
    if (reason := script_unavailable_reason(version)) is not None:
        return reason
    if shutil.which("javac") is None:
        return "javac is not installed (needed for the resident DumpLogSegments runner)"
    return None


def run_script(argv: list[str], cwd: Path, timeout: float = 120.0, version: str = "4.0") -> Outcome:
    """One run of the real ``kafka-dump-log.sh`` of release ``version`` (a fresh JVM)."""
    p = subprocess.run(
        [str(launcher(version)), "kafka-dump-log.sh", *argv], cwd=cwd, capture_output=True, timeout=timeout
    )
    return Outcome(p.returncode, p.stdout, p.stderr)


def _compiled() -> Path:
    cache = Path(tempfile.gettempdir()) / f"kdump-difftest-{os.getuid()}"
    stamp = f"{SERVER_SOURCE.stat().st_mtime_ns}-{SERVER_SOURCE.stat().st_size}"
    target = cache / stamp
    if not (target / "KafkaDumpServer.class").is_file():
        target.mkdir(parents=True, exist_ok=True)
        subprocess.run(
            ["javac", "-d", str(target), str(SERVER_SOURCE)], check=True, capture_output=True, timeout=120
        )
    return target


class KafkaTimeout(Exception):
    pass


class DumpServer:
    """A resident JVM of release ``version`` running ``DumpLogSegments.main`` once per request, in ``cwd``.

    It is restarted every ``recycle`` runs (the tool never closes the files and maps it opens), after a JVM
    error (``OutOfMemoryError``...) and after a time-out.
    """

    def __init__(self, cwd: Path, *, recycle: int = 400, timeout: float = 60.0, version: str = "4.0") -> None:
        self.cwd = cwd
        self.version = version
        self.recycle = recycle
        self.timeout = timeout
        self.classes = _compiled()
        self.proc: subprocess.Popen[bytes] | None = None
        self.runs = 0
        self.restarts = 0

    def _start(self) -> subprocess.Popen[bytes]:
        env = dict(os.environ, CLASSPATH=str(self.classes))
        self.proc = subprocess.Popen(
            [str(launcher(self.version)), "kafka-run-class.sh", "KafkaDumpServer"],
            cwd=self.cwd,
            env=env,
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.DEVNULL,
        )
        self.runs = 0
        self.restarts += 1
        return self.proc

    def close(self) -> None:
        if self.proc is not None:
            proc, self.proc = self.proc, None
            try:
                assert proc.stdin is not None
                proc.stdin.close()
                proc.wait(timeout=10)
            except (OSError, subprocess.TimeoutExpired):
                proc.kill()
                proc.wait()

    def __enter__(self) -> DumpServer:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def _read(self, proc: subprocess.Popen[bytes], n: int, deadline: float) -> bytes:
        assert proc.stdout is not None
        fd = proc.stdout.fileno()
        chunks = []
        while n > 0:
            left = deadline - time.monotonic()
            if left <= 0 or not select.select([fd], [], [], left)[0]:
                raise KafkaTimeout
            chunk = os.read(fd, min(n, 1 << 20))
            if not chunk:
                raise EOFError("the JVM ended")
            chunks.append(chunk)
            n -= len(chunk)
        return b"".join(chunks)

    def _read_line(self, proc: subprocess.Popen[bytes], deadline: float) -> bytes:
        line = b""
        while not line.endswith(b"\n"):
            line += self._read(proc, 1, deadline)
        return line

    def run(self, argv: list[str]) -> Outcome:
        if any("\t" in a or "\n" in a for a in argv):
            raise ValueError("arguments with tabs or newlines cannot be sent to the resident JVM")
        if self.proc is None or self.runs >= self.recycle or self.proc.poll() is not None:
            self.close()
            self._start()
        proc = self.proc
        assert proc is not None and proc.stdin is not None
        self.runs += 1
        deadline = time.monotonic() + self.timeout
        try:
            proc.stdin.write("\t".join(argv).encode() + b"\n")
            proc.stdin.flush()
            code, n_out, n_err = (int(x) for x in self._read_line(proc, deadline).split())
            out = self._read(proc, n_out, deadline)
            err = self._read(proc, n_err, deadline)
        except (KafkaTimeout, EOFError, OSError):
            proc.kill()
            proc.wait()
            self.proc = None
            raise
        if b"java.lang.OutOfMemoryError" in err or b"java.lang.StackOverflowError" in err:
            self.close()  # a JVM error may leave the JVM in a bad state: a fresh one for the next run
        return Outcome(code, out, err)
