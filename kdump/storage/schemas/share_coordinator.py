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
