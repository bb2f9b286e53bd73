"""Topic configuration as a KRaft cluster stores it: ``ConfigRecord``\\s in the ``__cluster_metadata`` log and
its snapshots.

A log directory of a KRaft broker (or combined broker and controller) holds ``__cluster_metadata-0``, the
replicated metadata log.  Every ``kafka-configs.sh --alter`` and every topic created with ``--config`` becomes a
``ConfigRecord`` (resource type, resource name, config name, value; a null value deletes the setting).  Replaying
the latest snapshot (``<end offset>-<epoch>.checkpoint``) and then the log records from the snapshot's end offset
gives the configuration the cluster has now, which is how kdump learns, for instance, the
``index.interval.bytes`` a topic's indexes were written with.  A ZooKeeper-mode broker keeps its configuration
in ZooKeeper, not on disk, so nothing can be learnt there.

Each metadata record's value is ``frame version (uvarint), api key (uvarint), version (uvarint), message``.
Only the record types that matter here are decoded: ``TopicRecord`` (2), ``PartitionRecord`` (3, for partition
counts), ``ConfigRecord`` (4) and ``RemoveTopicRecord`` (9, which drops the topic's configuration); everything
else is skipped.
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field

from kdump.errors import KdumpError
from kdump.storage import naming
from kdump.storage.file_records import FileRecords
from kdump.storage.message import Field, MessageFormatError, MessageSchema, read_message_prefix
from kdump.storage.schemas import metadata as metadata_schemas
from kdump.storage.varint import VarintError, read_unsigned_varint

__all__ = ["METADATA_PARTITION_DIR", "ClusterConfig", "read_cluster_config"]

METADATA_PARTITION_DIR = "__cluster_metadata-0"

TOPIC_RECORD = MessageSchema(
    "TopicRecord", "0", "0+", (Field("Name", "string"), Field("TopicId", "uuid")), api_key=2
)
CONFIG_RECORD = MessageSchema(
    "ConfigRecord",
    "0",
    "0+",
    (
        Field("ResourceType", "int8"),
        Field("ResourceName", "string"),
        Field("Name", "string"),
        Field("Value", "string", nullable_versions="0+"),
    ),
    api_key=4,
)
#: ``PartitionRecord`` (api key 3), the schema the cluster-metadata decoder uses.
PARTITION_RECORD = metadata_schemas.BY_API_KEY[3]
REMOVE_TOPIC_RECORD = MessageSchema("RemoveTopicRecord", "0", "0+", (Field("TopicId", "uuid"),), api_key=9)

#: ``ConfigResource.Type`` ids.
RESOURCE_TOPIC = 2
RESOURCE_BROKER = 4


@dataclass
class ClusterConfig:
    """Topic and dynamic broker configuration replayed from ``__cluster_metadata``."""

    #: Where it was read from (the metadata partition directory).
    source: str
    topics: dict[str, dict[str, str]] = field(default_factory=dict)
    #: Dynamic broker configs by resource name ("" is the cluster-wide default, else a broker id).
    brokers: dict[str, dict[str, str]] = field(default_factory=dict)
    #: Partition ids per topic name (``PartitionRecord``\s), for the partition count of a topic.
    partitions: dict[str, set[int]] = field(default_factory=dict)
    _topic_ids: dict[object, str] = field(default_factory=dict, repr=False)

    def partition_count(self, topic: str) -> int | None:
        """How many partitions the metadata log gives ``topic`` (None when it has no ``PartitionRecord``)."""
        ids = self.partitions.get(topic)
        return len(ids) if ids else None

    def topic_value(
        self, topic: str, name: str, broker_name: str | None = None, node_id: int | None = None
    ) -> str | None:
        """The effective value of a topic config: the topic's own setting, else the dynamic broker setting
        ``broker_name`` (for this broker, then cluster-wide), else None (the static or built-in default)."""
        value = self.topics.get(topic, {}).get(name)
        if value is not None or broker_name is None:
            return value
        if node_id is not None:
            value = self.brokers.get(str(node_id), {}).get(broker_name)
            if value is not None:
                return value
        return self.brokers.get("", {}).get(broker_name)

    def _apply(self, value: bytes) -> None:
        try:
            pos = 0
            end = len(value)
            _frame, pos = read_unsigned_varint(value, pos, end)
            api_key, pos = read_unsigned_varint(value, pos, end)
            version, pos = read_unsigned_varint(value, pos, end)
        except VarintError:
            return
        if api_key == 3 and version in PARTITION_RECORD.version_range:
            try:
                msg, _ = read_message_prefix(PARTITION_RECORD, value, version, pos)
            except (MessageFormatError, KeyError):
                return
            name = self._topic_ids.get(msg["TopicId"])
            if name is not None and msg["PartitionId"] >= 0:
                self.partitions.setdefault(name, set()).add(msg["PartitionId"])
            return
        if version != 0 or api_key not in (2, 4, 9):
            return
        try:
            if api_key == 4:
                msg, _ = read_message_prefix(CONFIG_RECORD, value, 0, pos)
                kind = msg["ResourceType"]
                target = (
                    self.topics
                    if kind == RESOURCE_TOPIC
                    else self.brokers
                    if kind == RESOURCE_BROKER
                    else None
                )
                if target is None:
                    return
                settings = target.setdefault(msg["ResourceName"], {})
                if msg["Value"] is None:
                    settings.pop(msg["Name"], None)
                else:
                    settings[msg["Name"]] = msg["Value"]
            elif api_key == 2:
                msg, _ = read_message_prefix(TOPIC_RECORD, value, 0, pos)
                self._topic_ids[msg["TopicId"]] = msg["Name"]
            else:
                msg, _ = read_message_prefix(REMOVE_TOPIC_RECORD, value, 0, pos)
                name = self._topic_ids.pop(msg["TopicId"], None)
                if name is not None:
                    self.topics.pop(name, None)
                    self.partitions.pop(name, None)
        except (MessageFormatError, KeyError):
            return


def read_cluster_config(log_dir: str) -> ClusterConfig | None:
    """Replay ``<log_dir>/__cluster_metadata-0``: the latest readable snapshot, then the log from its end
    offset.  None when the directory has no metadata partition.  Unreadable parts are skipped (whatever was
    replayed up to them stands); a :class:`KdumpError` is raised only when nothing at all can be read."""
    directory = os.path.join(log_dir, METADATA_PARTITION_DIR)
    if not os.path.isdir(directory):
        return None
    config = ClusterConfig(directory)
    names = sorted(os.listdir(directory))
    snapshots = []
    for name in names:
        if name.endswith(naming.SNAPSHOT_SUFFIX) and name != naming.BOOTSTRAP_CHECKPOINT:
            try:
                snapshots.append((naming.parse_snapshot_name(name).end_offset, name))
            except naming.NumberFormatError:
                continue
    start_offset = 0
    for end_offset, name in sorted(snapshots, reverse=True):
        snapshot = ClusterConfig(directory)
        if _replay(os.path.join(directory, name), snapshot, 0):
            config = snapshot
            start_offset = end_offset
            break
    logs = sorted(
        (naming.offset_from_file(n), n)
        for n in names
        if n.endswith(naming.LOG_FILE_SUFFIX) and n[:1].isdigit()
    )
    for _base, name in logs:
        _replay(os.path.join(directory, name), config, start_offset)
    return config


def _replay(path: str, config: ClusterConfig, start_offset: int) -> bool:
    """Apply the records of one file; False when it could not be read to its end."""
    try:
        with FileRecords(path) as records:
            for batch in records.batches():
                if batch.is_control_batch or batch.last_offset < start_offset:
                    continue
                for record in batch.records():
                    if record.offset >= start_offset and record.value is not None:
                        config._apply(record.value)
    except KdumpError:
        return False
    return True
