"""The text Kafka's ``kafka-dump-log.sh`` prints for a control record after its metadata (4.0's, and 4.1's that
also prints LEADER_CHANGE): loaded by :mod:`kdump.render.kafka_text` on the first control record, since the
message schemas and the JSON writer it needs cost every run's start-up otherwise."""

from __future__ import annotations

import uuid as _uuid

from kdump.render.kafka_json import struct_to_json
from kdump.storage.control_record import ControlRecordType, decode_control_record
from kdump.storage.message_schema import Struct
from kdump.storage.record import Record

#: Control types that Kafka 4.0's tool prints with their message (as JSON); others print ``controlType:``.
_PRINTED_CONTROL_MESSAGES = {
    ControlRecordType.SNAPSHOT_HEADER: "SnapshotHeader",
    ControlRecordType.SNAPSHOT_FOOTER: "SnapshotFooter",
    ControlRecordType.KRAFT_VERSION: "KRaftVersion",
    ControlRecordType.KRAFT_VOTERS: "KRaftVoters",
}


def control_description(record: Record) -> str:
    """What Kafka 4.0 prints for a control record after its metadata (raises on a malformed record)."""
    control = decode_control_record(record.key, record.value, messages=_PRINTED_CONTROL_MESSAGES)
    if control.marker is not None:
        return f" endTxnMarker: {control.marker.control_type.name} coordinatorEpoch: {control.marker.coordinator_epoch}"
    if control.message is not None:
        return f" {_PRINTED_CONTROL_MESSAGES[control.control_type]} {struct_to_json(control.message)}"
    return f" controlType: {control.control_type.name}({control.type_id})"


#: Kafka 4.1's ``DumpLogSegments.printControlRecord`` also prints LEADER_CHANGE's message (KAFKA-19069).
_PRINTED_CONTROL_MESSAGES_41 = {**_PRINTED_CONTROL_MESSAGES, ControlRecordType.LEADER_CHANGE: "LeaderChange:"}
_ZERO_UUID = _uuid.UUID(int=0)


def control_description_41(record: Record) -> str:
    """What Kafka 4.1 and 4.2 print for a control record after its metadata: 4.0's text, and LEADER_CHANGE as
    ``LeaderChange: {json}``, the message read at version 0 and written by ``LeaderChangeMessageJsonConverter``
    at the version its ``Version`` field holds (``leaderChangeMessage.version()``): from 1 on each voter also
    shows its ``voterDirectoryId``, the zero uuid (not read at version 0)."""
    control = decode_control_record(record.key, record.value, messages=_PRINTED_CONTROL_MESSAGES_41)
    if control.marker is not None:
        return f" endTxnMarker: {control.marker.control_type.name} coordinatorEpoch: {control.marker.coordinator_epoch}"
    message = control.message
    if message is not None:
        if control.control_type is ControlRecordType.LEADER_CHANGE and message["Version"] >= 1:
            message = _with_voter_directories(message)
        return f" {_PRINTED_CONTROL_MESSAGES_41[control.control_type]} {struct_to_json(message)}"
    return f" controlType: {control.control_type.name}({control.type_id})"


def _with_voter_directories(message: Struct) -> Struct:
    values = dict(message.values)
    for name in ("Voters", "GrantingVoters"):
        values[name] = [
            Struct(v.fields, v.version, {**v.values, "VoterDirectoryId": _ZERO_UUID}, v.unknown_tagged)
            for v in values[name]
        ]
    return Struct(message.fields, message.version, values, message.unknown_tagged)
