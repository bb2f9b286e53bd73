"""Decoding the records of Kafka's internal topics into :class:`~kdump.storage.message_schema.Struct` values.

One entry point, :func:`decode_key_value`, takes a decoder name (the ``kafka-dump-log.sh`` flag without
``--`` and ``-decoder``) and a record's raw key and value and returns a :class:`DecodedRecord`.  The schemas
live in :mod:`kdump.storage.schemas` and are read by the generic reader; this module only knows how each topic
frames its key and value, and which failures Kafka 4.0 reports and which ones it dies of:

* ``offsets`` (``__consumer_offsets``) and ``share-group-state`` (``__share_group_state``): the key starts with
  an int16 record type, the value with an int16 version (``CoordinatorRecordSerde``); a null value is a
  tombstone.
* ``transaction-log`` (``__transaction_state``): int16 key version and value version, as Kafka 4.0's Scala
  ``TransactionLog`` reads them (its failures are fatal).
* ``cluster-metadata`` (``__cluster_metadata``, KRaft snapshots) and ``remote-log-metadata``
  (``__remote_log_metadata``): the value is framed as unsigned varints (frame version, apiKey, version); the
  key is not used.

Nothing here prints; :mod:`kdump.render.internal_topics` turns the result into Kafka's text.
"""

from __future__ import annotations

import struct
from dataclasses import dataclass
from typing import Any

from kdump.errors import KdumpError
from kdump.storage.message_reader import MessageFormatError, read_message_prefix, read_unsigned_varint_java
from kdump.storage.message_schema import Field, MessageSchema, Struct
from kdump.storage.schemas import (
    NEWEST_KAFKA_SOURCE,
    group_coordinator,
    metadata,
    release_schemas,
    remote_log_metadata,
    share_coordinator,
    transaction_log,
)

#: The decoder of each internal topic, by topic name.
TOPIC_DECODERS = {
    "__consumer_offsets": "offsets",
    "__transaction_state": "transaction-log",
    "__cluster_metadata": "cluster-metadata",
    "__remote_log_metadata": "remote-log-metadata",
    "__share_group_state": "share-group-state",
}

#: Decoder names, in Kafka's order of precedence when several flags are given.
DECODERS = ("offsets", "transaction-log", "cluster-metadata", "remote-log-metadata", "share-group-state")

_SHORT = struct.Struct(">h")


class InternalTopicError(KdumpError):
    """A record of an internal topic cannot be decoded."""


class RecordDecodeError(InternalTopicError):
    """A failure Kafka's tool reports inside the record line and then goes on (``Error at ..., skipping.``).

    ``java_text`` is the text of the Java exception Kafka prints (``getMessage()``, ``null`` when it has none).
    """

    kafka_class = "java.lang.RuntimeException"

    def __init__(self, java_text: str) -> None:
        super().__init__(java_text)
        self.java_text = java_text


class NewerThanKdumpError(RecordDecodeError):
    """A record of a type or version kdump does not know (when decoding with ``newest``: the newest schemas kdump
    holds): most likely a broker newer than kdump, not damage."""


class UnknownRecordTypeError(NewerThanKdumpError):
    """A coordinator record whose key has a record type the serde does not know."""

    kafka_class = "org.apache.kafka.coordinator.common.runtime.Deserializer$UnknownRecordTypeException"

    def __init__(self, record_type: int) -> None:
        super().__init__(f"Found an unknown record type {record_type}")
        self.record_type = record_type


class FatalDecodeError(InternalTopicError):
    """A failure Kafka's tool dies of (the run stops with exit status 1)."""

    def __init__(self, message: str, kafka_class: str = "java.lang.RuntimeException") -> None:
        super().__init__(message)
        self.kafka_class = kafka_class


@dataclass
class DecodedRecord:
    """A decoded internal-topic record.

    ``kind`` names the record type (``OffsetCommit``, ``GroupMetadata``, ``ShareSnapshot``, ``TransactionLog``,
    ``TopicRecord``, ``RemoteLogSegmentMetadataRecord``, ...; ``Unknown`` for a transaction-log key of an unknown
    version).  ``key_version`` is the coordinator record type or the key's version prefix; ``value`` is None for
    a tombstone (or, for the metadata topics, which have no key, ``key`` is None).  ``api_key`` is set for the
    varint-framed topics.
    """

    decoder: str
    kind: str
    key: Struct | None
    key_version: int | None
    value: Struct | None
    value_version: int | None
    api_key: int | None = None
    #: Decoded with a schema newer than Kafka 4.0's: a record type or version 4.0 does not know (only when
    #: decoding with ``newest``).
    beyond_kafka40: bool = False

    @property
    def is_tombstone(self) -> bool:
        return self.key is not None and self.value is None


def coordinator_tables(
    decoder: str, line: str
) -> tuple[dict[int, tuple[str, str]], dict[str, MessageSchema]]:
    """The record types and schemas release ``line``'s tool decodes coordinator topic ``decoder`` with
    (``offsets``, ``share-group-state``; ``transaction-log`` from 4.1 on, when it became a coordinator serde)."""
    cached = _TABLES.get((decoder, line))
    if cached is None:
        module = {
            "offsets": group_coordinator,
            "share-group-state": share_coordinator,
            "transaction-log": transaction_log,
        }[decoder]
        types = module.RELEASE_RECORD_TYPES[line]
        cached = _TABLES[(decoder, line)] = (
            types,
            release_schemas(module.SCHEMAS, module.RELEASE_SCHEMA_TEXT, line),
        )
    return cached


_TABLES: dict[tuple[str, str], tuple[dict[int, tuple[str, str]], dict[str, MessageSchema]]] = {}


def decode_release_record(decoder: str, line: str, key: bytes | None, value: bytes | None) -> DecodedRecord:
    """Decode one record as release ``line``'s ``--<decoder>-decoder`` does (``kdump files --kafka-version``):
    with that release's schemas, and for the transaction log from 4.1 on as a coordinator record (4.1's
    ``TransactionCoordinatorRecordSerde``: its failures are reported and skipped, no longer fatal)."""
    if (
        decoder == "offsets"
        or decoder == "share-group-state"
        or (decoder == "transaction-log" and line in transaction_log.RELEASE_RECORD_TYPES)
    ):
        types, schemas = coordinator_tables(decoder, line)
        decoded = decode_coordinator_record(decoder, types, schemas, key, value)
        if decoded.kind == "GroupMetadata" and decoded.value is not None:
            decoded.value = expand_consumer_protocol(decoded.value)
        return decoded
    if line == "3.9":
        if decoder == "cluster-metadata":
            return decode_framed(decoder, metadata.BY_API_KEY_39, value)
        if decoder == "transaction-log":
            return decode_transaction_log(key, value, client_version=False)
    return decode_key_value(decoder, key, value)


def decode_key_value(
    decoder: str, key: bytes | None, value: bytes | None, *, newest: bool = False
) -> DecodedRecord:
    """Decode one record's key and value as Kafka 4.0's ``--<decoder>-decoder`` does; with ``newest`` (kdump's
    own modes) with the newest schemas kdump holds, marking what Kafka 4.0 would not have decoded
    (:attr:`DecodedRecord.beyond_kafka40`) and naming versions newer than kdump knows.

    Raises :class:`RecordDecodeError` (with :class:`UnknownRecordTypeError`) for the failures Kafka reports
    and skips, :class:`FatalDecodeError` for those it dies of; ``ValueError`` for an unknown decoder name.
    A coordinator record without key is a :class:`FatalDecodeError` (the caller words it with the offset).
    """
    if decoder == "offsets":
        decoded = decode_coordinator_record(
            decoder,
            group_coordinator.NEWEST_RECORD_TYPES if newest else group_coordinator.RECORD_TYPES,
            group_coordinator.NEWEST_SCHEMAS if newest else group_coordinator.SCHEMAS,
            key,
            value,
            newest=newest,
        )
        if newest:
            decoded.beyond_kafka40 = _beyond_kafka40(
                decoded, group_coordinator.SCHEMAS, group_coordinator.RECORD_TYPES
            )
        if decoded.kind == "GroupMetadata" and decoded.value is not None:
            decoded.value = expand_consumer_protocol(decoded.value)
        return decoded
    if decoder == "share-group-state":
        if not newest:
            return decode_coordinator_record(
                decoder, share_coordinator.RECORD_TYPES, share_coordinator.SCHEMAS, key, value
            )
        decoded = decode_coordinator_record(
            decoder, share_coordinator.RECORD_TYPES, share_coordinator.NEWEST_SCHEMAS, key, value, newest=True
        )
        decoded.beyond_kafka40 = _beyond_kafka40(
            decoded, share_coordinator.SCHEMAS, share_coordinator.RECORD_TYPES
        )
        return decoded
    if decoder == "transaction-log":
        return decode_transaction_log(key, value, newest=newest)
    if decoder == "cluster-metadata":
        if not newest:
            return decode_framed(decoder, metadata.BY_API_KEY, value)
        decoded = decode_framed(decoder, metadata.BY_API_KEY_NEWEST, value, newest=True)
        known = metadata.BY_API_KEY.get(decoded.api_key or 0)
        decoded.beyond_kafka40 = known is None or decoded.value_version not in known.version_range
        return decoded
    if decoder == "remote-log-metadata":
        if value is None:
            raise RecordDecodeError(
                'Cannot invoke "java.nio.ByteBuffer.remaining()" because the return value of '
                '"org.apache.kafka.common.record.Record.value()" is null'
            )
        return decode_framed(decoder, remote_log_metadata.BY_API_KEY, value)
    raise ValueError(f"unknown internal-topic decoder {decoder!r}; known: {', '.join(DECODERS)}")


# -- coordinator records (__consumer_offsets, __share_group_state) ------------------------------------------


def _beyond_kafka40(
    decoded: DecodedRecord, schemas_40: dict[str, MessageSchema], types_40: dict[int, tuple[str, str]]
) -> bool:
    """Whether a record decoded with the newest schemas is one Kafka 4.0 would not have read so: a record type
    4.0 does not know, or a value whose untagged layout changed since 4.0 (tagged fields 4.0 does not know it
    skips, as it does for every version it knows)."""
    names = types_40.get(decoded.key_version if decoded.key_version is not None else -1)
    if names is None:
        return True
    if decoded.value is None:
        return False
    return _untagged(schemas_40[names[1]].fields) != _untagged(decoded.value.fields)


def _untagged(fields: tuple[Field, ...]) -> tuple[Any, ...]:
    return tuple(
        (f.name, f.type, f.versions, f.nullable_versions, _untagged(f.fields))
        for f in fields
        if f.tag is None
    )


def decode_coordinator_record(
    decoder: str,
    record_types: dict[int, tuple[str, str]],
    schemas: dict[str, MessageSchema],
    key: bytes | None,
    value: bytes | None,
    *,
    newest: bool = False,
) -> DecodedRecord:
    """``CoordinatorRecordSerde.deserialize``: record type, key at that version, value version, value."""
    if key is None:
        raise FatalDecodeError("message had a missing key")
    if len(key) < 2:
        raise RecordDecodeError("Could not read version from key's buffer.")
    record_type = _SHORT.unpack_from(key, 0)[0]
    names = record_types.get(record_type)
    if names is None:
        raise UnknownRecordTypeError(record_type)
    key_schema, value_schema = schemas[names[0]], schemas[names[1]]
    key_struct = _read_coordinator_message(key_schema, key, record_type, "key")
    kind = key_schema.name.removesuffix("Key")
    if value is None:
        return DecodedRecord(decoder, kind, key_struct, record_type, None, None)
    if len(value) < 2:
        raise RecordDecodeError("Could not read version from value's buffer.")
    value_version = _SHORT.unpack_from(value, 0)[0]
    if value_version not in value_schema.version_range:
        if newest:
            raise NewerThanKdumpError(_newer_than_kdump(value_schema, value_version))
        raise RecordDecodeError(f"Found an unknown record version {value_version} for {record_type} type")
    value_struct = _read_coordinator_message(value_schema, value, value_version, "value")
    return DecodedRecord(decoder, kind, key_struct, record_type, value_struct, value_version)


def _read_coordinator_message(schema: MessageSchema, data: bytes, version: int, part: str) -> Struct:
    try:
        return read_message_prefix(schema, data, version, 2)[0]
    except MessageFormatError as e:
        raise RecordDecodeError(
            f"Could not read record with version {version} from {part}'s buffer due to: {e.java_text}."
        ) from None


def expand_consumer_protocol(value: Struct) -> Struct:
    """A ``GroupMetadataValue`` of a ``consumer`` group with each member's ``subscription`` and ``assignment``
    bytes replaced by the decoded ``ConsumerProtocolSubscription``/``Assignment`` (version = their first
    int16), as Kafka's offsets decoder shows them; bytes that do not decode stay bytes."""
    if value.get("protocolType") != "consumer" or not value.get("members"):
        return value
    members = []
    for member in value["members"]:
        replaced = dict(member.values)
        for field_name, schema_name in (
            ("subscription", "ConsumerProtocolSubscription"),
            ("assignment", "ConsumerProtocolAssignment"),
        ):
            data = replaced.get(field_name)
            if isinstance(data, bytes):
                decoded = _decode_embedded(group_coordinator.CONSUMER_PROTOCOL[schema_name], data)
                if decoded is not None:
                    replaced[field_name] = decoded
        members.append(Struct(member.fields, member.version, replaced, member.unknown_tagged))
    values = dict(value.values)
    values["members"] = members
    return Struct(value.fields, value.version, values, value.unknown_tagged)


def _decode_embedded(schema: MessageSchema, data: bytes) -> Struct | None:
    if len(data) < 2:
        return None
    try:
        return read_message_prefix(schema, data, _SHORT.unpack_from(data, 0)[0], 2)[0]
    except MessageFormatError:
        return None


# -- __transaction_state ---------------------------------------------------------------------------------------


def decode_transaction_log(
    key: bytes | None, value: bytes | None, *, newest: bool = False, client_version: bool = True
) -> DecodedRecord:
    """Kafka 4.0's ``TransactionLog.readTxnRecordKey``/``readTxnRecordValue`` (its failures are fatal).
    ``client_version=False``: Kafka 3.9's, which does not read ``ClientTransactionVersion`` (so does not fail on
    a level ``TransactionVersion.fromFeatureLevel`` does not know)."""
    if key is None:
        raise FatalDecodeError(
            'Cannot invoke "java.nio.ByteBuffer.getShort()" because "buffer" is null',
            "java.lang.NullPointerException",
        )
    key_schema = transaction_log.SCHEMAS["TransactionLogKey"]
    key_version = _fatal_short(key, "key")
    if key_version not in key_schema.version_range:
        return DecodedRecord("transaction-log", "Unknown", None, key_version, None, None)
    key_struct = _fatal_read(key_schema, key, key_version)
    if value is None:
        return DecodedRecord("transaction-log", "TransactionLog", key_struct, key_version, None, None)
    value_schema = (transaction_log.NEWEST_SCHEMAS if newest else transaction_log.SCHEMAS)[
        "TransactionLogValue"
    ]
    value_version = _fatal_short(value, "value")
    if value_version not in value_schema.version_range:
        if newest:
            raise NewerThanKdumpError(_newer_than_kdump(value_schema, value_version))
        raise FatalDecodeError(
            f"Unknown version {value_version} from the transaction log message value",
            "java.lang.IllegalStateException",
        )
    value_struct = _fatal_read(value_schema, value, value_version)
    status = value_struct["TransactionStatus"]
    if status not in transaction_log.TRANSACTION_STATES:
        raise FatalDecodeError(
            f"Unknown transaction state id {status} from the transaction status message",
            "java.lang.IllegalStateException",
        )
    level = value_struct.get("ClientTransactionVersion", 0)
    if client_version and level not in (0, 1, 2):
        raise FatalDecodeError(
            f"No feature:transaction.version with feature level {level}",
            "java.lang.IllegalArgumentException",
        )
    if status != 0 and value_struct["TransactionPartitions"] is None:
        raise FatalDecodeError(
            "the transaction partitions are null (java.lang.NullPointerException)",
            "java.lang.NullPointerException",
        )
    return DecodedRecord(
        "transaction-log", "TransactionLog", key_struct, key_version, value_struct, value_version
    )


def _fatal_short(data: bytes, part: str) -> int:
    if len(data) < 2:
        raise FatalDecodeError(
            f"the transaction log {part} is shorter than its 2-byte version",
            "java.nio.BufferUnderflowException",
        )
    version: int = _SHORT.unpack_from(data, 0)[0]  # struct's unpacked values are typed Any
    return version


def _fatal_read(schema: MessageSchema, data: bytes, version: int) -> Struct:
    try:
        return read_message_prefix(schema, data, version, 2)[0]
    except MessageFormatError as e:
        raise FatalDecodeError(f"cannot read {schema.name} version {version}: {e.java_text}") from None


# -- varint-framed records (__cluster_metadata, __remote_log_metadata) ----------------------------------------


def _newer_than_kdump(schema: MessageSchema, version: int) -> str:
    return (
        f"{schema.name} version {version} is newer than kdump knows (versions {schema.valid_versions}, as of "
        f"{NEWEST_KAFKA_SOURCE})"
    )


def read_frame(data: bytes) -> tuple[int, int, int]:
    """The frame of a metadata-style record value (``AbstractApiMessageSerde.read``): frame version 1, apiKey,
    version; returns ``(api key, version, position of the message)``.  RecordDecodeError with Kafka's words."""
    pos = 0
    fields = []
    for entity in ("frame version", "type", "version"):
        try:
            n, pos = read_unsigned_varint_java(data, pos)
        except MessageFormatError:
            raise RecordDecodeError(f"Error while reading {entity}") from None
        if n > 0x7FFF:
            raise RecordDecodeError(f"Value for {entity} was too large.")
        n = _int16(n)
        fields.append(n)
        if entity == "frame version":
            if n == 0:
                raise RecordDecodeError(
                    "Could not deserialize metadata record with frame version 0. Note that upgrades from the "
                    "preview release of KRaft in 2.8 to newer versions are not supported."
                )
            if n != 1:
                raise RecordDecodeError(
                    f"Could not deserialize metadata record due to unknown frame version {n}"
                    "(only frame version 1 is supported)"
                )
    _, api_key, version = fields
    return api_key, version, pos


def decode_framed(
    decoder: str, by_api_key: dict[int, MessageSchema], value: bytes | None, *, newest: bool = False
) -> DecodedRecord:
    """``AbstractApiMessageSerde.read``: frame version 1, apiKey, version, the record, nothing after it."""
    data = b"" if value is None else value
    api_key, version, pos = read_frame(data)
    schema = by_api_key.get(api_key)
    if schema is None:
        raise (NewerThanKdumpError if newest else RecordDecodeError)(
            f"org.apache.kafka.common.errors.UnsupportedVersionException: Unknown metadata id {api_key}"
        )
    if newest and version not in schema.version_range:
        raise NewerThanKdumpError(_newer_than_kdump(schema, version))
    try:
        record, end = read_message_prefix(schema, data, version, pos)
    except MessageFormatError:
        raise RecordDecodeError(f"Failed to deserialize record with type {api_key}") from None
    if end < len(data):
        raise RecordDecodeError(f"Found {len(data) - end} byte(s) of garbage after {api_key}")
    return DecodedRecord(decoder, schema.name, None, None, record, version, api_key)


def _int16(v: int) -> int:
    v &= 0xFFFF
    return v - 0x10000 if v >= 0x8000 else v
