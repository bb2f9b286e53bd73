"""Reading one split into Arrow record batches (pyarrow only; this is what each Spark task runs).

Records come from the storage core (``FileRecords.batches`` and ``batch.records()``).  Columns are gathered
as Python lists per group of batches and turned into Arrow arrays once per output batch; the batch-level
columns are stored once per Kafka batch and expanded in Arrow (``take``), and the per-split constants
(``topic``, ``partition``, ``segment``) are repeated in Arrow, so the per-record Python work is four list
appends (five with headers).

Damage is handled batch by batch, per the ``corruptBatches`` policy:

* a batch whose CRC does not match, whose magic is unknown, or whose records cannot be decoded (bad
  compression stream, bad record structure) is *skipped and reported* by default, kept (CRC failures that
  still decode only) with ``keep``, or fails the task with ``fail``;
* a batch whose framing is broken (size field below 14) ends the split there, and a tail that is not a whole
  batch (a torn write) is reported; with ``fail`` both fail the task.

A report is one line on the task's standard error (``kdump kafka-log: ...``, in the executor log) and, when
``corruptReportDir`` is set, one JSON object appended to a file of that directory.
"""

from __future__ import annotations

import json
import os
import sys
import uuid
from collections.abc import Iterator
from itertools import repeat
from operator import attrgetter
from typing import Any

import pyarrow as pa
import pyarrow.compute as pc

from kdump.analysis.consumer_view import ReadCommittedFilter
from kdump.errors import KdumpError
from kdump.jdk.text import decode_utf8_jdk
from kdump.spark.options import ReadOptions
from kdump.spark.planning import Split
from kdump.spark.schema import arrow_schema
from kdump.storage.file_records import FileRecords, RecordBatch
from kdump.storage.record import Record, check_object_headers
from kdump.storage.timestamp_type import CREATE_TIME, LOG_APPEND_TIME

_TIMESTAMP_TYPE = {CREATE_TIME: 0, LOG_APPEND_TIME: 1}
_BYTES_PER_BATCH = 64 * 1024 * 1024
_TS_TYPE = pa.timestamp("us", tz="UTC")
_get_key = attrgetter("key")
_get_value = attrgetter("value")
_get_offset = attrgetter("offset")
_get_timestamp = attrgetter("timestamp")


class CorruptBatchError(KdumpError):
    """A damaged batch met under ``corruptBatches=fail``."""


class Reporter:
    """Reports damaged batches of one split (stderr, and a JSON-lines file when a directory is given)."""

    def __init__(self, split: Split, options: ReadOptions) -> None:
        self.split = split
        self.options = options
        self.count = 0
        self._file: Any = None

    def __call__(self, kind: str, message: str, position: int | None, offset: int | None = None) -> None:
        self.count += 1
        split = self.split
        where = split.path if position is None else f"{split.path}: byte {position}"
        if self.options.corrupt == "fail":
            raise CorruptBatchError(f"{kind}: {message}", path=split.path, position=position)
        verb = "kept" if kind == "crc" and self.options.corrupt == "keep" else "skipped"
        if self.options.report_stderr:
            print(f"kdump kafka-log: {where}: {verb}: {kind}: {message}", file=sys.stderr)
        if self.options.report_dir:
            if self._file is None:
                os.makedirs(self.options.report_dir, exist_ok=True)
                name = f"{split.topic}-{split.partition}-{split.segment_base_offset}-{uuid.uuid4().hex}.jsonl"
                self._file = open(os.path.join(self.options.report_dir, name), "a", encoding="utf-8")  # noqa: SIM115
            row = {
                "topic": split.topic,
                "partition": split.partition,
                "segment": split.path,
                "position": position,
                "offset": offset,
                "kind": kind,
                "action": verb,
                "message": message,
            }
            self._file.write(json.dumps(row) + "\n")
            self._file.flush()

    def close(self) -> None:
        if self._file is not None:
            self._file.close()
            self._file = None


def _decoded(decoder: str, record: Record) -> str:
    """The decoded column: :func:`kdump.render.internal_topics.decode_jsonable` as JSON text (never fails: a
    record that does not decode gives ``{"decoder": ..., "error": ...}``)."""
    from kdump.render.internal_topics import decode_jsonable

    return json.dumps(decode_jsonable(decoder, record.key, record.value), ensure_ascii=False)


class _PayloadColumns:
    """``decodedKey``, ``decodedValue`` and ``decodeNotes`` (schema-registry payloads) of the rows so far."""

    def __init__(self, segment: str, options: ReadOptions) -> None:
        from kdump.render.decoded_payload import to_json

        assert options.payload is not None
        self.decoder = options.payload.decoder_for(segment)
        self.keys_wanted = options.payload.keys
        self.values_wanted = options.payload.values
        self.struct_id = options.value_schema_id
        self.kind = options.value_kind
        self.to_json = to_json
        self.keys: list[str | None] = []
        self.values: list[Any] = []
        self.notes: list[str | None] = []

    def _part(self, part: str, data: bytes | None, notes: list[str], struct: bool) -> Any:
        if data is None:
            return None
        d = self.decoder.decode(data)
        if d.note is not None:
            notes.append(f"{part}: {d.note}" if d.has_value else f"{part} not decoded: {d.note}")
        if not d.has_value:
            return None
        if struct:
            if d.schema_id != self.struct_id:
                notes.append(f"{part}: schema id {d.schema_id}, not the valueSchemaId {self.struct_id}")
                return None
            from kdump.payload.spark_types import to_column_value

            return to_column_value(self.kind, d.value, self.to_json)
        return self.to_json(d.value)

    def add(self, records: list) -> None:
        struct = self.kind is not None
        for r in records:
            notes: list[str] = []
            if self.keys_wanted:
                self.keys.append(self._part("key", r.key, notes, False))
            if self.values_wanted:
                self.values.append(self._part("value", r.value, notes, struct))
            self.notes.append("; ".join(notes) if notes else None)

    def flush(self, schema: pa.Schema) -> list[pa.Array]:
        arrays = []
        if self.keys_wanted:
            arrays.append(pa.array(self.keys, pa.string()))
        if self.values_wanted:
            arrays.append(pa.array(self.values, schema.field("decodedValue").type))
        arrays.append(pa.array(self.notes, pa.string()))
        self.keys, self.values, self.notes = [], [], []
        return arrays


class _Columns:
    """Column lists of the rows gathered so far."""

    def __init__(
        self,
        split: Split,
        include_headers: bool,
        decoder: str | None = None,
        options: ReadOptions | None = None,
    ) -> None:
        self.split = split
        self.include_headers = include_headers
        self.decoder = decoder
        read = options if options is not None else ReadOptions()
        self.payload = None if read.payload is None else _PayloadColumns(split.path, read)
        self.schema = arrow_schema(
            include_headers, decoder is not None, read.payload_columns, read.value_kind
        )
        self._reset()

    def _reset(self) -> None:
        self.keys: list[bytes | None] = []
        self.values: list[bytes | None] = []
        self.offsets: list[int] = []
        self.timestamps: list[int] = []
        self.headers: list[Any] = []
        self.decoded: list[str] = []
        self.batch_index: list[int] = []
        # one entry per Kafka batch
        self.per_batch: list[tuple] = []
        self.bytes = 0

    @property
    def rows(self) -> int:
        return len(self.offsets)

    def add(self, batch: RecordBatch, records: list, crc_valid: bool) -> None:
        n = len(records)
        self.keys.extend(map(_get_key, records))
        self.values.extend(map(_get_value, records))
        self.offsets.extend(map(_get_offset, records))
        self.timestamps.extend(map(_get_timestamp, records))
        if self.include_headers:
            self.headers.extend(map(_headers, records))
        if self.decoder is not None:
            self.decoded.extend(_decoded(self.decoder, r) for r in records)
        if self.payload is not None:
            self.payload.add(records)
        self.batch_index.extend(repeat(len(self.per_batch), n))
        self.per_batch.append(
            (
                _TIMESTAMP_TYPE.get(batch.timestamp_type, -1),
                batch.position,
                batch.base_offset,
                batch.magic,
                batch.producer_id,
                batch.producer_epoch,
                batch.base_sequence,
                batch.is_transactional,
                batch.is_control_batch,
                batch.compression_name,
                crc_valid,
                batch.partition_leader_epoch,
            )
        )
        last = records[-1]
        self.bytes += last.position + last.size_in_bytes - records[0].position

    def flush(self) -> pa.RecordBatch:
        n = self.rows
        split = self.split
        batch_index = self.batch_index
        built: list[pa.Array] = []

        def index() -> pa.Array:
            if not built:
                built.append(pa.array(batch_index, pa.int32()))
            return built[0]

        per_batch = list(zip(*self.per_batch, strict=True))
        (ts_type, position, base, magic, pid, epoch, seq, txn, control, codec, crc, ple) = per_batch

        def expand(values: tuple, type_: pa.DataType) -> pa.Array:
            first = values[0]
            if values.count(first) == len(values):  # the same in every batch: no per-row work
                return pa.repeat(pa.scalar(first, type_), n)
            return pa.array(values, type_).take(index())

        timestamps = pc.multiply(pa.array(self.timestamps, pa.int64()), 1000).view(_TS_TYPE)
        arrays = [
            pa.array(self.keys, pa.binary()),
            pa.array(self.values, pa.binary()),
            pa.repeat(pa.scalar(split.topic, pa.string()), n),
            pa.repeat(pa.scalar(split.partition, pa.int32()), n),
            pa.array(self.offsets, pa.int64()),
            timestamps,
            expand(ts_type, pa.int32()),
        ]
        if self.include_headers:
            arrays.append(pa.array(self.headers, self.schema.field("headers").type))
        if self.decoder is not None:
            arrays.append(pa.array(self.decoded, pa.string()))
        if self.payload is not None:
            arrays += self.payload.flush(self.schema)
        arrays += [
            pa.repeat(pa.scalar(split.path, pa.string()), n),
            expand(position, pa.int64()),
            expand(base, pa.int64()),
            expand(magic, pa.int32()),
            expand(pid, pa.int64()),
            expand(epoch, pa.int32()),
            expand(seq, pa.int32()),
            expand(txn, pa.bool_()),
            expand(control, pa.bool_()),
            expand(codec, pa.string()),
            expand(crc, pa.bool_()),
            expand(ple, pa.int32()),
        ]
        self._reset()
        return pa.RecordBatch.from_arrays(arrays, schema=self.schema)


def _headers(record: Record) -> list[dict[str, Any]] | None:
    headers = record.headers
    if not headers:
        return None
    check_object_headers(record)
    return [{"key": decode_utf8_jdk(h.key), "value": h.value} for h in headers]


def read_split(split: Split, options: ReadOptions) -> Iterator[pa.RecordBatch]:
    """The records of ``split`` as Arrow record batches with :func:`kdump.spark.schema.arrow_schema`."""
    report = Reporter(split, options)
    try:
        yield from _read(split, options, report)
    finally:
        report.close()


def _read(split: Split, options: ReadOptions, report: Reporter) -> Iterator[pa.RecordBatch]:
    columns = _Columns(split, options.include_headers, options.decoder, options)
    rows_per_batch = options.rows_per_batch
    keep_bad_crc = options.corrupt == "keep"
    start_offset = split.start_offset
    end_offset = split.end_offset
    committed: ReadCommittedFilter | None = None
    with FileRecords(split.path) as records:
        end = records.size_in_bytes if split.end_position is None else split.end_position
        batches = records.batches(split.start_position, end)
        reached = split.start_position
        broken = False
        while True:
            try:
                batch = next(batches)
            except StopIteration:
                break
            except KdumpError as e:
                report("framing", e.message, e.position if e.position is not None else reached)
                broken = True
                break
            reached = batch.position + batch.size_in_bytes
            if start_offset is not None and batch.last_offset < start_offset:
                continue
            if end_offset is not None and batch.base_offset >= end_offset:
                broken = True  # not damage: the range ends here
                break
            if batch.magic > 2:
                report("magic", f"unknown magic {batch.magic}", batch.position, batch.base_offset)
                continue
            crc_valid = batch.is_valid()
            if not crc_valid:
                report(
                    "crc",
                    f"CRC mismatch (stored {batch.checksum}, computed {batch.compute_checksum()})",
                    batch.position,
                    batch.base_offset,
                )
                if not keep_bad_crc:
                    continue
            try:
                if options.read_committed:
                    if committed is None:
                        fetch = max(batch.base_offset, start_offset or 0)
                        committed = ReadCommittedFilter(
                            (t for t in split.aborted if t.last_offset >= fetch), split.last_stable_offset
                        )
                    if not committed.accept(batch):
                        continue
                if batch.is_control_batch and not options.include_control:
                    continue  # a consumer never returns control records
                found = list(batch.records())
            except KdumpError as e:
                report("decode", e.message, batch.position, batch.base_offset)
                continue
            if not found:
                continue
            if (start_offset is not None and batch.base_offset < start_offset) or (
                end_offset is not None and batch.last_offset >= end_offset
            ):
                lo = start_offset if start_offset is not None else -(1 << 63)
                hi = end_offset if end_offset is not None else 1 << 63
                found = [r for r in found if lo <= r.offset < hi]
                if not found:
                    continue
            columns.add(batch, found, crc_valid)
            if columns.rows >= rows_per_batch or columns.bytes >= _BYTES_PER_BATCH:
                yield columns.flush()
        invalid = records.invalid_bytes(reached, end)
        if not broken and invalid > 0:
            report("torn-tail", f"the last {invalid} bytes are not a whole batch", reached)
    if columns.rows:
        yield columns.flush()
