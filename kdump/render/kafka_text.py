"""The text that Kafka 4.0's ``kafka-dump-log.sh`` prints for log segments and KRaft snapshots.

Pure formatting of storage-core objects; the order of the pieces follows the order in which the real tool
prints them, so that a failure half-way through a line leaves exactly the text Kafka would have left.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator
from itertools import islice
from typing import TYPE_CHECKING

from kdump.errors import KdumpError
from kdump.jdk.text import decode_utf8_jdk, decode_utf8_jdk_pieces
from kdump.render.decoders import MessageParser
from kdump.storage.file_records import RecordBatch, release_view_pages
from kdump.storage.record import LazyHeaders, Record
from kdump.storage.record_batch import (
    COMPRESSION_CODEC_MASK,
    CONTROL_FLAG_MASK,
    RECORD_BATCH_OVERHEAD,
    TIMESTAMP_TYPE_MASK,
    DefaultRecordBatch,
)
from kdump.storage.varint import VarintError, read_varint, read_varlong

if TYPE_CHECKING:
    from kdump.storage.kafka_release import KafkaRelease
    from kdump.storage.producer_snapshot import ProducerSnapshotEntry
    from kdump.storage.transaction_index import AbortedTxn

RECORD_INDENT = "|"


def java_bool(b: bool) -> str:
    return "true" if b else "false"


def optional_long(value: int | None) -> str:
    """Java's ``OptionalLong.toString``."""
    return "OptionalLong.empty" if value is None else f"OptionalLong[{value}]"


def batch_line_head(batch: RecordBatch) -> str:
    """First half of a batch line (Kafka prints it before evaluating the rest)."""
    if batch.magic >= 2:
        b = batch
        return (
            f"baseOffset: {b.base_offset} lastOffset: {b.last_offset} count: {b.count_or_none} "
            f"baseSequence: {b.base_sequence} lastSequence: {b.last_sequence} producerId: {b.producer_id} "
            f"producerEpoch: {b.producer_epoch} partitionLeaderEpoch: {b.partition_leader_epoch} "
            f"isTransactional: {java_bool(b.is_transactional)} isControl: {java_bool(b.is_control_batch)} "
            f"deleteHorizonMs: {optional_long(b.delete_horizon_ms)}"
        )
    return f"offset: {batch.last_offset}"


def batch_line_tail(batch: RecordBatch, position: int) -> str:
    """Second half of a batch line, newline included; raises for an unknown compression id."""
    return (
        f" position: {position} {batch.timestamp_type}: {batch.max_timestamp} size: {batch.size_in_bytes} "
        f"magic: {batch.magic} compresscodec: {batch.compression_name} crc: {batch.checksum} "
        f"isvalid: {java_bool(batch.is_valid())}\n"
    )


def _joined(texts: Iterator[str]) -> str:
    """``",".join(texts)`` a piece at a time: no list of one string per header for a record of millions."""
    pieces = []
    while chunk := list(islice(texts, 4096)):
        pieces.append(",".join(chunk))
    return ",".join(pieces)


def header_keys(record: Record) -> str:
    headers = record.headers
    if not headers:
        return "[]"
    if isinstance(headers, LazyHeaders):
        return "[" + _joined(map(decode_utf8_jdk, headers.keys())) + "]"
    return "[" + ",".join(decode_utf8_jdk(h.key) for h in headers) + "]"


def header_values(record: Record) -> str:
    """``[v1,v2]``: header values decoded like keys; a null value prints ``null`` (kdump's --print-header-values)."""
    return (
        "[" + _joined("null" if h.value is None else decode_utf8_jdk(h.value) for h in record.headers) + "]"
    )


def record_metadata(record: Record, batch: RecordBatch, with_header_values: bool = False) -> str:
    """The metadata part of a record line (``| offset: ...``), without control description."""
    return _line_text(_metadata_parts(record, batch, with_header_values))


def _metadata_parts(record: Record, batch: RecordBatch, with_header_values: bool) -> list[str | HeaderList]:
    """:func:`record_metadata` in parts: the header lists of a record of many headers stay :class:`HeaderList`."""
    text = (
        f"{RECORD_INDENT} offset: {record.offset} {batch.timestamp_type}: {record.timestamp} "
        f"keySize: {record.key_size} valueSize: {record.value_size}"
    )
    if batch.magic >= 2:
        headers = record.headers
        if type(headers) is LazyHeaders:
            parts: list[str | HeaderList] = [
                f"{text} sequence: {record.sequence} headerKeys: ",
                HeaderList(headers),
            ]
            if with_header_values:
                parts += [" headerValues: ", HeaderList(headers, values=True)]
            text = ""
        else:
            text += f" sequence: {record.sequence} headerKeys: {header_keys(record)}"
            if with_header_values:
                text += f" headerValues: {header_values(record)}"
            parts = []
    else:
        parts = []
    if record.magic < 2:
        text += f" isValid: {java_bool(bool(record.valid))} crc: {record.crc}}}"
    if text:
        parts.append(text)
    return parts


class _LargeText(Exception):
    """A key or value handed out as a view of the segment (``records(views=True)``): too big for one string."""


def _text(data: bytes | memoryview) -> str:
    """:func:`decode_utf8_jdk` for the fused renderers, which write a view's text in pieces instead."""
    if type(data) is bytes:
        try:
            return data.decode("utf-8")
        except UnicodeDecodeError:
            return decode_utf8_jdk(data)
    raise _LargeText


class HeaderList:
    """``[a,b,...]`` of a record's many headers (:class:`LazyHeaders`), keys or values (``null`` for a null
    value, kdump's ``--print-header-values``), made a piece at a time: a record of millions of headers never
    becomes one string."""

    __slots__ = ("headers", "values")

    def __init__(self, headers: LazyHeaders, values: bool = False) -> None:
        self.headers = headers
        self.values = values

    def pieces(self) -> Iterator[str]:
        if self.values:
            texts: Iterator[str] = (
                "null" if h.value is None else decode_utf8_jdk(h.value) for h in self.headers
            )
        else:
            texts = map(decode_utf8_jdk, self.headers.keys())
        sep = "["
        while chunk := list(islice(texts, 4096)):
            yield sep + ",".join(chunk)
            sep = ","
        yield "[]" if sep == "[" else "]"


class LargeLine:
    """A record line holding a key or value too big to turn into one string, or millions of headers: its text
    is made a piece at a time as it is written (:meth:`kdump.facts.output.Output.write_lines`), so memory does
    not grow with it."""

    __slots__ = ("parts",)

    def __init__(self, parts: list[str | bytes | memoryview | HeaderList]) -> None:
        self.parts = parts

    def pieces(self) -> Iterator[str]:
        for part in self.parts:
            if type(part) is str:
                yield part
            elif type(part) is HeaderList:
                yield from part.pieces()
            else:
                for text in decode_utf8_jdk_pieces(part):  # type: ignore[arg-type]
                    yield text
                    release_view_pages(part)  # type: ignore[arg-type]

    def text(self) -> str:
        """The whole line as one string (only for the text of a line that failed half-way)."""
        return "".join(self.pieces())


def _large_line(
    head: str, headers: object, key: bytes | memoryview | None, value: bytes | memoryview | None
) -> LargeLine:
    """``head`` ends with ``headerKeys: ``; the header keys, key and payload follow, each made when written."""
    parts: list[str | bytes | memoryview | HeaderList] = [head, _keys_part(headers)]
    if key is not None:
        parts += [" key: ", key]
    if value is not None:
        parts += [" payload: ", value]
    parts.append("\n")
    return LargeLine(parts)


def _keys_part(headers: object) -> str | HeaderList:
    if type(headers) is LazyHeaders:
        return HeaderList(headers)
    return "[" + ",".join(decode_utf8_jdk(h.key) for h in headers) + "]" if headers else "[]"  # type: ignore[attr-defined]


def _keys_text(headers: object) -> str:
    """The ``headerKeys`` text of a record's (non-empty) headers for the fused renderers, which write a record
    of many headers (:class:`LazyHeaders`) as a :class:`LargeLine` instead."""
    if type(headers) is LazyHeaders:
        raise _LargeText
    return "[" + ",".join(decode_utf8_jdk(h.key) for h in headers) + "]"  # type: ignore[attr-defined]


class PartialLineError(Exception):
    """A record line failed half-way; ``partial`` is what Kafka had already printed of it."""

    def __init__(self, partial: str, cause: KdumpError) -> None:
        super().__init__(cause.message)
        self.partial = partial
        self.cause = cause


def record_renderer(
    batch: RecordBatch,
    print_contents: bool,
    skip_metadata: bool,
    parser: MessageParser,
    *,
    header_values: bool = False,
    payload_extra: Callable[[Record], str] | None = None,
    control: Callable[[Record], str] | None = None,
) -> Callable[[Record], str]:
    """A function that renders one record line (newline included) of ``batch``.

    On a failure half-way through a line it raises :class:`PartialLineError` carrying the text Kafka would
    already have printed.  The common case (a v2 data batch with metadata and string decoding) gets a fused
    fast path; everything else goes through :func:`record_line`.  ``header_values`` (kdump's
    ``--print-header-values``) adds ``headerValues: [...]`` after the header keys.  ``payload_extra`` (kdump's
    ``--decode-values``/``--decode-keys``) gives text appended to a data record's line when contents are printed
    (:mod:`kdump.render.decoded_payload`).
    """
    is_control = batch.is_control_batch
    if payload_extra is not None and print_contents and not is_control:
        extra = payload_extra
        plain = record_renderer(
            batch, print_contents, skip_metadata, parser, header_values=header_values, control=control
        )

        def with_extra(r: Record) -> str:
            line = plain(r)
            if type(line) is str:
                return line[:-1] + extra(r) + "\n"
            line.parts[-1:] = [extra(r), "\n"]  # type: ignore[attr-defined]  # a LargeLine
            return line

        if batch.magic >= 2 and not skip_metadata and parser.is_string_parser and not header_values:
            head = f"{RECORD_INDENT} offset: "
            middle = f" {batch.timestamp_type}: "

            def fast_extra(r: Record) -> str:  # the fast path below, with the decoded payload appended
                if type(r.headers) is LazyHeaders:
                    return with_extra(r)
                key = r.key
                value = r.value
                return (
                    f"{head}{r.offset}{middle}{r.timestamp} keySize: {r.key_size} valueSize: {r.value_size} "
                    f"sequence: {r.sequence} headerKeys: {header_keys(r) if r.headers else '[]'}"
                    f"{'' if key is None else ' key: ' + decode_utf8_jdk(key)}"
                    f"{'' if value is None else ' payload: ' + decode_utf8_jdk(value)}{extra(r)}\n"
                )

            return fast_extra
        return with_extra
    if (
        batch.magic >= 2
        and not is_control
        and not skip_metadata
        and parser.is_string_parser
        and not header_values
    ):
        head = f"{RECORD_INDENT} offset: "
        middle = f" {batch.timestamp_type}: "
        if print_contents:

            def fast(r: Record) -> str:
                key = r.key
                value = r.value
                try:
                    return (
                        f"{head}{r.offset}{middle}{r.timestamp} keySize: {r.key_size} valueSize: {r.value_size} "
                        f"sequence: {r.sequence} headerKeys: {_keys_text(r.headers) if r.headers else '[]'}"
                        f"{'' if key is None else ' key: ' + _text(key)}"
                        f"{'' if value is None else ' payload: ' + _text(value)}\n"
                    )
                except _LargeText:  # a view of a big key or value, or many headers: written in pieces
                    return _large_line(  # type: ignore[return-value]
                        f"{head}{r.offset}{middle}{r.timestamp} keySize: {r.key_size} valueSize: {r.value_size} "
                        f"sequence: {r.sequence} headerKeys: ",
                        r.headers,
                        key,
                        value,
                    )

        else:

            def fast(r: Record) -> str:
                try:
                    return (
                        f"{head}{r.offset}{middle}{r.timestamp} keySize: {r.key_size} valueSize: {r.value_size} "
                        f"sequence: {r.sequence} headerKeys: {_keys_text(r.headers) if r.headers else '[]'}\n"
                    )
                except _LargeText:  # many headers: their keys are written in pieces
                    return _large_line(  # type: ignore[return-value]
                        f"{head}{r.offset}{middle}{r.timestamp} keySize: {r.key_size} valueSize: {r.value_size} "
                        f"sequence: {r.sequence} headerKeys: ",
                        r.headers,
                        None,
                        None,
                    )

        return fast

    def generic(r: Record) -> str:
        return record_line(
            r, batch, is_control, print_contents, skip_metadata, parser, header_values, control
        )

    return generic


def record_line(
    record: Record,
    batch: RecordBatch,
    is_control: bool,
    print_contents: bool,
    skip_metadata: bool,
    parser: MessageParser,
    with_header_values: bool = False,
    control: Callable[[Record], str] | None = None,
) -> str:
    """One record line in the order Kafka prints its pieces (see :func:`record_renderer`); ``control`` is the
    release's control-record text (:func:`control_describer`, Kafka 4.0's by default); a :class:`LargeLine` for
    a record of many headers (:class:`LazyHeaders`)."""
    if skip_metadata:
        parts: list[str | HeaderList] = []
        prefix = RECORD_INDENT + " "
    else:
        parts = _metadata_parts(record, batch, with_header_values)
        prefix = " "
        if is_control:
            try:
                parts.append((control or control_description)(record))
            except KdumpError as e:
                raise PartialLineError(_line_text(parts), e) from None
    if print_contents and not is_control:
        try:
            key, payload = parser.parse(record)
        except KdumpError as e:
            raise PartialLineError(_line_text(parts), e) from None
        if key is not None:
            parts.append(f"{prefix}key: {key}")
        if payload is not None:
            parts.append(f" payload: {payload}")
    parts.append("\n")
    if len(parts) < 3 or all(type(p) is str for p in parts):
        return "".join(parts)  # type: ignore[arg-type]
    return LargeLine(parts)  # type: ignore[return-value,arg-type]


def _line_text(parts: list[str | HeaderList]) -> str:
    return "".join(p if type(p) is str else "".join(p.pieces()) for p in parts)  # type: ignore[union-attr]


def control_description(record: Record) -> str:
    """What Kafka 4.0 prints for a control record after its metadata (raises on a malformed record);
    :mod:`kdump.render.control_text`, loaded on the first control record (its message schemas cost start-up)."""
    from kdump.render.control_text import control_description as describe

    return describe(record)


def control_description_41(record: Record) -> str:
    """What Kafka 4.1 and 4.2 print for a control record after its metadata (:mod:`kdump.render.control_text`)."""
    from kdump.render.control_text import control_description_41 as describe

    return describe(record)


def control_describer(release: KafkaRelease) -> Callable[[Record], str]:
    """The control-record text of ``release``'s tool (chosen once, not per record)."""
    return control_description_41 if release.leader_change_json else control_description


def trailing_bytes_line(trailing: int, file_name: str) -> str:
    return f"Found {trailing} invalid bytes at the end of {file_name}\n"


def non_consecutive_summary(groups: Iterable[tuple[str, Iterable[tuple[int, int]]]]) -> Iterator[str]:
    """The end-of-run ``Non-consecutive offsets in`` groups (pairs newest first, as Kafka keeps them), in pieces
    of at most :data:`SUMMARY_PIECE_LINES` lines: the pairs may be millions, read back from disk."""
    for abs_path, pairs in groups:
        out = [f"Non-consecutive offsets in {abs_path}\n"]
        for previous, offset in pairs:
            out.append(f"  {previous} is followed by {offset}\n")
            if len(out) >= SUMMARY_PIECE_LINES:
                yield "".join(out)
                out = []
        if out:
            yield "".join(out)


#: Lines of an end-of-run summary written at a time.
SUMMARY_PIECE_LINES = 1 << 14


def index_mismatch_summary(groups: list[tuple[str, list[tuple[int, int]]]]) -> str:
    out = []
    for abs_path, pairs in groups:
        out.append(f"Mismatches in :{abs_path}\n")
        out.extend(f"  Index offset: {a}, log offset: {b}\n" for a, b in pairs)
    return "".join(out)


def time_index_summary(mismatches: list, out_of_order: list, not_found: list) -> str:
    out = []
    for abs_path, pairs in mismatches:
        out.append(f"Found timestamp mismatch in :{abs_path}\n")
        out.extend(f"  Index timestamp: {a}, log timestamp: {b}\n" for a, b in pairs)
    for abs_path, pairs in out_of_order:
        out.append(f"Found out of order timestamp in :{abs_path}\n")
        out.extend(f"  Index timestamp: {a}, Previously indexed timestamp: {b}\n" for a, b in pairs)
    for _abs_path, pairs in not_found:
        out.append("The following indexed offsets are not found in the log.\n")
        out.extend(f"Indexed offset: {a}, found log offset: {b}\n" for a, b in pairs)
    return "".join(out)


def producer_snapshot_line(entry: ProducerSnapshotEntry) -> str:
    """One producer-state entry; without batch metadata the line keeps Kafka's trailing space."""
    line = (
        f"producerId: {entry.producer_id} producerEpoch: {entry.producer_epoch} "
        f"coordinatorEpoch: {entry.coordinator_epoch} "
        f"currentTxnFirstOffset: {optional_long(entry.current_txn_first_offset if entry.current_txn_first_offset >= 0 else None)} "
        f"lastTimestamp: {entry.last_timestamp} "
    )
    if entry.has_batch_metadata:
        line += (
            f"firstSequence: {entry.first_sequence} lastSequence: {entry.last_sequence} "
            f"lastOffset: {entry.last_offset} offsetDelta: {entry.offset_delta} timestamp: {entry.timestamp}"
        )
    return line + "\n"


def aborted_txn_line(txn: AbortedTxn) -> str:
    return (
        f"version: {txn.version} producerId: {txn.producer_id} firstOffset: {txn.first_offset} "
        f"lastOffset: {txn.last_offset} lastStableOffset: {txn.last_stable_offset}\n"
    )


_LONG_MAX = 2**63 - 1
_INT_MAX = 2**31 - 1
#: The accelerator's bounds (kdump/_speedups.c): bigger keys and values, or more headers, are the record-by-record
#: renderer's (views, lazy headers).
_MAX_EAGER_BYTES = 1 << 20
_MAX_EAGER_HEADERS = 4096


def record_lines(
    buf: bytes,
    pos: int,
    end: int,
    count: int,
    base_offset: int,
    base_timestamp: int,
    base_sequence: int,
    log_append_time: int | None,
    middle: str,
    print_contents: bool,
) -> tuple[str, int, int] | None:
    """The pure-Python twin of the C accelerator's ``record_lines`` (``record_batch.RECORD_LINES``): the fused
    renderer's record lines of an uncompressed v2 data batch's records in ``buf[pos:end]``, with the first and
    last offsets, decoded and formatted in one loop without a :class:`Record` each; None for anything the
    accelerator declines too (a malformed record, offsets that do not follow each other, a sequence that
    wraps, a key, value or header key that is not valid UTF-8, big keys and values, many headers): the caller
    renders those record by record, which gives Kafka's errors."""
    lines: list[str] = []
    append = lines.append
    first = last = 0
    try:
        for i in range(count):
            b = buf[pos]  # the length: zigzag varints, inline for one and two bytes
            if b < 0x80:
                size = (b >> 1) ^ -(b & 1)
                pos += 1
            elif buf[pos + 1] < 0x80:
                b = (b & 0x7F) | (buf[pos + 1] << 7)
                size = (b >> 1) ^ -(b & 1)
                pos += 2
            else:
                size, pos = read_varint(buf, pos, end)
            body_end = pos + size
            if size <= 0 or body_end > end:
                return None
            pos += 1  # attributes
            b = buf[pos]
            if b < 0x80:
                timestamp_delta = (b >> 1) ^ -(b & 1)
                pos += 1
            else:
                timestamp_delta, pos = read_varlong(buf, pos, body_end)
            b = buf[pos]
            if b < 0x80:
                offset_delta = (b >> 1) ^ -(b & 1)
                pos += 1
            elif buf[pos + 1] < 0x80:
                b = (b & 0x7F) | (buf[pos + 1] << 7)
                offset_delta = (b >> 1) ^ -(b & 1)
                pos += 2
            else:
                offset_delta, pos = read_varint(buf, pos, body_end)
            b = buf[pos]
            if b < 0x80:
                key_size = (b >> 1) ^ -(b & 1)
                pos += 1
            else:
                key_size, pos = read_varint(buf, pos, body_end)
            key_at = pos
            if key_size > 0:
                pos += key_size
            b = buf[pos]
            if b < 0x80:
                value_size = (b >> 1) ^ -(b & 1)
                pos += 1
            elif buf[pos + 1] < 0x80:
                b = (b & 0x7F) | (buf[pos + 1] << 7)
                value_size = (b >> 1) ^ -(b & 1)
                pos += 2
            else:
                value_size, pos = read_varint(buf, pos, body_end)
            value_at = pos
            if value_size > 0:
                pos += value_size
            if key_size >= _MAX_EAGER_BYTES or value_size >= _MAX_EAGER_BYTES or pos > body_end:
                return None
            header_count = buf[pos]
            pos += 1
            if header_count == 0:
                keys = "[]"
            else:
                pos -= 1
                header_count, pos = read_varint(buf, pos, body_end)
                if header_count < 0 or header_count > _MAX_EAGER_HEADERS:
                    return None
                names = []
                for _ in range(header_count):
                    hk_size, pos = read_varint(buf, pos, body_end)
                    if hk_size < 0 or hk_size >= _MAX_EAGER_BYTES or pos + hk_size > body_end:
                        return None
                    names.append(buf[pos : pos + hk_size].decode("utf-8"))
                    pos += hk_size
                    hv_size, pos = read_varint(buf, pos, body_end)
                    if hv_size >= _MAX_EAGER_BYTES:
                        return None
                    if hv_size > 0:
                        pos += hv_size
                keys = "[" + ",".join(names) + "]"
            if pos != body_end:
                return None
            offset = base_offset + offset_delta
            if base_sequence >= 0:
                if offset_delta < 0 or base_sequence > _INT_MAX - offset_delta:
                    return None
                sequence = base_sequence + offset_delta
            else:
                sequence = -1
            timestamp = base_timestamp + timestamp_delta if log_append_time is None else log_append_time
            if i == 0:
                if offset > _LONG_MAX or offset < -_LONG_MAX - 1:
                    return None
                first = offset
            elif offset != last + 1 or offset > _LONG_MAX:
                return None
            if timestamp > _LONG_MAX or timestamp < -_LONG_MAX - 1:
                return None
            last = offset
            line = (
                f"| offset: {offset}{middle}{timestamp} keySize: {key_size if key_size >= 0 else -1} "
                f"valueSize: {value_size if value_size >= 0 else -1} sequence: {sequence} headerKeys: {keys}"
            )
            if print_contents:
                if key_size >= 0:
                    line += " key: " + buf[key_at : key_at + key_size].decode("utf-8")
                if value_size >= 0:
                    line += " payload: " + buf[value_at : value_at + value_size].decode("utf-8")
            append(line + "\n")
    except (IndexError, VarintError, UnicodeDecodeError):
        return None
    if pos != end or not lines:
        return None
    return "".join(lines), first, last


RecordLines = Callable[..., "tuple[str, int, int] | None"]


def batch_record_lines(
    batch: RecordBatch, lines: RecordLines, print_contents: bool, most: int
) -> tuple[str, int, int] | None:
    """The fused renderer's record lines of a v2 data batch of 1 to ``most`` records, whole, with its first and
    last offsets, from ``lines`` (the C accelerator's ``record_lines`` or :func:`record_lines`): an uncompressed
    batch's records are read where they lie, a compressed batch's from its decompressed stream
    (:meth:`DefaultRecordBatch.plain_records`: within the decompression bound, at most
    ``record_batch.STREAMED_RECORDS_BYTES``).  None for anything else -- a control batch, a legacy batch, a
    stream that does not decompress, and whatever ``lines`` declines: the caller renders the batch record by
    record (:func:`record_renderer`), which gives Kafka's text and errors.  Kafka's tool decodes a compressed
    batch whole before printing any of its records (``DefaultRecordBatch.iterator``), so lines made from the
    whole stream print what it prints."""
    if (
        type(batch) is not DefaultRecordBatch
        or batch.attributes & CONTROL_FLAG_MASK
        or not 0 < batch.records_count <= most
        or batch.size_in_bytes < RECORD_BATCH_OVERHEAD
    ):
        return None
    if batch.attributes & COMPRESSION_CODEC_MASK:
        buf = batch.plain_records()
        if buf is None:
            return None
        pos, end = 0, len(buf)
    else:
        buf = batch.buf
        pos = batch.position + RECORD_BATCH_OVERHEAD
        end = batch.position + batch.size_in_bytes
    return lines(
        buf,
        pos,
        end,
        batch.records_count,
        batch.base_offset,
        batch.base_timestamp,
        batch.base_sequence,
        batch.max_timestamp if batch.attributes & TIMESTAMP_TYPE_MASK else None,
        f" {batch.timestamp_type}: ",
        print_contents,
    )
