"""The forms of ``kdump txn``: tables (plain, or fitted to a terminal: :mod:`kdump.render.tables`) and JSON lines."""

from __future__ import annotations

import os
from collections.abc import Callable
from typing import Any

from kdump.facts import txn
from kdump.facts.txn import AbortTarget, OpenTransactionFact, PartitionTxnFacts, summarize_durations
from kdump.render.json_lines import head, line
from kdump.render.problem_text import details, sentences
from kdump.render.table_fit import Column
from kdump.render.tables import Section, Verbatim, duration, iso_time, opt, partition_list


def reason(o: OpenTransactionFact) -> str:
    """Why an open transaction is judged hanging or not, in words."""
    v, meta = o.verdict, o.coordinator
    state = "" if meta is None else meta.state
    if v == txn.NO_TRANSACTIONAL_ID:
        return "no transactional id with this producer id at the coordinator"
    if v == txn.CLOSED_AT_COORDINATOR:
        return f"{state} at the coordinator"
    if v == txn.NEWER_EPOCH_AT_COORDINATOR:
        return f"the coordinator is at epoch {None if meta is None else meta.producer_epoch}"
    if v == txn.PARTITION_NOT_AT_COORDINATOR:
        return f"{state} at the coordinator without this partition"
    if v == txn.OPEN_AT_COORDINATOR:
        return f"{state} at the coordinator"
    if v == txn.OLDER_THAN_MAX_TIMEOUT:
        return f"open longer than transaction.max.timeout.ms ({o.max_timeout_ms} ms)"
    return "no coordinator state in the data directory"


def abort_command(a: AbortTarget) -> str:
    """The command that aborts a hanging transaction (one line, never broken)."""
    return (
        f"kafka-transactions.sh --bootstrap-server {a.bootstrap_server} abort --topic {a.topic} "
        f"--partition {a.partition} --start-offset {a.start_offset}"
    )


#: The open transactions' columns (full header, short header, order of leaving out to fit a terminal). In a
#: pipe the age and timeout are milliseconds and their headers say so; on a terminal they are human durations.
def open_columns(human: bool) -> tuple[Column, ...]:
    return (
        Column("PRODUCER-ID", "PID"),
        Column("EPOCH", "EPOCH", drop=3),
        Column("FIRST-OFFSET", "FIRST"),
        Column("LAST-OFFSET", "LAST", drop=4),
        Column("FIRST-TIMESTAMP", "FIRST-TIME", drop=2),
        Column("LAST-TIMESTAMP", "LAST-TIME", drop=6),
        Column("AGE" if human else "AGE-MS", "AGE" if human else "AGE-MS"),
        Column("TRANSACTIONAL-ID", "TXN-ID", right=False, own_line=True),
        Column("COORDINATOR", "STATE", right=False),
        Column("TIMEOUT" if human else "TIMEOUT-MS", "TIMEOUT" if human else "TIMEOUT-MS", drop=5),
        Column("HANGING", "HANG", right=False),
    )


OPEN_COLUMNS = tuple(c.name for c in open_columns(False))


def _name(f: PartitionTxnFacts) -> str:
    return f.directory if f.topic is None else f"{f.topic}-{f.partition}"


def coordinator_text(source: str | None) -> str:
    """Where the coordinator state came from, in one line: ``N __transaction_state partitions in DIR`` rather
    than every directory's path (the fact, ``coordinatorSource`` in JSON, keeps the paths)."""
    if source is None:
        return "no __transaction_state partition in the data directory"
    dirs = source.split(", ")
    parents = sorted({os.path.dirname(d) or "." for d in dirs})
    if len(dirs) == 1:
        return dirs[0]
    return f"{len(dirs)} __transaction_state partitions in {', '.join(parents)}"


def _counted(what: str, n: int, x: dict[str, int | None], d: Callable[[int | None], str], human: bool) -> str:
    """``commits: 7 (duration min 184 ms, median 242 ms, max 637 ms)``; the unit in the label in a pipe."""
    if x["min"] is None:
        return f"{what}: {n}"
    unit = "" if human else " ms"
    return f"{what}: {n} (duration{unit} min {d(x['min'])}, median {d(x['median'])}, max {d(x['max'])})"


def sections(facts: list[PartitionTxnFacts], *, human: bool) -> list[Section]:
    t = iso_time if human else opt
    d = duration if human else opt
    result = []
    quiet = []
    sources = {f.coordinator_source for f in facts}
    shared_source = len(sources) == 1
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
            s.columns = open_columns(human)
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
                        d(o.age_ms),
                        "-" if meta is None else meta.transactional_id,
                        "-" if meta is None else meta.state,
                        "-" if meta is None else d(meta.timeout_ms),
                        "yes" if o.hanging else "no",
                    ]
                )
                if o.hanging:
                    s.flagged.add(i)
        else:
            s.notes.append("no open transaction")
        st = f.stats
        c, a = summarize_durations(st.commit_durations), summarize_durations(st.abort_durations)
        s.notes.append(
            f"{_counted('commits', st.commits, c, d, human)}; {_counted('aborts', st.aborts, a, d, human)}"
        )
        ranges = ", ".join(f"{x.first_offset}-{x.last_offset} (producer {x.producer_id})" for x in f.aborted)
        s.notes.append(f"aborted ranges (.txnindex): {ranges or 'none'}")
        if not shared_source:
            s.notes.append("coordinator: " + coordinator_text(f.coordinator_source))
        for o in f.open:
            if o.hanging:
                s.notes.append(f"HANGING: producer {o.producer_id} from offset {o.first_offset}: {reason(o)}")
                if o.abort is not None:
                    s.notes.append(Verbatim(f"  {abort_command(o.abort)}"))
        s.notes.extend(f"problem: {p}" for p in sentences(f.problems))
        result.append(s)
    if quiet:
        names = partition_list([(f.topic, f.partition, f.directory) for f in quiet])
        result.append(Section(f"{len(quiet)} partition(s) without transactions: {names}"))
    if shared_source and facts:
        result.append(Section("coordinator: " + coordinator_text(facts[0].coordinator_source)))
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
                "verdict": o.verdict,
                "reason": reason(o),
                "abortCommand": None if o.abort is None else abort_command(o.abort),
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
        "problemMessages": sentences(f.problems),
        "problemDetails": details(f.problems),
    }


def json_lines(facts: list[PartitionTxnFacts]) -> str:
    return "".join(line(head("txnPartition", **partition_object(f))) for f in facts)
