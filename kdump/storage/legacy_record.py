"""Legacy message sets, magic v0 and v1 (Kafka's ``LegacyRecord`` and ``AbstractLegacyRecordBatch``).

Each log entry is ``offset int64, size int32`` followed by one message::

    crc uint32 (CRC-32 of magic..end)   magic int8   attributes int8   [timestamp int64, v1 only]
    keyLength int32 (-1 = null)  key    valueLength int32 (-1 = null)  value

A compressed message set is one "wrapper" message whose value is a compressed stream of further log entries.
In Kafka's vocabulary the wrapper (or a lone uncompressed message) is itself the "batch".
"""

from __future__ import annotations

import struct
import zlib
from collections.abc import Generator, Iterator
from typing import cast

from kdump.errors import CorruptRecordError, DecompressionError, InvalidRecordError
from kdump.storage import compression
from kdump.storage.record import Record
from kdump.storage.record_batch import (
    LOG_OVERHEAD,
    STREAMED_RECORDS_BYTES,
    WINDOW_BYTES,
    compression_name,
    in_decompressed,
)
from kdump.storage.timestamp_type import CREATE_TIME, LOG_APPEND_TIME, NO_TIMESTAMP, NO_TIMESTAMP_TYPE

RECORD_OVERHEAD_V0 = 14
RECORD_OVERHEAD_V1 = 22
CRC_OFFSET = 0
MAGIC_OFFSET = 4
ATTRIBUTES_OFFSET = 5
TIMESTAMP_OFFSET = 6
KEY_SIZE_OFFSET_V0 = 6
KEY_SIZE_OFFSET_V1 = 14
COMPRESSION_CODEC_MASK = 0x07
TIMESTAMP_TYPE_MASK = 0x08

#: The heap of Kafka's tools (kafka-run-class.sh's default -Xmx256M): a larger buffer cannot be allocated.
KAFKA_TOOL_HEAP = 256 * 1024 * 1024

_LOG_HEADER = struct.Struct(">qi")
_INT = struct.Struct(">i")
_LONG = struct.Struct(">q")
_UINT = struct.Struct(">I")


def record_overhead(magic: int) -> int:
    """Kafka's ``LegacyRecord.recordOverhead``: the size of a message of ``magic`` (0 or 1) with a null key and
    value, its header (14 bytes for v0, 22 for v1, which adds the timestamp)."""
    if magic == 0:
        return RECORD_OVERHEAD_V0
    if magic == 1:
        return RECORD_OVERHEAD_V1
    raise ValueError(f"Invalid magic {magic} for a legacy record")


class LegacyFieldError(InvalidRecordError):
    """A key/value size field of a message that lies outside it, or a key/value that runs past its end, as
    Kafka's ``LegacyRecord`` finds out when the field is used.  ``java_text`` is the message of the Java
    exception (what the internal-topic decoders print in their ``Error at offset ..., skipping.`` text)."""

    def __init__(self, message: str, *, java_text: str, position: int | None = None) -> None:
        super().__init__(message, position=position)
        self.java_text = java_text


class LegacyRecordBatch:
    """One legacy log entry at ``position`` in ``buf`` (a lone message or a compressed wrapper).

    ``wrapper_timestamp``/``wrapper_timestamp_type`` are set for messages read from inside a v1 wrapper: a
    LogAppendTime wrapper overrides the timestamps of its inner v1 messages, as in Kafka.
    """

    __slots__ = (
        "buf",
        "position",
        "offset",
        "size_in_bytes",
        "magic",
        "attributes",
        "wrapper_timestamp",
        "wrapper_timestamp_type",
        "decompression_limit",
        "in_wrapper",
    )

    def __init__(
        self,
        buf: bytes,
        position: int,
        offset: int,
        size: int,
        magic: int,
        *,
        decompression_limit: int = compression.DEFAULT_DECOMPRESSION_LIMIT,
        wrapper_timestamp: int | None = None,
        wrapper_timestamp_type: str | None = None,
        in_wrapper: bool = False,
    ) -> None:
        self.buf = buf
        self.position = position
        self.offset = offset
        self.size_in_bytes = LOG_OVERHEAD + size
        self.magic = magic
        start = position + LOG_OVERHEAD
        self.attributes = buf[start + ATTRIBUTES_OFFSET] if start + ATTRIBUTES_OFFSET < len(buf) else 0
        self.wrapper_timestamp = wrapper_timestamp
        self.wrapper_timestamp_type = wrapper_timestamp_type
        self.decompression_limit = decompression_limit
        #: A message read from inside a compressed wrapper (Kafka's ``BasicLegacyRecordBatch``), not a file entry.
        self.in_wrapper = in_wrapper

    # -- message fields ---------------------------------------------------------------------------------------

    @property
    def _message_start(self) -> int:
        return self.position + LOG_OVERHEAD

    @property
    def _message_end(self) -> int:
        return self.position + self.size_in_bytes

    def _int_at(self, rel: int) -> int:
        at = self._message_start + rel
        size = self.size_in_bytes - LOG_OVERHEAD
        if rel < 0 or at + 4 > self._message_end:
            raise LegacyFieldError(
                f"Message field at byte {rel} lies outside the {size}-byte message",
                # Java 17's ByteBuffer.getInt(index) (Buffer.checkIndex) throws IndexOutOfBoundsException with
                # no message: the parsers print getMessage(), "null"
                java_text="null",
                position=self.position,
            )
        value: int = _INT.unpack_from(self.buf, at)[0]
        return value

    @property
    def base_offset(self) -> int:
        return self.offset

    @property
    def last_offset(self) -> int:
        return self.offset

    def load_batch_header(self) -> None:
        """Kafka's ``FileChannelRecordBatch.loadBatchHeader`` for a legacy entry: the header's size depends on the
        magic (``LegacyRecord.headerSize``), which fails for a magic other than 0 and 1 -- a magic byte of
        0x80-0xff is a negative Java byte, dispatched here because it is below 2.  The batch-level properties
        that Kafka reads through the header (timestamp type, max timestamp, compression type, checksum) call
        this; the message's own fields (``LegacyRecord``, what record iteration reads) do not."""
        if self.magic != 0 and self.magic != 1 and not self.in_wrapper:
            raise InvalidRecordError(
                f"Invalid magic used in LegacyRecord: {self.magic}", position=self.position
            )

    @property
    def checksum(self) -> int:
        if self.magic != 0 and self.magic != 1:
            self.load_batch_header()
        return self._stored_checksum()

    def _stored_checksum(self) -> int:
        crc: int = _UINT.unpack_from(self.buf, self._message_start + CRC_OFFSET)[0]
        return crc

    def checksummed_range(self) -> tuple[int, int]:
        """The bytes of ``buf`` the CRC-32 covers: the message from its magic byte on."""
        return self._message_start + MAGIC_OFFSET, self._message_end

    def compute_checksum(self) -> int:
        start, end = self.checksummed_range()
        return zlib.crc32(memoryview(self.buf)[start:end])

    def is_valid(self) -> bool:
        """Kafka's ``LegacyRecord.isValid``: at least 14 bytes and a matching CRC-32."""
        return (
            self.size_in_bytes - LOG_OVERHEAD >= RECORD_OVERHEAD_V0
            and self._stored_checksum() == self.compute_checksum()
        )

    @property
    def compression_type_id(self) -> int:
        return self.attributes & COMPRESSION_CODEC_MASK

    @property
    def compression_name(self) -> str:
        if self.magic != 0 and self.magic != 1:
            self.load_batch_header()
        return compression_name(self.compression_type_id)

    @property
    def is_compressed(self) -> bool:
        return self.attributes & COMPRESSION_CODEC_MASK != 0

    @property
    def timestamp_type(self) -> str:
        """``LegacyRecord.timestampType``: none for v0; inside a wrapper, the wrapper's type (whatever it is);
        else from the attributes."""
        if self.magic == 0:
            return NO_TIMESTAMP_TYPE
        if self.magic != 1:
            self.load_batch_header()
        if self.wrapper_timestamp_type is not None:
            return self.wrapper_timestamp_type
        return LOG_APPEND_TIME if self.attributes & TIMESTAMP_TYPE_MASK else CREATE_TIME

    @property
    def timestamp(self) -> int:
        if self.magic == 0:
            return NO_TIMESTAMP
        if self.wrapper_timestamp_type == LOG_APPEND_TIME and self.wrapper_timestamp is not None:
            return self.wrapper_timestamp
        timestamp: int = _LONG.unpack_from(self.buf, self._message_start + TIMESTAMP_OFFSET)[0]
        return timestamp

    @property
    def max_timestamp(self) -> int:
        if self.magic != 0 and self.magic != 1:
            self.load_batch_header()
        return self.timestamp

    @property
    def key_size(self) -> int:
        return self._int_at(KEY_SIZE_OFFSET_V0 if self.magic == 0 else KEY_SIZE_OFFSET_V1)

    @property
    def value_size(self) -> int:
        key_offset = (KEY_SIZE_OFFSET_V0 if self.magic == 0 else KEY_SIZE_OFFSET_V1) + 4
        return self._int_at(key_offset + max(0, self.key_size))

    def _sized(self, size_rel: int) -> bytes | None:
        size = self._int_at(size_rel)
        if size < 0:
            return None
        at = self._message_start + size_rel + 4
        if at + size > self._message_end:
            raise LegacyFieldError(
                f"Message declares a {size}-byte field that runs past the end of the message",
                java_text=f"newLimit > capacity: ({size} > {self._message_end - at})",  # ByteBuffer.limit
                position=self.position,
            )
        return self.buf[at : at + size]

    @property
    def key(self) -> bytes | None:
        return self._sized(KEY_SIZE_OFFSET_V0 if self.magic == 0 else KEY_SIZE_OFFSET_V1)

    @property
    def value(self) -> bytes | None:
        key_offset = (KEY_SIZE_OFFSET_V0 if self.magic == 0 else KEY_SIZE_OFFSET_V1) + 4
        return self._sized(key_offset + max(0, self.key_size))

    # What Kafka's AbstractLegacyRecordBatch answers for the parts of the RecordBatch interface that only v2
    # has, so that callers treat every batch alike (kdump.storage.record_batch.RecordBatch).
    is_control_batch = False
    is_transactional = False
    producer_id = -1
    producer_epoch = -1
    base_sequence = -1
    last_sequence = -1
    partition_leader_epoch = -1
    count_or_none = None  # countOrNull(): a wrapper's inner count is known only by decompressing it
    delete_horizon_ms = None  # deleteHorizonMs(): OptionalLong.empty

    @property
    def next_offset(self) -> int:
        return self.last_offset + 1

    def as_record(self, offset: int | None = None) -> Record:
        """This message as a :class:`Record` (key/value sizes as stored, CRC and validity included).

        The key, value and their sizes are read when asked for, as Kafka's ``LegacyRecord`` reads them: a
        size field that lies outside the message fails only the output that needs it."""
        return LegacyRecord(self, self.offset if offset is None else offset)

    # -- records ---------------------------------------------------------------------------------------------

    def records(self, *, views: bool = False) -> Iterator[Record]:  # noqa: ARG002 - v2's views: copies here
        """Iterate like Kafka's legacy batch iterator: the message itself, or the inner messages of a wrapper.

        The wrapper's inner messages are all framed (and decompressed) before the first is returned; v1 inner
        offsets are relative and become absolute from the wrapper offset; nested compression is an error when
        that inner message is reached.
        """
        if not self.is_compressed:
            return iter((self.as_record(),))
        return self._deep_records()

    def timestamps(self) -> Iterator[int]:
        """The records' timestamps, as Kafka's time-index dump reads them: ``record.timestamp`` only -- of a lone
        message that is the whole of what is read (``LegacyRecord.timestamp``; no key or value size), of a
        wrapper its inner messages, with the wrapper's checks and the inner-compression check.  (Records read
        their key and value sizes only when asked, so nothing else is read.)"""
        return (record.timestamp for record in self.records())

    def _deep_records(self) -> Iterator[Record]:
        wrapper_magic = self.magic
        if wrapper_magic not in (0, 1):
            raise InvalidRecordError(
                f"Invalid wrapper magic found in legacy deep record iterator {wrapper_magic}"
            )
        codec = self.compression_type_id
        if codec == compression.ZSTD:
            raise InvalidRecordError(
                f"Invalid wrapper compressionType found in legacy deep record iterator {wrapper_magic}"
            )
        if codec not in compression.CODEC_NAMES:
            raise InvalidRecordError(f"Unknown compression type id: {codec}")
        value = self.value
        if value is None:
            raise InvalidRecordError(
                f"Found invalid compressed record set with null value (magic = {wrapper_magic})"
            )
        try:
            reader = compression.open_eager_decompressor(
                codec, value, magic=wrapper_magic, limit=self.decompression_limit
            )
            plain = reader.read_up_to(STREAMED_RECORDS_BYTES + 1)
            streamed = len(plain) > STREAMED_RECORDS_BYTES
            # Kafka reads every inner message before returning the first (so a bad framing shows none of
            # them); this first pass checks the framing and finds the last inner offset without keeping
            # anything, and the inner messages are then decoded one at a time: memory stays flat for millions
            # of them.  A payload too big to hold is read a window at a time, twice.
            try:
                inner_count, last_inner, end = self._check_framing(plain, reader if streamed else None)
            except CorruptRecordError:
                if streamed:
                    reader.drain()  # a decompression error further on is what the whole payload would give
                raise
        except DecompressionError as e:
            raise DecompressionError(f"Failed to decompress legacy message set: {e.message}") from e
        if not inner_count:
            raise InvalidRecordError("Found invalid compressed record set with no inner records")
        absolute_base = -1
        if wrapper_magic == 1:
            if self.offset == 0:
                absolute_base = 0
            else:
                if self.offset < last_inner:
                    raise InvalidRecordError(
                        f"Found invalid wrapper offset in compressed v1 message set, wrapper offset "
                        f"'{self.offset}' is less than the last inner message offset '{last_inner}' and it is "
                        "not zero."
                    )
                absolute_base = self.offset - last_inner
        if not streamed:
            return self._yield_inner(plain, 0, end, absolute_base)
        return self._yield_streamed(value, end, absolute_base)

    def _check_framing(self, plain: bytes, reader: compression.Decompressor | None) -> tuple[int, int, int]:
        """Walk the inner entries' framing (``plain``, then what ``reader`` has after it when not None):
        how many whole entries, the last one's offset, and where they end."""
        inner_count = 0
        last_inner = 0
        pos = 0  # in plain
        base = 0  # position of plain[0] in the payload
        end = len(plain)
        while True:
            if end - pos < LOG_OVERHEAD and reader is not None:
                plain = plain[pos:] + reader.read_up_to(max(WINDOW_BYTES, LOG_OVERHEAD))
                base += pos
                pos = 0
                end = len(plain)
            if end - pos < LOG_OVERHEAD:
                break
            offset, size = _LOG_HEADER.unpack_from(plain, pos)
            if size < RECORD_OVERHEAD_V0:
                raise CorruptRecordError(
                    f"Record size is less than the minimum record overhead ({RECORD_OVERHEAD_V0})"
                )
            if size >= KAFKA_TOOL_HEAP:
                # DataLogInputStream.nextBatch allocates the declared size before reading it (no bound in the
                # deep iterator): in the tool's 256 MiB heap that is an OutOfMemoryError
                raise InvalidRecordError(
                    f"An inner message of the compressed message set declares {size} bytes; Kafka's tool runs "
                    "out of memory allocating them (java.lang.OutOfMemoryError)",
                    position=self.position,
                )
            if pos + LOG_OVERHEAD + size > end:
                if reader is None:
                    break
                # skip the part of the entry that is not in plain: is all of it there?
                missing = pos + LOG_OVERHEAD + size - end
                if reader.skip(missing) < missing:
                    break
                base += end + missing
                plain = b""
                pos = end = 0
            else:
                pos += LOG_OVERHEAD + size
            inner_count += 1
            last_inner = offset
        return inner_count, last_inner, base + pos

    def _yield_streamed(self, value: bytes, end: int, absolute_base: int) -> Iterator[Record]:
        """The inner entries of ``value``'s first ``end`` decompressed bytes, decompressed again a window at a
        time (an entry is read whole: a window holds at least the largest)."""
        reader = compression.open_decompressor(
            self.compression_type_id, value, magic=self.magic, limit=self.decompression_limit
        )
        buf = b""
        base = 0  # position of buf[0] in the payload
        while base + len(buf) < end:
            # a window, or at least the whole of the entry at its start
            size = _LOG_HEADER.unpack_from(buf)[1] if len(buf) >= LOG_OVERHEAD else 0
            want = min(max(WINDOW_BYTES, LOG_OVERHEAD + size) - len(buf), end - base - len(buf))
            more = reader.read_up_to(want)
            if len(more) < want:  # the first pass read them all: the payload changed under us
                raise InvalidRecordError(
                    "The compressed message set changed while it was read", position=self.position
                )
            buf += more
            pos = yield from self._yield_inner(buf, 0, len(buf), absolute_base, base)
            if pos:
                buf = buf[pos:]
                base += pos

    def _yield_inner(
        self, plain: bytes, pos: int, end: int, absolute_base: int, base: int | None = None
    ) -> Generator[Record, None, int]:
        """The whole inner entries of ``plain[pos:end]``; returns where they end.  ``base`` is where ``plain``
        starts in the decompressed payload when it is a window of it (positions, of records and in errors, are
        the payload's)."""
        wrapper_ts = self.timestamp
        wrapper_ts_type = self.timestamp_type
        wrapper_position = self.position
        limit = self.decompression_limit
        while end - pos >= LOG_OVERHEAD:
            offset, size = _LOG_HEADER.unpack_from(plain, pos)
            if pos + LOG_OVERHEAD + size > end:
                break
            magic = plain[pos + LOG_OVERHEAD + MAGIC_OFFSET]
            if magic > 127:  # a signed Java byte
                magic -= 256
            entry = (LegacyRecordBatch if base is None else _WindowedEntry)(
                plain,
                pos,
                offset,
                size,
                magic,
                decompression_limit=limit,
                wrapper_timestamp=wrapper_ts if magic == 1 else None,
                wrapper_timestamp_type=wrapper_ts_type if magic == 1 else None,
                in_wrapper=True,
            )
            pos += LOG_OVERHEAD + size
            if base is not None:
                cast(_WindowedEntry, entry).window_base = base
            if entry.is_compressed:
                raise InvalidRecordError("Inner messages must not be compressed")
            try:
                record = entry.as_record(absolute_base + entry.offset if absolute_base >= 0 else None)
            except InvalidRecordError as e:  # located in the decompressed value: locate it at the wrapper
                raise in_decompressed(e, wrapper_position) from None
            if base:
                record.position += base
            yield record
        return pos

    def __repr__(self) -> str:
        return (
            f"LegacyRecordBatch(position={self.position}, offset={self.offset}, magic={self.magic}, "
            f"size={self.size_in_bytes})"
        )


class _WindowedEntry(LegacyRecordBatch):
    """An inner entry read from a window of a decompressed payload (``window_base`` is where the window starts):
    the errors of its fields give its position in the payload, as when the payload is read whole."""

    __slots__ = ("window_base",)
    window_base: int

    def _int_at(self, rel: int) -> int:
        try:
            return super()._int_at(rel)
        except LegacyFieldError as e:
            e.position = self.window_base + self.position
            raise

    def _sized(self, size_rel: int) -> bytes | None:
        try:
            return super()._sized(size_rel)
        except LegacyFieldError as e:
            e.position = self.window_base + self.position
            raise


class LegacyRecord(Record):
    """A v0/v1 message as a :class:`Record` whose key, value and sizes are read from the message on access
    (each access may raise :class:`InvalidRecordError`, as Kafka's ``LegacyRecord`` throws on use)."""

    __slots__ = ("_message",)

    def __init__(self, message: LegacyRecordBatch, offset: int) -> None:  # noqa: D107 - no Record.__init__
        self._message = message
        self.offset = offset
        self.timestamp = message.timestamp
        self.sequence = -1
        self.headers = ()
        self.attributes = message.attributes
        self.magic = message.magic
        self.crc = message._stored_checksum()  # no header check: a LegacyRecord reads its CRC
        self.valid = message.is_valid()
        self.position = message.position
        self.size_in_bytes = message.size_in_bytes

    @property
    def key(self) -> bytes | None:  # type: ignore[override]  # read from the message on use (Record: a plain field)
        return self._message.key

    @property
    def value(self) -> bytes | None:  # type: ignore[override]  # read from the message on use (Record: a plain field)
        return self._message.value

    @property
    def key_size(self) -> int:  # type: ignore[override]  # read from the message on use (Record: a plain field)
        return self._message.key_size

    @property
    def value_size(self) -> int:  # type: ignore[override]  # read from the message on use (Record: a plain field)
        return self._message.value_size

    def __reduce__(self) -> tuple[type[Record], tuple[object, ...]]:
        """Pickled (to other processes) as a plain :class:`Record`, with its fields read."""
        return (
            Record,
            (
                self.offset,
                self.timestamp,
                -1,
                self.key,
                self.value,
                (),
                self.attributes,
                self.key_size,
                self.value_size,
                self.magic,
                self.crc,
                self.valid,
                self.position,
                self.size_in_bytes,
            ),
        )
