"""``kdump files``: Kafka's DumpLogSegments, file by file, on the storage core.

This module decides what is dumped and in which order, and keeps the end-of-run summaries; the storage core
decodes and :mod:`kdump.render.kafka_text` formats.  An error that Kafka's tool would die of propagates as a
:class:`~kdump.errors.KdumpError` after everything Kafka would have printed has been written.
"""

from __future__ import annotations

import os
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import tzinfo
from itertools import islice
from typing import TYPE_CHECKING, Any

from kdump.commands import parallel
from kdump.commands.parallel import OffsetGaps
from kdump.errors import CorruptSnapshotError, KdumpError, UsageError
from kdump.exit_status import ExitStatus
from kdump.jdk.collections import scala_hashmap_order
from kdump.render import json_lines, kafka_text
from kdump.render.decoders import (
    DEFAULT_DECODER_CLASS,
    DecoderMessageParser,
    MessageParser,
    internal_topic_parser,
    resolve_decoder,
)
from kdump.render.output import Output
from kdump.storage import checkpoint, naming
from kdump.storage.file_records import INT_MAX, FileRecords, RecordBatch
from kdump.storage.offset_index import OffsetIndex
from kdump.storage.producer_snapshot import read_producer_snapshot
from kdump.storage.record_batch import DefaultRecordBatch
from kdump.storage.record_filter import KEEP, STOP, RecordFilter
from kdump.storage.time_index import NO_TIMESTAMP, TimeIndex
from kdump.storage.transaction_index import TransactionIndex

if TYPE_CHECKING:
    from kdump.payload.sources import PayloadDecoding

DEFAULT_MAX_MESSAGE_SIZE = 5 * 1024 * 1024

#: A batch's record lines are gathered and written together (after checking that the file did not shrink
#: underneath) up to this many; a batch of more records has its text written every this many lines, so the
#: text of a batch of millions of records never sits in memory.
STREAM_LINES = 4096

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


@dataclass
class DumpOptions:
    """The options of ``kafka-dump-log.sh``, with its implications between them."""

    files: list[str] = field(default_factory=list)
    print_data_log: bool = False
    deep_iteration: bool = False
    verify_index_only: bool = False
    index_sanity_check: bool = False
    skip_record_metadata: bool = False
    max_message_size: int = DEFAULT_MAX_MESSAGE_SIZE
    max_bytes: int = INT_MAX
    key_decoder_class: str | None = None  # None: flag absent
    value_decoder_class: str | None = None
    key_decoder_given: bool = False
    value_decoder_given: bool = False
    internal_decoders: tuple[str, ...] = ()
    # kdump additions (opt-in; none of them changes the default output)
    json: bool = False
    print_header_values: bool = False
    record_filter: RecordFilter | None = None
    #: ``--decode-keys``/``--decode-values schema-registry`` (implies printing the data, as Kafka's decoders do)
    payload_decoding: PayloadDecoding | None = None
    #: ``--human-time``: ISO-8601 after every timestamp of the text, in ``tz`` (None: UTC).
    human_time: bool = False
    tz: tzinfo | None = None
    #: Integer options whose argument does not convert: Kafka converts them lazily, where it first uses them
    #: (``--max-bytes`` for each .log/.checkpoint, ``--max-message-size`` for each .index), and dies there.
    option_errors: dict[str, str] = field(default_factory=dict)

    def check_option(self, name: str) -> None:
        """Fail as Kafka does on the first use of option ``name`` when its argument did not convert."""
        message = self.option_errors.get(name)
        if message is not None:
            raise UsageError(message)

    @property
    def should_print_data_log(self) -> bool:
        return (
            self.print_data_log
            or bool(self.internal_decoders)
            or self.key_decoder_given
            or self.value_decoder_given
            or self.payload_decoding is not None
        )

    @property
    def is_deep_iteration(self) -> bool:
        return self.deep_iteration or self.should_print_data_log


class JavaFile:
    """The parts of ``java.io.File`` the tool's output depends on (normalised path, name, absolute path)."""

    __slots__ = ("path", "name")

    def __init__(self, arg: str) -> None:
        path = arg
        while "//" in path:
            path = path.replace("//", "/")
        if len(path) > 1 and path.endswith("/"):
            path = path[:-1]
        self.path = path
        self.name = path[path.rfind("/") + 1 :]

    @property
    def absolute_path(self) -> str:
        return naming.java_absolute_path(self.path) if self.path else os.getcwd()


class DumpLogSegments:
    """Runs one ``kdump files`` invocation."""

    def __init__(self, options: DumpOptions, out: Output, err: Output) -> None:
        self.options = options
        self.out = out
        if options.human_time and not options.json:
            from kdump.render.human_time import HumanTimeOutput

            self.out = HumanTimeOutput(out, options.tz)
        self.err = err
        self.non_consecutive: dict[str, list[tuple[int, int]]] = {}
        self.index_mismatches: dict[str, list[tuple[int, int]]] = {}
        self.time_mismatches: dict[str, list[tuple[int, int]]] = {}
        self.time_out_of_order: dict[str, list[tuple[int, int]]] = {}
        self.time_not_found: dict[str, list[tuple[int, int]]] = {}
        selector = options.record_filter
        #: Records (batches without deep iteration) still to show under ``--max-records``: one count for the
        #: whole run, not per file.
        self.remaining: int | None = None if selector is None else selector.max_records
        #: Filtered text: a .log file's ``Dumping``/``Log starting offset`` lines, held back until the file
        #: shows something (files without a match stay silent).
        self.pending_header: str | None = None

    def run(self) -> int:
        try:
            for arg in self.options.files:
                if self.remaining is not None and self.remaining <= 0:
                    break
                self.dump_file(arg)
        except KdumpError as e:
            if self.options.json:  # the stream ends with what stopped it
                self.out.write(json_lines.error_object(e))
            raise
        self.print_summaries()
        return ExitStatus.OK

    def _header(self, text: str) -> None:
        if self.pending_header is not None:
            self.pending_header += text
        else:
            self.out.write(text)

    def _release_header(self) -> None:
        if self.pending_header is not None:
            self.out.write(self.pending_header)
            self.pending_header = None

    def _begin(self, file: JavaFile, kind: str, **facts: object) -> None:
        """JSON mode: the ``file`` object that stands for the ``Dumping`` line and the file's header lines."""
        if self.options.json:
            self.out.write(json_lines.file_object(file.path, kind, **facts))

    def dump_file(self, arg: str) -> None:
        file = JavaFile(arg)
        self.pending_header = None
        if not self.options.json:
            if self.options.record_filter is not None and file.name.endswith(naming.LOG_FILE_SUFFIX):
                self.pending_header = f"Dumping {file.path}\n"
            else:
                self.out.write(f"Dumping {file.path}\n")
        if os.path.isdir(file.path):
            self._begin(file, "directory")
            self._release_header()
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
            self._begin(file, "unknown")
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
        elif self.options.json:
            self._begin(file, "unknown", ignored=True)
        else:
            self.out.flush()
            self.err.write(f"Ignoring unknown file {file.path}\n")
            self.err.flush()

    # -- .log and .checkpoint ----------------------------------------------------------------------------

    def _message_parser(self) -> MessageParser:
        opts = self.options
        if opts.internal_decoders:  # in Kafka's order of precedence: the first one wins
            return internal_topic_parser(opts.internal_decoders[0])
        # Kafka's messageParser: the value decoder is read (and loaded) first, then the key decoder
        opts.check_option("value-decoder-class")
        value_decoder = resolve_decoder(_or_default(opts.value_decoder_class))
        opts.check_option("key-decoder-class")
        key_decoder = resolve_decoder(_or_default(opts.key_decoder_class))
        return DecoderMessageParser(key_decoder, value_decoder)

    def dump_log(self, file: JavaFile) -> None:
        opts = self.options
        out = self.out
        try:  # Kafka creates the parser (loading the decoder classes) for each log it dumps, before reading it
            parser = self._message_parser()
        except KdumpError as e:
            raise e.located(file.path) from None
        opts.check_option("max-bytes")  # DumpLogSegments' arguments of dumpLog, in their order
        json_mode = opts.json
        if file.name.endswith(naming.LOG_FILE_SUFFIX):
            start_offset = naming.offset_from_file(file.path)
            if json_mode:
                self._begin(file, "log", logStartingOffset=start_offset)
            else:
                self._header(f"Log starting offset: {start_offset}\n")
        elif file.name == naming.BOOTSTRAP_CHECKPOINT:
            if json_mode:
                self._begin(file, "bootstrap-snapshot")
            else:
                out.write("KRaft bootstrap snapshot\n")
        else:
            try:
                snapshot_id = naming.parse_snapshot_name(file.name)
            except naming.NumberFormatError as e:
                raise KdumpError(
                    f"not a KRaft snapshot name <20-digit offset>-<10-digit epoch>.checkpoint ({e.message})",
                    path=file.path,
                ) from None
            if json_mode:
                self._begin(
                    file, "snapshot", snapshotEndOffset=snapshot_id.end_offset, epoch=snapshot_id.epoch
                )
            else:
                out.write(f"Snapshot end offset: {snapshot_id.end_offset}, epoch: {snapshot_id.epoch}\n")
        if json_mode or opts.record_filter is not None or opts.print_header_values or opts.human_time:
            try:
                with FileRecords(file.path, max_bytes=opts.max_bytes) as records:
                    self._dump_batches_selected(file, records, parser)
            except KdumpError:
                self._release_header()
                raise
            finally:
                self.pending_header = None
            return

        with FileRecords(file.path, max_bytes=opts.max_bytes) as records:
            valid_bytes = None
            if parallel.worth_it(opts.is_deep_iteration, out, records):
                valid_bytes = parallel.dump_batches(
                    lambda start, end, chunk_out, gaps: self.render_batches(
                        file, records, parser, start, end, chunk_out, gaps
                    ),
                    out,
                    file.path,
                    records,
                    lambda pairs: self.non_consecutive.setdefault(file.absolute_path, []).extend(pairs),
                )
            if valid_bytes is None:
                gaps = OffsetGaps()
                try:
                    valid_bytes = self.render_batches(file, records, parser, 0, None, out, gaps)
                finally:
                    self.record_gaps(file, gaps)
            trailing = records.size_in_bytes - valid_bytes
            if trailing > 0 and opts.max_bytes == INT_MAX:
                out.write(kafka_text.trailing_bytes_line(trailing, file.name))

    def _payload_text_hook(self, file: JavaFile) -> Callable[[Any], str] | None:
        decoding = self.options.payload_decoding
        if decoding is None:
            return None
        from kdump.render.decoded_payload import text_hook

        return text_hook(decoding.decoder_for(file.path), decoding.keys, decoding.values)

    def _payload_json_hook(self, file: JavaFile) -> Callable[[Any, dict[str, Any]], None] | None:
        decoding = self.options.payload_decoding
        if decoding is None:
            return None
        from kdump.render.decoded_payload import json_hook

        return json_hook(decoding.decoder_for(file.path), decoding.keys, decoding.values)

    def record_gaps(self, file: JavaFile, gaps: OffsetGaps) -> None:
        if gaps.pairs:
            self.non_consecutive.setdefault(file.absolute_path, []).extend(gaps.pairs)

    def render_batches(
        self,
        file: JavaFile,
        records: FileRecords,
        parser: MessageParser,
        start: int,
        end: int | None,
        out: Output,
        gaps: OffsetGaps,
    ) -> int:
        """Kafka's text for the batches in ``[start, end)``, into ``out``; returns where the last whole batch
        ends.  On an error, everything Kafka would have printed before dying is in ``out`` and the error,
        located at its batch, propagates."""
        opts = self.options
        deep = opts.is_deep_iteration
        print_contents = opts.should_print_data_log
        skip_metadata = opts.skip_record_metadata
        payload_extra = self._payload_text_hook(file)
        # big keys and values as views of the segment, their text written in pieces
        views = payload_extra is None
        valid_bytes = start
        see = gaps.see
        batch = None
        tracked = None
        try:
            for batch in records.batches(start, end):
                out.write(kafka_text.batch_line_head(batch))
                out.write(kafka_text.batch_line_tail(batch, valid_bytes))
                if deep:
                    render = kafka_text.record_renderer(
                        batch, print_contents, skip_metadata, parser, payload_extra=payload_extra
                    )
                    lines: list[str] = []
                    tracked = see(batch.records(views=views))
                    try:
                        # extend keeps the lines made before a failure: Kafka printed them
                        if isinstance(batch, DefaultRecordBatch) and batch.records_count <= STREAM_LINES:
                            lines.extend(map(render, tracked))
                        else:  # a huge batch (or a legacy wrapper): its text is written as it is made
                            rendered = map(render, tracked)
                            while True:
                                lines.extend(islice(rendered, STREAM_LINES))
                                if len(lines) < STREAM_LINES:
                                    break
                                records.check_unchanged(batch.position)
                                out.write_lines(lines)
                                lines.clear()
                    finally:
                        records.check_unchanged(batch.position)  # print nothing read from a vanished page
                        out.write_lines(lines)
                valid_bytes += batch.size_in_bytes
        except (kafka_text.PartialLineError, KdumpError) as e:
            if tracked is not None:
                tracked.close()  # its last offset into gaps
            error = _located(e, records, file, batch)
            if isinstance(e, kafka_text.PartialLineError):
                out.write(e.partial)  # what Kafka printed of the line before dying
            raise error from None
        return valid_bytes

    def _dump_batches_selected(self, file: JavaFile, records: FileRecords, parser: MessageParser) -> None:
        """The batch loop for kdump's opt-in features: JSON lines, filters, header values.  Output that is not
        Kafka's anyway, so a batch's line is written once its records are known (a filter may drop it)."""
        opts = self.options
        out = self.out
        json_mode = opts.json
        selector = opts.record_filter
        deep = opts.is_deep_iteration
        print_contents = opts.should_print_data_log
        skip_metadata = opts.skip_record_metadata
        look_inside = deep or (selector is not None and selector.needs_records)
        payload_json = self._payload_json_hook(file) if json_mode else None
        payload_extra = None if json_mode else self._payload_text_hook(file)
        remaining = self.remaining
        context = json_lines.record_context(file.path, file.absolute_path) if json_mode else None
        start = 0 if selector is None else selector.start_position(file.path, records)
        gaps = OffsetGaps()
        reached_end = True
        batch = None
        end = start
        try:
            for batch in records.batches(start):
                end = batch.position + batch.size_in_bytes
                if selector is not None:
                    verdict = selector.batch_verdict(batch)
                    if verdict == STOP:
                        reached_end = False
                        break
                    if verdict != KEEP:
                        continue
                lines: list[str] = []
                kept = 0
                head_written = False
                if look_inside:
                    if json_mode:
                        render = json_lines.record_renderer(
                            batch,
                            print_contents,
                            skip_metadata,
                            parser,
                            decoder=getattr(parser, "decoder", None),
                            payload_json=payload_json,
                            context=context,
                        )
                    else:
                        render = kafka_text.record_renderer(
                            batch,
                            print_contents,
                            skip_metadata,
                            parser,
                            header_values=opts.print_header_values,
                            payload_extra=payload_extra,
                        )
                    for record in batch.records() if selector is not None else gaps.see(batch.records()):
                        if selector is not None and not selector.keeps(record):
                            continue
                        kept += 1
                        if deep:
                            lines.append(render(record))
                            if len(lines) >= STREAM_LINES:  # a huge batch: write its text as it is made
                                if not head_written:
                                    self._batch_head(batch, file)
                                    head_written = True
                                out.write("".join(lines))
                                lines.clear()
                        if remaining is not None and kept >= remaining:
                            break
                    if selector is not None and selector.needs_records and kept == 0:
                        continue
                elif remaining is not None:
                    kept = 1
                if not head_written:
                    self._batch_head(batch, file)
                out.write("".join(lines))
                if remaining is not None:
                    remaining -= kept
                    self.remaining = remaining
                    if remaining <= 0:
                        reached_end = False
                        break
        except (kafka_text.PartialLineError, KdumpError) as e:
            raise _located(e, records, file, batch) from None
        finally:
            self.record_gaps(file, gaps)
        if reached_end and opts.max_bytes == INT_MAX:
            trailing = records.size_in_bytes - end
            if trailing > 0:
                self._release_header()
                if json_mode:
                    out.write(json_lines.fact("invalidBytes", file.path, bytes=trailing, position=end))
                else:
                    out.write(kafka_text.trailing_bytes_line(trailing, file.name))

    def _batch_head(self, batch: RecordBatch, file: JavaFile) -> None:
        """The batch's own line (the opt-in loop writes it once its records are known to be wanted)."""
        self._release_header()
        if self.options.json:
            self.out.write(json_lines.batch_line(batch, batch.position, file.path))
        else:
            self.out.write(
                kafka_text.batch_line_head(batch) + kafka_text.batch_line_tail(batch, batch.position)
            )

    # -- indexes, producer snapshots, transaction indexes -----------------------------------------------------

    def _sibling(self, file: JavaFile, suffix: str) -> JavaFile:
        """The file with the same offset prefix and another suffix, in the index's directory (absolute, as Kafka
        builds it from ``getAbsoluteFile.getParent``)."""
        parent = file.absolute_path.rsplit("/", 1)[0]
        return JavaFile(f"{parent}/{file.name.split('.', 1)[0]}{suffix}")

    def _open_index(self, cls, file: JavaFile, base_offset: int):  # noqa: ANN001, ANN202
        if not os.path.exists(file.path):
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
        opts.check_option("max-message-size")  # an argument of DumpLogSegments.dumpIndex
        base_offset = naming.offset_from_file(file.path)
        self._begin(file, "offset-index")
        with self._open_log(file) as records:
            index = self._open_index(OffsetIndex, file, base_offset)
            if index.entry_count == 0:
                self._write_fact("emptyIndex", file, f"{file.path} is empty.\n")
                return
            if opts.index_sanity_check:
                index.sanity_check()
                self._write_fact("sanityCheck", file, f"{file.path} passed sanity check.\n", passed=True)
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
                if opts.json:
                    self.out.write(json_lines.offset_index_entry(file.path, i, entry.offset, entry.position))
                else:
                    self.out.write(f"offset: {entry.offset} position: {entry.position}\n")

    def dump_time_index(self, file: JavaFile) -> None:
        opts = self.options
        base_offset = naming.offset_from_file(file.path)
        self._begin(file, "time-index")
        with self._open_log(file) as records:
            index = self._open_index(OffsetIndex, self._sibling(file, naming.INDEX_FILE_SUFFIX), base_offset)
            time_index = self._open_index(TimeIndex, file, base_offset)
            if opts.index_sanity_check:
                time_index.sanity_check()
                self._write_fact("sanityCheck", file, f"{file.path} passed sanity check.\n", passed=True)
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
                if opts.json and not opts.verify_index_only:
                    self.out.write(json_lines.time_index_entry(file.path, i, entry.timestamp, entry.offset))
                elif not opts.verify_index_only:
                    self.out.write(f"timestamp: {entry.timestamp} offset: {entry.offset}\n")
                previous = entry.timestamp

    def dump_producer_snapshot(self, file: JavaFile) -> None:
        self._begin(file, "producer-snapshot")
        try:
            snapshot = read_producer_snapshot(file.path)
        except CorruptSnapshotError as e:
            if self.options.json:
                self.out.write(json_lines.fact("corruptSnapshot", file.path, message=e.message))
                return
            self.out.flush()
            self.err.write(e.message + "\n")
            self.err.flush()
            return
        except OSError as e:
            raise KdumpError(e.strerror or str(e), path=file.path) from None
        if self.options.json:
            self.out.write(
                "".join(json_lines.producer_snapshot_entry(file.path, e) for e in snapshot.entries)
            )
            return
        for entry in snapshot.entries:
            self.out.write(kafka_text.producer_snapshot_line(entry))

    def dump_txn_index(self, file: JavaFile) -> None:
        index = TransactionIndex(file.path, naming.offset_from_file(file.path))
        self._begin(file, "transaction-index")
        if self.options.json:
            lines = [json_lines.aborted_txn(file.path, txn) for txn in index.aborted_txns()]
        else:
            lines = [kafka_text.aborted_txn_line(txn) for txn in index.aborted_txns()]
        self.out.write("".join(lines))

    # -- checkpoint and state files (a kdump addition) -----------------------------------------------------

    def dump_state_file(self, file: JavaFile) -> None:
        """Parse a checkpoint or state file by its name (Kafka's tool crashes on the dot-less ones and ignores
        the others; see :mod:`kdump.render.state_files`)."""
        from kdump.render import state_files  # loads every state file's reader: only when one is dumped
        from kdump.storage.leader_epoch_checkpoint import LeaderEpochCheckpoint
        from kdump.storage.meta_properties import MetaProperties
        from kdump.storage.offset_checkpoint import OffsetCheckpoint
        from kdump.storage.partition_metadata import PartitionMetadata

        try:
            parsed = checkpoint.read_checkpoint(file.path)
        except OSError as e:
            raise KdumpError(e.strerror or str(e), path=file.path) from None
        if self.options.json:
            self._begin(file, "state-file", name=file.name)
            self.out.write(state_files.json_lines(file.path, parsed))
            return
        if isinstance(parsed, OffsetCheckpoint):
            text = state_files.offset_checkpoint_lines(file.path, parsed)
        elif isinstance(parsed, LeaderEpochCheckpoint):
            text = state_files.leader_epoch_checkpoint_lines(file.path, parsed)
        elif isinstance(parsed, PartitionMetadata):
            text = state_files.partition_metadata_lines(parsed)
        elif isinstance(parsed, MetaProperties):
            text = state_files.meta_properties_lines(parsed)
        else:
            text = state_files.quorum_state_lines(parsed)
        self.out.write(text)

    def _write_fact(self, kind: str, file: JavaFile, text: str, **fields: object) -> None:
        if self.options.json:
            self.out.write(json_lines.fact(kind, file.path, **fields))
        else:
            self.out.write(text)

    # -- end of run ------------------------------------------------------------------------------------------

    def print_summaries(self) -> None:
        """The end-of-run reports on stderr, in Kafka's order; groups in Kafka's hash-map order.  Kafka
        prepends offset-index mismatches and offset gaps to their lists (newest first) and appends the
        time-index findings.  In JSON mode they are objects on standard output, in the same order."""
        if self.options.json:
            self.out.write(self._summary_objects())
            return
        text = (
            kafka_text.index_mismatch_summary(_groups(self.index_mismatches, newest_first=True))
            + kafka_text.time_index_summary(
                _groups(self.time_mismatches), _groups(self.time_out_of_order), _groups(self.time_not_found)
            )
            + kafka_text.non_consecutive_summary(_groups(self.non_consecutive, newest_first=True))
        )
        if text:
            self.out.flush()
            self.err.write(text)
            self.err.flush()

    def _summary_objects(self) -> str:
        kinds = (
            ("indexMismatch", self.index_mismatches, True, ("indexOffset", "logOffset")),
            ("timestampMismatch", self.time_mismatches, False, ("indexTimestamp", "logTimestamp")),
            (
                "outOfOrderTimestamp",
                self.time_out_of_order,
                False,
                ("indexTimestamp", "previousIndexTimestamp"),
            ),
            ("indexedOffsetNotFound", self.time_not_found, False, ("indexOffset", "logOffset")),
            ("nonConsecutiveOffsets", self.non_consecutive, True, ("offset", "nextOffset")),
        )
        lines = []
        for kind, found, newest_first, (a_name, b_name) in kinds:
            for path, pairs in _groups(found, newest_first=newest_first):
                lines.extend(json_lines.fact(kind, path, **{a_name: a, b_name: b}) for a, b in pairs)
        return "".join(lines)


def _located(
    e: kafka_text.PartialLineError | KdumpError, records: FileRecords, file: JavaFile, batch: object
) -> KdumpError:
    """The error to raise for a failure at ``batch``: a file truncated underneath takes precedence (what was
    read may be zeros); otherwise the cause, located at the batch."""
    position = getattr(batch, "position", None)
    records.check_unchanged(position, thorough=True, failed=True)
    cause = e.cause if isinstance(e, kafka_text.PartialLineError) else e
    return cause.located(file.path, position)


def _groups(found: dict[str, list[tuple[int, int]]], *, newest_first: bool = False) -> list:
    return [(k, found[k][::-1] if newest_first else found[k]) for k in scala_hashmap_order(list(found))]


def _or_default(class_name: str | None) -> str:
    """A decoder option's class: the default when the option is absent (an empty name is a name, as in Kafka)."""
    return DEFAULT_DECODER_CLASS if class_name is None else class_name
