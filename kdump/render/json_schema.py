"""The documented schema of kdump's JSON lines (version :data:`~kdump.render.json_lines.JSON_SCHEMA_VERSION`):
for each ``type``, its fields and their JSON types.  man kdump-files (JSON OUTPUT) lists the same; the tests
validate every object kdump prints against this table and check that the man page names every field."""

from __future__ import annotations

from typing import Any

INT, STR, BOOL, NULL, LIST, OBJ = "integer", "string", "boolean", "null", "array", "object"
NUM = "number"
#: A decoded payload may be any JSON value.
ANY = (OBJ, LIST, STR, INT, NUM, BOOL, NULL)

#: type -> {field: allowed JSON types}; fields marked optional in OPTIONAL may be absent.
SCHEMA: dict[str, dict[str, tuple[str, ...]]] = {
    "file": {
        "version": (INT,),
        "file": (STR,),
        "kind": (STR,),
        "logStartingOffset": (INT,),
        "snapshotEndOffset": (INT,),
        "epoch": (INT,),
        "ignored": (BOOL,),
        "name": (STR,),
    },
    "batch": {
        "file": (STR,),
        "baseOffset": (INT,),
        "lastOffset": (INT,),
        "count": (INT,),
        "baseSequence": (INT,),
        "lastSequence": (INT,),
        "producerId": (INT,),
        "producerEpoch": (INT,),
        "partitionLeaderEpoch": (INT,),
        "isTransactional": (BOOL,),
        "isControl": (BOOL,),
        "deleteHorizonMs": (INT, NULL),
        "offset": (INT,),
        "position": (INT,),
        "timestampType": (STR,),
        "timestamp": (INT,),
        "size": (INT,),
        "magic": (INT,),
        "compresscodec": (STR,),
        "crc": (INT,),
        "isvalid": (BOOL,),
    },
    "record": {
        "file": (STR,),
        "topic": (STR, NULL),
        "partition": (INT, NULL),
        "offset": (INT,),
        "timestampType": (STR,),
        "timestamp": (INT,),
        "keySize": (INT,),
        "valueSize": (INT,),
        "sequence": (INT,),
        "headerKeys": (LIST,),
        "isValid": (BOOL,),
        "crc": (INT,),
        "endTxnMarker": (STR,),
        "coordinatorEpoch": (INT,),
        "controlType": (STR,),
        "controlTypeId": (INT,),
        "controlMessage": (OBJ,),
        "key": (STR, NULL),
        "keyEncoding": (STR,),
        "payload": (STR, NULL),
        "decoded": (OBJ,),
        "payloadEncoding": (STR,),
        "keySchemaId": (INT,),
        "decodedKey": ANY,
        "valueSchemaId": (INT,),
        "decodedValue": ANY,
        "decodeNotes": (LIST,),
        "headers": (LIST,),
    },
    "error": {"file": (STR, NULL), "position": (INT, NULL), "message": (STR,)},
    "invalidBytes": {"file": (STR,), "bytes": (INT,), "position": (INT,)},
    "offsetIndexEntry": {"file": (STR,), "entry": (INT,), "offset": (INT,), "position": (INT,)},
    "timeIndexEntry": {"file": (STR,), "entry": (INT,), "timestamp": (INT,), "offset": (INT,)},
    "emptyIndex": {"file": (STR,)},
    "sanityCheck": {"file": (STR,), "passed": (BOOL,)},
    "producerSnapshotEntry": {
        "file": (STR,),
        "producerId": (INT,),
        "producerEpoch": (INT,),
        "coordinatorEpoch": (INT,),
        "currentTxnFirstOffset": (INT, NULL),
        "lastTimestamp": (INT,),
        "firstSequence": (INT,),
        "lastSequence": (INT,),
        "lastOffset": (INT,),
        "offsetDelta": (INT,),
        "timestamp": (INT,),
    },
    "corruptSnapshot": {"file": (STR,), "message": (STR,)},
    "abortedTxn": {
        "file": (STR,),
        "version": (INT,),
        "producerId": (INT,),
        "firstOffset": (INT,),
        "lastOffset": (INT,),
        "lastStableOffset": (INT,),
    },
    "offsetCheckpointEntry": {"file": (STR,), "topic": (STR,), "partition": (INT,), "offset": (INT,)},
    "leaderEpochEntry": {"file": (STR,), "epoch": (INT,), "startOffset": (INT,)},
    "partitionMetadata": {"file": (STR,), "version": (INT,), "topicId": (STR,)},
    "metaProperties": {"file": (STR,), "version": (INT,), "properties": (OBJ,)},
    "quorumState": {
        "file": (STR,),
        "dataVersion": (INT,),
        "leaderId": (INT,),
        "leaderEpoch": (INT,),
        "votedId": (INT,),
        "votedDirectoryId": (STR,),
        "clusterId": (STR,),
        "appliedOffset": (INT,),
        "currentVoters": (LIST,),
    },
    "cleanShutdown": {"file": (STR,), "version": (INT, NULL), "brokerEpoch": (INT, NULL)},
    "indexMismatch": {"file": (STR,), "indexOffset": (INT,), "logOffset": (INT,)},
    "timestampMismatch": {"file": (STR,), "indexTimestamp": (INT,), "logTimestamp": (INT,)},
    "outOfOrderTimestamp": {"file": (STR,), "indexTimestamp": (INT,), "previousIndexTimestamp": (INT,)},
    "indexedOffsetNotFound": {"file": (STR,), "indexOffset": (INT,), "logOffset": (INT,)},
    "nonConsecutiveOffsets": {"file": (STR,), "offset": (INT,), "nextOffset": (INT,)},
    # kdump verify-index
    "problem": {
        "kind": (STR,),
        "file": (STR,),
        "entry": (INT, NULL),
        "position": (INT, NULL),
        "offset": (INT, NULL),
        "message": (STR,),
    },
    "summary": {
        "version": (INT,),
        "partitions": (INT,),
        "segments": (INT,),
        "indexFiles": (INT,),
        "entries": (INT,),
        "logBytes": (INT,),
        "problems": (INT,),
        "filesWithProblems": (INT,),
        "lastOffsetTimeIndexes": (INT,),
        "preKafka38TimeIndexes": (INT,),
        "activeSegmentNotes": (INT,),
        "newerRecords": (INT,),
    },
    # time-index-rule notes carry "rule"; active-segment notes the place, as problems do
    "note": {
        "kind": (STR,),
        "file": (STR,),
        "rule": (STR,),
        "entry": (INT, NULL),
        "position": (INT, NULL),
        "offset": (INT, NULL),
        "message": (STR,),
    },
    # kdump find
    "location": {
        "version": (INT,),
        "partition": (STR,),
        "status": (STR,),
        "found": (BOOL,),
        "gap": (BOOL,),
        "requested": (OBJ,),
        "logStartOffset": (INT,),
        "segment": (STR, NULL),
        "segmentBaseOffset": (INT, NULL),
        "indexEntry": (OBJ, NULL),
        "timeIndexEntry": (OBJ, NULL),
        "largestTimestamp": (INT, NULL),
        "position": (INT, NULL),
        "offset": (INT, NULL),
        "timestamp": (INT, NULL),
        # a "batch" object and a "record" object, as kdump files writes them (validated as such)
        "batch": (OBJ, NULL),
        "logEndOffset": (INT, NULL),
        "record": (OBJ,),
        "scannedBytes": (INT,),
        "notes": (LIST,),
        "message": (STR, NULL),
    },
    # kdump ls
    "partition": {
        "version": (INT,),
        "directory": (STR,),
        "logDir": (STR,),
        "brokerId": (INT, NULL),
        "topic": (STR, NULL),
        "partition": (INT, NULL),
        "segments": (INT,),
        "sizeBytes": (INT,),
        "firstSegmentBaseOffset": (INT, NULL),
        "logStartOffset": (INT, NULL),
        "logStartOffsetCheckpoint": (INT, NULL),
        "logEndOffset": (INT, NULL),
        "highWatermark": (INT, NULL),
        "recoveryPoint": (INT, NULL),
        "cleanerCheckpoint": (INT, NULL),
        "batches": (INT,),
        "records": (INT,),
        "minTimestamp": (INT, NULL),
        "maxTimestamp": (INT, NULL),
        "codecs": (LIST,),
        "producers": (LIST,),
        "openTransactions": (LIST,),
        "anomalies": (LIST,),
    },
}

_PY = {INT: int, NUM: float, STR: str, LIST: list, OBJ: dict}


def _json_type(value: Any) -> str:
    if value is None:
        return NULL
    if isinstance(value, bool):
        return BOOL
    for name, py in _PY.items():
        if isinstance(value, py):
            return name
    return type(value).__name__


def validate(obj: dict[str, Any]) -> list[str]:
    """Problems of one object against :data:`SCHEMA` (empty when it conforms)."""
    kind = obj.get("type")
    fields = SCHEMA.get(kind)  # type: ignore[arg-type]
    if fields is None:
        return [f"unknown type {kind!r}"]
    problems = []
    for name, value in obj.items():
        if name == "type":
            continue
        allowed = fields.get(name)
        if allowed is None:
            problems.append(f"{kind}: undocumented field {name!r}")
        elif _json_type(value) not in allowed:
            problems.append(f"{kind}.{name}: {_json_type(value)} is not one of {allowed}")
        elif isinstance(value, dict) and "type" in value:
            # an object of another type inside this one (find's batch and record): validated as that type
            problems.extend(f"{kind}.{name}: {p}" for p in validate(value))
    return problems
