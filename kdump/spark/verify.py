"""``kdump spark verify``: every check of one segment, as one Spark task (pure Python, no PySpark).

For a segment: the index checks of :func:`kdump.storage.index_verification.verify_segment`, then one pass
over the batches for the CRC of every batch, known magic values and offset order (each batch's base offset
above the previous batch's last offset, and not below the segment's base offset); with ``deep`` every record
is also decoded.  Across the segments of a partition the driver checks that segments do not overlap.
Gaps between batches are normal in compacted topics and are reported only when asked for.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass, field
from typing import Any

from kdump.errors import KdumpError
from kdump.storage import naming
from kdump.storage.index_verification import verify_segment
from kdump.storage.log_segment import LogSegment

#: Problem kinds this module adds to those of :data:`kdump.storage.index_verification.PROBLEM_KINDS`.
KINDS = {
    "crc": "a batch whose CRC does not match its bytes",
    "magic": "a batch with an unknown magic value",
    "offset-order": "a batch whose base offset is not above the previous batch's last offset, or below the "
    "segment's base offset",
    "offset-overlap": "a segment whose first offset is not above the previous segment's last offset",
    "offset-gap": "offsets missing between consecutive batches or segments (only with --gaps)",
    "decode": "a batch whose records cannot be decoded (only with --deep)",
}


@dataclass
class SegmentResult:
    """What one task found: the segment, its offsets and its problems (dicts, see :func:`problem`)."""

    topic: str
    partition: int
    directory: str
    base_offset: int
    log_bytes: int = 0
    batches: int = 0
    records: int = 0
    first_offset: int | None = None
    last_offset: int | None = None
    problems: list[dict[str, Any]] = field(default_factory=list)


def problem(
    path: str,
    kind: str,
    message: str,
    *,
    position: int | None = None,
    offset: int | None = None,
    entry: int | None = None,
    topic: str | None = None,
    partition: int | None = None,
) -> dict[str, Any]:
    return {
        "topic": topic,
        "partition": partition,
        "path": path,
        "kind": kind,
        "position": position,
        "offset": offset,
        "entry": entry,
        "message": message,
    }


def verify_one(task: tuple[str, int, LogSegment, bool, bool]) -> dict[str, Any]:
    """Verify one segment; ``task`` is (topic, partition, segment, deep, gaps).  Returns a
    :class:`SegmentResult` as a dict (what the Spark job collects)."""
    topic, partition, segment, deep, gaps = task
    result = SegmentResult(topic, partition, segment.directory, segment.base_offset)
    out = result.problems
    checked = verify_segment(segment)
    result.log_bytes = checked.log_bytes
    for p in checked.problems:
        out.append(
            problem(
                p.path,
                p.kind,
                p.message,
                position=p.position,
                offset=p.offset,
                entry=p.entry,
                topic=topic,
                partition=partition,
            )
        )
    if segment.has(naming.LOG_FILE_SUFFIX):
        _check_batches(segment, result, deep, gaps)
    return asdict(result)


def _check_batches(segment: LogSegment, result: SegmentResult, deep: bool, gaps: bool) -> None:
    path = segment.log_path
    out = result.problems
    topic, partition = result.topic, result.partition
    previous_last: int | None = None
    try:
        records = segment.open_log()
    except KdumpError:
        return  # verify_segment reported it
    with records:
        try:
            for batch in records.batches():
                result.batches += 1
                where = {"position": batch.position, "offset": batch.base_offset, "topic": topic}
                where["partition"] = partition
                if batch.magic > 2:
                    out.append(problem(path, "magic", f"unknown magic {batch.magic}", **where))
                    continue
                if not batch.is_valid():
                    out.append(
                        problem(
                            path,
                            "crc",
                            f"CRC mismatch: stored {batch.checksum}, computed {batch.compute_checksum()}",
                            **where,
                        )
                    )
                if batch.base_offset < segment.base_offset:
                    out.append(
                        problem(
                            path,
                            "offset-order",
                            f"base offset {batch.base_offset} is below the segment's base offset "
                            f"{segment.base_offset}",
                            **where,
                        )
                    )
                if previous_last is not None:
                    if batch.base_offset <= previous_last:
                        out.append(
                            problem(
                                path,
                                "offset-order",
                                f"base offset {batch.base_offset} is not above the previous batch's last offset "
                                f"{previous_last}",
                                **where,
                            )
                        )
                    elif gaps and batch.base_offset > previous_last + 1:
                        out.append(
                            problem(
                                path,
                                "offset-gap",
                                f"offsets {previous_last + 1}..{batch.base_offset - 1} are missing",
                                **where,
                            )
                        )
                if deep:
                    try:
                        result.records += sum(1 for _ in batch.records())
                    except KdumpError as e:
                        out.append(problem(path, "decode", e.message, **where))
                if result.first_offset is None:
                    result.first_offset = batch.base_offset
                result.last_offset = batch.last_offset
                previous_last = batch.last_offset
        except KdumpError:
            pass  # framing: verify_segment reported it as a "log" problem


def across_segments(results: list[dict[str, Any]], gaps: bool) -> list[dict[str, Any]]:
    """Problems between consecutive segments of each partition directory (overlaps; gaps when asked)."""
    out: list[dict[str, Any]] = []
    by_dir: dict[str, list[dict[str, Any]]] = {}
    for r in results:
        by_dir.setdefault(r["directory"], []).append(r)
    for directory, segs in by_dir.items():
        segs.sort(key=lambda r: r["base_offset"])
        previous = None
        for r in segs:
            if r["first_offset"] is None:
                continue
            if previous is not None:
                path = f"{directory}/{naming.offset_to_filename(r['base_offset'])}"
                where = {"offset": r["first_offset"], "topic": r["topic"], "partition": r["partition"]}
                if r["first_offset"] <= previous["last_offset"]:
                    out.append(
                        problem(
                            path,
                            "offset-overlap",
                            f"first offset {r['first_offset']} is not above the previous segment's last offset "
                            f"{previous['last_offset']}",
                            **where,
                        )
                    )
                elif gaps and r["first_offset"] > previous["last_offset"] + 1:
                    out.append(
                        problem(
                            path,
                            "offset-gap",
                            f"offsets {previous['last_offset'] + 1}..{r['first_offset'] - 1} are missing between "
                            "segments",
                            **where,
                        )
                    )
            previous = r
    return out
