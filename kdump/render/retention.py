"""The forms of ``kdump retention``: tables (plain or rich) and JSON lines."""

from __future__ import annotations

from dataclasses import asdict
from typing import Any

from kdump.facts.retention import RetentionFacts
from kdump.render.json_lines import head, line
from kdump.render.tables import Section, duration, iso_time, opt

SEGMENT_COLUMNS = ("BASE-OFFSET", "NEXT-OFFSET", "SIZE", "LARGEST-TIMESTAMP", "FATE", "DELETABLE-AT")


def _name(f: RetentionFacts) -> str:
    return f.directory if f.topic is None else f"{f.topic}-{f.partition}"


def sections(facts: list[RetentionFacts], *, human: bool, now_given: bool) -> list[Section]:
    t = iso_time if human else opt
    result = []
    for f in facts:
        s = Section(
            f"{_name(f)}: PREDICTION at {t(f.now)}{'' if now_given else ' (now)'}: log start offset "
            f"{opt(f.log_start_offset)} -> {opt(f.log_start_offset_after)} ({len(f.deleted)} of {len(f.segments)} "
            f"segment(s) deleted; log end offset {opt(f.log_end_offset)}, high watermark {opt(f.high_watermark)})",
            SEGMENT_COLUMNS,
        )
        for i, seg in enumerate(f.segments):
            s.rows.append(
                [
                    str(seg.base_offset),
                    str(seg.next_offset),
                    str(seg.size),
                    t(seg.largest_timestamp),
                    f"deleted ({seg.deleted_by})" if seg.deleted_by else "kept",
                    t(seg.deletable_at),
                ]
            )
            if seg.deleted_by:
                s.flagged.add(i)
        c = f.compaction
        if c is not None:
            s.notes.append(
                f"compaction: first dirty offset {c.first_dirty_offset}, first uncleanable offset "
                f"{c.first_uncleanable_offset}, clean {c.clean_bytes} B, cleanable {c.cleanable_bytes} B, dirty ratio "
                f"{c.dirty_ratio:.4f} vs min.cleanable.dirty.ratio {c.min_cleanable_ratio:g}: "
                + ("the cleaner would clean it" if c.would_clean else "the cleaner would not clean it yet")
            )
            s.notes.append(
                f"keys: {c.records} records, {c.distinct_keys} distinct keys, {c.superseded} superseded, "
                f"{c.tombstones} tombstones ({c.live_tombstones} the latest value of their key), "
                f"{c.records_without_key} without key"
            )
            horizon = "-" if c.latest_delete_horizon is None else t(c.latest_delete_horizon)
            s.notes.append(
                f"tombstones: {c.tombstones_with_horizon} with a delete horizon (latest {horizon}), "
                f"{c.tombstones_past_horizon} past it (removed at the next cleaning); the others are kept "
                f"delete.retention.ms ({duration(int(f.config['delete.retention.ms']))}) after their next cleaning"
                if f.config["delete.retention.ms"].lstrip("-").isdigit()
                else f"tombstones: {c.tombstones_with_horizon} with a delete horizon"
            )
        s.notes.append("configuration used:")
        s.notes.extend(f"  {k}={v} ({f.config_sources[k]})" for k, v in f.config.items())
        s.notes.extend(f"problem: {p}" for p in f.problems)
        result.append(s)
    return result


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
        "problemMessages": f.problems,
    }


def _camel(d: dict[str, Any]) -> dict[str, Any]:
    out = {}
    for k, v in d.items():
        head, *rest = k.split("_")
        out[head + "".join(x.title() for x in rest)] = v
    return out


def json_lines(facts: list[RetentionFacts]) -> str:
    return "".join(line(head("retentionPartition", **partition_object(f))) for f in facts)
