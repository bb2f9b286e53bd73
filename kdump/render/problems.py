"""Text and JSON forms of the problems ``kdump verify-index`` finds (see man kdump-verify-index)."""

from __future__ import annotations

import json
from typing import Any

from kdump.render import plural
from kdump.storage.index_verification import IndexProblem

#: Version of the JSON objects below; bumped when a field changes meaning or disappears.
JSON_SCHEMA_VERSION = 1


def problem_line(problem: IndexProblem, label: str = "") -> str:
    """``<file>: entry <n> (byte <p>): <kind>: <message>``; the entry part, or ``byte <p>`` alone, when known.
    ``label`` (``"note: "``) goes before the kind."""
    where = [problem.path]
    if problem.entry is not None:
        where.append(
            f"entry {problem.entry}" + ("" if problem.position is None else f" (byte {problem.position})")
        )
    elif problem.position is not None:
        where.append(f"byte {problem.position}")
    return f"{': '.join(where)}: {label}{problem.kind}: {problem.message}\n"


def note_line(note: IndexProblem) -> str:
    """A finding that is not damage (the active segment's preallocated index files): ``... note: <kind>: ...``."""
    return problem_line(note, "note: ")


def problem_json(problem: IndexProblem, type_: str = "problem") -> str:
    obj: dict[str, Any] = {
        "type": type_,
        "kind": problem.kind,
        "file": problem.path,
        "entry": problem.entry,
        "position": problem.position,
        "offset": problem.offset,
        "message": problem.message,
    }
    return json.dumps(obj, ensure_ascii=False) + "\n"


def note_json(note: IndexProblem) -> str:
    return problem_json(note, "note")


#: What each time-index rule (``SegmentVerification.time_index_rule``) is called in the notes.
TIME_INDEX_RULES = {
    "pre-3.8": "entries name the first record holding a batch's max timestamp, as brokers before Kafka 3.8 "
    "wrote them (KAFKA-16310); accepted",
}


def rule_note_line(path: str, rule: str) -> str:
    """``<file>: note: time-index rule <rule>: <what it means>``: said of a time index that follows the
    pre-3.8 rule, so that nobody takes it for a damaged one."""
    return f"{path}: note: time-index rule {rule}: {TIME_INDEX_RULES[rule]}\n"


def rule_note_json(path: str, rule: str) -> str:
    obj = {
        "type": "note",
        "kind": "time-index-rule",
        "file": path,
        "rule": rule,
        "message": TIME_INDEX_RULES[rule],
    }
    return json.dumps(obj, ensure_ascii=False) + "\n"


def summary_line(summary: dict[str, int]) -> str:
    checked = (
        f"Checked {plural(summary['segments'], 'segment')} in {plural(summary['partitions'], 'partition')} "
        f"({plural(summary['indexFiles'], 'index file')}, {plural(summary['entries'], 'entry', 'entries')}, "
        f"{summary['logBytes']} log bytes): "
    )
    rules = ""
    if summary.get("preKafka38TimeIndexes"):
        rules = (
            f" Time indexes by the pre-3.8 rule: {summary['preKafka38TimeIndexes']}, naming batches' last "
            f"offsets: {summary.get('lastOffsetTimeIndexes', 0)}."
        )
    if summary.get("activeSegmentNotes"):
        rules += f" Notes on active segments' preallocated index files: {summary['activeSegmentNotes']}."
    if summary["problems"] == 0:
        return checked + "no problems found." + rules + "\n"
    return (
        checked
        + f"{plural(summary['problems'], 'problem')} in {plural(summary['filesWithProblems'], 'file')}."
        + rules
        + "\n"
    )


def summary_json(summary: dict[str, int]) -> str:
    return json.dumps({"type": "summary", "version": JSON_SCHEMA_VERSION, **summary}) + "\n"
