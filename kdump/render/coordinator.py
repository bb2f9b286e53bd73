"""The forms of ``kdump find --group`` / ``--transactional-id``: tables and JSON lines."""

from __future__ import annotations

from typing import Any

from kdump.facts.coordinator import CoordinatorLookup
from kdump.render.json_lines import head, line
from kdump.render.tables import Section, iso_time, opt

OFFSET_COLUMNS = (
    "TOPIC",
    "PARTITION",
    "OFFSET",
    "LEADER-EPOCH",
    "METADATA",
    "COMMIT-TIMESTAMP",
    "RECORD-OFFSET",
)
TXN_COLUMNS = (
    "TRANSACTIONAL-ID",
    "PRODUCER-ID",
    "EPOCH",
    "STATE",
    "TIMEOUT-MS",
    "PARTITIONS",
    "START",
    "LAST-UPDATE",
    "RECORD-OFFSET",
)


def sections(r: CoordinatorLookup, *, human: bool) -> list[Section]:
    t = iso_time if human else opt
    what = "group" if r.kind == "group" else "transactional id"
    head = Section(
        f"{what} {r.key!r} -> {r.topic}-{r.partition}",
        notes=[
            f"Utils.abs({r.hash_code}) % {r.count.count} (String.hashCode; {r.count.count} partitions from "
            f"{r.count.source}; partitions here: {', '.join(map(str, r.count.local_partitions)) or 'none'})",
            f"partition directory: {r.directory or 'not in this data directory'}",
        ],
    )
    result = [head]
    if r.group is not None:
        s = Section("committed offsets", OFFSET_COLUMNS)
        for c in r.group.offsets:
            s.rows.append(
                [c.topic, str(c.partition), str(c.offset), str(c.leader_epoch), c.metadata or "-",
                 t(c.commit_timestamp), str(c.record_offset)]
            )  # fmt: skip
        if not r.group.offsets:
            s.columns = ()
            s.notes.append("no committed offset for this group")
        if r.group.pending_transactional:
            s.notes.append(f"{r.group.pending_transactional} offset(s) committed in still-open transactions")
        m = r.group.metadata
        if m is not None:
            s.notes.append(
                f"group metadata: protocolType {m.get('protocolType')} generation {m.get('generation')} protocol "
                f"{m.get('protocol')} leader {m.get('leader')} members {len(m.get('members') or [])}"
            )
        result.append(s)
    elif r.directory is not None:
        s = Section("transaction state", TXN_COLUMNS)
        x = r.transaction
        if x is None:
            s.columns = ()
            s.notes.append("no record of this transactional id")
        else:
            parts = ",".join(f"{tp}-{p}" for tp, p in x.partitions) or "-"
            s.rows.append(
                [x.transactional_id, str(x.producer_id), str(x.producer_epoch), x.state, str(x.timeout_ms),
                 parts, t(x.start_timestamp), t(x.last_update_timestamp), str(x.record_offset)]
            )  # fmt: skip
        result.append(s)
    result[-1].notes.extend(f"problem: {p}" for p in r.problems)
    return result


def lookup_object(r: CoordinatorLookup) -> dict[str, Any]:
    obj: dict[str, Any] = {
        "kind": r.kind,
        "key": r.key,
        "topic": r.topic,
        "hashCode": r.hash_code,
        "partition": r.partition,
        "partitionCount": r.count.count,
        "partitionCountSource": r.count.source,
        "localPartitions": list(r.count.local_partitions),
        "directory": r.directory,
        "found": r.found,
    }
    if r.group is not None:
        obj["offsets"] = [
            {
                "topic": c.topic,
                "partition": c.partition,
                "offset": c.offset,
                "leaderEpoch": c.leader_epoch,
                "metadata": c.metadata,
                "commitTimestamp": c.commit_timestamp,
                "recordOffset": c.record_offset,
            }
            for c in r.group.offsets
        ]
        obj["pendingTransactionalOffsets"] = r.group.pending_transactional
        m = r.group.metadata
        obj["groupMetadata"] = (
            None
            if m is None
            else {
                "protocolType": m.get("protocolType"),
                "generation": m.get("generation"),
                "protocol": m.get("protocol"),
                "leaderMemberId": m.get("leader"),
                "members": [x.get("memberId") for x in m.get("members") or []],
            }
        )
    if r.kind == "transactionalId":
        x = r.transaction
        obj["transaction"] = (
            None
            if x is None
            else {
                "transactionalId": x.transactional_id,
                "producerId": x.producer_id,
                "producerEpoch": x.producer_epoch,
                "state": x.state,
                "timeoutMs": x.timeout_ms,
                "topicPartitions": [{"topic": tp, "partition": p} for tp, p in x.partitions],
                "startTimestamp": x.start_timestamp,
                "lastUpdateTimestamp": x.last_update_timestamp,
                "recordOffset": x.record_offset,
                "removed": x.removed,
            }
        )
    obj["problemMessages"] = r.problems
    return obj


def json_lines(r: CoordinatorLookup) -> str:
    return line(head("coordinator", **lookup_object(r)))
