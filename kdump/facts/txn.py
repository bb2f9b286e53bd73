"""The facts of ``kdump txn``: a partition's open transactions (:class:`OpenTransactionFact`), its completed
ones in numbers (:class:`CompletedStats`), and the partition's whole view (:class:`PartitionTxnFacts`);
:mod:`kdump.render.txn` writes them."""

from __future__ import annotations

import statistics
from dataclasses import dataclass, field

from kdump.facts.coordinator import TransactionMetadata
from kdump.problem import Problem
from kdump.storage.transaction_index import AbortedTxn

# Why an open transaction is (or is not) judged hanging (OpenTransactionFact.verdict).
NO_TRANSACTIONAL_ID = "no-transactional-id"  # no transactional id with this producer id at the coordinator
CLOSED_AT_COORDINATOR = "closed-at-coordinator"  # the coordinator's state is closed (Empty, Complete*, Dead)
NEWER_EPOCH_AT_COORDINATOR = "newer-epoch-at-coordinator"  # the coordinator is at a later producer epoch
PARTITION_NOT_AT_COORDINATOR = "partition-not-at-coordinator"  # the coordinator lacks this partition
OPEN_AT_COORDINATOR = "open-at-coordinator"  # the coordinator has it open with this partition: not hanging
OLDER_THAN_MAX_TIMEOUT = (
    "older-than-max-timeout"  # no coordinator state; open past transaction.max.timeout.ms
)
NO_COORDINATOR = "no-coordinator"  # no coordinator state in the data directory: not judged


@dataclass(frozen=True)
class AbortTarget:
    """What ``kafka-transactions.sh abort`` needs to end a hanging transaction."""

    bootstrap_server: str
    topic: str
    partition: int | None
    start_offset: int


@dataclass
class OpenTransactionFact:
    producer_id: int
    producer_epoch: int
    first_offset: int
    last_offset: int
    first_timestamp: int | None
    last_timestamp: int
    #: Against the newest record of the partition or ``--now``, from the first timestamp (or the last one).
    age_ms: int | None
    coordinator: TransactionMetadata | None
    hanging: bool
    verdict: str
    #: transaction.max.timeout.ms the age was judged against.
    max_timeout_ms: int
    abort: AbortTarget | None


@dataclass
class CompletedStats:
    commits: int = 0
    aborts: int = 0
    #: Marker timestamp minus the first batch's timestamp, per completed transaction seen whole in the log.
    commit_durations: list[int] = field(default_factory=list)
    abort_durations: list[int] = field(default_factory=list)


@dataclass
class PartitionTxnFacts:
    directory: str
    topic: str | None
    partition: int | None
    log_start_offset: int | None
    log_end_offset: int | None
    high_watermark: int | None
    first_unstable_offset: int | None
    last_stable_offset: int | None
    newest_timestamp: int | None
    now: int | None
    open: list[OpenTransactionFact]
    aborted: list[AbortedTxn]
    stats: CompletedStats
    #: Where the coordinator state came from (None: no ``__transaction_state`` in the data directory).
    coordinator_source: str | None
    problems: list[Problem]

    @property
    def hanging(self) -> list[OpenTransactionFact]:
        return [t for t in self.open if t.hanging]


def summarize_durations(values: list[int]) -> dict[str, int | None]:
    if not values:
        return {"min": None, "median": None, "max": None}
    return {"min": min(values), "median": int(statistics.median(values)), "max": max(values)}
