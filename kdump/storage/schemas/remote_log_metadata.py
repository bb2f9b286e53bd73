"""The records of ``__remote_log_metadata`` (Kafka 4.0's topic-based remote log metadata manager), in kdump's
compact schema text.  Values are framed like KRaft metadata records (frame version, apiKey, version)."""

from __future__ import annotations

from kdump.storage.message_schema import MessageSchema, parse_schemas

SCHEMA_TEXT = """
RemoteLogSegmentMetadataRecord 0 flexible=0+ apiKey=0
  RemoteLogSegmentId RemoteLogSegmentIdEntry 0+
    TopicIdPartition TopicIdPartitionEntry 0+
      Name string 0+
      Id uuid 0+
      Partition int32 0+
    Id uuid 0+
  StartOffset int64 0+
  EndOffset int64 0+
  BrokerId int32 0+
  MaxTimestampMs int64 0+
  EventTimestampMs int64 0+
  SegmentLeaderEpochs []SegmentLeaderEpochEntry 0+
    LeaderEpoch int32 0+
    Offset int64 0+
  SegmentSizeInBytes int32 0+
  CustomMetadata bytes 0+ nullable=0+ default=null
  RemoteLogSegmentState int8 0+
  TxnIndexEmpty bool 0+ tag=0

RemoteLogSegmentMetadataUpdateRecord 0 flexible=0+ apiKey=1
  RemoteLogSegmentId RemoteLogSegmentIdEntry 0+
    TopicIdPartition TopicIdPartitionEntry 0+
      Name string 0+
      Id uuid 0+
      Partition int32 0+
    Id uuid 0+
  BrokerId int32 0+
  EventTimestampMs int64 0+
  CustomMetadata bytes 0+ nullable=0+ default=null
  RemoteLogSegmentState int8 0+

RemotePartitionDeleteMetadataRecord 0 flexible=0+ apiKey=2
  TopicIdPartition TopicIdPartitionEntry 0+
    Name string 0+
    Id uuid 0+
    Partition int32 0+
  BrokerId int32 0+
  EventTimestampMs int64 0+
  RemotePartitionDeleteState int8 0+

RemoteLogSegmentMetadataSnapshotRecord 0 flexible=0+ apiKey=3
  SegmentId uuid 0+
  StartOffset int64 0+
  EndOffset int64 0+
  BrokerId int32 0+
  MaxTimestampMs int64 0+
  EventTimestampMs int64 0+
  SegmentLeaderEpochs []SegmentLeaderEpochEntry 0+
    LeaderEpoch int32 0+
    Offset int64 0+
  SegmentSizeInBytes int32 0+
  CustomMetadata bytes 0+ nullable=0+ default=null
  RemoteLogSegmentState int8 0+
  TxnIndexEmpty bool 0+ tag=0
"""

SCHEMAS: dict[str, MessageSchema] = parse_schemas(SCHEMA_TEXT)

#: apiKey → schema.
BY_API_KEY: dict[int, MessageSchema] = {s.api_key: s for s in SCHEMAS.values() if s.api_key is not None}

#: ``RemoteLogSegmentState`` and ``RemotePartitionDeleteState`` names by id.
REMOTE_LOG_SEGMENT_STATES: dict[int, str] = {
    0: "COPY_SEGMENT_STARTED",
    1: "COPY_SEGMENT_FINISHED",
    2: "DELETE_SEGMENT_STARTED",
    3: "DELETE_SEGMENT_FINISHED",
}
REMOTE_PARTITION_DELETE_STATES: dict[int, str] = {
    0: "DELETE_PARTITION_MARKED",
    1: "DELETE_PARTITION_STARTED",
    2: "DELETE_PARTITION_FINISHED",
}
