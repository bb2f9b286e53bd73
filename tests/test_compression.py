"""Tests for kdump.storage.compression (and its xxHash32, kdump.storage.xxhash): round trips, independent encoders, Kafka quirks, bounds, real data."""

from __future__ import annotations

import gzip
import os
import random
import struct
import time
import warnings
import zlib
from pathlib import Path

import cramjam
import lz4.frame
import pytest
import zstandard
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from kdump.errors import DecompressionError, DecompressionLimitError
from kdump.storage import compression as c
from kdump.storage.compression import GZIP, LZ4, NONE, SNAPPY, ZSTD
from kdump.storage.xxhash import xxh32
from tests.corpus import CORPUS

with warnings.catch_warnings():  # importing kafka-python loads its protocol schemas with deprecated APIs
    warnings.simplefilter("ignore", DeprecationWarning)
    from kafka import codec as kafka_codec

CODECS = (NONE, GZIP, SNAPPY, LZ4, ZSTD)
MiB = 1024 * 1024


def _text(n: int, seed: int = 1) -> bytes:
    """Compressible but not trivial bytes (words drawn from a small vocabulary)."""
    rnd = random.Random(seed)
    words = [bytes(rnd.choice(b"abcdefghijklmnop") for _ in range(rnd.randint(1, 9))) for _ in range(400)]
    out = bytearray()
    while len(out) < n:
        out += rnd.choice(words) + b" "
    return bytes(out[:n])


SAMPLES = {
    "empty": b"",
    "one": b"k",
    "small": _text(300),
    "over-32k": _text(40_000),
    "over-64k": _text(200_000) + os.urandom(50_000) + bytes(70_000),
    "random": random.Random(7).randbytes(100_000),
}


def _stream(dec: c.Decompressor, n: int) -> bytes:
    out = bytearray()
    while chunk := dec.read(n):
        assert 0 < len(chunk) <= n
        out += chunk
    assert dec.read(n) == b""
    return bytes(out)


def _decodes_or_fails_cleanly(codec: int, data: bytes, magic: int = 2, limit: int = MiB) -> None:
    """The only acceptable outcomes for arbitrary input: output (within the limit) or DecompressionError."""
    try:
        out = c.decompress(codec, data, magic=magic, limit=limit)
    except DecompressionError:
        return
    assert len(out) <= limit


# ------------------------------------------------------------------------------------------------ xxh32


def test_xxh32_known_vectors() -> None:
    assert xxh32(b"") == 0x02CC5D05
    assert xxh32(b"a") == 0x550D7456
    assert xxh32(b"abc") == 0x32D153FF
    assert xxh32(memoryview(b"abc")) == 0x32D153FF


@pytest.mark.parametrize("n", [*range(0, 70), 255, 1000, 65_536, 100_003])
def test_xxh32_matches_lz4_content_checksum(n: int) -> None:
    # liblz4 stores xxh32(content, seed 0) as the frame's content checksum: an independent implementation.
    data = random.Random(n).randbytes(n)
    frame = lz4.frame.compress(data, content_checksum=True, block_linked=False)
    assert xxh32(data) == struct.unpack("<I", frame[-4:])[0]


def test_xxh32_header_checksums_seen_in_kafka_data() -> None:
    # The corpus' lz4 wrappers (see test_corpus_legacy) carry these HC bytes for FLG=0x60, BD=0x40:
    # 0x82 for magic 1 (hash over FLG BD) and 0x1A for magic 0 (old Kafka hashed the magic number too).
    assert (xxh32(b"\x60\x40") >> 8) & 0xFF == 0x82
    assert (xxh32(b"\x04\x22\x4d\x18\x60\x40") >> 8) & 0xFF == 0x1A


# ------------------------------------------------------------------------------------------ round trips


@pytest.mark.parametrize("codec", CODECS, ids=lambda x: c.CODEC_NAMES[x])
@pytest.mark.parametrize("magic", [0, 1, 2])
def test_round_trip(codec: int, magic: int) -> None:
    for name, data in SAMPLES.items():
        packed = c.compress(codec, data, magic=magic)
        assert c.decompress(codec, packed, magic=magic) == data, name
        assert c.decompress(codec, memoryview(packed), magic=magic) == data, name
        for n in (1, 1000, 100_000):
            dec = c.open_decompressor(codec, memoryview(packed), magic=magic)
            assert _stream(dec, n) == data, (name, n)
            assert dec.total_out == len(data)


def test_compress_framing_is_kafkas() -> None:
    data = SAMPLES["over-64k"]
    # gzip: readable by any gzip reader; header as Java's GZIPOutputStream writes it
    packed = c.compress(GZIP, data)
    assert gzip.decompress(packed) == data and packed[:10] == b"\x1f\x8b\x08\0\0\0\0\0\0\xff"
    # snappy: xerial framing, 32 KiB chunks, readable by kafka-python's (independent) decoder
    packed = c.compress(SNAPPY, data)
    assert packed[:16] == b"\x82SNAPPY\x00\x00\x00\x00\x01\x00\x00\x00\x01"
    assert kafka_codec.snappy_decode(packed) == data
    (first_chunk,) = struct.unpack_from(">i", packed, 16)
    assert len(cramjam.snappy.decompress_raw(packed[20 : 20 + first_chunk])) == 32 * 1024
    # lz4: a standard frame for magic >= 1 (liblz4 checks the HC byte), FLG 0x60 / BD 0x40
    for magic in (1, 2):
        packed = c.compress(LZ4, data, magic=magic)
        assert packed[4:6] == b"\x60\x40"
        assert lz4.frame.decompress(packed) == data
    # ... and the broken pre-0.10 HC for magic 0, which liblz4 rejects and Kafka accepts for v0 only
    packed = c.compress(LZ4, data, magic=0)
    assert packed[6] == (xxh32(packed[:6]) >> 8) & 0xFF != (xxh32(packed[4:6]) >> 8) & 0xFF
    with pytest.raises(RuntimeError):
        lz4.frame.decompress(packed)
    with pytest.raises(DecompressionError, match="Stream frame descriptor corrupted"):
        c.decompress(LZ4, packed, magic=1)
    # zstd: one frame
    packed = c.compress(ZSTD, data)
    assert zstandard.ZstdDecompressor().decompressobj().decompress(packed) == data


@pytest.mark.parametrize("codec_id", [5, 6, 7])
def test_unknown_codec_ids(codec_id: int) -> None:
    message = f"^Unknown compression type id: {codec_id}$"
    with pytest.raises(ValueError, match=message):
        c.open_decompressor(codec_id, b"x")
    with pytest.raises(ValueError, match=message):
        c.decompress(codec_id, b"x")
    with pytest.raises(ValueError, match=message):
        c.compress(codec_id, b"x")


def test_public_constants() -> None:
    assert (NONE, GZIP, SNAPPY, LZ4, ZSTD) == (0, 1, 2, 3, 4)
    assert c.CODEC_NAMES == {0: "none", 1: "gzip", 2: "snappy", 3: "lz4", 4: "zstd"}
    assert c.DEFAULT_DECOMPRESSION_LIMIT == 256 * MiB


# ------------------------------------------------------------------------------- independent encoders


@pytest.mark.parametrize("name", list(SAMPLES))
def test_kafka_python_encoders(name: str) -> None:
    data = SAMPLES[name]
    assert c.decompress(GZIP, kafka_codec.gzip_encode(data)) == data
    assert c.decompress(SNAPPY, kafka_codec.snappy_encode(data)) == data  # xerial framing
    assert c.decompress(SNAPPY, kafka_codec.snappy_encode(data, xerial_blocksize=1000)) == data
    if data:  # snappy-java refuses an empty input; a raw block of nothing is b"\x00"
        assert c.decompress(SNAPPY, kafka_codec.snappy_encode(data, xerial_compatible=False)) == data
    assert c.decompress(LZ4, kafka_codec.lz4_encode(data)) == data  # content size present
    assert c.decompress(ZSTD, kafka_codec.zstd_encode(data)) == data


@pytest.mark.parametrize("block_size", [4, 5, 6, 7])
@pytest.mark.parametrize("content_checksum", [False, True])
@pytest.mark.parametrize("block_checksum", [False, True])
@pytest.mark.parametrize("store_size", [False, True])
def test_lz4_frame_encoder(
    block_size: int, content_checksum: bool, block_checksum: bool, store_size: bool
) -> None:
    data = SAMPLES["over-64k"][:100_000]  # block checksums go through the pure-Python xxh32: keep it short
    sizes = {
        4: lz4.frame.BLOCKSIZE_MAX64KB,
        5: lz4.frame.BLOCKSIZE_MAX256KB,
        6: lz4.frame.BLOCKSIZE_MAX1MB,
        7: lz4.frame.BLOCKSIZE_MAX4MB,
    }
    packed = lz4.frame.compress(
        data,
        block_size=sizes[block_size],
        block_linked=False,
        content_checksum=content_checksum,
        block_checksum=block_checksum,
        store_size=store_size,
    )
    for magic in (0, 2):
        assert c.decompress(LZ4, packed, magic=magic) == data
    assert _stream(c.open_decompressor(LZ4, packed), 4096) == data


def test_raw_snappy_block_and_short_inputs() -> None:
    data = _text(5000)
    raw = bytes(cramjam.snappy.compress_raw(data))
    assert c.decompress(SNAPPY, raw) == data
    assert c.decompress(SNAPPY, b"\x00") == b""
    assert c.decompress(SNAPPY, b"\x03\x08abc") == b"abc"  # literal of 3
    # shorter than 16 bytes: one raw block even when it starts with the xerial magic
    with pytest.raises(DecompressionError):
        c.decompress(SNAPPY, b"\x82SNAPPY\x00\x00\x00\x00\x01")
    with pytest.raises(DecompressionError, match="Cannot decompress empty stream"):
        c.open_decompressor(SNAPPY, b"")
    # a header alone is a valid, empty stream
    assert c.decompress(SNAPPY, c.compress(SNAPPY, b"")) == b""


# ----------------------------------------------------------------------------------------- gzip quirks


def _gzip_member(data: bytes, level: int = 6) -> bytes:
    return c.compress(GZIP, data) if level == 6 else gzip.compress(data, compresslevel=level, mtime=0)


def test_gzip_concatenated_members_and_optional_header_fields() -> None:
    a, b = _text(10_000, 1), _text(70_000, 2)
    assert c.decompress(GZIP, _gzip_member(a) + _gzip_member(b, 1) + _gzip_member(b"")) == a + b
    # FEXTRA + FNAME + FCOMMENT + FHCRC, and reserved flag bits, which Java ignores (zlib would refuse them)
    header = (
        b"\x1f\x8b\x08" + bytes([0x1E | 0xE0]) + b"\0\0\0\0\0\xff" + b"\x02\x00xy" + b"name\0" + b"note\0"
    )
    body = _gzip_member(a)[10:]
    good = header + struct.pack("<H", zlib.crc32(header) & 0xFFFF) + body
    assert c.decompress(GZIP, good) == a
    bad = header + struct.pack("<H", ~zlib.crc32(header) & 0xFFFF) + body
    with pytest.raises(DecompressionError, match="gzip: Corrupt GZIP header"):
        c.open_decompressor(GZIP, bad)
    plain = b"\x1f\x8b\x08\x1e" + good[4:]  # the same without reserved bits: Python's own reader agrees
    assert gzip.decompress(plain) == a


def test_gzip_header_errors_come_from_open() -> None:
    for data, reason in [
        (b"", "unexpected end"),
        (b"\x1f", "unexpected end"),
        (b"PK\x03\x04 not gzip", "Not in GZIP format"),
        (b"\x1f\x8b\x07\x00" + bytes(20), "Unsupported compression method"),
        (b"\x1f\x8b\x08\x00\x00\x00", "unexpected end"),
    ]:
        with pytest.raises(DecompressionError, match=reason):
            c.open_decompressor(GZIP, data)


def test_gzip_stream_errors() -> None:
    data = _text(20_000)
    member = _gzip_member(data)
    with pytest.raises(DecompressionError, match="Unexpected end of ZLIB input stream"):
        c.decompress(GZIP, member[: len(member) // 2])
    with pytest.raises(DecompressionError, match="unexpected end of stream in the GZIP trailer"):
        c.decompress(GZIP, member[:-5])
    wrong_crc = member[:-8] + bytes([member[-8] ^ 1]) + member[-7:]
    with pytest.raises(DecompressionError, match="Corrupt GZIP trailer"):
        c.decompress(GZIP, wrong_crc)
    wrong_size = member[:-1] + bytes([member[-1] ^ 1])
    with pytest.raises(DecompressionError, match="Corrupt GZIP trailer"):
        c.decompress(GZIP, wrong_size)
    stored = b"\x1f\x8b\x08\0\0\0\0\0\0\xff" + b"\x01\x05\x00\x00\x00" + b"abcde"  # LEN != ~NLEN
    with pytest.raises(DecompressionError, match="^gzip: invalid stored block lengths$"):
        c.decompress(GZIP, stored)


def test_gzip_trailing_bytes_follow_java() -> None:
    data = _text(3000)
    member = _gzip_member(data)
    header = b"\x1f\x8b\x08\0\0\0\0\0\0\xff"
    # Anything after a member that is not a gzip header is ignored, like GZIPInputStream does.
    for tail in (b"x", b"garbage" * 10, bytes(100), b"\x1f\x8b\x08", header[:9]):
        assert c.decompress(GZIP, member + tail) == data
    # A complete header is taken as the start of another member only if Java would look: more than 26
    # bytes left in its 8 KiB buffer (trailer included) or more input behind the buffer.
    assert c.decompress(GZIP, member + header + b"\xff" * 8) == data  # 8 + 10 + 8 = 26 left: not looked at
    with pytest.raises(DecompressionError, match="invalid block type"):
        c.decompress(GZIP, member + header + b"\xff" * 9)
    # Stored member of 16380 bytes of deflate data: Java's buffer ends 4 bytes after it, so the input stream
    # still has bytes and even a bare header is read as a new member (which then ends prematurely).
    stored = zlib.compressobj(0, zlib.DEFLATED, -15)
    body = stored.compress(bytes(16_375)) + stored.flush()
    assert len(body) == 16_380
    big = header + body + struct.pack("<II", zlib.crc32(bytes(16_375)), 16_375)
    assert c.decompress(GZIP, big) == bytes(16_375)
    assert c.decompress(GZIP, big + b"junk") == bytes(16_375)
    with pytest.raises(DecompressionError, match="Unexpected end of ZLIB input stream"):
        c.decompress(GZIP, big + header)
    assert c.decompress(GZIP, member + header) == data  # the same tail after a small member: ignored


# ---------------------------------------------------------------------------------------- snappy quirks


def _xerial_chunk(data: bytes) -> bytes:
    block = bytes(cramjam.snappy.compress_raw(data))
    return struct.pack(">i", len(block)) + block


def test_snappy_xerial_stream_quirks() -> None:
    header = b"\x82SNAPPY\x00" + struct.pack(">ii", 1, 1)
    a, b = _text(1000, 3), _text(2000, 4)
    assert c.decompress(SNAPPY, header + _xerial_chunk(a) + header + _xerial_chunk(b)) == a + b
    # the first header's version fields are not checked
    assert c.decompress(SNAPPY, b"\x82SNAPPY\x00" + struct.pack(">ii", 0, 99) + _xerial_chunk(a)) == a
    # 1-3 bytes where a chunk length belongs: end of stream
    assert c.decompress(SNAPPY, header + _xerial_chunk(a) + b"\x00\x00\x01") == a
    # a "chunk length" that starts like a header but is not one ends the stream silently
    assert c.decompress(SNAPPY, header + _xerial_chunk(a) + b"\x82SNAxxxxxxxxxxxx" + _xerial_chunk(b)) == a
    # a concatenated header with version 0 is refused
    old = b"\x82SNAPPY\x00" + struct.pack(">ii", 0, 1)
    with pytest.raises(DecompressionError, match="incompatible codec version 0"):
        c.decompress(SNAPPY, header + _xerial_chunk(a) + old + _xerial_chunk(b))
    with pytest.raises(DecompressionError, match="Insufficient header size"):
        c.decompress(SNAPPY, header + _xerial_chunk(a) + b"\x82SNAPPY\x00\x00")
    with pytest.raises(DecompressionError, match="chunkSize is too big or negative : -1"):
        c.decompress(SNAPPY, header + b"\xff\xff\xff\xff" + bytes(10))
    with pytest.raises(DecompressionError, match="greater than max configured chunk size"):
        c.decompress(SNAPPY, header + struct.pack(">i", 600 * MiB) + bytes(10))
    with pytest.raises(DecompressionError, match="failed to read chunk"):
        c.decompress(SNAPPY, (header + _xerial_chunk(a))[:-1])
    with pytest.raises(DecompressionError, match="^snappy: "):
        c.decompress(SNAPPY, header + struct.pack(">i", 0))


def test_snappy_announced_length_is_checked_before_decoding() -> None:
    header = b"\x82SNAPPY\x00" + struct.pack(">ii", 1, 1)
    claims_4g = b"\xff\xff\xff\xff\x0f" + b"\x00" * 20
    with pytest.raises(DecompressionLimitError, match="exceeds the limit of 268435456 bytes"):
        c.decompress(SNAPPY, claims_4g)
    with pytest.raises(DecompressionLimitError):
        c.decompress(SNAPPY, header + struct.pack(">i", len(claims_4g)) + claims_4g)
    # within the limit but more than 20 bytes could ever expand to: corrupt, nothing allocated
    with pytest.raises(DecompressionError, match="impossible"):
        c.decompress(SNAPPY, b"\x80\x80\x80\x01" + bytes(20), limit=4 * MiB)
    for bad_varint in (b"\x80", b"\xff\xff\xff\xff\xff\x01", b"\xff\xff\xff\xff\x7f"):
        with pytest.raises(DecompressionError, match="invalid uncompressed length"):
            c.decompress(SNAPPY, bad_varint)


# ------------------------------------------------------------------------------------------- lz4 quirks


def _lz4_header(flg: int = 0x60, bd: int = 0x40, content_size: bytes = b"", hc: int | None = None) -> bytes:
    descriptor = bytes([flg, bd]) + content_size
    if hc is None:
        hc = (xxh32(descriptor) >> 8) & 0xFF
    return struct.pack("<I", 0x184D2204) + descriptor + bytes([hc])


def test_lz4_header_checksum_checked_except_for_magic_0() -> None:
    data = _text(5000)
    good = c.compress(LZ4, data)
    bad = good[:6] + bytes([good[6] ^ 0x55]) + good[7:]
    for magic in (1, 2):
        with pytest.raises(DecompressionError, match="^lz4: Stream frame descriptor corrupted$"):
            c.open_decompressor(LZ4, bad, magic=magic)
    assert c.decompress(LZ4, bad, magic=0) == data
    # the content-size field is part of what the HC covers
    framed = lz4.frame.compress(data, block_linked=False, store_size=True)
    assert framed[4] & 0x08
    assert framed[14] == (xxh32(framed[4:14]) >> 8) & 0xFF
    assert c.decompress(LZ4, framed) == data


@pytest.mark.parametrize(
    "header, reason",
    [
        (b"\x04\x22\x4d", "Stream ended prematurely"),
        (b"\x04\x22\x4d\x19\x60\x40\x00", "Stream unsupported \\(invalid magic bytes\\)"),
        (_lz4_header(flg=0x61), "Reserved bits must be 0"),
        (_lz4_header(flg=0x40), "Dependent block stream is unsupported"),
        (_lz4_header(flg=0xA0), "Version 2 is unsupported"),
        (_lz4_header(bd=0x41), "Reserved2 field must be 0"),
        (_lz4_header(bd=0x30), "Block size value must be between 4 and 7"),
        (_lz4_header(bd=0xC0), "Reserved3 field must be 0"),
        (_lz4_header(flg=0x68)[:10], "Stream ended prematurely"),
        (_lz4_header()[:6], "Stream ended prematurely"),
    ],
)
def test_lz4_header_errors_come_from_open(header: bytes, reason: str) -> None:
    with pytest.raises(DecompressionError, match=f"^lz4: {reason}$"):
        c.open_decompressor(LZ4, header, magic=2)


def test_lz4_blocks() -> None:
    data = _text(1000)
    block = lz4.block.compress(data, store_size=False)
    end = b"\0\0\0\0"
    # compressed and stored blocks; bytes after the end mark are ignored
    frame = (
        _lz4_header() + struct.pack("<I", len(block)) + block + struct.pack("<I", 0x80000003) + b"xyz" + end
    )
    assert c.decompress(LZ4, frame + b"trailing garbage") == data + b"xyz"
    with pytest.raises(DecompressionError, match="Stream ended prematurely"):
        c.decompress(LZ4, frame[:-4])
    with pytest.raises(DecompressionError, match="Stream ended prematurely"):
        c.decompress(LZ4, frame[:20])
    with pytest.raises(DecompressionError, match="Block size 65537 exceeded max: 65536"):
        c.decompress(LZ4, _lz4_header() + struct.pack("<I", 0x80010001) + bytes(70_000))
    with pytest.raises(DecompressionError, match="^lz4: Malformed input in the block at byte 7$"):
        c.decompress(LZ4, _lz4_header() + struct.pack("<I", 4) + b"\xff\xff\xff\xff" + end)
    # block checksums are verified (over the stored block bytes), content checksums are not read at all
    good = (
        _lz4_header(flg=0x70) + struct.pack("<I", 3 | 0x80000000) + b"abc" + struct.pack("<I", xxh32(b"abc"))
    )
    assert c.decompress(LZ4, good + end) == b"abc"
    with pytest.raises(DecompressionError, match="Block checksum mismatch"):
        c.decompress(LZ4, good[:-1] + bytes([good[-1] ^ 1]) + end)
    with pytest.raises(DecompressionError, match="Stream ended prematurely"):
        c.decompress(LZ4, good[:-2])
    framed = lz4.frame.compress(data, block_linked=False, content_checksum=True)
    wrong_sum = framed[:-4] + bytes(4)
    with pytest.raises(RuntimeError):
        lz4.frame.decompress(wrong_sum)
    assert c.decompress(LZ4, wrong_sum) == data
    with pytest.raises(DecompressionError, match="Stream ended prematurely"):
        c.decompress(LZ4, framed[:-2])


# ------------------------------------------------------------------------------------------ zstd quirks


def test_zstd_frames() -> None:
    a, b = _text(10_000, 5), _text(300_000, 6)
    one_shot = zstandard.ZstdCompressor(level=1).compress(a)  # with content size
    streamed = zstandard.ZstdCompressor(write_checksum=True).compressobj()
    no_size = streamed.compress(b) + streamed.flush()  # without content size, with checksum
    empty = zstandard.ZstdCompressor().compress(b"")
    skippable = struct.pack("<II", 0x184D2A5E, 5) + b"skip!"
    payload = one_shot + empty + skippable + no_size + one_shot
    assert c.decompress(ZSTD, payload) == a + b + a
    assert _stream(c.open_decompressor(ZSTD, payload), 777) == a + b + a
    assert c.decompress(ZSTD, b"") == b""  # zstd-jni reports a clean end for no input at all


def test_zstd_errors() -> None:
    data = _text(20_000)
    frame = c.compress(ZSTD, data)
    with pytest.raises(DecompressionError, match="^zstd: Truncated source$"):
        c.decompress(ZSTD, frame[:-1])
    with pytest.raises(DecompressionError, match="^zstd: Truncated source$"):
        c.decompress(ZSTD, frame[:3])
    with pytest.raises(DecompressionError, match="^zstd: Unknown frame descriptor$"):
        c.decompress(ZSTD, frame + b"garbage!")
    with pytest.raises(DecompressionError, match="^zstd: Unknown frame descriptor$"):
        c.decompress(ZSTD, b"not zstd at all")
    corrupt = bytearray(zstandard.ZstdCompressor(write_checksum=True).compress(data))
    corrupt[len(corrupt) // 2] ^= 0xFF
    with pytest.raises(DecompressionError, match="^zstd: "):
        c.decompress(ZSTD, bytes(corrupt))


def test_zstd_truncation_follows_zstd_jni() -> None:
    """zstd-jni only notices an unfinished frame if no frame ended since it last read a piece of input."""
    a = _text(1000)
    frame = c.compress(ZSTD, a)
    # A complete frame, then the beginning of another in the same 131075-byte piece: clean end of stream.
    assert c.decompress(ZSTD, frame + frame[:-3]) == a
    assert c.decompress(ZSTD, frame + b"\x28\xb5") == a
    # The same, but the unfinished frame reaches into a piece of its own: "Truncated source".
    big = zstandard.ZstdCompressor(level=1).compress(_text(1_000_000))
    assert len(big) > 131_075
    within = c.decompress(ZSTD, frame + big[: 131_075 - len(frame)])  # its complete blocks come out
    assert within.startswith(a) and len(within) > len(a)
    with pytest.raises(DecompressionError, match="Truncated source"):
        c.decompress(ZSTD, frame + big[: 131_075 - len(frame) + 1])


def test_thread_shared_zstd_context_survives_errors() -> None:
    data = _text(50_000)
    frame = c.compress(ZSTD, data)
    with pytest.raises(DecompressionError):
        c.decompress(ZSTD, frame[: len(frame) // 2])
    with pytest.raises(DecompressionLimitError):
        c.decompress(ZSTD, frame, limit=100)
    assert c.decompress(ZSTD, frame) == data
    # a live reader and decompress() interleaved use separate contexts
    dec = c.open_decompressor(ZSTD, frame)
    head = dec.read(10)
    assert c.decompress(ZSTD, c.compress(ZSTD, b"other")) == b"other"
    assert head + _stream(dec, 5000) == data


# ------------------------------------------------------------------------------------------------ limits


@pytest.mark.parametrize("codec", CODECS, ids=lambda x: c.CODEC_NAMES[x])
def test_limit_is_exact(codec: int) -> None:
    data = _text(1000)
    packed = c.compress(codec, data)
    assert c.decompress(codec, packed, limit=1000) == data
    assert _stream(c.open_decompressor(codec, packed, limit=1000), 7) == data
    with pytest.raises(DecompressionLimitError, match=f"^{c.CODEC_NAMES[codec]}: decompressed size exceeds"):
        c.decompress(codec, packed, limit=999)
    dec = c.open_decompressor(codec, packed, limit=999)
    if codec == SNAPPY:  # the block announces 1000 bytes: refused before any of it is handed out
        with pytest.raises(DecompressionLimitError):
            dec.read(100)
        return
    # the first 999 bytes are handed out, then the limit error comes instead of more
    got = b"".join(dec.read(100) for _ in range(10))
    assert got == data[:999] and dec.total_out == 999
    with pytest.raises(DecompressionLimitError):
        dec.read(1)


def _gzip_bomb(mib: int) -> bytes:
    """A deflate stream of ``mib`` MiB of zeros, built from one repeated fully flushed 1 MiB piece."""
    deflater = zlib.compressobj(9, zlib.DEFLATED, -15)
    zeros = bytes(MiB)
    first = deflater.compress(zeros) + deflater.flush(zlib.Z_FULL_FLUSH)
    piece = deflater.compress(zeros) + deflater.flush(zlib.Z_FULL_FLUSH)
    assert deflater.compress(zeros) + deflater.flush(zlib.Z_FULL_FLUSH) == piece
    body = first + piece * (mib - 1) + deflater.flush()
    crc = zlib.crc32(bytes(mib * MiB)) if mib <= 64 else 0
    return b"\x1f\x8b\x08\0\0\0\0\0\0\xff" + body + struct.pack("<II", crc, (mib * MiB) & 0xFFFFFFFF)


def _zstd_bomb(blocks: int) -> bytes:
    """One zstd frame of ``blocks`` RLE blocks of 128 KiB zeros each (4 bytes per block)."""
    rle = 1 << 1 | (128 * 1024) << 3
    out = [struct.pack("<I", 0xFD2FB528), b"\x00\x38"]  # no content size, 128 KiB window
    out += [(rle).to_bytes(3, "little") + b"\0"] * (blocks - 1)
    out.append((rle | 1).to_bytes(3, "little") + b"\0")
    return b"".join(out)


def test_small_bombs_are_valid_and_bounded() -> None:
    gz = _gzip_bomb(64)
    assert len(gz) < 100_000 and zlib.decompressobj(31).decompress(gz, 100) == bytes(100)
    zs = _zstd_bomb(512)  # 64 MiB from 2 KiB
    assert len(zs) < 3000
    assert zstandard.ZstdDecompressor().stream_reader(zs).read(100) == bytes(100)
    lz = c.compress(LZ4, bytes(64 * MiB))
    sn = c.compress(SNAPPY, bytes(64 * MiB))
    for codec, bomb in ((GZIP, gz), (ZSTD, zs), (LZ4, lz), (SNAPPY, sn)):
        with pytest.raises(DecompressionLimitError, match=f"limit of {16 * MiB} bytes"):
            c.decompress(codec, bomb, limit=16 * MiB)
        dec = c.open_decompressor(codec, bomb, limit=16 * MiB)
        assert dec.read(100) == bytes(100)
        with pytest.raises(DecompressionLimitError):
            while dec.read(MiB):
                pass
        assert dec.total_out <= 16 * MiB
    assert c.decompress(GZIP, gz, limit=64 * MiB) == bytes(64 * MiB)


def test_gigabyte_bombs_stop_quickly() -> None:
    started = time.monotonic()
    for codec, bomb in ((GZIP, _gzip_bomb(1100)), (ZSTD, _zstd_bomb(8800))):
        assert len(bomb) < 2 * MiB
        dec = c.open_decompressor(codec, bomb)  # default limit
        assert dec.read(100) == bytes(100)
        with pytest.raises(DecompressionLimitError):
            c.decompress(codec, bomb, limit=8 * MiB)
    zs = c.open_decompressor(ZSTD, _zstd_bomb(8800))
    with pytest.raises(DecompressionLimitError, match="limit of 268435456 bytes"):
        while zs.read(4 * MiB):
            pass
    assert zs.total_out == c.DEFAULT_DECOMPRESSION_LIMIT
    assert time.monotonic() - started < 5


# -------------------------------------------------------------------------------------- corrupt inputs


@pytest.mark.parametrize("codec", [GZIP, SNAPPY, LZ4, ZSTD], ids=lambda x: c.CODEC_NAMES[x])
def test_every_byte_flip_and_truncation(codec: int) -> None:
    data = _text(700) + bytes(300)
    packed = c.compress(codec, data)
    if codec == SNAPPY:
        packed += c.compress(codec, data)[16:]  # two chunks
    for magic in (0, 2):
        for i in range(len(packed)):
            for mask in (0x01, 0x80, 0xFF):
                flipped = packed[:i] + bytes([packed[i] ^ mask]) + packed[i + 1 :]
                _decodes_or_fails_cleanly(codec, flipped, magic)
        for n in range(len(packed)):
            _decodes_or_fails_cleanly(codec, packed[:n], magic)


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(codec=st.sampled_from([GZIP, SNAPPY, LZ4, ZSTD]), magic=st.sampled_from([0, 1, 2]), data=st.binary())
def test_random_bytes(codec: int, magic: int, data: bytes) -> None:
    _decodes_or_fails_cleanly(codec, data, magic)
    # the same bytes behind a valid-looking header, so the fuzz reaches the block parsers
    prefix = {
        GZIP: b"\x1f\x8b\x08\0\0\0\0\0\0\xff",
        SNAPPY: b"\x82SNAPPY\x00\0\0\0\x01\0\0\0\x01",
        LZ4: _lz4_header(),
        ZSTD: b"\x28\xb5\x2f\xfd",
    }[codec]
    _decodes_or_fails_cleanly(codec, prefix + data, magic)


@settings(max_examples=200, deadline=None)
@given(
    codec=st.sampled_from([GZIP, SNAPPY, LZ4, ZSTD]),
    data=st.binary(max_size=3000),
    edits=st.lists(st.tuples(st.integers(min_value=0), st.integers(min_value=1, max_value=255)), max_size=4),
    cut=st.integers(min_value=0, max_value=40),
)
def test_mutated_payloads(codec: int, data: bytes, edits: list[tuple[int, int]], cut: int) -> None:
    packed = bytearray(c.compress(codec, data * 3))
    for pos, mask in edits:
        packed[pos % len(packed)] ^= mask
    _decodes_or_fails_cleanly(codec, bytes(packed[: len(packed) - cut]))


# ------------------------------------------------------------------------------------------ real data


def _corpus_file(relative: str) -> Path:
    if not CORPUS.is_dir():
        pytest.skip("corpus absent")
    return CORPUS / relative


def _zigzag_varint(buf: bytes, pos: int) -> tuple[int, int]:
    value = shift = 0
    while True:
        byte = buf[pos]
        pos += 1
        value |= (byte & 0x7F) << shift
        shift += 7
        if byte < 0x80:
            return (value >> 1) ^ -(value & 1), pos


@pytest.mark.parametrize("codec_name", ["gzip", "snappy", "lz4", "zstd"])
def test_corpus_v2_batches(codec_name: str) -> None:
    raw = _corpus_file(f"data/codec-{codec_name}-0/00000000000000000000.log").read_bytes()
    view = memoryview(raw)
    pos = compressed = 0
    while pos + 12 <= len(raw):
        (batch_length,) = struct.unpack_from(">i", raw, pos + 8)
        end = pos + 12 + batch_length
        codec = struct.unpack_from(">h", raw, pos + 21)[0] & 7
        (count,) = struct.unpack_from(">i", raw, pos + 57)
        if codec != NONE:
            assert c.CODEC_NAMES[codec] == codec_name
            out = c.decompress(codec, view[pos + 61 : end])
            assert out and _stream(c.open_decompressor(codec, view[pos + 61 : end]), 100) == out
            # the output is exactly `count` records, each a zigzag length varint plus that many bytes
            p = 0
            for _ in range(count):
                length, p = _zigzag_varint(out, p)
                assert length > 0
                p += length
            assert p == len(out)
            compressed += 1
        pos = end
    assert pos == len(raw) and compressed >= 3


@pytest.mark.parametrize("partition", ["legacy-v0-0", "legacy-v1-0"])
def test_corpus_legacy(partition: str) -> None:
    seen: set[int] = set()
    for path in sorted(_corpus_file(f"data-kafka39-zk/{partition}").glob("*.log")):
        raw = path.read_bytes()
        pos = 0
        while pos + 12 <= len(raw):
            (size,) = struct.unpack_from(">i", raw, pos + 8)
            magic, attributes = raw[pos + 16], raw[pos + 17]
            p = pos + 18 + (8 if magic == 1 else 0)
            (key_length,) = struct.unpack_from(">i", raw, p)
            p += 4 + max(key_length, 0)
            (value_length,) = struct.unpack_from(">i", raw, p)
            value = raw[p + 4 : p + 4 + value_length]
            codec = attributes & 7
            if codec != NONE:
                seen.add(codec)
                out = c.decompress(codec, value, magic=magic)
                # inner log entries fill the output exactly; uncompressed, same magic as the wrapper
                q = 0
                while q < len(out):
                    (inner_size,) = struct.unpack_from(">i", out, q + 8)
                    assert out[q + 16] == magic and out[q + 17] & 7 == 0
                    q += 12 + inner_size
                assert q == len(out) > 0
                if codec == LZ4:
                    # magic 0 wrappers carry old Kafka's broken HC byte, rejected under the magic-1 rule
                    hc_over = value[:6] if magic == 0 else value[4:6]
                    assert value[6] == (xxh32(hc_over) >> 8) & 0xFF
                    if magic == 0:
                        with pytest.raises(DecompressionError, match="Stream frame descriptor corrupted"):
                            c.decompress(codec, value, magic=1)
                    assert bytes(c.compress(LZ4, b"", magic=magic)[:7]) == bytes(value[:7])
            pos += 12 + size
    assert seen == {GZIP, SNAPPY, LZ4}
