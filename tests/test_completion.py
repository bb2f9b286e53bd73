"""Shell completion of ``kdump files`` (issue 31): its options come from its own jopt-simple tables, not click's,
and its paths from the shell.  Checked through bash itself: the script ``_KDUMP_COMPLETE=bash_source`` prints is
sourced and its completion function run on the words typed, as bash does on TAB; the oracle is the option names
of Kafka's table (``kafka-dump-log.sh --help``) and the files on disk."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from kdump.cli.files import KDUMP_OPTIONS, OPTIONS

pytestmark = pytest.mark.skipif(shutil.which("bash") is None, reason="bash is not installed")


def complete(words: list[str], cwd: Path, tmp_path: Path) -> list[str]:
    """What bash puts in COMPREPLY for ``words`` (the last one being completed), with ``kdump`` on PATH."""
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir(exist_ok=True)
    launcher = bin_dir / "kdump"
    root = Path(__file__).resolve().parents[1]
    launcher.write_text(f'#!/bin/sh\nPYTHONPATH={root} exec {sys.executable} -m kdump "$@"\n')
    launcher.chmod(0o755)
    env = {**os.environ, "PATH": f"{bin_dir}:{os.environ['PATH']}"}
    script = subprocess.run(
        ["kdump"], env={**env, "_KDUMP_COMPLETE": "bash_source"}, capture_output=True, text=True, check=True
    ).stdout
    quoted = " ".join("'" + w.replace("'", "'\\''") + "'" for w in words)
    program = (
        # a 'file' answer hands over to bash's default (file name) completion with `compopt -o default`,
        # which works only while bash completes: recorded here, and the file names listed as bash would
        f"compopt() {{ DEFAULT=yes; }}\n{script}\nCOMP_WORDS=({quoted}); COMP_CWORD={len(words) - 1}\n"
        "_kdump_completion kdump\n"
        'if [ -n "$DEFAULT" ]; then compgen -f -- "${COMP_WORDS[COMP_CWORD]}"; '
        'else printf "%s\\n" "${COMPREPLY[@]}"; fi\n'
    )
    out = subprocess.run(["bash", "-c", program], env=env, cwd=cwd, capture_output=True, text=True)
    return out.stdout.split()


def test_options_of_kdump_files(tmp_path: Path) -> None:
    assert complete(["kdump", "files", "--pri"], tmp_path, tmp_path) == [
        "--print-data-log",
        "--print-header-values",
    ]
    everything = complete(["kdump", "files", "--"], tmp_path, tmp_path)
    assert {f"--{o.name}" for o in OPTIONS} <= set(everything)  # Kafka's own: --files, --deep-iteration, ...
    assert {f"--{o.name}" for o in KDUMP_OPTIONS} <= set(everything)


def test_paths_after_files(tmp_path: Path) -> None:
    part = tmp_path / "orders-0"
    part.mkdir()
    for name in ("00000000000000000000.log", "00000000000000000000.index", "00000000000000001585.snapshot"):
        (part / name).write_bytes(b"")
    assert sorted(complete(["kdump", "files", "--files", "orders-0/0000"], tmp_path, tmp_path)) == [
        "orders-0/00000000000000000000.index",
        "orders-0/00000000000000000000.log",
        "orders-0/00000000000000001585.snapshot",
    ]
    after_comma = complete(
        ["kdump", "files", "--files", "orders-0/00000000000000000000.log,orders-0/00000000000000001"],
        tmp_path,
        tmp_path,
    )
    assert after_comma == ["orders-0/00000000000000000000.log,orders-0/00000000000000001585.snapshot"]
    (tmp_path / "1000").write_bytes(b"")
    assert complete(["kdump", "files", "--max-bytes", "1"], tmp_path, tmp_path) == []  # a size, not a path


def test_the_other_commands_still_complete(tmp_path: Path) -> None:
    assert "--json" in complete(["kdump", "ls", "--j"], tmp_path, tmp_path)
    assert "files" in complete(["kdump", "fi"], tmp_path, tmp_path)
