"""The Kafka-text sink of ``kdump files``' facts (:class:`kdump.facts.files.FilesSink`): every line Kafka 4.0's
``kafka-dump-log.sh`` prints, and kdump's text for what Kafka does not read (state files).

The lines themselves are made by :mod:`kdump.render.kafka_text` and :mod:`kdump.render.state_files`; this module
decides where they go (standard output, or standard error for Kafka's end-of-run reports and its notes on files
it skips) and holds back a filtered file's header until the file shows something.  Its whole-segment renderer
(:meth:`TextLog.segment_renderer`) is the default path of ``kdump files``: one fused loop per byte range, with no
call per batch or record beyond making the lines.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from itertools import islice
from typing import TYPE_CHECKING, Any

from kdump.analysis.offset_gaps import OffsetGaps
from kdump.errors import KdumpError
from kdump.facts.files import STREAM_LINES, DumpOptions, FileHeader, Findings, JavaFile, RenderChunk
from kdump.facts.output import Output
from kdump.render import kafka_text
from kdump.render.decoders import MessageParser, message_parser
from kdump.storage import record_batch
from kdump.storage.file_records import FileRecords, RecordBatch, located
from kdump.storage.record import Record
from kdump.storage.record_batch import DefaultRecordBatch

if TYPE_CHECKING:
    from kdump.storage.producer_snapshot import ProducerSnapshotEntry
    from kdump.storage.transaction_index import AbortedTxn


class KafkaTextSink:
    """Kafka's text on ``out`` (its reports on ``err``), with the display options of ``options``:
    ``--print-data-log`` and the decoders, ``--skip-record-metadata``, ``--print-header-values``,
    ``--decode-*`` (the decoded payload after ``payload:``) and ``--human-time``."""

    def __init__(self, out: Output, err: Output, options: DumpOptions) -> None:
        if options.human_time:
            from kdump.render.human_time import HumanTimeOutput

            out = HumanTimeOutput(out, options.tz)
        self.out = out
        self.err = err
        self.options = options
        #: The current file's ``Dumping``/header lines while they are held back (None: written at once).
        self.held: str | None = None

    # -- file headers ----------------------------------------------------------------------------------------

    def _header_line(self, text: str) -> None:
        if self.held is not None:
            self.held += text
        else:
            self.out.write(text)

    def release(self) -> None:
        """The current file shows something: write what was held back of its header."""
        if self.held is not None:
            self.out.write(self.held)
            self.held = None

    def dumping(self, file: JavaFile, *, held: bool = False) -> None:
        self.held = None
        if held:
            self.held = f"Dumping {file.path}\n"
        else:
            self.out.write(f"Dumping {file.path}\n")

    def header(self, file: JavaFile, header: FileHeader) -> None:
        kind = header.kind
        if kind == "log":
            self._header_line(f"Log starting offset: {header.log_starting_offset}\n")
        elif kind == "bootstrap-snapshot":
            self._header_line("KRaft bootstrap snapshot\n")
        elif kind == "snapshot":
            self._header_line(f"Snapshot end offset: {header.snapshot_end_offset}, epoch: {header.epoch}\n")

    def failed(self) -> None:
        self.release()

    def ignored(self, file: JavaFile) -> None:
        self._to_err(f"Ignoring unknown file {file.path}\n")

    def deprecated_decoder(self, file: JavaFile, old: str, new: str) -> None:
        self._header_line(f"{old} is deprecated. Please use {new} instead\n")

    def _to_err(self, text: str) -> None:
        self.out.flush()
        self.err.write(text)
        self.err.flush()

    # -- logs --------------------------------------------------------------------------------------------------

    def message_parser(self, file: JavaFile) -> MessageParser:
        return message_parser(self.options, lambda old, new: self.deprecated_decoder(file, old, new))

    def log(self, file: JavaFile, parser: MessageParser) -> TextLog:
        return TextLog(self, file, parser)

    # -- indexes, snapshots, transaction indexes, state files --------------------------------------------------

    def empty_index(self, file: JavaFile) -> None:
        self.out.write(f"{file.path} is empty.\n")

    def sanity_check_passed(self, file: JavaFile) -> None:
        self.out.write(f"{file.path} passed sanity check.\n")

    def offset_index_entry(self, file: JavaFile, slot: int, offset: int, position: int) -> None:
        self.out.write(f"offset: {offset} position: {position}\n")

    def time_index_entry(self, file: JavaFile, slot: int, timestamp: int, offset: int) -> None:
        self.out.write(f"timestamp: {timestamp} offset: {offset}\n")

    def producer_snapshot(self, file: JavaFile, entries: Iterable[ProducerSnapshotEntry]) -> None:
        for entry in entries:
            self.out.write(kafka_text.producer_snapshot_line(entry))

    def corrupt_snapshot(self, file: JavaFile, message: str) -> None:
        self._to_err(message + "\n")

    def aborted_txns(self, file: JavaFile, txns: Iterable[AbortedTxn]) -> None:
        self.out.write("".join([kafka_text.aborted_txn_line(txn) for txn in txns]))

    def state_file(self, file: JavaFile, parsed: object) -> None:
        from kdump.render import state_files  # it loads every state file's reader: only when one is dumped

        self.out.write(state_files.text_lines(file.path, parsed))

    # -- end of run --------------------------------------------------------------------------------------------

    def summaries(self, findings: Findings) -> None:
        """Kafka's end-of-run reports, on standard error (the non-consecutive offsets in pieces: they may be
        millions)."""
        text = kafka_text.index_mismatch_summary(findings.index_mismatches) + kafka_text.time_index_summary(
            findings.time_mismatches, findings.time_out_of_order, findings.time_not_found
        )
        if text:
            self._to_err(text)
        for piece in kafka_text.non_consecutive_summary(findings.non_consecutive):
            self._to_err(piece)

    def error(self, error: KdumpError) -> None:
        """Nothing: the error is the ``kdump: ...`` line on standard error (:func:`kdump.cli.run_guarded`)."""


class TextLog:
    """Kafka's text for the batches of one ``.log``/``.checkpoint``."""

    #: :meth:`batch` takes no views (its generic lines decode keys and values whole); the whole-segment path
    #: (:meth:`render_batches`) asks for them itself
    takes_views = False

    def __init__(self, sink: KafkaTextSink, file: JavaFile, parser: MessageParser) -> None:
        options = sink.options
        self.sink = sink
        self.file = file
        self.parser = parser
        self.print_contents = options.should_print_data_log
        self.skip_metadata = options.skip_record_metadata
        self.header_values = options.print_header_values
        self.payload_extra = _payload_text_hook(options, file)
        self.control = kafka_text.control_describer(options.release)

    def segment_renderer(self, records: FileRecords, deep: bool) -> RenderChunk | None:
        """:meth:`render_batches` on ``records``; None where lines are not Kafka's alone (``--human-time``,
        ``--print-header-values``): those take the batches one by one."""
        if self.header_values or self.sink.options.human_time:
            return None

        def render(start: int, end: int | None, out: Output, gaps: OffsetGaps) -> int:
            return self.render_batches(records, deep, start, end, out, gaps)

        return render

    def render_batches(
        self, records: FileRecords, deep: bool, start: int, end: int | None, out: Output, gaps: OffsetGaps
    ) -> int:
        """Kafka's text for the batches in ``[start, end)``, into ``out``; returns where the last whole batch
        ends.  On an error, everything Kafka would have printed before dying is in ``out`` and the error,
        located at its batch, propagates."""
        print_contents = self.print_contents
        skip_metadata = self.skip_metadata
        parser = self.parser
        payload_extra = self.payload_extra
        control = self.control
        # big keys and values as views of the segment, their text written in pieces (Output.write_lines)
        views = payload_extra is None
        valid_bytes = start
        see = gaps.see
        batch = None
        tracked = None
        # shallow: the lines of runs of plain batches come from the C accelerator where it is built
        # (FileRecords.batches); batches are contiguous from start, so each is printed at its own position
        plain_end = start

        def plain_lines(text: str, next_position: int) -> None:
            nonlocal plain_end
            out.write(text)
            plain_end = next_position

        # deep: the record lines of a data batch (uncompressed, or compressed and decompressed whole) come whole
        # from the C accelerator where it is built, else from its pure-Python twin, when the lines are the fused
        # renderer's (kafka_text.record_renderer); both decline anything unusual (kafka_text.batch_record_lines)
        record_lines = (
            (record_batch.RECORD_LINES or kafka_text.record_lines)
            if deep and not skip_metadata and parser.is_string_parser and payload_extra is None
            else None
        )

        try:
            for batch in records.batches(start, end, lines=None if deep else plain_lines):
                if not deep:
                    valid_bytes = batch.position
                out.write(kafka_text.batch_line_head(batch))
                out.write(kafka_text.batch_line_tail(batch, valid_bytes))
                if record_lines is not None:
                    run = kafka_text.batch_record_lines(batch, record_lines, print_contents, STREAM_LINES)
                    if run is not None:
                        lines_text, first, last = run
                        gaps.see_run(first, last)
                        records.check_unchanged(batch.position)  # print nothing read from a vanished page
                        out.write(lines_text)
                        valid_bytes += batch.size_in_bytes
                        continue
                if deep:
                    render = kafka_text.record_renderer(
                        batch,
                        print_contents,
                        skip_metadata,
                        parser,
                        payload_extra=payload_extra,
                        control=control,
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
            cause = e.cause if isinstance(e, kafka_text.PartialLineError) else e
            error = located(cause, records, self.file.path, batch)
            if isinstance(e, kafka_text.PartialLineError):
                out.write(e.partial)  # what Kafka printed of the line before dying
            raise error from None
        return max(valid_bytes, plain_end)

    def batch(self, batch: RecordBatch, records: Iterable[Record] | None = None) -> None:
        """The batch's line and its records' lines, written once the records are read: a failure among them
        leaves nothing of the batch (but what a huge batch wrote every :data:`STREAM_LINES` lines)."""
        out = self.sink.out
        if records is None:
            self._head(batch)
            return
        render = kafka_text.record_renderer(
            batch,
            self.print_contents,
            self.skip_metadata,
            self.parser,
            header_values=self.header_values,
            payload_extra=self.payload_extra,
            control=self.control,
        )
        lines: list[str] = []
        head_written = False
        try:
            for record in records:
                lines.append(render(record))
                if len(lines) >= STREAM_LINES:  # a huge batch: write its text as it is made
                    if not head_written:
                        self._head(batch)
                        head_written = True
                    out.write_lines(lines)
                    lines.clear()
        except kafka_text.PartialLineError as e:
            raise e.cause from None
        if not head_written:
            self._head(batch)
        out.write_lines(lines)

    def _head(self, batch: RecordBatch) -> None:
        self.sink.release()
        self.sink.out.write(
            kafka_text.batch_line_head(batch) + kafka_text.batch_line_tail(batch, batch.position)
        )

    def invalid_bytes(self, count: int, position: int) -> None:
        self.sink.release()
        self.sink.out.write(kafka_text.trailing_bytes_line(count, self.file.name))


def _payload_text_hook(options: DumpOptions, file: JavaFile) -> Callable[[Any], str] | None:
    decoding = options.payload_decoding
    if decoding is None:
        return None
    from kdump.render.decoded_payload import text_hook

    return text_hook(decoding.decoder_for(file.path), decoding.keys, decoding.values)
