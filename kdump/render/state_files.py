"""Text form of Kafka's small state files in ``kdump files`` (a kdump addition: Kafka's tool crashes on the
dot-less checkpoint files and ignores ``meta.properties`` and ``partition.metadata``).

The format follows the rest of the dump: a header line, then one line per entry in Kafka's ``name: value``
style, so ``grep``/``awk`` work on it.  man kdump-files(1), section STATE FILES, documents every line.
"""

from __future__ import annotations

from kdump.storage.checkpoint import (
    LeaderEpochCheckpoint,
    MetaProperties,
    OffsetCheckpoint,
    PartitionMetadata,
    QuorumState,
)


def offset_checkpoint_lines(path: str, checkpoint: OffsetCheckpoint) -> str:
    if checkpoint.version is None:
        return f"{path} is empty.\n"
    lines = [f"Offset checkpoint version: {checkpoint.version} entries: {len(checkpoint.entries)}\n"]
    lines.extend(
        f"topic: {e.topic} partition: {e.partition} offset: {e.offset}\n" for e in checkpoint.entries
    )
    return "".join(lines)


def leader_epoch_checkpoint_lines(path: str, checkpoint: LeaderEpochCheckpoint) -> str:
    if checkpoint.version is None:
        return f"{path} is empty.\n"
    lines = [f"Leader epoch checkpoint version: {checkpoint.version} entries: {len(checkpoint.entries)}\n"]
    lines.extend(f"epoch: {e.epoch} startOffset: {e.start_offset}\n" for e in checkpoint.entries)
    return "".join(lines)


def partition_metadata_lines(metadata: PartitionMetadata) -> str:
    return f"Partition metadata version: {metadata.version} topicId: {metadata.topic_id}\n"


def meta_properties_lines(meta: MetaProperties) -> str:
    lines = [f"Meta properties version: {meta.version}\n"]
    lines.extend(f"{key}: {value}\n" for key, value in meta.properties.items())
    return "".join(lines)


def quorum_state_lines(state: QuorumState) -> str:
    parts = [
        f"leaderId: {state.leader_id}",
        f"leaderEpoch: {state.leader_epoch}",
        f"votedId: {state.voted_id}",
    ]
    if state.voted_directory_id is not None:
        parts.append(f"votedDirectoryId: {state.voted_directory_id}")
    if state.cluster_id is not None:
        parts.append(f"clusterId: {state.cluster_id}")
    if state.applied_offset is not None:
        parts.append(f"appliedOffset: {state.applied_offset}")
    if state.current_voters is not None:
        parts.append("currentVoters: [" + ",".join(str(v) for v in state.current_voters) + "]")
    return f"Quorum state data version: {state.data_version}\n" + " ".join(parts) + "\n"
