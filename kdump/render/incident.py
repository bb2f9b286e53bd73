"""``kdump report``'s facts as JSON objects (``--json``, and the data each section of the HTML page carries):
one ``reportPartition``, ``reportGroups``, ``reportCoordinator`` per unit, ``reportOverview`` last.  The other
commands' facts inside them are those commands' own objects (``partition`` of ``ls``, ``txnPartition``,
``retentionPartition``, verify's ``summary``), made by their own functions."""

from __future__ import annotations

import os
from typing import Any

from kdump.analysis.compression_sample import CompressionSample
from kdump.analysis.log_verification import Unchecked
from kdump.analysis.timeline import Timeline
from kdump.facts.incident import (
    CoordinatorReport,
    Finding,
    GroupsReport,
    Overview,
    PartitionReport,
    ReportUnit,
)
from kdump.render import log_summary
from kdump.render import retention as retention_render
from kdump.render import txn as txn_render
from kdump.render.coordinator import member_ids, transaction_object
from kdump.render.json_lines import head, line
from kdump.render.problem_text import details, sentences, unchecked_message, verify_message
from kdump.render.verify_report import summary_object
from kdump.storage import locations
from kdump.storage.naming import parse_partition_dir


def finding_message(f: Finding) -> str:
    """A finding's words: a problem's (as ``kdump verify`` says it), or why something was not checked."""
    return unchecked_message(f.fact) if isinstance(f.fact, Unchecked) else verify_message(f.fact)


def _finding(f: Finding) -> dict[str, Any]:
    return {
        "file": f.path,
        "kind": f.kind,
        "message": finding_message(f),
        "position": f.position,
        "offset": f.offset,
    }


def timeline_object(t: Timeline) -> dict[str, Any]:
    return {
        "batchesPerBucket": t.per_bucket,
        "buckets": [
            {
                "firstOffset": b.first_offset,
                "lastOffset": b.last_offset,
                "minTimestamp": b.min_timestamp,
                "maxTimestamp": b.max_timestamp,
                "batches": b.batches,
                "records": b.records,
                "bytes": b.bytes,
                "maxBatchBytes": b.max_batch_bytes,
            }
            for b in t.buckets
        ],
        "offsetJumps": t.offset_jumps,
        "offsetsSkipped": t.offsets_skipped,
    }


def partition_object(r: PartitionReport) -> dict[str, Any]:
    s = r.summary
    t = r.timeline
    log_dir = os.path.dirname(locations.abspath(s.directory))
    return head(
        "reportPartition",
        directory=s.directory,
        topic=s.topic,
        partition=s.partition,
        summary=log_summary.summary_object(s, log_dir=log_dir, broker_id=r.broker_id),
        timeline=timeline_object(t),
        segmentSpans=[
            {
                "baseOffset": x.base_offset,
                "firstOffset": x.first_offset,
                "firstTimestamp": x.first_timestamp,
                "largestTimestamp": x.largest_timestamp,
                "bytes": x.bytes,
            }
            for x in t.segments
        ],
        epochChanges=[
            {"epoch": e.epoch, "offset": e.offset, "timestamp": e.timestamp} for e in t.epoch_changes
        ],
        epochChangesTotal=t.epoch_changes_total,
        epochCheckpoint=None
        if r.epoch_checkpoint is None
        else [{"epoch": e.epoch, "startOffset": e.start_offset} for e in r.epoch_checkpoint],
        silences=[
            {
                "start": g.start,
                "end": g.end,
                "durationMs": g.duration,
                "afterOffset": g.after_offset,
                "beforeOffset": g.before_offset,
            }
            for g in t.silences
        ],
        producers=[
            {
                "producerId": x.producer_id,
                "producerEpoch": x.epoch,
                "batches": x.batches,
                "records": x.records,
                "firstOffset": x.first_offset,
                "lastOffset": x.last_offset,
                "firstTimestamp": x.first_timestamp,
                "lastTimestamp": x.last_timestamp,
                "transactional": x.transactional,
                "markers": x.markers,
            }
            for x in sorted(t.producers.values(), key=lambda x: x.producer_id)
        ],
        producersNotFollowed=t.producers_over,
        problemKinds=dict(sorted(r.kinds.items())),
        findings=[_finding(f) for f in r.findings],
        txn=None if r.txn is None else head("txnPartition", **txn_render.partition_object(r.txn)),
        retention=None
        if r.retention is None
        else head("retentionPartition", **retention_render.partition_object(r.retention)),
        metadataSnapshots=[
            {"endOffset": k.end_offset, "epoch": k.epoch, "bytes": k.bytes} for k in r.kraft_snapshots
        ],
        quorumState=None
        if r.quorum_state is None
        else {
            "leaderId": r.quorum_state.leader_id,
            "leaderEpoch": r.quorum_state.leader_epoch,
            "votedId": r.quorum_state.voted_id,
            "currentVoters": None
            if r.quorum_state.current_voters is None
            else list(r.quorum_state.current_voters),
        },
        compression=None if r.compression is None else compression_object(r.compression),
        problemMessages=sentences(r.problems),
        problemDetails=details(r.problems),
    )


def compression_object(c: CompressionSample) -> dict[str, Any]:
    return {
        "compressedBatches": c.compressed_batches,
        "compressedBytes": c.compressed_bytes,
        "sampledBatches": c.sampled_batches,
        "sampledBytes": c.sampled_bytes,
        "uncompressedBytes": c.uncompressed_bytes,
        "failed": c.failed,
        "ratio": None if c.ratio is None else round(c.ratio, 4),
        "exact": c.exact,
    }


def _topic_partition(directory: str) -> tuple[str | None, int | None]:
    name = parse_partition_dir(os.path.basename(os.path.normpath(directory)))
    return (None, None) if name is None else (name.topic, name.partition)


def groups_object(r: GroupsReport) -> dict[str, Any]:
    topic, partition = _topic_partition(r.directory)
    groups = []
    for g in r.groups:
        m = g.metadata or {}
        groups.append(
            {
                "group": g.group,
                "protocolType": m.get("protocolType"),
                "generation": m.get("generation"),
                "members": member_ids(m),
                "pendingTransactionalOffsets": g.pending_transactional,
                "offsets": [
                    {
                        "topic": x.topic,
                        "partition": x.partition,
                        "offset": x.offset,
                        "commitTimestamp": x.commit_timestamp,
                        "logEndOffset": x.log_end_offset,
                        "lag": x.lag,
                    }
                    for x in r.lags.get(g.group, [])
                ],
            }
        )
    return head(
        "reportGroups",
        directory=r.directory,
        topic=topic,
        partition=partition,
        groups=groups,
        problemMessages=sentences(r.problems),
        problemDetails=details(r.problems),
    )


def coordinator_object(r: CoordinatorReport) -> dict[str, Any]:
    topic, partition = _topic_partition(r.directory)
    return head(
        "reportCoordinator",
        directory=r.directory,
        topic=topic,
        partition=partition,
        transactions=[transaction_object(x) for x in r.transactions],
        problemMessages=sentences(r.problems),
        problemDetails=details(r.problems),
    )


def overview_object(r: Overview) -> dict[str, Any]:
    return head(
        "reportOverview",
        now=r.now,
        partitions=r.partitions,
        logDirs=[{"logDir": d.path, "brokerId": d.broker_id} for d in r.log_dirs],
        verify=summary_object(r.verify),
        logDirFindings=[_finding(f) for f in r.log_dir_findings],
        notChecked=[_finding(f) for f in r.unchecked],
        notCheckedTotal=r.unchecked_total,
        crcChecked=r.crc_checked,
    )


def unit_object(unit: ReportUnit) -> dict[str, Any]:
    if isinstance(unit, PartitionReport):
        return partition_object(unit)
    if isinstance(unit, GroupsReport):
        return groups_object(unit)
    if isinstance(unit, CoordinatorReport):
        return coordinator_object(unit)
    return overview_object(unit)


def json_lines(units: list[ReportUnit]) -> str:
    return "".join(line(unit_object(u)) for u in units)
