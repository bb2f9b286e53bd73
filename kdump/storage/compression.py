"""Kafka's four compression codecs, decoded the way Kafka 4.0's own input streams decode them.

A compressed v2 batch holds its records as one compressed stream (the bytes after the 61-byte header); a
compressed legacy (magic 0/1) wrapper message holds the inner log entries as its value.  This module turns
such a payload into plain bytes and back: each codec's section below holds its decompressor (a
:class:`Decompressor`, what every reader uses) and its compressor (behind :func:`compress`, for the builder of
test segments and the tools that write them).  LZ4's checksums are :mod:`kdump.storage.xxhash`.  It prints
nothing and knows nothing about records.

What "the way Kafka decodes them" means, codec by codec (the Java classes are the ones Kafka 4.0 uses):

* **gzip** (``java.util.zip.GZIPInputStream``): RFC 1952 members, several in a row are one stream.  After a
  member's trailer Java only *tries* to start another member; if the next bytes are not a complete gzip
  header, they are silently ignored (trailing garbage is accepted), and whether it tries at all depends on
  its 8 KiB input buffer (see :meth:`_GzipDecompressor._end_member`).  Unlike zlib, Java ignores the
  reserved header flag bits.
* **snappy** (xerial ``SnappyInputStream`` 1.1.10.x): a 16-byte header ``\\x82SNAPPY\\x00`` + version +
  minimum version (neither checked), then chunks of ``int32 BE length`` + one raw Snappy block.  Input that
  does not start with the 8 magic bytes, or is shorter than 16 bytes, is one raw Snappy block (librdkafka
  writes this form).  Empty input is an error.  A second header between chunks (concatenated streams) is
  skipped; a chunk length that starts like a header but is not one ends the stream silently, and so do 1-3
  leftover bytes where a chunk length should be.
* **lz4** (Kafka's own ``Lz4BlockInputStream``): an LZ4 frame with independent blocks only.  The header
  checksum byte is verified for magic 1 and 2 but ignored for magic 0, because Kafka before 0.10 computed it
  over the magic number as well.  Block checksums are verified, the content checksum is skipped unread
  (4.0 has a TODO there), bytes after the end mark are ignored.
* **zstd** (zstd-jni ``ZstdInputStreamNoFinalizer``): one or more frames, possibly without content size.  A
  stream that ends inside a frame is an error ("Truncated source") except in a zstd-jni corner case, see
  :func:`_zstd_ends_mid_frame`.

Errors Kafka raises while *constructing* its input stream (gzip and lz4 headers, an empty or raw snappy
payload) are raised by :func:`open_decompressor`; all others by :meth:`Decompressor.read`.  Every codec
failure is a :class:`~kdump.errors.DecompressionError`; output beyond the caller's bound is a
:class:`~kdump.errors.DecompressionLimitError`.  Output is produced a piece at a time, so a small payload
that expands to gigabytes costs neither the memory nor the time of its full size.
"""

from __future__ import annotations

import struct
import threading
import zlib
from collections.abc import Callable
from typing import TYPE_CHECKING

from kdump.errors import DecompressionError, DecompressionLimitError
from kdump.storage.xxhash import xxh32

if TYPE_CHECKING:
    import zstandard


# The codec libraries (zstandard, cramjam, lz4) are imported where they are used, on first use: a dump of
# uncompressed segments never pays for them.

NONE, GZIP, SNAPPY, LZ4, ZSTD = 0, 1, 2, 3, 4
CODEC_NAMES: dict[int, str] = {NONE: "none", GZIP: "gzip", SNAPPY: "snappy", LZ4: "lz4", ZSTD: "zstd"}
DEFAULT_DECOMPRESSION_LIMIT: int = 256 * 1024 * 1024

# Smallest amount a codec is asked to produce per step of read(): small reads (a varint, a record header)
# then come out of a buffer instead of costing a codec call each.
_READ_STEP = 64 * 1024
# Amount asked per step by decompress().
_BULK_STEP = 256 * 1024

_I32_BE = struct.Struct(">i")
_U32_LE = struct.Struct("<I")
_U16_LE = struct.Struct("<H")
_M32 = 0xFFFFFFFF


# ------------------------------------------------------------------------------------------ base reader


class Decompressor:
    """Incremental, bounded reader of one decompressed payload; get one from :func:`open_decompressor`.

    At most ``limit`` bytes are ever produced.  :meth:`read` hands out the first ``limit`` bytes of the
    stream and then raises :class:`DecompressionLimitError` where a longer stream would continue (snappy
    announces each block's size up front, so an oversized snappy block raises before any of it is handed
    out).  After any exception the reader is unusable.
    """

    def __init__(self, codec: int, limit: int) -> None:
        self._codec_name = CODEC_NAMES[codec]
        self._limit = limit
        self._produced = 0  # bytes accepted from the codec (never more than limit)
        self._total_out = 0  # bytes handed to the caller
        self._pending = b""  # accepted but not yet handed out: self._pending[self._pending_pos:]
        self._pending_pos = 0
        self._finished = False
        self._exceeded = False

    @property
    def total_out(self) -> int:
        """Number of decompressed bytes returned by :meth:`read` so far."""
        return self._total_out

    def read(self, n: int) -> bytes:
        """Up to ``n`` (> 0) further bytes, possibly fewer; ``b""`` only at the end of the stream."""
        if n <= 0:
            return b""
        pending = self._pending
        pos = self._pending_pos
        if pos < len(pending):
            out = pending[pos : pos + n]
            self._pending_pos = pos + len(out)
        else:
            chunk = self._next_chunk(max(n, _READ_STEP))
            if len(chunk) > n:
                self._pending = chunk
                self._pending_pos = n
                out = chunk[:n]
            else:
                out = chunk
        self._total_out += len(out)
        return out

    def read_up_to(self, n: int) -> bytes:
        """The next ``n`` bytes in one piece; fewer only where the stream ends."""
        parts = []
        got = 0
        while got < n:
            piece = self.read(min(n - got, _BULK_STEP))
            if not piece:
                break
            parts.append(piece)
            got += len(piece)
        return parts[0] if len(parts) == 1 else b"".join(parts)

    def skip(self, n: int) -> int:
        """Read and drop the next ``n`` bytes (a piece at a time); returns how many there were."""
        skipped = 0
        while skipped < n:
            piece = self.read(min(n - skipped, _BULK_STEP))
            if not piece:
                break
            skipped += len(piece)
        return skipped

    def drain(self) -> None:
        """Read the rest of the stream and drop it: raises what the rest of the payload would raise."""
        while self.read(_BULK_STEP):
            pass

    def _read_rest(self) -> bytes:
        """Everything not yet read, in one piece (used by :func:`decompress` on a fresh reader)."""
        parts = [self._pending[self._pending_pos :]] if self._pending_pos < len(self._pending) else []
        self._pending = b""
        self._pending_pos = 0
        while chunk := self._next_chunk(_BULK_STEP):
            parts.append(chunk)
        out = parts[0] if len(parts) == 1 else b"".join(parts)  # the usual single piece is not copied
        self._total_out += len(out)
        return out

    def _next_chunk(self, want: int) -> bytes:
        """Next piece of output from the codec, clipped to the limit; ``b""`` at end of stream."""
        if self._finished:
            return b""
        budget = self._limit - self._produced
        if self._exceeded:
            raise self._limit_error()
        chunk = self._decode(min(want, budget + 1))
        if not chunk:
            self._finished = True
            return b""
        if len(chunk) > budget:
            self._exceeded = True
            if budget == 0:
                raise self._limit_error()
            chunk = chunk[:budget]
        self._produced += len(chunk)
        return chunk

    def _limit_error(self) -> DecompressionLimitError:
        return DecompressionLimitError(
            f"{self._codec_name}: decompressed size exceeds the limit of {self._limit} bytes"
        )

    def _error(self, reason: str) -> DecompressionError:
        return DecompressionError(f"{self._codec_name}: {reason}")

    def _decode(self, want: int) -> bytes:
        """Codec step: next bytes (at most ``want``, except a block codec's whole block); b"" at the end."""
        raise NotImplementedError


class _PlainDecompressor(Decompressor):
    """Codec 0: the payload itself, under the same bound."""

    def __init__(self, data: bytes | memoryview, limit: int) -> None:
        super().__init__(NONE, limit)
        self._data = data
        self._pos = 0

    def _decode(self, want: int) -> bytes:
        pos = self._pos
        self._pos = pos + want
        return bytes(self._data[pos : pos + want])


# ------------------------------------------------------------------------------------------------- gzip

_GZIP_FEED = 64 * 1024  # compressed bytes handed to zlib per call (bounds the copy made for unconsumed_tail)
_JAVA_GZIP_BUFFER = 8 * 1024  # the input buffer size Kafka gives GZIPInputStream


class _GzipHeaderError(Exception):
    """A gzip header Java's ``GZIPInputStream.readHeader`` would reject (Java's message where it has one)."""


def _gzip_header_length(data: bytes | memoryview, pos: int, size: int) -> int:
    """Length of the gzip member header at ``pos``, checked like Java's ``GZIPInputStream.readHeader``.

    Java reads magic, method and flags, skips MTIME/XFL/OS, the optional extra field, file name and comment,
    and checks the optional header CRC; unlike zlib it ignores the reserved flag bits.
    """

    def need(end: int) -> None:
        if end > size:
            raise _GzipHeaderError("unexpected end of stream in the GZIP header")

    need(pos + 2)
    if data[pos] != 0x1F or data[pos + 1] != 0x8B:
        raise _GzipHeaderError("Not in GZIP format")
    need(pos + 3)
    if data[pos + 2] != 8:
        raise _GzipHeaderError("Unsupported compression method")
    need(pos + 10)
    flags = data[pos + 3]
    p = pos + 10
    if flags & 4:  # FEXTRA
        need(p + 2)
        p += 2 + _U16_LE.unpack_from(data, p)[0]
        need(p)
    for flag in (8, 16):  # FNAME, FCOMMENT: zero-terminated
        if flags & flag:
            while True:
                need(p + 1)
                p += 1
                if data[p - 1] == 0:
                    break
    if flags & 2:  # FHCRC
        need(p + 2)
        if _U16_LE.unpack_from(data, p)[0] != zlib.crc32(data[pos:p]) & 0xFFFF:
            raise _GzipHeaderError("Corrupt GZIP header")
        p += 2
    return p - pos


def _zlib_reason(exc: zlib.error) -> str:
    """zlib's own message (what Java's Inflater reports too), without Python's "Error -3 while ..." prefix."""
    text = str(exc)
    return text.split(": ", 1)[1] if ": " in text else text


class _GzipDecompressor(Decompressor):
    """RFC 1952 stream read like ``GZIPInputStream`` (header parsed here, deflate data by zlib)."""

    def __init__(self, data: bytes | memoryview, limit: int) -> None:
        super().__init__(GZIP, limit)
        self._data = data
        self._size = len(data)
        try:
            start = _gzip_header_length(data, 0, self._size)
        except _GzipHeaderError as exc:
            raise self._error(str(exc)) from None
        # End of the bytes Java would have pulled from the input into its 8 KiB buffer so far: the first
        # header is read straight from the stream, then the buffer is filled 8 KiB at a time.
        self._java_buffer_end = start
        self._begin_member(start)

    def _begin_member(self, start: int) -> None:
        self._inflater: zlib._Decompress | None = zlib.decompressobj(-zlib.MAX_WBITS)
        self._fed = start  # end of the compressed bytes handed to the inflater
        self._crc = 0
        self._isize = 0

    def _decode(self, want: int) -> bytes:
        inflater = self._inflater
        while inflater is not None:
            piece: bytes | memoryview = inflater.unconsumed_tail
            if not piece and self._fed < self._size:
                piece = self._data[self._fed : self._fed + _GZIP_FEED]
                self._fed += len(piece)
            try:
                out = inflater.decompress(piece, want)
            except zlib.error as exc:
                raise self._error(_zlib_reason(exc)) from None
            if out:
                self._crc = zlib.crc32(out, self._crc)
                self._isize += len(out)
            if inflater.eof:
                self._end_member(self._fed - len(inflater.unused_data))
                inflater = self._inflater
            elif not out and not piece:
                raise self._error("Unexpected end of ZLIB input stream")
            if out:
                return out
        return b""

    def _end_member(self, end: int) -> None:
        """Check the trailer of the member whose deflate data ends at ``end``; maybe start the next member.

        Java's ``readTrailer`` looks for another member only if its input stream still has bytes or more
        than 26 bytes (trailer included) are left in its buffer, and a next header that fails to parse
        ends the stream without error.  The buffer position is reproduced exactly, so even the odd case of a
        short valid header at the very end is treated as Java treats it.
        """
        data, size = self._data, self._size
        buffer_end = self._java_buffer_end
        if end > buffer_end:
            steps = -(-(end - buffer_end) // _JAVA_GZIP_BUFFER)
            buffer_end = min(size, buffer_end + steps * _JAVA_GZIP_BUFFER)
        left_in_buffer = buffer_end - end
        if size - end < 4:
            raise self._error("unexpected end of stream in the GZIP trailer")
        if _U32_LE.unpack_from(data, end)[0] != self._crc:
            raise self._error("Corrupt GZIP trailer")
        if size - end < 8:
            raise self._error("unexpected end of stream in the GZIP trailer")
        if _U32_LE.unpack_from(data, end + 4)[0] != self._isize & _M32:
            raise self._error("Corrupt GZIP trailer")
        trailer_end = end + 8
        buffer_end = max(buffer_end, trailer_end)
        self._inflater = None
        if size > buffer_end or left_in_buffer > 26:
            try:
                start = trailer_end + _gzip_header_length(data, trailer_end, size)
            except _GzipHeaderError:
                return
            self._java_buffer_end = max(buffer_end, start)
            self._begin_member(start)


def _gzip_compress(data: bytes) -> bytes:
    """One member as Java's ``GZIPOutputStream`` writes it (no name, MTIME 0, OS 255), level 6."""
    deflater = zlib.compressobj(6, zlib.DEFLATED, -zlib.MAX_WBITS)
    body = deflater.compress(data) + deflater.flush()
    trailer = struct.pack("<II", zlib.crc32(data), len(data) & _M32)
    return b"\x1f\x8b\x08\x00\x00\x00\x00\x00\x00\xff" + body + trailer


# ----------------------------------------------------------------------------------------------- snappy

_SNAPPY_MAGIC = b"\x82SNAPPY\x00"
_SNAPPY_HEADER_SIZE = 16
_SNAPPY_HEADER_HEAD = _I32_BE.unpack(_SNAPPY_MAGIC[:4])[0]  # a chunk length equal to this starts a header
_SNAPPY_MAX_CHUNK = 512 * 1024 * 1024  # SnappyInputStream.MAX_CHUNK_SIZE
_SNAPPY_CHUNK = 32 * 1024  # uncompressed bytes per chunk written by SnappyOutputStream


class _SnappyDecompressor(Decompressor):
    """xerial snappy-java stream, or one raw Snappy block, read like ``SnappyInputStream``."""

    def __init__(self, data: bytes | memoryview, limit: int) -> None:
        super().__init__(SNAPPY, limit)
        import cramjam

        self._decompress_raw = cramjam.snappy.decompress_raw
        self._codec_error = cramjam.DecompressionError
        self._data = data
        self._size = size = len(data)
        self._raw: bytes | None = None
        if size == 0:
            raise self._error("Cannot decompress empty stream")
        if size < _SNAPPY_HEADER_SIZE or data[:8] != _SNAPPY_MAGIC:
            # snappy-java decodes a raw block as a whole in its constructor.
            self._raw = self._block(data, limit)
            self._pos = size
        else:
            self._pos = _SNAPPY_HEADER_SIZE  # version fields of the first header are not checked

    def _decode(self, want: int) -> bytes:
        if self._raw is not None:
            out, self._raw = self._raw, None
            return out
        data, size = self._data, self._size
        while size - self._pos >= 4:
            pos = self._pos
            (length,) = _I32_BE.unpack_from(data, pos)
            if length == _SNAPPY_HEADER_HEAD:
                if size - pos < _SNAPPY_HEADER_SIZE:
                    raise self._error("Insufficient header size in a concatenated block")
                if data[pos : pos + 8] != _SNAPPY_MAGIC:
                    break
                (version,) = _I32_BE.unpack_from(data, pos + 8)
                if version < 1:
                    raise self._error(
                        f"Compressed with an incompatible codec version {version}. "
                        "At least version 1 is required"
                    )
                self._pos = pos + _SNAPPY_HEADER_SIZE
                continue
            if length < 0:
                raise self._error(f"chunkSize is too big or negative : {length}")
            if length > _SNAPPY_MAX_CHUNK:
                raise self._error(
                    f"Received chunkSize {length:,} is greater than "
                    f"max configured chunk size {_SNAPPY_MAX_CHUNK:,}"
                )
            start = pos + 4
            if size - start < length:
                raise self._error("failed to read chunk")
            self._pos = start + length
            out = self._block(data[start : start + length], self._limit - self._produced)
            if out:
                return out
        self._pos = size
        return b""

    def _block(self, block: bytes | memoryview, budget: int) -> bytes:
        """Decode one raw Snappy block after checking its announced length against ``budget``.

        The length prefix is a varint of at most 32 bits.  It is checked before anything is allocated: above
        the budget is a limit error, above the most the block could possibly expand to (a 3-byte copy yields
        at most 64 bytes) is corruption.
        """
        n = len(block)
        length = 0
        i = 0
        while True:
            if i == n or i == 5:
                raise self._error("corrupt input (invalid uncompressed length)")
            byte = block[i]
            length |= (byte & 0x7F) << (7 * i)
            i += 1
            if byte < 0x80:
                break
        if length > _M32:
            raise self._error("corrupt input (invalid uncompressed length)")
        if length > budget:
            raise self._limit_error()
        if length > (n - i) * 64 // 3:
            raise self._error(f"corrupt input (uncompressed length {length} is impossible for {n} bytes)")
        try:
            return bytes(self._decompress_raw(block))
        except self._codec_error as exc:
            raise self._error(str(exc).removeprefix("snappy: ")) from None


def _snappy_compress(data: bytes) -> bytes:
    """xerial's stream as ``SnappyOutputStream`` writes it: the header, then 32 KiB chunks."""
    import cramjam

    parts = [_SNAPPY_MAGIC, struct.pack(">ii", 1, 1)]
    view = memoryview(data)
    for start in range(0, len(data), _SNAPPY_CHUNK):
        block = bytes(cramjam.snappy.compress_raw(view[start : start + _SNAPPY_CHUNK]))
        parts += (_I32_BE.pack(len(block)), block)
    return b"".join(parts)


# -------------------------------------------------------------------------------------------------- lz4

_LZ4_MAGIC = 0x184D2204
_LZ4_UNCOMPRESSED = 0x80000000  # high bit of a block size: block stored as is
_LZ4_BLOCK = 64 * 1024  # Kafka writes 64 KiB blocks


class _Lz4Decompressor(Decompressor):
    """Kafka's LZ4 frame, read like 4.0's ``Lz4BlockInputStream`` (independent blocks only)."""

    def __init__(self, data: bytes | memoryview, limit: int, magic: int) -> None:
        super().__init__(LZ4, limit)
        import lz4.block  # no type stubs: its two names are typed here

        self._decompress_block: Callable[..., bytes] = lz4.block.decompress
        self._block_error: type[Exception] = lz4.block.LZ4BlockError
        self._data = data
        self._size = size = len(data)
        if size < 6:
            raise self._error("Stream ended prematurely")
        if _U32_LE.unpack_from(data, 0)[0] != _LZ4_MAGIC:
            raise self._error("Stream unsupported (invalid magic bytes)")
        flg = data[4]
        if flg & 0x03:
            raise self._error("Reserved bits must be 0")
        if not flg & 0x20:
            raise self._error("Dependent block stream is unsupported")
        if flg >> 6 != 1:
            raise self._error(f"Version {flg >> 6} is unsupported")
        bd = data[5]
        if bd & 0x0F:
            raise self._error("Reserved2 field must be 0")
        code = (bd >> 4) & 7
        if code < 4:
            raise self._error("Block size value must be between 4 and 7")
        if bd & 0x80:
            raise self._error("Reserved3 field must be 0")
        self._max_block = 1 << (2 * code + 8)
        self._block_checksum = bool(flg & 0x10)
        self._content_checksum = bool(flg & 0x04)
        pos = 6
        if flg & 0x08:  # content size: skipped
            pos += 8
            if pos > size:
                raise self._error("Stream ended prematurely")
        if magic == 0:
            # Kafka < 0.10 hashed the magic number too; Kafka does not check the byte for v0 messages.
            pos += 1
            if pos > size:
                raise self._error("Stream ended prematurely")
        else:
            if pos >= size:
                raise self._error("Stream ended prematurely")
            if data[pos] != (xxh32(data[4:pos]) >> 8) & 0xFF:
                raise self._error("Stream frame descriptor corrupted")
            pos += 1
        self._pos = pos

    def _decode(self, want: int) -> bytes:
        data, size = self._data, self._size
        while True:
            pos = self._pos
            if size - pos < 4:
                raise self._error("Stream ended prematurely")
            (word,) = _U32_LE.unpack_from(data, pos)
            length = word & ~_LZ4_UNCOMPRESSED
            pos += 4
            if length == 0:  # end mark; Kafka 4.0 skips the content checksum without verifying it
                if self._content_checksum and size - pos < 4:
                    raise self._error("Stream ended prematurely")
                self._pos = size
                return b""
            if length > self._max_block:
                raise self._error(f"Block size {length} exceeded max: {self._max_block}")
            if size - pos < length:
                raise self._error("Stream ended prematurely")
            block = data[pos : pos + length]
            if word & _LZ4_UNCOMPRESSED:
                out = bytes(block)
            else:
                try:
                    out = self._decompress_block(block, uncompressed_size=self._max_block)
                except self._block_error:
                    raise self._error(f"Malformed input in the block at byte {pos - 4}") from None
            pos += length
            if self._block_checksum:
                if size - pos < 4:
                    raise self._error("Stream ended prematurely")
                if _U32_LE.unpack_from(data, pos)[0] != xxh32(block):
                    raise self._error("Block checksum mismatch")
                pos += 4
            self._pos = pos
            if out:
                return out


def _lz4_compress(data: bytes, magic: int) -> bytes:
    """Kafka's frame (``Lz4BlockOutputStream``): independent 64 KiB blocks, HC level 9, incompressible blocks
    stored, no checksums or content size; for magic 0 the "broken" header checksum over the magic number."""
    import lz4.block

    header = struct.pack("<IBB", _LZ4_MAGIC, 0x60, 0x40)  # version 01, independent blocks; 64 KiB
    checksum = xxh32(header) if magic == 0 else xxh32(header[4:])
    parts = [header, bytes([(checksum >> 8) & 0xFF])]
    view = memoryview(data)
    for start in range(0, len(data), _LZ4_BLOCK):
        chunk = view[start : start + _LZ4_BLOCK]
        block: bytes = lz4.block.compress(chunk, mode="high_compression", compression=9, store_size=False)
        if len(block) >= len(chunk):
            parts += (_U32_LE.pack(len(chunk) | _LZ4_UNCOMPRESSED), bytes(chunk))
        else:
            parts += (_U32_LE.pack(len(block)), block)
    parts.append(b"\x00\x00\x00\x00")
    return b"".join(parts)


# ------------------------------------------------------------------------------------------------- zstd

_ZSTD_MAGIC = 0xFD2FB528
_ZSTD_SKIPPABLE_MASK = 0xFFFFFFF0
_ZSTD_SKIPPABLE_MAGIC = 0x184D2A50
_ZSTD_JNI_SOURCE_READ = 131075  # ZSTD_DStreamInSize(): zstd-jni pulls its input in pieces of this size
_zstd_thread = threading.local()


def _zstd_frame_end(data: bytes | memoryview, pos: int, size: int) -> int | None:
    """End of the zstd (or skippable) frame starting at ``pos``, or None if the input ends inside it.

    Only the frame structure is walked (header sizes, block headers, checksum); the decoder has already
    validated the content by the time this is asked.
    """
    if size - pos < 4:
        return None
    (magic,) = _U32_LE.unpack_from(data, pos)
    if magic & _ZSTD_SKIPPABLE_MASK == _ZSTD_SKIPPABLE_MAGIC:
        if size - pos < 8:
            return None
        end = pos + 8 + _U32_LE.unpack_from(data, pos + 4)[0]
        return end if end <= size else None
    if magic != _ZSTD_MAGIC or size - pos < 5:
        return None
    fhd = data[pos + 4]
    single_segment = fhd & 0x20
    fcs_size = (1 if single_segment else 0, 2, 4, 8)[fhd >> 6]
    p = pos + 5 + (0 if single_segment else 1) + (0, 1, 2, 4)[fhd & 3] + fcs_size
    while True:
        if size - p < 3:
            return None
        header = data[p] | data[p + 1] << 8 | data[p + 2] << 16
        p += 3 + (1 if (header >> 1) & 3 == 1 else header >> 3)  # an RLE block stores one byte
        if header & 1:
            break
    if fhd & 0x04:
        p += 4
    return p if p <= size else None


def _zstd_ends_mid_frame(data: bytes | memoryview) -> bool:
    """Would zstd-jni report "Truncated source" at the end of this (so far valid) input?

    zstd-jni raises it only if no frame was completed since it last pulled a piece of input: a frame that
    ends inside the last 131075-byte piece makes it report a clean end of stream even if the bytes after it
    start an unfinished frame.
    """
    size = len(data)
    pos = 0
    while pos < size:
        end = _zstd_frame_end(data, pos, size)
        if end is None:
            last_piece_start = (size - 1) // _ZSTD_JNI_SOURCE_READ * _ZSTD_JNI_SOURCE_READ
            return pos <= last_piece_start
        pos = end
    return False


def _zstd_reason(exc: zstandard.ZstdError) -> str:
    """libzstd's error name (what zstd-jni reports too), without python-zstandard's prefix."""
    text = str(exc)
    return text.split(": ", 1)[1] if ": " in text else text


class _ZstdDecompressor(Decompressor):
    """Zstandard frames read across frame boundaries like zstd-jni's ``ZstdInputStreamNoFinalizer``."""

    def __init__(self, data: bytes | memoryview, limit: int, dctx: zstandard.ZstdDecompressor) -> None:
        super().__init__(ZSTD, limit)
        self._data = data
        self._reader = dctx.stream_reader(data, read_across_frames=True)

    def _decode(self, want: int) -> bytes:
        try:
            out = self._reader.read(want)
        except Exception as exc:
            import zstandard

            if not isinstance(exc, zstandard.ZstdError):
                raise
            raise self._error(_zstd_reason(exc)) from None
        if not out and _zstd_ends_mid_frame(self._data):
            raise self._error("Truncated source")
        return out


def _thread_zstd_dctx() -> zstandard.ZstdDecompressor:
    """A decompression context reused by :func:`decompress` (one per thread; never shared by live readers)."""
    dctx: zstandard.ZstdDecompressor | None = getattr(_zstd_thread, "dctx", None)
    if dctx is None:
        import zstandard

        dctx = _zstd_thread.dctx = zstandard.ZstdDecompressor()
    return dctx


def _zstd_compress(data: bytes) -> bytes:
    """One frame, level 3, no content size (as zstd-jni's stream writes it)."""
    import zstandard

    return zstandard.ZstdCompressor(level=3, write_content_size=False).compress(data)


# ---------------------------------------------------------------------------------------------- public


def _open(
    codec: int, data: bytes | memoryview, magic: int, limit: int, dctx: zstandard.ZstdDecompressor | None
) -> Decompressor:
    if codec == GZIP:
        return _GzipDecompressor(data, limit)
    if codec == SNAPPY:
        return _SnappyDecompressor(data, limit)
    if codec == LZ4:
        return _Lz4Decompressor(data, limit, magic)
    if codec == ZSTD:
        if dctx is None:
            import zstandard

            dctx = zstandard.ZstdDecompressor()
        return _ZstdDecompressor(data, limit, dctx)
    if codec == NONE:
        return _PlainDecompressor(data, limit)
    raise ValueError(f"Unknown compression type id: {codec}")


def open_decompressor(
    codec: int, data: bytes | memoryview, *, magic: int = 2, limit: int = DEFAULT_DECOMPRESSION_LIMIT
) -> Decompressor:
    """Start decompressing ``data`` (a v2 batch's records, or a legacy wrapper's value) with ``codec``.

    ``magic`` is the record format of the batch or wrapper; it matters only to LZ4 (header checksum not
    checked for magic 0).  Codec 4 (zstd) is decoded for any magic: refusing it in legacy wrappers is the
    caller's job.  Header errors are raised here, see the module docstring; an unknown codec id raises
    ``ValueError("Unknown compression type id: <id>")`` as Kafka's ``CompressionType.forId`` does.
    """
    return _open(codec, data, magic, limit, None)


def open_eager_decompressor(
    codec: int, data: bytes | memoryview, *, magic: int = 2, limit: int = DEFAULT_DECOMPRESSION_LIMIT
) -> Decompressor:
    """:func:`open_decompressor` for a reader read to its end (or dropped) before the caller returns: zstd
    reuses this thread's context, as :func:`decompress` does, so it must not outlive the call."""
    return _open(codec, data, magic, limit, _thread_zstd_dctx() if codec == ZSTD else None)


def decompress(
    codec: int, data: bytes | memoryview, *, magic: int = 2, limit: int = DEFAULT_DECOMPRESSION_LIMIT
) -> bytes:
    """The whole decompressed payload (same rules and bound as :func:`open_decompressor`)."""
    if codec == NONE:
        if len(data) > limit:
            raise DecompressionLimitError(f"none: decompressed size exceeds the limit of {limit} bytes")
        return bytes(data)
    dctx = _thread_zstd_dctx() if codec == ZSTD else None
    return _open(codec, data, magic, limit, dctx)._read_rest()


def compress(codec: int, data: bytes, *, magic: int = 2) -> bytes:
    """Compress ``data`` framed as Kafka writes it.

    gzip: one member (Java's header: no name, MTIME 0, OS 255), level 6.  snappy: xerial stream with 32 KiB
    chunks.  lz4: Kafka's frame (independent 64 KiB blocks, HC level 9, incompressible blocks stored, no
    checksums or content size), with the pre-0.10 "broken" header checksum over the magic number as well
    when ``magic`` is 0.  zstd: one frame, level 3, no content size (as zstd-jni's stream writes it).
    """
    if codec == NONE:
        return bytes(data)
    if codec == GZIP:
        return _gzip_compress(data)
    if codec == SNAPPY:
        return _snappy_compress(data)
    if codec == LZ4:
        return _lz4_compress(data, magic)
    if codec == ZSTD:
        return _zstd_compress(data)
    raise ValueError(f"Unknown compression type id: {codec}")
