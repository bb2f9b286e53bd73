"""What ``__remote_log_metadata`` says is in tiered storage (KIP-405): the remote segments of every partition and
their states, as Kafka's ``TopicBasedRemoteLogMetadataManager`` rebuilds them when it consumes the topic.

The records (``RemoteLogSegmentMetadataRecord``, ``RemoteLogSegmentMetadataUpdateRecord``,
``RemotePartitionDeleteMetadataRecord``; decoded by :mod:`kdump.storage.internal_topics`) are applied in offset
order, per metadata partition, with the rules of ``RemoteLogMetadataCache``:

* a segment starts in ``COPY_SEGMENT_STARTED`` (``addCopyInProgressSegment``);
* an update moves it along ``RemoteLogSegmentState.isValidTransition`` (STARTED -> FINISHED or DELETE_STARTED,
  FINISHED -> DELETE_STARTED, DELETE_STARTED -> DELETE_FINISHED, any state to itself); an invalid transition is
  ignored (Kafka logs it and keeps the old state) and reported here;
* an update of a segment never added is ``RemoteResourceNotFoundException`` in Kafka, a problem here;
* ``DELETE_SEGMENT_FINISHED`` removes the segment (the terminal state);
* ``createWithUpdates``: an update changes the state, the broker id, the event time and the custom metadata.

Which metadata partition holds a topic partition's records is :func:`metadata_partition`
(``RemoteLogMetadataTopicPartitioner``: murmur2 of ``Objects.hash(topicId.lsb, topicId.msb, partition)``).
"""

from __future__ import annotations

import os
import uuid
from collections.abc import Iterable
from dataclasses import dataclass, field

from kdump.errors import KdumpError
from kdump.storage import locations, naming
from kdump.storage.file_records import FileRecords
from kdump.storage.internal_topics import RecordDecodeError, decode_framed
from kdump.storage.local_log import LocalLog
from kdump.storage.schemas import remote_log_metadata as schemas

#: ``remote.log.metadata.topic.num.partitions``' default.
DEFAULT_METADATA_PARTITIONS = 50
METADATA_TOPIC = "__remote_log_metadata"

COPY_SEGMENT_STARTED = "COPY_SEGMENT_STARTED"
COPY_SEGMENT_FINISHED = "COPY_SEGMENT_FINISHED"
DELETE_SEGMENT_STARTED = "DELETE_SEGMENT_STARTED"
DELETE_SEGMENT_FINISHED = "DELETE_SEGMENT_FINISHED"

_VALID = {
    COPY_SEGMENT_STARTED: (COPY_SEGMENT_FINISHED, DELETE_SEGMENT_STARTED),
    COPY_SEGMENT_FINISHED: (DELETE_SEGMENT_STARTED,),
    DELETE_SEGMENT_STARTED: (DELETE_SEGMENT_FINISHED,),
}


def is_valid_transition(source: str | None, target: str) -> bool:
    """``RemoteLogSegmentState.isValidTransition``."""
    if source is None:
        return target == COPY_SEGMENT_STARTED
    return source == target or target in _VALID.get(source, ())


@dataclass
class RemoteSegment:
    """One remote segment as the metadata says it is (``RemoteLogSegmentMetadata``)."""

    topic: str
    topic_id: uuid.UUID
    partition: int
    segment_id: uuid.UUID
    start_offset: int
    end_offset: int
    broker_id: int
    max_timestamp: int
    event_timestamp: int
    #: ``segmentLeaderEpochs``: (leader epoch, its first offset in the segment), by epoch.
    leader_epochs: list[tuple[int, int]]
    size_in_bytes: int
    custom_metadata: bytes | None
    state: str
    txn_index_empty: bool
    #: Where the record that last changed it is: (metadata partition directory, offset).
    source: tuple[str, int]


@dataclass
class RemotePartition:
    """A topic partition's remote log as the metadata says it is."""

    topic: str
    topic_id: uuid.UUID
    partition: int
    #: Segments not yet ``DELETE_SEGMENT_FINISHED``, by segment id.
    segments: dict[uuid.UUID, RemoteSegment] = field(default_factory=dict)
    #: ``RemotePartitionDeleteState`` of the last partition-delete record, if any.
    delete_state: str | None = None

    def by_start_offset(self) -> list[RemoteSegment]:
        return sorted(self.segments.values(), key=lambda s: (s.start_offset, s.end_offset))


@dataclass(frozen=True)
class MetadataProblem:
    """A record Kafka would drop or fail on: where it is and why."""

    path: str
    offset: int
    #: What is wrong (its words are :mod:`kdump.render.problem_text`'s, as a ``remote-metadata`` problem's):
    #: ``added-state`` (segment_id, state), ``added-again`` (segment_id, state), ``no-segment`` (state,
    #: segment_id), ``transition`` (segment_id, previous, state), ``update-state`` (segment_id, state),
    #: ``directory`` (reason), ``log`` (message: the error's), ``no-value``, ``undecodable`` (reason).
    case: str
    #: The case's values, as ``(name, value)`` pairs.
    data: tuple[tuple[str, object], ...] = ()
    #: The topic partition (topic id, partition) the record is about, when it could be decoded.
    topic_partition: tuple[uuid.UUID, int] | None = None


@dataclass
class RemoteLogMetadata:
    """Every partition's remote log, from the metadata records applied in order."""

    partitions: dict[tuple[uuid.UUID, int], RemotePartition] = field(default_factory=dict)
    problems: list[MetadataProblem] = field(default_factory=list)
    records: int = 0

    def partition(self, topic: str, partition: int) -> RemotePartition | None:
        """The remote log of ``topic``-``partition`` (by name: the metadata names each partition's topic)."""
        for p in self.partitions.values():
            if p.topic == topic and p.partition == partition:
                return p
        return None

    def apply(self, kind: str, record: object, where: tuple[str, int]) -> None:
        """Apply one decoded record (``kind``: its type name; ``record``: its struct) found at ``where``."""
        r = record  # a message_schema Struct: fields by name
        self.records += 1
        if kind == "RemoteLogSegmentMetadataRecord":
            sid = r["RemoteLogSegmentId"]  # type: ignore[index]
            tip = sid["TopicIdPartition"]
            state = schemas.REMOTE_LOG_SEGMENT_STATES.get(r["RemoteLogSegmentState"], "UNKNOWN")  # type: ignore[index]
            part = self._partition(tip)
            existing = part.segments.get(sid["Id"])
            if state != COPY_SEGMENT_STARTED:
                self._problem(where, "added-state", None, segment_id=_id(sid["Id"]), state=state)
                return
            if existing is not None and not is_valid_transition(existing.state, state):
                self._problem(where, "added-again", tip, segment_id=_id(sid["Id"]), state=existing.state)
                return
            part.segments[sid["Id"]] = RemoteSegment(
                tip["Name"],
                tip["Id"],
                tip["Partition"],
                sid["Id"],
                r["StartOffset"],  # type: ignore[index]
                r["EndOffset"],  # type: ignore[index]
                r["BrokerId"],  # type: ignore[index]
                r["MaxTimestampMs"],  # type: ignore[index]
                r["EventTimestampMs"],  # type: ignore[index]
                sorted((e["LeaderEpoch"], e["Offset"]) for e in r["SegmentLeaderEpochs"]),  # type: ignore[index]
                r["SegmentSizeInBytes"],  # type: ignore[index]
                r["CustomMetadata"],  # type: ignore[index]
                state,
                bool(r.values.get("TxnIndexEmpty", False)),  # type: ignore[attr-defined]  # a tag: absent is false
                where,
            )
        elif kind == "RemoteLogSegmentMetadataUpdateRecord":
            sid = r["RemoteLogSegmentId"]  # type: ignore[index]
            state = schemas.REMOTE_LOG_SEGMENT_STATES.get(r["RemoteLogSegmentState"], "UNKNOWN")  # type: ignore[index]
            tip = sid["TopicIdPartition"]
            part = self._partition(tip)
            segment = part.segments.get(sid["Id"])
            if segment is None:
                self._problem(where, "no-segment", tip, state=state, segment_id=_id(sid["Id"]))
                return
            if not is_valid_transition(segment.state, state):
                self._problem(
                    where, "transition", tip, segment_id=_id(sid["Id"]), previous=segment.state, state=state
                )
                return
            if state == COPY_SEGMENT_STARTED:
                self._problem(where, "update-state", tip, segment_id=_id(sid["Id"]), state=state)
                return
            if state == DELETE_SEGMENT_FINISHED:
                del part.segments[sid["Id"]]
                return
            segment.state = state
            segment.broker_id = r["BrokerId"]  # type: ignore[index]
            segment.event_timestamp = r["EventTimestampMs"]  # type: ignore[index]
            segment.custom_metadata = r["CustomMetadata"]  # type: ignore[index]
            segment.source = where
        elif kind == "RemotePartitionDeleteMetadataRecord":
            part = self._partition(r["TopicIdPartition"])  # type: ignore[index]
            part.delete_state = schemas.REMOTE_PARTITION_DELETE_STATES.get(
                r["RemotePartitionDeleteState"],  # type: ignore[index]
                "UNKNOWN",
            )

    def _partition(self, tip: object) -> RemotePartition:
        key = (tip["Id"], tip["Partition"])  # type: ignore[index]
        found = self.partitions.get(key)
        if found is None:
            found = self.partitions[key] = RemotePartition(tip["Name"], tip["Id"], tip["Partition"])  # type: ignore[index]
        return found

    def _problem(self, where: tuple[str, int], case: str, tip: object, **data: object) -> None:
        key = None if tip is None else (tip["Id"], tip["Partition"])  # type: ignore[index]
        self.problems.append(MetadataProblem(where[0], where[1], case, tuple(data.items()), key))


def _id(u: uuid.UUID) -> str:
    from kdump.storage.kafka_uuid import encode_uuid

    return encode_uuid(u.bytes)


def metadata_partition_dirs(path: str) -> list[str]:
    """The ``__remote_log_metadata-N`` partition directories of a log directory, by partition number; ``path``
    itself when it is one."""
    name = naming.parse_partition_dir(os.path.basename(os.path.normpath(path)))
    if name is not None and name.topic == METADATA_TOPIC:
        return [path]
    found = []
    for entry in sorted(locations.listdir(path)):
        parsed = naming.parse_partition_dir(entry)
        if parsed is not None and parsed.topic == METADATA_TOPIC:
            found.append((parsed.partition, os.path.join(path, entry)))
    return [p for _, p in sorted(found)]


def read_remote_log_metadata(paths: Iterable[str]) -> RemoteLogMetadata:
    """The remote logs ``__remote_log_metadata`` describes, from its partition directories (or log directories
    holding them), each read segment by segment in offset order.  A record that cannot be decoded, or that
    Kafka's cache refuses, is a :class:`MetadataProblem`; a segment that cannot be read stops that partition."""
    out = RemoteLogMetadata()
    for path in paths:
        for directory in metadata_partition_dirs(path):
            try:
                log = LocalLog.scan_segments(directory)
            except OSError as e:
                out.problems.append(MetadataProblem(directory, -1, "directory", (("reason", str(e)),)))
                continue
            for segment in log.log_segments:
                try:
                    _read_segment(segment.log_path, directory, out)
                except KdumpError as e:
                    out.problems.append(
                        MetadataProblem(segment.log_path, -1, "log", (("message", e.describe()),))
                    )
                    break
    return out


def _read_segment(log_path: str, directory: str, out: RemoteLogMetadata) -> None:
    with FileRecords(log_path) as records:
        for batch in records.batches():
            if batch.is_control_batch:
                continue
            for record in batch.records():
                where = (directory, record.offset)
                value = record.value
                if value is None:
                    out.problems.append(MetadataProblem(directory, record.offset, "no-value"))
                    continue
                try:
                    decoded = decode_framed("remote-log-metadata", schemas.BY_API_KEY, bytes(value))
                except RecordDecodeError as e:
                    out.problems.append(
                        MetadataProblem(directory, record.offset, "undecodable", (("reason", str(e)),))
                    )
                    continue
                out.apply(decoded.kind, decoded.value, where)


# -- RemoteLogMetadataTopicPartitioner -------------------------------------------------------------------------


def _int32(v: int) -> int:
    v &= 0xFFFFFFFF
    return v - (1 << 32) if v & 0x80000000 else v


def murmur2(data: bytes) -> int:
    """Kafka's ``Utils.murmur2`` (seed 0x9747b28c), as a signed 32-bit int."""
    m = 0x5BD1E995
    length = len(data)
    h = (0x9747B28C ^ length) & 0xFFFFFFFF
    for i in range(0, length - length % 4, 4):
        k = int.from_bytes(data[i : i + 4], "little")
        k = (k * m) & 0xFFFFFFFF
        k ^= k >> 24
        k = (k * m) & 0xFFFFFFFF
        h = (h * m) & 0xFFFFFFFF
        h ^= k
    tail = length % 4
    base = length - tail
    if tail == 3:
        h ^= (data[base + 2] & 0xFF) << 16
    if tail >= 2:
        h ^= (data[base + 1] & 0xFF) << 8
    if tail >= 1:
        h ^= data[base] & 0xFF
        h = (h * m) & 0xFFFFFFFF
    h ^= h >> 13
    h = (h * m) & 0xFFFFFFFF
    h ^= h >> 15
    return _int32(h)


def _long_hash(v: int) -> int:
    """``Long.hashCode``: the two halves xor-ed."""
    v &= 0xFFFFFFFFFFFFFFFF
    return _int32(v ^ (v >> 32))


def metadata_partition(
    topic_id: uuid.UUID, partition: int, partitions: int = DEFAULT_METADATA_PARTITIONS
) -> int:
    """Which ``__remote_log_metadata`` partition holds ``topic_id``-``partition``'s records
    (``RemoteLogMetadataTopicPartitioner.metadataPartition``)."""
    msb, lsb = topic_id.int >> 64, topic_id.int & 0xFFFFFFFFFFFFFFFF
    h = 1  # Objects.hash(lsb, msb, partition) = Arrays.hashCode
    for element in (_long_hash(lsb), _long_hash(msb), _int32(partition)):
        h = _int32(31 * h + element)
    return (murmur2((h & 0xFFFFFFFF).to_bytes(4, "big")) & 0x7FFFFFFF) % partitions
