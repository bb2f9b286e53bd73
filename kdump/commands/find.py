"""``kdump find``: where an offset or a timestamp is in a partition (:mod:`kdump.storage.log_search`), printed as
text (the batch in ``kafka-dump-log.sh``'s format) or as one JSON object.  See ``man kdump-find``."""

from __future__ import annotations

import json
import os
from typing import TYPE_CHECKING, Any

from kdump.errors import KdumpError, UsageError
from kdump.exit_status import ExitStatus
from kdump.render import kafka_text
from kdump.render.decoders import DEFAULT_DECODER_CLASS, DecoderMessageParser, resolve_decoder
from kdump.render.json_lines import JSON_SCHEMA_VERSION, headers_json, put_bytes
from kdump.render.output import Output
from kdump.storage import naming
from kdump.storage.local_log import LocalLog, is_partition_dir
from kdump.storage.log_search import (
    BELOW_START,
    BEYOND_END,
    EMPTY,
    FOUND,
    GAP,
    NOT_FOUND,
    LogStart,
    SearchResult,
    find_offset,
    find_timestamp,
)

if TYPE_CHECKING:
    from kdump.payload.sources import PayloadDecoding


def resolve_partition_dir(path: str, topic: str | None, partition: int | None) -> str:
    """The partition directory to search: ``path`` itself (or the directory of a segment file), or
    ``path/<topic>-<partition>`` when a topic and partition are given.  UsageError when that is not one."""
    if (topic is None) != (partition is None):
        raise UsageError("--topic and --partition go together")
    if topic is not None:
        directory = os.path.join(path, naming.partition_dir_name(topic, partition or 0))
        if not os.path.isdir(directory):
            raise UsageError(f"{directory}: no such partition directory")
        return directory
    if os.path.isfile(path):
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
        *,
        offset: int | None = None,
        timestamp: int | None = None,
        print_data_log: bool = False,
        as_json: bool = False,
        log_start_offset: int | None = None,
        payload_decoding: PayloadDecoding | None = None,
        out: Output,
        err: Output,
    ) -> None:
        self.directory = directory
        self.offset = offset
        self.timestamp = timestamp
        self.print_data_log = print_data_log
        self.as_json = as_json
        self.log_start_offset = log_start_offset
        #: ``--decode-values``/``--decode-keys schema-registry`` (:mod:`kdump.payload`)
        self.payload_decoding = payload_decoding
        self.out = out
        self.err = err

    def run(self) -> int:
        result = self.search()
        message = self.message(result)
        if self.as_json:
            self.out.write(json.dumps(self.json_object(result, message), ensure_ascii=False) + "\n")
        elif result.batch is not None:
            self.out.write(self.text(result))
        self.out.flush()
        for note in result.notes:
            self.err.write(f"kdump: note: {note}\n")
        if message is not None:
            self.err.write(f"kdump: {message}\n")
        self.err.flush()
        return ExitStatus.OK if result.status == FOUND else ExitStatus.PROBLEMS

    def search(self) -> SearchResult:
        try:
            log = LocalLog.scan(self.directory)
        except OSError as e:
            raise KdumpError(e.strerror or str(e), path=self.directory) from None
        start = None if self.log_start_offset is None else LogStart(self.log_start_offset, "given")
        if self.offset is not None:
            return find_offset(log, self.offset, start)
        assert self.timestamp is not None
        return find_timestamp(log, self.timestamp, start)

    # -- text ------------------------------------------------------------------------------------------------

    def text(self, result: SearchResult) -> str:
        assert result.batch is not None and result.segment is not None and result.position is not None
        lines = []
        if result.kind == "timestamp" and result.record is not None:
            lines.append(f"offset: {result.record.offset} timestamp: {result.record.timestamp}\n")
        lines.append(f"segment: {result.segment.log_path} baseOffset: {result.segment.base_offset}\n")
        if result.kind == "timestamp":
            entry = result.time_index_entry
            if entry is None:
                lines.append(
                    "timeIndexEntry: none (no usable time index: scanned from the segment's first byte)\n"
                )
            elif entry.slot < 0:
                lines.append(
                    f"timeIndexEntry: none ({result.segment.time_index_path} has no entry at or below the "
                    f"timestamp: scan from offset {entry.offset})\n"
                )
            else:
                lines.append(
                    f"timeIndexEntry: {result.segment.time_index_path} slot: {entry.slot} timestamp: "
                    f"{entry.timestamp} offset: {entry.offset}\n"
                )
        index = result.index_entry
        if index is None:
            lines.append("indexEntry: none (no usable offset index: scanned from the segment's first byte)\n")
        elif index.slot < 0:
            lines.append(
                f"indexEntry: none ({result.segment.index_path} has no entry at or below the offset: scan from "
                "position 0)\n"
            )
        else:
            lines.append(
                f"indexEntry: {result.segment.index_path} slot: {index.slot} offset: {index.offset} position: "
                f"{index.position}\n"
            )
        batch = result.batch
        lines.append(kafka_text.batch_line_head(batch) + kafka_text.batch_line_tail(batch, result.position))
        if self.print_data_log and result.record is not None:
            extra = None
            if self.payload_decoding is not None:
                from kdump.render.decoded_payload import text_hook

                decoding = self.payload_decoding
                extra = text_hook(
                    decoding.decoder_for(result.segment.log_path), decoding.keys, decoding.values
                )
            render = kafka_text.record_renderer(batch, True, False, _string_parser(), payload_extra=extra)
            lines.append(render(result.record))
        return "".join(lines)

    def message(self, result: SearchResult) -> str | None:
        """The line explaining a result that is not a plain hit (None for a hit)."""
        where = self.directory
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
                return (
                    f"no record in {where} has a timestamp at or after {result.target}: the largest timestamp "
                    f"is {result.largest_timestamp}"
                )
            return (
                f"no record in {where} at or after the log start offset {result.log_start_offset} has a timestamp "
                f"at or after {result.target}"
            )
        return f"{where}: {status}"

    # -- JSON -------------------------------------------------------------------------------------------------

    def json_object(self, result: SearchResult, message: str | None) -> dict[str, Any]:
        segment = result.segment
        batch = result.batch
        record = result.record
        obj: dict[str, Any] = {
            "type": "location",
            "version": JSON_SCHEMA_VERSION,
            "partition": self.directory,
            "status": result.status,
            "found": result.status == FOUND,
            "gap": result.status == GAP,
            "requested": {result.kind: result.target},
            "logStartOffset": result.log_start_offset,
            "segment": None if segment is None else segment.log_path,
            "segmentBaseOffset": None if segment is None else segment.base_offset,
            "indexEntry": None,
            "position": result.position,
            "baseOffset": None,
            "lastOffset": None,
            "size": None,
            "magic": None,
            "maxTimestamp": None,
            "timestampType": None,
            "offset": None if record is None else record.offset,
            "timestamp": None if record is None else record.timestamp,
        }
        if result.index_entry is not None and segment is not None:
            e = result.index_entry
            obj["indexEntry"] = {
                "file": segment.index_path,
                "slot": e.slot if e.slot >= 0 else None,
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
                    "slot": t.slot if t.slot >= 0 else None,
                    "timestamp": t.timestamp,
                    "offset": t.offset,
                }
            )
            obj["largestTimestamp"] = result.largest_timestamp
        if batch is not None:
            base_offset = batch.base_offset
            if batch.magic < 2:
                first = next(iter(batch.records()), None)
                base_offset = first.offset if first is not None else batch.last_offset
            obj.update(
                baseOffset=base_offset,
                lastOffset=batch.last_offset,
                size=batch.size_in_bytes,
                magic=batch.magic,
                maxTimestamp=batch.max_timestamp,
                timestampType=batch.timestamp_type,
            )
        if result.status == BEYOND_END:
            obj["logEndOffset"] = result.log_end_offset
        if self.print_data_log and record is not None:
            found: dict[str, Any] = {"offset": record.offset, "timestamp": record.timestamp}
            put_bytes(found, "key", record.key)
            put_bytes(found, "value", record.value)
            found["headers"] = headers_json(record)
            if self.payload_decoding is not None and result.segment is not None:
                from kdump.render.decoded_payload import json_hook

                decoding = self.payload_decoding
                json_hook(decoding.decoder_for(result.segment.log_path), decoding.keys, decoding.values)(
                    record, found
                )
            obj["record"] = found
        obj["scannedBytes"] = result.scanned_bytes
        obj["notes"] = list(result.notes)
        obj["message"] = message
        return obj


def _string_parser() -> DecoderMessageParser:
    decoder = resolve_decoder(DEFAULT_DECODER_CLASS)
    return DecoderMessageParser(decoder, decoder)
