"""KRaft's ``quorum-state`` (Kafka's ``FileQuorumStateStore`` and the generated ``QuorumStateData`` JSON
converter): one JSON line, ``data_version`` 0 or 1."""

from __future__ import annotations

import json
import os
from dataclasses import dataclass
from typing import Any

from kdump.errors import CheckpointFormatError
from kdump.storage.byte_source import ByteSource, location_of
from kdump.storage.checkpoint_file import (
    INT32,
    INT64,
    decode_utf8_line,
    jackson_text,
    java_parse_int,
    parse_json_value,
    read_whole,
    split_lines,
    state_file_error,
)
from kdump.storage.kafka_uuid import ZERO_UUID, decode_uuid, encode_uuid


@dataclass(frozen=True)
class QuorumState:
    """A KRaft ``quorum-state`` file (Kafka's ``QuorumStateData``).

    ``data_version`` 0 files have ``cluster_id``, ``applied_offset`` and ``current_voters``; version 1 files
    have ``voted_directory_id`` instead.  Absent fields are None.
    """

    data_version: int
    leader_id: int
    leader_epoch: int
    voted_id: int
    voted_directory_id: str | None = None
    cluster_id: str | None = None
    applied_offset: int | None = None
    current_voters: tuple[int, ...] | None = None
    path: str | None = None


def _jackson_as_text(node: Any) -> str:
    """``JsonNode.asText()`` for the node kinds JSON can produce."""
    if node is None:
        return "null"
    if isinstance(node, bool):
        return "true" if node else "false"
    if isinstance(node, (dict, list)):
        return ""
    if isinstance(node, float):
        return repr(node)
    return str(node)


def _json_int(node: Any, bounds: tuple[int, int]) -> int:
    """``MessageUtil.jsonNodeToInt``/``jsonNodeToLong``; ValueError with Kafka's text."""
    about = "QuorumStateData"
    if isinstance(node, int) and not isinstance(node, bool) and bounds[0] <= node <= bounds[1]:
        return node
    if isinstance(node, str):
        raise ValueError(f"{about}: expected an integer or string type, but got STRING")
    text = _jackson_as_text(node)
    value = java_parse_int(text, bounds)
    if value is None:
        raise ValueError(f'{about}: failed to parse number: For input string: "{text}"')
    return value


def _json_short_value(node: Any) -> int:
    """``JsonNode.shortValue()``: numbers are cast to a Java short, anything else is 0."""
    if isinstance(node, bool) or not isinstance(node, (int, float)):
        return 0
    number: int
    if isinstance(node, float):  # Java: double -> int saturates (NaN -> 0), then int -> short wraps
        if node != node:
            number = 0
        elif node >= INT32[1]:
            number = INT32[1]
        elif node <= INT32[0]:
            number = INT32[0]
        else:
            number = int(node)
    else:
        number = node
    return (number + (1 << 15)) % (1 << 16) - (1 << 15)


def parse_quorum_state(data: bytes, path: str | os.PathLike[str] | None = None) -> QuorumState:
    """Decode ``quorum-state`` like Kafka's ``FileQuorumStateStore``: only the first line is read, it must be
    a JSON object with a ``data_version`` in 0..1, then the generated converter demands the fields of that
    version (``QuorumStateData: unable to locate field '<f>', which is mandatory in version <v>``)."""
    where = None if path is None else os.fspath(path)
    lines = split_lines(data)
    if not lines:
        raise state_file_error("File ended prematurely.", where, 1, 0)
    first = lines[0]

    def fail(text: str) -> CheckpointFormatError:
        return state_file_error(text, where, 1, first.position)

    text = decode_utf8_line(first, where, "quorum state file")
    try:
        node, _ = parse_json_value(text)
    except ValueError as exc:
        raise fail(f"invalid JSON: {exc}") from None
    except RecursionError:
        raise fail("invalid JSON: nested too deeply") from None
    if not isinstance(node, dict):
        raise fail(f"Deserialized node {jackson_text(node)} is not an object node")
    if "data_version" not in node:
        raise fail(f"Deserialized node {jackson_text(node)} does not have data_version field")
    version = _json_short_value(node["data_version"])
    if not 0 <= version <= 1:
        raise fail(f"data_version ({version}) is not within the min (0) and max (1) supported version")

    def mandatory(name: str) -> Any:
        if name not in node:
            raise fail(
                f"QuorumStateData: unable to locate field '{name}', which is mandatory in version {version}"
            )
        return node[name]

    try:
        cluster_id = applied_offset = voters = directory_id = None
        if version == 0:
            cluster_node = mandatory("clusterId")
            if not isinstance(cluster_node, str):
                raise ValueError("QuorumStateData expected a string type, but got OBJECT")
            cluster_id = cluster_node
        leader_id = _json_int(mandatory("leaderId"), INT32)
        leader_epoch = _json_int(mandatory("leaderEpoch"), INT32)
        voted_id = _json_int(mandatory("votedId"), INT32)
        if version == 1:
            directory_node = mandatory("votedDirectoryId")
            if not isinstance(directory_node, str):
                raise ValueError("QuorumStateData expected a JSON string type, but got OBJECT")
            directory_id = encode_uuid(decode_uuid(directory_node))
        if version == 0:
            applied_offset = _json_int(mandatory("appliedOffset"), INT64)
            voters_node = mandatory("currentVoters")
            if voters_node is not None:
                if not isinstance(voters_node, list):
                    raise ValueError("QuorumStateData expected a JSON array, but got OBJECT")
                parsed: list[int] = []
                for voter in voters_node:
                    if not isinstance(voter, dict) or "voterId" not in voter:
                        raise ValueError(
                            "Voter: unable to locate field 'voterId', which is mandatory in version 0"
                        )
                    parsed.append(_json_int(voter["voterId"], INT32))
                voters = tuple(parsed)
    except ValueError as exc:
        raise fail(str(exc)) from None
    return QuorumState(
        data_version=version,
        leader_id=leader_id,
        leader_epoch=leader_epoch,
        voted_id=voted_id,
        voted_directory_id=directory_id,
        cluster_id=cluster_id,
        applied_offset=applied_offset,
        current_voters=voters,
        path=where,
    )


def read_quorum_state(path: str | os.PathLike[str] | ByteSource) -> QuorumState:
    """Read and decode a ``quorum-state`` file."""
    return parse_quorum_state(read_whole(path), location_of(path))


def encode_quorum_state(state: QuorumState) -> bytes:
    """The single JSON line Kafka writes (generated converter field order, then ``data_version``)."""
    doc: dict[str, Any] = {}
    if state.data_version == 0:
        doc["clusterId"] = state.cluster_id or ""
    doc["leaderId"] = state.leader_id
    doc["leaderEpoch"] = state.leader_epoch
    doc["votedId"] = state.voted_id
    if state.data_version >= 1:
        doc["votedDirectoryId"] = state.voted_directory_id or ZERO_UUID
    if state.data_version == 0:
        doc["appliedOffset"] = state.applied_offset if state.applied_offset is not None else 0
        doc["currentVoters"] = (
            None if state.current_voters is None else [{"voterId": v} for v in state.current_voters]
        )
    doc["data_version"] = state.data_version
    return json.dumps(doc, separators=(",", ":")).encode("utf-8")
