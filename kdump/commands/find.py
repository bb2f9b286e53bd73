"""``kdump find``: where an offset or a timestamp is in a partition (:mod:`kdump.analysis.log_search`).

The facts: one :class:`Location` (the partition searched and the search's answer: segment, index entries
used, status, notes), the answer's batch and, with ``--print-data-log``, its record; a :class:`FindSink`
(:mod:`kdump.render.find_report`: the text with the batch in ``kafka-dump-log.sh``'s format, or one JSON
object) writes them.  See ``man kdump-find``."""

from __future__ import annotations

import os
from typing import TYPE_CHECKING

from kdump.analysis.log_search import FOUND, LogStart, SearchResult, find_offset, find_timestamp
from kdump.errors import KdumpError, UsageError
from kdump.exit_status import ExitStatus
from kdump.facts.find import FindSink, Location, RemoteChunk
from kdump.storage import locations, naming
from kdump.storage.local_log import LocalLog, is_partition_dir

if TYPE_CHECKING:
    from kdump.commands.remote_tier import RemoteChecks


def resolve_partition_dir(path: str, topic: str | None, partition: int | None) -> str:
    """The partition directory to search: ``path`` itself (or the directory of a segment file), or
    ``path/<topic>-<partition>`` when a topic and partition are given.  UsageError when that is not one."""
    if (topic is None) != (partition is None):
        raise UsageError("--topic and --partition go together")
    if topic is not None:
        directory = os.path.join(path, naming.partition_dir_name(topic, partition or 0))
        if not locations.isdir(directory):
            raise UsageError(f"{directory}: no such partition directory")
        return directory
    if locations.isfile(path):
        return os.path.dirname(path) or "."
    if not is_partition_dir(path):
        raise UsageError(
            f"{path}: not a partition directory (<topic>-<partition> holding .log files); "
            "for a log directory give --topic and --partition"
        )
    return path


class Find:
    """One ``kdump find`` run: exactly one of ``offset`` and ``timestamp``."""

    def __init__(
        self,
        directory: str,
        sink: FindSink,
        *,
        offset: int | None = None,
        timestamp: int | None = None,
        print_data_log: bool = False,
        log_start_offset: int | None = None,
        remote: RemoteChecks | None = None,
    ) -> None:
        """``remote``: a tiered partition is searched as one log, its remote segments (their objects, by
        ranged reads) in front of its local ones (``--remote-root``)."""
        self.remote = remote
        self.directory = directory
        self.sink = sink
        self.offset = offset
        self.timestamp = timestamp
        self.print_data_log = print_data_log
        self.log_start_offset = log_start_offset

    def run(self) -> ExitStatus:
        result = self.search()
        location = Location(self.directory, result, remote_chunk(result))
        self.sink.location(location)
        if result.batch is not None:
            self.sink.batch(location, result.batch)
            if self.print_data_log and result.record is not None:
                self.sink.record(location, result.record)
        self.sink.end(location)
        return ExitStatus.OK if result.status == FOUND else ExitStatus.PROBLEMS

    def search(self) -> SearchResult:
        try:
            log = LocalLog.scan_segments(self.directory)  # a search needs the segments only
        except OSError as e:
            raise KdumpError(e.strerror or str(e), path=self.directory) from None
        if self.remote is not None:
            one = self.remote.one_log(LocalLog.scan(self.directory))
            if one is not None:
                log = one[0]
        start = None if self.log_start_offset is None else LogStart(self.log_start_offset, "given")
        if self.offset is not None:
            return find_offset(log, self.offset, start)
        assert self.timestamp is not None
        return find_timestamp(log, self.timestamp, start)


def remote_chunk(result: SearchResult) -> RemoteChunk | None:
    """Where the answer's batch is in its chunked remote ``.log`` object (a segment in Aiven's layout: its
    ``.log`` source a :class:`~kdump.storage.aiven_segment.SegmentLog`), from the manifest's chunk index
    (``AbstractChunkIndex.findChunkForOriginalOffset``: chunk ``position // originalChunkSize``); None for
    any other segment (a plain file or object: the position is the byte)."""
    from kdump.storage import aiven_segment

    segment, position = result.segment, result.position
    if segment is None or position is None or result.batch is None:
        return None
    source = segment.source(naming.LOG_FILE_SUFFIX)
    if not isinstance(source, aiven_segment.SegmentLog):
        return None
    manifest = source.objects.manifest()  # read already: the batch was read through it
    found = aiven_segment.chunk_at(manifest, position)
    if found is None:
        return None
    i, chunk = found
    return RemoteChunk(
        source.location,
        i,
        len(manifest.chunks),
        chunk.transformed_position,
        chunk.transformed_position + chunk.transformed_size,
        chunk.original_position,
        chunk.original_position + chunk.original_size,
        position - chunk.original_position,
        manifest.compression,
        manifest.encrypted,
    )
