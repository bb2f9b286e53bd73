"""A tiered partition (KIP-405) as one log: its remote segments (what ``__remote_log_metadata`` says was copied,
:mod:`kdump.analysis.remote_log_metadata`) and its local ones, and the checks of the remote part against the
objects of Kafka's ``RemoteLogSegmentFileset`` layout (:mod:`kdump.storage.remote_log_segment`).

The checks, each a :class:`~kdump.problem.Problem` naming the object or record, with its kind's data (the
words are :func:`kdump.render.problem_text.tiered_message`'s; ``kdump verify --remote-root`` names the kinds
with ``remote-`` in front):

* ``missing-object`` (segment_id, start_offset, end_offset, suffix): a copied segment
  (``COPY_SEGMENT_FINISHED``) lacks one of its required files (``.log``, ``.index``, ``.timeindex``,
  ``.leader_epoch_checkpoint``, ``.snapshot``; ``.txnindex`` is optional);
* ``size`` (case, size, expected; chunks): its ``.log`` is not the ``segmentSizeInBytes`` the metadata gives
  (case ``metadata``); Aiven's: the ``.log`` object is not its manifest's chunks (``chunks``), the ``.indexes``
  object not its manifest's indexes (``indexes``), the manifest's original size not the metadata's
  (``original``);
* ``unfinished`` (segment_id, start_offset, end_offset, state): a segment still in ``COPY_SEGMENT_STARTED`` or
  ``DELETE_SEGMENT_STARTED`` (a copy or deletion that did not finish, unless it is under way now);
* ``orphaned-object`` (case ``not-a-segment``; ``unknown-segment``: count, segment_id): an object that is no
  segment's, or files of a segment id the metadata does not know (a failed copy's leftovers, or a segment whose
  deletion finished in the metadata but not in the store);
* ``gap`` (case ``remote``: first, last, before, after; ``local``: first, last, remote_end, local_start) /
  ``overlap`` (first, last, before, after): between consecutive copied segments, and between the remote log's
  end and the local log's start (a local segment also in remote storage is normal: local retention has not
  deleted it yet);
* ``offset-range`` (first, last, start_offset, end_offset), ``leader-epochs`` (epochs, expected: (epoch, first
  offset) pairs), ``log`` (case ``partial``: bytes; else message, the error's) (``deep``: the remote ``.log``
  read): its first and last offsets, the leader epochs of its batches (``segmentLeaderEpochs``: each epoch's
  first offset) and its bytes against the metadata;
* ``metadata``: a metadata record Kafka's cache refuses (case ``record``: record_offset, record -- the
  :class:`~kdump.analysis.remote_log_metadata.MetadataProblem`'s case -- and its values), a segment's custom
  metadata that is not Aiven's plugin's (``custom-metadata``: segment_id, reason), no metadata partition
  (``none-found``: topic), a topic id that is not ``partition.metadata``'s (``topic-id``: topic, partition);
* ``manifest`` (message, the error's): an Aiven ``.rsm-manifest`` that cannot be read, or whose chunks cannot;
* ``indexes`` (index, fault and the :class:`~kdump.storage.aiven_segment.IndexFault`'s values): an Aiven
  ``.indexes`` whose indexes cannot be read or are not whole;
* ``unreadable`` (reason; case ``read`` or ``list``): an object or directory that cannot be read or listed.
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
from kdump.problem import UNREADABLE, Problem, problem
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
    #: What is wrong, as facts: the kinds of this module's docstring (``unreadable`` too), each naming its object
    #: or record; their words are :mod:`kdump.render.problem_text`'s (``tiered_message``).
    problems: list[Problem] = field(default_factory=list)
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
        problems.append(
            Problem(
                "metadata",
                p.path,
                None,
                (("case", "record"), ("record_offset", p.offset), ("record", p.case), *p.data),
            )
        )
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
                    problem(
                        "unfinished",
                        log_path,
                        segment_id=sid,
                        start_offset=s.start_offset,
                        end_offset=s.end_offset,
                        state=s.state,
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
                        problem(
                            "missing-object",
                            path,
                            segment_id=sid,
                            start_offset=s.start_offset,
                            end_offset=s.end_offset,
                            suffix=suffix,
                        )
                    )
            size = sizes[naming.LOG_FILE_SUFFIX]
            if layout.kind == "aiven":
                if size is not None and sizes[aiven.MANIFEST_SUFFIX] is not None:
                    _check_aiven(objects, sizes, s, problems, deep, keyring)
                continue
            if size is not None and size != s.size_in_bytes:
                problems.append(
                    problem("size", log_path, case="metadata", size=size, expected=s.size_in_bytes)
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
                    problem("orphaned-object", _join(facts.remote_dir, name), case="not-a-segment")
                )
            elif parsed.segment_id not in known_ids:
                orphans.setdefault(parsed.segment_id, []).append(name)
        for sid, found in orphans.items():
            problems.append(
                problem(
                    "orphaned-object",
                    _join(facts.remote_dir, found[0]),
                    case="unknown-segment",
                    count=len(found),
                    segment_id=sid,
                )
            )
    previous: RemoteSegment | None = None
    for s in finished:
        if previous is not None:
            if s.start_offset > previous.end_offset + 1:
                problems.append(
                    problem(
                        "gap",
                        _objects(layout, facts.remote_dir, s)[naming.LOG_FILE_SUFFIX],
                        case="remote",
                        first=previous.end_offset + 1,
                        last=s.start_offset - 1,
                        before=encode_uuid(previous.segment_id.bytes),
                        after=encode_uuid(s.segment_id.bytes),
                    )
                )
            elif s.start_offset <= previous.end_offset:
                problems.append(
                    problem(
                        "overlap",
                        _objects(layout, facts.remote_dir, s)[naming.LOG_FILE_SUFFIX],
                        first=s.start_offset,
                        last=min(s.end_offset, previous.end_offset),
                        before=encode_uuid(previous.segment_id.bytes),
                        after=encode_uuid(s.segment_id.bytes),
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
                problem(
                    "gap",
                    local.directory,
                    case="local",
                    first=remote_end + 1,
                    last=bases[0] - 1,
                    remote_end=remote_end,
                    local_start=bases[0],
                )
            )
    facts.segments.sort(key=lambda s: (s.base_offset, s.tier != "remote"))
    return facts


def _objects(
    layout: Layout, remote_dir: str | None, s: RemoteSegment, problems: list[Problem] | None = None
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
                    problem(
                        "metadata",
                        objects[naming.LOG_FILE_SUFFIX],
                        case="custom-metadata",
                        segment_id=encode_uuid(s.segment_id.bytes),
                        reason=str(e),
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
    problems: list[Problem],
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
        problems.append(problem("manifest", manifest_path, message=e.message))
        return
    except OSError as e:
        problems.append(problem(UNREADABLE, manifest_path, case="read", reason=e.strerror or str(e)))
        return
    if manifest.transformed_size != size:
        problems.append(
            problem(
                "size",
                log_path,
                case="chunks",
                size=size,
                chunks=len(manifest.chunks),
                expected=manifest.transformed_size,
            )
        )
        return
    indexes_path, indexes_size = objects[aiven.INDEXES_SUFFIX], sizes[aiven.INDEXES_SUFFIX]
    if indexes_size is not None and indexes_size != aiven.indexes_size(manifest):
        problems.append(
            problem(
                "size", indexes_path, case="indexes", size=indexes_size, expected=aiven.indexes_size(manifest)
            )
        )
    if manifest.original_file_size != s.size_in_bytes:
        problems.append(
            problem(
                "size",
                manifest_path,
                case="original",
                size=manifest.original_file_size,
                expected=s.size_in_bytes,
            )
        )
    if deep:
        try:
            source = aiven.chunked_log(manifest, source_of(log_path))
        except KdumpError as e:
            problems.append(problem("manifest", log_path, message=e.message))
            return
        _check_log(log_path, s, problems, lambda: FileRecords.open(source))
        if indexes_size is not None:
            for fault in aiven.check_indexes(manifest, source_of(indexes_path)):
                problems.append(
                    Problem(
                        "indexes",
                        indexes_path,
                        None,
                        (("index", fault.index), ("fault", fault.case), *fault.data),
                    )
                )


def _check_log(
    log_path: str,
    s: RemoteSegment,
    problems: list[Problem],
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
        problems.append(problem("log", log_path, message=e.describe()))
        return
    if invalid:
        problems.append(problem("log", log_path, case="partial", bytes=invalid))
    if (first, last) != (s.start_offset, s.end_offset):
        problems.append(
            problem(
                "offset-range",
                log_path,
                first=first,
                last=last,
                start_offset=s.start_offset,
                end_offset=s.end_offset,
            )
        )
    if epochs != s.leader_epochs:
        problems.append(
            problem("leader-epochs", log_path, epochs=tuple(epochs), expected=tuple(s.leader_epochs))
        )


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
