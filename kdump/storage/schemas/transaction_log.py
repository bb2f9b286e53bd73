"""The records of ``__transaction_state`` (Kafka 4.0's transaction coordinator), in kdump's compact schema text.

Key and value each start with an int16 version; the key holds the transactional id, the value the transaction
metadata (``TransactionStatus`` is the id of a ``TransactionState``).
"""

from __future__ import annotations

from kdump.storage.message_schema import MessageSchema, parse_schemas

SCHEMA_TEXT = """
TransactionLogKey 0 flexible=none
  TransactionalId string 0

TransactionLogValue 0-1 flexible=1+
  ProducerId int64 0+
  PreviousProducerId int64 1+ tag=0 default=-1
  NextProducerId int64 1+ tag=1 default=-1
  ProducerEpoch int16 0+
  TransactionTimeoutMs int32 0+
  TransactionStatus int8 0+
  TransactionPartitions []PartitionsSchema 0+ nullable=0+
    Topic string 0+
    PartitionIds []int32 0+
  TransactionLastUpdateTimestampMs int64 0+
  TransactionStartTimestampMs int64 0+
  ClientTransactionVersion int16 1+ tag=2 default=0
"""

SCHEMAS: dict[str, MessageSchema] = parse_schemas(SCHEMA_TEXT)

#: Newer than Kafka 4.0 (see :mod:`kdump.storage.schemas`): NextProducerEpoch, a tagged field of version 1.
NEWEST_SCHEMA_TEXT = """
TransactionLogValue 0-1 flexible=1+
  ProducerId int64 0+
  PreviousProducerId int64 1+ tag=0 default=-1
  NextProducerId int64 1+ tag=1 default=-1
  ProducerEpoch int16 0+
  NextProducerEpoch int16 1+ tag=3 default=-1
  TransactionTimeoutMs int32 0+
  TransactionStatus int8 0+
  TransactionPartitions []PartitionsSchema 0+ nullable=0+
    Topic string 0+
    PartitionIds []int32 0+
  TransactionLastUpdateTimestampMs int64 0+
  TransactionStartTimestampMs int64 0+
  ClientTransactionVersion int16 1+ tag=2 default=0
"""
NEWEST_SCHEMAS: dict[str, MessageSchema] = {**SCHEMAS, **parse_schemas(NEWEST_SCHEMA_TEXT)}

#: The transaction log's value of Kafka 4.1 (transaction-coordinator/src/main/resources/common/message of the
#: tag 4.1.0; unchanged in 4.2): NextProducerEpoch, a tagged field.  (The key, now record type 0 at version 0,
#: reads and prints as the key above.)
RELEASE_SCHEMA_TEXT: dict[str, str] = {
    "4.1": """
TransactionLogValue 0-1 flexible=1+
  ProducerId int64 0+
  PreviousProducerId int64 1+ tag=0 default=-1
  NextProducerId int64 1+ tag=1 default=-1
  ProducerEpoch int16 0+
  NextProducerEpoch int16 1+ tag=3 default=-1
  TransactionTimeoutMs int32 0+
  TransactionStatus int8 0+
  TransactionPartitions []PartitionsSchema 0+ nullable=0+
    Topic string 0+
    PartitionIds []int32 0+
  TransactionLastUpdateTimestampMs int64 0+
  TransactionStartTimestampMs int64 0+
  ClientTransactionVersion int16 1+ tag=2 default=0
""",
}
#: Record types of 4.1's ``TransactionCoordinatorRecordSerde`` (key and value by the key's first int16).
RELEASE_RECORD_TYPES: dict[str, dict[int, tuple[str, str]]] = {
    "4.1": {0: ("TransactionLogKey", "TransactionLogValue")},
    "4.2": {0: ("TransactionLogKey", "TransactionLogValue")},
}

#: ``TransactionState`` names by id (the ``TransactionStatus`` field).
TRANSACTION_STATES: dict[int, str] = {
    0: "Empty",
    1: "Ongoing",
    2: "PrepareCommit",
    3: "PrepareAbort",
    4: "CompleteCommit",
    5: "CompleteAbort",
    6: "Dead",
    7: "PrepareEpochFence",
}
