"""Where tiered storage (KIP-405) keeps a segment's objects: the names of Kafka's own layout.

Kafka's ``LocalTieredStorage`` (the RemoteStorageManager of Kafka's storage test sources, the reference for the
layout of a segment copied to remote storage) writes under ``<dir>/kafka-tiered-storage/``:

* one directory per partition, ``<topic>-<partition>-<topic id>`` (``RemoteTopicPartitionDirectory.toString``:
  the topic id in Kafka's base64 form, 22 characters);
* per segment, the files of ``RemoteLogSegmentFileset``: ``<start offset, 20 digits>-<segment id><suffix>`` with
  the suffixes of ``RemoteLogSegmentFileType``, ``.log``, ``.index``, ``.timeindex``, ``.txnindex`` (the only
  optional one), ``.leader_epoch_checkpoint`` and ``.snapshot``.

Names only: nothing here reads or lists.
"""

from __future__ import annotations

import re
import uuid
from dataclasses import dataclass

from kdump.storage import naming
from kdump.storage.kafka_uuid import encode_uuid

#: ``LocalTieredStorage.ROOT_STORAGE_DIR_NAME``: the directory under the configured ``dir``.
ROOT_DIR_NAME = "kafka-tiered-storage"

LEADER_EPOCH_CHECKPOINT_SUFFIX = ".leader_epoch_checkpoint"

#: ``RemoteLogSegmentFileType``: each file of a segment's fileset, in Kafka's order, and whether it is optional.
FILE_TYPES: tuple[tuple[str, str, bool], ...] = (
    ("SEGMENT", naming.LOG_FILE_SUFFIX, False),
    ("OFFSET_INDEX", naming.INDEX_FILE_SUFFIX, False),
    ("TIME_INDEX", naming.TIME_INDEX_FILE_SUFFIX, False),
    ("TRANSACTION_INDEX", naming.TXN_INDEX_FILE_SUFFIX, True),
    ("LEADER_EPOCH_CHECKPOINT", LEADER_EPOCH_CHECKPOINT_SUFFIX, False),
    ("PRODUCER_SNAPSHOT", naming.PRODUCER_SNAPSHOT_FILE_SUFFIX, False),
)
SUFFIXES = tuple(suffix for _, suffix, _ in FILE_TYPES)
REQUIRED_SUFFIXES = tuple(suffix for _, suffix, optional in FILE_TYPES if not optional)

#: ``RemoteLogSegmentFileset.FILENAME_FORMAT``: ``(\d+-)([a-zA-Z0-9_-]{22})(\.[a-z_]+)``.
_FILESET_NAME = re.compile(r"^([0-9]+)-([a-zA-Z0-9_-]{22})(\.[a-z_]+)$")
#: ``RemoteTopicPartitionDirectory.FILENAME_FORMAT``: topic (Kafka's legal characters), partition, topic id.
_PARTITION_DIR = re.compile(r"^([a-zA-Z0-9._-]+)-([0-9]+)-([a-zA-Z0-9_-]{22})$")


def partition_dir_name(topic: str, partition: int, topic_id: uuid.UUID) -> str:
    """``RemoteTopicPartitionDirectory``'s directory name of a partition."""
    return f"{topic}-{partition}-{encode_uuid(topic_id.bytes)}"


def fileset_name(start_offset: int, segment_id: uuid.UUID, suffix: str) -> str:
    """``RemoteLogSegmentFileType.toFilename``: the name of one file of a segment's fileset."""
    return f"{naming.offset_to_filename(start_offset, '')}-{encode_uuid(segment_id.bytes)}{suffix}"


@dataclass(frozen=True)
class FilesetName:
    """A parsed fileset file name."""

    start_offset: int
    segment_id: str  # Kafka's base64 form, as in the name
    suffix: str


def parse_fileset_name(name: str) -> FilesetName | None:
    """The start offset, segment id and suffix of a fileset file's name; None for any other name (an unknown
    suffix included: Kafka's ``getFileType`` refuses it)."""
    m = _FILESET_NAME.match(name)
    if m is None or m.group(3) not in SUFFIXES:
        return None
    return FilesetName(int(m.group(1)), m.group(2), m.group(3))


@dataclass(frozen=True)
class RemotePartitionDir:
    topic: str
    partition: int
    topic_id: str  # Kafka's base64 form


def parse_partition_dir_name(name: str) -> RemotePartitionDir | None:
    """The topic, partition and topic id of a ``RemoteTopicPartitionDirectory`` name; None for another name."""
    m = _PARTITION_DIR.match(name)
    if m is None:
        return None
    return RemotePartitionDir(m.group(1), int(m.group(2)), m.group(3))
