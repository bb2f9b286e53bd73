"""The KRaft metadata records of ``__cluster_metadata`` and snapshots (Kafka 4.0), in kdump's compact schema text.

Each record value is framed as unsigned varints (frame version 1, the record's ``apiKey``, its version) and
then the record at that version.
"""

from __future__ import annotations

import re

from kdump.storage.message_schema import MessageSchema, parse_schemas

SCHEMA_TEXT = """
RegisterBrokerRecord 0-3 flexible=0+ apiKey=0
  BrokerId int32 0+
  IsMigratingZkBroker bool 2+ default=false
  IncarnationId uuid 0+
  BrokerEpoch int64 0+
  EndPoints []BrokerEndpoint 0+
    Name string 0+
    Host string 0+
    Port uint16 0+
    SecurityProtocol int16 0+
  Features []BrokerFeature 0+
    Name string 0+
    MinSupportedVersion int16 0+
    MaxSupportedVersion int16 0+
  Rack string 0+ nullable=0+
  Fenced bool 0+ default=true
  InControlledShutdown bool 1+ default=false
  LogDirs []uuid 3+ tag=0

UnregisterBrokerRecord 0 flexible=0+ apiKey=1
  BrokerId int32 0+
  BrokerEpoch int64 0+

TopicRecord 0 flexible=0+ apiKey=2
  Name string 0+
  TopicId uuid 0+

PartitionRecord 0-2 flexible=0+ apiKey=3
  PartitionId int32 0+ default=-1
  TopicId uuid 0+
  Replicas []int32 0+
  Isr []int32 0+
  RemovingReplicas []int32 0+
  AddingReplicas []int32 0+
  Leader int32 0+ default=-1
  LeaderRecoveryState int8 0+ tag=0 default=0
  LeaderEpoch int32 0+ default=-1
  PartitionEpoch int32 0+ default=-1
  Directories []uuid 1+
  EligibleLeaderReplicas []int32 2+ nullable=2+ tag=1 default=null
  LastKnownElr []int32 2+ nullable=2+ tag=2 default=null

ConfigRecord 0 flexible=0+ apiKey=4
  ResourceType int8 0+
  ResourceName string 0+
  Name string 0+
  Value string 0+ nullable=0+

PartitionChangeRecord 0-2 flexible=0+ apiKey=5
  PartitionId int32 0+ default=-1
  TopicId uuid 0+
  Isr []int32 0+ nullable=0+ tag=0 default=null
  Leader int32 0+ tag=1 default=-2
  Replicas []int32 0+ nullable=0+ tag=2 default=null
  RemovingReplicas []int32 0+ nullable=0+ tag=3 default=null
  AddingReplicas []int32 0+ nullable=0+ tag=4 default=null
  LeaderRecoveryState int8 0+ tag=5 default=-1
  Directories []uuid 1+ nullable=1+ tag=8 default=null
  EligibleLeaderReplicas []int32 2+ nullable=2+ tag=6 default=null
  LastKnownElr []int32 2+ nullable=2+ tag=7 default=null

FenceBrokerRecord 0 flexible=0+ apiKey=7
  Id int32 0+
  Epoch int64 0+

UnfenceBrokerRecord 0 flexible=0+ apiKey=8
  Id int32 0+
  Epoch int64 0+

RemoveTopicRecord 0 flexible=0+ apiKey=9
  TopicId uuid 0+

DelegationTokenRecord 0 flexible=0+ apiKey=10
  Owner string 0+
  Requester string 0+
  Renewers []string 0+
  IssueTimestamp int64 0+
  MaxTimestamp int64 0+
  ExpirationTimestamp int64 0+
  TokenId string 0+

UserScramCredentialRecord 0 flexible=0+ apiKey=11
  Name string 0+
  Mechanism int8 0+
  Salt bytes 0+
  StoredKey bytes 0+
  ServerKey bytes 0+
  Iterations int32 0+

FeatureLevelRecord 0 flexible=0+ apiKey=12
  Name string 0+
  FeatureLevel int16 0+

ClientQuotaRecord 0 flexible=0+ apiKey=14
  Entity []EntityData 0+
    EntityType string 0+
    EntityName string 0+ nullable=0+
  Key string 0+
  Value float64 0+
  Remove bool 0+

ProducerIdsRecord 0 flexible=0+ apiKey=15
  BrokerId int32 0+
  BrokerEpoch int64 0+ default=-1
  NextProducerId int64 0+

BrokerRegistrationChangeRecord 0-2 flexible=0+ apiKey=17
  BrokerId int32 0+
  BrokerEpoch int64 0+
  Fenced int8 0+ tag=0
  InControlledShutdown int8 1+ tag=1
  LogDirs []uuid 2+ tag=2

AccessControlEntryRecord 0 flexible=0+ apiKey=18
  Id uuid 0+
  ResourceType int8 0+
  ResourceName string 0+
  PatternType int8 0+
  Principal string 0+
  Host string 0+
  Operation int8 0+
  PermissionType int8 0+

RemoveAccessControlEntryRecord 0 flexible=0+ apiKey=19
  Id uuid 0+

NoOpRecord 0 flexible=0+ apiKey=20

ZkMigrationStateRecord 0 flexible=0+ apiKey=21
  ZkMigrationState int8 0+

RemoveUserScramCredentialRecord 0 flexible=0+ apiKey=22
  Name string 0+
  Mechanism int8 0+

BeginTransactionRecord 0 flexible=0+ apiKey=23
  Name string 0+ nullable=0+ tag=0 default=null

EndTransactionRecord 0 flexible=0+ apiKey=24

AbortTransactionRecord 0 flexible=0+ apiKey=25
  Reason string 0+ nullable=0+ tag=0 default=null

RemoveDelegationTokenRecord 0 flexible=0+ apiKey=26
  TokenId string 0+

RegisterControllerRecord 0 flexible=0+ apiKey=27
  ControllerId int32 0+
  IncarnationId uuid 0+
  ZkMigrationReady bool 0+
  EndPoints []ControllerEndpoint 0+
    Name string 0+
    Host string 0+
    Port uint16 0+
    SecurityProtocol int16 0+
  Features []ControllerFeature 0+
    Name string 0+
    MinSupportedVersion int16 0+
    MaxSupportedVersion int16 0+

ClearElrRecord 0 flexible=0+ apiKey=28
  TopicName string 0+
"""

SCHEMAS: dict[str, MessageSchema] = parse_schemas(SCHEMA_TEXT)

#: apiKey → schema (``MetadataRecordType``), as Kafka 4.0 knows them: what the default text decodes with.
BY_API_KEY: dict[int, MessageSchema] = {s.api_key: s for s in SCHEMAS.values() if s.api_key is not None}
#: Kafka 3.9's metadata records (metadata/src/main/resources/common/metadata of the tag 3.9.1): 4.0's but
#: ``ClearElrRecord`` (apiKey 28, added in 4.0).  4.1 and 4.2 have exactly 4.0's (the tags 4.1.0 and 4.2.0-rc1).
BY_API_KEY_39: dict[int, MessageSchema] = {k: v for k, v in BY_API_KEY.items() if k != 28}

#: The records newer Kafka releases changed or added, whole, as of the newest Kafka source read
#: (:data:`kdump.storage.schemas.NEWEST_KAFKA_SOURCE`): kdump's own modes (JSON) decode with these, and say
#: so, where Kafka 4.0 fails.
NEWEST_SCHEMA_TEXT = """
# Version 4 adds CordonedLogDirs (KIP-1066).
RegisterBrokerRecord 0-4 flexible=0+ apiKey=0
  BrokerId int32 0+
  IsMigratingZkBroker bool 2+ default=false
  IncarnationId uuid 0+
  BrokerEpoch int64 0+
  EndPoints []BrokerEndpoint 0+
    Name string 0+
    Host string 0+
    Port uint16 0+
    SecurityProtocol int16 0+
  Features []BrokerFeature 0+
    Name string 0+
    MinSupportedVersion int16 0+
    MaxSupportedVersion int16 0+
  Rack string 0+ nullable=0+
  Fenced bool 0+ default=true
  InControlledShutdown bool 1+ default=false
  LogDirs []uuid 3+ tag=0
  CordonedLogDirs []uuid 4+ nullable=4+ tag=1 default=null

# Version 3 adds CordonedLogDirs (KIP-1066).
BrokerRegistrationChangeRecord 0-3 flexible=0+ apiKey=17
  BrokerId int32 0+
  BrokerEpoch int64 0+
  Fenced int8 0+ tag=0
  InControlledShutdown int8 1+ tag=1
  LogDirs []uuid 2+ tag=2
  CordonedLogDirs []uuid 3+ nullable=3+ tag=3 default=null

UnregisterControllerRecord 0 flexible=0+ apiKey=29
  ControllerId int32 0+
"""

NEWEST_SCHEMAS: dict[str, MessageSchema] = {**SCHEMAS, **parse_schemas(NEWEST_SCHEMA_TEXT)}
#: apiKey → schema at the newest Kafka source read.
BY_API_KEY_NEWEST: dict[int, MessageSchema] = {
    s.api_key: s for s in NEWEST_SCHEMAS.values() if s.api_key is not None
}


def record_type_name(schema: MessageSchema) -> str:
    """The ``MetadataRecordType`` constant of a record: its name in upper snake case (``TopicRecord`` →
    ``TOPIC_RECORD``), as Kafka's generator spells it."""
    return re.sub(r"(?<=[a-z0-9])(?=[A-Z])", "_", schema.name).upper()
