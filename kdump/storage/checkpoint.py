"""Kafka's small text state files, by name: which file is which, and :func:`read_checkpoint`, which reads any
of them.  Each format has its own module, with its reader, its writer and Kafka's error texts:

=================================== ================================================= ==================================
file                                Kafka reader                                      module
=================================== ================================================= ==================================
``recovery-point-offset-checkpoint`` ``CheckpointFile`` + ``OffsetCheckpointFile``     :mod:`~kdump.storage.offset_checkpoint`
``replication-offset-checkpoint``
``log-start-offset-checkpoint``
``cleaner-offset-checkpoint``
``leader-epoch-checkpoint``          ``CheckpointFile`` + ``LeaderEpochCheckpointFile`` :mod:`~kdump.storage.leader_epoch_checkpoint`
``partition.metadata``               ``PartitionMetadataReadBuffer``                    :mod:`~kdump.storage.partition_metadata`
``meta.properties``                  ``java.util.Properties`` + ``MetaProperties``      :mod:`~kdump.storage.meta_properties`
``quorum-state``                     ``FileQuorumStateStore``                           :mod:`~kdump.storage.quorum_state`
``.kafka_cleanshutdown``             ``CleanShutdownFileHandler``                       :mod:`~kdump.storage.clean_shutdown`
=================================== ================================================= ==================================

The machinery they share (Kafka's ``CheckpointFile``, the Java-compatible line and number rules, the one error,
:class:`~kdump.errors.CheckpointFormatError`) is :mod:`kdump.storage.checkpoint_file`.  This module imports
none of them until :func:`read_checkpoint` needs one, so knowing the names costs ``kdump files`` nothing.
"""

from __future__ import annotations

import os
from typing import TYPE_CHECKING

from kdump.storage.byte_source import ByteSource, location_of

if TYPE_CHECKING:
    from kdump.storage.clean_shutdown import CleanShutdown
    from kdump.storage.leader_epoch_checkpoint import LeaderEpochCheckpoint
    from kdump.storage.meta_properties import MetaProperties
    from kdump.storage.offset_checkpoint import OffsetCheckpoint
    from kdump.storage.partition_metadata import PartitionMetadata
    from kdump.storage.quorum_state import QuorumState

#: ``LogManager.RecoveryPointCheckpointFile``: each partition's recovery point.
RECOVERY_POINT_CHECKPOINT_FILE = "recovery-point-offset-checkpoint"
#: ``ReplicaManager.HighWatermarkFilename``: each partition's high watermark.
HIGH_WATERMARK_CHECKPOINT_FILE = "replication-offset-checkpoint"
#: ``LogManager.LogStartOffsetCheckpointFile``: each partition's log start offset.
LOG_START_OFFSET_CHECKPOINT_FILE = "log-start-offset-checkpoint"
#: ``LogCleanerManager.offsetCheckpointFile``: how far the cleaner has cleaned each compacted partition.
CLEANER_OFFSET_CHECKPOINT_FILE = "cleaner-offset-checkpoint"
OFFSET_CHECKPOINT_FILES = (
    RECOVERY_POINT_CHECKPOINT_FILE,
    HIGH_WATERMARK_CHECKPOINT_FILE,
    LOG_START_OFFSET_CHECKPOINT_FILE,
    CLEANER_OFFSET_CHECKPOINT_FILE,
)
"""Log-dir files in the generic ``<topic> <partition> <offset>`` checkpoint format (the one list of their names:
the commands and analyses take them from here)."""

LEADER_EPOCH_CHECKPOINT_FILE = "leader-epoch-checkpoint"
PARTITION_METADATA_FILE = "partition.metadata"
META_PROPERTIES_FILE = "meta.properties"
QUORUM_STATE_FILE = "quorum-state"
CLEAN_SHUTDOWN_FILE = ".kafka_cleanshutdown"


def read_checkpoint(
    path: str | os.PathLike[str] | ByteSource,
) -> (
    OffsetCheckpoint
    | LeaderEpochCheckpoint
    | PartitionMetadata
    | MetaProperties
    | QuorumState
    | CleanShutdown
):
    """Read any of the files above, chosen by file name; ValueError for a name that is none of them."""
    name = os.path.basename(os.fspath(location_of(path)))
    if name in OFFSET_CHECKPOINT_FILES:
        from kdump.storage.offset_checkpoint import read_offset_checkpoint

        return read_offset_checkpoint(path)
    if name == LEADER_EPOCH_CHECKPOINT_FILE:
        from kdump.storage.leader_epoch_checkpoint import read_leader_epoch_checkpoint

        return read_leader_epoch_checkpoint(path)
    if name == PARTITION_METADATA_FILE:
        from kdump.storage.partition_metadata import read_partition_metadata

        return read_partition_metadata(path)
    if name == META_PROPERTIES_FILE:
        from kdump.storage.meta_properties import read_meta_properties

        return read_meta_properties(path)
    if name == QUORUM_STATE_FILE:
        from kdump.storage.quorum_state import read_quorum_state

        return read_quorum_state(path)
    if name == CLEAN_SHUTDOWN_FILE:
        from kdump.storage.clean_shutdown import read_clean_shutdown

        return read_clean_shutdown(path)
    raise ValueError(f"{name!r} is not a Kafka checkpoint or state file kdump knows")
