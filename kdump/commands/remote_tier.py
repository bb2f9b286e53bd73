"""The remote part of tiered partitions for the commands that take ``--remote-root``: ``kdump verify`` adds the
remote checks of :mod:`kdump.analysis.tiered` (what ``kdump tiered --deep`` finds) for every tiered partition
it checks, as verify problems of their own kinds (``remote-...``); ``kdump ls`` reads a tiered partition as one
log (:meth:`RemoteChecks.one_log`).

A partition is tiered when ``__remote_log_metadata`` has segments of it or the remote root holds its directory;
the others (internal topics, topics without ``remote.storage.enable``) get no remote check and no problem. The
metadata partitions are read once per run, however many partitions share them. The checks are
:func:`kdump.analysis.tiered.check_tiered`'s, through :class:`kdump.commands.tiered.TieredCommand`: nothing is
checked twice, nothing differently."""

from __future__ import annotations

import os
from dataclasses import dataclass, field

from kdump.analysis.remote_log_metadata import (
    COPY_SEGMENT_FINISHED,
    DEFAULT_METADATA_PARTITIONS,
    RemoteLogMetadata,
    read_remote_log_metadata,
)
from kdump.analysis.tiered import TieredFacts, TieredSegment
from kdump.problem import UNREADABLE, Problem
from kdump.storage import aiven_segment as aiven
from kdump.storage import locations, naming
from kdump.storage.aiven_segment import Keyring
from kdump.storage.local_log import LocalLog
from kdump.storage.log_segment import SEGMENT_SUFFIXES, LogSegment
from kdump.storage.remote_layout import Layout, as_layout

#: verify's kinds for the remote checks (``kdump tiered``'s kind with ``remote-`` in front; ``unreadable`` stays).
REMOTE_PROBLEM_KINDS = {
    "remote-missing-object": "a segment the metadata says was copied (COPY_SEGMENT_FINISHED) lacks one of its "
    "objects (.log, .index, .timeindex, .leader_epoch_checkpoint, .snapshot; Aiven: .indexes, .rsm-manifest)",
    "remote-size": "a remote .log whose size is not the metadata's segmentSizeInBytes (Aiven: not its "
    "manifest's chunks)",
    "remote-unfinished": "a segment still in COPY_SEGMENT_STARTED or DELETE_SEGMENT_STARTED",
    "remote-orphaned-object": "remote objects of a segment id the metadata does not know, or not a segment's",
    "remote-gap": "offsets in no remote segment between two of them, or between the remote log's end and the "
    "local log's start",
    "remote-overlap": "offsets in two remote segments",
    "remote-offset-range": "a remote .log whose batches' first and last offsets are not the metadata's",
    "remote-leader-epochs": "a remote .log whose batches' leader epochs are not the metadata's "
    "segmentLeaderEpochs",
    "remote-log": "a remote .log that cannot be read to its end",
    "remote-metadata": "a __remote_log_metadata record Kafka's RemoteLogMetadataCache refuses, or no metadata "
    "partition found",
    "remote-manifest": "an Aiven .rsm-manifest that cannot be read, or whose chunks cannot be",
    "remote-indexes": "an Aiven .indexes whose indexes cannot be read (decrypted) or are not whole (--deep)",
}


def verify_kind(kind: str) -> str:
    """``kdump tiered``'s kind as verify names it."""
    return kind if kind == UNREADABLE else f"remote-{kind}"


@dataclass(frozen=True)
class RemoteOptions:
    """Where a tiered partition's remote part is, as ``kdump tiered`` takes it, and the keyring Aiven's
    encrypted segments are read with (``--aiven-private-key``)."""

    root: str
    layout: str | Layout = "kafka"
    metadata: tuple[str, ...] = ()
    metadata_partitions: int = DEFAULT_METADATA_PARTITIONS
    keyring: Keyring | None = None


@dataclass
class RemoteResult:
    """The remote checks of one tiered partition."""

    segments: int
    problems: list[Problem] = field(default_factory=list)


class RemoteChecks:
    """The remote checks of a verify run (one per run: the metadata partitions are read once)."""

    def __init__(self, options: RemoteOptions) -> None:
        self.options = options
        self._metadata: dict[tuple[str, ...], RemoteLogMetadata] = {}

    def _read_metadata(self, dirs: list[str]) -> RemoteLogMetadata:
        key = tuple(dirs)
        if key not in self._metadata:
            self._metadata[key] = read_remote_log_metadata(dirs)
        return self._metadata[key]

    def _facts(self, log: LocalLog, *, deep: bool) -> TieredFacts | None:
        """``kdump tiered``'s facts of the partition ``log`` is (None when it is not tiered)."""
        from kdump.commands.tiered import TieredCommand

        try:
            command = TieredCommand(
                log.directory,
                self.options.root,
                list(self.options.metadata),
                metadata_partitions=self.options.metadata_partitions,
                deep=deep,
                layout=self.options.layout,
                metadata_reader=self._read_metadata,
                keyring=self.options.keyring,
            )
        except ValueError:  # not named <topic>-<partition>: verify reports that itself
            return None
        if command.topic == "__remote_log_metadata":
            return None
        facts = command.facts()
        remote = any(s.tier == "remote" for s in facts.segments)
        if not remote and not (facts.remote_dir is not None and locations.isdir(facts.remote_dir)):
            return None
        return facts

    def check(self, log: LocalLog) -> RemoteResult | None:
        """The remote checks of the partition ``log`` is (None when it is not tiered)."""
        facts = self._facts(log, deep=True)
        if facts is None:
            return None
        remote = sum(1 for s in facts.segments if s.tier == "remote")
        return RemoteResult(remote, [_as_verify(p, log.directory) for p in facts.problems])

    def one_log(self, log: LocalLog) -> tuple[LocalLog, int] | None:
        """The partition ``log`` is as one log, as a broker serves it (``RemoteLogManager`` reads below the local
        log start offset from remote storage): its copied remote segments (``COPY_SEGMENT_FINISHED``, the only
        ones ``RemoteLogMetadataCache`` hands out) below its first local segment, then its local segments; with
        how many remote segments are in it.  None when the partition is not tiered.  In every layout
        (:func:`remote_segment`): the one partition model every command walks."""
        facts = self._facts(log, deep=False)
        if facts is None or facts.remote_dir is None:
            return None
        try:
            names: set[str] | None = set(locations.file_sizes(facts.remote_dir))
        except OSError:
            names = set()
        if as_layout(self.options.layout).kind == "template":
            names = None  # a template's objects are anywhere under the root: each one is asked for
        earlier = []
        for s in facts.segments:
            if s.tier != "remote" or s.state != COPY_SEGMENT_FINISHED:
                continue
            segment = remote_segment(s, facts.remote_dir, names, self.options)
            if segment is not None:
                earlier.append(segment)
        one = log.with_earlier_segments(earlier)
        return one, len(one.log_segments) - len(log.log_segments)


def remote_segment(
    s: TieredSegment, remote_dir: str, names: set[str] | None, options: RemoteOptions
) -> LogSegment | None:
    """A copied remote segment as a :class:`LogSegment` of the one log (None when its ``.log`` is not there):

    * Kafka's layout and a template's: its ``.log`` and indexes are plain objects, named as they are;
    * Aiven's: its ``.log`` is read back through the ``.rsm-manifest``'s chunk index
      (:class:`~kdump.storage.aiven_segment.SegmentLog`, ``segmentSizeInBytes`` long), its offset, time and
      transaction indexes out of ``.indexes`` (:class:`~kdump.storage.aiven_segment.SegmentIndex`, named
      ``<.indexes>#offset``...), decrypted with the run's keyring.

    ``names``: the objects listed in the partition's remote directory (None: ask for each object)."""
    layout = as_layout(options.layout)
    log_path = s.objects.get(naming.LOG_FILE_SUFFIX, s.log)

    def there(path: str) -> bool:
        directory, _, name = path.rpartition("/")
        if names is not None and directory == remote_dir.rstrip("/"):
            return name in names
        return locations.exists(path)

    segment = LogSegment(remote_dir, s.base_offset)
    if layout.kind == "aiven":
        manifest = s.objects.get(aiven.MANIFEST_SUFFIX)
        indexes = s.objects.get(aiven.INDEXES_SUFFIX)
        if manifest is None or indexes is None or not there(log_path) or not there(manifest):
            return None
        objects = aiven.SegmentObjects(log_path, indexes, manifest, options.keyring)
        segment.add_source(naming.LOG_FILE_SUFFIX, aiven.SegmentLog(objects, s.size or 0))
        if there(indexes):
            for suffix, name in (
                (naming.INDEX_FILE_SUFFIX, "offset"),
                (naming.TIME_INDEX_FILE_SUFFIX, "timestamp"),
                (naming.TXN_INDEX_FILE_SUFFIX, "transaction"),
            ):
                segment.add_source(suffix, aiven.SegmentIndex(objects, name))
        return segment
    if not there(log_path):
        return None
    segment.add_file(naming.LOG_FILE_SUFFIX, log_path)
    stem = log_path[: -len(naming.LOG_FILE_SUFFIX)]
    for suffix in SEGMENT_SUFFIXES[1:]:
        path = s.objects.get(suffix, stem + suffix)
        if there(path):
            segment.add_file(suffix, path)
    return segment


def _as_verify(p: Problem, directory: str) -> Problem:
    """``kdump tiered``'s problem as verify's: its kind named with ``remote-`` in front (``unreadable`` stays), the
    same place and data."""
    return Problem(verify_kind(p.kind), p.file or os.path.normpath(directory), p.position, p.data)
