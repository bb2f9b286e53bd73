"""The sinks of ``kdump rebuild-index``'s facts (:mod:`kdump.commands.rebuild_index`): its text and its JSON.

Text, on standard output: the index interval used, one line per index file rewritten or created (in a dry run,
what would be, with the differences entry by entry), sound files left alone, orphaned index files, then the
summary; each problem is a ``kdump: <message>`` line on standard error.  JSON (``--json``): one object per fact,
in the same order, problems included, on standard output.  See man kdump-rebuild-index.
"""

from __future__ import annotations

import mmap
import os
from itertools import islice
from typing import Any

from kdump.facts.output import Output
from kdump.facts.rebuild_index import (
    INDEX_INTERVAL_CONFIG,
    INVALID_TAIL,
    LEFT_SOUND,
    LOCKED_LOG_DIR,
    NO_SUCH_SEGMENT,
    UNCHANGED,
    UNINDEXABLE_LOG,
    UNREADABLE_DIRECTORY,
    UNREADABLE_INDEX,
    UNREADABLE_LOG,
    WRITE_ERROR,
    IndexFileOutcome,
    Interval,
    Orphans,
    RebuildProblem,
    RebuildSummary,
)
from kdump.render import plural
from kdump.render.json_lines import head, line
from kdump.render.safe_text import safe_text
from kdump.storage import naming
from kdump.storage.offset_index import OffsetIndex, OffsetPosition
from kdump.storage.time_index import TimeIndex, TimestampOffset


class TextSink:
    def __init__(self, out: Output, err: Output) -> None:
        self.out = out
        self.err = err

    def interval(self, interval: Interval) -> None:
        where = "" if interval.first else f"{interval.directory}: "
        self.out.write(f"{where}{INDEX_INTERVAL_CONFIG} {interval.interval} ({interval.source})\n")

    def orphans(self, orphans: Orphans) -> None:
        segment = orphans.segment
        names = ", ".join(os.path.basename(p) for p in segment.files.values())
        self.out.write(
            f"{segment.directory}: {names}: no {naming.offset_to_filename(segment.base_offset)} beside it; left "
            "alone (a broker deletes such files on start-up)\n"
        )

    def index_file(self, outcome: IndexFileOutcome) -> None:
        path = outcome.path
        if outcome.action == UNCHANGED:
            self.out.write(f"{path}: unchanged ({_entries(outcome.entries)})\n")
            return
        old = outcome.old
        size = outcome.kind.ENTRY_SIZE
        if old is None:
            what = f"{_entries(outcome.entries)}; the file was missing"
        else:
            what = f"{_entries(outcome.entries)}, was {len(old)} bytes = {_entries(len(old) // size)}" + (
                f" + {len(old) % size} bytes" if len(old) % size else ""
            )
        if outcome.action == LEFT_SOUND:
            verb = "would leave" if outcome.dry_run else "left"
            self.out.write(
                f"{path}: sound, differs from a rebuild ({what}); {verb} it alone (--force rewrites it)\n"
            )
            if outcome.dry_run:
                self.out.write("".join(_diff(outcome)))
            return
        if outcome.sound:
            what += "; sound: the differences are history a rebuild cannot know"
        if outcome.dry_run:
            verb = "would create" if old is None else "would rewrite"
            self.out.write(f"{path}: {verb} ({what})\n")
            self.out.write("".join(_diff(outcome)))
        else:
            kept = "" if outcome.backup is None else f"; the old file is kept as {outcome.backup}"
            self.out.write(f"{path}: {outcome.action} ({what}){kept}\n")

    def problem(self, problem: RebuildProblem) -> None:
        self.out.flush()
        self.err.write(f"kdump: {safe_text(problem_text(problem))}\n")
        self.err.flush()

    def summary(self, c: RebuildSummary) -> None:
        self.out.write(summary_text(c))


class JsonSink:
    """``kdump rebuild-index --json``: ``indexInterval``, ``orphanedIndex``, ``indexFile`` and ``rebuildProblem``
    objects as the facts come, then the ``rebuildSummary``."""

    def __init__(self, out: Output) -> None:
        self.out = out

    def interval(self, interval: Interval) -> None:
        self.out.write(
            line(
                {
                    "type": "indexInterval",
                    **_partition(interval.directory),
                    "interval": interval.interval,
                    "source": interval.source,
                }
            )
        )

    def orphans(self, orphans: Orphans) -> None:
        segment = orphans.segment
        self.out.write(
            line(
                {
                    "type": "orphanedIndex",
                    **_partition(segment.directory),
                    "baseOffset": segment.base_offset,
                    "files": sorted(segment.files.values()),
                }
            )
        )

    def index_file(self, outcome: IndexFileOutcome) -> None:
        self.out.write(
            line(
                {
                    "type": "indexFile",
                    "file": outcome.path,
                    "indexType": "offset" if outcome.kind is OffsetIndex else "time",
                    "baseOffset": outcome.base_offset,
                    "action": outcome.action,
                    "dryRun": outcome.dry_run,
                    "entries": outcome.entries,
                    "oldBytes": None if outcome.old is None else len(outcome.old),
                    "sound": outcome.sound,
                    "backup": outcome.backup,
                }
            )
        )

    def problem(self, problem: RebuildProblem) -> None:
        obj: dict[str, Any] = {"type": "rebuildProblem", "kind": problem.kind, "file": problem.path}
        if problem.position is not None:
            obj["position"] = problem.position
        if problem.offset is not None:
            obj["baseOffset"] = problem.offset
        if problem.reason is not None:
            obj["reason"] = problem.reason
        if problem.invalid_bytes is not None:
            obj["truncatedBytes"] = problem.invalid_bytes
        if problem.directory is not None:
            obj.update(_partition(problem.directory))
        if problem.holder is not None:
            obj["holder"] = problem.holder
        obj["message"] = problem_text(problem)
        self.out.write(line(obj))

    def summary(self, c: RebuildSummary) -> None:
        self.out.write(
            line(
                head(
                    "rebuildSummary",
                    dryRun=c.dry_run,
                    partitions=c.partitions,
                    segments=c.segments,
                    logBytes=c.log_bytes,
                    rewritten=c.rewritten,
                    created=c.created,
                    unchanged=c.unchanged,
                    soundLeftAlone=c.sound,
                    problems=c.problems,
                )
            )
        )


def _partition(directory: str) -> dict[str, Any]:
    """``directory``, ``topic`` and ``partition`` of a partition directory (the vocabulary of every command)."""
    parsed = naming.parse_partition_dir(os.path.basename(os.path.normpath(directory)))
    return {
        "directory": directory,
        "topic": None if parsed is None else parsed.topic,
        "partition": None if parsed is None else parsed.partition,
    }


def problem_text(p: RebuildProblem) -> str:
    """The sentence of a problem (without the ``kdump: `` of its line): where, then what."""
    where = [p.path] if p.path is not None else []
    if p.position is not None:
        where.append(f"byte {p.position}")
    prefix = "".join(f"{w}: " for w in where)
    kind = p.kind
    if kind == UNREADABLE_DIRECTORY:
        what = f"cannot read the directory: {p.reason}"
    elif kind == NO_SUCH_SEGMENT:
        what = "no such segment"
    elif kind in (UNINDEXABLE_LOG, UNREADABLE_LOG):
        what = f"{p.reason}; indexes left as they are"
    elif kind == INVALID_TAIL:
        what = (
            f"{p.reason}; the indexes cover the {p.position} valid bytes before it and the .log is left "
            f"unchanged (a broker would truncate its last {p.invalid_bytes} bytes)"
        )
    elif kind == LOCKED_LOG_DIR:
        who = f"process {p.holder}" if p.holder else "another process"
        what = f"held by {who} (a running broker?): nothing written in {p.directory}; stop the broker, or pass --force"
    elif kind == UNREADABLE_INDEX:
        what = f"cannot read it: {p.reason}"
    elif kind == WRITE_ERROR:
        what = f"cannot write it: {p.reason}; the old file is unchanged"
    else:
        what = p.reason or kind
    return prefix + what


def summary_text(c: RebuildSummary) -> str:
    where = f"{plural(c.segments, 'segment')} in {plural(c.partitions, 'partition')}"
    if c.dry_run:
        head = f"Dry run over {where}: "
        body = (
            f"{c.rewritten} index files would be rewritten, {c.created} created, {c.unchanged} unchanged"
            f"{f', {c.sound} sound left alone' if c.sound else ''}; nothing was written"
        )
    else:
        head = f"Rebuilt the indexes of {where}: "
        body = f"{c.rewritten} index files rewritten, {c.created} created, {c.unchanged} unchanged" + (
            f", {c.sound} sound left alone" if c.sound else ""
        )
    tail = "" if not c.problems else f"; {plural(c.problems, 'problem')}"
    sound = ""
    if c.sound:
        sound = (
            f"\n{plural(c.sound, 'sound index file')} (verify-index finds nothing wrong) "
            f"{'differs' if c.sound == 1 else 'differ'} from a rebuild and "
            f"{'would be ' if c.dry_run else 'was '}left alone: a broker indexes batches as "
            "they are appended, with history a rebuild cannot know (the index.interval.bytes of that time, "
            "appends of several batches at once, a restart); --force rewrites sound files too"
        )
    return f"{head}{body}{tail}.{sound}\n"


def _entries(n: int) -> str:
    return f"{n} entry" if n == 1 else f"{n} entries"


def _diff(outcome: IndexFileOutcome) -> list[str]:
    return diff_lines(outcome.old or b"", outcome.new, outcome.kind, outcome.base_offset, outcome.path)


def _describe(entry: OffsetPosition | TimestampOffset) -> str:
    if isinstance(entry, OffsetPosition):
        return f"offset {entry.offset} position {entry.position}"
    return f"timestamp {entry.timestamp} offset {entry.offset}"


def diff_lines(
    old: bytes | mmap.mmap,
    new: bytes,
    kind: type[OffsetIndex] | type[TimeIndex],
    base_offset: int,
    path: str | None = None,
) -> list[str]:
    """Entry-by-entry differences between two index files (read with their index class): ``entry i: old ->
    new``, ``+`` for an entry only the new file has, ``-`` for one only the old file has; a zero-filled tail and a
    partial last entry are summarised on one line each.  The old file's zero tail is found from its end, so
    only its written entries are listed."""
    size = kind.ENTRY_SIZE
    old_index = kind.wrap(old, base_offset, path)
    new_slots = list(kind.from_bytes(new, base_offset))
    count = old_index.entry_count
    zero_from = min(count, max(1, old_index.zero_tail_start()))
    old_slots = list(islice(old_index, zero_from))
    lines = []
    for i in range(max(zero_from, len(new_slots))):
        a = old_slots[i] if i < zero_from else None
        b = new_slots[i] if i < len(new_slots) else None
        if a == b:
            continue
        if a is None and b is not None:
            lines.append(f"  entry {i}: + {_describe(b)}\n")
        elif b is None and a is not None:
            lines.append(f"  entry {i}: - {_describe(a)}\n")
        elif a is not None and b is not None:
            lines.append(f"  entry {i}: {_describe(a)} -> {_describe(b)}\n")
    if zero_from < count:
        n = count - zero_from
        lines.append(
            f"  entries {zero_from}..{count - 1}: - {n} zero-filled slot{'s' if n != 1 else ''} "
            "(a preallocated index never trimmed)\n"
        )
    if len(old) % size:
        start = len(old) - len(old) % size
        lines.append(
            f"  bytes {start}..{len(old) - 1}: - {len(old) % size} bytes that are not a whole entry\n"
        )
    return lines
