"""A tiered partition (KIP-405) as one log: its remote segments (what ``__remote_log_metadata`` says was copied,
:mod:`kdump.analysis.remote_log_metadata`) and its local ones, and the checks of the remote part against the
objects of Kafka's ``RemoteLogSegmentFileset`` layout (:mod:`kdump.storage.remote_log_segment`).

The checks, each a :class:`TieredProblem` naming the object or record:

* ``missing-object``: a copied segment (``COPY_SEGMENT_FINISHED``) lacks one of its required files (``.log``,
  ``.index``, ``.timeindex``, ``.leader_epoch_checkpoint``, ``.snapshot``; ``.txnindex`` is optional);
* ``size``: its ``.log`` is not the ``segmentSizeInBytes`` the metadata gives;
* ``unfinished``: a segment still in ``COPY_SEGMENT_STARTED`` or ``DELETE_SEGMENT_STARTED`` (a copy or deletion
  that did not finish, unless it is under way now);
* ``orphaned-object``: files of a segment id the metadata does not know (a failed copy's leftovers, or a
  segment whose deletion finished in the metadata but not in the store);
* ``gap`` / ``overlap``: between consecutive copied segments, and between the remote log's end and the local
  log's start (a local segment also in remote storage is normal: local retention has not deleted it yet);
* ``offset-range``, ``leader-epochs``, ``log`` (``deep``: the remote ``.log`` read): its first and last offsets,
  the leader epochs of its batches (``segmentLeaderEpochs``: each epoch's first offset) and its bytes against the
  metadata;
* ``metadata``: a metadata record Kafka's cache refuses (an invalid state transition, an update of a segment
  never added).
"""

from __future__ import annotations

import os
import uuid
from collections.abc import Callable
from dataclasses import dataclass, field

from kdump.analysis.remote_log_metadata import (
    COPY_SEGMENT_FINISHED,
    COPY_SEGMENT_STARTED,
    DELETE_SEGMENT_STARTED,
    MetadataProblem,
    RemotePartition,
    RemoteSegment,
)
from kdump.errors import KdumpError
from kdump.storage import aiven_segment as aiven
from kdump.storage import locations, naming
from kdump.storage import remote_log_segment as fileset
from kdump.storage.byte_source import read_all, source_of
from kdump.storage.file_records import FileRecords
from kdump.storage.kafka_uuid import encode_uuid
from kdump.storage.local_log import LocalLog
from kdump.storage.remote_layout import SUFFIXES as TEMPLATE_SUFFIXES
from kdump.storage.remote_layout import Layout, as_layout


@dataclass(frozen=True)
class TieredProblem:
    path: str
    kind: str
    message: str


@dataclass(frozen=True)
class TieredSegment:
    """One segment of the partition's one log: remote (by the metadata) or local."""

    tier: str  # "remote" or "local"
    base_offset: int
    #: The last offset (remote: the metadata's end offset; local: None, not read).
    end_offset: int | None
    size: int | None
    #: The remote segment's state, or "local".
    state: str
    segment_id: str | None
    log: str
    #: A local segment whose offsets are also in remote storage.
    also_remote: bool = False
    #: A remote segment's objects by suffix (``.log`` first), where the layout puts them.
    objects: dict[str, str] = field(default_factory=dict, compare=False, hash=False)


@dataclass
class TieredFacts:
    """What one tiered partition holds, and what is wrong with it."""

    directory: str
    topic: str | None
    partition: int | None
    topic_id: str | None
    remote_dir: str | None
    segments: list[TieredSegment] = field(default_factory=list)
    problems: list[TieredProblem] = field(default_factory=list)
    #: The partition's delete state in the metadata (``RemotePartitionDeleteState``), if any.
    delete_state: str | None = None

    @property
    def remote_end_offset(self) -> int | None:
        ends = [s.end_offset for s in self.segments if s.tier == "remote" and s.end_offset is not None]
        return max(ends) if ends else None


def check_tiered(
    facts: TieredFacts,
    remote: RemotePartition | None,
    remote_names: dict[str, int] | None,
    local: LocalLog | None,
    metadata_problems: list[MetadataProblem] = (),  # type: ignore[assignment]
    *,
    deep: bool = False,
    layout: str | Layout = "kafka",
    keyring: aiven.Keyring | None = None,
) -> TieredFacts:
    """Fill ``facts`` with the one log and its problems.  ``remote_names``: the objects of the remote partition
    directory (name -> size; None when it could not be listed); ``local``: the local partition directory;
    ``keyring``: the private keys encrypted segments of Aiven's layout are read with."""
    problems = facts.problems
    layout = as_layout(layout)
    for p in metadata_problems:
        problems.append(TieredProblem(p.path, "metadata", f"offset {p.offset}: {p.message}"))
    finished: list[RemoteSegment] = []
    known_ids: set[str] = set()
    if remote is not None:
        facts.delete_state = remote.delete_state
        for s in remote.by_start_offset():
            sid = encode_uuid(s.segment_id.bytes)
            known_ids.add(sid)
            objects = _objects(layout, facts.remote_dir, s, problems)
            log_path = objects[naming.LOG_FILE_SUFFIX]
            facts.segments.append(
                TieredSegment(
                    "remote",
                    s.start_offset,
                    s.end_offset,
                    s.size_in_bytes,
                    s.state,
                    sid,
                    log_path,
                    objects=objects,
                )
            )
            if s.state in (COPY_SEGMENT_STARTED, DELETE_SEGMENT_STARTED):
                problems.append(
                    TieredProblem(
                        log_path,
                        "unfinished",
                        f"segment {sid} (offsets {s.start_offset}-{s.end_offset}) is still {s.state}: "
                        f"{'a copy' if s.state == COPY_SEGMENT_STARTED else 'a deletion'} that did not finish "
                        "(or is under way now)",
                    )
                )
            if s.state != COPY_SEGMENT_FINISHED:
                continue
            finished.append(s)
            if remote_names is None and layout.kind != "template":
                continue
            # a template's plugin may keep the indexes elsewhere, or not at all: only its .log is required
            required = objects if layout.kind != "template" else {naming.LOG_FILE_SUFFIX: log_path}
            sizes = {suffix: _size(path, facts.remote_dir, remote_names) for suffix, path in required.items()}
            for suffix, path in required.items():
                if sizes[suffix] is None and suffix != naming.TXN_INDEX_FILE_SUFFIX:
                    problems.append(
                        TieredProblem(
                            path,
                            "missing-object",
                            f"segment {sid} (offsets {s.start_offset}-{s.end_offset}) was copied "
                            f"(COPY_SEGMENT_FINISHED) but its {suffix} is not in remote storage",
                        )
                    )
            size = sizes[naming.LOG_FILE_SUFFIX]
            if layout.kind == "aiven":
                if size is not None and sizes[aiven.MANIFEST_SUFFIX] is not None:
                    _check_aiven(objects, sizes, s, problems, deep, keyring)
                continue
            if size is not None and size != s.size_in_bytes:
                problems.append(
                    TieredProblem(
                        log_path,
                        "size",
                        f"{size} bytes, but the metadata says segmentSizeInBytes {s.size_in_bytes}",
                    )
                )
            if deep and size is not None:
                _check_log(log_path, s, problems)
    if remote_names is not None and layout.kind != "template":  # a template's objects cannot be told apart
        orphans: dict[str, list[str]] = {}
        for name in sorted(remote_names):
            parsed = (
                fileset.parse_fileset_name(name) if layout.kind == "kafka" else aiven.parse_object_name(name)
            )
            if parsed is None:
                problems.append(
                    TieredProblem(_join(facts.remote_dir, name), "orphaned-object", "not a segment file")
                )
            elif parsed.segment_id not in known_ids:
                orphans.setdefault(parsed.segment_id, []).append(name)
        for sid, found in orphans.items():
            problems.append(
                TieredProblem(
                    _join(facts.remote_dir, found[0]),
                    "orphaned-object",
                    f"{len(found)} file(s) of segment {sid}, which the metadata does not know (a failed copy's "
                    "leftovers, or a deletion that finished in the metadata but not in the store)",
                )
            )
    previous: RemoteSegment | None = None
    for s in finished:
        if previous is not None:
            if s.start_offset > previous.end_offset + 1:
                problems.append(
                    TieredProblem(
                        _objects(layout, facts.remote_dir, s)[naming.LOG_FILE_SUFFIX],
                        "gap",
                        f"offsets {previous.end_offset + 1}-{s.start_offset - 1} are in no remote segment "
                        f"(between {encode_uuid(previous.segment_id.bytes)} and {encode_uuid(s.segment_id.bytes)})",
                    )
                )
            elif s.start_offset <= previous.end_offset:
                problems.append(
                    TieredProblem(
                        _objects(layout, facts.remote_dir, s)[naming.LOG_FILE_SUFFIX],
                        "overlap",
                        f"offsets {s.start_offset}-{min(s.end_offset, previous.end_offset)} are in two remote "
                        f"segments ({encode_uuid(previous.segment_id.bytes)} and "
                        f"{encode_uuid(s.segment_id.bytes)})",
                    )
                )
        if previous is None or s.end_offset > previous.end_offset:
            previous = s
    remote_end = previous.end_offset if previous is not None else None
    if local is not None:
        for segment in local.log_segments:
            facts.segments.append(
                TieredSegment(
                    "local",
                    segment.base_offset,
                    None,
                    segment.log_size,
                    "local",
                    None,
                    segment.log_path,
                    also_remote=remote_end is not None and segment.base_offset <= remote_end,
                )
            )
        bases = local.log_base_offsets
        if remote_end is not None and bases and bases[0] > remote_end + 1:
            problems.append(
                TieredProblem(
                    local.directory,
                    "gap",
                    f"offsets {remote_end + 1}-{bases[0] - 1} are neither in remote storage (it ends at "
                    f"{remote_end}) nor local (it starts at {bases[0]})",
                )
            )
    facts.segments.sort(key=lambda s: (s.base_offset, s.tier != "remote"))
    return facts


def _objects(
    layout: Layout, remote_dir: str | None, s: RemoteSegment, problems: list[TieredProblem] | None = None
) -> dict[str, str]:
    """Where a remote segment's objects are in ``layout``, by suffix (the ``.log`` first).  Kafka's and Aiven's
    are in the partition's remote directory ``remote_dir``, unless the segment's custom metadata names another
    prefix or key for Aiven's ``.log`` and ``.indexes`` (a custom metadata that cannot be read is a problem,
    and the default keys are used); a template's are under the remote root (``remote_dir``)."""
    if layout.kind == "template":
        assert layout.template is not None
        return {
            suffix: _join(
                remote_dir,
                layout.template.key(
                    topic=s.topic,
                    partition=s.partition,
                    topic_id=s.topic_id,
                    start_offset=s.start_offset,
                    end_offset=s.end_offset,
                    segment_id=s.segment_id,
                    broker_id=s.broker_id,
                    suffix=suffix,
                ),
            )
            for suffix in TEMPLATE_SUFFIXES
        }
    if layout.kind == "aiven":
        objects = {
            suffix: _join(remote_dir, aiven.object_name(s.start_offset, s.segment_id.bytes, suffix))
            for suffix in aiven.SUFFIXES
        }
        try:
            custom = aiven.parse_custom_metadata(s.custom_metadata)
        except ValueError as e:
            if problems is not None:
                problems.append(
                    TieredProblem(
                        objects[naming.LOG_FILE_SUFFIX],
                        "metadata",
                        f"segment {encode_uuid(s.segment_id.bytes)}: its custom metadata is not the plugin's "
                        f"({e}); the default object keys are used",
                    )
                )
            custom = {}
        if remote_dir is not None and (aiven.OBJECT_PREFIX in custom or aiven.OBJECT_KEY in custom):
            part = layout.aiven_prefix + aiven.partition_prefix(s.topic, s.topic_id.bytes, s.partition)
            root = remote_dir[: -len(part)] if remote_dir.endswith(part) else remote_dir
            main = aiven.main_path(s.topic, s.topic_id.bytes, s.partition, s.start_offset, s.segment_id.bytes)
            for suffix in (
                naming.LOG_FILE_SUFFIX,
                aiven.INDEXES_SUFFIX,
            ):  # KafkaRemoteStorageManager.objectKey
                objects[suffix] = root + aiven.object_key(layout.aiven_prefix, main, suffix, custom)
        return objects
    return {
        suffix: _join(remote_dir, fileset.fileset_name(s.start_offset, s.segment_id, suffix))
        for suffix in fileset.SUFFIXES
    }


def _size(path: str, remote_dir: str | None, listed: dict[str, int] | None) -> int | None:
    """The size of the object at ``path`` (None when there is none): from the listing of ``remote_dir`` when it
    is there, else asked of the store (a template's keys, an overridden key)."""
    directory, _, name = path.rpartition("/")
    if listed is not None and remote_dir is not None and directory == remote_dir.rstrip("/"):
        return listed.get(name)
    try:
        return locations.getsize(path)
    except OSError:
        return None


def _check_aiven(
    objects: dict[str, str],
    sizes: dict[str, int | None],
    s: RemoteSegment,
    problems: list[TieredProblem],
    deep: bool,
    keyring: aiven.Keyring | None,
) -> None:
    """An Aiven segment: its manifest read, the ``.log`` object's size against the chunk index and the
    ``.indexes`` object's against the indexes' positions, the original size against the metadata, and with
    ``deep`` the ``.log`` read back through its chunks and every index out of ``.indexes``."""
    manifest_path, log_path = objects[aiven.MANIFEST_SUFFIX], objects[naming.LOG_FILE_SUFFIX]
    size = sizes[naming.LOG_FILE_SUFFIX]
    try:
        manifest = aiven.parse_manifest(read_all(manifest_path), manifest_path, keyring)
    except KdumpError as e:
        problems.append(TieredProblem(manifest_path, "manifest", e.message))
        return
    except OSError as e:
        problems.append(TieredProblem(manifest_path, "unreadable", f"cannot read it: {e.strerror or e}"))
        return
    if manifest.transformed_size != size:
        problems.append(
            TieredProblem(
                log_path,
                "size",
                f"{size} bytes, but its manifest's {len(manifest.chunks)} chunks make {manifest.transformed_size}",
            )
        )
        return
    indexes_path, indexes_size = objects[aiven.INDEXES_SUFFIX], sizes[aiven.INDEXES_SUFFIX]
    if indexes_size is not None and indexes_size != aiven.indexes_size(manifest):
        problems.append(
            TieredProblem(
                indexes_path,
                "size",
                f"{indexes_size} bytes, but its manifest's indexes end at byte {aiven.indexes_size(manifest)}",
            )
        )
    if manifest.original_file_size != s.size_in_bytes:
        problems.append(
            TieredProblem(
                manifest_path,
                "size",
                f"originalFileSize {manifest.original_file_size}, but the metadata says segmentSizeInBytes "
                f"{s.size_in_bytes}",
            )
        )
    if deep:
        try:
            source = aiven.chunked_log(manifest, source_of(log_path))
        except KdumpError as e:
            problems.append(TieredProblem(log_path, "manifest", e.message))
            return
        _check_log(log_path, s, problems, lambda: FileRecords.open(source))
        if indexes_size is not None:
            for message in aiven.check_indexes(manifest, source_of(indexes_path)):
                problems.append(TieredProblem(indexes_path, "indexes", message))


def _check_log(
    log_path: str,
    s: RemoteSegment,
    problems: list[TieredProblem],
    open_records: Callable[[], FileRecords] | None = None,
) -> None:
    """The remote ``.log`` against its metadata: offsets, leader epochs, bytes (one ranged pass)."""
    first: int | None = None
    last: int | None = None
    epochs: list[tuple[int, int]] = []
    valid = 0
    try:
        with FileRecords(log_path) if open_records is None else open_records() as records:
            for batch in records.batches():
                if first is None:
                    first = batch.base_offset
                last = batch.last_offset
                epoch = batch.partition_leader_epoch
                if not epochs or epochs[-1][0] != epoch:
                    epochs.append((epoch, batch.base_offset))
                valid = batch.position + batch.size_in_bytes
            invalid = records.invalid_bytes(valid)
    except KdumpError as e:
        problems.append(TieredProblem(log_path, "log", e.describe()))
        return
    if invalid:
        problems.append(TieredProblem(log_path, "log", f"the last {invalid} bytes are not a whole batch"))
    if (first, last) != (s.start_offset, s.end_offset):
        problems.append(
            TieredProblem(
                log_path,
                "offset-range",
                f"its batches hold offsets {first}-{last}, the metadata says {s.start_offset}-{s.end_offset}",
            )
        )
    if epochs != s.leader_epochs:
        problems.append(
            TieredProblem(
                log_path,
                "leader-epochs",
                f"its batches' leader epochs (epoch@first offset) are {_epochs(epochs)}, the metadata's "
                f"segmentLeaderEpochs {_epochs(s.leader_epochs)}",
            )
        )


def _epochs(pairs: list[tuple[int, int]]) -> str:
    return ", ".join(f"{e}@{o}" for e, o in pairs) or "none"


def _join(directory: str | None, name: str) -> str:
    return name if directory is None else directory.rstrip("/") + "/" + name


def remote_partition_dirs(
    root: str, topic: str, partition: int, topic_id: uuid.UUID, layout_name: str | Layout = "kafka"
) -> list[str]:
    """Where the partition's directory may be under a remote root, most likely first.  Kafka's layout: ``root``
    itself when it is that directory, else ``root/<topic>-<partition>-<topic id>`` or
    ``root/kafka-tiered-storage/...`` (the root given as ``LocalTieredStorage``'s ``dir``).  Aiven's: ``root``
    (the plugin's key prefix) ``/<topic>-<topic id>/<partition>``."""
    layout = as_layout(layout_name)
    if layout.kind == "template":
        return [root]
    if layout.kind == "aiven":
        return [_join(root, layout.aiven_prefix + aiven.partition_prefix(topic, topic_id.bytes, partition))]
    name = fileset.partition_dir_name(topic, partition, topic_id)
    if os.path.basename(root.rstrip("/")) == name:
        return [root]
    return [_join(root, name), _join(_join(root, fileset.ROOT_DIR_NAME), name)]
