"""Reproducers kept as fixtures (``tests/fixtures/differential/<name>/``): the case's files below ``case/``,
``case.json`` (arguments, seed and number, what diverged) and the real tool's recorded ``kafka.stdout``,
``kafka.stderr`` and exit status.  ``tests/test_differential.py`` replays every one through kdump (no Java)."""

from __future__ import annotations

import json
import shutil
from dataclasses import dataclass
from pathlib import Path

from .cases import CASE_DIR, REPO

FIXTURES = REPO / "tests" / "fixtures" / "differential"


@dataclass(frozen=True)
class Reproducer:
    name: str
    directory: Path
    argv: list[str]
    exit_code: int
    note: str
    #: a divergence still open, named by its issue (the replay is then expected to fail)
    open_issue: str | None

    def expected(self) -> tuple[int, bytes, bytes]:
        root = str(self.directory.resolve()).encode()
        return (
            self.exit_code,
            (self.directory / "kafka.stdout").read_bytes().replace(b"${CORPUS_ROOT}", root),
            (self.directory / "kafka.stderr").read_bytes().replace(b"${CORPUS_ROOT}", root),
        )


def load(directory: Path = FIXTURES) -> list[Reproducer]:
    out: list[Reproducer] = []
    if not directory.is_dir():
        return out
    for d in sorted(p for p in directory.iterdir() if (p / "case.json").is_file()):
        meta = json.loads((d / "case.json").read_text())
        out.append(
            Reproducer(
                d.name, d, meta["argv"], meta["kafka_exit"], meta.get("note", ""), meta.get("open_issue")
            )
        )
    return out


def keep(saved: Path, name: str, note: str, open_issue: str | None = None) -> Path:
    """Copy a case saved by ``--save`` into the fixtures (the real tool's outputs only)."""
    target = FIXTURES / name
    if target.exists():
        shutil.rmtree(target)
    target.mkdir(parents=True)
    shutil.copytree(saved / CASE_DIR, target / CASE_DIR)
    meta = json.loads((saved / "case.json").read_text())
    keep_meta = {k: meta[k] for k in ("seed", "number", "kind", "label", "argv", "kafka_exit")}
    keep_meta["note"] = note
    if open_issue:
        keep_meta["open_issue"] = open_issue
    (target / "case.json").write_text(json.dumps(keep_meta, indent=1, ensure_ascii=False) + "\n")
    for f in ("kafka.stdout", "kafka.stderr"):
        shutil.copy(saved / f, target / f)
    return target
