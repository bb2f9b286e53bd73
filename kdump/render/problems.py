"""Text and JSON forms of the problems ``kdump verify-index`` finds (see man kdump-verify-index)."""

from __future__ import annotations

import json
from typing import Any

from kdump.render import plural
from kdump.storage.index_verification import IndexProblem

#: Version of the JSON objects below; bumped when a field changes meaning or disappears.
JSON_SCHEMA_VERSION = 1


def problem_line(problem: IndexProblem) -> str:
    """``<file>: entry <n> (byte <p>): <kind>: <message>``; the entry part, or ``byte <p>`` alone, when known."""
    where = [problem.path]
    if problem.entry is not None:
        where.append(
            f"entry {problem.entry}" + ("" if problem.position is None else f" (byte {problem.position})")
        )
    elif problem.position is not None:
        where.append(f"byte {problem.position}")
    return f"{': '.join(where)}: {problem.kind}: {problem.message}\n"


def problem_json(problem: IndexProblem) -> str:
    obj: dict[str, Any] = {
        "type": "problem",
        "kind": problem.kind,
        "file": problem.path,
        "entry": problem.entry,
        "position": problem.position,
        "offset": problem.offset,
        "message": problem.message,
    }
    return json.dumps(obj, ensure_ascii=False) + "\n"


def summary_line(summary: dict[str, int]) -> str:
    checked = (
        f"Checked {plural(summary['segments'], 'segment')} in {plural(summary['partitions'], 'partition')} "
        f"({plural(summary['indexFiles'], 'index file')}, {plural(summary['entries'], 'entry', 'entries')}, "
        f"{summary['logBytes']} log bytes): "
    )
    if summary["problems"] == 0:
        return checked + "no problems found.\n"
    return (
        checked
        + f"{plural(summary['problems'], 'problem')} in {plural(summary['filesWithProblems'], 'file')}.\n"
    )


def summary_json(summary: dict[str, int]) -> str:
    return json.dumps({"type": "summary", "version": JSON_SCHEMA_VERSION, **summary}) + "\n"
