"""verify's problems are facts (kind, file, byte position, the kind's data) and only the sinks put them into words.

The expected sentences below are the ones the analyses wrote themselves before their problems became facts
(kdump.analysis.index_verification, kdump.analysis.log_verification and kdump.commands.remote_tier at commit
fca05f9), each variant of each kind with its values filled in: the words of ``kdump verify`` and
``verify-index`` stay what they were.  The real runs (tests/test_verify*.py, the damaged corpus) check that the
analyses hand the sinks these facts."""

from __future__ import annotations

import ast
import json
from pathlib import Path

import pytest

from kdump.analysis.index_verification import ACTIVE_SEGMENT
from kdump.analysis.index_verification import PROBLEM_KINDS as INDEX_KINDS
from kdump.analysis.log_verification import PROBLEM_KINDS as LOG_KINDS
from kdump.analysis.log_verification import UNCHECKED_KINDS, Unchecked, unchecked
from kdump.commands.remote_tier import REMOTE_PROBLEM_KINDS
from kdump.problem import Problem, problem
from kdump.render.problem_text import unchecked_message, verify_message
from kdump.render.problems import note_line, problem_json, problem_line
from kdump.render.verify_report import JsonSink, TextSink
from kdump.storage.transaction_index import AbortedTxn

ACTIVE = (
    "the active segment (highest base offset): a running broker fills its preallocated index files as the log "
    "grows, a clean shutdown trims them"
)
INDEX = "/d/t-0/00000000000000000010.index"
TIME = "/d/t-0/00000000000000000010.timeindex"
LOG = "/d/t-0/00000000000000000010.log"
ZERO_TAIL = problem("zero-tail", INDEX, 84, entry=7, slots=10, entry_size=12)
SANITY = problem("sanity-check", TIME, None, message="Corrupt time index found")
AROUND = {"batch_position": 80, "base_offset": 3, "last_offset": 6}

RLOG = "/r/t-0-AAAAAAAAAAAAAAAAAAAAAA/00000000000000000010-AAAAAAAAAAAAAAAAAAAACw.log"
AIVEN = "/r/t-AAAAAAAAAAAAAAAAAAAAAA/0/00000000000000000010-AAAAAAAAAAAAAAAAAAAACw"
SEG = {"segment_id": "AAAAAAAAAAAAAAAAAAAACw", "start_offset": 10, "end_offset": 19}

#: verify --remote-root's problems (``kdump tiered``'s, kdump.analysis.tiered), each case with the words
#: kdump.analysis.tiered and kdump.commands.tiered wrote themselves before their problems became facts (commit
#: 9f94825); the real runs (tests/test_tiered*.py, tests/test_verify_remote.py) check that the analysis hands the
#: sinks these facts.
REMOTE_CASES: list[tuple[Problem, str]] = [
    (
        problem("remote-missing-object", RLOG[:-4] + ".timeindex", **SEG, suffix=".timeindex"),
        "segment AAAAAAAAAAAAAAAAAAAACw (offsets 10-19) was copied (COPY_SEGMENT_FINISHED) but its .timeindex is "
        "not in remote storage",
    ),
    (
        problem("remote-size", RLOG, case="metadata", size=690, expected=710),
        "690 bytes, but the metadata says segmentSizeInBytes 710",
    ),
    (
        problem("remote-size", AIVEN + ".log", case="chunks", size=490, chunks=8, expected=493),
        "490 bytes, but its manifest's 8 chunks make 493",
    ),
    (
        problem("remote-size", AIVEN + ".indexes", case="indexes", size=199, expected=204),
        "199 bytes, but its manifest's indexes end at byte 204",
    ),
    (
        problem("remote-size", AIVEN + ".rsm-manifest", case="original", size=700, expected=710),
        "originalFileSize 700, but the metadata says segmentSizeInBytes 710",
    ),
    (
        problem("remote-unfinished", RLOG, **SEG, state="COPY_SEGMENT_STARTED"),
        "segment AAAAAAAAAAAAAAAAAAAACw (offsets 10-19) is still COPY_SEGMENT_STARTED: a copy that did not finish "
        "(or is under way now)",
    ),
    (
        problem("remote-unfinished", RLOG, **SEG, state="DELETE_SEGMENT_STARTED"),
        "segment AAAAAAAAAAAAAAAAAAAACw (offsets 10-19) is still DELETE_SEGMENT_STARTED: a deletion that did not "
        "finish (or is under way now)",
    ),
    (problem("remote-orphaned-object", "/r/t-0-x/junk", case="not-a-segment"), "not a segment file"),
    (
        problem(
            "remote-orphaned-object",
            RLOG,
            case="unknown-segment",
            count=5,
            segment_id="AAAAAAAAAAAAAAAAAAAACw",
        ),
        "5 file(s) of segment AAAAAAAAAAAAAAAAAAAACw, which the metadata does not know (a failed copy's leftovers, "
        "or a deletion that finished in the metadata but not in the store)",
    ),
    (
        problem(
            "remote-gap", RLOG, case="remote", first=9, last=9, before="AAAAAAAAAAAAAAAAAAAACg", after="B"
        ),
        "offsets 9-9 are in no remote segment (between AAAAAAAAAAAAAAAAAAAACg and B)",
    ),
    (
        problem("remote-gap", "/d/t-0", case="local", first=20, last=24, remote_end=19, local_start=25),
        "offsets 20-24 are neither in remote storage (it ends at 19) nor local (it starts at 25)",
    ),
    (
        problem("remote-overlap", RLOG, first=10, last=12, before="A", after="B"),
        "offsets 10-12 are in two remote segments (A and B)",
    ),
    (
        problem("remote-offset-range", RLOG, first=10, last=18, start_offset=10, end_offset=19),
        "its batches hold offsets 10-18, the metadata says 10-19",
    ),
    (
        problem("remote-offset-range", RLOG, first=None, last=None, start_offset=10, end_offset=19),
        "its batches hold offsets None-None, the metadata says 10-19",
    ),
    (
        problem("remote-leader-epochs", RLOG, epochs=((0, 10), (1, 15)), expected=((0, 10),)),
        "its batches' leader epochs (epoch@first offset) are 0@10, 1@15, the metadata's segmentLeaderEpochs 0@10",
    ),
    (
        problem("remote-leader-epochs", RLOG, epochs=(), expected=((0, 10), (1, 15))),
        "its batches' leader epochs (epoch@first offset) are none, the metadata's segmentLeaderEpochs 0@10, 1@15",
    ),
    (problem("remote-log", RLOG, case="partial", bytes=51), "the last 51 bytes are not a whole batch"),
    (problem("remote-log", RLOG, message="Record is corrupt"), "Record is corrupt"),
    (
        problem(
            "remote-metadata",
            "/d/__remote_log_metadata-20",
            case="record",
            record_offset=4,
            record="transition",
            segment_id="A",
            previous="COPY_SEGMENT_FINISHED",
            state="DELETE_SEGMENT_FINISHED",
        ),
        "offset 4: segment A: invalid transition COPY_SEGMENT_FINISHED -> DELETE_SEGMENT_FINISHED (Kafka ignores "
        "it)",
    ),
    (
        problem(
            "remote-metadata",
            "/d/m-0",
            case="record",
            record_offset=4,
            record="added-state",
            segment_id="A",
            state="COPY_SEGMENT_FINISHED",
        ),
        "offset 4: segment A added in state COPY_SEGMENT_FINISHED, not COPY_SEGMENT_STARTED",
    ),
    (
        problem(
            "remote-metadata",
            "/d/m-0",
            case="record",
            record_offset=4,
            record="added-again",
            segment_id="A",
            state="COPY_SEGMENT_FINISHED",
        ),
        "offset 4: segment A added again while COPY_SEGMENT_FINISHED",
    ),
    (
        problem(
            "remote-metadata",
            "/d/m-0",
            case="record",
            record_offset=4,
            record="no-segment",
            segment_id="A",
            state="DELETE_SEGMENT_STARTED",
        ),
        "offset 4: update to DELETE_SEGMENT_STARTED of segment A, which no earlier record added",
    ),
    (
        problem(
            "remote-metadata",
            "/d/m-0",
            case="record",
            record_offset=4,
            record="update-state",
            segment_id="A",
            state="COPY_SEGMENT_STARTED",
        ),
        "offset 4: segment A: an update cannot set COPY_SEGMENT_STARTED",
    ),
    (
        problem(
            "remote-metadata",
            "/d/m-0",
            case="record",
            record_offset=-1,
            record="directory",
            reason="[Errno 13] Permission denied",
        ),
        "offset -1: cannot read the directory: [Errno 13] Permission denied",
    ),
    (
        problem(
            "remote-metadata",
            "/d/m-0/0.log",
            case="record",
            record_offset=-1,
            record="log",
            message="Record is corrupt",
        ),
        "offset -1: Record is corrupt",
    ),
    (
        problem("remote-metadata", "/d/m-0", case="record", record_offset=7, record="no-value"),
        "offset 7: a record without a value",
    ),
    (
        problem(
            "remote-metadata", "/d/m-0", case="record", record_offset=7, record="undecodable", reason="bad"
        ),
        "offset 7: cannot decode it: bad",
    ),
    (
        problem(
            "remote-metadata",
            AIVEN + ".log",
            case="custom-metadata",
            segment_id="A",
            reason="7 tagged fields in 2 bytes",
        ),
        "segment A: its custom metadata is not the plugin's (7 tagged fields in 2 bytes); the default object keys "
        "are used",
    ),
    (
        problem("remote-metadata", "/d", case="none-found", topic="__remote_log_metadata"),
        "no __remote_log_metadata partition found: what is in remote storage cannot be known",
    ),
    (
        problem("remote-metadata", "/d/t-0", case="topic-id", topic="t", partition=0),
        "the metadata's topic id for t-0 is not partition.metadata's (the topic was deleted and re-created?)",
    ),
    (problem("remote-manifest", AIVEN + ".rsm-manifest", message="not JSON"), "not JSON"),
    (
        problem(
            "remote-indexes",
            AIVEN + ".indexes",
            index="leaderEpoch",
            fault="unreadable",
            message="tag mismatch",
        ),
        "leaderEpoch index: tag mismatch",
    ),
    (
        problem("remote-indexes", AIVEN + ".indexes", index="timestamp", fault="absent"),
        "the manifest has no timestamp index",
    ),
    (
        problem("remote-indexes", AIVEN + ".indexes", index="timestamp", fault="length", bytes=13, width=12),
        "timestamp index: 13 bytes, not whole 12-byte entries",
    ),
    (
        problem(
            "remote-indexes",
            AIVEN + ".indexes",
            index="offset",
            fault="order",
            index_entry=2,
            relative_offset=3,
            log_position=900,
            previous=(2, 100),
            segment_size=710,
        ),
        "offset index: entry 2 (relative offset 3, position 900) does not follow (2, 100) inside the 710-byte "
        "segment",
    ),
    (
        problem(
            "remote-indexes", AIVEN + ".indexes", index="producerSnapshot", fault="parse", message="bad CRC"
        ),
        "producer snapshot: bad CRC",
    ),
    (
        problem(
            "remote-indexes", AIVEN + ".indexes", index="leaderEpoch", fault="parse", message="line 1: x"
        ),
        "leader-epoch checkpoint: line 1: x",
    ),
    (
        problem("unreadable", AIVEN + ".rsm-manifest", case="read", reason="Permission denied"),
        "cannot read it: Permission denied",
    ),
    (problem("unreadable", "/r/t-0-x", case="list", reason="Access Denied"), "cannot list it: Access Denied"),
]

#: (fact, the words the analysis wrote for it).
CASES: list[tuple[Problem, str]] = [
    (problem("unreadable", INDEX, reason="Permission denied"), "Permission denied"),
    (
        problem("unreadable", LOG, case="log", reason="Permission denied"),
        "cannot read it: Permission denied (its index files were not compared with it)",
    ),
    (
        problem("unreadable", "/d/t-0", case="directory", reason="Permission denied"),
        "cannot read the directory: Permission denied",
    ),
    (SANITY, "Corrupt time index found"),
    (
        problem("bad-length", INDEX, 8, length=13, entry_size=8),
        "13 bytes is not a multiple of 8: the last 5 bytes are not a whole entry",
    ),
    (
        ZERO_TAIL,
        "entries 7..9 (3 slots, bytes 84..119) are zero-filled: a preallocated index that was never trimmed (not "
        "shut down cleanly, or copied from a running broker)",
    ),
    (
        problem(
            "out-of-order",
            INDEX,
            24,
            entry=3,
            offset=50,
            what="offset",
            log_position=400,
            previous_offset=60,
            previous_log_position=300,
        ),
        "offset does not increase: offset 50 position 400 follows entry 2 (offset 60 position 300)",
    ),
    (
        problem(
            "out-of-order",
            TIME,
            24,
            entry=2,
            offset=20,
            timestamp=1000,
            what="timestamp",
            previous_timestamp=1001,
            previous_offset=10,
        ),
        "timestamp does not increase: timestamp 1000 offset 20 follows entry 1 (timestamp 1001 offset 10)",
    ),
    (
        problem("not-batch-start", INDEX, 8, entry=1, offset=5, log_position=100, **AROUND),
        "offset 5 position 100: no batch starts there (the batch around it starts at position 80, offsets 3..6)",
    ),
    (
        problem("offset-mismatch", INDEX, 8, entry=1, offset=5, case="batch", log_position=80, **AROUND),
        "offset 5 position 80: the batch there has last offset 6 (offsets 3..6)",
    ),
    (
        problem(
            "offset-mismatch",
            INDEX,
            8,
            entry=1,
            offset=9,
            case="append",
            log_position=80,
            batch_position=200,
            base_offset=10,
            last_offset=12,
        ),
        "offset 9 position 80: no batch from that position on, before the next entry's, ends at that offset (an "
        "entry names the last offset of the batch, or of the append, starting there); the batch at position 200 "
        "has offsets 10..12",
    ),
    (
        problem("offset-mismatch", INDEX, 8, entry=1, offset=9, case="append", log_position=80),
        "offset 9 position 80: no batch from that position on, before the next entry's, ends at that offset (an "
        "entry names the last offset of the batch, or of the append, starting there)",
    ),
    (
        problem("past-end", INDEX, 8, entry=1, offset=9, log_position=900, log_end=800, end_offset=7),
        "offset 9 position 900: beyond the last batch of the log (it ends at byte 800, offset 7)",
    ),
    (
        problem("past-end", INDEX, 8, entry=1, offset=9, log_position=900, log_end=0, end_offset=None),
        "offset 9 position 900: beyond the last batch of the log (it ends at byte 0)",
    ),
    (
        problem(
            "timestamp-mismatch", TIME, 12, entry=1, offset=6, timestamp=1000, case="batch", max_timestamp=999
        ),
        "timestamp 1000 offset 6: the batch's max timestamp is 999",
    ),
    (
        problem(
            "offset-mismatch",
            TIME,
            12,
            entry=1,
            offset=5,
            timestamp=1000,
            case="not-last",
            max_timestamp=1000,
            **AROUND,
        ),
        "timestamp 1000 offset 5: not the last offset of a batch (the batch holding it has offsets 3..6 and max "
        "timestamp 1000)",
    ),
    (
        problem("offset-mismatch", TIME, 12, entry=1, offset=2, timestamp=1000, case="no-batch"),
        "timestamp 1000 offset 2: no batch holds this offset",
    ),
    (
        problem(
            "timestamp-mismatch",
            TIME,
            12,
            entry=1,
            offset=6,
            timestamp=1000,
            case="earlier",
            max_timestamp=1005,
            earlier_last_offset=2,
        ),
        "timestamp 1000 offset 6: an earlier batch (last offset 2) has the later timestamp 1005",
    ),
    (
        problem(
            "offset-mismatch",
            TIME,
            12,
            entry=1,
            offset=5,
            timestamp=1000,
            case="undecodable",
            message="Record is corrupt",
            **AROUND,
        ),
        "timestamp 1000 offset 5: inside the batch at position 80 (offsets 3..6), whose records cannot be decoded "
        "to check it: Record is corrupt",
    ),
    (
        problem(
            "offset-mismatch",
            TIME,
            12,
            entry=1,
            offset=5,
            timestamp=1000,
            case="not-first-record",
            first_record=None,
            **AROUND,
        ),
        "timestamp 1000 offset 5: neither the last offset of its batch (offsets 3..6) nor the first record holding "
        "the batch's max timestamp (no record holds it)",
    ),
    (
        problem(
            "offset-mismatch",
            TIME,
            12,
            entry=1,
            offset=5,
            timestamp=1000,
            case="not-first-record",
            first_record=4,
            **AROUND,
        ),
        "timestamp 1000 offset 5: neither the last offset of its batch (offsets 3..6) nor the first record holding "
        "the batch's max timestamp (offset 4)",
    ),
    (
        problem("past-end", TIME, 12, entry=1, offset=9, timestamp=1000, end_offset=7),
        "timestamp 1000 offset 9: beyond the last batch of the log (last offset 7)",
    ),
    (
        problem("past-end", TIME, 12, entry=1, offset=9, timestamp=1000, end_offset=None),
        "timestamp 1000 offset 9: beyond the last batch of the log",
    ),
    (
        problem("missing-index", INDEX, base_offset=358, suffix=".index"),
        "missing: 00000000000000000358.log has no .index (a broker rebuilds it on start-up)",
    ),
    (
        problem("orphaned-index", INDEX, base_offset=358),
        "no 00000000000000000358.log beside it (a broker deletes index files without a log segment on start-up)",
    ),
    (
        problem("txn-index", "/d/t-0/0.txnindex", 34, case="partial", entry=1, bytes=10, entry_size=34),
        "10 bytes at the end are a partial 34-byte entry (Kafka ignores them)",
    ),
    (problem("txn-index", "/d/t-0/0.txnindex", 0, entry=0, message="Last offset 3 ..."), "Last offset 3 ..."),
    (
        problem("log", LOG, 918, case="torn", bytes=17),
        "the last 17 bytes are not a whole batch (a torn write; a broker truncates them on recovery)",
    ),
    (
        problem("log", LOG, 918, message="Record size 0 is less than the minimum"),
        "Record size 0 is less than the minimum",
    ),
    (
        problem("crc", LOG, 918, offset=40, case="short", size=20, header=61),
        "20 bytes is shorter than a batch header (61)",
    ),
    (problem("crc", LOG, 918, offset=40, stored=1, computed=2), "stored CRC 1, computed 2 over the batch"),
    (
        problem("magic", LOG, 918, offset=40, magic=7),
        "magic 7 (Kafka knows 0, 1 and 2); the batch is not checked further",
    ),
    (
        problem("segment-name", LOG, 0, offset=3, case="below", last_offset=6, segment_base=10),
        "offsets 3..6: below the segment's base offset 10 (its file name)",
    ),
    (
        problem("segment-name", LOG, case="next", offset=20, next_base=15),
        "last offset 20 is at or beyond the next segment's base offset 15",
    ),
    (
        problem("offset-order", LOG, 918, offset=3, case="batch", last_offset=6, previous=8),
        "offsets 3..6 do not follow the previous batch's last offset 8",
    ),
    (
        problem("offset-order", LOG, case="segment", offset=3, previous=8),
        "first offset 3 does not follow the previous segment's last offset 8",
    ),
    (problem("offset-gap", LOG, offset=3, last_offset=6, policy=None), "offsets 3..6 are missing"),
    (
        problem("offset-gap", LOG, offset=3, last_offset=6, policy="delete"),
        "offsets 3..6 are missing (cleanup.policy=delete)",
    ),
    (problem("decode", LOG, 918, offset=40, message="Found invalid"), "Found invalid"),
    (
        problem("decode", LOG, 918, offset=40, case="control", message="Found invalid"),
        "control batch: Found invalid",
    ),
    (
        problem("segment-size", LOG, size=2147483648, read=2147483647),
        "2147483648 bytes: larger than any segment Kafka writes (segment.bytes is an int); only the first "
        "2147483647 bytes were checked, as Kafka reads them",
    ),
    (problem("producer-snapshot", "/d/t-0/50.snapshot", 4, message="Crc mismatch"), "Crc mismatch"),
    (
        problem("producer-snapshot", "/d/t-0/50.snapshot", case="beyond-end", offset=50, log_end_offset=40),
        "taken at offset 50, beyond the log end offset 40 (the log was truncated after it; a broker deletes it on "
        "start-up)",
    ),
    (
        problem(
            "producer-snapshot",
            "/d/t-0/50.snapshot",
            case="not-below",
            entry=0,
            offset=60,
            producer_id=7,
            snapshot_offset=50,
        ),
        "producer 7: last offset 60 is not below the snapshot's offset 50",
    ),
    (
        problem(
            "producer-snapshot",
            "/d/t-0/50.snapshot",
            case="mismatch",
            entry=0,
            offset=30,
            producer_id=7,
            producer_epoch=0,
            last_sequence=4,
            log_producer_id=8,
            log_producer_epoch=1,
            log_last_sequence=5,
        ),
        "producer 7 epoch 0 last sequence 4 at offset 30: the log's batch ending there has producer 8 epoch 1 last "
        "sequence 5",
    ),
    (
        problem(
            "txn-index-mismatch",
            "/d/t-0/0.txnindex",
            34,
            case="entry",
            entry=1,
            offset=20,
            aborted=AbortedTxn(0, 7, 10, 20, 21),
            marker_producer_id=None,
        ),
        "AbortedTxn(version=0, producerId=7, firstOffset=10, lastOffset=20, lastStableOffset=21): no ABORT marker "
        "of producer 7 at offset 20 in the log",
    ),
    (
        problem(
            "txn-index-mismatch",
            "/d/t-0/0.txnindex",
            34,
            case="entry",
            entry=1,
            offset=20,
            aborted=AbortedTxn(0, 7, 10, 20, 21),
            marker_producer_id=8,
        ),
        "AbortedTxn(version=0, producerId=7, firstOffset=10, lastOffset=20, lastStableOffset=21): no ABORT marker "
        "of producer 7 at offset 20 in the log (the marker there is producer 8's)",
    ),
    (
        problem("txn-index-mismatch", "/d/t-0/0.txnindex", case="marker", offset=20, producer_id=7),
        "the ABORT marker of producer 7 at offset 20 has no .txnindex entry, and its transaction wrote to this "
        "partition (consumers reading committed data would see the aborted records)",
    ),
    (
        problem(
            "checkpoint",
            "/d/replication-offset-checkpoint",
            offset=50,
            topic="t",
            partition=0,
            checkpoint="replication-offset-checkpoint",
            log_end_offset=40,
        ),
        "t-0: high watermark 50 is beyond the log end offset 40",
    ),
    (
        problem("leader-epoch", "/d/t-0/leader-epoch-checkpoint", 2, message="Malformed line"),
        "Malformed line",
    ),
    (
        problem(
            "leader-epoch",
            "/d/t-0/leader-epoch-checkpoint",
            case="order",
            entry=2,
            offset=10,
            epoch=3,
            previous_epoch=4,
            previous_start_offset=5,
        ),
        "entry 2 (epoch 3, start offset 10) does not follow entry 1 (epoch 4, start offset 5): epochs must increase "
        "and start offsets never decrease",
    ),
    (
        problem(
            "leader-epoch",
            "/d/t-0/leader-epoch-checkpoint",
            case="beyond-end",
            entry=2,
            offset=50,
            epoch=3,
            log_end_offset=40,
        ),
        "epoch 3 starts at offset 50, beyond the log end offset 40",
    ),
    (
        problem("leader-epoch", "/d/t-0/leader-epoch-checkpoint", case="unlisted", offset=10, epoch=3),
        "batches carry leader epoch 3 (from offset 10), which the file does not list",
    ),
    (
        problem(
            "leader-epoch", "/d/t-0/leader-epoch-checkpoint", case="late", offset=10, epoch=3, start_offset=12
        ),
        "epoch 3 starts at offset 12, but a batch of that epoch is at offset 10",
    ),
    (
        problem("kraft-snapshot", "/d/m-0/x.checkpoint", 0, case="crc", offset=0, stored=1, computed=2),
        "stored CRC 1, computed 2",
    ),
    (
        problem("kraft-snapshot", "/d/m-0/x.checkpoint", 90, case="torn", bytes=5),
        "the last 5 bytes are not a whole batch (a torn or truncated file)",
    ),
    (problem("kraft-snapshot", "/d/m-0/x.checkpoint", 0, message="Record is corrupt"), "Record is corrupt"),
    (
        problem(
            "bootstrap-checkpoint", "/d/bootstrap.checkpoint", 0, case="crc", offset=0, stored=1, computed=2
        ),
        "stored CRC 1, computed 2",
    ),
    (
        problem(
            "absent-partition",
            "/d/recovery-point-offset-checkpoint",
            offset=50,
            topic="t",
            partition=0,
            checkpoint="recovery-point-offset-checkpoint",
        ),
        "t-0: recovery point 50, but the log directory has no t-0 directory (a broker ignores the entry: its data "
        "are gone)",
    ),
    *REMOTE_CASES,
]

#: The notes (not problems), made as the analyses make them.
NOTES: list[tuple[Problem, str]] = [
    (
        Problem(
            ACTIVE_SEGMENT, ZERO_TAIL.file, ZERO_TAIL.position, (("about", "zero-tail"), *ZERO_TAIL.data)
        ),
        f"entries 7..9 (3 slots, bytes 84..119) are zero-filled: preallocated, not written yet; {ACTIVE}",
    ),
    (
        Problem(ACTIVE_SEGMENT, SANITY.file, SANITY.position, (("about", "sanity-check"), *SANITY.data)),
        f"Corrupt time index found (the sanity check reads the last slot, a preallocated zero one); {ACTIVE}",
    ),
    (
        problem("newer-record", LOG, 918, offset=5, count=1, message="MetadataRecordType 99"),
        "1 record not decoded: MetadataRecordType 99 (first at offset 5)",
    ),
    (
        problem("newer-record", LOG, 918, offset=5, count=2, message="MetadataRecordType 99"),
        "2 records not decoded: MetadataRecordType 99 (first at offset 5)",
    ),
]


P = "/d/t-0"
#: What could not be checked, and why (the ``<why>`` of ``<path>: not checked: <why>``).
UNCHECKED: list[tuple[Unchecked, str]] = [
    (
        unchecked("some-segments", P),
        "only some segments were given: the checks across segments and of the partition's state files were not "
        "made",
    ),
    (
        unchecked("pending-deletion", P),
        "pending deletion (a -delete directory: a broker loads it only to delete it): its leader-epoch-checkpoint "
        "was not compared with the batches",
    ),
    (
        unchecked("gaps-not-judged", P, count=4, gaps=((1, 2), (4, 5), (7, 8)), policy=None, compacted=False),
        "4 offset gaps (1..2, 4..5, 7..8, ...) not judged: the topic's cleanup.policy is not known (compaction "
        "leaves gaps); --gaps reports them",
    ),
    (
        unchecked("gaps-not-judged", P, count=1, gaps=((1, 2),), policy="compact", compacted=True),
        "1 offset gaps (1..2) not judged: the topic is compacted (cleanup.policy=compact); --gaps reports them",
    ),
    (
        unchecked("gaps-not-judged", P, count=3, gaps=((1, 2), (4, 5), (7, 8)), policy=None, compacted=True),
        "3 offset gaps (1..2, 4..5, 7..8) not judged: the log cleaner has been here (compaction leaves gaps); "
        "--gaps reports them",
    ),
    (
        unchecked("no-last-log", P, base_offset=358),
        "the last segment (00000000000000000358.log) has index files but no .log: the log end offset is not known, "
        "so checkpoints and epochs were not compared with it",
    ),
    (
        unchecked("unread-logs", P, count=2),
        "2 .log file(s) could not be read: the log end offset is not known, so checkpoints, producer snapshots and "
        "epochs were not compared with it",
    ),
    (
        unchecked("snapshot-batches-gone", P, count=3, log_start=None),
        "3 producer-snapshot entries name batches no longer in the log (removed by retention or compaction)",
    ),
    (
        unchecked("snapshot-batches-gone", P, count=3, log_start=40),
        "3 producer-snapshot entries name batches no longer in the log (removed by retention or compaction); the "
        "log starts at offset 40",
    ),
    (
        unchecked("txn-markers-gone", P, count=2),
        "2 .txnindex entries name ABORT markers outside the segments read (deleted by retention, or their .log is "
        "missing)",
    ),
    (
        unchecked("aborts-not-judged", P, count=1, log_start=40),
        "1 ABORT marker without a .txnindex entry not judged: no batch of the producer is left before it (the log "
        "starts at offset 40), so whether its transaction wrote here, and needed an entry, is not known",
    ),
    (
        unchecked("aborts-not-judged", P, count=2, log_start=40),
        "2 ABORT markers without a .txnindex entry not judged: no batch of the producer is left before it (the log "
        "starts at offset 40), so whether its transaction wrote here, and needed an entry, is not known",
    ),
    (
        unchecked("no-log-dir", P),
        "no log directory above it (no meta.properties or checkpoint files): the recovery point, high watermark "
        "and log start offset were not compared with the log",
    ),
    (
        unchecked("no-partition-name", P),
        "its name is not <topic>-<partition>: its log directory's checkpoints do not name it",
    ),
    (
        unchecked(
            "stale-checkpoint-entries",
            "/d",
            count=1,
            entries=(("t", 0, "replication-offset-checkpoint", 50),),
        ),
        "1 checkpoint entry for partitions without a directory not judged: t-0 (high watermark 50, "
        "replication-offset-checkpoint); Kafka rewrites the high watermark and cleaner checkpoints only while the "
        "log directory holds partitions (this one holds none), so an entry there may outlive a deleted partition",
    ),
    (
        unchecked(
            "stale-checkpoint-entries",
            "/d",
            count=4,
            entries=(
                ("t", 0, "replication-offset-checkpoint", 50),
                ("t", 1, "replication-offset-checkpoint", 7),
                ("u", 0, "cleaner-offset-checkpoint", 3),
            ),
        ),
        "4 checkpoint entries for partitions without a directory not judged: t-0 (high watermark 50, "
        "replication-offset-checkpoint), t-1 (high watermark 7, replication-offset-checkpoint), u-0 (cleaner "
        "checkpoint 3, cleaner-offset-checkpoint), ...; Kafka rewrites the high watermark and cleaner checkpoints "
        "only while the log directory holds partitions (this one holds none), so an entry there may outlive a "
        "deleted partition",
    ),
]


def test_every_kind_has_its_words() -> None:
    kinds = {x.kind for x, _ in CASES}
    assert kinds == set(INDEX_KINDS) | set(LOG_KINDS) | set(REMOTE_PROBLEM_KINDS)
    assert {x.kind for x, _ in NOTES} == {ACTIVE_SEGMENT, "newer-record"}
    assert {u.kind for u, _ in UNCHECKED} == UNCHECKED_KINDS


class _Lines:
    def __init__(self) -> None:
        self.text = ""

    def write(self, text: str) -> None:
        self.text += text


@pytest.mark.parametrize(("fact", "words"), UNCHECKED, ids=lambda v: v.kind if isinstance(v, Problem) else "")
def test_what_was_not_checked_renders_as_before(fact: Unchecked, words: str) -> None:
    assert unchecked_message(fact) == words
    text, json_out = _Lines(), _Lines()
    TextSink(text).unchecked(fact)
    JsonSink(json_out).unchecked(fact)
    assert text.text == f"{fact.file}: not checked: {words}\n"
    assert json.loads(json_out.text) == {"type": "unchecked", "file": fact.file, "message": words}


@pytest.mark.parametrize(
    ("fact", "words"), CASES + NOTES, ids=lambda v: v.kind if isinstance(v, Problem) else ""
)
def test_a_fact_renders_as_before_and_round_trips_through_json(fact: Problem, words: str) -> None:
    assert verify_message(fact) == words
    note = fact.kind in (ACTIVE_SEGMENT, "newer-record")
    text = note_line(fact) if note else problem_line(fact)
    obj = json.loads(problem_json(fact, "note" if note else "problem"))
    assert obj == {
        "type": "note" if note else "problem",
        "kind": fact.kind,
        "file": fact.file,
        "entry": fact.get("entry"),
        "position": fact.position,
        "offset": fact.get("offset"),
        "message": words,
    }
    # the line names the same place and says the same words
    entry, position = obj["entry"], obj["position"]
    where = [obj["file"]]
    if entry is not None:
        where.append(f"entry {entry}" + ("" if position is None else f" (byte {position})"))
    elif position is not None:
        where.append(f"byte {position}")
    assert text == ": ".join([*where, ("note: " if note else "") + obj["kind"], words]) + "\n"


@pytest.mark.parametrize(
    "module",
    [
        "kdump/analysis/index_verification.py",
        "kdump/analysis/log_verification.py",
        "kdump/analysis/tiered.py",
    ],
)
def test_the_checks_format_nothing(module: str) -> None:
    """Not one f-string in the checks of verify: what they find is values."""
    tree = ast.parse((Path(__file__).resolve().parents[1] / module).read_text())
    assert [n.lineno for n in ast.walk(tree) if isinstance(n, ast.JoinedStr)] == []


#: Where verify's problems are found: no sentence is made there.
ANALYSES = [
    "kdump/analysis/index_verification.py",
    "kdump/analysis/log_verification.py",
    "kdump/analysis/tiered.py",
    "kdump/analysis/remote_log_metadata.py",
    "kdump/commands/tiered.py",
    "kdump/commands/remote_tier.py",
    "kdump/commands/verify.py",
    "kdump/commands/verify_index.py",
    "kdump/storage/aiven_segment.py",
]


@pytest.mark.parametrize("module", ANALYSES)
def test_the_analyses_make_no_problem_words(module: str) -> None:
    """Every ``problem(...)``/``Problem(...)`` (and ``_problem(...)``, a checker's) there is given values, never a sentence: no f-string, no literal
    with a space, in its arguments (a kind, a ``case`` and data names are words without spaces)."""
    tree = ast.parse((Path(__file__).resolve().parents[1] / module).read_text())
    made = 0
    for node in ast.walk(tree):
        if not isinstance(node, ast.Call):
            continue
        name = node.func.id if isinstance(node.func, ast.Name) else getattr(node.func, "attr", None)
        if name not in ("problem", "Problem", "_problem", "MetadataProblem", "IndexFault"):
            continue
        made += 1
        for arg in [*node.args, *(k.value for k in node.keywords)]:
            for sub in ast.walk(arg):
                assert not isinstance(sub, ast.JoinedStr), f"{module}:{sub.lineno}: an f-string in a problem"
                if isinstance(sub, ast.Constant) and isinstance(sub.value, str):
                    assert " " not in sub.value, f"{module}:{sub.lineno}: {sub.value!r} in a problem"
    assert made
