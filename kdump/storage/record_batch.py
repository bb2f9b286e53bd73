"""Record batches, message format v2 (Kafka's ``DefaultRecordBatch`` and ``DefaultRecord``).

Layout of the 61-byte batch header (big-endian)::

    0  baseOffset int64        27 baseTimestamp int64      53 baseSequence int32
    8  batchLength int32       35 maxTimestamp int64       57 recordsCount int32
    12 partitionLeaderEpoch    43 producerId int64         61 records ...
    16 magic int8 (signed)     51 producerEpoch int16
    17 crc uint32 (CRC-32C of bytes 21..end)
    21 attributes int16        23 lastOffsetDelta int32

A batch object keeps a reference to the buffer that holds it (an ``mmap`` of the segment, or ``bytes``) and its
position; records are decoded only when iterated, and uncompressed records straight from that buffer.
"""

from __future__ import annotations

import mmap
import os
import struct
from collections.abc import Callable, Iterator
from itertools import islice
from typing import Any, Protocol

from kdump.errors import DecompressionError, InvalidRecordError
from kdump.storage import compression
from kdump.storage.abstract_index import wrap_int64
from kdump.storage.checksum import crc32c
from kdump.storage.record import MAX_EAGER_HEADERS, Header, LazyHeaders, Record
from kdump.storage.resident_pages import drop_pages
from kdump.storage.timestamp_type import CREATE_TIME, LOG_APPEND_TIME
from kdump.storage.varint import VarintError, read_varint, read_varlong

LOG_OVERHEAD = 12
RECORD_BATCH_OVERHEAD = 61
HEADER_SIZE_UP_TO_MAGIC = 17
MAGIC_OFFSET = 16
ATTRIBUTES_OFFSET = 21
NO_SEQUENCE = -1
NO_PRODUCER_ID = -1

COMPRESSION_CODEC_MASK = 0x07
TIMESTAMP_TYPE_MASK = 0x08
TRANSACTIONAL_FLAG_MASK = 0x10
CONTROL_FLAG_MASK = 0x20
DELETE_HORIZON_FLAG_MASK = 0x40

INT_MAX = 0x7FFFFFFF

#: Records of a compressed batch are decoded eagerly (as Kafka does, so that a corrupt stream shows none of
#: its records); past this many, the rest of the batch is validated first and then decoded a second time,
#: which keeps memory bounded for hostile batches that claim millions of records.
EAGER_RECORDS = 65536
#: A compressed batch whose records decompress to more than this is read a window of ``WINDOW_BYTES`` at a
#: time (twice: validated first, then decoded), so memory does not grow with the decompressed size.
STREAMED_RECORDS_BYTES = 16 << 20
#: Keys and values this big are left to the Python decoder (the C accelerator declines them), which can hand
#: them out as views of the segment (``records(views=True)``) instead of copies.
MAX_EAGER_BYTES = 1 << 20
#: The CRC of a batch bigger than this is summed a piece at a time (see ``_checksum_in_pieces``).
_CHECKSUM_PIECE = 8 << 20
WINDOW_BYTES = 1 << 20
#: A record of a windowed stream bigger than this is not gathered into a window: its bytes are copied from the
#: decompressor into an unlinked temporary file, which is mapped and decoded (``_spilled_record``).
SPILLED_RECORD_BYTES = 8 << 20

#: What a batch's records need from its header: base offset, base timestamp, base sequence, LogAppendTime.
_RecordArgs = tuple[int, int, int, int | None]

_HEADER = struct.Struct(">qiibIhiqqqhii")  # magic is a signed Java byte
_LOG_HEADER = struct.Struct(">qi")


def read_log_header(buf: bytes, position: int) -> tuple[int, int, int]:
    """The offset, the size (of what follows the 12-byte offset/size prefix) and the magic byte (0..255, as
    stored) of the log entry at ``position``: the ``HEADER_SIZE_UP_TO_MAGIC`` bytes Kafka's
    ``FileLogInputStream.nextBatch`` reads first, any format's.  Nothing is checked: the caller decides what a
    size or magic it does not accept means (17 bytes must be in ``buf``)."""
    offset, size = _LOG_HEADER.unpack_from(buf, position)
    return offset, size, buf[position + MAGIC_OFFSET]


def _int32(value: int) -> int:
    """Java ``int`` overflow."""
    return (value + 0x80000000) % 0x100000000 - 0x80000000


def increment_sequence(sequence: int, increment: int) -> int:
    """Kafka's ``DefaultRecordBatch.incrementSequence`` in Java ``int`` arithmetic: sequences wrap to 0 after
    ``Integer.MAX_VALUE``."""
    if sequence > _int32(INT_MAX - increment):
        return _int32(increment - _int32(INT_MAX - sequence) - 1)
    return _int32(sequence + increment)


def decrement_sequence(sequence: int, decrement: int) -> int:
    """Kafka's ``DefaultRecordBatch.decrementSequence``, the inverse of :func:`increment_sequence`: going below 0
    continues from ``Integer.MAX_VALUE``."""
    if sequence < decrement:
        return _int32(INT_MAX - _int32(decrement - sequence) + 1)
    return _int32(sequence - decrement)


class RecordBatch(Protocol):
    """What every batch answers, v2 (:class:`DefaultRecordBatch`) and legacy
    (:class:`kdump.storage.legacy_record.LegacyRecordBatch`): Kafka's ``RecordBatch`` interface, where the legacy
    batch answers for v2's fields as Kafka's ``AbstractLegacyRecordBatch`` does (no producer, no sequence, no
    count until decompressed, no delete horizon)."""

    @property
    def position(self) -> int: ...
    @property
    def size_in_bytes(self) -> int: ...
    @property
    def magic(self) -> int: ...
    @property
    def attributes(self) -> int: ...
    @property
    def base_offset(self) -> int: ...
    @property
    def last_offset(self) -> int: ...
    @property
    def next_offset(self) -> int: ...
    @property
    def checksum(self) -> int: ...
    @property
    def compression_type_id(self) -> int: ...
    @property
    def compression_name(self) -> str: ...
    @property
    def is_compressed(self) -> bool: ...
    @property
    def timestamp_type(self) -> str: ...
    @property
    def max_timestamp(self) -> int: ...
    @property
    def is_transactional(self) -> bool: ...
    @property
    def is_control_batch(self) -> bool: ...
    @property
    def producer_id(self) -> int: ...
    @property
    def producer_epoch(self) -> int: ...
    @property
    def base_sequence(self) -> int: ...
    @property
    def last_sequence(self) -> int: ...
    @property
    def partition_leader_epoch(self) -> int: ...
    @property
    def count_or_none(self) -> int | None: ...
    @property
    def delete_horizon_ms(self) -> int | None: ...
    @property
    def decompression_limit(self) -> int: ...

    def checksummed_range(self) -> tuple[int, int]: ...
    def compute_checksum(self) -> int: ...
    def is_valid(self) -> bool: ...
    def records(self, *, views: bool = False) -> Iterator[Record]: ...
    def timestamps(self) -> Iterator[int]: ...


class DefaultRecordBatch:
    """A v2 record batch located at ``position`` in ``buf``.

    ``size_in_bytes`` is the whole entry including the 12-byte offset/length prefix.  When the declared batch is
    shorter than the 61-byte header, Kafka still reads 61 bytes from the file (running into whatever follows);
    ``buf`` is therefore the whole file, not a slice of it.
    """

    __slots__ = (
        "buf",
        "position",
        "size_in_bytes",
        "base_offset",
        "partition_leader_epoch",
        "magic",
        "checksum",
        "attributes",
        "last_offset_delta",
        "base_timestamp",
        "max_timestamp",
        "producer_id",
        "producer_epoch",
        "base_sequence",
        "records_count",
        "decompression_limit",
    )
    buf: bytes
    position: int
    size_in_bytes: int
    base_offset: int
    partition_leader_epoch: int
    magic: int
    checksum: int
    attributes: int
    last_offset_delta: int
    base_timestamp: int
    max_timestamp: int
    producer_id: int
    producer_epoch: int
    base_sequence: int
    records_count: int
    decompression_limit: int

    def __init__(
        self,
        buf: bytes,
        position: int,
        header: tuple[int, ...],
        *,
        decompression_limit: int = compression.DEFAULT_DECOMPRESSION_LIMIT,
    ) -> None:
        self.buf = buf
        self.position = position
        (
            self.base_offset,
            length,
            self.partition_leader_epoch,
            self.magic,
            self.checksum,
            self.attributes,
            self.last_offset_delta,
            self.base_timestamp,
            self.max_timestamp,
            self.producer_id,
            self.producer_epoch,
            self.base_sequence,
            self.records_count,
        ) = header
        self.size_in_bytes = LOG_OVERHEAD + length
        self.decompression_limit = decompression_limit

    @classmethod
    def read_from(
        cls,
        buf: bytes,
        position: int = 0,
        *,
        decompression_limit: int = compression.DEFAULT_DECOMPRESSION_LIMIT,
    ) -> DefaultRecordBatch:
        """Decode the header of the batch at ``position`` (61 bytes must be available in ``buf``)."""
        if len(buf) - position < RECORD_BATCH_OVERHEAD:
            raise InvalidRecordError(
                f"Failed to load record batch at position {position}: only {max(len(buf) - position, 0)} "
                f"of the {RECORD_BATCH_OVERHEAD} header bytes are in the file",
                position=position,
            )
        return cls(buf, position, _HEADER.unpack_from(buf, position), decompression_limit=decompression_limit)

    # -- header-derived properties, named as Kafka's RecordBatch methods ------------------------------------

    @property
    def last_offset(self) -> int:
        return wrap_int64(self.base_offset + self.last_offset_delta)  # Java long arithmetic

    @property
    def next_offset(self) -> int:
        return self.last_offset + 1

    @property
    def last_sequence(self) -> int:
        if self.base_sequence == NO_SEQUENCE:
            return NO_SEQUENCE
        return increment_sequence(self.base_sequence, self.last_offset_delta)

    @property
    def compression_type_id(self) -> int:
        return self.attributes & COMPRESSION_CODEC_MASK

    @property
    def compression_name(self) -> str:
        """Kafka's ``CompressionType.name``; ids 5-7 raise like ``CompressionType.forId``."""
        return compression_name(self.compression_type_id)

    @property
    def timestamp_type(self) -> str:
        return LOG_APPEND_TIME if self.attributes & TIMESTAMP_TYPE_MASK else CREATE_TIME

    @property
    def is_transactional(self) -> bool:
        return bool(self.attributes & TRANSACTIONAL_FLAG_MASK)

    @property
    def is_control_batch(self) -> bool:
        return bool(self.attributes & CONTROL_FLAG_MASK)

    @property
    def count_or_none(self) -> int | None:
        """Kafka's ``countOrNull()``: the record count (a legacy batch answers None)."""
        return self.records_count

    @property
    def delete_horizon_ms(self) -> int | None:
        """The delete horizon (stored in baseTimestamp when attribute bit 6 is set), else None."""
        return self.base_timestamp if self.attributes & DELETE_HORIZON_FLAG_MASK else None

    @property
    def is_compressed(self) -> bool:
        return self.attributes & COMPRESSION_CODEC_MASK != 0

    def checksummed_range(self) -> tuple[int, int]:
        """The bytes of ``buf`` the CRC-32C covers: from the attributes to the end of the batch."""
        return self.position + ATTRIBUTES_OFFSET, self.position + self.size_in_bytes

    def compute_checksum(self) -> int:
        start, end = self.checksummed_range()
        if end - start <= _CHECKSUM_PIECE:
            return crc32c(memoryview(self.buf)[start:end])
        return _checksum_in_pieces(self.buf, start, end)

    def is_valid(self) -> bool:
        """Kafka's ``isValid``: the batch is at least a header long and its CRC-32C matches."""
        return self.size_in_bytes >= RECORD_BATCH_OVERHEAD and self.checksum == self.compute_checksum()

    def payload(self) -> bytes:
        """The (possibly compressed) bytes that follow the header."""
        return self.buf[self.position + RECORD_BATCH_OVERHEAD : self.position + self.size_in_bytes]

    # -- records ---------------------------------------------------------------------------------------------

    def records(self, *, views: bool = False) -> Iterator[Record]:
        """Iterate the records as Kafka's ``DefaultRecordBatch.iterator()`` does.

        ``views``: keys and values of ``MAX_EAGER_BYTES`` and more in an uncompressed batch are read-only
        ``memoryview`` slices of the segment instead of ``bytes`` copies (a 200 MiB value costs no memory; the
        text renderers write such a value in pieces).

        Uncompressed records are decoded one at a time, so records before a corrupt one are seen; a compressed
        batch is decompressed and decoded before its first record is returned, so a corrupt compressed batch
        yields none.  Errors raise :class:`InvalidRecordError` or :class:`DecompressionError`.
        """
        if self.size_in_bytes < RECORD_BATCH_OVERHEAD:
            # Kafka loads the batch's own bytes and reads its record count from them first (count(), before
            # anything else): past the end of a batch shorter than the header, an IndexOutOfBoundsException
            raise InvalidRecordError(
                f"The {self.size_in_bytes}-byte batch is shorter than the {RECORD_BATCH_OVERHEAD}-byte v2 header "
                "(Kafka: java.lang.IndexOutOfBoundsException reading its record count)",
                position=self.position,
            )
        count = self.records_count
        if count == 0:
            return iter(())
        if count < 0:
            raise InvalidRecordError(f"Found invalid record count {count} in magic v{self.magic} batch")
        log_append_time = self.max_timestamp if self.attributes & TIMESTAMP_TYPE_MASK else None
        start = self.position + RECORD_BATCH_OVERHEAD
        end = self.position + self.size_in_bytes
        args = (self.base_offset, self.base_timestamp, self.base_sequence, log_append_time)
        if not self.attributes & COMPRESSION_CODEC_MASK:
            return _decode(self.buf, start, end, count, *args, stream=False, views=views)
        return self._compressed_records(self.buf[start:end], count, args, views)

    def plain_records(self) -> bytes | None:
        """The decompressed record stream of this compressed batch, whole, for callers that decode it in one
        pass (``kafka_text.batch_record_lines``); None when :meth:`records` would take another road: the batch
        is not compressed, its codec id is unknown, decompressing it fails (a damaged stream, the decompression
        bound) or it decompresses to more than :data:`STREAMED_RECORDS_BYTES` (read a window at a time).  The
        caller then takes :meth:`records`, which gives Kafka's errors.  The stream is read as
        :meth:`_compressed_records` reads it, so a stream accepted here is the one :meth:`records` decodes."""
        codec = self.attributes & COMPRESSION_CODEC_MASK
        if not codec or codec not in compression.CODEC_NAMES or self.size_in_bytes < RECORD_BATCH_OVERHEAD:
            return None
        start = self.position + RECORD_BATCH_OVERHEAD
        try:
            reader = compression.open_eager_decompressor(
                codec,
                self.buf[start : self.position + self.size_in_bytes],
                magic=self.magic,
                limit=self.decompression_limit,
            )
            plain = reader.read_up_to(STREAMED_RECORDS_BYTES + 1)
        except DecompressionError:
            return None
        return plain if len(plain) <= STREAMED_RECORDS_BYTES else None

    def timestamps(self) -> Iterator[int]:
        """The records' timestamps (Kafka's time-index dump reads ``record.timestamp``; v2 records are decoded
        whole, as ``DefaultRecord.readFrom`` does)."""
        return (record.timestamp for record in self.records())

    def _compressed_records(
        self, data: bytes, count: int, args: _RecordArgs, views: bool = False
    ) -> Iterator[Record]:
        codec = self.compression_type_id
        compression_name(codec)  # ids 5-7: InvalidRecordError, as CompressionType.forId
        try:
            reader = compression.open_eager_decompressor(
                codec, data, magic=self.magic, limit=self.decompression_limit
            )
            plain = reader.read_up_to(STREAMED_RECORDS_BYTES + 1)
        except DecompressionError as e:
            raise DecompressionError(f"Failed to decompress record stream: {e.message}") from e
        if len(plain) > STREAMED_RECORDS_BYTES:
            return self._streamed_records(reader, plain, data, count, args, views)
        it = _decode(plain, 0, len(plain), count, *args, stream=True)
        try:
            head = list(islice(it, EAGER_RECORDS))
            if len(head) < EAGER_RECORDS:
                return iter(head)
            for _ in it:  # validate the rest before showing anything, then decode it again lazily
                pass
        except InvalidRecordError as e:
            raise in_decompressed(e, self.position) from None
        return _chain(
            head, islice(_read_records(plain, 0, len(plain), count, *args, stream=True), EAGER_RECORDS, None)
        )

    def _streamed_records(
        self,
        reader: compression.Decompressor,
        first: bytes,
        data: bytes,
        count: int,
        args: _RecordArgs,
        views: bool = False,
    ) -> Iterator[Record]:
        """Records whose decompressed stream is too big to hold: read a window at a time, twice.

        Kafka decodes every record before returning the first, so a bad record (or a decompression error
        anywhere in the payload, which Kafka also meets first when it decompresses the whole payload) shows
        none of them: the first pass decodes and drops every record, the second decompresses again and yields
        them.  Memory is a window whatever the stream's size: a record too big for one is spilled to a
        temporary file (``_spilled_record``; ``views``: its big key or value is handed out as a view of it)."""
        try:
            try:
                for _ in _windowed_records(reader, first, count, args, views=True):  # nothing copied
                    pass
            except InvalidRecordError as e:
                reader.drain()  # a decompression error further on is what the whole payload would give
                raise in_decompressed(e, self.position) from None
        except DecompressionError as e:
            raise DecompressionError(f"Failed to decompress record stream: {e.message}") from e
        again = compression.open_decompressor(
            self.compression_type_id, data, magic=self.magic, limit=self.decompression_limit
        )
        return _windowed_records(again, again.read_up_to(WINDOW_BYTES), count, args, views)

    def __repr__(self) -> str:
        return (
            f"DefaultRecordBatch(position={self.position}, baseOffset={self.base_offset}, "
            f"lastOffset={self.last_offset}, count={self.records_count}, size={self.size_in_bytes})"
        )


def _complete_records(buf: bytes, pos: int, end: int, most: int) -> tuple[int, int, int]:
    """How many of at most ``most`` records starting at ``buf[pos]`` lie wholly before ``end``, where they end,
    and how many bytes the next one needs (0 when it is malformed: its length is no varint or negative, so
    decoding it gives Kafka's error)."""
    n = 0
    while n < most:
        try:
            size, body = read_varint(buf, pos, end)
        except VarintError:
            return (n, pos, end - pos + 1) if end - pos < 5 else (n + 1, end, 0)
        if size < 0:
            return n + 1, body, 0
        if body + size > end:
            return n, pos, body + size - pos
        pos = body + size
        n += 1
    return n, pos, 0


def _windowed_records(
    reader: compression.Decompressor, first: bytes, count: int, args: _RecordArgs, views: bool = False
) -> Iterator[Record]:
    """The ``count`` records of a decompressed stream, decoded a window at a time (``first`` is its start).

    Errors are Kafka's, with positions in the stream, as :func:`_read_records` gives them on the whole stream:
    a record that runs past the end of the stream, and bytes left after the last declared record.  A record
    of more than :data:`SPILLED_RECORD_BYTES` is read through a temporary file (:func:`_spilled_record`), so
    that no window holds it; ``views`` as for :meth:`DefaultRecordBatch.records`."""
    buf = first
    base = 0  # position of buf[0] in the stream
    pos = 0
    done = 0
    ended = False
    try:
        while done < count:
            n, cut, need = _complete_records(buf, pos, len(buf), count - done)
            if n:
                for record in _decode(buf, pos, cut, n, *args, stream=True):
                    record.position += base
                    yield record
                done += n
                pos = cut
                continue
            if need > SPILLED_RECORD_BYTES and not ended:
                spilled = base + pos
                base = spilled  # an error in the spilled record is located in the stream
                record = _spilled_record(reader, memoryview(buf)[pos:], need, count - done, args, views)
                record.position += spilled
                buf = b""
                yield record
                done += 1
                base = spilled + need
                pos = 0
                buf = reader.read_up_to(WINDOW_BYTES)
                ended = len(buf) < WINDOW_BYTES
                continue
            if ended:  # the stream ends inside this record: decoding it gives Kafka's error
                for _ in _read_records(buf, pos, len(buf), count - done, *args, stream=True):
                    pass
                raise AssertionError("a record past the end of the stream was decoded")  # pragma: no cover
            want = max(WINDOW_BYTES, need)
            more = reader.read_up_to(want)
            ended = len(more) < want
            buf = buf[pos:] + more
            base += pos
            pos = 0
        if pos < len(buf) or (not ended and reader.read(1)):
            raise InvalidRecordError(
                "Incorrect declared batch size, records still remaining in file", position=pos
            )
    except InvalidRecordError as e:
        if e.position is not None:
            e.position += base
        raise


def _spilled_record(
    reader: compression.Decompressor, head: memoryview, need: int, left: int, args: _RecordArgs, views: bool
) -> Record:
    """The record of ``need`` bytes that starts with ``head`` and goes on in ``reader``, copied into an unlinked
    temporary file a window at a time and decoded from a read-only map of it (its position is in that map).

    With ``views`` its key or value of ``MAX_EAGER_BYTES`` and more is a view of the map, whose pages the text
    writers drop as they go (``file_records.release_view_pages``): a 200 MiB value costs a window of memory
    and 200 MiB of temporary file, which goes when the record does.  A stream that ends inside the record
    gives Kafka's error for it, as in a window (``left``: the records still declared)."""
    import tempfile  # only for a record this big: kdump files' start stays lean

    with tempfile.TemporaryFile(prefix="kdump-record-") as spill:
        spill.write(head)
        size = len(head)
        head.release()
        while size < need:
            piece = reader.read_up_to(min(WINDOW_BYTES, need - size))
            if not piece:
                break
            spill.write(piece)
            size += len(piece)
        spill.flush()
        mapped: Any = mmap.mmap(spill.fileno(), size, access=mmap.ACCESS_READ)  # read as bytes are
    if size < need:  # the stream ends inside the record
        for _ in _read_records(mapped, 0, size, left, *args, stream=True):
            pass
        raise AssertionError("a record past the end of the stream was decoded")  # pragma: no cover
    return next(_read_records(mapped, 0, size, 1, *args, stream=True, views=views))


def _checksum_in_pieces(buf: bytes, start: int, end: int) -> int:
    """CRC-32C of a big batch a piece at a time; pieces of a memory map are dropped from the resident set once
    summed (they stay in the page cache), so checking a 200 MiB batch does not make the process 200 MiB."""
    view = memoryview(buf)
    mm = buf if isinstance(buf, mmap.mmap) else None
    crc = 0
    pos = start
    while pos < end:
        stop = min(pos + _CHECKSUM_PIECE, end)
        crc = crc32c(view[pos:stop], crc)
        if mm is not None and not drop_pages(mm, pos, stop):
            mm = None
        pos = stop
    return crc


def in_decompressed(error: InvalidRecordError, batch_position: int) -> InvalidRecordError:
    """A position inside a decompressed payload is not a file position: say where in the payload the bad record
    is and locate the error at its batch instead."""
    if error.position is not None:
        error.message = f"{error.message} (record at byte {error.position} of the decompressed records)"
        error.args = (error.message,)
    error.position = batch_position
    return error


def _chain(head: list[Record], tail: Iterator[Record]) -> Iterator[Record]:
    yield from head
    yield from tail


def compression_name(codec_id: int) -> str:
    name = compression.CODEC_NAMES.get(codec_id)
    if name is None:
        raise InvalidRecordError(f"Unknown compression type id: {codec_id}")
    return name


#: The ``REVISION`` of ``kdump/_speedups.c`` this decoder agrees with (2: Java int sequences, negative deltas;
#: 3: records of more than ``MAX_EAGER_HEADERS`` headers are left to the Python decoder, which keeps them lazy;
#: 4: keys and values of ``MAX_EAGER_BYTES`` and more are left to the Python decoder, which can hand out views;
#: 5: ``batch_lines``, the shallow walk's batch lines; 6: ``record_lines``, a deep walk's record lines; 7:
#: ``header_run`` takes None for its CRC function, and then checks no CRC; 8: ``header_run`` reads the index
#: checkers' pending entries as int64 columns; ``index_columns``; 9: ``header_run`` and ``batch_lines`` also read
#: a file descriptor (an int) with pread, headers alone when no CRC is checked).
SPEEDUPS_REVISION = 9


def _load_speedups() -> Any:
    """The optional C module (``kdump/_speedups.c``), unless absent, stale or ``KDUMP_PURE_PYTHON`` is set."""
    if os.environ.get("KDUMP_PURE_PYTHON"):
        return None
    try:
        from kdump import _speedups
    except ImportError:
        return None
    if getattr(_speedups, "REVISION", None) != SPEEDUPS_REVISION:
        return None  # built from an older kdump/_speedups.c: not trusted (pip install -e . rebuilds it)
    return _speedups


_SPEEDUPS = _load_speedups()

#: ``read_records(...) -> list[Record] | None``; None means "let the pure-Python decoder decide" (errors).
ACCELERATOR: Callable[..., list[Record] | None] | None = None if _SPEEDUPS is None else _SPEEDUPS.read_records

#: ``batch_lines(buf, pos, end, stop, crc32c) -> (text, next_position) | None``: Kafka's shallow lines of a run
#: of plain v2 batches (``kafka_text.batch_line_head`` + ``batch_line_tail``); None: the first batch is not
#: plain, the caller frames it (``FileRecords.batches``).
BATCH_LINES: Callable[..., tuple[str, int] | None] | None = (
    None if _SPEEDUPS is None else _SPEEDUPS.batch_lines
)

#: ``record_lines(buf, pos, end, count, base_offset, base_timestamp, base_sequence, log_append_time, middle,
#: print_contents) -> (text, first_offset, last_offset) | None``: Kafka's record lines of an uncompressed data
#: batch whose offsets follow each other and whose texts are valid UTF-8 (``kafka_text.record_renderer``'s fused
#: renderer); None: the caller renders record by record.
RECORD_LINES: Callable[..., tuple[str, int, int] | None] | None = (
    None if _SPEEDUPS is None else _SPEEDUPS.record_lines
)


def record_batch_lines() -> Callable[[Any, int, int, int], tuple[str, int] | None] | None:
    """:data:`BATCH_LINES` with the CRC-32C it checks batches with: ``(buf, pos, end, stop) -> (text, next) |
    None`` (batches are taken while one starts before ``stop``); None without the C accelerator."""
    lines = BATCH_LINES
    if lines is None:
        return None
    return lambda buf, pos, end, stop: lines(buf, pos, end, stop, crc32c)


def _decode(
    buf: bytes,
    pos: int,
    end: int,
    count: int,
    base_offset: int,
    base_timestamp: int,
    base_sequence: int,
    log_append_time: int | None,
    *,
    stream: bool,
    views: bool = False,
) -> Iterator[Record]:
    """The records of ``buf[pos:end]``: through the accelerator when it is present, the batch is not huge and
    the records are well formed; otherwise through :func:`_read_records`, which also gives Kafka's errors."""
    if ACCELERATOR is not None and count <= EAGER_RECORDS:
        rows = ACCELERATOR(
            Record, Header, buf, pos, end, count, base_offset, base_timestamp, base_sequence, log_append_time
        )
        if rows is not None:
            return iter(rows)
    return _read_records(
        buf,
        pos,
        end,
        count,
        base_offset,
        base_timestamp,
        base_sequence,
        log_append_time,
        stream=stream,
        views=views,
    )


def _read_records(
    buf: bytes,
    pos: int,
    end: int,
    count: int,
    base_offset: int,
    base_timestamp: int,
    base_sequence: int,
    log_append_time: int | None,
    *,
    stream: bool,
    views: bool = False,
) -> Iterator[Record]:
    """Decode ``count`` v2 records from ``buf[pos:end]``.

    ``views``: keys and values of ``MAX_EAGER_BYTES`` and more are ``memoryview`` slices of ``buf``.

    ``stream`` selects the error wording of Kafka's stream reader (records of a compressed batch, where running
    out of data is "premature EOF") versus its buffer reader (uncompressed records).  Either way, bytes left
    after the last declared record are an error, as in Kafka -- raised *instead of* that record, because
    ``DefaultRecordBatch.RecordIterator.next`` checks ``ensureNoneRemaining`` after reading the last record
    and before returning it.
    """
    last = count - 1
    # typed as bytes-like: Record documents that its key and value are views when asked for (views=True)
    view: Any = memoryview(buf) if views else buf
    big = MAX_EAGER_BYTES if views else INT_MAX + 1
    for i in range(count):
        record_start = pos
        try:
            # length (zigzag varint; one byte in the common case)
            b = buf[pos] if pos < end else -1
            if 0 <= b < 0x80:
                size = (b >> 1) ^ -(b & 1)
                pos += 1
            elif b < 0:
                raise VarintError("premature end")
            elif pos + 1 < end and buf[pos + 1] < 0x80:
                b = (b & 0x7F) | (buf[pos + 1] << 7)
                size = (b >> 1) ^ -(b & 1)
                pos += 2
            else:
                size, pos = read_varint(buf, pos, end)
        except VarintError as e:
            # The length is read outside DefaultRecord's try block: running out of bytes is a
            # BufferUnderflowException, which the uncompressed iterator reports as premature EOF, and the stream
            # iterator reads EOF as 0xff bytes until the 5-byte limit (premature EOF too); a varint too long in
            # the buffer is an IllegalArgumentException that nothing catches.
            if stream or str(e).startswith("premature"):
                raise InvalidRecordError(
                    "Incorrect declared batch size, premature EOF reached", position=record_start
                ) from None
            raise InvalidRecordError(str(e), position=record_start) from None
        body_end = pos + size
        if stream and size < 0:  # ByteBuffer.allocate(negative): IllegalArgumentException, premature EOF
            raise InvalidRecordError(
                "Incorrect declared batch size, premature EOF reached", position=record_start
            )
        if body_end > end:
            if stream:
                raise InvalidRecordError(
                    f"Invalid record size: expected {size} bytes in record payload, but the record payload "
                    "reached EOF.",
                    position=record_start,
                )
            raise InvalidRecordError(
                f"Invalid record size: expected {size} bytes in record payload, but instead the buffer has only "
                f"{end - pos} remaining bytes.",
                position=record_start,
            )
        limit = body_end if stream else end
        try:
            attributes = buf[pos]
            pos += 1
            b = buf[pos]
            if b < 0x80:
                timestamp_delta = (b >> 1) ^ -(b & 1)
                pos += 1
            elif pos + 1 < limit and buf[pos + 1] < 0x80:  # two bytes, the next most common size
                b = (b & 0x7F) | (buf[pos + 1] << 7)
                timestamp_delta = (b >> 1) ^ -(b & 1)
                pos += 2
            else:
                timestamp_delta, pos = read_varlong(buf, pos, limit)
            b = buf[pos]
            if b < 0x80:
                offset_delta = (b >> 1) ^ -(b & 1)
                pos += 1
            elif pos + 1 < limit and buf[pos + 1] < 0x80:
                b = (b & 0x7F) | (buf[pos + 1] << 7)
                offset_delta = (b >> 1) ^ -(b & 1)
                pos += 2
            else:
                offset_delta, pos = read_varint(buf, pos, limit)
            b = buf[pos]
            if b < 0x80:
                key_size = (b >> 1) ^ -(b & 1)
                pos += 1
            else:
                key_size, pos = read_varint(buf, pos, limit)
            if key_size >= 0:
                if pos + key_size > limit:
                    raise IndexError
                key = buf[pos : pos + key_size] if key_size < big else view[pos : pos + key_size]
                pos += key_size
            else:
                key = None
            b = buf[pos]
            if b < 0x80:
                value_size = (b >> 1) ^ -(b & 1)
                pos += 1
            else:
                value_size, pos = read_varint(buf, pos, limit)
            if value_size >= 0:
                if pos + value_size > limit:
                    raise IndexError
                value = buf[pos : pos + value_size] if value_size < big else view[pos : pos + value_size]
                pos += value_size
            else:
                value = None
            b = buf[pos]
            if b < 0x80:
                header_count = (b >> 1) ^ -(b & 1)
                pos += 1
            else:
                header_count, pos = read_varint(buf, pos, limit)
            if header_count == 0:
                headers: tuple[Header, ...] | LazyHeaders = ()
            else:
                headers, pos = _read_headers(buf, pos, limit, header_count, record_start)
        except (IndexError, VarintError):
            raise InvalidRecordError("Found invalid record structure", position=record_start) from None
        if pos != body_end:
            body_start = body_end - size
            raise InvalidRecordError(
                f"Invalid record size: expected to read {size} bytes in record payload, but instead read "
                f"{pos - body_start}",
                position=record_start,
            )
        if i == last and pos != end:
            raise InvalidRecordError(
                "Incorrect declared batch size, records still remaining in file", position=pos
            )
        if base_sequence >= 0:
            sequence = (
                base_sequence + offset_delta
                if 0 <= offset_delta and base_sequence <= INT_MAX - offset_delta
                else increment_sequence(base_sequence, offset_delta)  # Java int overflow, negative deltas too
            )
        else:
            sequence = -1
        yield Record(
            wrap_int64(base_offset + offset_delta),  # Java long arithmetic wraps
            wrap_int64(base_timestamp + timestamp_delta) if log_append_time is None else log_append_time,
            sequence,
            key,
            value,
            headers,
            attributes,
            key_size if key_size >= 0 else -1,
            value_size if value_size >= 0 else -1,
            2,
            None,
            None,
            record_start,
            pos - record_start,
        )


def _read_headers(
    buf: bytes, pos: int, limit: int, header_count: int, record_start: int
) -> tuple[tuple[Header, ...] | LazyHeaders, int]:
    """A record's ``header_count`` headers from ``buf[pos:limit]`` and where they end, checked as Kafka's
    ``DefaultRecord.readHeaders`` checks them.  Every header is checked; past ``MAX_EAGER_HEADERS`` none is
    built (they stay encoded, read lazily).  IndexError or VarintError for a structure running past ``limit``."""
    if header_count < 0:
        raise InvalidRecordError(
            f"Found invalid number of record headers {header_count}", position=record_start
        )
    if header_count > limit - pos:
        raise InvalidRecordError(
            f"Found invalid number of record headers. {header_count} is larger than the remaining "
            "size of the buffer",
            position=record_start,
        )
    headers_start = pos
    hs: list[Header] | None = [] if header_count <= MAX_EAGER_HEADERS else None
    for _h in range(header_count):
        hk_size, pos = read_varint(buf, pos, limit)
        if hk_size < 0:
            raise InvalidRecordError(f"Invalid negative header key size {hk_size}", position=record_start)
        if pos + hk_size > limit:
            raise IndexError
        key_at = pos
        pos += hk_size
        hv_size, pos = read_varint(buf, pos, limit)
        value_at = pos
        if hv_size >= 0:
            if pos + hv_size > limit:
                raise IndexError
            pos += hv_size
        if hs is not None:
            hs.append(Header(buf[key_at : key_at + hk_size], buf[value_at:pos] if hv_size >= 0 else None))
    return (tuple(hs) if hs is not None else LazyHeaders(buf, headers_start, pos, header_count)), pos
