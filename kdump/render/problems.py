"""The sinks of ``kdump verify-index``'s facts (:mod:`kdump.commands.verify_index`), text lines and JSON lines,
and the line and JSON forms of index problems that ``kdump verify`` shares (see man kdump-verify-index)."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Protocol

from kdump.problem import Problem
from kdump.render import plural
from kdump.render.json_lines import head, line
from kdump.render.problem_text import verify_message
from kdump.render.safe_text import safe_text

if TYPE_CHECKING:
    from kdump.facts.verify_index import IndexSummary, RuleNote


def problem_line(problem: Problem, label: str = "") -> str:
    """``<file>: entry <n> (byte <p>): <kind>: <message>``; the entry part, or ``byte <p>`` alone, when known.
    ``label`` (``"note: "``) goes before the kind."""
    where = [str(problem.file)]
    entry = problem.get("entry")
    if entry is not None:
        where.append(f"entry {entry}" + ("" if problem.position is None else f" (byte {problem.position})"))
    elif problem.position is not None:
        where.append(f"byte {problem.position}")
    return safe_text(f"{': '.join(where)}: {label}{problem.kind}: {verify_message(problem)}") + "\n"


def note_line(note: Problem) -> str:
    """A finding that is not damage (the active segment's preallocated index files): ``... note: <kind>: ...``."""
    return problem_line(note, "note: ")


def problem_object(problem: Problem, type_: str = "problem") -> dict[str, Any]:
    """A problem's JSON object: its kind and place (``entry`` and ``offset`` null when it has none) and its
    words."""
    return {
        "type": type_,
        "kind": problem.kind,
        "file": problem.file,
        "entry": problem.get("entry"),
        "position": problem.position,
        "offset": problem.get("offset"),
        "message": verify_message(problem),
    }


def problem_json(problem: Problem, type_: str = "problem") -> str:
    return line(problem_object(problem, type_))


def note_json(note: Problem) -> str:
    return problem_json(note, "note")


#: What each time-index rule (``SegmentVerification.time_index_rule``) is called in the notes.
TIME_INDEX_RULES = {
    "pre-3.8": "entries name the first record holding a batch's max timestamp, as brokers before Kafka 3.8 "
    "wrote them (KAFKA-16310); accepted",
}


def rule_note_line(path: str, rule: str) -> str:
    """``<file>: note: time-index rule <rule>: <what it means>``: said of a time index that follows the
    pre-3.8 rule, so that nobody takes it for a damaged one."""
    return safe_text(f"{path}: note: time-index rule {rule}: {TIME_INDEX_RULES[rule]}") + "\n"


def rule_note_json(path: str, rule: str) -> str:
    obj = {
        "type": "note",
        "kind": "time-index-rule",
        "file": path,
        "rule": rule,
        "message": TIME_INDEX_RULES[rule],
    }
    return line(obj)


def summary_line(summary: IndexSummary) -> str:
    checked = (
        f"Checked {plural(summary.segments, 'segment')} in {plural(summary.partitions, 'partition')} "
        f"({plural(summary.index_files, 'index file')}, {plural(summary.entries, 'entry', 'entries')}, "
        f"{summary.log_bytes} log bytes): "
    )
    rules = ""
    if summary.pre_38_time_indexes:
        rules = (
            f" Time indexes by the pre-3.8 rule: {summary.pre_38_time_indexes}, naming batches' last "
            f"offsets: {summary.last_offset_time_indexes}."
        )
    if summary.active_segment_notes:
        rules += f" Notes on active segments' preallocated index files: {summary.active_segment_notes}."
    if summary.problems == 0:
        return checked + "no problems found." + rules + "\n"
    return (
        checked
        + f"{plural(summary.problems, 'problem')} in {plural(summary.files_with_problems, 'file')}."
        + rules
        + "\n"
    )


def summary_json(summary: IndexSummary) -> str:
    obj = head(
        "summary",
        partitions=summary.partitions,
        segments=summary.segments,
        indexFiles=summary.index_files,
        entries=summary.entries,
        logBytes=summary.log_bytes,
        problems=summary.problems,
        filesWithProblems=summary.files_with_problems,
        lastOffsetTimeIndexes=summary.last_offset_time_indexes,
        preKafka38TimeIndexes=summary.pre_38_time_indexes,
        activeSegmentNotes=summary.active_segment_notes,
    )
    return line(obj)


class Writer(Protocol):
    """Where a sink writes text: :class:`kdump.facts.output.Output`, or any text stream."""

    def write(self, text: str, /) -> object: ...


class TextSink:
    """``kdump verify-index``'s lines: one per problem and note, then the summary line."""

    def __init__(self, out: Writer) -> None:
        self.out = out

    def problem(self, problem: Problem) -> None:
        self.out.write(problem_line(problem))

    def note(self, note: RuleNote | Problem) -> None:
        if isinstance(note, Problem):
            self.out.write(note_line(note))
        else:
            self.out.write(rule_note_line(note.path, note.rule))

    def summary(self, summary: IndexSummary) -> None:
        self.out.write(summary_line(summary))


class JsonSink:
    """``kdump verify-index --json``: one object per problem and note, then the ``summary`` object."""

    def __init__(self, out: Writer) -> None:
        self.out = out

    def problem(self, problem: Problem) -> None:
        self.out.write(problem_json(problem))

    def note(self, note: RuleNote | Problem) -> None:
        if isinstance(note, Problem):
            self.out.write(note_json(note))
        else:
            self.out.write(rule_note_json(note.path, note.rule))

    def summary(self, summary: IndexSummary) -> None:
        self.out.write(summary_json(summary))
