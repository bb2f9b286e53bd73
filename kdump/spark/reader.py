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
from collections.abc import Generator, Iterable, Iterator
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
from kdump.storage import compression
from kdump.storage.checksum import crc32c
from kdump.storage.file_records import INT_MAX, FileRecords, RecordBatch
from kdump.storage.locations import is_url
from kdump.storage.record import Record, check_object_headers
from kdump.storage.record_batch import (
    COMPRESSION_CODEC_MASK,
    CONTROL_FLAG_MASK,
    RECORD_BATCH_OVERHEAD,
    STREAMED_RECORDS_BYTES,
    TIMESTAMP_TYPE_MASK,
    TRANSACTIONAL_FLAG_MASK,
    DefaultRecordBatch,
    compression_name,
)
from kdump.storage.timestamp_type import CREATE_TIME, LOG_APPEND_TIME

_TIMESTAMP_TYPE = {CREATE_TIME: 0, LOG_APPEND_TIME: 1}
#: An output batch is handed to Spark once it holds ``rowsPerBatch`` rows or this many bytes: the records' own
#: (decompressed) plus ``_HEADER_COST`` for each header when the headers column is built (a header of two bytes
#: on disk is an Arrow entry of a dozen bytes, and a dict of a few hundred in the pure-Python builder).
_BYTES_PER_BATCH = 64 * 1024 * 1024
_HEADER_COST = 512
_TS_TYPE = pa.timestamp("us", tz="UTC")
_get_key = attrgetter("key")
_get_value = attrgetter("value")
_get_offset = attrgetter("offset")
_get_timestamp = attrgetter("timestamp")
_get_size = attrgetter("size_in_bytes")


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
    """Columns of the rows gathered so far, in Python lists (the pure-Python builder).

    ``add`` appends decoded :class:`Record` objects; the batch-level columns are stored once per Kafka batch
    (``note_batch``) and expanded in Arrow at ``flush``."""

    builder: Any = None  # the C builder of :class:`_BufferColumns`

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
        # one entry per Kafka batch (or part of one) of the rows so far
        self.per_batch: list[tuple] = []
        self._constants: dict[tuple, pa.Array] = {}
        self._reset()

    def _reset(self) -> None:
        self.keys: list[bytes | None] = []
        self.values: list[bytes | None] = []
        self.offsets: list[int] = []
        self.timestamps: list[int] = []
        self.headers: list[Any] = []
        self.decoded: list[str] = []
        self.batch_index: list[int] = []
        self._bytes = 0

    @property
    def rows(self) -> int:
        return len(self.offsets)

    @property
    def bytes(self) -> int:
        """Record bytes of the rows so far (each record's size as stored, decompressed)."""
        return self._bytes

    @property
    def python_records(self) -> bool:
        """Whether rows need :class:`Record` objects (a decoder or payload column)."""
        return self.decoder is not None or self.payload is not None

    def note_batch(self, batch: RecordBatch, crc_valid: bool) -> None:
        """The batch-level columns of the rows appended next (``batch_index`` ``len(per_batch)``)."""
        # a v2 batch's columns from its fields: what its properties compute, without the calls
        if type(batch) is DefaultRecordBatch:
            a = batch.attributes
            self.per_batch.append(
                (
                    (a & TIMESTAMP_TYPE_MASK) >> 3,  # 0 CreateTime, 1 LogAppendTime
                    batch.position,
                    batch.base_offset,
                    batch.magic,
                    batch.producer_id,
                    batch.producer_epoch,
                    batch.base_sequence,
                    a & TRANSACTIONAL_FLAG_MASK != 0,
                    a & CONTROL_FLAG_MASK != 0,
                    compression_name(a & COMPRESSION_CODEC_MASK),
                    crc_valid,
                    batch.partition_leader_epoch,
                )
            )
            return
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
        self.note_batch(batch, crc_valid)
        self._bytes += sum(map(_get_size, records))
        if self.include_headers:
            self._bytes += _HEADER_COST * sum(len(r.headers) for r in records)

    def _record_columns(self) -> tuple[pa.Array, list[pa.Array], pa.Array | None, tuple | None]:
        """The batch index, the record columns (key .. timestamp), headers (None without them) and the
        batch-level columns position, base offset and base sequence row by row (None: expanded from
        ``per_batch``)."""
        timestamps = pc.multiply(pa.array(self.timestamps, pa.int64()), 1000).view(_TS_TYPE)
        headers = None
        if self.include_headers:
            headers = pa.array(self.headers, self.schema.field("headers").type)
        return (
            pa.array(self.batch_index, pa.int32()),
            [
                pa.array(self.keys, pa.binary()),
                pa.array(self.values, pa.binary()),
                pa.array(self.offsets, pa.int64()),
                timestamps,
            ],
            headers,
            None,
        )

    def _constant(self, value: Any, type_: pa.DataType, n: int) -> pa.Array:
        """``n`` times ``value`` (arrays are immutable: one made for an earlier output batch is used again)."""
        key = (type_, type(value), value, n)
        found = self._constants.get(key)
        if found is None:
            if len(self._constants) >= 64:
                self._constants.clear()
            found = self._constants[key] = pa.repeat(pa.scalar(value, type_), n)
        return found

    def flush(self) -> pa.RecordBatch:
        n = self.rows
        split = self.split
        index, (keys, values, offsets, timestamps), headers, by_row = self._record_columns()
        per_batch = list(zip(*self.per_batch, strict=True))
        (ts_type, position, base, magic, pid, epoch, seq, txn, control, codec, crc, ple) = per_batch
        constant = self._constant

        def expand(values: tuple, type_: pa.DataType, row: int = -1) -> pa.Array:
            first = values[0]
            if values.count(first) == len(values):  # the same in every batch: no per-row work
                return constant(first, type_, n)
            if row >= 0 and by_row is not None:
                return by_row[row]
            return pa.array(values, type_).take(index)

        arrays = [
            keys,
            values,
            constant(split.topic, pa.string(), n),
            constant(split.partition, pa.int32(), n),
            offsets,
            timestamps,
            expand(ts_type, pa.int32()),
        ]
        if headers is not None:
            arrays.append(headers)
        if self.decoder is not None:
            arrays.append(pa.array(self.decoded, pa.string()))
        if self.payload is not None:
            arrays += self.payload.flush(self.schema)
        arrays += [
            constant(split.path, pa.string(), n),
            expand(position, pa.int64(), 0),
            expand(base, pa.int64(), 1),
            expand(magic, pa.int32()),
            expand(pid, pa.int64()),
            expand(epoch, pa.int32()),
            expand(seq, pa.int32(), 2),
            expand(txn, pa.bool_()),
            expand(control, pa.bool_()),
            expand(codec, pa.string()),
            expand(crc, pa.bool_()),
            expand(ple, pa.int32()),
        ]
        self._reset()
        self.per_batch = []
        return pa.RecordBatch.from_arrays(arrays, schema=self.schema)


class _BufferColumns(_Columns):
    """The same columns filled by the C builder (``kdump/_columns.c``) straight from a batch's record bytes:
    no Python object per record.  Records that the storage core decoded (a batch the builder declines) go in
    through ``add`` as well; the decoder and payload columns need :class:`Record` objects and keep
    :class:`_Columns`."""

    def __init__(self, split: Split, include_headers: bool, options: ReadOptions | None = None) -> None:
        super().__init__(split, include_headers, None, options)
        assert BUILDER is not None
        self.builder = BUILDER(include_headers, decode_utf8_jdk, _HEADER_COST)

    def _reset(self) -> None:
        pass

    @property
    def rows(self) -> int:
        return int(self.builder.rows)

    @property
    def bytes(self) -> int:
        return int(self.builder.bytes)

    def add(self, batch: RecordBatch, records: list, crc_valid: bool) -> None:
        self.builder.append_records(
            records, len(self.per_batch), batch.position, batch.base_offset, batch.base_sequence
        )
        self.note_batch(batch, crc_valid)

    def _record_columns(self) -> tuple[pa.Array, list[pa.Array], pa.Array | None, tuple | None]:
        n, offsets, timestamps, keys, values, headers, index, position, base, sequence = self.builder.finish()
        columns = [
            _binary_array(pa.binary(), n, keys),
            _binary_array(pa.binary(), n, values),
            pa.Array.from_buffers(pa.int64(), n, [None, pa.py_buffer(offsets)]),
            pa.Array.from_buffers(_TS_TYPE, n, [None, pa.py_buffer(timestamps)]),
        ]
        header_column = None
        if headers is not None:
            valid, nulls, list_offsets, count, header_keys, header_values = headers
            list_type = self.schema.field("headers").type
            entries = pa.StructArray.from_arrays(
                [
                    _binary_array(pa.string(), count, header_keys),
                    _binary_array(pa.binary(), count, header_values),
                ],
                fields=list(list_type.value_type),
            )
            header_column = pa.Array.from_buffers(
                list_type,
                n,
                [_buffer(valid), pa.py_buffer(list_offsets)],
                null_count=nulls,
                children=[entries],
            )
        by_row = (
            pa.Array.from_buffers(pa.int64(), n, [None, pa.py_buffer(position)]),
            pa.Array.from_buffers(pa.int64(), n, [None, pa.py_buffer(base)]),
            pa.Array.from_buffers(pa.int32(), n, [None, pa.py_buffer(sequence)]),
        )
        index_column = pa.Array.from_buffers(pa.int32(), n, [None, pa.py_buffer(index)])
        # Checked before Spark sees them, since kdump.spark.session turns Arrow Java's bounds checks off: the
        # variable-length columns whole (every offset inside its data: about 5 ns a row), the others' buffer
        # sizes.  A failure is a bug of the C builder, never the data's.
        for array in (columns[0], columns[1], header_column):
            if array is not None:
                array.validate(full=True)
        for array in (columns[2], columns[3], index_column, *by_row):
            array.validate()
        return index_column, columns, header_column, by_row


def _buffer(data: Any) -> pa.Buffer | None:
    return None if data is None else pa.py_buffer(data)


def _binary_array(type_: pa.DataType, n: int, parts: tuple) -> pa.Array:
    valid, nulls, offsets, data = parts
    return pa.Array.from_buffers(
        type_, n, [_buffer(valid), pa.py_buffer(offsets), pa.py_buffer(data)], null_count=nulls
    )


def _headers(record: Record) -> list[dict[str, Any]] | None:
    headers = record.headers
    if not headers:
        return None
    return [{"key": decode_utf8_jdk(h.key), "value": h.value} for h in headers]


#: The ``REVISION`` of ``kdump/_columns.c`` this reader agrees with.
COLUMNS_REVISION = 3


def _load_builder() -> Any:
    """The C column builder (``kdump/_columns.c``), unless absent, stale, or ``KDUMP_PURE_PYTHON`` is set."""
    if os.environ.get("KDUMP_PURE_PYTHON"):
        return None
    try:
        from kdump import _columns
    except ImportError:
        return None
    if getattr(_columns, "REVISION", None) != COLUMNS_REVISION:
        return None  # built from an older kdump/_columns.c: not trusted (pip install -e . rebuilds it)
    return _columns.Builder


BUILDER = _load_builder()


def new_columns(split: Split, options: ReadOptions, *, pure: bool = False) -> _Columns:
    """The column builder of a split: the C one when it is built and no column needs Record objects."""
    if BUILDER is not None and not pure and options.decoder is None and options.payload is None:
        return _BufferColumns(split, options.include_headers, options)
    return _Columns(split, options.include_headers, options.decoder, options)


def open_split(split: Split) -> FileRecords:
    """The ``.log`` of ``split``, opened to read ``[start_position, end_position)``.  A local file is mapped
    whole (its fast path); an object in a store is fetched a read-ahead window at a time from the split's start
    and never past its end plus one batch header (a split ends where a batch starts, and the walk looks at
    most at the next batch's header before it stops), so a task fetches its own split's bytes, not the
    8 MiB read-ahead past them that the next split's task fetches again.  A split with its own source (an
    Aiven segment: chunks undone by :class:`kdump.storage.aiven_segment.SegmentLog`) is read through it, with
    the same bound: only the chunks that hold the split's bytes (and that header) are fetched."""
    if split.source is not None:
        end = INT_MAX if split.end_position is None else split.end_position + RECORD_BATCH_OVERHEAD
        return FileRecords.open(split.source, max_bytes=end)
    if split.end_position is None or not is_url(split.path):
        return FileRecords(split.path)
    return FileRecords(split.path, max_bytes=split.end_position + RECORD_BATCH_OVERHEAD)


def read_split(split: Split, options: ReadOptions) -> Iterator[pa.RecordBatch]:
    """The records of ``split`` as Arrow record batches with :func:`kdump.spark.schema.arrow_schema`."""
    report = Reporter(split, options)
    try:
        yield from _read(split, options, report)
    finally:
        report.close()


def _read(split: Split, options: ReadOptions, report: Reporter) -> Iterator[pa.RecordBatch]:
    columns = new_columns(split, options)
    rows_per_batch = options.rows_per_batch
    keep_bad_crc = options.corrupt == "keep"
    start_offset = split.start_offset
    end_offset = split.end_offset
    committed: ReadCommittedFilter | None = None
    with open_split(split) as records:
        end = records.size_in_bytes if split.end_position is None else split.end_position
        reached = split.start_position
        run: Any = None
        if columns.builder is not None:
            builder = columns.builder
            read_committed = options.read_committed
            flags = RUN_READ_COMMITTED if read_committed else 0
            lso = split.last_stable_offset
            limit = records.decompression_limit

            def decompress(codec: int, data: memoryview) -> bytes | None:
                return _records_bytes(codec, data, limit)

            def run(buf: Any, position: int, end: int, stop: int) -> int | None:
                """FileRecords.batches' ``runs``: the batches from ``position`` that this loop would hand whole
                to the C builder, appended in C (``Builder.append_run``); the first other batch is yielded."""
                nonlocal reached
                if read_committed and committed is None:
                    return None  # the filter starts at the first batch read here (its fetch offset)
                ran = builder.append_run(
                    buf,
                    position,
                    end,
                    stop,
                    crc32c,
                    columns.per_batch,
                    _CODEC_NAMES,
                    start_offset,
                    end_offset,
                    lso,
                    flags,
                    rows_per_batch,
                    _BYTES_PER_BATCH,
                    decompress,
                )
                if ran is not None:
                    reached = ran
                return ran

        batches = records.batches(split.start_position, end, runs=run)
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
                # A legacy compressed wrapper's offset is its last inner record's (Kafka's
                # AbstractLegacyRecordBatch: the wrapper carries the last offset, the first is known only
                # decompressed): its records may still be in the range, and are filtered record by record.
                if not (batch.magic < 2 and batch.attributes & COMPRESSION_CODEC_MASK):
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
                yield from _append(columns, batch, crc_valid, start_offset, end_offset, rows_per_batch)
            except KdumpError as e:
                report("decode", e.message, batch.position, batch.base_offset)
                continue
            if columns.rows >= rows_per_batch or columns.bytes >= _BYTES_PER_BATCH:
                yield columns.flush()
        invalid = records.invalid_bytes(reached, end)
        if not broken and invalid > 0:
            report("torn-tail", f"the last {invalid} bytes are not a whole batch", reached)
    if columns.rows:
        yield columns.flush()


#: A batch bigger than this has its records checked whole before any is appended (a batch that fails to decode
#: gives no row), then appended a part at a time, so memory stays at an output batch whatever its size.
_CHECK_FIRST_BYTES = 8 << 20
#: Likewise a batch that declares more records than this (a compressed batch of a few KB can hold millions).
_CHECK_FIRST_RECORDS = 65536


def _append(
    columns: _Columns,
    batch: RecordBatch,
    crc_valid: bool,
    lo: int | None,
    hi: int | None,
    rows_per_batch: int,
) -> Iterator[pa.RecordBatch]:
    """Append the records of ``batch`` with an offset in [``lo``, ``hi``) to ``columns``, yielding an output batch
    whenever ``columns`` hold ``rows_per_batch`` rows or ``_BYTES_PER_BATCH`` record bytes (the last part stays
    in ``columns``).  Raises KdumpError, before appending or yielding anything, when the batch does not decode
    (Kafka's error, from the storage core)."""
    if columns.builder is not None and isinstance(batch, DefaultRecordBatch):
        appended = yield from _append_bytes(columns, batch, crc_valid, lo, hi, rows_per_batch)
        if appended:
            return
    include_headers = columns.include_headers
    if batch.size_in_bytes > _CHECK_FIRST_BYTES or (batch.count_or_none or 0) > _CHECK_FIRST_RECORDS:
        for r in batch.records():  # check the whole batch first; then decode it again, a part at a time
            if include_headers:
                check_object_headers(r)
        found: Iterable[Record] = batch.records()
    else:
        found = list(batch.records())
        if include_headers:
            for r in found:
                check_object_headers(r)
    # (a legacy compressed wrapper's base_offset is its last inner record's offset: its records filtered too)
    wrapper = batch.magic < 2 and batch.attributes & COMPRESSION_CODEC_MASK
    if (
        (lo is not None or hi is not None)
        and wrapper
        or (lo is not None and batch.base_offset < lo or hi is not None and batch.last_offset >= hi)
    ):
        low = lo if lo is not None else -(1 << 63)
        high = hi if hi is not None else 1 << 63
        found = (r for r in found if low <= r.offset < high)
    part: list[Record] = []
    rows = columns.rows
    size = columns.bytes
    for r in found:
        if rows >= rows_per_batch or size >= _BYTES_PER_BATCH:
            if part:
                columns.add(batch, part, crc_valid)
                part = []
            yield columns.flush()
            rows = size = 0
        part.append(r)
        rows += 1
        size += r.size_in_bytes
        if include_headers:
            size += _HEADER_COST * len(r.headers)
    if part:
        columns.add(batch, part, crc_valid)


def _append_bytes(
    columns: _Columns,
    batch: DefaultRecordBatch,
    crc_valid: bool,
    lo: int | None,
    hi: int | None,
    rows_per_batch: int,
) -> Generator[pa.RecordBatch, None, bool]:
    """:func:`_append` through the C builder, from the batch's record bytes (decompressed first); False, with
    nothing appended, when the builder declines the batch (anything unusual: the storage core decides)."""
    count = batch.records_count
    if batch.size_in_bytes < RECORD_BATCH_OVERHEAD or count <= 0:
        return False
    start = batch.position + RECORD_BATCH_OVERHEAD
    end = batch.position + batch.size_in_bytes
    buf: Any = batch.buf
    if batch.attributes & COMPRESSION_CODEC_MASK:
        codec = batch.compression_type_id
        if codec not in compression.CODEC_NAMES:
            return False
        buf = _records_bytes(codec, buf[start:end], batch.decompression_limit)
        if buf is None:
            return False
        start, end = 0, len(buf)
    log_append_time = batch.max_timestamp if batch.attributes & TIMESTAMP_TYPE_MASK else None
    builder = columns.builder
    done = 0
    check_rest = True
    while True:
        result = builder.append(
            buf,
            start,
            end,
            count,
            len(columns.per_batch),
            batch.position,
            batch.base_offset,
            batch.base_timestamp,
            batch.base_sequence,
            log_append_time,
            lo,
            hi,
            done,
            rows_per_batch,
            _BYTES_PER_BATCH,
            check_rest,
        )
        if result is None:
            if check_rest:
                return False
            # checked whole before the first part: a later part cannot be declined
            raise AssertionError("the column builder declined a batch it had checked")  # pragma: no cover
        start, done, rows = result
        if rows:
            columns.note_batch(batch, crc_valid)
        if done == count:
            return True
        check_rest = False
        yield columns.flush()


def _records_bytes(codec: int, data: Any, limit: int) -> bytes | None:
    """The records of a compressed v2 batch's payload ``data`` (codec id ``codec``) for the C builder: at most
    ``STREAMED_RECORDS_BYTES`` (and the decompression limit ``limit``); None when they do not decompress cleanly
    within that, and the storage core decides (it reads a bigger payload a window at a time, or reports the
    limit or the error)."""
    most = min(STREAMED_RECORDS_BYTES, limit)
    if codec == compression.ZSTD:
        return _zstd_records(data, most)
    try:
        found = compression.open_eager_decompressor(codec, data, magic=2, limit=limit).read_up_to(most + 1)
    except KdumpError:
        return None
    return None if len(found) > most else found


#: ``Builder.append_run``'s flag: the read is ``read_committed`` (transactional batches and those at or past the
#: last stable offset are left to :class:`ReadCommittedFilter`).
RUN_READ_COMMITTED = 1
#: The compression codec names by id (Kafka's ``CompressionType.name``), as ``compression_name`` gives them.
_CODEC_NAMES = tuple(compression.CODEC_NAMES[i] for i in range(5))

_ZSTD_STEP = 1 << 17
_zstd_context: Any = None


def _zstd_records(data: bytes, most: int) -> bytes | None:
    """The decompressed records of a zstd batch straight from python-zstandard, without the storage core's
    reader around it (a third of the time of a 16 KiB batch): what that reader gives (zstd-jni's
    ``ZstdInputStreamNoFinalizer``, frames read across) when the payload decodes cleanly to at most ``most``
    bytes; None otherwise (an error, a truncated frame, a bigger payload), and the storage core decides.
    Output is read a step at a time, so a frame claiming a huge size costs what it really produces, never more
    than ``most`` and a step."""
    global _zstd_context
    import zstandard

    if _zstd_context is None:
        _zstd_context = zstandard.ZstdDecompressor()
    parts = []
    size = 0
    try:
        reader = _zstd_context.stream_reader(data, read_across_frames=True)
        while piece := reader.read(_ZSTD_STEP):
            parts.append(piece)
            size += len(piece)
            if size > most:
                return None
    except zstandard.ZstdError:
        return None
    if compression._zstd_ends_mid_frame(data):  # the storage core's rule for zstd-jni's "Truncated source"
        return None
    return parts[0] if len(parts) == 1 else b"".join(parts)
