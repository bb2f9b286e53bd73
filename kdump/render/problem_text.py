"""The words of a :class:`~kdump.problem.Problem`: the one place a problem of ``ls``, ``txn``, ``retention``,
``diff`` and ``find --group``/``--transactional-id`` becomes a sentence (a table's note, a JSON object's
``problemMessages``), and its JSON object (``problemDetails``, ``anomalyDetails``); and the place ``verify``'s
and ``verify-index``'s problems, notes and what they could not check become theirs (:func:`verify_message`,
:func:`unchecked_message`: the ``message`` of their lines and JSON objects)."""

from __future__ import annotations

from collections.abc import Callable, Iterable
from typing import Any

from kdump import problem as p
from kdump.problem import Problem
from kdump.storage.naming import offset_to_filename


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
    if kind == p.CLEANING_NOT_PREDICTED:
        return f"cleaning not predicted: {x['reason']}"
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


# --- The words of ``kdump verify``'s and ``verify-index``'s problems and notes (their facts are made by
# kdump.analysis.index_verification and kdump.analysis.log_verification; the remote kinds' are below): the
# ``<message>`` of ``<file>: entry <n> (byte <p>): <kind>: <message>`` and of the JSON object's ``message``.

#: What the active segment's notes add (not problems: a running broker's indexes look like this).
ACTIVE_SEGMENT_NOTE = (
    "the active segment (highest base offset): a running broker fills its preallocated index files as the log "
    "grows, a clean shutdown trims them"
)

#: What each log-directory checkpoint's value is called.
CHECKPOINT_VALUES = {
    "recovery-point-offset-checkpoint": "recovery point",
    "replication-offset-checkpoint": "high watermark",
    "log-start-offset-checkpoint": "log start offset",
    "cleaner-offset-checkpoint": "cleaner checkpoint",
}


def _entry_place(x: Problem) -> str:
    """``offset <o> position <p>`` (an offset-index entry) or ``timestamp <t> offset <o>`` (a time-index one)."""
    if "timestamp" in dict(x.data):
        return f"timestamp {x['timestamp']} offset {x['offset']}"
    return f"offset {x['offset']} position {x['log_position']}"


def _offsets(x: Problem) -> str:
    return f"{x['base_offset']}..{x['last_offset']}"


def _zero_tail(x: Problem) -> str:
    tail, count, size = x["entry"], x["slots"], x["entry_size"]
    return f"entries {tail}..{count - 1} ({count - tail} slots, bytes {tail * size}..{count * size - 1}) are zero-filled"


def _unreadable(x: Problem) -> str:
    case = x.get("case")
    if case == "log":
        return f"cannot read it: {x['reason']} (its index files were not compared with it)"
    if case == "directory":
        return f"cannot read the directory: {x['reason']}"
    if case == "read":  # kdump tiered's objects
        return f"cannot read it: {x['reason']}"
    if case == "list":
        return f"cannot list it: {x['reason']}"
    return str(x["reason"])


def _out_of_order(x: Problem) -> str:
    i = x["entry"]
    if "timestamp" in dict(x.data):
        return (
            f"{x['what']} does not increase: timestamp {x['timestamp']} offset {x['offset']} follows entry {i - 1} "
            f"(timestamp {x['previous_timestamp']} offset {x['previous_offset']})"
        )
    return (
        f"{x['what']} does not increase: offset {x['offset']} position {x['log_position']} follows entry {i - 1} "
        f"(offset {x['previous_offset']} position {x['previous_log_position']})"
    )


def _offset_mismatch(x: Problem) -> str:
    case, place = x["case"], _entry_place(x)
    if case == "batch":
        return f"{place}: the batch there has last offset {x['last_offset']} (offsets {_offsets(x)})"
    if case == "append":
        return (
            f"{place}: no batch from that position on, before the next entry's, ends at that offset (an entry "
            "names the last offset of the batch, or of the append, starting there)"
            + (
                ""
                if x.get("batch_position") is None
                else f"; the batch at position {x['batch_position']} has offsets {_offsets(x)}"
            )
        )
    if case == "not-last":
        return (
            f"{place}: not the last offset of a batch (the batch holding it has offsets {_offsets(x)} and max "
            f"timestamp {x['max_timestamp']})"
        )
    if case == "no-batch":
        return f"{place}: no batch holds this offset"
    if case == "undecodable":
        return (
            f"{place}: inside the batch at position {x['batch_position']} (offsets {_offsets(x)}), whose records "
            f"cannot be decoded to check it: {x['message']}"
        )
    first = x["first_record"]
    return (
        f"{place}: neither the last offset of its batch (offsets {_offsets(x)}) nor the first record holding the "
        "batch's max timestamp " + ("(no record holds it)" if first is None else f"(offset {first})")
    )


def _timestamp_mismatch(x: Problem) -> str:
    if x["case"] == "earlier":
        return (
            f"{_entry_place(x)}: an earlier batch (last offset {x['earlier_last_offset']}) has the later timestamp "
            f"{x['max_timestamp']}"
        )
    return f"{_entry_place(x)}: the batch's max timestamp is {x['max_timestamp']}"


def _past_end(x: Problem) -> str:
    end_offset = x["end_offset"]
    if "timestamp" in dict(x.data):
        return f"{_entry_place(x)}: beyond the last batch of the log" + (
            "" if end_offset is None else f" (last offset {end_offset})"
        )
    return (
        f"{_entry_place(x)}: beyond the last batch of the log (it ends at byte {x['log_end']}"
        + ("" if end_offset is None else f", offset {end_offset}")
        + ")"
    )


def _txn_index(x: Problem) -> str:
    if x.get("case") == "partial":
        return (
            f"{x['bytes']} bytes at the end are a partial {x['entry_size']}-byte entry (Kafka ignores them)"
        )
    return str(x["message"])


def _log(x: Problem) -> str:
    if x.get("case") == "torn":
        return f"the last {x['bytes']} bytes are not a whole batch (a torn write; a broker truncates them on recovery)"
    return str(x["message"])


def _crc(x: Problem) -> str:
    if x.get("case") == "short":
        return f"{x['size']} bytes is shorter than a batch header ({x['header']})"
    return f"stored CRC {x['stored']}, computed {x['computed']} over the batch"


def _segment_name(x: Problem) -> str:
    if x["case"] == "next":
        return f"last offset {x['offset']} is at or beyond the next segment's base offset {x['next_base']}"
    return (
        f"offsets {x['offset']}..{x['last_offset']}: below the segment's base offset {x['segment_base']} (its file "
        "name)"
    )


def _offset_order(x: Problem) -> str:
    if x["case"] == "segment":
        return (
            f"first offset {x['offset']} does not follow the previous segment's last offset {x['previous']}"
        )
    return f"offsets {x['offset']}..{x['last_offset']} do not follow the previous batch's last offset {x['previous']}"


def _producer_snapshot(x: Problem) -> str:
    case = x.get("case")
    if case == "beyond-end":
        return (
            f"taken at offset {x['offset']}, beyond the log end offset {x['log_end_offset']} (the log was truncated "
            "after it; a broker deletes it on start-up)"
        )
    if case == "not-below":
        return (
            f"producer {x['producer_id']}: last offset {x['offset']} is not below the snapshot's offset "
            f"{x['snapshot_offset']}"
        )
    if case == "mismatch":
        return (
            f"producer {x['producer_id']} epoch {x['producer_epoch']} last sequence {x['last_sequence']} at offset "
            f"{x['offset']}: the log's batch ending there has producer {x['log_producer_id']} epoch "
            f"{x['log_producer_epoch']} last sequence {x['log_last_sequence']}"
        )
    return str(x["message"])


def _txn_index_mismatch(x: Problem) -> str:
    if x["case"] == "marker":
        return (
            f"the ABORT marker of producer {x['producer_id']} at offset {x['offset']} has no .txnindex entry, and its "
            "transaction wrote to this partition (consumers reading committed data would see the aborted records)"
        )
    aborted, marker = x["aborted"], x["marker_producer_id"]
    return (
        f"{aborted}: no ABORT marker of producer {aborted.producer_id} at offset {x['offset']} in the log"
        + ("" if marker is None else f" (the marker there is producer {marker}'s)")
    )


def _leader_epoch(x: Problem) -> str:
    case = x.get("case")
    if case == "order":
        i = x["entry"]
        return (
            f"entry {i} (epoch {x['epoch']}, start offset {x['offset']}) does not follow entry {i - 1} (epoch "
            f"{x['previous_epoch']}, start offset {x['previous_start_offset']}): epochs must increase and start "
            "offsets never decrease"
        )
    if case == "beyond-end":
        return f"epoch {x['epoch']} starts at offset {x['offset']}, beyond the log end offset {x['log_end_offset']}"
    if case == "unlisted":
        return f"batches carry leader epoch {x['epoch']} (from offset {x['offset']}), which the file does not list"
    if case == "late":
        return (
            f"epoch {x['epoch']} starts at offset {x['start_offset']}, but a batch of that epoch is at offset "
            f"{x['offset']}"
        )
    return str(x["message"])


def _snapshot_file(x: Problem) -> str:
    case = x.get("case")
    if case == "crc":
        return f"stored CRC {x['stored']}, computed {x['computed']}"
    if case == "torn":
        return f"the last {x['bytes']} bytes are not a whole batch (a torn or truncated file)"
    return str(x["message"])


def _active_segment(x: Problem) -> str:
    if x["about"] == "zero-tail":
        said = f"{_zero_tail(x)}: preallocated, not written yet"
    else:
        said = f"{x['message']} (the sanity check reads the last slot, a preallocated zero one)"
    return f"{said}; {ACTIVE_SEGMENT_NOTE}"


def _newer_record(x: Problem) -> str:
    count = x["count"]
    return f"{count} record{'s' if count != 1 else ''} not decoded: {x['message']} (first at offset {x['offset']})"


_VERIFY_WORDS: dict[str, Callable[[Problem], str]] = {
    "unreadable": _unreadable,
    "sanity-check": lambda x: str(x["message"]),
    "bad-length": lambda x: (
        f"{x['length']} bytes is not a multiple of {x['entry_size']}: the last {x['length'] % x['entry_size']} bytes "
        "are not a whole entry"
    ),
    "zero-tail": lambda x: (
        f"{_zero_tail(x)}: a preallocated index that was never trimmed (not shut down cleanly, or copied from a "
        "running broker)"
    ),
    "out-of-order": _out_of_order,
    "not-batch-start": lambda x: (
        f"{_entry_place(x)}: no batch starts there (the batch around it starts at position {x['batch_position']}, "
        f"offsets {_offsets(x)})"
    ),
    "offset-mismatch": _offset_mismatch,
    "timestamp-mismatch": _timestamp_mismatch,
    "past-end": _past_end,
    "missing-index": lambda x: (
        f"missing: {offset_to_filename(x['base_offset'])} has no {x['suffix']} (a broker rebuilds it on start-up)"
    ),
    "orphaned-index": lambda x: (
        f"no {offset_to_filename(x['base_offset'])} beside it (a broker deletes index files without a log segment on start-up)"
    ),
    "txn-index": _txn_index,
    "log": _log,
    "crc": _crc,
    "magic": lambda x: f"magic {x['magic']} (Kafka knows 0, 1 and 2); the batch is not checked further",
    "segment-name": _segment_name,
    "offset-order": _offset_order,
    "offset-gap": lambda x: (
        f"offsets {x['offset']}..{x['last_offset']} are missing"
        + ("" if x["policy"] is None else f" (cleanup.policy={x['policy']})")
    ),
    "decode": lambda x: ("control batch: " if x.get("case") == "control" else "") + str(x["message"]),
    "segment-size": lambda x: (
        f"{x['size']} bytes: larger than any segment Kafka writes (segment.bytes is an int); only the first "
        f"{x['read']} bytes were checked, as Kafka reads them"
    ),
    "producer-snapshot": _producer_snapshot,
    "txn-index-mismatch": _txn_index_mismatch,
    "checkpoint": lambda x: (
        f"{x['topic']}-{x['partition']}: {CHECKPOINT_VALUES[x['checkpoint']]} {x['offset']} is beyond the log end "
        f"offset {x['log_end_offset']}"
    ),
    "leader-epoch": _leader_epoch,
    "kraft-snapshot": _snapshot_file,
    "bootstrap-checkpoint": _snapshot_file,
    "absent-partition": lambda x: (
        f"{x['topic']}-{x['partition']}: {CHECKPOINT_VALUES[x['checkpoint']]} {x['offset']}, but the log directory "
        f"has no {x['topic']}-{x['partition']} directory (a broker ignores the entry: its data are gone)"
    ),
    "active-segment": _active_segment,
    "newer-record": _newer_record,
}


# --- The words of ``kdump tiered``'s problems (kdump.analysis.tiered, kdump.commands.tiered), which ``kdump
# verify --remote-root`` reports as its ``remote-<kind>`` problems: ``<object>: <kind>: <message>``.


def _segment(x: Problem) -> str:
    return f"segment {x['segment_id']} (offsets {x['start_offset']}-{x['end_offset']})"


def _unfinished(x: Problem) -> str:
    state = x["state"]
    what = "a copy" if state == "COPY_SEGMENT_STARTED" else "a deletion"
    return f"{_segment(x)} is still {state}: {what} that did not finish (or is under way now)"


def _remote_size(x: Problem) -> str:
    case, size, expected = x["case"], x["size"], x["expected"]
    if case == "chunks":
        return f"{size} bytes, but its manifest's {x['chunks']} chunks make {expected}"
    if case == "indexes":
        return f"{size} bytes, but its manifest's indexes end at byte {expected}"
    if case == "original":
        return f"originalFileSize {size}, but the metadata says segmentSizeInBytes {expected}"
    return f"{size} bytes, but the metadata says segmentSizeInBytes {expected}"


def _orphaned_object(x: Problem) -> str:
    if x["case"] == "not-a-segment":
        return "not a segment file"
    return (
        f"{x['count']} file(s) of segment {x['segment_id']}, which the metadata does not know (a failed copy's "
        "leftovers, or a deletion that finished in the metadata but not in the store)"
    )


def _remote_gap(x: Problem) -> str:
    if x["case"] == "local":
        return (
            f"offsets {x['first']}-{x['last']} are neither in remote storage (it ends at {x['remote_end']}) nor "
            f"local (it starts at {x['local_start']})"
        )
    return (
        f"offsets {x['first']}-{x['last']} are in no remote segment (between {x['before']} and {x['after']})"
    )


def _epochs(pairs: Iterable[tuple[int, int]]) -> str:
    return ", ".join(f"{e}@{o}" for e, o in pairs) or "none"


def _metadata_record(x: Problem) -> str:
    """A ``__remote_log_metadata`` record Kafka's ``RemoteLogMetadataCache`` refuses, or one that cannot be read
    (:class:`kdump.analysis.remote_log_metadata.MetadataProblem`'s cases)."""
    case = x["record"]
    if case == "added-state":
        return f"segment {x['segment_id']} added in state {x['state']}, not COPY_SEGMENT_STARTED"
    if case == "added-again":
        return f"segment {x['segment_id']} added again while {x['state']}"
    if case == "no-segment":
        return f"update to {x['state']} of segment {x['segment_id']}, which no earlier record added"
    if case == "transition":
        return f"segment {x['segment_id']}: invalid transition {x['previous']} -> {x['state']} (Kafka ignores it)"
    if case == "update-state":
        return f"segment {x['segment_id']}: an update cannot set {x['state']}"
    if case == "directory":
        return f"cannot read the directory: {x['reason']}"
    if case == "no-value":
        return "a record without a value"
    if case == "undecodable":
        return f"cannot decode it: {x['reason']}"
    return str(x["message"])


def _remote_metadata(x: Problem) -> str:
    case = x.get("case")
    if case == "record":
        return f"offset {x['record_offset']}: {_metadata_record(x)}"
    if case == "custom-metadata":
        return (
            f"segment {x['segment_id']}: its custom metadata is not the plugin's ({x['reason']}); the default "
            "object keys are used"
        )
    if case == "none-found":
        return f"no {x['topic']} partition found: what is in remote storage cannot be known"
    if case == "topic-id":
        return (
            f"the metadata's topic id for {x['topic']}-{x['partition']} is not partition.metadata's (the topic was "
            "deleted and re-created?)"
        )
    return str(x["message"])


#: What each of Aiven's indexes is called in an ``indexes`` problem that could not parse it.
_PARSED_INDEXES = {"producerSnapshot": "producer snapshot", "leaderEpoch": "leader-epoch checkpoint"}


def _remote_indexes(x: Problem) -> str:
    """One index out of an Aiven ``.indexes`` (:class:`kdump.storage.aiven_segment.IndexFault`'s cases)."""
    fault, index = x["fault"], x["index"]
    if fault == "absent":
        return f"the manifest has no {index} index"
    if fault == "length":
        return f"{index} index: {x['bytes']} bytes, not whole {x['width']}-byte entries"
    if fault == "order":
        return (
            f"{index} index: entry {x['index_entry']} (relative offset {x['relative_offset']}, position "
            f"{x['log_position']}) does not follow {x['previous']} inside the {x['segment_size']}-byte segment"
        )
    if fault == "parse":
        return f"{_PARSED_INDEXES.get(index, index)}: {x['message']}"
    return f"{index} index: {x['message']}"


_TIERED_WORDS: dict[str, Callable[[Problem], str]] = {
    "missing-object": lambda x: (
        f"{_segment(x)} was copied (COPY_SEGMENT_FINISHED) but its {x['suffix']} is not in remote storage"
    ),
    "size": _remote_size,
    "unfinished": _unfinished,
    "orphaned-object": _orphaned_object,
    "gap": _remote_gap,
    "overlap": lambda x: (
        f"offsets {x['first']}-{x['last']} are in two remote segments ({x['before']} and {x['after']})"
    ),
    "offset-range": lambda x: (
        f"its batches hold offsets {x['first']}-{x['last']}, the metadata says {x['start_offset']}-{x['end_offset']}"
    ),
    "leader-epochs": lambda x: (
        f"its batches' leader epochs (epoch@first offset) are {_epochs(x['epochs'])}, the metadata's "
        f"segmentLeaderEpochs {_epochs(x['expected'])}"
    ),
    "log": lambda x: (
        f"the last {x['bytes']} bytes are not a whole batch"
        if x.get("case") == "partial"
        else str(x["message"])
    ),
    "metadata": _remote_metadata,
    "manifest": lambda x: str(x["message"]),
    "indexes": _remote_indexes,
}

_VERIFY_WORDS.update({f"remote-{kind}": words for kind, words in _TIERED_WORDS.items()})


def tiered_message(x: Problem) -> str:
    """The words of a problem of ``kdump tiered`` (``<object>: <kind>: <message>``): its kinds are verify's
    ``remote-`` ones without the prefix, and ``unreadable``."""
    if x.kind == p.UNREADABLE:
        return _unreadable(x)
    return _TIERED_WORDS[x.kind](x)


def verify_message(x: Problem) -> str:
    """The words of a problem (or note) of ``kdump verify`` / ``verify-index``: the part after its kind."""
    words = _VERIFY_WORDS.get(x.kind)
    if words is not None:
        return words(x)
    message = x.get("message")  # an error's kind
    return str(message) if message is not None else x.kind


def _some(count: int, firsts: list[str]) -> str:
    """The first few of ``count`` things, ``, ...`` when there are more."""
    return ", ".join(firsts) + (", ..." if count > len(firsts) else "")


def _gaps_not_judged(x: Problem) -> str:
    policy, compacted = x["policy"], x["compacted"]
    why = (
        f"the topic is compacted (cleanup.policy={policy})"
        if compacted and policy is not None
        else "the log cleaner has been here (compaction leaves gaps)"
        if compacted
        else "the topic's cleanup.policy is not known (compaction leaves gaps)"
    )
    first = _some(x["count"], [f"{a}..{b}" for a, b in x["gaps"]])
    return f"{x['count']} offset gaps ({first}) not judged: {why}; --gaps reports them"


def _stale_checkpoint_entries(x: Problem) -> str:
    count = x["count"]
    first = _some(
        count, [f"{t}-{p} ({CHECKPOINT_VALUES[name]} {value}, {name})" for t, p, name, value in x["entries"]]
    )
    return (
        f"{count} checkpoint entr{'ies' if count != 1 else 'y'} for partitions without a directory not judged: "
        f"{first}; Kafka rewrites the high watermark and cleaner checkpoints only while the log directory holds "
        "partitions (this one holds none), so an entry there may outlive a deleted partition"
    )


_UNCHECKED_WORDS: dict[str, Callable[[Problem], str]] = {
    "some-segments": lambda x: (
        "only some segments were given: the checks across segments and of the partition's state files were not made"
    ),
    "pending-deletion": lambda x: (
        "pending deletion (a -delete directory: a broker loads it only to delete it): its leader-epoch-checkpoint "
        "was not compared with the batches"
    ),
    "gaps-not-judged": _gaps_not_judged,
    "no-last-log": lambda x: (
        f"the last segment ({offset_to_filename(x['base_offset'])}) has index files but no .log: the log end offset "
        "is not known, so checkpoints and epochs were not compared with it"
    ),
    "unread-logs": lambda x: (
        f"{x['count']} .log file(s) could not be read: the log end offset is not known, so checkpoints, producer "
        "snapshots and epochs were not compared with it"
    ),
    "snapshot-batches-gone": lambda x: (
        f"{x['count']} producer-snapshot entries name batches no longer in the log (removed by retention or "
        "compaction)" + ("" if x["log_start"] is None else f"; the log starts at offset {x['log_start']}")
    ),
    "txn-markers-gone": lambda x: (
        f"{x['count']} .txnindex entries name ABORT markers outside the segments read (deleted by retention, or "
        "their .log is missing)"
    ),
    "aborts-not-judged": lambda x: (
        f"{x['count']} ABORT marker{'s' if x['count'] != 1 else ''} without a .txnindex entry not judged: no batch "
        f"of the producer is left before it (the log starts at offset {x['log_start']}), so whether its "
        "transaction wrote here, and needed an entry, is not known"
    ),
    "no-log-dir": lambda x: (
        "no log directory above it (no meta.properties or checkpoint files): the recovery point, high watermark "
        "and log start offset were not compared with the log"
    ),
    "no-partition-name": lambda x: (
        "its name is not <topic>-<partition>: its log directory's checkpoints do not name it"
    ),
    "stale-checkpoint-entries": _stale_checkpoint_entries,
}


def unchecked_message(x: Problem) -> str:
    """Why ``kdump verify`` could not check something (an ``Unchecked``): the ``<why>`` of ``<path>: not checked:
    <why>``."""
    return _UNCHECKED_WORDS[x.kind](x)
