"""The forms of ``kdump diff``: tables (plain, or fitted to a terminal: :mod:`kdump.render.tables`) and JSON lines."""

from __future__ import annotations

from typing import Any

from kdump.facts import diff as step
from kdump.facts.diff import BatchHeader, Divergence, PartitionDiff, TruncationStep
from kdump.render.json_lines import head, line
from kdump.render.problem_text import details, sentence, sentences
from kdump.render.table_fit import Column
from kdump.render.tables import Section, opt, partition_list

COPY_COLUMNS_SPEC = (
    Column("COPY", "COPY"),
    Column("DIRECTORY", "DIR", right=False, own_line=True),
    Column("LOG-START", "START"),
    Column("LOG-END", "END"),
    Column("HIGH-WATERMARK", "HWM"),
    Column("BATCHES", "BATCHES", drop=1),
    Column("CHECKPOINT-EPOCHS", "CKPT-EPOCHS", right=False, own_line=True),
    Column("BATCH-EPOCHS", "BATCH-EPOCHS", right=False, own_line=True),
)
PAIR_COLUMNS_SPEC = (
    Column("COPIES", "COPIES", right=False),
    Column("MATCHING", "MATCH"),
    Column("DIVERGED", "DIV"),
    Column("FIRST-DIVERGENCE", "FIRST-DIV"),
    Column("KIND", "KIND", right=False),
    Column("ONLY-IN-FIRST", "ONLY-A", right=False, own_line=True),
    Column("ONLY-IN-SECOND", "ONLY-B", right=False, own_line=True),
)
TRUNCATION_COLUMNS_SPEC = (
    Column("FOLLOWER", "FOLLOWER"),
    Column("LEADER", "LEADER"),
    Column("TRUNCATES-TO", "TRUNCATES-TO"),
    Column("REMOVES", "REMOVES"),
)
SUMMARY_COLUMNS = (
    Column("PARTITION", "PARTITION", right=False),
    Column("COPIES", "COPIES", right=False),
    Column("FIRST-DIVERGENCE", "FIRST-DIV"),
    Column("KIND", "KIND", right=False),
    Column("DIVERGED-BATCHES", "DIV-BATCHES", drop=1),
    Column("ONLY-IN-FIRST", "ONLY-A"),
    Column("ONLY-IN-SECOND", "ONLY-B"),
)
COPY_COLUMNS = tuple(c.name for c in COPY_COLUMNS_SPEC)
PAIR_COLUMNS = tuple(c.name for c in PAIR_COLUMNS_SPEC)
TRUNCATION_COLUMNS = tuple(c.name for c in TRUNCATION_COLUMNS_SPEC)


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


def _topic_partition(name: str) -> tuple[str | None, int | None, str]:
    topic, _, number = name.rpartition("-")
    return (topic, int(number), name) if topic and number.isdigit() else (None, None, name)


def summary(facts: list[PartitionDiff]) -> Section:
    """What a reader wants first: how many partitions were compared, which diverged and where."""
    diverged = [p for p in facts if p.diverged]
    copies = max((len(p.copies) for p in facts), default=0)
    consistent = sum(1 for p in facts if not p.diverged and not p.identical)
    s = Section(
        f"{len(facts)} partition(s) compared across {copies} copies: {len(diverged)} diverged, "
        f"{len(facts) - len(diverged) - consistent} identical"
        + (f", {consistent} consistent (one copy behind or starting later)" if consistent else "")
    )
    if diverged:
        s.columns = SUMMARY_COLUMNS
        for p in diverged:
            for d in p.pairs:
                if not d.diverged:
                    continue
                fd = d.first_divergence
                s.rows.append(
                    [p.name, f"{d.a}/{d.b}", opt(fd and fd.offset), "-" if fd is None else fd.kind,
                     str(d.diverged_batches), str(d.offsets_only_in_a), str(d.offsets_only_in_b)]
                )  # fmt: skip
                s.flagged.add(len(s.rows) - 1)
    same = [p for p in facts if not p.diverged]
    if same and len(facts) > 1:
        identical = [_topic_partition(p.name) for p in same if p.identical]
        behind = [_topic_partition(p.name) for p in same if not p.identical]
        if identical:
            s.notes.append(f"identical: {partition_list(identical)}")
        if behind:
            s.notes.append(f"consistent: {partition_list(behind)}")
    if len(facts) > 1:
        s.notes.append("details of the partitions that diverged follow" if diverged else "")
    s.notes = [n for n in s.notes if n]
    return s


def sections(facts: list[PartitionDiff]) -> list[Section]:
    """The summary, then the details: of every partition when one was compared, else of those that diverged."""
    result = [summary(facts)]
    for p in facts:
        if len(facts) > 1 and not p.diverged:
            continue
        copies = Section(
            f"{p.name}: {len(p.copies)} copies"
            + (
                " DIVERGED"
                if p.diverged
                else " identical"
                if p.identical
                else " consistent (one ends earlier or starts later; nothing diverged)"
            ),
            COPY_COLUMNS_SPEC,
        )
        for i, c in enumerate(p.copies):
            copies.rows.append(
                [str(i), c.directory, opt(c.log_start_offset), opt(c.log_end_offset), opt(c.high_watermark),
                 str(c.batches), _epochs(c.checkpoint_epochs), _epochs(c.batch_epochs)]
            )  # fmt: skip
            copies.notes.extend(f"problem: copy {i}: {x}" for x in sentences(c.problems))
        pairs = Section("", PAIR_COLUMNS_SPEC)
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
                pairs.notes.extend(f"  {x}" for x in record_differences(fd))
        truncs = Section("as a follower (leader-epoch truncation):", TRUNCATION_COLUMNS_SPEC)
        for t in p.truncations:
            truncs.rows.append([str(t.follower), str(t.leader), opt(t.offset), str(t.removed_offsets)])
            if t.removed_offsets:
                truncs.flagged.add(len(truncs.rows) - 1)
        result.extend([copies, pairs, truncs])
    return result


def _key(key: bytes | None, absent: bool) -> str:
    if absent or key is None:
        return "-"
    text = key[:32].decode("utf-8", "replace")
    return repr(text + ("..." if len(key) > 32 else ""))


def _value(size: int | None, absent: bool) -> str:
    return "absent" if absent else "null" if size is None else f"{size} bytes"


def record_differences(d: Divergence) -> list[str]:
    """The records of the first differing batches that differ, a line each (``...`` when more do)."""
    if d.undecodable is not None:
        return [f"cannot decode: {sentence(d.undecodable)}"]
    lines = [
        f"offset {r.offset}: key {_key(r.key_a, r.absent_a)} / {_key(r.key_b, r.absent_b)}, "
        f"value {_value(r.value_size_a, r.absent_a)} / {_value(r.value_size_b, r.absent_b)}"
        for r in d.records
    ]
    return [*lines, "..."] if d.more_records else lines


def step_text(x: TruncationStep) -> str:
    """One step of the leader-epoch protocol (``Truncation.steps``) in words."""
    if x.kind == step.ELECTED:
        return f"leader elected at epoch {x.epoch} from offset {x.offset}"
    if x.kind == step.ASKED:
        return f"OffsetsForLeaderEpoch({x.requested}) -> epoch {x.epoch}, end offset {x.offset}"
    if x.kind == step.UNDEFINED:
        return "undefined: truncate to the high watermark"
    if x.kind == step.LACKS_EPOCH:
        return f"follower lacks epoch {x.epoch}: truncate to {x.offset} and ask again"
    return "no answer after 100 rounds"


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
                "problemMessages": sentences(c.problems),
                "problemDetails": details(c.problems),
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
                    "recordDifferences": record_differences(d.first_divergence),
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
                "steps": [step_text(x) for x in t.steps],
            }
            for t in p.truncations
        ],
    }


def json_lines(facts: list[PartitionDiff]) -> str:
    return "".join(line(head("diffPartition", **partition_object(p))) for p in facts)
