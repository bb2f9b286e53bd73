"""The documented schema of every kdump command's JSON lines (version
:data:`~kdump.render.json_lines.JSON_SCHEMA_VERSION`): for each ``type``, its fields and their JSON types
(:data:`SCHEMA`), the objects inside them that have no type of their own (:data:`MEMBERS`; :data:`DATA`
names the fields that hold data of any shape), which commands write each type (:data:`COMMAND_TYPES`) and
which types carry the schema version (:data:`HEAD_TYPES`).  Each command's man page (JSON OUTPUT) lists the
same; the tests run every command with ``--json``, validate every object it prints against this module and
check that its man page names every type and field it writes.

The vocabulary: a name means one thing in every command and has one JSON type (null aside) wherever it
appears, in a type or in a member object: ``file`` a file's path, ``directory`` a partition directory's
path, ``topic`` the topic, ``partition`` the partition number (null when a directory is not named
``<topic>-<partition>``), ``position`` a byte position, ``offset`` an offset, ``problems``, ``segments``,
``partitions`` and ``records`` counts.

The version rule: every object that opens a unit of output (a file, a partition, a location, a coordinator
lookup) and every summary carries ``version``, the schema version (:data:`HEAD_TYPES`); the objects inside a
unit (batches, records, entries, problems, notes, lost ranges ...) do not.  Four objects of ``kdump files``
have a ``version`` of another kind (:data:`FILE_VERSION_TYPES`): the format version of the file they come
from, as Kafka's text labels it (``version: 0`` of a ``.txnindex`` entry, of ``partition.metadata``,
``meta.properties``, ``.kafka_cleanshutdown``); they are members of a ``file`` object, whose ``version`` is
the schema's."""

from __future__ import annotations

from typing import Any

# the version rule, kept by the writer (json_lines) and re-exported here beside the tables checked by it
from kdump.render.json_lines import HEAD_TYPES as HEAD_TYPES
from kdump.render.json_lines import JSON_SCHEMA_VERSION

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
    # kdump verify-index and kdump verify: what the check counted (verify's counts are a superset; with
    # --indexes-only verify writes verify-index's)
    "summary": {
        "version": (INT,),
        "partitions": (INT,),
        "segments": (INT,),
        "batches": (INT,),
        "records": (INT, NULL),
        "logBytes": (INT,),
        "indexFiles": (INT,),
        "entries": (INT,),
        "producerSnapshots": (INT,),
        "txnIndexEntries": (INT,),
        "checkpointValues": (INT,),
        "leaderEpochs": (INT,),
        "kraftSnapshots": (INT,),
        # verify --remote-root only
        "tieredPartitions": (INT,),
        "remoteSegments": (INT,),
        "lastOffsetTimeIndexes": (INT,),
        "preKafka38TimeIndexes": (INT,),
        "activeSegmentNotes": (INT,),
        "newerRecords": (INT,),
        "unchecked": (INT,),
        "problems": (INT,),
        "filesWithProblems": (INT,),
        "kinds": (OBJ,),
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
    # kdump verify
    "unchecked": {"file": (STR,), "message": (STR,)},
    # kdump find
    "location": {
        "version": (INT,),
        "directory": (STR,),
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
        # find over a tiered segment in Aiven's layout: the chunk of the .log object the batch starts in
        "chunk": (OBJ,),
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
        "anomalyDetails": (LIST,),
        # ls --remote-root, a tiered partition only
        "remoteSegments": (INT,),
        "remoteBytes": (INT,),
    },
    "unreadable": {"path": (STR,), "message": (STR,)},
    # kdump find --group / --transactional-id
    "coordinator": {
        "version": (INT,),
        "kind": (STR,),
        "key": (STR,),
        "topic": (STR,),
        "hashCode": (INT,),
        "partition": (INT,),
        "partitionCount": (INT,),
        "partitionCountSource": (STR,),
        "localPartitions": (LIST,),
        "directory": (STR, NULL),
        "found": (BOOL,),
        "offsets": (LIST,),
        "pendingTransactionalOffsets": (INT,),
        "groupMetadata": (OBJ, NULL),
        "transaction": (OBJ, NULL),
        "problemMessages": (LIST,),
        "problemDetails": (LIST,),
    },
    # kdump salvage
    "lost": {"file": (STR,), "start": (INT,), "end": (INT,), "bytes": (INT,), "reason": (STR,)},
    "gap": {
        "file": (STR,),
        "firstOffset": (INT,),
        "lastOffset": (INT, NULL),
        "count": (INT, NULL),
        "lostStart": (INT,),
        "lostEnd": (INT,),
    },
    "salvageSummary": {
        "version": (INT,),
        "file": (STR,),
        "output": (STR,),
        "offsetIndex": (STR, NULL),
        "timeIndex": (STR, NULL),
        "sourceBytes": (INT,),
        "keptBatches": (INT,),
        "keptBytes": (INT,),
        "firstOffset": (INT, NULL),
        "lastOffset": (INT, NULL),
        "lostRanges": (INT,),
        "lostBytes": (INT,),
        "missingOffsets": (INT, NULL),
        "offsetIndexEntries": (INT,),
        "timeIndexEntries": (INT,),
    },
    # kdump rebuild-index
    "indexInterval": {
        "directory": (STR,),
        "topic": (STR, NULL),
        "partition": (INT, NULL),
        "interval": (INT,),
        "source": (STR,),
    },
    "orphanedIndex": {
        "directory": (STR,),
        "topic": (STR, NULL),
        "partition": (INT, NULL),
        "baseOffset": (INT,),
        "files": (LIST,),
    },
    "indexFile": {
        "file": (STR,),
        "indexType": (STR,),
        "baseOffset": (INT,),
        "action": (STR,),
        "dryRun": (BOOL,),
        "entries": (INT,),
        "oldBytes": (INT, NULL),
        "sound": (BOOL,),
        "backup": (STR, NULL),
    },
    "rebuildProblem": {
        "kind": (STR,),
        "file": (STR, NULL),
        "position": (INT,),
        "baseOffset": (INT,),
        "reason": (STR,),
        "truncatedBytes": (INT,),
        "directory": (STR,),
        "topic": (STR, NULL),
        "partition": (INT, NULL),
        "holder": (INT,),
        "message": (STR,),
    },
    "rebuildSummary": {
        "version": (INT,),
        "dryRun": (BOOL,),
        "partitions": (INT,),
        "segments": (INT,),
        "logBytes": (INT,),
        "rewritten": (INT,),
        "created": (INT,),
        "unchanged": (INT,),
        "soundLeftAlone": (INT,),
        "problems": (INT,),
    },
    # kdump txn
    "txnPartition": {
        "version": (INT,),
        "directory": (STR,),
        "topic": (STR, NULL),
        "partition": (INT, NULL),
        "logStartOffset": (INT, NULL),
        "logEndOffset": (INT, NULL),
        "highWatermark": (INT, NULL),
        "firstUnstableOffset": (INT, NULL),
        "lastStableOffset": (INT, NULL),
        "newestTimestamp": (INT, NULL),
        "now": (INT, NULL),
        "openTransactions": (LIST,),
        "abortedTransactions": (LIST,),
        "commits": (INT,),
        "aborts": (INT,),
        "commitDurationMs": (OBJ,),
        "abortDurationMs": (OBJ,),
        "coordinatorSource": (STR, NULL),
        "problemMessages": (LIST,),
        "problemDetails": (LIST,),
    },
    # kdump report (the other commands' objects inside: NESTED)
    "reportPartition": {
        "version": (INT,),
        "directory": (STR,),
        "topic": (STR, NULL),
        "partition": (INT, NULL),
        "summary": (OBJ,),
        "timeline": (OBJ,),
        "segmentSpans": (LIST,),
        "epochChanges": (LIST,),
        "epochChangesTotal": (INT,),
        "epochCheckpoint": (LIST, NULL),
        "silences": (LIST,),
        "producers": (LIST,),
        "producersNotFollowed": (INT,),
        "problemKinds": (OBJ,),
        "findings": (LIST,),
        "txn": (OBJ, NULL),
        "retention": (OBJ, NULL),
        "metadataSnapshots": (LIST,),
        "quorumState": (OBJ, NULL),
        "compression": (OBJ, NULL),
        "problemMessages": (LIST,),
        "problemDetails": (LIST,),
    },
    "reportGroups": {
        "version": (INT,),
        "directory": (STR,),
        "topic": (STR, NULL),
        "partition": (INT, NULL),
        "groups": (LIST,),
        "problemMessages": (LIST,),
        "problemDetails": (LIST,),
    },
    "reportCoordinator": {
        "version": (INT,),
        "directory": (STR,),
        "topic": (STR, NULL),
        "partition": (INT, NULL),
        "transactions": (LIST,),
        "problemMessages": (LIST,),
        "problemDetails": (LIST,),
    },
    "reportOverview": {
        "version": (INT,),
        "now": (INT,),
        "partitions": (INT,),
        "logDirs": (LIST,),
        "verify": (OBJ,),
        "logDirFindings": (LIST,),
        "notChecked": (LIST,),
        "notCheckedTotal": (INT,),
        "crcChecked": (BOOL,),
    },
    # kdump diff
    "diffPartition": {
        "version": (INT,),
        "name": (STR,),
        "diverged": (BOOL,),
        "copies": (LIST,),
        "pairs": (LIST,),
        "truncations": (LIST,),
    },
    # kdump tiered
    "tieredPartition": {
        "version": (INT,),
        "directory": (STR,),
        "topic": (STR, NULL),
        "partition": (INT, NULL),
        "topicId": (STR, NULL),
        "remoteDirectory": (STR, NULL),
        "deleteState": (STR, NULL),
        "tierSegments": (LIST,),
        "problems": (INT,),
        "remoteProblems": (LIST,),
    },
    # kdump retention
    "retentionPartition": {
        "version": (INT,),
        "prediction": (BOOL,),
        "directory": (STR,),
        "topic": (STR, NULL),
        "partition": (INT, NULL),
        "now": (INT,),
        "config": (OBJ,),
        "configSources": (OBJ,),
        "logStartOffset": (INT, NULL),
        "logStartOffsetAfter": (INT, NULL),
        "logEndOffset": (INT, NULL),
        "highWatermark": (INT, NULL),
        "sizeBytes": (INT,),
        "segmentFates": (LIST,),
        "compaction": (OBJ, NULL),
        "problemMessages": (LIST,),
        "problemDetails": (LIST,),
    },
}

#: The member objects inside an object that have no ``type`` of their own, by path: ``<type>.<field>`` for an
#: object, ``[]`` appended for the objects of a list, and on into their fields.  Validated as the types are.
MEMBERS: dict[str, dict[str, tuple[str, ...]]] = {
    # kdump files
    "record.headers[]": {
        "key": (STR,),
        "keyEncoding": (STR,),
        "value": (STR, NULL),
        "valueEncoding": (STR,),
    },
    # kdump find
    "location.requested": {"offset": (INT,), "timestamp": (INT,)},
    "location.indexEntry": {"file": (STR,), "entry": (INT, NULL), "offset": (INT,), "position": (INT,)},
    "location.chunk": {
        "object": (STR,),
        "index": (INT,),
        "chunks": (INT,),
        "position": (INT,),
        "size": (INT,),
        "codec": (STR, NULL),
        "cipher": (STR, NULL),
        "segmentPosition": (INT,),
        "segmentSize": (INT,),
        "byte": (INT,),
    },
    "location.timeIndexEntry": {"file": (STR,), "entry": (INT, NULL), "timestamp": (INT,), "offset": (INT,)},
    "coordinator.offsets[]": {
        "topic": (STR,),
        "partition": (INT,),
        "offset": (INT,),
        "logEndOffset": (INT, NULL),
        "lag": (INT, NULL),
        "leaderEpoch": (INT, NULL),
        "metadata": (STR, NULL),
        "commitTimestamp": (INT, NULL),
        "recordOffset": (INT,),
    },
    "coordinator.groupMetadata": {
        "protocolType": (STR, NULL),
        "generation": (INT, NULL),
        "protocol": (STR, NULL),
        "leaderMemberId": (STR, NULL),
        "members": (LIST,),
    },
    "coordinator.transaction": {
        "transactionalId": (STR,),
        "producerId": (INT, NULL),
        "producerEpoch": (INT, NULL),
        "state": (STR, NULL),
        "timeoutMs": (INT, NULL),
        "topicPartitions": (LIST,),
        "startTimestamp": (INT, NULL),
        "lastUpdateTimestamp": (INT, NULL),
        "recordOffset": (INT,),
        "removed": (BOOL,),
    },
    "coordinator.transaction.topicPartitions[]": {"topic": (STR,), "partition": (INT,)},
    # kdump ls
    "partition.openTransactions[]": {"producerId": (INT,), "producerEpoch": (INT,), "firstOffset": (INT,)},
    # kdump txn
    "txnPartition.openTransactions[]": {
        "producerId": (INT,),
        "producerEpoch": (INT,),
        "firstOffset": (INT,),
        "lastOffset": (INT, NULL),
        "firstTimestamp": (INT, NULL),
        "lastTimestamp": (INT, NULL),
        "ageMs": (INT, NULL),
        "coordinator": (OBJ, NULL),
        "hanging": (BOOL,),
        "verdict": (STR,),
        "reason": (STR, NULL),
        "abortCommand": (STR, NULL),
    },
    "txnPartition.openTransactions[].coordinator": {
        "transactionalId": (STR,),
        "producerId": (INT,),
        "producerEpoch": (INT,),
        "state": (STR,),
        "timeoutMs": (INT,),
        "topicPartitions": (LIST,),
    },
    "txnPartition.openTransactions[].coordinator.topicPartitions[]": {"topic": (STR,), "partition": (INT,)},
    "txnPartition.abortedTransactions[]": {
        "producerId": (INT,),
        "firstOffset": (INT,),
        "lastOffset": (INT,),
        "lastStableOffset": (INT,),
    },
    "txnPartition.commitDurationMs": {"min": (INT, NULL), "median": (INT, NULL), "max": (INT, NULL)},
    "txnPartition.abortDurationMs": {"min": (INT, NULL), "median": (INT, NULL), "max": (INT, NULL)},
    # kdump diff
    "diffPartition.copies[]": {
        "directory": (STR,),
        "logStartOffset": (INT, NULL),
        "logEndOffset": (INT, NULL),
        "highWatermark": (INT, NULL),
        "batches": (INT,),
        "checkpointEpochs": (LIST, NULL),
        "batchEpochs": (LIST,),
        "problemMessages": (LIST,),
        "problemDetails": (LIST,),
    },
    "diffPartition.copies[].checkpointEpochs[]": {"epoch": (INT,), "startOffset": (INT,)},
    "diffPartition.copies[].batchEpochs[]": {"epoch": (INT,), "startOffset": (INT,)},
    "diffPartition.pairs[]": {
        "a": (INT,),
        "b": (INT,),
        "matchingBatches": (INT,),
        "divergedBatches": (INT,),
        "firstDivergence": (OBJ, NULL),
        "onlyInA": (LIST,),
        "onlyInB": (LIST,),
        "offsetsOnlyInA": (INT,),
        "offsetsOnlyInB": (INT,),
    },
    "diffPartition.pairs[].firstDivergence": {
        "offset": (INT,),
        "kind": (STR,),
        "batchA": (OBJ, NULL),
        "batchB": (OBJ, NULL),
        "recordDifferences": (LIST,),
    },
    "diffPartition.pairs[].firstDivergence.batchA": {
        "baseOffset": (INT,),
        "lastOffset": (INT,),
        "partitionLeaderEpoch": (INT,),
        "crc": (INT,),
        "file": (STR,),
        "position": (INT,),
    },
    "diffPartition.pairs[].onlyInA[]": {"first": (INT,), "last": (INT,)},
    "diffPartition.pairs[].onlyInB[]": {"first": (INT,), "last": (INT,)},
    "diffPartition.truncations[]": {
        "follower": (INT,),
        "leader": (INT,),
        "truncateTo": (INT, NULL),
        "removedOffsets": (INT,),
        "steps": (LIST,),
    },
    # kdump retention
    "tieredPartition.tierSegments[]": {
        "tier": (STR,),
        "baseOffset": (INT,),
        "endOffset": (INT, NULL),
        "sizeBytes": (INT, NULL),
        "state": (STR,),
        "segmentId": (STR, NULL),
        "file": (STR,),
        "alsoRemote": (BOOL,),
    },
    "tieredPartition.remoteProblems[]": {"file": (STR,), "kind": (STR,), "message": (STR,)},
    "retentionPartition.segmentFates[]": {
        "baseOffset": (INT,),
        "nextOffset": (INT,),
        "size": (INT,),
        "largestTimestamp": (INT, NULL),
        "deletedBy": (STR, NULL),
        "deletableAt": (INT, NULL),
    },
    "retentionPartition.compaction": {
        "firstDirtyOffset": (INT,),
        "firstUncleanableOffset": (INT,),
        "cleanBytes": (INT,),
        "cleanableBytes": (INT,),
        "dirtyRatio": (NUM,),
        "minCleanableRatio": (NUM,),
        "wouldClean": (BOOL,),
        "records": (INT,),
        "distinctKeys": (INT,),
        "superseded": (INT,),
        "tombstones": (INT,),
        "liveTombstones": (INT,),
        "tombstonesWithHorizon": (INT,),
        "latestDeleteHorizon": (INT, NULL),
        "tombstonesPastHorizon": (INT,),
        "recordsWithoutKey": (INT,),
        "cleaning": (OBJ, NULL),
    },
    "retentionPartition.compaction.cleaning": {
        "cleanedUpTo": (INT,),
        "recordsKept": (INT,),
        "tombstonesKept": (INT,),
        "removedSuperseded": (INT,),
        "removedTombstones": (INT,),
        "removedWithoutKey": (INT,),
        "removedAborted": (INT,),
    },
}
# kdump report
MEMBERS.update(
    {
        "reportPartition.timeline": {
            "batchesPerBucket": (INT,),
            "buckets": (LIST,),
            "offsetJumps": (INT,),
            "offsetsSkipped": (INT,),
        },
        "reportPartition.timeline.buckets[]": {
            "firstOffset": (INT,),
            "lastOffset": (INT,),
            "minTimestamp": (INT,),
            "maxTimestamp": (INT,),
            "batches": (INT,),
            "records": (INT,),
            "bytes": (INT,),
            "maxBatchBytes": (INT,),
        },
        "reportPartition.segmentSpans[]": {
            "baseOffset": (INT,),
            "firstOffset": (INT, NULL),
            "firstTimestamp": (INT, NULL),
            "largestTimestamp": (INT, NULL),
            "bytes": (INT,),
        },
        "reportPartition.epochChanges[]": {"epoch": (INT,), "offset": (INT,), "timestamp": (INT,)},
        "reportPartition.epochCheckpoint[]": {"epoch": (INT,), "startOffset": (INT,)},
        "reportPartition.silences[]": {
            "start": (INT,),
            "end": (INT,),
            "durationMs": (INT,),
            "afterOffset": (INT,),
            "beforeOffset": (INT,),
        },
        "reportPartition.producers[]": {
            "producerId": (INT,),
            "producerEpoch": (INT,),
            "batches": (INT,),
            "records": (INT,),
            "firstOffset": (INT,),
            "lastOffset": (INT,),
            "firstTimestamp": (INT, NULL),
            "lastTimestamp": (INT, NULL),
            "transactional": (BOOL,),
            "markers": (INT,),
        },
        "reportPartition.compression": {
            "compressedBatches": (INT,),
            "compressedBytes": (INT,),
            "sampledBatches": (INT,),
            "sampledBytes": (INT,),
            "uncompressedBytes": (INT,),
            "failed": (INT,),
            "ratio": (NUM, NULL),
            "exact": (BOOL,),
        },
        "reportPartition.metadataSnapshots[]": {"endOffset": (INT,), "epoch": (INT,), "bytes": (INT,)},
        "reportPartition.quorumState": {
            "leaderId": (INT,),
            "leaderEpoch": (INT,),
            "votedId": (INT,),
            "currentVoters": (LIST, NULL),
        },
        "reportPartition.findings[]": {
            "file": (STR,),
            "kind": (STR,),
            "message": (STR,),
            "position": (INT, NULL),
            "offset": (INT, NULL),
        },
        "reportGroups.groups[]": {
            "group": (STR,),
            "protocolType": (STR, NULL),
            "generation": (INT, NULL),
            "members": (LIST,),
            "pendingTransactionalOffsets": (INT,),
            "offsets": (LIST,),
        },
        "reportGroups.groups[].offsets[]": {
            "topic": (STR,),
            "partition": (INT,),
            "offset": (INT,),
            "commitTimestamp": (INT,),
            "logEndOffset": (INT, NULL),
            "lag": (INT, NULL),
        },
        "reportCoordinator.transactions[]": MEMBERS["coordinator.transaction"],
        "reportCoordinator.transactions[].topicPartitions[]": {"topic": (STR,), "partition": (INT,)},
        "reportOverview.logDirs[]": {"logDir": (STR,), "brokerId": (INT, NULL)},
        "reportOverview.logDirFindings[]": {
            "file": (STR,),
            "kind": (STR,),
            "message": (STR,),
            "position": (INT, NULL),
            "offset": (INT, NULL),
        },
        "reportOverview.notChecked[]": {
            "file": (STR,),
            "kind": (STR,),
            "message": (STR,),
            "position": (INT, NULL),
            "offset": (INT, NULL),
        },
    }
)
#: A problem as a fact (kdump.problem.Problem): its kind, where (file, byte position) when known, the kind's data.
PROBLEM_DETAIL: dict[str, tuple[str, ...]] = {
    "kind": (STR,),
    "file": (STR,),
    "position": (INT,),
    "data": (OBJ,),
}
PROBLEM_DETAILS = (
    "partition.anomalyDetails[]",
    "txnPartition.problemDetails[]",
    "retentionPartition.problemDetails[]",
    "diffPartition.copies[].problemDetails[]",
    "coordinator.problemDetails[]",
    "reportPartition.problemDetails[]",
    "reportGroups.problemDetails[]",
    "reportCoordinator.problemDetails[]",
)
MEMBERS.update((path, PROBLEM_DETAIL) for path in PROBLEM_DETAILS)
MEMBERS["diffPartition.pairs[].firstDivergence.batchB"] = MEMBERS[
    "diffPartition.pairs[].firstDivergence.batchA"
]

#: Fields whose objects are data, not kdump's vocabulary: any names (``type`` and ``version`` included), any
#: values (a decoded record, a KRaft control message, state-file properties, configuration, counts by kind).
DATA = frozenset(
    {
        "record.decoded",
        "record.controlMessage",
        "record.decodedKey",
        "record.decodedValue",
        "metaProperties.properties",
        "summary.kinds",
        "retentionPartition.config",
        "retentionPartition.configSources",
        "reportPartition.problemKinds",
        *(f"{path}.data" for path in PROBLEM_DETAILS),
    }
)

#: Fields that hold an object of another type, validated as such (other objects, such as a decoded record's
#: ``decoded``, are data and may have fields of any name, ``type`` and ``version`` included).
NESTED = {
    "location": {"batch": "batch", "record": "record"},
    "reportPartition": {"summary": "partition", "txn": "txnPartition", "retention": "retentionPartition"},
    "reportOverview": {"verify": "summary"},
}

#: Members of a ``file`` object whose ``version`` is the format version of that file, as Kafka's text labels it.
FILE_VERSION_TYPES = frozenset({"abortedTxn", "partitionMetadata", "metaProperties", "cleanShutdown"})

#: The types each command writes with ``--json`` (``find``'s ``location`` holds ``batch`` and ``record``
#: objects, which ``files`` writes).
COMMAND_TYPES: dict[str, tuple[str, ...]] = {
    "files": (
        "file",
        "batch",
        "record",
        "error",
        "invalidBytes",
        "offsetIndexEntry",
        "timeIndexEntry",
        "emptyIndex",
        "sanityCheck",
        "producerSnapshotEntry",
        "corruptSnapshot",
        "abortedTxn",
        "offsetCheckpointEntry",
        "leaderEpochEntry",
        "partitionMetadata",
        "metaProperties",
        "quorumState",
        "cleanShutdown",
        "indexMismatch",
        "timestampMismatch",
        "outOfOrderTimestamp",
        "indexedOffsetNotFound",
        "nonConsecutiveOffsets",
    ),
    "find": ("location", "coordinator"),
    "ls": ("partition", "unreadable"),
    "verify": ("problem", "unchecked", "note", "summary"),
    "verify-index": ("problem", "note", "summary"),
    "salvage": ("lost", "gap", "salvageSummary"),
    "rebuild-index": ("indexInterval", "orphanedIndex", "indexFile", "rebuildProblem", "rebuildSummary"),
    "txn": ("txnPartition", "unreadable"),
    "diff": ("diffPartition", "unreadable"),
    "tiered": ("tieredPartition",),
    "retention": ("retentionPartition", "unreadable"),
    "report": ("reportPartition", "reportGroups", "reportCoordinator", "reportOverview", "unreadable"),
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
    """Problems of one object against :data:`SCHEMA` and the version rule (empty when it conforms)."""
    kind = obj.get("type")
    if not isinstance(kind, str) or kind not in SCHEMA:
        return [f"unknown type {kind!r}"]
    fields = SCHEMA[kind]
    problems = []
    if kind in HEAD_TYPES and obj.get("version") != JSON_SCHEMA_VERSION:
        problems.append(
            f"{kind}: version {obj.get('version')!r}, not the schema version {JSON_SCHEMA_VERSION}"
        )
    for name, value in obj.items():
        if name == "type":
            continue
        allowed = fields.get(name)
        if allowed is None:
            problems.append(f"{kind}: undocumented field {name!r}")
        elif _json_type(value) not in allowed:
            problems.append(f"{kind}.{name}: {_json_type(value)} is not one of {allowed}")
        elif isinstance(value, dict) and name in NESTED.get(kind, {}):
            # an object of another type inside this one (find's batch and record): validated as that type
            if value.get("type") != NESTED[kind][name]:
                problems.append(f"{kind}.{name}: not a {NESTED[kind][name]} object")
            problems.extend(f"{kind}.{name}: {p}" for p in validate(value))
        elif f"{kind}.{name}" not in DATA:
            problems.extend(_validate_members(f"{kind}.{name}", value))
    return problems


def _validate_members(path: str, value: Any) -> list[str]:
    """Problems of the member objects in ``value`` (the field at ``path``) against :data:`MEMBERS`."""
    if isinstance(value, list):
        return [p for item in value for p in _validate_members(path + "[]", item)]
    if not isinstance(value, dict):
        return []
    fields = MEMBERS.get(path)
    if fields is None:
        return [f"{path}: undocumented member object"]
    problems = []
    for name, member in value.items():
        allowed = fields.get(name)
        if allowed is None:
            problems.append(f"{path}: undocumented field {name!r}")
        elif _json_type(member) not in allowed:
            problems.append(f"{path}.{name}: {_json_type(member)} is not one of {allowed}")
        elif f"{path}.{name}" not in DATA:
            problems.extend(_validate_members(f"{path}.{name}", member))
    return problems
