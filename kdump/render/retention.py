"""The forms of ``kdump retention``: tables (plain, or fitted to a terminal: :mod:`kdump.render.tables`) and JSON lines."""

from __future__ import annotations

from dataclasses import asdict
from typing import Any

from kdump.facts.retention import RetentionFacts
from kdump.render.json_lines import head, line
from kdump.render.log_summary import human_size
from kdump.render.problem_text import details, sentences
from kdump.render.table_fit import Column
from kdump.render.tables import Section, duration, iso_time, opt, partition_list


def segment_columns(human: bool) -> tuple[Column, ...]:
    """The segments' columns; in a pipe the size is bytes and its header says so."""
    return (
        Column("BASE-OFFSET", "BASE"),
        Column("NEXT-OFFSET", "NEXT", drop=2),
        Column("SIZE" if human else "SIZE-BYTES", "SIZE" if human else "BYTES"),
        Column("LARGEST-TIMESTAMP", "LARGEST-TIME", drop=1),
        Column("FATE", "FATE", right=False),
        Column("DELETABLE-AT", "DELETABLE-AT", right=False),
    )


SEGMENT_COLUMNS = tuple(c.name for c in segment_columns(False))


def _name(f: RetentionFacts) -> str:
    return f.directory if f.topic is None else f"{f.topic}-{f.partition}"


def is_empty(f: RetentionFacts) -> bool:
    """Nothing to predict: no record in the partition (its log end is its log start), nothing deleted, no
    problem."""
    return f.size_bytes == 0 or (
        f.log_end_offset is not None
        and f.log_end_offset == f.log_start_offset
        and not f.deleted
        and not f.problems
    )


def sections(
    facts: list[RetentionFacts], *, human: bool, now_given: bool, fold_empty: bool = False
) -> list[Section]:
    """``fold_empty`` (a terminal, without ``--all``): the partitions without records are one line at the
    end rather than a prediction each."""
    folded = [f for f in facts if is_empty(f)] if fold_empty else []
    if len(folded) < 2:
        folded = []
    result = _sections([f for f in facts if not (folded and is_empty(f))], human=human, now_given=now_given)
    if folded:
        names = partition_list([(f.topic, f.partition, f.directory) for f in folded])
        result.append(Section(f"{len(folded)} partitions without records (--all shows them): {names}"))
    return result


def compaction_notes(f: RetentionFacts, *, human: bool) -> list[str]:
    """The compaction prediction of a compacted partition in words (``kdump retention``'s notes; the report's
    page says the same): the dirty section and ratio, the keys, the tombstones, what a cleaning now would do."""
    t = iso_time if human else opt

    def size(n: int) -> str:
        return human_size(n) if human else f"{n} B"

    c = f.compaction
    if c is None:
        return []
    notes: list[str] = []
    notes.append(
        f"compaction: first dirty offset {c.first_dirty_offset}, first uncleanable offset "
        f"{c.first_uncleanable_offset}, clean {size(c.clean_bytes)}, cleanable {size(c.cleanable_bytes)}, dirty ratio "
        f"{c.dirty_ratio:.4f} vs min.cleanable.dirty.ratio {c.min_cleanable_ratio:g}: "
        + ("the cleaner would clean it" if c.would_clean else "the cleaner would not clean it yet")
    )
    notes.append(
        f"keys: {c.records} records, {c.distinct_keys} distinct keys, {c.superseded} superseded, "
        f"{c.tombstones} tombstones ({c.live_tombstones} the latest value of their key), "
        f"{c.records_without_key} without key"
    )
    horizon = "-" if c.latest_delete_horizon is None else t(c.latest_delete_horizon)
    kept = f.config["delete.retention.ms"]
    if kept.lstrip("-").isdigit():
        notes.append(
            f"tombstones: {c.tombstones_with_horizon} with a delete horizon (latest {horizon}), "
            f"{c.tombstones_past_horizon} past it (removed at the next cleaning); the others are kept "
            f"delete.retention.ms ({duration(int(kept)) if human else kept + ' ms'}) after their next "
            "cleaning"
        )
    else:
        notes.append(f"tombstones: {c.tombstones_with_horizon} with a delete horizon")
    p = c.cleaning
    if p is not None and p.cleaned_up_to > 0:
        notes.append(
            f"a cleaning now cleans up to offset {p.cleaned_up_to}: keeps {p.records_kept} records "
            f"({p.tombstones_kept} tombstones), removes {p.removed_superseded} superseded, "
            f"{p.removed_tombstones} tombstones past their horizon, {p.removed_without_key} without key, "
            f"{p.removed_aborted} of aborted transactions"
        )
    elif p is not None:
        notes.append("a cleaning now cleans nothing: the dirty section is empty")
    return notes


def _sections(facts: list[RetentionFacts], *, human: bool, now_given: bool) -> list[Section]:
    t = iso_time if human else opt
    result = []
    group: list[RetentionFacts] = []
    for n, f in enumerate(facts):
        s = Section(
            f"{_name(f)}: PREDICTION at {t(f.now)}{'' if now_given else ' (now)'}: log start offset "
            f"{opt(f.log_start_offset)} -> {opt(f.log_start_offset_after)} ({len(f.deleted)} of {len(f.segments)} "
            f"segment(s) deleted; log end offset {opt(f.log_end_offset)}, high watermark {opt(f.high_watermark)})",
            segment_columns(human),
        )
        for i, seg in enumerate(f.segments):
            s.rows.append(
                [
                    str(seg.base_offset),
                    str(seg.next_offset),
                    human_size(seg.size) if human else str(seg.size),
                    t(seg.largest_timestamp),
                    f"deleted ({seg.deleted_by})" if seg.deleted_by else "kept",
                    t(seg.deletable_at),
                ]
            )
            if seg.deleted_by:
                s.flagged.add(i)
        s.notes.extend(compaction_notes(f, human=human))
        s.notes.extend(f"problem: {p}" for p in sentences(f.problems))
        result.append(s)
        group.append(f)
        following = facts[n + 1] if n + 1 < len(facts) else None
        if following is None or _config_key(following) != _config_key(f):
            # once per run of partitions of one topic with one configuration, not once per partition
            which = partition_list([(g.topic, g.partition, g.directory) for g in group])
            s.notes.append(f"configuration used ({which}):" if len(group) > 1 else "configuration used:")
            s.notes.extend(
                f"  {k}={v}{_human_config(k, v) if human else ''} ({f.config_sources[k]})"
                for k, v in f.config.items()
            )
            group = []
    return result


def _config_key(f: RetentionFacts) -> tuple[object, ...]:
    return (f.topic, tuple(f.config.items()), tuple(f.config_sources.items()))


def _human_config(name: str, value: str) -> str:
    """`` = 7d`` after a duration in milliseconds (``*.ms``) on a terminal."""
    if name.endswith(".ms") and value.isdigit() and 0 < int(value) < (1 << 62):
        return f" = {duration(int(value))}"
    if name.endswith(".bytes") and value.isdigit() and int(value) > 0:
        return f" = {human_size(int(value))}"
    return ""


def partition_object(f: RetentionFacts) -> dict[str, Any]:
    return {
        "prediction": True,
        "directory": f.directory,
        "topic": f.topic,
        "partition": f.partition,
        "now": f.now,
        "config": f.config,
        "configSources": f.config_sources,
        "logStartOffset": f.log_start_offset,
        "logStartOffsetAfter": f.log_start_offset_after,
        "logEndOffset": f.log_end_offset,
        "highWatermark": f.high_watermark,
        "sizeBytes": f.size_bytes,
        "segmentFates": [
            {
                "baseOffset": s.base_offset,
                "nextOffset": s.next_offset,
                "size": s.size,
                "largestTimestamp": s.largest_timestamp,
                "deletedBy": s.deleted_by,
                "deletableAt": s.deletable_at,
            }
            for s in f.segments
        ],
        "compaction": None if f.compaction is None else _camel(asdict(f.compaction)),
        "problemMessages": sentences(f.problems),
        "problemDetails": details(f.problems),
    }


def _camel(d: dict[str, Any]) -> dict[str, Any]:
    out = {}
    for k, v in d.items():
        head, *rest = k.split("_")
        out[head + "".join(x.title() for x in rest)] = _camel(v) if isinstance(v, dict) else v
    return out


def json_lines(facts: list[RetentionFacts]) -> str:
    return "".join(line(head("retentionPartition", **partition_object(f))) for f in facts)
