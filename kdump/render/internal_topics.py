"""What Kafka 4.0's ``kafka-dump-log.sh`` prints for internal-topic records, and the same content as data.

:class:`InternalTopicParser` is the tool's message parser for ``--offsets-decoder``,
``--transaction-log-decoder``, ``--cluster-metadata-decoder``, ``--remote-log-metadata-decoder`` and
``--share-group-state-decoder``: it turns a record into the ``key: ... payload: ...`` texts, reporting decode
failures inside the line as Kafka does (``Error at offset ..., skipping. ...``) and raising a
:class:`~kdump.errors.KdumpError` where Kafka's tool dies.  :func:`decoded_jsonable` gives JSON output modes and
data frames the decoded record through the same decoding code (:mod:`kdump.storage.internal_topics`).
"""

from __future__ import annotations

from typing import Any

from kdump.jdk.collections import improve_hash, java_string_hash, to_int32
from kdump.render.kafka_json import kafka_uuid, struct_to_json, struct_to_jsonable
from kdump.storage.internal_topics import (
    DECODERS,
    DecodedRecord,
    FatalDecodeError,
    RecordDecodeError,
    UnknownRecordTypeError,
    decode_key_value,
    decode_release_record,
)
from kdump.storage.kafka_release import KafkaRelease
from kdump.storage.legacy_record import LegacyFieldError
from kdump.storage.message_schema import Struct
from kdump.storage.record import Record
from kdump.storage.schemas import metadata, remote_log_metadata, transaction_log

#: How Kafka names each coordinator decoder in its "missing key" error.
_MISSING_KEY_NAMES = {
    "offsets": "offset topic decoder",
    "share-group-state": "share group state topic decoder",
}
#: The decoders 4.1 made one ``CoordinatorRecordMessageParser`` (KAFKA-18207/18616).
_COORDINATOR_41 = ("offsets", "transaction-log", "share-group-state")
#: The name of the version member of the value wrapper (Kafka 4.0's share decoder still says "type").
_VALUE_WRAPPER = {"offsets": "version", "share-group-state": "type"}


class InternalTopicParser:
    """Kafka's ``OffsetsMessageParser``, ``TransactionLogMessageParser``, ``ClusterMetadataLogMessageParser``,
    ``RemoteMetadataLogMessageParser`` and ``ShareGroupStateMessageParser``."""

    is_string_parser = False

    def __init__(self, decoder: str, release: KafkaRelease | None = None) -> None:
        if decoder not in DECODERS:
            raise ValueError(f"unknown internal-topic decoder {decoder!r}")
        self.decoder = decoder
        self.line = "4.0" if release is None else release.line
        if release is not None and release.coordinator_parser and decoder in _COORDINATOR_41:
            self.parse = self._parse_coordinator_41  # type: ignore[method-assign]

    def parse(self, record: Record) -> tuple[str | None, str | None]:
        """The key and payload texts of one record (None: not printed)."""
        decoder = self.decoder
        if decoder in _MISSING_KEY_NAMES:
            return self._parse_coordinator(record)
        if decoder == "transaction-log":
            if record.key is None:  # Kafka dies of a NullPointerException here; say what it means
                raise FatalDecodeError(
                    f"the record at offset {record.offset} has no key, so this is not __transaction_state data "
                    "(--transaction-log-decoder reads only that topic)",
                    "java.lang.NullPointerException",
                )
            return transaction_log_texts(decode_release_record(decoder, self.line, record.key, record.value))
        try:  # these read the value only, inside their try (a legacy message's value may be cut short)
            decoded = decode_release_record(decoder, self.line, None, record.value)
        except (RecordDecodeError, LegacyFieldError) as e:
            if decoder == "cluster-metadata":
                return None, f"Error at {record.offset}, skipping. {e.java_text}"
            return None, f"Error at offset {record.offset}, skipping. {e.java_text}"
        if decoder == "cluster-metadata":
            return None, metadata_record_json(decoded)
        try:
            return None, remote_log_metadata_text(decoded, txn_idx_empty=self.line != "3.9")
        except RecordDecodeError as e:
            return None, f"Error at offset {record.offset}, skipping. {e.java_text}"

    def _parse_coordinator(self, record: Record) -> tuple[str | None, str | None]:
        if record.key_size < 0:  # Record.hasKey: the key's size only
            raise FatalDecodeError(
                f"Failed to decode message at offset {record.offset} using {_MISSING_KEY_NAMES[self.decoder]} "
                "(message had a missing key)"
            )
        try:
            decoded = decode_release_record(self.decoder, self.line, record.key, record.value)
        except UnknownRecordTypeError as e:
            return f"Unknown record type {e.record_type} at offset {record.offset}, skipping.", None
        except (RecordDecodeError, LegacyFieldError) as e:
            return f"Error at offset {record.offset}, skipping. {e.java_text}", None
        return coordinator_record_texts(decoded)

    def _parse_coordinator_41(self, record: Record) -> tuple[str | None, str | None]:
        """Kafka 4.1's ``CoordinatorRecordMessageParser`` (the offsets, transaction-log and share-group-state
        decoders): ``{"type":"<record type>","data":{key}}`` and ``{"version":"<v>","data":{value}}``."""
        if record.key_size < 0:  # Record.hasKey: the key's size only
            raise FatalDecodeError(
                f"Failed to decode message at offset {record.offset} using the specified decoder "
                "(message had a missing key)"
            )
        try:
            decoded = decode_release_record(self.decoder, self.line, record.key, record.value)
        except UnknownRecordTypeError as e:
            return f"Unknown record type {e.record_type} at offset {record.offset}, skipping.", None
        except (RecordDecodeError, LegacyFieldError) as e:
            return f"Error at offset {record.offset}, skipping. {e.java_text}", None
        assert decoded.key is not None
        key = f'{{"type":"{decoded.key_version}","data":{struct_to_json(decoded.key)}}}'
        if decoded.value is None:
            return key, "<DELETE>"
        return key, f'{{"version":"{decoded.value_version}","data":{struct_to_json(decoded.value)}}}'


# -- the texts Kafka prints ----------------------------------------------------------------------------------


def coordinator_record_texts(decoded: DecodedRecord) -> tuple[str, str]:
    """``{"type":"<record type>","data":{key}}`` and ``{"version":"<v>","data":{value}}`` (or ``<DELETE>``)."""
    assert decoded.key is not None
    key = f'{{"type":"{decoded.key_version}","data":{struct_to_json(decoded.key)}}}'
    if decoded.value is None:
        return key, "<DELETE>"
    wrapper = _VALUE_WRAPPER[decoded.decoder]
    return key, f'{{"{wrapper}":"{decoded.value_version}","data":{struct_to_json(decoded.value)}}}'


def metadata_record_json(decoded: DecodedRecord) -> str:
    """``{"type":"<METADATA_RECORD_TYPE>","version":<v>,"data":{...}}``."""
    assert decoded.value is not None and decoded.api_key is not None
    type_name = metadata.record_type_name(metadata.BY_API_KEY[decoded.api_key])
    return (
        f'{{"type":"{type_name}","version":{decoded.value_version},"data":{struct_to_json(decoded.value)}}}'
    )


def transaction_log_texts(decoded: DecodedRecord) -> tuple[str, str | None]:
    """Kafka 4.0's ``TransactionLog.formatRecordKeyAndValue``."""
    if decoded.key is None:
        return f"unknown::version={decoded.key_version}", None
    key = f"transaction_metadata::transactionalId={decoded.key['TransactionalId']}"
    value = decoded.value
    if value is None:
        return key, "<DELETE>"
    status = value["TransactionStatus"]
    if status == 0:  # Empty: the partitions are not loaded
        partitions: list[tuple[str, int]] = []
    else:
        partitions = scala_topic_partition_set_order(
            [(entry["Topic"], entry["PartitionIds"]) for entry in value["TransactionPartitions"]]
        )
    payload = (
        f"producerId:{value['ProducerId']},producerEpoch:{value['ProducerEpoch']},"
        f"state={transaction_log.TRANSACTION_STATES[status]},"
        f"partitions=[{','.join(f'{t}-{p}' for t, p in partitions)}],"
        f"txnLastUpdateTimestamp={value['TransactionLastUpdateTimestampMs']},"
        f"txnTimeoutMs={value['TransactionTimeoutMs']}"
    )
    return key, payload


def remote_log_metadata_text(decoded: DecodedRecord, *, txn_idx_empty: bool = True) -> str:
    """The ``toString`` of the object Kafka's ``RemoteLogMetadataSerde`` builds from the record, with the checks
    its constructors make (a failed check raises :class:`RecordDecodeError` with Kafka's message).
    ``txn_idx_empty=False``: Kafka 3.9's, whose ``RemoteLogSegmentMetadata`` and ``...Snapshot`` had no
    ``txnIdxEmpty`` (added in 4.0; unchanged since, to 4.2.0-rc1)."""
    r = decoded.value
    assert r is not None
    kind = decoded.kind
    if kind == "RemotePartitionDeleteMetadataRecord":
        state = remote_log_metadata.REMOTE_PARTITION_DELETE_STATES.get(r["RemotePartitionDeleteState"])
        if state is None:
            raise RecordDecodeError("null")
        return (
            f"RemotePartitionDeleteMetadata{{topicPartition={_topic_id_partition(r['TopicIdPartition'])}, "
            f"state={state}, eventTimestampMs={r['EventTimestampMs']}, brokerId={r['BrokerId']}}}"
        )
    custom = _custom_metadata(r["CustomMetadata"])
    state_id = r["RemoteLogSegmentState"]
    state = remote_log_metadata.REMOTE_LOG_SEGMENT_STATES.get(state_id)
    if kind == "RemoteLogSegmentMetadataUpdateRecord":
        if state is None:
            raise RecordDecodeError("state can not be null")
        return (
            f"RemoteLogSegmentMetadataUpdate{{remoteLogSegmentId={_segment_id(r['RemoteLogSegmentId'])}, "
            f"customMetadata={custom}, state={state}, eventTimestampMs={r['EventTimestampMs']}, "
            f"brokerId={r['BrokerId']}}}"
        )
    txn_empty = (
        ", txnIdxEmpty=" + ("true" if r.get("TxnIndexEmpty", False) else "false") if txn_idx_empty else ""
    )
    if kind == "RemoteLogSegmentMetadataSnapshotRecord":
        if state is None:
            raise RecordDecodeError("state can not be null")
        epochs = _leader_epochs(r["SegmentLeaderEpochs"])
        return (
            f"RemoteLogSegmentMetadataSnapshot{{segmentId={kafka_uuid(r['SegmentId'])}, "
            f"startOffset={r['StartOffset']}, endOffset={r['EndOffset']}, maxTimestampMs={r['MaxTimestampMs']}, "
            f"segmentLeaderEpochs={epochs}, segmentSizeInBytes={r['SegmentSizeInBytes']}, "
            f"customMetadata={custom}, state={state}{txn_empty}}}"
        )
    # RemoteLogSegmentMetadataRecord: RemoteLogSegmentMetadata(...).createWithUpdates(update)
    start, end = r["StartOffset"], r["EndOffset"]
    if start < 0:
        raise RecordDecodeError(
            f"Unexpected start offset = {start}. StartOffset for a remote segment cannot be negative"
        )
    if end < start:
        raise RecordDecodeError(
            f"Unexpected end offset = {end}. EndOffset for a remote segment cannot be less than startOffset = {start}"
        )
    epochs = _leader_epochs(r["SegmentLeaderEpochs"])
    if state is None:
        raise RecordDecodeError("state can not be null")
    return (
        f"RemoteLogSegmentMetadata{{remoteLogSegmentId={_segment_id(r['RemoteLogSegmentId'])}, "
        f"startOffset={start}, endOffset={end}, brokerId={r['BrokerId']}, maxTimestampMs={r['MaxTimestampMs']}, "
        f"eventTimestampMs={r['EventTimestampMs']}, segmentLeaderEpochs={epochs}, "
        f"segmentSizeInBytes={r['SegmentSizeInBytes']}, customMetadata={custom}, state={state}{txn_empty}}}"
    )


def _topic_id_partition(entry: Struct) -> str:
    """``TopicIdPartition.toString``."""
    return f"{kafka_uuid(entry['Id'])}:{entry['Name']}-{entry['Partition']}"


def _segment_id(entry: Struct) -> str:
    return (
        f"RemoteLogSegmentId{{topicIdPartition={_topic_id_partition(entry['TopicIdPartition'])}, "
        f"id={kafka_uuid(entry['Id'])}}}"
    )


def _custom_metadata(data: bytes | None) -> str:
    return "Optional.empty" if data is None else f"Optional[CustomMetadata{{{len(data)} bytes}}]"


def _leader_epochs(entries: list[Struct]) -> str:
    """The epochs as a ``TreeMap`` prints them (later duplicates win); empty is Kafka's constructor error."""
    epochs: dict[int, int] = {}
    for e in entries:
        epochs[e["LeaderEpoch"]] = e["Offset"]
    if not epochs:
        raise RecordDecodeError("segmentLeaderEpochs can not be null or empty")
    return "{" + ", ".join(f"{k}={epochs[k]}" for k in sorted(epochs)) + "}"


# -- Scala's mutable.HashSet order -----------------------------------------------------------------------------


def scala_topic_partition_set_order(entries: list[tuple[str, list[int]]]) -> list[tuple[str, int]]:
    """The iteration order of the Scala 2.13 ``mutable.HashSet[TopicPartition]`` Kafka 4.0 fills with
    ``set ++= partitionIds.map(TopicPartition(topic, _)).toSet`` for each entry in turn.

    Buckets are visited in index order (improved ``TopicPartition.hashCode`` masked by the table length); a
    bucket keeps its entries sorted by improved hash, equal hashes in insertion order.  The table starts at 16
    slots; ``addAll`` first grows it for the incoming set's size, then adds small sets (up to 4, Scala's
    ``Set1``..``Set4``) one by one, growing at 3/4 load, and larger ones without a load check.
    """
    length = 16
    threshold = 12
    size = 0
    seen: dict[tuple[str, int], tuple[int, int]] = {}  # element -> (improved hash, insertion number)
    for topic, partition_ids in entries:
        incoming = list(dict.fromkeys((topic, p) for p in partition_ids))
        target = _table_size_for(int((len(incoming) + 1) / 0.75))
        if target > length:
            length, threshold = target, int(target * 0.75)
        for element in incoming:
            if len(incoming) <= 4 and size + 1 >= threshold:
                length, threshold = length * 2, int(length * 2 * 0.75)
            if element not in seen:
                seen[element] = (_improved_hash(*element), len(seen))
                size += 1
    mask = length - 1
    return sorted(seen, key=lambda e: (seen[e][0] & mask, seen[e][0], seen[e][1]))


def _table_size_for(capacity: int) -> int:
    n = max(capacity - 1, 4)
    return min((1 << (n.bit_length() - 1)) * 2, 1 << 30)


def _improved_hash(topic: str, partition: int) -> int:
    return improve_hash(to_int32(31 * (31 + partition) + java_string_hash(topic)))


# -- the decoded record as data ------------------------------------------------------------------------------


def decoded_jsonable(decoded: DecodedRecord) -> dict[str, Any]:
    """A decoded record as plain data for JSON output and data frames::

        {"decoder": "offsets", "kind": "OffsetCommit", "keyVersion": 1, "key": {...},
         "valueVersion": 3, "value": {...}}          # value None: tombstone (or no value)

    Field names, UUIDs and bytes as in Kafka's JSON converters (:func:`~kdump.render.kafka_json.struct_to_jsonable`);
    cluster and remote metadata records also carry ``apiKey`` and, for cluster metadata, Kafka's record type
    name as ``type``.
    """
    out: dict[str, Any] = {
        "decoder": decoded.decoder,
        "kind": decoded.kind,
        "keyVersion": decoded.key_version,
        "key": None if decoded.key is None else struct_to_jsonable(decoded.key),
        "valueVersion": decoded.value_version,
        "value": None if decoded.value is None else struct_to_jsonable(decoded.value),
    }
    if decoded.api_key is not None:
        out["apiKey"] = decoded.api_key
        if decoded.decoder == "cluster-metadata":
            out["type"] = metadata.record_type_name(metadata.BY_API_KEY_NEWEST[decoded.api_key])
    if decoded.beyond_kafka40:
        out["beyondKafka40"] = True
    return out


def decode_jsonable(decoder: str, key: bytes | None, value: bytes | None) -> dict[str, Any]:
    """Decode a record's key and value with ``decoder`` and return :func:`decoded_jsonable`'s data, or
    ``{"decoder": ..., "error": <message>}`` when the record does not decode (a per-record column never fails)."""
    try:
        return decoded_jsonable(decode_key_value(decoder, key, value, newest=True))
    except RecordDecodeError as e:
        return {"decoder": decoder, "error": e.java_text}
    except FatalDecodeError as e:
        return {"decoder": decoder, "error": e.message}
