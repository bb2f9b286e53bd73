"""The sinks of ``kdump find``'s facts (:mod:`kdump.commands.find`): text and one JSON object.

Text, on standard output when the search landed on a batch: the record found (for a timestamp), the segment,
the index entries used, the batch line as ``kafka-dump-log.sh`` prints it and, with ``--print-data-log``, the
record line (both from :mod:`kdump.render.kafka_text`).  JSON: one ``location`` object, also for misses.  Both
then write the search's notes and the line explaining a miss on standard error.  See man kdump-find.
"""

from __future__ import annotations

import os
from typing import TYPE_CHECKING, Any

from kdump.analysis.log_search import BELOW_START, BEYOND_END, EMPTY, FOUND, GAP, NOT_FOUND
from kdump.errors import KdumpError
from kdump.facts.output import Output
from kdump.render import json_lines, kafka_text
from kdump.render.decoders import DEFAULT_DECODER_CLASS, DecoderMessageParser, resolve_decoder
from kdump.render.safe_text import safe_text

if TYPE_CHECKING:
    from kdump.facts.find import Location, RemoteChunk
    from kdump.payload.sources import PayloadDecoding
    from kdump.storage.file_records import RecordBatch
    from kdump.storage.record import Record


def message(location: Location) -> str | None:
    """The line explaining a result that is not a plain hit (None for a hit)."""
    result = location.search
    where = location.partition
    status = result.status
    if status == FOUND:
        return None
    if status == EMPTY:
        return f"{where}: no log segments (.log files) here"
    if status == BELOW_START:
        return (
            f"offset {result.target} is below the log start offset {result.log_start_offset} of {where} "
            f"(from {result.log_start_source}); records below it may still be on disk but are no longer "
            "part of the log (--log-start-offset overrides it)"
        )
    if status == BEYOND_END:
        return (
            f"offset {result.target} is beyond the end of {where}: the log end offset (the next offset to be "
            f"written) is {result.log_end_offset}"
        )
    if status == GAP:
        next_offset = result.record.offset if result.record is not None else None
        follow = (
            f"the next record is offset {next_offset}, in the batch shown"
            if next_offset is not None
            else "the batch shown, the next one, holds no records"
        )
        return (
            f"offset {result.target} is not in {where}: no record has it (removed by compaction, or never "
            f"written); {follow}"
        )
    if status == NOT_FOUND:
        if result.largest_timestamp is not None and result.largest_timestamp < 0:
            return f"no record in {where} has a timestamp (magic 0 messages have none)"
        if result.largest_timestamp is not None:
            from kdump.render.human_time import iso

            return (
                f"no record in {where} has a timestamp at or after {result.target} ({iso(result.target)}): the "
                f"largest timestamp is {result.largest_timestamp} ({iso(result.largest_timestamp)})"
            )
        return (
            f"no record in {where} at or after the log start offset {result.log_start_offset} has a timestamp "
            f"at or after {result.target}"
        )
    return f"{where}: {status}"


def location_lines(location: Location) -> str:
    """The lines before the batch line: the record found (for a timestamp), the segment and the index entries
    used (kdump's own lines: control characters in the paths escaped)."""
    result = location.search
    assert result.segment is not None
    lines = []
    if result.kind == "timestamp" and result.record is not None:
        lines.append(f"offset: {result.record.offset} timestamp: {result.record.timestamp}")
    lines.append(f"segment: {result.segment.log_path} baseOffset: {result.segment.base_offset}")
    if result.kind == "timestamp":
        entry = result.time_index_entry
        if entry is None:
            lines.append("timeIndexEntry: none (no usable time index: scanned from the segment's first byte)")
        elif entry.slot < 0:
            lines.append(
                f"timeIndexEntry: none ({result.segment.time_index_path} has no entry at or below the "
                f"timestamp: scan from offset {entry.offset})"
            )
        else:
            lines.append(
                f"timeIndexEntry: {result.segment.time_index_path} slot: {entry.slot} timestamp: "
                f"{entry.timestamp} offset: {entry.offset}"
            )
    index = result.index_entry
    if index is None:
        lines.append("indexEntry: none (no usable offset index: scanned from the segment's first byte)")
    elif index.slot < 0:
        lines.append(
            f"indexEntry: none ({result.segment.index_path} has no entry at or below the offset: scan from "
            "position 0)"
        )
    else:
        lines.append(
            f"indexEntry: {result.segment.index_path} slot: {index.slot} offset: {index.offset} position: "
            f"{index.position}"
        )
    chunk = location.chunk
    if chunk is not None:
        lines.append(
            f"chunk: {chunk.index} of {chunk.count} in {chunk.object} bytes: {chunk.start}-{chunk.end - 1} "
            f"({_transforms(chunk)}) holding segment bytes: {chunk.original_start}-{chunk.original_end - 1} "
            f"batch at byte: {chunk.byte}"
        )
    return "".join(safe_text(line) + "\n" for line in lines)


def _transforms(chunk: RemoteChunk) -> str:
    """How a chunk's bytes were transformed (Aiven's ``KafkaRemoteStorageManager.transformation``)."""
    done = [name for name, on in (("zstd", chunk.compression), ("AES-256-GCM", chunk.encryption)) if on]
    return ", then ".join(done) if done else "neither compressed nor encrypted"


class _Sink:
    def __init__(self, out: Output, err: Output, payload_decoding: PayloadDecoding | None = None) -> None:
        self.out = out
        self.err = err
        #: ``--decode-values``/``--decode-keys schema-registry`` (:mod:`kdump.payload`)
        self.payload_decoding = payload_decoding

    def end(self, location: Location) -> None:
        """The notes and the line explaining a miss, on standard error after standard output."""
        self.out.flush()
        for note in location.search.notes:
            self.err.write(f"kdump: note: {safe_text(note)}\n")
        text = message(location)
        if text is not None:
            self.err.write(f"kdump: {safe_text(text)}\n")
        self.err.flush()


class TextSink(_Sink):
    """The lines on standard output, written at the end of the run (nothing when an error stops it)."""

    def __init__(self, out: Output, err: Output, payload_decoding: PayloadDecoding | None = None) -> None:
        super().__init__(out, err, payload_decoding)
        self.parts: list[str] = []

    def location(self, location: Location) -> None:
        if location.search.batch is not None:
            self.parts.append(location_lines(location))

    def batch(self, location: Location, batch: RecordBatch) -> None:
        position = location.search.position
        assert position is not None
        self.parts.append(kafka_text.batch_line_head(batch) + kafka_text.batch_line_tail(batch, position))

    def record(self, location: Location, record: Record) -> None:
        segment = location.search.segment
        batch = location.search.batch
        assert segment is not None and batch is not None
        extra = None
        if self.payload_decoding is not None:
            from kdump.render.decoded_payload import text_hook

            decoding = self.payload_decoding
            extra = text_hook(decoding.decoder_for(segment.log_path), decoding.keys, decoding.values)
        render = kafka_text.record_renderer(batch, True, False, _string_parser(), payload_extra=extra)
        try:
            self.parts.append(render(record))
        except kafka_text.PartialLineError as e:
            raise _located(location, e.cause) from None
        except KdumpError as e:
            raise _located(location, e) from None

    def end(self, location: Location) -> None:
        self.out.write_lines(self.parts)  # a record of many headers is a LargeLine, written in pieces
        super().end(location)


class JsonSink(_Sink):
    """One ``location`` object, written at the end of the run, in the vocabulary of ``kdump files --json``
    (:mod:`kdump.render.json_lines`): the answer's batch is a ``batch`` object and its record a ``record``
    object, as ``kdump files --json`` writes them; index entries name their slot ``entry``."""

    def __init__(self, out: Output, err: Output, payload_decoding: PayloadDecoding | None = None) -> None:
        super().__init__(out, err, payload_decoding)
        self.obj: dict[str, Any] = {}

    def location(self, location: Location) -> None:
        result = location.search
        segment = result.segment
        record = result.record
        obj = json_lines.head(
            "location",
            directory=location.partition,
            status=result.status,
            found=result.status == FOUND,
            gap=result.status == GAP,
            requested={result.kind: result.target},
            logStartOffset=result.log_start_offset,
            segment=None if segment is None else segment.log_path,
            segmentBaseOffset=None if segment is None else segment.base_offset,
            indexEntry=None,
        )
        if result.index_entry is not None and segment is not None:
            e = result.index_entry
            obj["indexEntry"] = {
                "file": segment.index_path,
                "entry": e.slot if e.slot >= 0 else None,
                "offset": e.offset,
                "position": e.position,
            }
        if result.kind == "timestamp":
            t = result.time_index_entry
            obj["timeIndexEntry"] = (
                None
                if t is None or segment is None
                else {
                    "file": segment.time_index_path,
                    "entry": t.slot if t.slot >= 0 else None,
                    "timestamp": t.timestamp,
                    "offset": t.offset,
                }
            )
            obj["largestTimestamp"] = result.largest_timestamp
        chunk = location.chunk
        if chunk is not None:
            obj["chunk"] = {
                "object": chunk.object,
                "index": chunk.index,
                "chunks": chunk.count,
                "position": chunk.start,
                "size": chunk.end - chunk.start,
                "codec": "zstd" if chunk.compression else None,
                "cipher": "AES-256-GCM" if chunk.encryption else None,
                "segmentPosition": chunk.original_start,
                "segmentSize": chunk.original_end - chunk.original_start,
                "byte": chunk.byte,
            }
        obj["position"] = result.position
        obj["offset"] = None if record is None else record.offset
        obj["timestamp"] = None if record is None else record.timestamp
        obj["batch"] = None
        if result.status == BEYOND_END:
            obj["logEndOffset"] = result.log_end_offset
        self.obj = obj

    def batch(self, location: Location, batch: RecordBatch) -> None:
        result = location.search
        assert result.segment is not None and result.position is not None
        self.obj["batch"] = json_lines.batch_object(batch, result.position, result.segment.log_path)

    def record(self, location: Location, record: Record) -> None:
        result = location.search
        segment = result.segment
        assert segment is not None and result.batch is not None
        payload_json = None
        if self.payload_decoding is not None:
            from kdump.render.decoded_payload import json_hook

            decoding = self.payload_decoding
            payload_json = json_hook(decoding.decoder_for(segment.log_path), decoding.keys, decoding.values)
        to_object = json_lines.record_object_renderer(
            result.batch,
            True,
            False,
            _string_parser(),
            payload_json=payload_json,
            context=json_lines.record_context(segment.log_path, os.path.abspath(segment.log_path)),
        )
        try:
            self.obj["record"] = to_object(record)
        except KdumpError as e:
            raise _located(location, e) from None

    def end(self, location: Location) -> None:
        result = location.search
        obj = self.obj
        obj["scannedBytes"] = result.scanned_bytes
        obj["notes"] = list(result.notes)
        obj["message"] = message(location)
        self.out.write(json_lines.line(obj))
        super().end(location)


def _located(location: Location, error: KdumpError) -> KdumpError:
    """A record that cannot be shown (a control record with a null or short key, an end-transaction value under
    6 bytes, a field running past the end of its message) stops the run as it stops ``kdump files``: one
    line naming the segment and the byte position of the record's batch (``kdump files``' ``located``)."""
    segment = location.search.segment
    return error.located(None if segment is None else segment.log_path, location.search.position)


def _string_parser() -> DecoderMessageParser:
    decoder = resolve_decoder(DEFAULT_DECODER_CLASS)
    return DecoderMessageParser(decoder, decoder)
