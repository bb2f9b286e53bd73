"""``kdump tiered``'s text: the partition's one log as a table (remote segments by the metadata, then the local
ones), then one line per problem."""

from __future__ import annotations

from typing import Any

from kdump.analysis.tiered import TieredFacts
from kdump.render.json_lines import head, line
from kdump.render.problem_text import tiered_message
from kdump.render.table_fit import Column
from kdump.render.tables import Section, opt, printable


def sections(facts: list[TieredFacts], *, human: bool) -> list[Section]:
    out = []
    for f in facts:
        remote = [s for s in f.segments if s.tier == "remote"]
        local = [s for s in f.segments if s.tier == "local"]
        title = (
            f"{printable(f.topic or f.directory)}-{f.partition}: {len(remote)} remote segment(s), {len(local)} local "
            f"(topic id {opt(f.topic_id)}; remote {printable(opt(f.remote_dir))}"
            + (f"; partition {f.delete_state}" if f.delete_state else "")
            + ")"
        )
        columns = (
            Column("TIER", "TIER", right=False),
            Column("BASE-OFFSET", "BASE"),
            Column("END-OFFSET", "END"),
            Column("SIZE-BYTES", "BYTES"),
            Column("STATE", "STATE", right=False),
            Column("SEGMENT-ID", "ID", right=False, drop=1),
        )
        rows = [
            [
                s.tier,
                str(s.base_offset),
                opt(s.end_offset),
                opt(s.size),
                s.state + (" (also remote)" if s.also_remote else ""),
                opt(s.segment_id),
            ]
            for s in f.segments
        ]
        notes = [printable(f"{p.file}: {p.kind}: {tiered_message(p)}") for p in f.problems]
        notes.append(
            f"{len(f.problems)} problem(s)"
            if f.problems
            else "no problems found in the remote log's metadata and objects"
        )
        out.append(Section(title, columns, rows, notes))
    return out


def partition_object(f: TieredFacts) -> dict[str, Any]:
    """One tiered partition's facts: the one log's segments (remote ones by the metadata, then the local ones)
    and the problems found, each naming its object or file."""
    return {
        "directory": f.directory,
        "topic": f.topic,
        "partition": f.partition,
        "topicId": f.topic_id,
        "remoteDirectory": f.remote_dir,
        "deleteState": f.delete_state,
        "tierSegments": [
            {
                "tier": s.tier,
                "baseOffset": s.base_offset,
                "endOffset": s.end_offset,
                "sizeBytes": s.size,
                "state": s.state,
                "segmentId": s.segment_id,
                "file": s.log,
                "alsoRemote": s.also_remote,
            }
            for s in f.segments
        ],
        "problems": len(f.problems),
        "remoteProblems": [
            {"file": p.file, "kind": p.kind, "message": tiered_message(p)} for p in f.problems
        ],
    }


def json_lines(facts: list[TieredFacts]) -> str:
    return "".join(line(head("tieredPartition", **partition_object(f))) for f in facts)
