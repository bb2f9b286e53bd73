"""Kafka's ``ControlRecordType`` (org.apache.kafka.common.record.ControlRecordType): a control record's type, read
from its key (``version int16, type int16``) by ``parseTypeId``.  Apart from :mod:`kdump.storage.control_record`
(the values: end-transaction markers and the KRaft messages, whose schemas load the generic message reader), so
that the checks that only ask a control batch's type (``verify``, ``txn``) load no message schema."""

from __future__ import annotations

import struct
from enum import Enum

from kdump.errors import InvalidRecordError


class ControlRecordType(Enum):
    ABORT = 0
    COMMIT = 1
    LEADER_CHANGE = 2
    SNAPSHOT_HEADER = 3
    SNAPSHOT_FOOTER = 4
    KRAFT_VERSION = 5
    KRAFT_VOTERS = 6
    UNKNOWN = -1

    @classmethod
    def from_type_id(cls, type_id: int) -> ControlRecordType:
        try:
            member = cls(type_id)
        except ValueError:
            return cls.UNKNOWN
        return member


CURRENT_CONTROL_RECORD_KEY_SIZE = 4

_SHORT = struct.Struct(">h")


def parse_type_id(key: bytes | None) -> int:
    """Kafka's ``ControlRecordType.parseTypeId``: the type id from a control record key."""
    if key is None:
        raise InvalidRecordError("Control record has a null key")
    if len(key) < CURRENT_CONTROL_RECORD_KEY_SIZE:
        raise InvalidRecordError(
            "Invalid value size found for end control record key. Must have at least "
            f"{CURRENT_CONTROL_RECORD_KEY_SIZE} bytes, but found only {len(key)}"
        )
    version = _SHORT.unpack_from(key, 0)[0]
    if version < 0:
        raise InvalidRecordError(
            f"Invalid version found for control record: {version}. May indicate data corruption"
        )
    type_id: int = _SHORT.unpack_from(key, 2)[0]  # struct's unpacked values are typed Any
    return type_id
