"""Topic configuration as a KRaft cluster stores it: ``ConfigRecord``\\s in the ``__cluster_metadata`` log and
its snapshots.

A log directory of a KRaft broker (or combined broker and controller) holds ``__cluster_metadata-0``, the
replicated metadata log.  Every ``kafka-configs.sh --alter`` and every topic created with ``--config`` becomes a
``ConfigRecord`` (resource type, resource name, config name, value; a null value deletes the setting).  Replaying
the latest snapshot (``<end offset>-<epoch>.checkpoint``) and then the log records from the snapshot's end offset
gives the configuration the cluster has now, which is how kdump learns, for instance, the
``index.interval.bytes`` a topic's indexes were written with.  A ZooKeeper-mode broker keeps its configuration
in ZooKeeper, not on disk, so nothing can be learnt there.

Each metadata record's value is ``frame version (uvarint), api key (uvarint), version (uvarint), message``, read
with the cluster-metadata decoder's frame reader and schemas.  Only the record types that matter here are
decoded: ``TopicRecord`` (2), ``PartitionRecord`` (3, for partition counts), ``ConfigRecord`` (4) and
``RemoveTopicRecord`` (9, which drops the topic's configuration); everything else is skipped.
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field

from kdump.errors import KdumpError
from kdump.storage import locations, naming
from kdump.storage.file_records import FileRecords
from kdump.storage.internal_topics import RecordDecodeError, read_frame
from kdump.storage.message_reader import MessageFormatError, read_message_prefix
from kdump.storage.schemas import metadata as metadata_schemas

__all__ = ["METADATA_PARTITION_DIR", "ClusterConfig", "read_cluster_config"]

METADATA_PARTITION_DIR = "__cluster_metadata-0"

#: The records replayed here, with the schemas the cluster-metadata decoder uses (one reader of the format).
TOPIC_RECORD = metadata_schemas.BY_API_KEY[2]
PARTITION_RECORD = metadata_schemas.BY_API_KEY[3]
CONFIG_RECORD = metadata_schemas.BY_API_KEY[4]
REMOVE_TOPIC_RECORD = metadata_schemas.BY_API_KEY[9]
_REPLAYED = {2: TOPIC_RECORD, 3: PARTITION_RECORD, 4: CONFIG_RECORD, 9: REMOVE_TOPIC_RECORD}

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
            api_key, version, pos = read_frame(value)
        except RecordDecodeError:
            return
        schema = _REPLAYED.get(api_key)
        if schema is None or version not in schema.version_range:
            return
        try:
            msg, _ = read_message_prefix(schema, value, version, pos)
        except (MessageFormatError, KeyError):
            return
        if api_key == 3:
            name = self._topic_ids.get(msg["TopicId"])
            if name is not None and msg["PartitionId"] >= 0:
                self.partitions.setdefault(name, set()).add(msg["PartitionId"])
        elif api_key == 4:
            kind = msg["ResourceType"]
            target = (
                self.topics if kind == RESOURCE_TOPIC else self.brokers if kind == RESOURCE_BROKER else None
            )
            if target is None:
                return
            settings = target.setdefault(msg["ResourceName"], {})
            if msg["Value"] is None:
                settings.pop(msg["Name"], None)
            else:
                settings[msg["Name"]] = msg["Value"]
        elif api_key == 2:
            self._topic_ids[msg["TopicId"]] = msg["Name"]
        else:
            name = self._topic_ids.pop(msg["TopicId"], None)
            if name is not None:
                self.topics.pop(name, None)
                self.partitions.pop(name, None)


def read_cluster_config(log_dir: str) -> ClusterConfig | None:
    """Replay ``<log_dir>/__cluster_metadata-0``: the latest readable snapshot, then the log from its end
    offset.  None when the directory has no metadata partition.  Unreadable parts are skipped (whatever was
    replayed up to them stands); a :class:`KdumpError` is raised only when nothing at all can be read."""
    directory = os.path.join(log_dir, METADATA_PARTITION_DIR)
    if not locations.isdir(directory):
        return None
    config = ClusterConfig(directory)
    names = sorted(locations.listdir(directory))
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
