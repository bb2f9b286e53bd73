"""The forms of ``kdump txn``: tables (plain or rich, :mod:`kdump.render.tables`) and JSON lines."""

from __future__ import annotations

from typing import Any

from kdump.facts.txn import PartitionTxnFacts, summarize_durations
from kdump.render.json_lines import head, line
from kdump.render.tables import Section, duration, iso_time, opt

OPEN_COLUMNS = (
    "PRODUCER-ID",
    "EPOCH",
    "FIRST-OFFSET",
    "LAST-OFFSET",
    "FIRST-TIMESTAMP",
    "LAST-TIMESTAMP",
    "AGE",
    "TRANSACTIONAL-ID",
    "COORDINATOR",
    "TIMEOUT",
    "HANGING",
)


def _name(f: PartitionTxnFacts) -> str:
    return f.directory if f.topic is None else f"{f.topic}-{f.partition}"


def sections(facts: list[PartitionTxnFacts], *, human: bool) -> list[Section]:
    t = iso_time if human else opt
    result = []
    quiet = []
    for f in facts:
        if not (f.open or f.aborted or f.stats.commits or f.stats.aborts or f.problems):
            quiet.append(f)
            continue
        s = Section(
            f"{_name(f)}: last stable offset {opt(f.last_stable_offset)} (first unstable offset "
            f"{opt(f.first_unstable_offset)}, high watermark {opt(f.high_watermark)}, log end offset "
            f"{opt(f.log_end_offset)}, log start offset {opt(f.log_start_offset)})"
        )
        if f.open:
            s.columns = OPEN_COLUMNS
            for i, o in enumerate(f.open):
                meta = o.coordinator
                s.rows.append(
                    [
                        str(o.producer_id),
                        str(o.producer_epoch),
                        str(o.first_offset),
                        str(o.last_offset),
                        t(o.first_timestamp),
                        t(o.last_timestamp),
                        duration(o.age_ms) if human else opt(o.age_ms),
                        "-" if meta is None else meta.transactional_id,
                        "-" if meta is None else meta.state,
                        "-" if meta is None else str(meta.timeout_ms),
                        "yes" if o.hanging else "no",
                    ]
                )
                if o.hanging:
                    s.flagged.add(i)
        else:
            s.notes.append("no open transaction")
        st = f.stats
        c, a = summarize_durations(st.commit_durations), summarize_durations(st.abort_durations)
        d = duration if human else opt
        s.notes.append(
            f"commits: {st.commits} (duration min {d(c['min'])}, median {d(c['median'])}, max {d(c['max'])}); "
            f"aborts: {st.aborts} (duration min {d(a['min'])}, median {d(a['median'])}, max {d(a['max'])})"
        )
        ranges = ", ".join(f"{x.first_offset}-{x.last_offset} (producer {x.producer_id})" for x in f.aborted)
        s.notes.append(f"aborted ranges (.txnindex): {ranges or 'none'}")
        s.notes.append(
            "coordinator: "
            + (f.coordinator_source or "no __transaction_state partition in the data directory")
        )
        for o in f.open:
            if o.hanging:
                s.notes.append(f"HANGING: producer {o.producer_id} from offset {o.first_offset}: {o.reason}")
                if o.abort_command:
                    s.notes.append(f"  {o.abort_command}")
        s.notes.extend(f"problem: {p}" for p in f.problems)
        result.append(s)
    if quiet:
        names = ", ".join(f"{_name(f)} (last stable offset {opt(f.last_stable_offset)})" for f in quiet)
        result.append(Section(f"{len(quiet)} partition(s) without transactions: {names}"))
    return result


def partition_object(f: PartitionTxnFacts) -> dict[str, Any]:
    st = f.stats
    return {
        "directory": f.directory,
        "topic": f.topic,
        "partition": f.partition,
        "logStartOffset": f.log_start_offset,
        "logEndOffset": f.log_end_offset,
        "highWatermark": f.high_watermark,
        "firstUnstableOffset": f.first_unstable_offset,
        "lastStableOffset": f.last_stable_offset,
        "newestTimestamp": f.newest_timestamp,
        "now": f.now,
        "openTransactions": [
            {
                "producerId": o.producer_id,
                "producerEpoch": o.producer_epoch,
                "firstOffset": o.first_offset,
                "lastOffset": o.last_offset,
                "firstTimestamp": o.first_timestamp,
                "lastTimestamp": o.last_timestamp,
                "ageMs": o.age_ms,
                "coordinator": None
                if o.coordinator is None
                else {
                    "transactionalId": o.coordinator.transactional_id,
                    "producerId": o.coordinator.producer_id,
                    "producerEpoch": o.coordinator.producer_epoch,
                    "state": o.coordinator.state,
                    "timeoutMs": o.coordinator.timeout_ms,
                    "topicPartitions": [{"topic": tp, "partition": p} for tp, p in o.coordinator.partitions],
                },
                "hanging": o.hanging,
                "reason": o.reason,
                "abortCommand": o.abort_command,
            }
            for o in f.open
        ],
        "abortedTransactions": [
            {
                "producerId": x.producer_id,
                "firstOffset": x.first_offset,
                "lastOffset": x.last_offset,
                "lastStableOffset": x.last_stable_offset,
            }
            for x in f.aborted
        ],
        "commits": st.commits,
        "aborts": st.aborts,
        "commitDurationMs": summarize_durations(st.commit_durations),
        "abortDurationMs": summarize_durations(st.abort_durations),
        "coordinatorSource": f.coordinator_source,
        "problemMessages": f.problems,
    }


def json_lines(facts: list[PartitionTxnFacts]) -> str:
    return "".join(line(head("txnPartition", **partition_object(f))) for f in facts)
