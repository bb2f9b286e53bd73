"""The records of ``__share_group_state`` (Kafka 4.0's share coordinator), in kdump's compact schema text."""

from __future__ import annotations

from kdump.storage.message_schema import MessageSchema, parse_schemas

SCHEMA_TEXT = """
ShareSnapshotKey 0 flexible=none
  GroupId string 0
  TopicId uuid 0
  Partition int32 0

ShareSnapshotValue 0 flexible=0+
  SnapshotEpoch uint16 0
  StateEpoch int32 0+
  LeaderEpoch int32 0+
  StartOffset int64 0
  StateBatches []StateBatch 0
    FirstOffset int64 0
    LastOffset int64 0
    DeliveryState int8 0
    DeliveryCount int16 0

ShareUpdateKey 1 flexible=none
  GroupId string 1
  TopicId uuid 1
  Partition int32 1

ShareUpdateValue 0 flexible=0+
  SnapshotEpoch uint16 0
  LeaderEpoch int32 0+
  StartOffset int64 0
  StateBatches []StateBatch 0
    FirstOffset int64 0
    LastOffset int64 0
    DeliveryState int8 0
    DeliveryCount int16 0
"""

#: Record type → (key schema, value schema), as ``ShareCoordinatorRecordSerde`` maps them.
RECORD_TYPES: dict[int, tuple[str, str]] = {
    0: ("ShareSnapshotKey", "ShareSnapshotValue"),
    1: ("ShareUpdateKey", "ShareUpdateValue"),
}

SCHEMAS: dict[str, MessageSchema] = parse_schemas(SCHEMA_TEXT)

#: Newer than Kafka 4.0 (see :mod:`kdump.storage.schemas`): the values changed their layout at version 0 after
#: 4.0 (early access there): SnapshotEpoch widened to int32, creation and write timestamps, a tagged count.
NEWEST_SCHEMA_TEXT = """
ShareSnapshotValue 0 flexible=0+
  SnapshotEpoch int32 0+
  StateEpoch int32 0+
  LeaderEpoch int32 0+
  StartOffset int64 0+
  DeliveryCompleteCount int32 0+ tag=0 default=-1
  CreateTimestamp int64 0+
  WriteTimestamp int64 0+
  StateBatches []StateBatch 0+
    FirstOffset int64 0+
    LastOffset int64 0+
    DeliveryState int8 0+
    DeliveryCount int16 0+

ShareUpdateValue 0 flexible=0+
  SnapshotEpoch int32 0+
  LeaderEpoch int32 0+
  StartOffset int64 0+
  DeliveryCompleteCount int32 0+ tag=0 default=-1
  StateBatches []StateBatch 0+
    FirstOffset int64 0+
    LastOffset int64 0+
    DeliveryState int8 0+
    DeliveryCount int16 0+
"""
NEWEST_SCHEMAS: dict[str, MessageSchema] = {**SCHEMAS, **parse_schemas(NEWEST_SCHEMA_TEXT)}


#: The share coordinator's values of Kafka 4.1 and 4.2 (share-coordinator/src/main/resources/common/message
#: of the tags 4.1.0 and 4.2.0-rc1): 4.1 widened SnapshotEpoch to int32 and added the timestamps at version 0,
#: so 4.0's early-access records no longer read; 4.2 added the tagged DeliveryCompleteCount.  (4.1's
#: renumbered ``ShareUpdateKey``, version 0 instead of 1, reads and prints as the key above.)
RELEASE_SCHEMA_TEXT: dict[str, str] = {
    "4.1": """
ShareSnapshotValue 0 flexible=0+
  SnapshotEpoch int32 0+
  StateEpoch int32 0+
  LeaderEpoch int32 0+
  StartOffset int64 0+
  CreateTimestamp int64 0+
  WriteTimestamp int64 0+
  StateBatches []StateBatch 0+
    FirstOffset int64 0+
    LastOffset int64 0+
    DeliveryState int8 0+
    DeliveryCount int16 0+

ShareUpdateValue 0 flexible=0+
  SnapshotEpoch int32 0+
  LeaderEpoch int32 0+
  StartOffset int64 0+
  StateBatches []StateBatch 0+
    FirstOffset int64 0+
    LastOffset int64 0+
    DeliveryState int8 0+
    DeliveryCount int16 0+
""",
    "4.2": """
ShareSnapshotValue 0 flexible=0+
  SnapshotEpoch int32 0+
  StateEpoch int32 0+
  LeaderEpoch int32 0+
  StartOffset int64 0+
  DeliveryCompleteCount int32 0+ tag=0 default=-1
  CreateTimestamp int64 0+
  WriteTimestamp int64 0+
  StateBatches []StateBatch 0+
    FirstOffset int64 0+
    LastOffset int64 0+
    DeliveryState int8 0+
    DeliveryCount int16 0+

ShareUpdateValue 0 flexible=0+
  SnapshotEpoch int32 0+
  LeaderEpoch int32 0+
  StartOffset int64 0+
  DeliveryCompleteCount int32 0+ tag=0 default=-1
  StateBatches []StateBatch 0+
    FirstOffset int64 0+
    LastOffset int64 0+
    DeliveryState int8 0+
    DeliveryCount int16 0+
""",
}
#: Record types of each release (3.9 has no share coordinator decoder).
RELEASE_RECORD_TYPES: dict[str, dict[int, tuple[str, str]]] = {
    "4.0": RECORD_TYPES,
    "4.1": RECORD_TYPES,
    "4.2": RECORD_TYPES,
}
