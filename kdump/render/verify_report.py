"""The sinks of ``kdump verify``'s facts (:mod:`kdump.commands.verify`): Kafka-style text lines and JSON lines.

Text: one line per problem, in ``kdump verify-index``'s form (``<file>: entry <n> (byte <p>): <kind>:
<message>``), one ``<path>: not checked: <why>`` line per thing that could not be checked, a note per time
index written by the pre-3.8 rule, then one summary line.  JSON: one object per fact (``problem``,
``unchecked``, ``note``, ``summary``), each with a ``type``; see man kdump-verify.
"""

from __future__ import annotations

from typing import Any

from kdump.analysis.log_verification import Unchecked
from kdump.facts.verify import Summary
from kdump.facts.verify_index import RuleNote
from kdump.problem import Problem
from kdump.render import plural
from kdump.render import problems as index_report
from kdump.render.json_lines import head, line
from kdump.render.problem_text import unchecked_message
from kdump.render.safe_text import safe_text


class TextSink:
    def __init__(self, out: index_report.Writer) -> None:
        self.out = out

    def problem(self, problem: Problem) -> None:
        self.out.write(index_report.problem_line(problem))

    def unchecked(self, item: Unchecked) -> None:
        self.out.write(safe_text(f"{item.file}: not checked: {unchecked_message(item)}") + "\n")

    def note(self, note: RuleNote | Problem) -> None:
        if isinstance(note, Problem):
            self.out.write(index_report.note_line(note))
        else:
            self.out.write(index_report.rule_note_line(note.path, note.rule))

    def summary(self, s: Summary) -> None:
        parts = [
            f"{plural(s.segments, 'segment')} ({plural(s.batches, 'batch', 'batches')}"
            + (f", {plural(s.records, 'record')} decoded" if s.deep else "")
            + f", {s.log_bytes} log bytes)",
            f"{plural(s.index_files, 'index file')} ({plural(s.index_entries, 'entry', 'entries')})",
        ]
        for count, one, many in (
            (s.producer_snapshots, "producer snapshot", "producer snapshots"),
            (s.txn_index_entries, ".txnindex entry", ".txnindex entries"),
            (s.checkpoint_values, "checkpoint value", "checkpoint values"),
            (s.leader_epochs, "leader epoch", "leader epochs"),
            (s.kraft_snapshots, "KRaft snapshot", "KRaft snapshots"),
            (s.remote_segments, "remote segment", "remote segments"),
        ):
            if count:
                parts.append(plural(count, one, many))
        if s.remote and not s.tiered_partitions:
            parts.append("no tiered partition (nothing in remote storage)")
        text = f"Checked {plural(s.partitions, 'partition')}: {', '.join(parts)}"
        if s.unchecked:
            text += f"; {s.unchecked} not checked"
        if s.newer_records:
            text += f"; {plural(s.newer_records, 'record')} newer than kdump knows, not decoded"
        if s.active_segment_notes:
            text += f"; {plural(s.active_segment_notes, 'note')} on active segments' preallocated index files"
        if s.problems:
            kinds = ", ".join(f"{k}: {v}" for k, v in sorted(s.kinds.items()))
            text += (
                f": {plural(s.problems, 'problem')} in {plural(s.files_with_problems, 'file')} ({kinds}).\n"
            )
        else:
            text += ": no problems found.\n"
        self.out.write(text)


class JsonSink:
    def __init__(self, out: index_report.Writer) -> None:
        self.out = out

    def _write(self, obj: dict[str, Any]) -> None:
        self.out.write(line(obj))

    def problem(self, problem: Problem) -> None:
        self.out.write(index_report.problem_json(problem))

    def unchecked(self, item: Unchecked) -> None:
        self._write({"type": "unchecked", "file": item.file, "message": unchecked_message(item)})

    def note(self, note: RuleNote | Problem) -> None:
        if isinstance(note, Problem):
            self.out.write(index_report.note_json(note))
        else:
            self.out.write(index_report.rule_note_json(note.path, note.rule))

    def summary(self, s: Summary) -> None:
        self._write(summary_object(s))


def summary_object(s: Summary) -> dict[str, Any]:
    """verify's ``summary`` object (also inside ``kdump report``'s overview)."""
    return head(
        "summary",
        partitions=s.partitions,
        segments=s.segments,
        batches=s.batches,
        records=s.records if s.deep else None,
        logBytes=s.log_bytes,
        indexFiles=s.index_files,
        entries=s.index_entries,
        producerSnapshots=s.producer_snapshots,
        txnIndexEntries=s.txn_index_entries,
        checkpointValues=s.checkpoint_values,
        leaderEpochs=s.leader_epochs,
        kraftSnapshots=s.kraft_snapshots,
        **(
            {"tieredPartitions": s.tiered_partitions, "remoteSegments": s.remote_segments} if s.remote else {}
        ),
        preKafka38TimeIndexes=s.pre_38_time_indexes,
        activeSegmentNotes=s.active_segment_notes,
        newerRecords=s.newer_records,
        unchecked=s.unchecked,
        problems=s.problems,
        filesWithProblems=s.files_with_problems,
        kinds=dict(sorted(s.kinds.items())),
    )


class TeeSink:
    """Every fact to several sinks (``kdump spark verify -o``: text on the terminal, JSON lines to a file)."""

    def __init__(self, *sinks: TextSink | JsonSink) -> None:
        self.sinks = sinks

    def problem(self, problem: Problem) -> None:
        for s in self.sinks:
            s.problem(problem)

    def unchecked(self, item: Unchecked) -> None:
        for s in self.sinks:
            s.unchecked(item)

    def note(self, note: RuleNote | Problem) -> None:
        for s in self.sinks:
            s.note(note)

    def summary(self, summary: Summary) -> None:
        for s in self.sinks:
            s.summary(summary)
