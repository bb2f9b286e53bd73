"""Run mypy (settings in pyproject.toml) and fail on any error that is not in .ci/mypy-baseline.txt.

The baseline holds the errors that predate the check, without line numbers (``path: error: message  [code]``),
so edits that move code do not disturb it.  Fix an error and remove its line; ``--update`` rewrites the file
from the current errors (only ever to shrink it).
"""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
BASELINE = ROOT / ".ci" / "mypy-baseline.txt"
LINE = re.compile(r"^(?P<path>[^:]+):\d+(?::\d+)?: error: (?P<rest>.*)$")


def current_errors() -> tuple[list[str], str]:
    result = subprocess.run(
        [
            sys.executable,
            "-m",
            "mypy",
            "--no-incremental",
            "--no-pretty",
            "--no-error-summary",
            "--hide-error-context",
        ],
        cwd=ROOT,
        capture_output=True,
        text=True,
    )
    errors = []
    for line in result.stdout.splitlines():
        m = LINE.match(line)
        if m:
            errors.append(f"{m['path']}: error: {m['rest']}")
    if result.returncode not in (0, 1) or (result.returncode == 1 and not errors):
        sys.exit(f"mypy failed to run:\n{result.stdout}{result.stderr}")
    return errors, result.stdout


def main() -> int:
    errors, output = current_errors()
    if sys.argv[1:] == ["--update"]:
        BASELINE.write_text("".join(f"{e}\n" for e in sorted(errors)))
        print(f"{BASELINE.name}: {len(errors)} errors")
        return 0
    known: dict[str, int] = {}
    for line in BASELINE.read_text().splitlines() if BASELINE.exists() else []:
        known[line] = known.get(line, 0) + 1
    new = []
    for e in errors:
        if known.get(e, 0) > 0:
            known[e] -= 1
        else:
            new.append(e)
    if new:
        print("mypy: errors not in .ci/mypy-baseline.txt:", *new, sep="\n  ")
        print("\nfull mypy output:\n" + output)
        return 1
    print(f"mypy: no new errors ({len(errors)} known ones left in .ci/mypy-baseline.txt)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
