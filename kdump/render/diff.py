"""The forms of ``kdump diff``: tables (plain or rich) and JSON lines."""

from __future__ import annotations

from typing import Any

from kdump.commands.diff import BatchHeader, PartitionDiff
from kdump.render.json_lines import head, line
from kdump.render.tables import Section, opt

COPY_COLUMNS = (
    "COPY",
    "DIRECTORY",
    "LOG-START",
    "LOG-END",
    "HIGH-WATERMARK",
    "BATCHES",
    "EPOCHS (CHECKPOINT)",
    "EPOCHS (BATCHES)",
)
PAIR_COLUMNS = (
    "COPIES",
    "MATCHING",
    "DIVERGED",
    "FIRST-DIVERGENCE",
    "KIND",
    "ONLY-IN-FIRST",
    "ONLY-IN-SECOND",
)
TRUNCATION_COLUMNS = ("FOLLOWER", "LEADER", "TRUNCATES-TO", "REMOVES")


def _epochs(entries: list[tuple[int, int]] | None) -> str:
    if entries is None:
        return "-"
    return " ".join(f"{e}@{o}" for e, o in entries) or "(empty)"


def _ranges(ranges: list[tuple[int, int]], total: int) -> str:
    if not total:
        return "-"
    text = ",".join(f"{a}-{b}" if a != b else str(a) for a, b in ranges[:5])
    return f"{total} ({text}{',...' if len(ranges) > 5 else ''})"


def _batch(h: BatchHeader | None) -> str:
    if h is None:
        return "-"
    return f"{h.base_offset}-{h.last_offset} epoch {h.leader_epoch} crc {h.crc} ({h.file} byte {h.position})"


def sections(facts: list[PartitionDiff]) -> list[Section]:
    result = []
    for p in facts:
        copies = Section(
            f"{p.name}: {len(p.copies)} copies"
            + (
                " DIVERGED"
                if p.diverged
                else " identical"
                if p.identical
                else " consistent (one ends earlier or starts later; nothing diverged)"
            ),
            COPY_COLUMNS,
        )
        for i, c in enumerate(p.copies):
            copies.rows.append(
                [str(i), c.directory, opt(c.log_start_offset), opt(c.log_end_offset), opt(c.high_watermark),
                 str(c.batches), _epochs(c.checkpoint_epochs), _epochs(c.batch_epochs)]
            )  # fmt: skip
            copies.notes.extend(f"problem: copy {i}: {x}" for x in c.problems)
        pairs = Section("", PAIR_COLUMNS)
        for n, d in enumerate(p.pairs):
            fd = d.first_divergence
            pairs.rows.append(
                [f"{d.a}/{d.b}", str(d.matching_batches), str(d.diverged_batches), opt(fd and fd.offset),
                 "-" if fd is None else fd.kind, _ranges(d.only_in_a, d.offsets_only_in_a),
                 _ranges(d.only_in_b, d.offsets_only_in_b)]
            )  # fmt: skip
            if not d.identical:
                pairs.flagged.add(n)
            if fd is not None:
                pairs.notes.append(f"copies {d.a}/{d.b} first diverge at offset {fd.offset} ({fd.kind}):")
                pairs.notes.append(f"  {d.a}: {_batch(fd.a)}")
                pairs.notes.append(f"  {d.b}: {_batch(fd.b)}")
                pairs.notes.extend(f"  {x}" for x in fd.detail)
        truncs = Section("as a follower (leader-epoch truncation):", TRUNCATION_COLUMNS)
        for t in p.truncations:
            truncs.rows.append([str(t.follower), str(t.leader), opt(t.offset), str(t.removed_offsets)])
            if t.removed_offsets:
                truncs.flagged.add(len(truncs.rows) - 1)
        result.extend([copies, pairs, truncs])
    return result


def _header(h: BatchHeader | None) -> dict[str, Any] | None:
    if h is None:
        return None
    return {
        "baseOffset": h.base_offset,
        "lastOffset": h.last_offset,
        "partitionLeaderEpoch": h.leader_epoch,
        "crc": h.crc,
        "file": h.file,
        "position": h.position,
    }


def partition_object(p: PartitionDiff) -> dict[str, Any]:
    return {
        "name": p.name,
        "diverged": p.diverged,
        "copies": [
            {
                "directory": c.directory,
                "logStartOffset": c.log_start_offset,
                "logEndOffset": c.log_end_offset,
                "highWatermark": c.high_watermark,
                "batches": c.batches,
                "checkpointEpochs": None
                if c.checkpoint_epochs is None
                else [{"epoch": e, "startOffset": o} for e, o in c.checkpoint_epochs],
                "batchEpochs": [{"epoch": e, "startOffset": o} for e, o in c.batch_epochs],
                "problemMessages": c.problems,
            }
            for c in p.copies
        ],
        "pairs": [
            {
                "a": d.a,
                "b": d.b,
                "matchingBatches": d.matching_batches,
                "divergedBatches": d.diverged_batches,
                "firstDivergence": None
                if d.first_divergence is None
                else {
                    "offset": d.first_divergence.offset,
                    "kind": d.first_divergence.kind,
                    "batchA": _header(d.first_divergence.a),
                    "batchB": _header(d.first_divergence.b),
                    "recordDifferences": d.first_divergence.detail,
                },
                "onlyInA": [{"first": a, "last": b} for a, b in d.only_in_a],
                "onlyInB": [{"first": a, "last": b} for a, b in d.only_in_b],
                "offsetsOnlyInA": d.offsets_only_in_a,
                "offsetsOnlyInB": d.offsets_only_in_b,
            }
            for d in p.pairs
        ],
        "truncations": [
            {
                "follower": t.follower,
                "leader": t.leader,
                "truncateTo": t.offset,
                "removedOffsets": t.removed_offsets,
                "steps": t.steps,
            }
            for t in p.truncations
        ],
    }


def json_lines(facts: list[PartitionDiff]) -> str:
    return "".join(line(head("diffPartition", **partition_object(p))) for p in facts)
