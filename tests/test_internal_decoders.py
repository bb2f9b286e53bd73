"""Internal-topic decoders (``--offsets-decoder`` and friends): schemas, decoding and Kafka 4.0's texts.

* Every record type at every version round-trips through kdump's own encoder and the generic reader.
* The parsers give the exact strings of Kafka 4.0's ``DumpLogSegmentsTest`` for the same records (built here
  with kdump's encoder), and Kafka's error texts for broken records.
* End to end: segments built here are dumped through ``kdump files`` with each decoder.
The byte-exact replay of the real tool's decoder runs is in ``test_replay.py`` (category ``decoder``).
"""

from __future__ import annotations

import struct
import uuid
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from kdump.errors import KdumpError
from kdump.render.internal_topics import (
    InternalTopicParser,
    decode_jsonable,
    scala_topic_partition_set_order,
)
from kdump.render.kafka_json import struct_to_json
from kdump.storage import kafka_release
from kdump.storage.control_record import CONTROL_SCHEMAS
from kdump.storage.internal_topics import (
    DECODERS,
    FatalDecodeError,
    decode_key_value,
)
from kdump.storage.kafka_uuid import decode_uuid
from kdump.storage.message_reader import MessageFormatError, read_message
from kdump.storage.message_schema import (
    Field,
    MessageSchema,
    Versions,
    is_default,
    parse_schemas,
    version_condition,
)
from kdump.storage.message_writer import write_message
from kdump.storage.record import Record
from kdump.storage.schemas import (
    group_coordinator,
    metadata,
    remote_log_metadata,
    share_coordinator,
    transaction_log,
)
from kdump.storage.varint import encode_unsigned_varint
from tests.builder import SimpleRecord, build_segment, build_v2_batch
from tests.replay import run_kdump

TOPIC_ID = uuid.UUID(bytes=decode_uuid("Uj5wn_FqTXirEASvVZRY1w"))
ALL_SCHEMAS: dict[str, MessageSchema] = {
    **group_coordinator.SCHEMAS,
    **group_coordinator.CONSUMER_PROTOCOL,
    **share_coordinator.SCHEMAS,
    **transaction_log.SCHEMAS,
    **metadata.SCHEMAS,
    **remote_log_metadata.SCHEMAS,
    **{s.name: s for s in CONTROL_SCHEMAS.values()},
}


# -- sample values for every field of a schema ---------------------------------------------------------------

_SAMPLES: dict[str, Any] = {
    "int8": -5,
    "int16": 300,
    "uint16": 65535,
    "int32": -70000,
    "uint32": 2**32 - 1,
    "int64": 2**40 + 3,
    "float64": 1.5,
    "string": "s-\u00e9\u20ac",
    "bytes": b"\x00\xff\x10",
    "uuid": TOPIC_ID,
}


def _sample_struct(fields: tuple[Field, ...], version: int, possible: Versions, nulls: bool) -> dict:
    """Values for every field present at ``version``: non-default values, or (``nulls``) null wherever the field
    is nullable and defaults for tagged fields."""
    out: dict[str, Any] = {}
    for f in fields:
        if not version_condition(f.version_range, possible, version):
            continue
        present = possible.intersect(f.version_range)
        tagged = f.tagged_in(version)
        if nulls and f.nullable_in(version):
            out[f.name] = None
        elif nulls and tagged:
            continue
        else:
            out[f.name] = _sample_value(f, version, present, nulls)
        if tagged and not nulls:
            assert not is_default(f, out[f.name]), f.name
    return out


def _sample_value(f: Field, version: int, present: Versions, nulls: bool) -> Any:
    def element(i: int) -> Any:
        t = f.element_type
        if t == "bool":
            return f.default_value() is not True
        if t in _SAMPLES:
            v = _SAMPLES[t]
            if isinstance(v, int) and t != "uint16" and t != "uint32":
                v += i
            if f.tag is not None and not f.is_array and v == f.default_value():
                v += 1
            return v
        possible = (
            Versions.parse(f.struct_versions) if f.struct_versions else present.intersect(f.version_range)
        )
        return _sample_struct(f.fields, version, possible, nulls)

    if f.is_array:
        return [element(0), element(1)]
    return element(0)


def _expected(fields: tuple[Field, ...], values: dict, version: int) -> dict:
    """What the reader gives back: tagged fields only when not at their default."""
    out = {}
    for f in fields:
        if f.name not in values:
            continue
        v = values[f.name]
        if f.tag is not None and f.tagged_in(version) and is_default(f, v):
            continue
        if f.is_struct and v is not None:
            v = (
                [_expected(f.fields, e, version) for e in v]
                if f.is_array
                else _expected(f.fields, v, version)
            )
        out[f.name] = v
    return out


def _cases() -> list:
    cases = []
    for name, schema in sorted(ALL_SCHEMAS.items()):
        r = schema.version_range
        for version in range(r.low, r.high + 1):
            for nulls in (False, True):
                cases.append(
                    pytest.param(schema, version, nulls, id=f"{name}-v{version}{'-nulls' if nulls else ''}")
                )
    return cases


@pytest.mark.parametrize(("schema", "version", "nulls"), _cases())
def test_every_record_type_and_version_round_trips(schema: MessageSchema, version: int, nulls: bool) -> None:
    values = _sample_struct(schema.fields, version, schema.version_range, nulls)
    data = write_message(schema, values, version)
    decoded = read_message(schema, data, version)
    assert decoded.to_dict() == _expected(schema.fields, values, version)
    assert write_message(schema, decoded, version) == data
    struct_to_json(decoded)  # renders


def test_schema_inventory_matches_kafka_4_0() -> None:
    assert len(group_coordinator.RECORD_TYPES) == 17
    assert sorted(metadata.BY_API_KEY) == [0, 1, 2, 3, 4, 5, 7, 8, 9, 10, 11, 12, 14, 15, 17] + list(
        range(18, 29)
    )
    assert sorted(remote_log_metadata.BY_API_KEY) == [0, 1, 2, 3]
    for key_name, value_name in group_coordinator.RECORD_TYPES.values():
        assert key_name in group_coordinator.SCHEMAS and value_name in group_coordinator.SCHEMAS
    assert (
        metadata.record_type_name(metadata.SCHEMAS["ZkMigrationStateRecord"]) == "ZK_MIGRATION_STATE_RECORD"
    )


def test_schema_text_errors_are_reported() -> None:
    with pytest.raises(ValueError, match="odd indentation"):
        parse_schemas("A 0 flexible=0+\n   X int32 0+\n")
    with pytest.raises(ValueError, match="unknown option"):
        parse_schemas("A 0 flexible=0+\n  X int32 0+ color=red\n")
    with pytest.raises(ValueError, match="has no fields"):
        parse_schemas("A 0 flexible=0+\n  X Missing 0+\n")


# -- how Kafka encodes coordinator records ------------------------------------------------------------------


def _coordinator(schemas: dict[str, MessageSchema], key_name: str, record_type: int, key: dict) -> bytes:
    return struct.pack(">h", record_type) + write_message(schemas[key_name], key, record_type)


def _value(schema: MessageSchema, values: dict, version: int) -> bytes:
    return struct.pack(">h", version) + write_message(schema, values, version)


def _record(key: bytes | None, value: bytes | None, offset: int = 0) -> Record:
    return Record(offset, 0, -1, key, value)


G = group_coordinator.SCHEMAS
S = share_coordinator.SCHEMAS
OFFSETS = InternalTopicParser("offsets")
SHARE = InternalTopicParser("share-group-state")


def test_offsets_parser_matches_kafkas_own_test() -> None:
    """The cases of Kafka 4.0's ``DumpLogSegmentsTest.testOffsetsMessageParser``."""
    with pytest.raises(FatalDecodeError) as e:
        OFFSETS.parse(_record(None, None))
    assert e.value.message == (
        "Failed to decode message at offset 0 using offset topic decoder (message had a missing key)"
    )
    key3 = _coordinator(G, "ConsumerGroupMetadataKey", 3, {"GroupId": "group"})
    assert OFFSETS.parse(_record(key3, _value(G["ConsumerGroupMetadataValue"], {"Epoch": 10}, 0))) == (
        '{"type":"3","data":{"groupId":"group"}}',
        '{"version":"0","data":{"epoch":10}}',
    )
    subscription = _value(
        group_coordinator.CONSUMER_PROTOCOL["ConsumerProtocolSubscription"],
        {
            "Topics": ["foo"],
            "UserData": None,
            "OwnedPartitions": [{"Topic": "foo", "Partitions": [0]}],
            "GenerationId": 0,
            "RackId": "rack",
        },
        3,
    )
    assignment = _value(
        group_coordinator.CONSUMER_PROTOCOL["ConsumerProtocolAssignment"],
        {"AssignedPartitions": [{"Topic": "foo", "Partitions": [0]}], "UserData": None},
        3,
    )
    member = {
        "memberId": "member",
        "clientId": "client",
        "clientHost": "host",
        "groupInstanceId": "instance",
        "sessionTimeout": 100,
        "rebalanceTimeout": 1000,
    }
    group = {"protocolType": "consumer", "protocol": "range", "leader": "member", "generation": 10}
    key2 = _coordinator(G, "GroupMetadataKey", 2, {"group": "group"})
    value = {**group, "members": [{**member, "subscription": subscription, "assignment": assignment}]}
    head = (
        '{"version":"4","data":{"protocolType":"consumer","generation":10,"protocol":"range","leader":"member",'
        '"currentStateTimestamp":-1,"members":[{"memberId":"member","groupInstanceId":"instance",'
        '"clientId":"client","clientHost":"host","rebalanceTimeout":1000,"sessionTimeout":100,'
    )
    assert OFFSETS.parse(_record(key2, _value(G["GroupMetadataValue"], value, 4))) == (
        '{"type":"2","data":{"group":"group"}}',
        head + '"subscription":{"topics":["foo"],"userData":null,"ownedPartitions":[{"topic":"foo",'
        '"partitions":[0]}],"generationId":0,"rackId":"rack"},"assignment":{"assignedPartitions":'
        '[{"topic":"foo","partitions":[0]}],"userData":null}}]}}',
    )
    value = {**group, "members": [{**member, "subscription": b"Subscription", "assignment": b"Assignment"}]}
    assert OFFSETS.parse(_record(key2, _value(G["GroupMetadataValue"], value, 4)))[1] == (
        head + '"subscription":"U3Vic2NyaXB0aW9u","assignment":"QXNzaWdubWVudA=="}]}}'
    )
    assert OFFSETS.parse(_record(key3, None)) == ('{"type":"3","data":{"groupId":"group"}}', "<DELETE>")
    unknown = _coordinator(G, "ConsumerGroupMetadataKey", 32767, {"GroupId": "group"})
    assert OFFSETS.parse(_record(unknown, b"\x00\x00\x00\x00\x00\x0a\x00")) == (
        "Unknown record type 32767 at offset 0, skipping.",
        None,
    )
    wrong = _value(G["ConsumerGroupMemberMetadataValue"], {}, 0)
    assert OFFSETS.parse(_record(key3, wrong)) == (
        "Error at offset 0, skipping. Could not read record with version 0 from value's buffer due to: "
        "Error reading byte array of 536870911 byte(s): only 1 byte(s) available.",
        None,
    )


def test_share_group_state_parser_matches_kafkas_own_test() -> None:
    """The cases of Kafka 4.0's ``DumpLogSegmentsTest.testShareGroupStateMessageParser``."""
    with pytest.raises(FatalDecodeError, match="using share group state topic decoder"):
        SHARE.parse(_record(None, None))
    key = {"GroupId": "gs1", "TopicId": TOPIC_ID, "Partition": 0}
    batch = {"FirstOffset": 0, "LastOffset": 4, "DeliveryState": 2, "DeliveryCount": 1}
    snapshot = {
        "SnapshotEpoch": 0,
        "StateEpoch": 0,
        "LeaderEpoch": 0,
        "StartOffset": 0,
        "StateBatches": [batch],
    }
    assert SHARE.parse(
        _record(_coordinator(S, "ShareSnapshotKey", 0, key), _value(S["ShareSnapshotValue"], snapshot, 0))
    ) == (
        '{"type":"0","data":{"groupId":"gs1","topicId":"Uj5wn_FqTXirEASvVZRY1w","partition":0}}',
        '{"type":"0","data":{"snapshotEpoch":0,"stateEpoch":0,"leaderEpoch":0,"startOffset":0,"stateBatches":'
        '[{"firstOffset":0,"lastOffset":4,"deliveryState":2,"deliveryCount":1}]}}',
    )
    update = {"SnapshotEpoch": 0, "LeaderEpoch": 0, "StartOffset": 0, "StateBatches": [batch]}
    update_key = _coordinator(S, "ShareUpdateKey", 1, key)
    assert SHARE.parse(_record(update_key, _value(S["ShareUpdateValue"], update, 0)))[1] == (
        '{"type":"0","data":{"snapshotEpoch":0,"leaderEpoch":0,"startOffset":0,"stateBatches":'
        '[{"firstOffset":0,"lastOffset":4,"deliveryState":2,"deliveryCount":1}]}}'
    )
    assert SHARE.parse(_record(_coordinator(S, "ShareSnapshotKey", 0, key), None))[1] == "<DELETE>"
    assert SHARE.parse(_record(_coordinator(S, "ShareSnapshotKey", 32767, key), b"\x00\x00")) == (
        "Unknown record type 32767 at offset 0, skipping.",
        None,
    )
    assert SHARE.parse(_record(update_key, _value(S["ShareSnapshotValue"], {}, 0))) == (
        "Error at offset 0, skipping. Could not read record with version 0 from value's buffer due to: "
        "non-nullable field stateBatches was serialized as null.",
        None,
    )


def test_coordinator_buffer_errors() -> None:
    key3 = _coordinator(G, "ConsumerGroupMetadataKey", 3, {"GroupId": "group"})
    assert (
        OFFSETS.parse(_record(b"", None))[0]
        == "Error at offset 0, skipping. Could not read version from key's buffer."
    )
    assert OFFSETS.parse(_record(key3, b"\x00")) == (
        "Error at offset 0, skipping. Could not read version from value's buffer.",
        None,
    )
    assert OFFSETS.parse(_record(key3, b"\x00\x07")) == (
        "Error at offset 0, skipping. Found an unknown record version 7 for 3 type",
        None,
    )
    # BufferUnderflowException has no message: Java prints "null"
    assert OFFSETS.parse(_record(key3, b"\x00\x00\x00")) == (
        "Error at offset 0, skipping. Could not read record with version 0 from value's buffer due to: null.",
        None,
    )
    assert OFFSETS.parse(_record(b"\x00\x03\x00", None)) == (
        "Error at offset 0, skipping. Could not read record with version 3 from key's buffer due to: null.",
        None,
    )


# -- __transaction_state ----------------------------------------------------------------------------------------

T = transaction_log.SCHEMAS
TXN = InternalTopicParser("transaction-log")


def _txn_value(status: int, partitions: list[dict] | None, version: int = 0, **extra: Any) -> bytes:
    values = {
        "ProducerId": 7,
        "ProducerEpoch": 2,
        "TransactionTimeoutMs": 60000,
        "TransactionStatus": status,
        "TransactionPartitions": partitions,
        "TransactionLastUpdateTimestampMs": 1700000000001,
        "TransactionStartTimestampMs": 1700000000000,
        **extra,
    }
    return _value(T["TransactionLogValue"], values, version)


def test_transaction_log_text() -> None:
    key = _value(T["TransactionLogKey"], {"TransactionalId": "tx-1"}, 0)
    parts = [{"Topic": "t", "PartitionIds": [0, 1, 2]}]
    assert TXN.parse(_record(key, _txn_value(1, parts))) == (
        "transaction_metadata::transactionalId=tx-1",
        "producerId:7,producerEpoch:2,state=Ongoing,partitions=[t-2,t-1,t-0],"
        "txnLastUpdateTimestamp=1700000000001,txnTimeoutMs=60000",
    )
    # an Empty transaction does not load its partitions; version 1 has tagged fields
    empty = _txn_value(0, parts, 1, PreviousProducerId=3, ClientTransactionVersion=2)
    assert TXN.parse(_record(key, empty))[1].startswith(
        "producerId:7,producerEpoch:2,state=Empty,partitions=[],"
    )
    for status, name in transaction_log.TRANSACTION_STATES.items():
        assert f"state={name}," in TXN.parse(_record(key, _txn_value(status, [])))[1]
    assert TXN.parse(_record(key, None)) == ("transaction_metadata::transactionalId=tx-1", "<DELETE>")
    assert TXN.parse(_record(b"\x00\x05xyz", b"whatever")) == ("unknown::version=5", None)


@pytest.mark.parametrize(
    ("key", "value"),
    [
        (None, b"\x00\x00"),  # NullPointerException
        (b"\x00", None),  # BufferUnderflowException
        (b"\x00\x00\x00\x09ab", None),  # key string runs past the end
        (b"\x00\x00\x00\x01a", b"\x00\x02"),  # unknown value version
        (b"\x00\x00\x00\x01a", _txn_value(9, [])),  # unknown state id
        (b"\x00\x00\x00\x01a", _txn_value(1, None)),  # partitions null in a non-empty state
        (b"\x00\x00\x00\x01a", _txn_value(1, [], 1, ClientTransactionVersion=5)),  # unknown feature level
    ],
)
def test_transaction_log_failures_are_fatal_like_kafka(key: bytes | None, value: bytes | None) -> None:
    with pytest.raises(FatalDecodeError):
        TXN.parse(_record(key, value))


def test_scala_hash_set_order() -> None:
    # TopicPartition("t", p).hashCode = 31 * (31 + p) + "t".hashCode = 1077 + 31p: buckets 5, 4, 3 of 16
    assert scala_topic_partition_set_order([("t", [0, 1, 2])]) == [("t", 2), ("t", 1), ("t", 0)]
    # duplicates count once; the order depends on the hashes, not on the input order
    many = scala_topic_partition_set_order([("t", [2, 0]), ("t", [1, 0])])
    assert many == [("t", 2), ("t", 1), ("t", 0)]
    # a large set grows the table first (32 slots for 12 elements), so buckets are taken mod 32
    big = scala_topic_partition_set_order([("t", list(range(12)))])
    hashes = {p: 1077 + 31 * p for p in range(12)}
    assert big == sorted((("t", p) for p in range(12)), key=lambda e: (hashes[e[1]] & 31, hashes[e[1]]))


# -- __cluster_metadata -------------------------------------------------------------------------------------------

M = metadata.SCHEMAS
META = InternalTopicParser("cluster-metadata")


def _framed(api_key: int, version: int, body: bytes, frame: int = 1) -> bytes:
    return (
        encode_unsigned_varint(frame)
        + encode_unsigned_varint(api_key)
        + encode_unsigned_varint(version)
        + body
    )


def test_cluster_metadata_payloads() -> None:
    topic = _framed(2, 0, write_message(M["TopicRecord"], {"Name": "foo", "TopicId": TOPIC_ID}, 0))
    assert META.parse(_record(None, topic, 2)) == (
        None,
        '{"type":"TOPIC_RECORD","version":0,"data":{"name":"foo","topicId":"Uj5wn_FqTXirEASvVZRY1w"}}',
    )
    change = {"PartitionId": 0, "TopicId": TOPIC_ID, "Isr": [1, 2], "Leader": 2}
    data = _framed(5, 2, write_message(M["PartitionChangeRecord"], change, 2))
    assert META.parse(_record(b"k", data))[1] == (
        '{"type":"PARTITION_CHANGE_RECORD","version":2,"data":{"partitionId":0,"topicId":"Uj5wn_FqTXirEASvVZRY1w",'
        '"isr":[1,2],"leader":2}}'
    )
    # a version newer than Kafka 4.0 knows is read with the 4.0 layout, as the generated code does
    newer = _framed(2, 1, write_message(M["TopicRecord"], {"Name": "foo", "TopicId": TOPIC_ID}, 0))
    assert META.parse(_record(None, newer))[1].startswith(
        '{"type":"TOPIC_RECORD","version":1,"data":{"name":"foo"'
    )


@pytest.mark.parametrize(
    ("value", "message"),
    [
        (None, "Error while reading frame version"),
        (b"", "Error while reading frame version"),
        (
            b"\x00",
            "Could not deserialize metadata record with frame version 0. Note that upgrades from the "
            "preview release of KRaft in 2.8 to newer versions are not supported.",
        ),
        (
            b"v1",
            "Could not deserialize metadata record due to unknown frame version 118(only frame version 1 is "
            "supported)",
        ),
        (b"\x80\x80\x02", "Value for frame version was too large."),
        (b"\x01", "Error while reading type"),
        (b"\x01\x02", "Error while reading version"),
        (
            b"\x01\x63\x00",
            "org.apache.kafka.common.errors.UnsupportedVersionException: Unknown metadata id 99",
        ),
        (b"\x01\x02\x00\x05", "Failed to deserialize record with type 2"),
        (_framed(20, 0, b"\x00\x00\x00"), "Found 2 byte(s) of garbage after 20"),
    ],
)
def test_cluster_metadata_errors(value: bytes | None, message: str) -> None:
    assert META.parse(_record(None, value, 42)) == (None, f"Error at 42, skipping. {message}")


# -- __remote_log_metadata --------------------------------------------------------------------------------------

R = remote_log_metadata.SCHEMAS
REMOTE = InternalTopicParser("remote-log-metadata")
SEGMENT_ID = uuid.UUID(int=0x0123456789ABCDEF0123456789ABCDEF)
TIP = {"Name": "foo", "Id": TOPIC_ID, "Partition": 0}


def _remote(name: str, values: dict) -> bytes:
    schema = R[name]
    return _framed(schema.api_key or 0, 0, write_message(schema, values, 0))


def test_remote_log_metadata_texts_match_kafkas_own_test() -> None:
    delete = _remote(
        "RemotePartitionDeleteMetadataRecord",
        {"TopicIdPartition": TIP, "BrokerId": 0, "EventTimestampMs": 0, "RemotePartitionDeleteState": 0},
    )
    assert REMOTE.parse(_record(None, delete)) == (
        None,
        "RemotePartitionDeleteMetadata{topicPartition=Uj5wn_FqTXirEASvVZRY1w:foo-0, "
        "state=DELETE_PARTITION_MARKED, eventTimestampMs=0, brokerId=0}",
    )
    segment = {"TopicIdPartition": TIP, "Id": SEGMENT_ID}
    update = _remote(
        "RemoteLogSegmentMetadataUpdateRecord",
        {
            "RemoteLogSegmentId": segment,
            "BrokerId": 0,
            "EventTimestampMs": 0,
            "CustomMetadata": b"\x00\x01\x02\x03",
            "RemoteLogSegmentState": 1,
        },
    )
    assert REMOTE.parse(_record(None, update))[1] == (
        "RemoteLogSegmentMetadataUpdate{remoteLogSegmentId=RemoteLogSegmentId{topicIdPartition="
        "Uj5wn_FqTXirEASvVZRY1w:foo-0, id=ASNFZ4mrze8BI0VniavN7w}, customMetadata=Optional[CustomMetadata{4 bytes}], "
        "state=COPY_SEGMENT_FINISHED, eventTimestampMs=0, brokerId=0}"
    )
    common = {
        "StartOffset": 0,
        "EndOffset": 99,
        "BrokerId": 1,
        "MaxTimestampMs": 5,
        "EventTimestampMs": 6,
        "SegmentLeaderEpochs": [{"LeaderEpoch": 3, "Offset": 50}, {"LeaderEpoch": 0, "Offset": 0}],
        "SegmentSizeInBytes": 1024,
        "CustomMetadata": None,
        "RemoteLogSegmentState": 0,
    }
    assert REMOTE.parse(
        _record(None, _remote("RemoteLogSegmentMetadataRecord", {**common, "RemoteLogSegmentId": segment}))
    )[1] == (
        "RemoteLogSegmentMetadata{remoteLogSegmentId=RemoteLogSegmentId{topicIdPartition="
        "Uj5wn_FqTXirEASvVZRY1w:foo-0, id=ASNFZ4mrze8BI0VniavN7w}, startOffset=0, endOffset=99, brokerId=1, "
        "maxTimestampMs=5, eventTimestampMs=6, segmentLeaderEpochs={0=0, 3=50}, segmentSizeInBytes=1024, "
        "customMetadata=Optional.empty, state=COPY_SEGMENT_STARTED, txnIdxEmpty=false}"
    )
    snapshot = _remote(
        "RemoteLogSegmentMetadataSnapshotRecord", {**common, "SegmentId": SEGMENT_ID, "TxnIndexEmpty": True}
    )
    assert REMOTE.parse(_record(None, snapshot))[1] == (
        "RemoteLogSegmentMetadataSnapshot{segmentId=ASNFZ4mrze8BI0VniavN7w, startOffset=0, endOffset=99, "
        "maxTimestampMs=5, segmentLeaderEpochs={0=0, 3=50}, segmentSizeInBytes=1024, customMetadata=Optional.empty, "
        "state=COPY_SEGMENT_STARTED, txnIdxEmpty=true}"
    )
    # Kafka 3.9's toString had no txnIdxEmpty (RemoteLogSegmentMetadata and ...Snapshot of the tag 3.9.1)
    remote_39 = InternalTopicParser("remote-log-metadata", kafka_release.release("3.9"))
    assert remote_39.parse(_record(None, snapshot))[1] == (
        "RemoteLogSegmentMetadataSnapshot{segmentId=ASNFZ4mrze8BI0VniavN7w, startOffset=0, endOffset=99, "
        "maxTimestampMs=5, segmentLeaderEpochs={0=0, 3=50}, segmentSizeInBytes=1024, customMetadata=Optional.empty, "
        "state=COPY_SEGMENT_STARTED}"
    )
    assert remote_39.parse(
        _record(None, _remote("RemoteLogSegmentMetadataRecord", {**common, "RemoteLogSegmentId": segment}))
    )[1].endswith("customMetadata=Optional.empty, state=COPY_SEGMENT_STARTED}")
    bad = _remote(
        "RemoteLogSegmentMetadataRecord", {**common, "RemoteLogSegmentId": segment, "StartOffset": 100}
    )
    assert REMOTE.parse(_record(None, bad, 3))[1] == (
        "Error at offset 3, skipping. Unexpected end offset = 99. EndOffset for a remote segment cannot be less "
        "than startOffset = 100"
    )
    no_epochs = _remote(
        "RemoteLogSegmentMetadataSnapshotRecord",
        {**common, "SegmentId": SEGMENT_ID, "SegmentLeaderEpochs": []},
    )
    assert REMOTE.parse(_record(None, no_epochs))[1].endswith("segmentLeaderEpochs can not be null or empty")
    corrupted = REMOTE.parse(_record(None, b"corrupted"))[1]
    assert corrupted is not None and "Could not deserialize metadata record" in corrupted
    assert REMOTE.parse(_record(None, None))[1].startswith("Error at offset 0, skipping. Cannot invoke")


# -- the decoded form as data ----------------------------------------------------------------------------------


def test_decoded_form_for_json_and_data_frames() -> None:
    key = _coordinator(G, "OffsetCommitKey", 1, {"group": "g", "topic": "t", "partition": 0})
    value = _value(
        G["OffsetCommitValue"], {"offset": 42, "leaderEpoch": 0, "metadata": "", "commitTimestamp": 7}, 3
    )
    assert decode_jsonable("offsets", key, value) == {
        "decoder": "offsets",
        "kind": "OffsetCommit",
        "keyVersion": 1,
        "key": {"group": "g", "topic": "t", "partition": 0},
        "valueVersion": 3,
        "value": {"offset": 42, "leaderEpoch": 0, "metadata": "", "commitTimestamp": 7},
    }
    topic = _framed(2, 0, write_message(M["TopicRecord"], {"Name": "foo", "TopicId": TOPIC_ID}, 0))
    decoded = decode_jsonable("cluster-metadata", None, topic)
    assert decoded["type"] == "TOPIC_RECORD" and decoded["value"] == {
        "name": "foo",
        "topicId": "Uj5wn_FqTXirEASvVZRY1w",
    }
    assert decode_jsonable("offsets", b"\x7f\xff", None) == {
        "decoder": "offsets",
        "error": "Found an unknown record type 32767",
    }
    assert decode_key_value("offsets", key, None).is_tombstone
    with pytest.raises(ValueError, match="unknown internal-topic decoder"):
        decode_key_value("nope", None, None)


@settings(max_examples=300, deadline=None)
@given(
    decoder=st.sampled_from(DECODERS),
    key=st.one_of(st.none(), st.binary(max_size=40)),
    value=st.one_of(st.none(), st.binary(max_size=80)),
)
def test_garbage_never_escapes_as_a_python_error(
    decoder: str, key: bytes | None, value: bytes | None
) -> None:
    parser = InternalTopicParser(decoder)
    try:
        key_text, payload = parser.parse(_record(key, value))
    except KdumpError:
        return
    assert key_text is None or isinstance(key_text, str)
    assert payload is None or isinstance(payload, str)


def test_reader_errors_carry_javas_message() -> None:
    schema = M["TopicRecord"]
    with pytest.raises(MessageFormatError) as e:
        read_message(schema, b"\x04ab", 0)
    assert e.value.java_text == "Error reading byte array of 3 byte(s): only 2 byte(s) available"
    with pytest.raises(MessageFormatError) as e:
        read_message(schema, b"\x80\x80\x80\x80\x80", 0)
    assert (
        e.value.java_text
        == "Varint is too long, the most significant bit in the 5th byte is set, converted value: 0"
    )
    with pytest.raises(MessageFormatError) as e:  # a 5-byte varint wraps to a negative Java int: null
        read_message(schema, b"\x80\x80\x80\x80\x7f", 0)
    assert e.value.java_text == "non-nullable field name was serialized as null"


# -- end to end through kdump files ----------------------------------------------------------------------------


def test_dump_with_each_decoder(tmp_path) -> None:  # noqa: ANN001
    key = _coordinator(S, "ShareUpdateKey", 1, {"GroupId": "g", "TopicId": TOPIC_ID, "Partition": 0})
    value = _value(
        S["ShareUpdateValue"], {"SnapshotEpoch": 1, "LeaderEpoch": 2, "StartOffset": 3, "StateBatches": []}, 0
    )
    topic = _framed(2, 0, write_message(M["TopicRecord"], {"Name": "foo", "TopicId": TOPIC_ID}, 0))
    segment = build_segment(
        [
            build_v2_batch([SimpleRecord(value, key, timestamp=1700000000000)], base_offset=0),
            build_v2_batch([SimpleRecord(topic, None, timestamp=1700000000000)], base_offset=1),
        ]
    )
    path = tmp_path / "00000000000000000000.log"
    path.write_bytes(segment)
    code, out, err = run_kdump(
        ["--files", str(path), "--share-group-state-decoder", "--skip-record-metadata"]
    )
    lines = out.decode().splitlines()
    assert code == 1 and err.count(b"\n") == 1  # the key-less record at offset 1 is fatal, as in Kafka
    assert "share group state topic decoder (message had a missing key)" in err.decode()
    assert lines[3] == (
        '| key: {"type":"1","data":{"groupId":"g","topicId":"Uj5wn_FqTXirEASvVZRY1w","partition":0}} '
        'payload: {"type":"0","data":{"snapshotEpoch":1,"leaderEpoch":2,"startOffset":3,"stateBatches":[]}}'
    )
    assert lines[4].startswith("baseOffset: 1 ") and len(lines) == 5
    # offsets takes precedence over cluster-metadata, and dies on the key-less record with the line unfinished
    code, out, err = run_kdump(["--files", str(path), "--cluster-metadata-decoder", "--offsets-decoder"])
    assert code == 1 and err.count(b"\n") == 1
    assert out.endswith(b"headerKeys: []")
    code, out, err = run_kdump(["--files", str(path), "--cluster-metadata-decoder"])
    assert (code, err) == (0, b"")
    lines = out.decode().splitlines()
    assert lines[3].endswith(
        "payload: Error at 0, skipping. Could not deserialize metadata record with frame version 0. Note that "
        "upgrades from the preview release of KRaft in 2.8 to newer versions are not supported."
    )
    assert lines[-1].endswith(
        'payload: {"type":"TOPIC_RECORD","version":0,"data":{"name":"foo","topicId":"Uj5wn_FqTXirEASvVZRY1w"}}'
    )
