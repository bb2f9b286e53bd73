"""The facts of ``kdump find --group`` / ``--transactional-id``: which coordinator partition holds a group or
transactional id, and what its log says of it (committed offsets, the group's state, the transaction's
metadata); :mod:`kdump.render.coordinator` writes them."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from kdump.problem import Problem


@dataclass(frozen=True)
class PartitionCount:
    count: int
    #: Where the count comes from: ``--partitions``, ``metadata log``, ``default``.
    source: str
    #: Partition directories of the topic found in the data directory.
    local_partitions: tuple[int, ...] = ()


@dataclass(frozen=True)
class CommittedOffset:
    topic: str
    partition: int
    offset: int
    leader_epoch: int
    metadata: str
    commit_timestamp: int
    #: The offset of the record in the coordinator partition.
    record_offset: int
    #: The committed partition's log end offset, when its directory is in the data directory (None: not
    #: there, or unreadable).
    log_end_offset: int | None = None

    @property
    def lag(self) -> int | None:
        """``kafka-consumer-groups.sh --describe``'s LAG (``ConsumerGroupCommand.getLag``): the log end offset
        minus the committed offset, unknown for a committed offset of -1 or an unknown log end."""
        if self.log_end_offset is None or self.offset == -1:
            return None
        return self.log_end_offset - self.offset


@dataclass
class GroupState:
    group: str
    directory: str
    offsets: list[CommittedOffset] = field(default_factory=list)
    #: ``GroupMetadata`` (classic groups): protocol type, generation, protocol, leader, members; None if absent.
    metadata: dict[str, Any] | None = None
    #: Offsets committed in transactions that are still open (not yet visible).
    pending_transactional: int = 0
    problems: list[Problem] = field(default_factory=list)


@dataclass(frozen=True)
class TransactionMetadata:
    """The latest ``__transaction_state`` value of a transactional id (None fields: a tombstone)."""

    transactional_id: str
    producer_id: int
    producer_epoch: int
    timeout_ms: int
    state: str
    partitions: tuple[tuple[str, int], ...]
    last_update_timestamp: int
    start_timestamp: int
    record_offset: int
    #: The id was removed (a tombstone: the coordinator expired it).
    removed: bool = False


@dataclass
class CoordinatorLookup:
    """Where a group or transactional id lives and what its coordinator partition holds about it."""

    kind: str  # "group" or "transactionalId"
    key: str
    topic: str
    hash_code: int
    partition: int
    count: PartitionCount
    #: The coordinator partition's directory in the data directory, None when this broker does not hold it.
    directory: str | None
    group: GroupState | None = None
    transaction: TransactionMetadata | None = None
    problems: list[Problem] = field(default_factory=list)

    @property
    def found(self) -> bool:
        if self.group is not None:
            return bool(self.group.offsets) or self.group.metadata is not None
        return self.transaction is not None
