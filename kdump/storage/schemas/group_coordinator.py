"""The records of ``__consumer_offsets`` (Kafka 4.0's group coordinator) and the consumer protocol's embedded
subscription/assignment, in kdump's compact schema text (see :func:`kdump.storage.message_schema.parse_schemas`).

A record's key starts with an int16 *record type* that selects the key and value schemas; the key is read at
the record type as its version, the value at its own int16 version prefix.
"""

from __future__ import annotations

from kdump.storage.message_schema import MessageSchema, parse_schemas

SCHEMA_TEXT = """
OffsetCommitKey 0-1 flexible=none
  group string 0-1
  topic string 0-1
  partition int32 0-1

OffsetCommitValue 0-4 flexible=4+
  offset int64 0+
  leaderEpoch int32 3+ default=-1
  metadata string 0+
  commitTimestamp int64 0+
  expireTimestamp int64 1 default=-1

GroupMetadataKey 2 flexible=none
  group string 2

GroupMetadataValue 0-4 flexible=4+
  protocolType string 0+
  generation int32 0+
  protocol string 0+ nullable=0+
  leader string 0+ nullable=0+
  currentStateTimestamp int64 2+ default=-1
  members []MemberMetadata 0+
  struct MemberMetadata 0+
    memberId string 0+
    groupInstanceId string 3+ nullable=3+ default=null
    clientId string 0+
    clientHost string 0+
    rebalanceTimeout int32 1+ default=-1
    sessionTimeout int32 0+
    subscription bytes 0+
    assignment bytes 0+

ConsumerGroupMetadataKey 3 flexible=none
  GroupId string 3

ConsumerGroupMetadataValue 0 flexible=0+
  Epoch int32 0+

ConsumerGroupPartitionMetadataKey 4 flexible=none
  GroupId string 4

ConsumerGroupPartitionMetadataValue 0 flexible=0+
  Topics []TopicMetadata 0+
    TopicId uuid 0+
    TopicName string 0+
    NumPartitions int32 0+
    PartitionMetadata []PartitionMetadata 0+
      Partition int32 0+
      Racks []string 0+

ConsumerGroupMemberMetadataKey 5 flexible=none
  GroupId string 5
  MemberId string 5

ConsumerGroupMemberMetadataValue 0 flexible=0+
  InstanceId string 0+ nullable=0+
  RackId string 0+ nullable=0+
  ClientId string 0+
  ClientHost string 0+
  SubscribedTopicNames []string 0+
  SubscribedTopicRegex string 0+ nullable=0+
  RebalanceTimeoutMs int32 0+ default=-1
  ServerAssignor string 0+ nullable=0+
  ClassicMemberMetadata ClassicMemberMetadata 0+ nullable=0+ tag=0
    SessionTimeoutMs int32 0+
    SupportedProtocols []ClassicProtocol 0+
      Name string 0+
      Metadata bytes 0+

ConsumerGroupTargetAssignmentMetadataKey 6 flexible=none
  GroupId string 6

ConsumerGroupTargetAssignmentMetadataValue 0 flexible=0+
  AssignmentEpoch int32 0+

ConsumerGroupTargetAssignmentMemberKey 7 flexible=none
  GroupId string 7
  MemberId string 7

ConsumerGroupTargetAssignmentMemberValue 0 flexible=0+
  TopicPartitions []TopicPartition 0+
    TopicId uuid 0+
    Partitions []int32 0+

ConsumerGroupCurrentMemberAssignmentKey 8 flexible=none
  GroupId string 8
  MemberId string 8

ConsumerGroupCurrentMemberAssignmentValue 0 flexible=0+
  MemberEpoch int32 0+
  PreviousMemberEpoch int32 0+
  State int8 0+
  AssignedPartitions []TopicPartitions 0+
  PartitionsPendingRevocation []TopicPartitions 0+
  struct TopicPartitions 0+
    TopicId uuid 0+
    Partitions []int32 0+

ShareGroupPartitionMetadataKey 9 flexible=none
  GroupId string 9

ShareGroupPartitionMetadataValue 0 flexible=0+
  Topics []TopicMetadata 0+
    TopicId uuid 0+
    TopicName string 0+
    NumPartitions int32 0+
    PartitionMetadata []PartitionMetadata 0+
      Partition int32 0+
      Racks []string 0+

ShareGroupMemberMetadataKey 10 flexible=none
  GroupId string 10
  MemberId string 10

ShareGroupMemberMetadataValue 0 flexible=0+
  RackId string 0+ nullable=0+
  ClientId string 0+
  ClientHost string 0+
  SubscribedTopicNames []string 0+

ShareGroupMetadataKey 11 flexible=none
  GroupId string 11

ShareGroupMetadataValue 0 flexible=0+
  Epoch int32 0+

ShareGroupTargetAssignmentMetadataKey 12 flexible=none
  GroupId string 12

ShareGroupTargetAssignmentMetadataValue 0 flexible=0+
  AssignmentEpoch int32 0+

ShareGroupTargetAssignmentMemberKey 13 flexible=none
  GroupId string 13
  MemberId string 13

ShareGroupTargetAssignmentMemberValue 0 flexible=0+
  TopicPartitions []TopicPartition 0+
    TopicId uuid 0+
    Partitions []int32 0+

ShareGroupCurrentMemberAssignmentKey 14 flexible=none
  GroupId string 14
  MemberId string 14

ShareGroupCurrentMemberAssignmentValue 0 flexible=0+
  MemberEpoch int32 0+
  PreviousMemberEpoch int32 0+
  State int8 0+
  AssignedPartitions []TopicPartitions 0+
  struct TopicPartitions 0+
    TopicId uuid 0+
    Partitions []int32 0+

ShareGroupStatePartitionMetadataKey 15 flexible=none
  GroupId string 15

ShareGroupStatePartitionMetadataValue 0 flexible=0+
  InitializedTopics []TopicPartitionsInfo 0+
  DeletingTopics []TopicInfo 0+
  struct TopicPartitionsInfo 0+
    TopicId uuid 0+
    TopicName string 0+
    Partitions []int32 0+
  struct TopicInfo 0+
    TopicId uuid 0+
    TopicName string 0+

ConsumerGroupRegularExpressionKey 16 flexible=none
  GroupId string 16
  RegularExpression string 16

ConsumerGroupRegularExpressionValue 0 flexible=0+
  Topics []string 0+
  Version int64 0+
  Timestamp int64 0+
"""

#: Record type → (key schema, value schema), as ``GroupCoordinatorRecordSerde`` maps them.
RECORD_TYPES: dict[int, tuple[str, str]] = {
    0: ("OffsetCommitKey", "OffsetCommitValue"),
    1: ("OffsetCommitKey", "OffsetCommitValue"),
    2: ("GroupMetadataKey", "GroupMetadataValue"),
    3: ("ConsumerGroupMetadataKey", "ConsumerGroupMetadataValue"),
    4: ("ConsumerGroupPartitionMetadataKey", "ConsumerGroupPartitionMetadataValue"),
    5: ("ConsumerGroupMemberMetadataKey", "ConsumerGroupMemberMetadataValue"),
    6: ("ConsumerGroupTargetAssignmentMetadataKey", "ConsumerGroupTargetAssignmentMetadataValue"),
    7: ("ConsumerGroupTargetAssignmentMemberKey", "ConsumerGroupTargetAssignmentMemberValue"),
    8: ("ConsumerGroupCurrentMemberAssignmentKey", "ConsumerGroupCurrentMemberAssignmentValue"),
    9: ("ShareGroupPartitionMetadataKey", "ShareGroupPartitionMetadataValue"),
    10: ("ShareGroupMemberMetadataKey", "ShareGroupMemberMetadataValue"),
    11: ("ShareGroupMetadataKey", "ShareGroupMetadataValue"),
    12: ("ShareGroupTargetAssignmentMetadataKey", "ShareGroupTargetAssignmentMetadataValue"),
    13: ("ShareGroupTargetAssignmentMemberKey", "ShareGroupTargetAssignmentMemberValue"),
    14: ("ShareGroupCurrentMemberAssignmentKey", "ShareGroupCurrentMemberAssignmentValue"),
    15: ("ShareGroupStatePartitionMetadataKey", "ShareGroupStatePartitionMetadataValue"),
    16: ("ConsumerGroupRegularExpressionKey", "ConsumerGroupRegularExpressionValue"),
}

CONSUMER_PROTOCOL_TEXT = """
ConsumerProtocolSubscription 0-3 flexible=none
  Topics []string 0+
  UserData bytes 0+ nullable=0+ default=null
  OwnedPartitions []TopicPartition 1+
    Topic string 1+
    Partitions []int32 1+
  GenerationId int32 2+ default=-1
  RackId string 3+ nullable=3+ default=null

ConsumerProtocolAssignment 0-3 flexible=none
  AssignedPartitions []TopicPartition 0+
    Topic string 0+
    Partitions []int32 0+
  UserData bytes 0+ nullable=0+ default=null
"""

SCHEMAS: dict[str, MessageSchema] = parse_schemas(SCHEMA_TEXT)

#: Newer than Kafka 4.0 (see :mod:`kdump.storage.schemas`): tagged fields added to versions 4.0 knows, the
#: share-group values whose layout changed at the same version (early access in 4.0: kdump's own modes read the
#: newest layout), and the streams-group records (types 17, 19-23; 18 was withdrawn before a release).
NEWEST_SCHEMA_TEXT = """
OffsetCommitValue 0-4 flexible=4+
  offset int64 0+
  leaderEpoch int32 3+ default=-1
  metadata string 0+
  commitTimestamp int64 0+
  expireTimestamp int64 1 default=-1
  topicId uuid 4+ tag=0

ConsumerGroupMetadataValue 0 flexible=0+
  Epoch int32 0+
  MetadataHash int64 0+ tag=0 default=0

ConsumerGroupTargetAssignmentMetadataValue 0 flexible=0+
  AssignmentEpoch int32 0+
  AssignmentTimestamp int64 0+ tag=0 default=0

ConsumerGroupCurrentMemberAssignmentValue 0 flexible=0+
  MemberEpoch int32 0+
  PreviousMemberEpoch int32 0+
  State int8 0+
  AssignedPartitions []TopicPartitions 0+
  PartitionsPendingRevocation []TopicPartitions 0+
  struct TopicPartitions 0+
    TopicId uuid 0+
    Partitions []int32 0+
    AssignmentEpochs []int32 0+ nullable=0+ tag=0

ShareGroupMetadataValue 0 flexible=0+
  Epoch int32 0+
  MetadataHash int64 0+

ShareGroupTargetAssignmentMetadataValue 0 flexible=0+
  AssignmentEpoch int32 0+
  AssignmentTimestamp int64 0+ tag=0 default=0

ShareGroupStatePartitionMetadataValue 0 flexible=0+
  InitializingTopics []TopicPartitionsInfo 0+
  InitializedTopics []TopicPartitionsInfo 0+
  DeletingTopics []TopicInfo 0+
  struct TopicPartitionsInfo 0+
    TopicId uuid 0+
    TopicName string 0+
    Partitions []int32 0+
  struct TopicInfo 0+
    TopicId uuid 0+
    TopicName string 0+

StreamsGroupMetadataKey 17 flexible=none
  GroupId string 17

StreamsGroupMetadataValue 0 flexible=0+
  Epoch int32 0+
  MetadataHash int64 0+
  ValidatedTopologyEpoch int32 0+ tag=0 default=-1
  LastAssignmentConfigs []LastAssignmentConfig 0+ nullable=0+ tag=1
  StoredDescriptionTopologyEpoch int32 0+ tag=2 default=-1
  FailedDescriptionTopologyEpoch int32 0+ tag=3 default=-1
  struct LastAssignmentConfig 0+
    Key string 0+
    Value string 0+

StreamsGroupMemberMetadataKey 19 flexible=none
  GroupId string 19
  MemberId string 19

StreamsGroupMemberMetadataValue 0 flexible=0+
  InstanceId string 0+ nullable=0+
  RackId string 0+ nullable=0+
  ClientId string 0+
  ClientHost string 0+
  RebalanceTimeoutMs int32 0+ default=-1
  TopologyEpoch int32 0+
  ProcessId string 0+
  UserEndpoint Endpoint 0+ nullable=0+ default=null
  ClientTags []KeyValue 0+
  struct Endpoint 0+
    Host string 0+
    Port uint16 0+
  struct KeyValue 0+
    Key string 0+
    Value string 0+

StreamsGroupTargetAssignmentMetadataKey 20 flexible=none
  GroupId string 20

StreamsGroupTargetAssignmentMetadataValue 0 flexible=0+
  AssignmentEpoch int32 0+
  AssignmentTimestamp int64 0+ tag=0 default=0

StreamsGroupTargetAssignmentMemberKey 21 flexible=none
  GroupId string 21
  MemberId string 21

StreamsGroupTargetAssignmentMemberValue 0 flexible=0+
  ActiveTasks []TaskIds 0+
  StandbyTasks []TaskIds 0+
  WarmupTasks []TaskIds 0+
  struct TaskIds 0+
    SubtopologyId string 0+
    Partitions []int32 0+

StreamsGroupCurrentMemberAssignmentKey 22 flexible=none
  GroupId string 22
  MemberId string 22

StreamsGroupCurrentMemberAssignmentValue 0 flexible=0+
  MemberEpoch int32 0+
  PreviousMemberEpoch int32 0+
  State int8 0+
  ActiveTasks []TaskIds 0+
  StandbyTasks []TaskIds 0+
  WarmupTasks []TaskIds 0+
  ActiveTasksPendingRevocation []TaskIds 0+
  StandbyTasksPendingRevocation []TaskIds 0+
  WarmupTasksPendingRevocation []TaskIds 0+
  struct TaskIds 0+
    SubtopologyId string 0+
    Partitions []int32 0+
    AssignmentEpochs []int32 0+ nullable=0+ tag=0

StreamsGroupTopologyKey 23 flexible=none
  GroupId string 23

StreamsGroupTopologyValue 0 flexible=0+
  Epoch int32 0+
  Subtopologies []Subtopology 0+
    SubtopologyId string 0+
    SourceTopics []string 0+
    SourceTopicRegex []string 0+
    StateChangelogTopics []TopicInfo 0+
    RepartitionSinkTopics []string 0+
    RepartitionSourceTopics []TopicInfo 0+
    CopartitionGroups []CopartitionGroup 0+
      SourceTopics []int16 0+
      SourceTopicRegex []int16 0+
      RepartitionSourceTopics []int16 0+
  struct TopicConfig 0+
    key string 0+
    value string 0+
  struct TopicInfo 0+
    Name string 0+
    Partitions int32 0+
    ReplicationFactor int16 0+
    TopicConfigs []TopicConfig 0+
"""
NEWEST_SCHEMAS: dict[str, MessageSchema] = {**SCHEMAS, **parse_schemas(NEWEST_SCHEMA_TEXT)}
#: Record types of the newest source (type 9, ShareGroupPartitionMetadata, was withdrawn after 4.0: 4.0's
#: schema still reads what 4.0 wrote).
NEWEST_RECORD_TYPES: dict[int, tuple[str, str]] = {
    **RECORD_TYPES,
    17: ("StreamsGroupMetadataKey", "StreamsGroupMetadataValue"),
    19: ("StreamsGroupMemberMetadataKey", "StreamsGroupMemberMetadataValue"),
    20: ("StreamsGroupTargetAssignmentMetadataKey", "StreamsGroupTargetAssignmentMetadataValue"),
    21: ("StreamsGroupTargetAssignmentMemberKey", "StreamsGroupTargetAssignmentMemberValue"),
    22: ("StreamsGroupCurrentMemberAssignmentKey", "StreamsGroupCurrentMemberAssignmentValue"),
    23: ("StreamsGroupTopologyKey", "StreamsGroupTopologyValue"),
}
#: ``ConsumerProtocolSubscription`` and ``ConsumerProtocolAssignment`` (the bytes of classic group members).
CONSUMER_PROTOCOL: dict[str, MessageSchema] = parse_schemas(CONSUMER_PROTOCOL_TEXT)


# -- the group coordinator of each release (kdump files --kafka-version; kdump.storage.kafka_release) ----------

#: The records Kafka 4.1 and 4.2 changed or added, transcribed from group-coordinator/src/main/resources/
#: common/message of the tags 4.1.0 and 4.2.0-rc1.  4.1 also renumbered every key schema to version 0 (the
#: ``coordinator-key`` message type; the serde still reads a key at its record type as version): the same
#: bytes and the same JSON as the keys above, which stand for them.  Type 0's value became
#: ``LegacyOffsetCommitValue`` (version 0 only), type 9 (``ShareGroupPartitionMetadata``) is gone.
RELEASE_SCHEMA_TEXT: dict[str, str] = {
    "4.1": """
LegacyOffsetCommitValue 0 flexible=none
  offset int64 0
  metadata string 0
  commitTimestamp int64 0

OffsetCommitValue 0-4 flexible=4+
  offset int64 0+
  leaderEpoch int32 3+ default=-1
  metadata string 0+
  commitTimestamp int64 0+
  expireTimestamp int64 1 default=-1
  topicId uuid 4+ tag=0

ConsumerGroupMetadataValue 0 flexible=0+
  Epoch int32 0+
  MetadataHash int64 0+ tag=0 default=0

ShareGroupMetadataValue 0 flexible=0+
  Epoch int32 0+
  MetadataHash int64 0+

ShareGroupStatePartitionMetadataValue 0 flexible=0+
  InitializingTopics []TopicPartitionsInfo 0+
  InitializedTopics []TopicPartitionsInfo 0+
  DeletingTopics []TopicInfo 0+
  struct TopicPartitionsInfo 0+
    TopicId uuid 0+
    TopicName string 0+
    Partitions []int32 0+
  struct TopicInfo 0+
    TopicId uuid 0+
    TopicName string 0+

StreamsGroupMetadataKey 0 flexible=none
  GroupId string 0

StreamsGroupMetadataValue 0 flexible=0+
  Epoch int32 0+
  MetadataHash int64 0+

StreamsGroupMemberMetadataKey 0 flexible=none
  GroupId string 0
  MemberId string 0

StreamsGroupMemberMetadataValue 0 flexible=0+
  InstanceId string 0+ nullable=0+
  RackId string 0+ nullable=0+
  ClientId string 0+
  ClientHost string 0+
  RebalanceTimeoutMs int32 0+ default=-1
  TopologyEpoch int32 0+
  ProcessId string 0+
  UserEndpoint Endpoint 0+ nullable=0+ default=null
  ClientTags []KeyValue 0+
  struct Endpoint 0+
    Host string 0+
    Port uint16 0+
  struct KeyValue 0+
    Key string 0+
    Value string 0+

StreamsGroupTargetAssignmentMetadataKey 0 flexible=none
  GroupId string 0

StreamsGroupTargetAssignmentMetadataValue 0 flexible=0+
  AssignmentEpoch int32 0+

StreamsGroupTargetAssignmentMemberKey 0 flexible=none
  GroupId string 0
  MemberId string 0

StreamsGroupTargetAssignmentMemberValue 0 flexible=0+
  ActiveTasks []TaskIds 0+
  StandbyTasks []TaskIds 0+
  WarmupTasks []TaskIds 0+
  struct TaskIds 0+
    SubtopologyId string 0+
    Partitions []int32 0+

StreamsGroupCurrentMemberAssignmentKey 0 flexible=none
  GroupId string 0
  MemberId string 0

StreamsGroupCurrentMemberAssignmentValue 0 flexible=0+
  MemberEpoch int32 0+
  PreviousMemberEpoch int32 0+
  State int8 0+
  ActiveTasks []TaskIds 0+
  StandbyTasks []TaskIds 0+
  WarmupTasks []TaskIds 0+
  ActiveTasksPendingRevocation []TaskIds 0+
  StandbyTasksPendingRevocation []TaskIds 0+
  WarmupTasksPendingRevocation []TaskIds 0+
  struct TaskIds 0+
    SubtopologyId string 0+
    Partitions []int32 0+

StreamsGroupTopologyKey 0 flexible=none
  GroupId string 0

StreamsGroupTopologyValue 0 flexible=0+
  Epoch int32 0+
  Subtopologies []Subtopology 0+
    SubtopologyId string 0+
    SourceTopics []string 0+
    SourceTopicRegex []string 0+
    StateChangelogTopics []TopicInfo 0+
    RepartitionSinkTopics []string 0+
    RepartitionSourceTopics []TopicInfo 0+
    CopartitionGroups []CopartitionGroup 0+
      SourceTopics []int16 0+
      SourceTopicRegex []int16 0+
      RepartitionSourceTopics []int16 0+
  struct TopicConfig 0+
    key string 0+
    value string 0+
  struct TopicInfo 0+
    Name string 0+
    Partitions int32 0+
    ReplicationFactor int16 0+
    TopicConfigs []TopicConfig 0+
""",
    "4.2": """
StreamsGroupMetadataValue 0 flexible=0+
  Epoch int32 0+
  MetadataHash int64 0+
  ValidatedTopologyEpoch int32 0+ tag=0 default=-1
  LastAssignmentConfigs []LastAssignmentConfig 0+ nullable=0+ tag=1 default=null
  struct LastAssignmentConfig 0+
    Key string 0+
    Value string 0+

StreamsGroupCurrentMemberAssignmentValue 0 flexible=0+
  MemberEpoch int32 0+
  PreviousMemberEpoch int32 0+
  State int8 0+
  ActiveTasks []TaskIds 0+
  StandbyTasks []TaskIds 0+
  WarmupTasks []TaskIds 0+
  ActiveTasksPendingRevocation []TaskIds 0+
  StandbyTasksPendingRevocation []TaskIds 0+
  WarmupTasksPendingRevocation []TaskIds 0+
  struct TaskIds 0+
    SubtopologyId string 0+
    Partitions []int32 0+
    AssignmentEpochs []int32 0+ nullable=0+ tag=0 default=null
""",
}

_STREAMS_TYPES = {
    17: ("StreamsGroupMetadataKey", "StreamsGroupMetadataValue"),
    19: ("StreamsGroupMemberMetadataKey", "StreamsGroupMemberMetadataValue"),
    20: ("StreamsGroupTargetAssignmentMetadataKey", "StreamsGroupTargetAssignmentMetadataValue"),
    21: ("StreamsGroupTargetAssignmentMemberKey", "StreamsGroupTargetAssignmentMemberValue"),
    22: ("StreamsGroupCurrentMemberAssignmentKey", "StreamsGroupCurrentMemberAssignmentValue"),
    23: ("StreamsGroupTopologyKey", "StreamsGroupTopologyValue"),
}
_RECORD_TYPES_41 = {
    **{t: names for t, names in RECORD_TYPES.items() if t != 9},
    0: ("OffsetCommitKey", "LegacyOffsetCommitValue"),
    **_STREAMS_TYPES,
}
#: Record type -> (key, value) of each release's serde (3.9's ``CoordinatorRecordSerde`` knows types 0-8, 4.0's
#: ``GroupCoordinatorRecordSerde`` 0-16, 4.1's ``CoordinatorRecordType`` drops 9 and adds the streams types).
RELEASE_RECORD_TYPES: dict[str, dict[int, tuple[str, str]]] = {
    "3.9": {t: names for t, names in RECORD_TYPES.items() if t <= 8},
    "4.0": RECORD_TYPES,
    "4.1": _RECORD_TYPES_41,
    "4.2": _RECORD_TYPES_41,
}
