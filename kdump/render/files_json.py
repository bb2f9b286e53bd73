"""The JSON-lines sink of ``kdump files``' facts (:class:`kdump.facts.files.FilesSink`): one object per fact, in the
vocabulary of :mod:`kdump.render.json_lines` (man kdump-files, JSON).

A ``file`` object stands for Kafka's ``Dumping`` line and the file's header lines; the end-of-run findings are
objects on standard output too, and a stream that an error stopped ends with an ``error`` object.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from typing import Any

from kdump.errors import KdumpError
from kdump.facts.files import STREAM_LINES, DumpOptions, FileHeader, Findings, JavaFile, RenderChunk
from kdump.facts.output import Output
from kdump.render import json_lines
from kdump.render.decoders import MessageParser, message_parser
from kdump.storage.file_records import FileRecords, RecordBatch
from kdump.storage.producer_snapshot import ProducerSnapshotEntry
from kdump.storage.record import Record
from kdump.storage.transaction_index import AbortedTxn

#: The end-of-run findings: object type, field of :class:`Findings`, names of the pair's two numbers.
_FINDINGS = (
    ("indexMismatch", "index_mismatches", ("indexOffset", "logOffset")),
    ("timestampMismatch", "time_mismatches", ("indexTimestamp", "logTimestamp")),
    ("outOfOrderTimestamp", "time_out_of_order", ("indexTimestamp", "previousIndexTimestamp")),
    ("indexedOffsetNotFound", "time_not_found", ("indexOffset", "logOffset")),
    ("nonConsecutiveOffsets", "non_consecutive", ("offset", "nextOffset")),
)


class JsonLinesSink:
    """JSON lines on ``out``, with the options of ``options`` that choose what a record object carries
    (``--print-data-log`` and the decoders, ``--skip-record-metadata``, ``--decode-*``)."""

    def __init__(self, out: Output, options: DumpOptions) -> None:
        self.out = out
        self.options = options

    def dumping(self, file: JavaFile, *, held: bool = False) -> None:
        """Nothing yet: the ``file`` object comes with the file's kind (:meth:`header`)."""

    def header(self, file: JavaFile, header: FileHeader) -> None:
        values = {
            "logStartingOffset": header.log_starting_offset,
            "snapshotEndOffset": header.snapshot_end_offset,
            "epoch": header.epoch,
            "name": header.name,
        }
        self.out.write(
            json_lines.file_object(
                file.path, header.kind, **{k: v for k, v in values.items() if v is not None}
            )
        )

    def failed(self) -> None:
        """Nothing: the ``file`` object was written at once."""

    def ignored(self, file: JavaFile) -> None:
        self.out.write(json_lines.file_object(file.path, "unknown", ignored=True))

    def message_parser(self, file: JavaFile) -> MessageParser:
        return message_parser(self.options)

    def deprecated_decoder(self, file: JavaFile, old: str, new: str) -> None:
        """Nothing: Kafka 3.9's notice is text only (the decoders do not change the JSON)."""

    def log(self, file: JavaFile, parser: MessageParser) -> JsonLog:
        return JsonLog(self, file, parser)

    def empty_index(self, file: JavaFile) -> None:
        self.out.write(json_lines.fact("emptyIndex", file.path))

    def sanity_check_passed(self, file: JavaFile) -> None:
        self.out.write(json_lines.fact("sanityCheck", file.path, passed=True))

    def offset_index_entry(self, file: JavaFile, slot: int, offset: int, position: int) -> None:
        self.out.write(json_lines.offset_index_entry(file.path, slot, offset, position))

    def time_index_entry(self, file: JavaFile, slot: int, timestamp: int, offset: int) -> None:
        self.out.write(json_lines.time_index_entry(file.path, slot, timestamp, offset))

    def producer_snapshot(self, file: JavaFile, entries: Iterable[ProducerSnapshotEntry]) -> None:
        self.out.write("".join([json_lines.producer_snapshot_entry(file.path, e) for e in entries]))

    def corrupt_snapshot(self, file: JavaFile, message: str) -> None:
        self.out.write(json_lines.fact("corruptSnapshot", file.path, message=message))

    def aborted_txns(self, file: JavaFile, txns: Iterable[AbortedTxn]) -> None:
        self.out.write("".join([json_lines.aborted_txn(file.path, txn) for txn in txns]))

    def state_file(self, file: JavaFile, parsed: object) -> None:
        from kdump.render import state_files  # it loads every state file's reader: only when one is dumped

        self.out.write(state_files.json_lines(file.path, parsed))

    def summaries(self, findings: Findings) -> None:
        """The findings, a line each, written as they are read (the non-consecutive offsets may be millions)."""
        write = self.out.write
        for kind, name, (a_name, b_name) in _FINDINGS:
            for path, pairs in getattr(findings, name):
                for a, b in pairs:
                    write(json_lines.fact(kind, path, **{a_name: a, b_name: b}))

    def error(self, error: KdumpError) -> None:
        self.out.write(json_lines.error_object(error))


class JsonLog:
    """The batch and record objects of one ``.log``/``.checkpoint``."""

    def __init__(self, sink: JsonLinesSink, file: JavaFile, parser: MessageParser) -> None:
        options = sink.options
        self.out = sink.out
        self.file = file
        self.parser = parser
        self.print_contents = options.should_print_data_log
        self.skip_metadata = options.skip_record_metadata
        self.payload_json = _payload_json_hook(options, file)
        self.context = json_lines.record_context(file.path, file.absolute_path)

    def segment_renderer(self, records: FileRecords, deep: bool) -> RenderChunk | None:
        """None: batches one by one."""
        return None

    def batch(self, batch: RecordBatch, records: Iterable[Record] | None = None) -> None:
        """The batch object and its records' objects, written once the records are read (a failure among them
        leaves nothing of the batch but what a huge batch wrote every :data:`STREAM_LINES` records)."""
        if records is None:
            self.out.write(json_lines.batch_line(batch, batch.position, self.file.path))
            return
        render = json_lines.record_renderer(
            batch,
            self.print_contents,
            self.skip_metadata,
            self.parser,
            decoder=getattr(self.parser, "decoder", None),
            payload_json=self.payload_json,
            context=self.context,
        )
        lines: list[str] = []
        head_written = False
        for record in records:
            lines.append(render(record))
            if len(lines) >= STREAM_LINES:
                if not head_written:
                    self.out.write(json_lines.batch_line(batch, batch.position, self.file.path))
                    head_written = True
                self.out.write("".join(lines))
                lines.clear()
        if not head_written:
            self.out.write(json_lines.batch_line(batch, batch.position, self.file.path))
        self.out.write("".join(lines))

    def invalid_bytes(self, count: int, position: int) -> None:
        self.out.write(json_lines.fact("invalidBytes", self.file.path, bytes=count, position=position))


def _payload_json_hook(options: DumpOptions, file: JavaFile) -> Callable[[Any, dict[str, Any]], None] | None:
    decoding = options.payload_decoding
    if decoding is None:
        return None
    from kdump.render.decoded_payload import json_hook

    return json_hook(decoding.decoder_for(file.path), decoding.keys, decoding.values)
