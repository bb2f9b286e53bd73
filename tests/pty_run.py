"""The one pseudo-terminal runner of the tests: ``kdump`` (this checkout's, whatever the working directory) with
standard output and error on a pseudo-terminal of a given width, as a person at a terminal runs it; and the
width rule every command's terminal output is held to (issue 31)."""

from __future__ import annotations

import errno
import fcntl
import os
import re
import struct
import subprocess
import sys
import termios
from dataclasses import dataclass
from pathlib import Path

#: The checkout's kdump, whatever the working directory (an installed kdump may be another checkout's).
REPO = Path(__file__).resolve().parents[1]
#: A colour or style sequence (what rich writes; the only escapes kdump's own text may hold).
ANSI = re.compile(r"\x1b\[[0-9;]*m")


@dataclass(frozen=True)
class PtyRun:
    status: int
    #: Every byte written, the terminal's CR LF for each LF made LF again.
    output: bytes

    @property
    def raw(self) -> str:
        """The output as text, colour sequences kept."""
        return self.output.decode()

    @property
    def text(self) -> str:
        """The output as text, without colour sequences."""
        return ANSI.sub("", self.raw)


def environment(**extra: str) -> dict[str, str]:
    """This process's environment without a width, a height or NO_COLOR of its own, running this checkout."""
    env = {k: v for k, v in os.environ.items() if k not in ("COLUMNS", "LINES", "NO_COLOR")}
    env["PYTHONPATH"] = os.pathsep.join([str(REPO), *filter(None, [os.environ.get("PYTHONPATH")])])
    env.update(extra)
    return env


def run_in_pty(
    args: list[str],
    columns: int = 80,
    *,
    env: dict[str, str] | None = None,
    cwd: Path | str | None = None,
    stdin: bytes | None = None,
    timeout: float = 120,
) -> PtyRun:
    """``kdump <args>`` with standard output and error on a pseudo-terminal of ``columns`` x 50 (``TERM=xterm``;
    ``env`` adds to the environment); standard input is the terminal too, unless ``stdin`` is given."""
    master, slave = os.openpty()
    fcntl.ioctl(slave, termios.TIOCSWINSZ, struct.pack("HHHH", 50, columns, 0, 0))
    process = subprocess.Popen(
        [sys.executable, "-m", "kdump", *args],
        stdin=slave if stdin is None else subprocess.PIPE,
        stdout=slave,
        stderr=slave,
        env=environment(TERM="xterm", **(env or {})),
        cwd=cwd,
    )
    os.close(slave)
    if stdin is not None:
        assert process.stdin is not None
        process.stdin.write(stdin)
        process.stdin.close()
    chunks = []
    while True:
        try:
            data = os.read(master, 65536)
        except OSError as e:
            if e.errno != errno.EIO:
                raise
            break
        if not data:
            break
        chunks.append(data)
    os.close(master)
    status = process.wait(timeout=timeout)
    return PtyRun(status, b"".join(chunks).replace(b"\r\n", b"\n"))


def run_in_pipe(
    args: list[str], *, env: dict[str, str] | None = None, cwd: Path | str | None = None, timeout: float = 120
) -> subprocess.CompletedProcess[bytes]:
    """``kdump <args>`` with standard output and error in pipes (no terminal)."""
    return subprocess.run(
        [sys.executable, "-m", "kdump", *args],
        capture_output=True,
        env=environment(**(env or {})),
        cwd=cwd,
        timeout=timeout,
        check=False,
    )


def lines_past(text: str, columns: int, *, allowed: tuple[str, ...] = ()) -> list[str]:
    """The lines of ``text`` wider than ``columns`` that the width rule does not allow: a line may be wider only
    when what makes it so is one unbreakable word (a path, alone or as a ``label: value`` line's value, after
    its indentation), or when it starts (after indentation) with one of ``allowed`` (a command line to copy)."""
    wide = []
    for line in text.splitlines():
        if len(line) <= columns:
            continue
        body = line.strip()
        if body.startswith(allowed):
            continue
        if " " not in body.split(": ", 1)[-1]:
            continue
        wide.append(line)
    return wide
