"""Where a consumer group or a transactional id lives, and what its coordinator partition says about it.

Kafka maps a group id to a partition of ``__consumer_offsets`` (``GroupCoordinator.partitionFor``) and a
transactional id to a partition of ``__transaction_state`` (``TransactionStateManager.partitionFor``) the same
way: ``Utils.abs(id.hashCode()) % partitionCount``, with Java's ``String.hashCode`` (over UTF-16 code units, in
32-bit arithmetic) and ``Utils.abs`` (which maps ``Integer.MIN_VALUE`` to 0).  The partition count is the
topic's, from the metadata log (``PartitionRecord``\\s), else ``--partitions``, else the broker default (50:
``offsets.topic.num.partitions``, ``transaction.state.log.num.partitions``).

The coordinator's state is rebuilt the way the coordinator loads its partition: records in offset order, the
last value of a key wins, a tombstone removes it; offsets committed inside a transaction count only once the
transaction's COMMIT marker is read (``GroupMetadataManager``'s pending transactional offsets).  The records are
decoded with :mod:`kdump.storage.internal_topics` (the decoders of ``kdump files``).
"""

from __future__ import annotations

import os
from dataclasses import replace
from typing import Any

from kdump.analysis.topic_config import read_cluster_config
from kdump.errors import KdumpError
from kdump.exit_status import ExitStatus
from kdump.facts.coordinator import (
    CommittedOffset,
    CoordinatorLookup,
    GroupState,
    PartitionCount,
    TransactionMetadata,
)
from kdump.facts.report import ReportSink, hand_over
from kdump.jdk.collections import java_string_hash
from kdump.problem import Problem, problem_of
from kdump.storage import locations
from kdump.storage.control_record_type import ControlRecordType, parse_type_id
from kdump.storage.internal_topics import InternalTopicError, decode_key_value
from kdump.storage.local_log import LocalLog
from kdump.storage.schemas.transaction_log import TRANSACTION_STATES

CONSUMER_OFFSETS = "__consumer_offsets"
TRANSACTION_STATE = "__transaction_state"
#: Kafka's defaults of ``offsets.topic.num.partitions`` and ``transaction.state.log.num.partitions``.
DEFAULT_PARTITIONS = 50

__all__ = [
    "CONSUMER_OFFSETS",
    "TRANSACTION_STATE",
    "CommittedOffset",
    "GroupState",
    "PartitionCount",
    "TransactionMetadata",
    "java_string_hash",
    "partition_count",
    "partition_for",
    "read_group_state",
    "read_group_states",
    "read_transaction_states",
    "utils_abs",
]


def utils_abs(n: int) -> int:
    """Kafka's ``Utils.abs``: ``Integer.MIN_VALUE`` gives 0, anything else its absolute value."""
    return 0 if n == -(1 << 31) else abs(n)


def partition_for(key: str, partitions: int) -> int:
    """The coordinator partition of a group id or transactional id."""
    return utils_abs(java_string_hash(key)) % partitions


def partition_count(log_dir: str, topic: str, given: int | None = None) -> PartitionCount:
    """The partition count of ``topic`` for ``log_dir``: ``given``, else the metadata log's, else the default."""
    local: list[int] = []
    try:
        for name in locations.listdir(log_dir):
            prefix, _, number = name.rpartition("-")
            if prefix == topic and number.isdigit():
                local.append(int(number))
    except OSError:
        pass
    found = tuple(sorted(local))
    if given is not None:
        return PartitionCount(given, "--partitions", found)
    try:
        config = read_cluster_config(log_dir)
    except KdumpError:
        config = None
    if config is not None:
        count = config.partition_count(topic)
        if count is not None:
            return PartitionCount(count, "metadata log", found)
    return PartitionCount(DEFAULT_PARTITIONS, "default", found)


def _records(directory: str, problems: list[Problem]) -> Any:
    """``(batch, record)`` of every data record of the partition in offset order, and each control batch as
    ``(batch, None)``."""
    log = LocalLog.scan(directory)
    for segment in log.log_segments:
        position = None
        try:
            with segment.open_log() as records:
                for batch in records.batches():
                    position = batch.position
                    if batch.is_control_batch:
                        yield batch, None
                        continue
                    for record in batch.records():
                        yield batch, record
        except KdumpError as e:
            problems.append(problem_of(e.located(segment.log_path, position)))


def _marker(batch: Any) -> ControlRecordType | None:
    for record in batch.records():
        try:
            return ControlRecordType.from_type_id(parse_type_id(record.key))
        except (KdumpError, ValueError):
            return None
    return None


def read_group_state(directory: str, group: str) -> GroupState:
    """The committed offsets and group metadata of ``group`` in the ``__consumer_offsets`` partition
    ``directory``."""
    problems: list[Problem] = []
    state = _replay_groups(directory, problems, group).get(group) or GroupState(group, directory)
    state.problems = problems
    return state


def read_group_states(directory: str, problems: list[Problem] | None = None) -> list[GroupState]:
    """Every group of the ``__consumer_offsets`` partition ``directory`` (``kdump report``), by name: the same
    replay as :func:`read_group_state`, for all groups in one pass."""
    sink: list[Problem] = [] if problems is None else problems
    return sorted(_replay_groups(directory, sink, None).values(), key=lambda g: g.group)


def _replay_groups(directory: str, problems: list[Problem], wanted: str | None) -> dict[str, GroupState]:
    """The groups of ``directory`` (only ``wanted`` when given) as the coordinator loads them."""
    states: dict[str, GroupState] = {}
    committed: dict[str, dict[tuple[str, int], CommittedOffset | None]] = {}
    # producer id -> group -> the offsets its open transaction committed
    pending: dict[int, dict[str, dict[tuple[str, int], CommittedOffset | None]]] = {}

    def state_of(group: str) -> GroupState:
        state = states.get(group)
        if state is None:
            state = states[group] = GroupState(group, directory)
        return state

    for batch, record in _records(directory, problems):
        if record is None:
            if batch.producer_id in pending:  # a legacy batch has none (-1)
                writes = pending.pop(batch.producer_id)
                if _marker(batch) is ControlRecordType.COMMIT:
                    for group, offsets in writes.items():
                        committed.setdefault(group, {}).update(offsets)
            continue
        try:
            decoded = decode_key_value("offsets", record.key, record.value, newest=True)
        except (InternalTopicError, KdumpError):
            continue
        if decoded.key is None:
            continue
        group = decoded.key.get("group")
        if not isinstance(group, str) or (wanted is not None and group != wanted):
            continue
        if decoded.kind == "GroupMetadata":
            state_of(group).metadata = None if decoded.value is None else decoded.value.to_dict()
            continue
        if decoded.kind != "OffsetCommit":
            continue
        state_of(group)
        tp = (decoded.key["topic"], decoded.key["partition"])
        value = decoded.value
        entry = (
            None
            if value is None
            else CommittedOffset(
                tp[0],
                tp[1],
                value["offset"],
                value.get("leaderEpoch", -1),
                value.get("metadata", ""),
                value.get("commitTimestamp", -1),
                record.offset,
            )
        )
        if batch.is_transactional:
            pending.setdefault(batch.producer_id, {}).setdefault(group, {})[tp] = entry
        else:
            committed.setdefault(group, {})[tp] = entry
    for group, state in states.items():
        state.offsets = sorted(
            (c for c in committed.get(group, {}).values() if c is not None),
            key=lambda c: (c.topic, c.partition),
        )
        state.pending_transactional = sum(len(w.get(group, {})) for w in pending.values())
    return states


def log_end_offset(directory: str) -> int | None:
    """The log end offset of the partition ``directory`` (Kafka's ``LocalLog.logEndOffset`` as a broker
    recovers it at start-up, ``LogSegment.readNextOffset``): the next offset after the last batch of the last
    segment holding one, else the active segment's base offset; None when the directory is missing or cannot
    be read (an unreadable partition has no log end kdump can state)."""
    try:
        log = LocalLog.scan_segments(directory)
    except OSError:
        return None
    bases = log.log_base_offsets
    try:
        for i in range(len(bases) - 1, -1, -1):
            last = None
            with log.log_segment(i).open_log() as records:
                for batch in records.batches():
                    last = batch
            if last is not None:
                return last.next_offset
    except KdumpError:
        return None
    return bases[-1] if bases else None


def read_transaction_states(
    directory: str, problems: list[Problem] | None = None
) -> dict[str, TransactionMetadata]:
    """Transactional id -> its latest state in the ``__transaction_state`` partition ``directory``."""
    found: dict[str, TransactionMetadata] = {}
    sink: list[Problem] = [] if problems is None else problems
    for _batch, record in _records(directory, sink):
        if record is None:
            continue
        try:
            decoded = decode_key_value("transaction-log", record.key, record.value, newest=True)
        except (InternalTopicError, KdumpError):
            continue
        if decoded.key is None:
            continue
        tid = decoded.key["TransactionalId"]
        v = decoded.value
        if v is None:
            old = found.get(tid)
            found[tid] = TransactionMetadata(
                tid,
                -1 if old is None else old.producer_id,
                -1 if old is None else old.producer_epoch,
                -1 if old is None else old.timeout_ms,
                "Removed",
                (),
                -1,
                -1,
                record.offset,
                removed=True,
            )
            continue
        parts = tuple(
            (p["Topic"], pid) for p in (v.get("TransactionPartitions") or []) for pid in p["PartitionIds"]
        )
        status = v["TransactionStatus"]
        found[tid] = TransactionMetadata(
            tid,
            v["ProducerId"],
            v["ProducerEpoch"],
            v["TransactionTimeoutMs"],
            TRANSACTION_STATES.get(status, f"Unknown({status})"),
            parts,
            v["TransactionLastUpdateTimestampMs"],
            v["TransactionStartTimestampMs"],
            record.offset,
        )
    return found


def run(
    sink: ReportSink[CoordinatorLookup],
    path: str,
    *,
    group: str | None = None,
    transactional_id: str | None = None,
    partitions: int | None = None,
) -> ExitStatus:
    """The lookup of ``group`` or ``transactional_id`` (:func:`lookup`) to ``sink``; PROBLEMS when the log
    directory does not hold it."""
    [result] = hand_over(
        sink, [lookup(path, group=group, transactional_id=transactional_id, partitions=partitions)]
    )
    return ExitStatus.OK if result.found else ExitStatus.PROBLEMS


def lookup(
    path: str, *, group: str | None = None, transactional_id: str | None = None, partitions: int | None = None
) -> CoordinatorLookup:
    """Resolve ``group`` or ``transactional_id`` against the data directory ``path`` (a log directory, or one
    of its coordinator partition directories)."""
    topic = CONSUMER_OFFSETS if group is not None else TRANSACTION_STATE
    key = group if group is not None else transactional_id
    assert key is not None
    log_dir = os.path.abspath(path)
    if os.path.basename(log_dir).startswith(topic + "-"):
        log_dir = os.path.dirname(log_dir)
    count = partition_count(log_dir, topic, partitions)
    h = java_string_hash(key)
    p = utils_abs(h) % count.count
    directory = os.path.join(log_dir, f"{topic}-{p}")
    result = CoordinatorLookup(
        "group" if group is not None else "transactionalId",
        key,
        topic,
        h,
        p,
        count,
        directory if locations.isdir(directory) else None,
    )
    if result.directory is None:
        return result
    if group is not None:
        result.group = read_group_state(result.directory, group)
        result.group.offsets = [
            replace(c, log_end_offset=log_end_offset(os.path.join(log_dir, f"{c.topic}-{c.partition}")))
            for c in result.group.offsets
        ]
        result.problems = result.group.problems
    else:
        states = read_transaction_states(result.directory, result.problems)
        result.transaction = states.get(key)
    return result
