"""Text and JSON forms of what ``kdump salvage`` found and wrote (see man kdump-salvage)."""

from __future__ import annotations

from kdump.analysis.salvage import LostRange, OffsetGap, SalvageResult
from kdump.render import plural
from kdump.render.json_lines import head, line
from kdump.render.safe_text import safe_text


def lost_line(source: str, lost: LostRange) -> str:
    """``<file>: byte <start>: lost bytes <start>-<last> (<n> bytes): <reason>``"""
    return (
        f"{source}: byte {lost.start}: lost bytes {lost.start}-{lost.end - 1} ({plural(lost.length, 'byte')}): "
        f"{lost.reason}\n"
    )


def gap_line(source: str, gap: OffsetGap) -> str:
    """``<file>: byte <start>: missing offsets <first>-<last> (<n> offsets)``, or ``... from <first> on`` when
    the segment ends in lost bytes."""
    where = f"{source}: byte {gap.lost.start}: "
    if gap.last is None:
        return (
            where
            + f"missing offsets from {gap.first} on (the segment ends in lost bytes; how many is unknown)\n"
        )
    return where + f"missing offsets {gap.first}-{gap.last} ({plural(gap.last - gap.first + 1, 'offset')})\n"


def _offsets(result: SalvageResult) -> str:
    if not result.batches:
        return "no offsets"
    return f"offsets {result.batches[0].first_offset}-{result.batches[-1].last_offset}"


def summary_line(result: SalvageResult) -> str:
    kept = (
        f"kept {plural(len(result.batches), 'batch', 'batches')} "
        f"({result.kept_bytes} of {result.source_size} bytes, {_offsets(result)})"
    )
    if result.intact:
        state = f"{kept}; nothing lost"
    else:
        missing = result.missing_offsets
        offsets = "an unknown number of offsets" if missing is None else plural(missing, "offset")
        state = (
            f"{kept}; lost {plural(len(result.lost), 'range')} ({result.lost_bytes} bytes, {offsets} missing)"
        )
    text = f"Salvaged {result.source} to {result.output}: {state}."
    if result.offset_index is not None:
        text += (
            f" New indexes: {result.offset_index} ({plural(result.offset_index_entries, 'entry', 'entries')}), "
            f"{result.time_index} ({plural(result.time_index_entries, 'entry', 'entries')})."
        )
    return text + "\n"


def lost_json(source: str, lost: LostRange) -> str:
    obj = {
        "type": "lost",
        "file": source,
        "start": lost.start,
        "end": lost.end,
        "bytes": lost.length,
        "reason": lost.reason,
    }
    return line(obj)


def gap_json(source: str, gap: OffsetGap) -> str:
    obj = {
        "type": "gap",
        "file": source,
        "firstOffset": gap.first,
        "lastOffset": gap.last,
        "count": gap.count,
        "lostStart": gap.lost.start,
        "lostEnd": gap.lost.end,
    }
    return line(obj)


def summary_json(result: SalvageResult) -> str:
    obj = head(
        "salvageSummary",
        file=result.source,
        output=result.output,
        offsetIndex=result.offset_index,
        timeIndex=result.time_index,
        sourceBytes=result.source_size,
        keptBatches=len(result.batches),
        keptBytes=result.kept_bytes,
        firstOffset=result.batches[0].first_offset if result.batches else None,
        lastOffset=result.batches[-1].last_offset if result.batches else None,
        lostRanges=len(result.lost),
        lostBytes=result.lost_bytes,
        missingOffsets=result.missing_offsets,
        offsetIndexEntries=result.offset_index_entries,
        timeIndexEntries=result.time_index_entries,
    )
    return line(obj)


def report(result: SalvageResult, *, as_json: bool = False) -> str:
    """Every lost range, each followed by its offset gap, then the summary."""
    gaps = {id(g.lost): g for g in result.gaps}
    lost, gap, summary = (
        (lost_json, gap_json, summary_json) if as_json else (lost_line, gap_line, summary_line)
    )
    parts = []
    for r in result.lost:
        parts.append(lost(result.source, r))
        g = gaps.get(id(r))
        if g is not None:
            parts.append(gap(result.source, g))
    parts.append(summary(result))
    if not as_json:  # each part is one line of kdump's own: names in it escaped
        parts = [safe_text(p[:-1]) + "\n" for p in parts]
    return "".join(parts)
