"""``kdump files``: Kafka's DumpLogSegments, file by file, on the storage core.

This module decides what is dumped and in which order, and keeps the end-of-run findings; the storage core
decodes, and a :class:`FilesSink` (declared here, one method per kind of fact) writes: :mod:`kdump.render.files_text`
Kafka's text, :mod:`kdump.render.files_json` JSON lines; the command line picks one.  Filters
(:mod:`kdump.analysis.record_filter`) are a stage between storage and the sink.  An error that Kafka's tool would
die of propagates as a :class:`~kdump.errors.KdumpError` after everything Kafka would have printed has been
written.
"""

from __future__ import annotations

import os
from collections.abc import Iterable, Iterator
from itertools import chain

from kdump.analysis.offset_gaps import OffsetGaps
from kdump.analysis.pair_list import PairList
from kdump.analysis.record_filter import KEEP, STOP, RecordFilter
from kdump.commands.parallel_policy import min_parallel_bytes
from kdump.errors import CorruptSnapshotError, KdumpError, UsageError
from kdump.exit_status import ExitStatus
from kdump.facts.files import (
    DumpOptions,
    FileHeader,
    FilesSink,
    Findings,
    JavaFile,
    LogSink,
    RenderChunk,
)
from kdump.jdk.collections import scala_hashmap_order
from kdump.storage import checkpoint, naming, object_store
from kdump.storage.file_records import (
    INT_MAX,
    FileRecords,
    located,
)
from kdump.storage.offset_index import OffsetIndex
from kdump.storage.record import Record
from kdump.storage.time_index import NO_TIMESTAMP, TimeIndex

#: Files kdump parses by name although Kafka's tool cannot (the dot-less checkpoints, ``quorum-state``) or
#: ignores them (``meta.properties``, ``partition.metadata``).  ``.kafka_cleanshutdown`` and other unknown
#: suffixes stay ignored, as in Kafka.
STATE_FILES = frozenset(
    (
        *checkpoint.OFFSET_CHECKPOINT_FILES,
        checkpoint.LEADER_EPOCH_CHECKPOINT_FILE,
        checkpoint.QUORUM_STATE_FILE,
        checkpoint.META_PROPERTIES_FILE,
        checkpoint.PARTITION_METADATA_FILE,
    )
)

#: Internal-topic decoder flags, in Kafka's order of precedence.
INTERNAL_DECODERS = (
    "offsets-decoder",
    "transaction-log-decoder",
    "cluster-metadata-decoder",
    "remote-log-metadata-decoder",
    "share-group-state-decoder",
)


class DumpLogSegments:
    """Runs one ``kdump files`` invocation, handing its facts to ``sink``."""

    def __init__(self, options: DumpOptions, sink: FilesSink) -> None:
        self.options = options
        self.sink = sink
        #: Non-consecutive offsets per file, oldest first (a :class:`PairList` keeps the older ones on disk).
        self.non_consecutive: dict[str, PairList] = {}
        self.index_mismatches: dict[str, list[tuple[int, int]]] = {}
        self.time_mismatches: dict[str, list[tuple[int, int]]] = {}
        self.time_out_of_order: dict[str, list[tuple[int, int]]] = {}
        self.time_not_found: dict[str, list[tuple[int, int]]] = {}
        selector = options.record_filter
        #: Records (batches without deep iteration) still to show under ``--max-records``: one count for the
        #: whole run, not per file.
        self.remaining: int | None = None if selector is None else selector.max_records

    def run(self) -> int:
        for arg in self.options.files:  # before anything is printed: a URL never shows its credentials
            if object_store.is_url(arg):
                object_store.check_url(arg)
        try:
            for arg in self.options.files:
                if self.remaining is not None and self.remaining <= 0:
                    break
                self.dump_file(arg)
        except KdumpError as e:
            self.sink.error(e)
            raise
        self.print_summaries()
        return ExitStatus.OK

    def dump_file(self, arg: str) -> None:
        file = JavaFile(arg)
        sink = self.sink
        # filtered output: a .log without a match stays silent
        sink.dumping(
            file, held=self.options.record_filter is not None and file.name.endswith(naming.LOG_FILE_SUFFIX)
        )
        if _is_dir(file.path):
            sink.header(file, FileHeader("directory"))
            sink.failed()
            raise KdumpError(
                "is a directory; give the segment, index or snapshot files in it "
                "(Kafka's tool dies with java.lang.StringIndexOutOfBoundsException)",
                path=file.path,
            )
        if file.name in STATE_FILES:
            self.dump_state_file(file)
            return
        suffix = naming.suffix_of(file.name)
        if suffix is None:
            sink.header(file, FileHeader("unknown"))
            raise KdumpError(
                "the file name has no suffix, so Kafka's tool cannot tell what it is "
                "(it dies with java.lang.StringIndexOutOfBoundsException)",
                path=file.path,
            )
        try:
            self._dump_by_suffix(file, suffix)
        except UsageError:
            raise
        except KdumpError as e:
            # an error in the records of the .log read for an index names that .log; any other, the file
            if e.path is None:
                index = suffix in (naming.INDEX_FILE_SUFFIX, naming.TIME_INDEX_FILE_SUFFIX)
                e.path = self._segment_log_path(file) if index and e.position is not None else file.path
            raise

    @staticmethod
    def _segment_log_path(file: JavaFile) -> str:
        """The .log of an index's segment, spelled relative as the index was given."""
        name = file.name.split(".", 1)[0] + naming.LOG_FILE_SUFFIX
        return file.path[: len(file.path) - len(file.name)] + name

    def _dump_by_suffix(self, file: JavaFile, suffix: str) -> None:
        if suffix in (naming.LOG_FILE_SUFFIX, naming.SNAPSHOT_SUFFIX):
            self.dump_log(file)
        elif suffix == naming.INDEX_FILE_SUFFIX:
            self.dump_index(file)
        elif suffix == naming.TIME_INDEX_FILE_SUFFIX:
            self.dump_time_index(file)
        elif suffix == naming.PRODUCER_SNAPSHOT_FILE_SUFFIX:
            self.dump_producer_snapshot(file)
        elif suffix == naming.TXN_INDEX_FILE_SUFFIX:
            self.dump_txn_index(file)
        else:
            self.sink.ignored(file)

    # -- .log and .checkpoint ----------------------------------------------------------------------------

    def dump_log(self, file: JavaFile) -> None:
        opts = self.options
        sink = self.sink
        try:  # Kafka creates the parser (loading the decoder classes) for each log it dumps, before reading it
            parser = sink.message_parser(file)
        except KdumpError as e:
            raise e.located(file.path) from None
        opts.check_option("max-bytes")  # DumpLogSegments' arguments of dumpLog, in their order
        if file.name.endswith(naming.LOG_FILE_SUFFIX):
            start = opts.start_offsets.get(file.path)  # a remote segment's (--remote-root)
            if start is None:
                start = naming.offset_from_file(file.path)
            sink.header(file, FileHeader("log", log_starting_offset=start))
        elif file.name == naming.BOOTSTRAP_CHECKPOINT:
            sink.header(file, FileHeader("bootstrap-snapshot"))
        else:
            try:
                snapshot_id = naming.parse_snapshot_name(file.name)
            except naming.NumberFormatError as e:
                raise KdumpError(
                    f"not a KRaft snapshot name <20-digit offset>-<10-digit epoch>.checkpoint ({e.message})",
                    path=file.path,
                ) from None
            sink.header(
                file,
                FileHeader("snapshot", snapshot_end_offset=snapshot_id.end_offset, epoch=snapshot_id.epoch),
            )
        try:
            source = opts.sources.get(file.path)  # a remote segment's .log read back through its chunks
            with (
                FileRecords(file.path, max_bytes=opts.max_bytes)
                if source is None
                else FileRecords.open(source, max_bytes=opts.max_bytes)
            ) as records:
                log = sink.log(file, parser)
                render = None
                if opts.record_filter is None:  # filters are a stage of the batch-by-batch loop
                    render = log.segment_renderer(records, opts.is_deep_iteration)
                if render is None:
                    self._dump_batches_selected(file, records, log)
                else:
                    self._dump_segment(file, records, log, render)
        except KdumpError:
            sink.failed()
            raise

    def _dump_segment(self, file: JavaFile, records: FileRecords, log: LogSink, render: RenderChunk) -> None:
        """The sink's whole-segment path (Kafka's default text): in chunks on all cores when it pays (a segment
        of :func:`~kdump.commands.parallel_policy.min_parallel_bytes` or more: :mod:`kdump.commands.parallel` is
        loaded then)."""
        out = self.sink.out
        valid_bytes = None
        deep = self.options.is_deep_iteration
        if records.size_in_bytes >= min_parallel_bytes(deep):
            from kdump.commands import parallel

            if parallel.worth_it(out, records):
                valid_bytes = parallel.dump_batches(
                    render,
                    out,
                    file.path,
                    records,
                    lambda pairs: self._add_gaps(file, pairs),
                    deep=deep,
                )
        if valid_bytes is None:
            gaps = OffsetGaps()
            try:
                valid_bytes = render(0, None, out, gaps)
            finally:
                self.record_gaps(file, gaps)
        trailing = records.invalid_bytes(valid_bytes)
        if trailing > 0 and self.options.max_bytes == INT_MAX:
            log.invalid_bytes(trailing, valid_bytes)

    def record_gaps(self, file: JavaFile, gaps: OffsetGaps) -> None:
        self._add_gaps(file, gaps.pairs)

    def _add_gaps(self, file: JavaFile, pairs: PairList) -> None:
        if not pairs:
            return
        found = self.non_consecutive.get(file.absolute_path)
        if found is None:
            self.non_consecutive[file.absolute_path] = pairs
        else:
            found.extend(pairs)
            pairs.close()

    def _dump_batches_selected(self, file: JavaFile, records: FileRecords, log: LogSink) -> None:
        """The batch-by-batch loop (JSON lines, filters, header values...): the filter, a stage between storage
        and the sink, picks the batches and records the sink is handed."""
        opts = self.options
        selector = opts.record_filter
        deep = opts.is_deep_iteration
        needs_records = selector is not None and selector.needs_records
        look_inside = deep or needs_records
        views = log.takes_views
        remaining = self.remaining
        start = 0 if selector is None else selector.start_position(file.path, records)
        gaps = OffsetGaps()
        reached_end = True
        batch = None
        end = start
        try:
            for batch in records.batches(start):
                end = batch.position + batch.size_in_bytes
                if selector is None:
                    log.batch(
                        batch,
                        records.checked(gaps.see(batch.records(views=views)), batch.position)
                        if deep
                        else None,
                    )
                    continue
                verdict = selector.batch_verdict(batch)
                if verdict == STOP:
                    reached_end = False
                    break
                if verdict != KEEP:
                    continue
                if look_inside:
                    count = [0]
                    kept = _kept(records.checked(batch.records(), batch.position), selector, remaining, count)
                    if deep:
                        first = next(kept, None)
                        if first is None:
                            if needs_records:
                                continue
                            log.batch(batch, ())
                        else:
                            log.batch(batch, chain((first,), kept))
                    else:
                        for _ in kept:
                            pass
                        if needs_records and count[0] == 0:
                            continue
                        log.batch(batch)
                    shown = count[0]
                else:
                    log.batch(batch)
                    shown = 1
                if remaining is not None:
                    remaining -= shown
                    self.remaining = remaining
                    if remaining <= 0:
                        reached_end = False
                        break
        except KdumpError as e:
            raise located(e, records, file.path, batch) from None
        finally:
            self.record_gaps(file, gaps)
        if reached_end and opts.max_bytes == INT_MAX:
            trailing = records.invalid_bytes(end)
            if trailing > 0:
                log.invalid_bytes(trailing, end)

    # -- indexes, producer snapshots, transaction indexes -----------------------------------------------------

    def _sibling(self, file: JavaFile, suffix: str) -> JavaFile:
        """The file with the same offset prefix and another suffix, in the index's directory (absolute, as Kafka
        builds it from ``getAbsoluteFile.getParent``)."""
        parent = file.absolute_path.rsplit("/", 1)[0]
        return JavaFile(f"{parent}/{file.name.split('.', 1)[0]}{suffix}")

    def _open_index(self, cls, file: JavaFile, base_offset: int):  # noqa: ANN001, ANN202
        remote = object_store.is_url(file.path)
        if not (object_store.exists(file.path) if remote else os.path.exists(file.path)):
            raise KdumpError(
                "no such index file (Kafka would create an empty one here and die of "
                '"Invalid max index size: -1"; kdump creates nothing)',
                path=file.path,
            )
        try:
            return cls(file.path, base_offset)
        except OSError as e:
            raise KdumpError(e.strerror or str(e), path=file.path) from None

    def _open_log(self, file: JavaFile) -> FileRecords:
        log = self._sibling(file, naming.LOG_FILE_SUFFIX)
        try:
            return FileRecords(log.path)
        except KdumpError as e:
            raise KdumpError(f"cannot open its log segment: {e.describe()}", path=file.path) from None

    def dump_index(self, file: JavaFile) -> None:
        opts = self.options
        sink = self.sink
        opts.check_option("max-message-size")  # an argument of DumpLogSegments.dumpIndex
        base_offset = naming.offset_from_file(file.path)
        sink.header(file, FileHeader("offset-index"))
        with self._open_log(file) as records:
            index = self._open_index(OffsetIndex, file, base_offset)
            if index.entry_count == 0:
                sink.empty_index(file)
                return
            if opts.index_sanity_check:
                index.sanity_check()
                sink.sanity_check_passed(file)
                return
            for i in range(index.entry_count):
                entry = index.entry(i)
                if entry.offset == base_offset and i > 0:
                    return
                try:
                    batch = records.first_batch_in(entry.position, opts.max_message_size)
                except KdumpError as e:
                    raise KdumpError(
                        f"entry {i} (offset {entry.offset} position {entry.position}): {e.describe()}",
                        path=file.path,
                        position=i * OffsetIndex.ENTRY_SIZE,
                    ) from None
                if batch.last_offset != entry.offset:
                    self.index_mismatches.setdefault(file.absolute_path, []).append(
                        (entry.offset, batch.last_offset)
                    )
                if opts.verify_index_only:
                    continue
                sink.offset_index_entry(file, i, entry.offset, entry.position)

    def dump_time_index(self, file: JavaFile) -> None:
        opts = self.options
        sink = self.sink
        base_offset = naming.offset_from_file(file.path)
        sink.header(file, FileHeader("time-index"))
        with self._open_log(file) as records:
            index = self._open_index(OffsetIndex, self._sibling(file, naming.INDEX_FILE_SUFFIX), base_offset)
            time_index = self._open_index(TimeIndex, file, base_offset)
            if opts.index_sanity_check:
                time_index.sanity_check()
                sink.sanity_check_passed(file)
                return
            key = file.absolute_path
            previous = NO_TIMESTAMP
            for i in range(time_index.entry_count):
                entry = time_index.entry(i)
                if entry.offset == base_offset and i > 0:
                    return
                position = index.lookup(entry.offset).position
                try:  # fileRecords.slice(position, Int.MaxValue): dies past the end of the log
                    end = records.slice_end(position, INT_MAX)
                except KdumpError as e:
                    raise KdumpError(
                        f"entry {i} (timestamp {entry.timestamp} offset {entry.offset}, log position {position} "
                        f"from the offset index): {e.message}",
                        path=file.path,
                        position=i * TimeIndex.ENTRY_SIZE,
                    ) from None
                found = None
                try:
                    for batch in records.batches(position, end):
                        if batch.last_offset >= entry.offset:
                            found = batch
                            break
                    max_timestamp = NO_TIMESTAMP
                    if found is not None and found.last_offset == entry.offset:
                        for timestamp in found.timestamps():
                            max_timestamp = max(max_timestamp, timestamp)
                except KdumpError as e:  # Kafka dies of it here; say which file and where
                    e.located(records.path, getattr(found, "position", None))
                    raise KdumpError(
                        f"entry {i} (timestamp {entry.timestamp} offset {entry.offset}): reading its log "
                        f"segment: {e.describe()}",
                        path=file.path,
                        position=i * TimeIndex.ENTRY_SIZE,
                    ) from None
                if found is None:
                    self.time_not_found.setdefault(key, []).append((entry.offset, -1))
                elif found.last_offset != entry.offset:
                    self.time_not_found.setdefault(key, []).append((entry.offset, found.last_offset))
                else:
                    if max_timestamp != entry.timestamp:
                        self.time_mismatches.setdefault(key, []).append((entry.timestamp, max_timestamp))
                    if previous >= entry.timestamp:
                        self.time_out_of_order.setdefault(key, []).append((entry.timestamp, previous))
                if not opts.verify_index_only:
                    sink.time_index_entry(file, i, entry.timestamp, entry.offset)
                previous = entry.timestamp

    def dump_producer_snapshot(self, file: JavaFile) -> None:
        self.sink.header(file, FileHeader("producer-snapshot"))
        try:
            from kdump.storage.producer_snapshot import read_producer_snapshot

            snapshot = read_producer_snapshot(file.path)
        except CorruptSnapshotError as e:
            self.sink.corrupt_snapshot(file, e.message)
            return
        except OSError as e:
            raise KdumpError(e.strerror or str(e), path=file.path) from None
        self.sink.producer_snapshot(file, snapshot.entries)

    def dump_txn_index(self, file: JavaFile) -> None:
        from kdump.storage.transaction_index import TransactionIndex

        index = TransactionIndex(file.path, naming.offset_from_file(file.path))
        self.sink.header(file, FileHeader("transaction-index"))
        self.sink.aborted_txns(file, index.aborted_txns())

    # -- checkpoint and state files (a kdump addition) -----------------------------------------------------

    def dump_state_file(self, file: JavaFile) -> None:
        """Parse a checkpoint or state file by its name (Kafka's tool crashes on the dot-less ones and ignores
        the others; see :mod:`kdump.render.state_files`)."""
        try:
            parsed = checkpoint.read_checkpoint(file.path)
        except OSError as e:
            raise KdumpError(e.strerror or str(e), path=file.path) from None
        self.sink.header(file, FileHeader("state-file", name=file.name))
        self.sink.state_file(file, parsed)

    # -- end of run ------------------------------------------------------------------------------------------

    def print_summaries(self) -> None:
        """The end-of-run findings, in Kafka's order: groups in Kafka's hash-map order; Kafka prepends
        offset-index mismatches and offset gaps to their lists (newest first) and appends the time-index
        findings."""
        self.sink.summaries(
            Findings(
                index_mismatches=_groups(self.index_mismatches, newest_first=True),
                time_mismatches=_groups(self.time_mismatches),
                time_out_of_order=_groups(self.time_out_of_order),
                time_not_found=_groups(self.time_not_found),
                non_consecutive=[
                    (k, self.non_consecutive[k].newest_first())
                    for k in scala_hashmap_order(list(self.non_consecutive))
                ],
            )
        )


def _is_dir(path: str) -> bool:
    """A directory, or a prefix of a store (a URL whose object is a "directory")."""
    return object_store.is_dir(path) if object_store.is_url(path) else os.path.isdir(path)


def _kept(
    records: Iterable[Record], selector: RecordFilter, limit: int | None, count: list[int]
) -> Iterator[Record]:
    """The filter stage: the records ``selector`` keeps, at most ``limit`` (counted in ``count[0]``); the next
    record is not read once the limit is reached."""
    keeps = selector.keeps
    kept = 0
    for record in records:
        if keeps(record):
            kept += 1
            count[0] = kept
            yield record
            if limit is not None and kept >= limit:
                return


def _groups(
    found: dict[str, list[tuple[int, int]]], *, newest_first: bool = False
) -> list[tuple[str, list[tuple[int, int]]]]:
    return [(k, found[k][::-1] if newest_first else found[k]) for k in scala_hashmap_order(list(found))]
