"""Control records: the records of batches with the control bit set (Kafka's ``ControlRecordType``,
``EndTransactionMarker`` and the KRaft control messages).

A control record's key is ``version int16, type int16``.  Its value depends on the type: end-transaction
markers (ABORT/COMMIT) hold ``version int16, coordinatorEpoch int32``; the KRaft types hold generated
flexible messages, described here as schemas for the generic reader in :mod:`kdump.storage.message_reader`.
"""

from __future__ import annotations

import struct
from collections.abc import Collection
from dataclasses import dataclass

from kdump.errors import InvalidRecordError
from kdump.storage.control_record_type import ControlRecordType as ControlRecordType  # re-exported
from kdump.storage.control_record_type import parse_type_id as parse_type_id  # re-exported
from kdump.storage.message_reader import MessageFormatError, read_message_prefix
from kdump.storage.message_schema import Field, MessageSchema, Struct

CURRENT_END_TXN_MARKER_VALUE_SIZE = 6

_END_TXN = struct.Struct(">hi")


@dataclass(frozen=True)
class EndTransactionMarker:
    control_type: ControlRecordType
    coordinator_epoch: int
    version: int = 0

    @classmethod
    def deserialize(cls, key: bytes | None, value: bytes | None) -> EndTransactionMarker:
        control_type = ControlRecordType.from_type_id(parse_type_id(key))
        if control_type not in (ControlRecordType.ABORT, ControlRecordType.COMMIT):
            raise InvalidRecordError(
                f"Invalid control record type for end transaction marker {control_type.name}"
            )
        if value is None:
            raise InvalidRecordError("End transaction marker has a null value")
        if len(value) < CURRENT_END_TXN_MARKER_VALUE_SIZE:
            raise InvalidRecordError(
                "Invalid value size found for end transaction marker. Must have at least "
                f"{CURRENT_END_TXN_MARKER_VALUE_SIZE} bytes, but found only {len(value)}"
            )
        version, coordinator_epoch = _END_TXN.unpack_from(value, 0)
        if version < 0:
            raise InvalidRecordError(
                f"Invalid version found for end transaction marker: {version}. May indicate data corruption"
            )
        return cls(control_type, coordinator_epoch, version)

    def serialize_value(self) -> bytes:
        return _END_TXN.pack(self.version, self.coordinator_epoch)


def control_key(control_type: ControlRecordType, version: int = 0) -> bytes:
    """The key of a control record of ``control_type``."""
    return struct.pack(">hh", version, control_type.value)


# -- KRaft control messages (clients/src/main/resources/common/message/*.json, flexible version 0) ----------

_VERSION = Field("Version", "int16")

SNAPSHOT_HEADER_RECORD = MessageSchema(
    "SnapshotHeaderRecord", "0", "0+", (_VERSION, Field("LastContainedLogTimestamp", "int64"))
)
SNAPSHOT_FOOTER_RECORD = MessageSchema("SnapshotFooterRecord", "0", "0+", (_VERSION,))
KRAFT_VERSION_RECORD = MessageSchema(
    "KRaftVersionRecord", "0", "0+", (_VERSION, Field("KRaftVersion", "int16"))
)
VOTERS_RECORD = MessageSchema(
    "VotersRecord",
    "0",
    "0+",
    (
        _VERSION,
        Field(
            "Voters",
            "[]Voter",
            fields=(
                Field("VoterId", "int32"),
                Field("VoterDirectoryId", "uuid"),
                Field(
                    "Endpoints",
                    "[]Endpoint",
                    fields=(Field("Name", "string"), Field("Host", "string"), Field("Port", "uint16")),
                ),
                Field(
                    "KRaftVersionFeature",
                    "KRaftVersionFeature",
                    fields=(Field("MinSupportedVersion", "int16"), Field("MaxSupportedVersion", "int16")),
                ),
            ),
        ),
    ),
)
_VOTER = (Field("VoterId", "int32"), Field("VoterDirectoryId", "uuid", "1+"))
#: ``LeaderChangeMessage`` (versions 0-1; version 1 adds ``VoterDirectoryId``, KIP-853).  Kafka reads it at
#: version 0 (``ControlRecordUtils.LEADER_CHANGE_CURRENT_VERSION``), whatever its ``Version`` field says.
LEADER_CHANGE_MESSAGE = MessageSchema(
    "LeaderChangeMessage",
    "0-1",
    "0+",
    (
        _VERSION,
        Field("LeaderId", "int32"),
        Field("Voters", "[]Voter", fields=_VOTER),
        Field("GrantingVoters", "[]Voter", fields=_VOTER),
    ),
)

#: Schemas of the control types whose values are generated messages.
CONTROL_SCHEMAS: dict[ControlRecordType, MessageSchema] = {
    ControlRecordType.LEADER_CHANGE: LEADER_CHANGE_MESSAGE,
    ControlRecordType.SNAPSHOT_HEADER: SNAPSHOT_HEADER_RECORD,
    ControlRecordType.SNAPSHOT_FOOTER: SNAPSHOT_FOOTER_RECORD,
    ControlRecordType.KRAFT_VERSION: KRAFT_VERSION_RECORD,
    ControlRecordType.KRAFT_VOTERS: VOTERS_RECORD,
}


def deserialize_control_message(control_type: ControlRecordType, value: bytes | None) -> Struct:
    """Decode the value of a KRaft control record at its current version (0), as Kafka's
    ``ControlRecordUtils`` does (trailing bytes are not checked)."""
    schema = CONTROL_SCHEMAS[control_type]
    if value is None:
        raise InvalidRecordError(f"{schema.name} control record has a null value")
    try:
        struct_, _ = read_message_prefix(schema, value, 0)
    except MessageFormatError as e:
        raise InvalidRecordError(f"Failed to read {schema.name}: {e}") from None
    return struct_


@dataclass(frozen=True)
class ControlRecord:
    """A decoded control record: its type, and the end-transaction marker or the KRaft message it carries."""

    control_type: ControlRecordType
    type_id: int
    marker: EndTransactionMarker | None = None
    message: Struct | None = None


def decode_control_record(
    key: bytes | None,
    value: bytes | None,
    *,
    messages: Collection[ControlRecordType] = tuple(CONTROL_SCHEMAS),
) -> ControlRecord:
    """Decode a control record's key and, for ABORT/COMMIT and the types in ``messages``, its value (raises a
    KdumpError for malformed ones, as Kafka's tool dies of them)."""
    type_id = parse_type_id(key)
    control_type = ControlRecordType.from_type_id(type_id)
    if control_type in (ControlRecordType.ABORT, ControlRecordType.COMMIT):
        return ControlRecord(control_type, type_id, marker=EndTransactionMarker.deserialize(key, value))
    if control_type in messages and control_type in CONTROL_SCHEMAS:
        return ControlRecord(control_type, type_id, message=deserialize_control_message(control_type, value))
    return ControlRecord(control_type, type_id)
