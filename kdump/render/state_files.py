"""Text form of Kafka's small state files in ``kdump files`` (a kdump addition: Kafka's tool crashes on the
dot-less checkpoint files and ignores ``meta.properties`` and ``partition.metadata``).

The format follows the rest of the dump: a header line, then one line per entry in Kafka's ``name: value``
style, so ``grep``/``awk`` work on it.  man kdump-files(1), section STATE FILES, documents every line.
"""

from __future__ import annotations

from kdump.render import json_lines as _json
from kdump.storage.clean_shutdown import CleanShutdown
from kdump.storage.leader_epoch_checkpoint import LeaderEpochCheckpoint
from kdump.storage.meta_properties import MetaProperties
from kdump.storage.offset_checkpoint import OffsetCheckpoint
from kdump.storage.partition_metadata import PartitionMetadata
from kdump.storage.quorum_state import QuorumState


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


def text_lines(path: str, parsed: object) -> str:
    """The text of one state file (``kdump files``), whichever it is."""
    if isinstance(parsed, OffsetCheckpoint):
        return offset_checkpoint_lines(path, parsed)
    if isinstance(parsed, LeaderEpochCheckpoint):
        return leader_epoch_checkpoint_lines(path, parsed)
    if isinstance(parsed, PartitionMetadata):
        return partition_metadata_lines(parsed)
    if isinstance(parsed, MetaProperties):
        return meta_properties_lines(parsed)
    if isinstance(parsed, QuorumState):
        return quorum_state_lines(parsed)
    # kdump files does not pass .kafka_cleanshutdown here: Kafka's tool ignores it (commands/files.STATE_FILES)
    raise TypeError(f"no text form for {type(parsed).__name__}")


def json_lines(path: str, parsed: object) -> str:
    """The same facts as JSON lines (``kdump files --json``)."""
    if isinstance(parsed, OffsetCheckpoint):
        return "".join(
            _json.fact("offsetCheckpointEntry", path, topic=e.topic, partition=e.partition, offset=e.offset)
            for e in parsed.entries
        )
    if isinstance(parsed, LeaderEpochCheckpoint):
        return "".join(
            _json.fact("leaderEpochEntry", path, epoch=e.epoch, startOffset=e.start_offset)
            for e in parsed.entries
        )
    if isinstance(parsed, PartitionMetadata):
        return _json.fact("partitionMetadata", path, version=parsed.version, topicId=parsed.topic_id)
    if isinstance(parsed, MetaProperties):
        return _json.fact("metaProperties", path, version=parsed.version, properties=dict(parsed.properties))
    if isinstance(parsed, QuorumState):
        fields = {
            "dataVersion": parsed.data_version,
            "leaderId": parsed.leader_id,
            "leaderEpoch": parsed.leader_epoch,
            "votedId": parsed.voted_id,
            "votedDirectoryId": parsed.voted_directory_id,
            "clusterId": parsed.cluster_id,
            "appliedOffset": parsed.applied_offset,
            "currentVoters": None if parsed.current_voters is None else list(parsed.current_voters),
        }
        return _json.fact("quorumState", path, **{k: v for k, v in fields.items() if v is not None})
    if isinstance(parsed, CleanShutdown):
        return _json.fact("cleanShutdown", path, version=parsed.version, brokerEpoch=parsed.broker_epoch)
    raise TypeError(f"not a state file: {type(parsed).__name__}")
