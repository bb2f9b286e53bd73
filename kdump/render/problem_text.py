"""The words of a :class:`~kdump.problem.Problem`: the one place a problem of ``ls``, ``txn``, ``retention``,
``diff`` and ``find --group``/``--transactional-id`` becomes a sentence (a table's note, a JSON object's
``problemMessages``), and its JSON object (``problemDetails``, ``anomalyDetails``)."""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from kdump import problem as p
from kdump.problem import Problem


def what(x: Problem) -> str:
    kind = x.kind
    if kind == p.UNREADABLE:
        return f"cannot read it: {x['reason']}"
    if kind == p.UNREADABLE_DIRECTORY:
        return f"cannot read the directory: {x['reason']}"
    if kind == p.CORRUPT_BATCH:
        return (
            f"offsets {x['base_offset']}..{x['last_offset']}: stored CRC {x['stored']}, computed "
            f"{x['computed']} (the batch's bytes were changed)"
        )
    if kind == p.PARTIAL_BATCH:
        return f"{x['bytes']} bytes at byte {x.position} are not a whole batch"
    if kind == p.OVERSIZED_SEGMENT:
        return (
            f"{x['size']} bytes: only the first {x['read']} were read "
            "(Kafka's FileRecords view of a segment is int-sized, 2 GiB at most)"
        )
    if kind == p.SEGMENT_STARTS_BELOW_NAME:
        return f"segment {x['segment']} starts with offset {x['offset']}, below its name"
    if kind == p.OFFSET_OUT_OF_ORDER:
        return f"offset {x['offset']} at {x['segment']}.log byte {x.position} does not follow {x['previous']}"
    if kind == p.MARKED_DIRECTORY:
        return f"directory marked {x['marker']} ({x['name']})"
    if kind == p.NOT_A_PARTITION_NAME:
        return "directory name is not <topic>-<partition>"
    if kind == p.LEFT_OVER_FILE:
        return f"left-over file {x['name']}"
    if kind == p.ORPHANED_INDEXES:
        return f"orphaned index files {x['segment']}{{{', '.join(x['suffixes'])}}} without a .log"
    if kind == p.MISSING_INDEX:
        return f"segment {x['segment']} has no {' or '.join(x['missing'])}"
    if kind == p.NO_HIGH_WATERMARK:
        return "no high watermark in replication-offset-checkpoint: the log end offset is used"
    if kind == p.CLEANER_CHECKPOINT_OUT_OF_RANGE:
        return f"cleaner checkpoint {x['offset']} out of range: the log start offset is used"
    if kind == p.NOT_A_NUMBER:
        return f"{x['name']}={x['value']!r} is not a number: {x['used']} used"
    message = x.get("message")
    return str(message) if message is not None else kind


# Kinds whose sentence names the place itself (the file is not put in front of it).
_PLACED_IN_WORDS = frozenset({p.OFFSET_OUT_OF_ORDER, p.SEGMENT_STARTS_BELOW_NAME})


def sentence(x: Problem) -> str:
    """``<file>: byte <position>: <what>``, as much of the place as the problem has."""
    where = []
    if x.kind not in _PLACED_IN_WORDS:
        if x.file is not None:
            where.append(x.file)
        if x.position is not None and x.kind != p.PARTIAL_BATCH:
            where.append(f"byte {x.position}")
    return ": ".join([*where, what(x)])


def sentences(problems: Iterable[Problem]) -> list[str]:
    """Each problem's sentence, a problem met twice named once, in order."""
    return list(dict.fromkeys(sentence(x) for x in problems))


def _camel(name: str) -> str:
    head, *rest = name.split("_")
    return head + "".join(w.title() for w in rest)


def details(problems: Iterable[Problem]) -> list[dict[str, Any]]:
    """Each problem as a JSON object: ``kind``, ``file`` and ``position`` where known, and ``data``, the
    kind's values (camelCase names)."""
    out = []
    for x in dict.fromkeys(problems):
        obj: dict[str, Any] = {"kind": x.kind}
        if x.file is not None:
            obj["file"] = x.file
        if x.position is not None:
            obj["position"] = x.position
        obj["data"] = {_camel(k): list(v) if isinstance(v, tuple) else v for k, v in x.data}
        out.append(obj)
    return out
