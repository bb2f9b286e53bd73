"""The forms of ``kdump find --group`` / ``--transactional-id``: tables and JSON lines."""

from __future__ import annotations

from typing import Any

from kdump.facts.coordinator import CoordinatorLookup, TransactionMetadata
from kdump.render.json_lines import head, line
from kdump.render.problem_text import details, sentences
from kdump.render.table_fit import Column
from kdump.render.tables import Section, duration, iso_time, opt, partition_list

OFFSET_COLUMNS_SPEC = (
    Column("TOPIC", "TOPIC", right=False),
    Column("PARTITION", "PART"),
    Column("OFFSET", "OFFSET"),
    Column("LOG-END-OFFSET", "END"),
    Column("LAG", "LAG"),
    Column("LEADER-EPOCH", "EPOCH", drop=2),
    Column("METADATA", "META", right=False, own_line=True),
    Column("COMMIT-TIMESTAMP", "COMMIT-TIME", drop=1),
    Column("RECORD-OFFSET", "AT", drop=3),
)
OFFSET_COLUMNS = tuple(c.name for c in OFFSET_COLUMNS_SPEC)


def txn_columns(human: bool) -> tuple[Column, ...]:
    return (
        Column("TRANSACTIONAL-ID", "TXN-ID", right=False, own_line=True),
        Column("PRODUCER-ID", "PID"),
        Column("EPOCH", "EPOCH"),
        Column("STATE", "STATE", right=False),
        Column("TIMEOUT" if human else "TIMEOUT-MS", "TIMEOUT" if human else "TIMEOUT-MS", drop=3),
        Column("PARTITIONS", "PARTS", right=False, own_line=True),
        Column("START", "START", drop=2),
        Column("LAST-UPDATE", "UPDATED", drop=1),
        Column("RECORD-OFFSET", "AT", drop=4),
    )


TXN_COLUMNS = tuple(c.name for c in txn_columns(False))


def sections(r: CoordinatorLookup, *, human: bool) -> list[Section]:
    t = iso_time if human else opt
    d = duration if human else opt
    here = r.count.local_partitions
    if not here:
        local = "none of them in this data directory"
    elif len(here) == r.count.count and here == tuple(range(r.count.count)):
        local = "all of them in this data directory"
    else:
        local = (
            f"{len(here)} of them in this data directory: {partition_list([(r.topic, p, '') for p in here])}"
        )
    what = "group" if r.kind == "group" else "transactional id"
    head = Section(
        f"{what} {r.key!r} -> {r.topic}-{r.partition}",
        notes=[
            f"Utils.abs({r.hash_code}) % {r.count.count} (String.hashCode; {r.count.count} partitions from "
            f"{r.count.source}; {local})",
            f"partition directory: {r.directory or 'not in this data directory'}",
        ],
    )
    result = [head]
    if r.group is not None:
        s = Section("committed offsets", OFFSET_COLUMNS_SPEC)
        for c in r.group.offsets:
            s.rows.append(
                [c.topic, str(c.partition), str(c.offset), opt(c.log_end_offset), opt(c.lag),
                 str(c.leader_epoch), c.metadata or "-",
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
                f"group metadata: protocolType {opt(m.get('protocolType'))} generation {opt(m.get('generation'))} "
                f"protocol {opt(m.get('protocol'))} leader {opt(m.get('leader'))} members "
                f"{len(m.get('members') or [])}"
            )
        result.append(s)
    elif r.directory is not None:
        s = Section("transaction state", txn_columns(human))
        x = r.transaction
        if x is None:
            s.columns = ()
            s.notes.append("no record of this transactional id")
        else:
            parts = ",".join(f"{tp}-{p}" for tp, p in x.partitions) or "-"
            s.rows.append(
                [x.transactional_id, str(x.producer_id), str(x.producer_epoch), x.state, d(x.timeout_ms),
                 parts, t(x.start_timestamp), t(x.last_update_timestamp), str(x.record_offset)]
            )  # fmt: skip
        result.append(s)
    result[-1].notes.extend(f"problem: {p}" for p in sentences(r.problems))
    return result


def transaction_object(x: TransactionMetadata) -> dict[str, Any]:
    """A transactional id's state as the coordinator holds it (``find --transactional-id``, ``kdump report``)."""
    return {
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


def member_ids(metadata: dict[str, Any]) -> list[Any]:
    """The member ids of a group's metadata record."""
    return [x.get("memberId") for x in metadata.get("members") or []]


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
                "logEndOffset": c.log_end_offset,
                "lag": c.lag,
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
                "members": member_ids(m),
            }
        )
    if r.kind == "transactionalId":
        x = r.transaction
        obj["transaction"] = None if x is None else transaction_object(x)
    obj["problemMessages"] = sentences(r.problems)
    obj["problemDetails"] = details(r.problems)
    return obj


def json_lines(r: CoordinatorLookup) -> str:
    return line(head("coordinator", **lookup_object(r)))
