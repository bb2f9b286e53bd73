"""``__remote_log_metadata`` records as tests write them (tests/test_tiered.py, tests/test_verify_remote.py,
tests/test_remote_layout.py): a message of Kafka's remote-log-metadata schemas, written by kdump's message
writer, in the frame Kafka's ``BytesApiMessageSerde`` reads (frame version, api key, version: unsigned varints),
and the segment states of ``RemoteLogSegmentState``."""

from __future__ import annotations

from kdump.storage.message_writer import write_message
from kdump.storage.schemas import remote_log_metadata as schemas
from kdump.storage.varint import encode_unsigned_varint

#: ``RemoteLogSegmentState``'s ids.
STARTED, FINISHED, DELETE_STARTED, DELETE_FINISHED = 0, 1, 2, 3


def framed(name: str, values: dict) -> bytes:
    """The record value of message ``name`` (a schema of ``remote_log_metadata``) holding ``values``."""
    schema = schemas.SCHEMAS[name]
    head = encode_unsigned_varint(1) + encode_unsigned_varint(schema.api_key or 0) + encode_unsigned_varint(0)
    return head + write_message(schema, values, 0)
