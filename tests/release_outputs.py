"""Another release's outputs of the corpus runs, stored compactly beside the tests (``tests/fixtures/kafka-4.1.0``):
what that release's real tool printed for every run of the corpus MANIFEST, as differences from the corpus's
own outputs (``python -m tests.differential --record 4.1`` makes them).

``MANIFEST.tsv`` has one row per corpus MANIFEST row, in its order: the corpus row's line number, the release's
exit status, then its stdout and stderr, each one of

* ``=``: the same bytes as the corpus row's (Kafka 4.0's, or 3.9's for the 3.9 rows),
* ``-``: empty,
* ``NAME.delta.json``: the corpus row's output with some lines replaced (``{"ops": [[first, end, [lines]], ...]}``,
  lines ``[first, end)`` of the corpus output replaced by ``lines``, applied from the last to the first),
* ``NAME.txt``: the whole output (when the corpus row has none to start from).
"""

from __future__ import annotations

import difflib
import json
from pathlib import Path

HEADER = "corpus_line\texit_code\tstdout\tstderr\n"


def _lines(data: bytes) -> list[bytes]:
    return data.splitlines(keepends=True)


def delta(base: bytes, new: bytes) -> dict[str, list[list[object]]]:
    """The line replacements that turn ``base`` into ``new`` (text lines as str, decoded with surrogate escapes)."""
    a, b = _lines(base), _lines(new)
    ops: list[list[object]] = []
    for tag, i1, i2, j1, j2 in difflib.SequenceMatcher(None, a, b, autojunk=False).get_opcodes():
        if tag != "equal":
            ops.append([i1, i2, [line.decode("utf-8", "surrogateescape") for line in b[j1:j2]]])
    return {"ops": ops}


def apply_delta(base: bytes, spec: dict[str, list[list[object]]]) -> bytes:
    lines = _lines(base)
    for first, end, new in reversed(spec["ops"]):
        assert isinstance(first, int) and isinstance(end, int) and isinstance(new, list)
        lines[first:end] = [str(line).encode("utf-8", "surrogateescape") for line in new]
    return b"".join(lines)


def encode(directory: Path, stem: str, suffix: str, base: bytes | None, new: bytes) -> str:
    """Store ``new`` (an output of the run whose corpus output is ``base``) and return its manifest entry."""
    if base is not None and new == base:
        return "="
    if not new:
        return "-"
    if base:
        spec = delta(base, new)
        text = json.dumps(spec, ensure_ascii=False)
        if len(text) < len(new) // 2:
            name = f"{stem}.{suffix}.delta.json"
            path = directory / name
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_text(text + "\n", encoding="utf-8", errors="surrogateescape")
            assert apply_delta(base, spec) == new
            return name
    name = f"{stem}.{suffix}.txt"
    path = directory / name
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(new)
    return name


def decode(directory: Path, entry: str, base: bytes) -> bytes:
    """The output a manifest entry stands for (``base``: the corpus row's output)."""
    if entry == "=":
        return base
    if entry == "-":
        return b""
    path = directory / entry
    if entry.endswith(".delta.json"):
        return apply_delta(base, json.loads(path.read_text(encoding="utf-8", errors="surrogateescape")))
    return path.read_bytes()


def read_manifest(directory: Path) -> list[tuple[int, int, str, str]]:
    rows = []
    with open(directory / "MANIFEST.tsv", encoding="utf-8") as f:
        if f.readline() != HEADER:
            raise ValueError(f"{directory / 'MANIFEST.tsv'}: not a release outputs manifest")
        for line in f:
            number, code, out, err = line.rstrip("\n").split("\t")
            rows.append((int(number), int(code), out, err))
    return rows
