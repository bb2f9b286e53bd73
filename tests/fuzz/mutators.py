"""Mutations for the fuzz harness: generic byte-level ones and structure-aware ones that know Kafka's framing.

Every mutator takes the input bytes and a :class:`random.Random` and returns new bytes; none of them needs the
input to be well formed (a structure-aware mutator falls back to a generic one when it finds no structure).
The structure-aware ones matter because random bytes rarely get past a CRC or a length check: they attack the
length fields, record counts and varints the parsers trust, and can repair the CRCs afterwards so that the
damaged content reaches the deeper parsers (records inside compressed payloads included).
"""

from __future__ import annotations

import random
import struct
import zlib
from collections.abc import Callable

import crc32c

from kdump.errors import KdumpError
from kdump.storage import compression
from kdump.storage.varint import encode_unsigned_varint

Mutator = Callable[[bytes, random.Random], bytes]

INTERESTING_8 = (0x00, 0x01, 0x02, 0x03, 0x07, 0x08, 0x10, 0x20, 0x40, 0x7F, 0x80, 0xC0, 0xFE, 0xFF)
INTERESTING_32 = (
    0,
    1,
    -1,
    -2,
    2,
    4,
    13,
    14,
    17,
    22,
    48,
    49,
    60,
    61,
    255,
    256,
    0xFFFF,
    0x10000,
    1 << 20,
    1 << 24,
    1 << 30,
    0x7FFFFFFE,
    0x7FFFFFFF,
    -0x80000000,
    -0x7FFFFFFF,
)
INTERESTING_64 = (0, -1, 1, 1 << 31, (1 << 63) - 1, -(1 << 63), 1 << 62, 1700000000000)

_I32 = struct.Struct(">i")
_I64 = struct.Struct(">q")
_LOG_HEADER = struct.Struct(">qi")


# -- generic ----------------------------------------------------------------------------------------------------


def _position(data: bytes, rng: random.Random, *, end_ok: bool = False) -> int:
    n = len(data) + (1 if end_ok else 0)
    if n <= 0:
        return 0
    if rng.random() < 0.3:  # field boundaries of the formats are mostly 4-aligned or near the start
        return min(n - 1, rng.choice((0, 4, 8, 12, 16, 17, 21, 23, 57, 61)) + 12 * rng.randrange(3))
    return rng.randrange(n)


def flip_bits(data: bytes, rng: random.Random) -> bytes:
    if not data:
        return insert_bytes(data, rng)
    out = bytearray(data)
    for _ in range(rng.choice((1, 1, 1, 2, 3, 8))):
        i = rng.randrange(len(out))
        out[i] ^= 1 << rng.randrange(8)
    return bytes(out)


def set_bytes(data: bytes, rng: random.Random) -> bytes:
    if not data:
        return insert_bytes(data, rng)
    out = bytearray(data)
    for _ in range(rng.choice((1, 1, 2, 4))):
        i = _position(out, rng)
        out[i] = rng.choice(INTERESTING_8) if rng.random() < 0.7 else rng.randrange(256)
    return bytes(out)


def set_int32(data: bytes, rng: random.Random) -> bytes:
    if len(data) < 4:
        return set_bytes(data, rng)
    i = min(_position(data, rng), len(data) - 4)
    value = rng.choice(INTERESTING_32)
    return data[:i] + _I32.pack(value) + data[i + 4 :]


def set_int64(data: bytes, rng: random.Random) -> bytes:
    if len(data) < 8:
        return set_int32(data, rng)
    i = min(_position(data, rng), len(data) - 8)
    return data[:i] + _I64.pack(rng.choice(INTERESTING_64)) + data[i + 8 :]


def truncate(data: bytes, rng: random.Random) -> bytes:
    if not data:
        return data
    return data[: _position(data, rng)]


def insert_bytes(data: bytes, rng: random.Random) -> bytes:
    i = _position(data, rng, end_ok=True)
    kind = rng.randrange(4)
    n = rng.choice((1, 2, 3, 4, 7, 12, 17, 61, 200))
    if kind == 0:
        chunk = bytes(rng.randrange(256) for _ in range(n))
    elif kind == 1:
        chunk = bytes([rng.choice(INTERESTING_8)]) * n  # 0xff runs: varints that never end
    elif kind == 2 and data:
        start = rng.randrange(len(data))
        chunk = data[start : start + n]  # a piece of the input itself (duplicated headers)
    else:
        chunk = bytes(n)
    return data[:i] + chunk + data[i:]


def delete_bytes(data: bytes, rng: random.Random) -> bytes:
    if not data:
        return data
    i = rng.randrange(len(data))
    n = rng.choice((1, 2, 4, 8, 12, 61, 500))
    return data[:i] + data[i + n :]


def zero_range(data: bytes, rng: random.Random) -> bytes:
    if not data:
        return bytes(rng.choice((1, 8, 12, 100)))
    if rng.random() < 0.3:
        return data + bytes(rng.choice((1, 7, 8, 12, 34, 46, 4096)))  # a preallocated, zero-filled tail
    i = rng.randrange(len(data))
    n = rng.choice((1, 4, 12, 61, 4096))
    return data[:i] + bytes(min(n, len(data) - i)) + data[i + n :]


def splice(data: bytes, rng: random.Random) -> bytes:
    """Copy a range of the input over another place (a batch written twice, or over another)."""
    if len(data) < 2:
        return insert_bytes(data, rng)
    a, b = sorted(rng.randrange(len(data)) for _ in range(2))
    piece = data[a : b + 1]
    i = rng.randrange(len(data))
    if rng.random() < 0.5:
        return data[:i] + piece + data[i:]
    return data[:i] + piece + data[i + len(piece) :]


GENERIC: tuple[Mutator, ...] = (
    flip_bits,
    set_bytes,
    set_int32,
    set_int64,
    truncate,
    insert_bytes,
    delete_bytes,
    zero_range,
    splice,
)


def generic(data: bytes, rng: random.Random) -> bytes:
    return rng.choice(GENERIC)(data, rng)


# -- segments ---------------------------------------------------------------------------------------------------


def frames(data: bytes) -> list[tuple[int, int, int]]:
    """``(position, total size, magic)`` of the whole entries from the start, following the log framing."""
    out = []
    pos = 0
    while pos + 17 <= len(data):
        _, size = _LOG_HEADER.unpack_from(data, pos)
        if size < 14 or pos + 12 + size > len(data):
            break
        out.append((pos, 12 + size, data[pos + 16]))
        pos += 12 + size
    return out


def fix_crcs(data: bytes) -> bytes:
    """Recompute the CRC of every entry the framing finds (v2: CRC-32C of bytes 21..; v0/v1: CRC-32 of the
    message from its magic byte), so that what follows is parsed, not just flagged."""
    out = bytearray(data)
    for pos, total, magic in frames(data):
        if magic >= 2:
            if total >= 61:
                struct.pack_into(">I", out, pos + 17, crc32c.crc32c(bytes(out[pos + 21 : pos + total])))
        else:
            struct.pack_into(">I", out, pos + 12, zlib.crc32(bytes(out[pos + 16 : pos + total])))
    return bytes(out)


def _pick_frame(data: bytes, rng: random.Random, want: Callable[[int, int], bool] | None = None):  # noqa: ANN202
    found = [f for f in frames(data) if want is None or want(f[1], f[2])]
    return rng.choice(found) if found else None


def attack_batch_length(data: bytes, rng: random.Random) -> bytes:
    """The entry's size field: 2^31-1, negative, just too small or too large, pointing into the next entry."""
    frame = _pick_frame(data, rng)
    if frame is None:
        return set_int32(data, rng)
    pos, total, _ = frame
    value = rng.choice(
        (*INTERESTING_32, total - 12 + rng.choice((-3, -1, 1, 2, 12, 61)), rng.randrange(14, 1 << 16))
    )
    out = bytearray(data)
    _I32.pack_into(out, pos + 8, _wrap32(value))
    return bytes(out)


_V2_FIELDS = (  # (offset, struct) of the v2 header fields worth attacking
    (0, ">q"),
    (12, ">i"),
    (16, ">b"),
    (21, ">h"),
    (23, ">i"),
    (27, ">q"),
    (35, ">q"),
    (43, ">q"),
    (51, ">h"),
    (53, ">i"),
    (57, ">i"),  # the record count: lying counts
    (57, ">i"),
)


def attack_v2_header(data: bytes, rng: random.Random) -> bytes:
    frame = _pick_frame(data, rng, lambda total, magic: magic >= 2 and total >= 61)
    if frame is None:
        return set_int32(data, rng)
    pos = frame[0]
    at, fmt = rng.choice(_V2_FIELDS)
    out = bytearray(data)
    if fmt == ">b":
        out[pos + at] = rng.choice((0, 1, 2, 3, 0x7F, 0xFF))
    elif fmt == ">h":
        if at == 21:  # attributes: every codec id (5-7 unknown), control, transactional, timestamp type
            value = rng.randrange(0x80) if rng.random() < 0.8 else rng.randrange(-0x8000, 0x8000)
        else:
            value = rng.choice((-1, 0, 1, 0x7FFF, -0x8000))
        struct.pack_into(fmt, out, pos + at, value)
    elif fmt == ">i":
        struct.pack_into(fmt, out, pos + at, _wrap32(rng.choice(INTERESTING_32)))
    else:
        struct.pack_into(fmt, out, pos + at, rng.choice(INTERESTING_64))
    return bytes(out)


def _varint_attack(rng: random.Random) -> bytes:
    kind = rng.randrange(6)
    if kind == 0:
        return b"\xff" * rng.choice((5, 6, 10, 11, 20))  # a varint that never ends
    if kind == 1:
        return encode_unsigned_varint(((0x7FFFFFFF << 1) ^ 0) & 0xFFFFFFFF)  # 2^31-1
    if kind == 2:
        return encode_unsigned_varint(rng.choice((1, 3, 5, 0xFFFFFFFF)))  # -1, -2, -3, most negative
    if kind == 3:
        return encode_unsigned_varint(rng.randrange(1 << 32))
    if kind == 4:
        return b"\x80" * rng.randrange(1, 5) + b"\x00"  # over-long but terminated
    return bytes([rng.randrange(256)])


def mutate_records_region(region: bytes, rng: random.Random) -> bytes:
    """Damage a v2 records region (or any length-prefixed data): varint attacks or a generic mutation."""
    if region and rng.random() < 0.5:
        i = rng.randrange(len(region) + 1)
        replace = rng.choice((0, 1, 1, 2, 5))
        return region[:i] + _varint_attack(rng) + region[i + replace :]
    return generic(region, rng)


def attack_v2_records(data: bytes, rng: random.Random) -> bytes:
    """Damage the records of a v2 batch, *inside* the compression when it has a codec, and repair the batch
    (size and CRC) so that the damage reaches the record parser."""
    frame = _pick_frame(data, rng, lambda total, magic: magic == 2 and total > 61)
    if frame is None:
        return generic(data, rng)
    pos, total, _ = frame
    attributes = struct.unpack_from(">h", data, pos + 21)[0]
    codec = attributes & 7
    payload = data[pos + 61 : pos + total]
    if codec == 0:
        payload = mutate_records_region(payload, rng)
    else:
        try:
            plain = compression.decompress(codec, payload, limit=1 << 22)
        except (KdumpError, ValueError):
            return generic(data, rng)
        payload = compression.compress(codec, mutate_records_region(plain, rng))
    return _rebuild_v2(data, pos, total, payload)


def _rebuild_v2(data: bytes, pos: int, total: int, payload: bytes) -> bytes:
    header = bytearray(data[pos : pos + 61])
    _I32.pack_into(header, 8, 49 + len(payload))
    struct.pack_into(">I", header, 17, crc32c.crc32c(bytes(header[21:]) + payload))
    return data[:pos] + bytes(header) + payload + data[pos + total :]


def attack_legacy(data: bytes, rng: random.Random) -> bytes:
    """Key/value length fields of a v0/v1 message, or the inner entries of a compressed wrapper (decompressed,
    damaged, recompressed); the message CRC is repaired."""
    frame = _pick_frame(data, rng, lambda total, magic: magic < 2 and total >= 26)
    if frame is None:
        return generic(data, rng)
    pos, total, magic = frame
    message = bytearray(data[pos + 12 : pos + total])
    key_at = 6 if magic == 0 else 14
    codec = message[5] & 7
    if codec and rng.random() < 0.6 and len(message) >= key_at + 8:
        key_size = _I32.unpack_from(message, key_at)[0]
        value_at = key_at + 4 + max(0, key_size)
        if value_at + 4 <= len(message):
            value = bytes(message[value_at + 4 :])
            try:
                inner = compression.decompress(codec, value, magic=magic, limit=1 << 22)
            except (KdumpError, ValueError):
                inner = None
            if inner is not None:
                inner = rng.choice((attack_batch_length, generic, attack_legacy, mutate_records_region))(
                    inner, rng
                )
                if rng.random() < 0.5:
                    inner = fix_crcs(inner)
                value = compression.compress(codec, inner, magic=magic)
                message = message[: value_at + 4] + value
                _I32.pack_into(message, value_at, len(value))
    else:
        at = key_at if rng.random() < 0.5 or len(message) < key_at + 8 else None
        if at is None:
            key_size = _I32.unpack_from(message, key_at)[0]
            at = key_at + 4 + max(0, key_size)
        if at + 4 <= len(message):
            _I32.pack_into(message, at, _wrap32(rng.choice(INTERESTING_32)))
    struct.pack_into(">I", message, 0, zlib.crc32(bytes(message[4:])))
    return (
        data[:pos]
        + _LOG_HEADER.pack(_LOG_HEADER.unpack_from(data, pos)[0], len(message))
        + message
        + data[pos + total :]
    )


SEGMENT: tuple[Mutator, ...] = (
    *GENERIC,
    attack_batch_length,
    attack_batch_length,
    attack_v2_header,
    attack_v2_header,
    attack_v2_records,
    attack_v2_records,
    attack_v2_records,
    attack_legacy,
    attack_legacy,
)


def mutate_segment(data: bytes, rng: random.Random) -> bytes:
    """One to three segment mutations, CRCs repaired half of the time."""
    for _ in range(rng.choice((1, 1, 1, 2, 3))):
        data = rng.choice(SEGMENT)(data, rng)
    if rng.random() < 0.5:
        data = fix_crcs(data)
    return data


# -- fixed-size records (indexes, snapshots) --------------------------------------------------------------------


def slot_mutator(entry_size: int, fields: tuple[tuple[int, str], ...]) -> Mutator:
    """Mutations of a flat array of ``entry_size``-byte slots: a field of a slot set to an interesting value,
    slots swapped or duplicated, a partial slot, plus the generic ones."""

    def mutate(data: bytes, rng: random.Random) -> bytes:
        count = len(data) // entry_size
        kind = rng.randrange(4)
        if count and kind == 0:
            i = rng.randrange(count)
            at, fmt = rng.choice(fields)
            out = bytearray(data)
            size = struct.calcsize(fmt)
            value = rng.choice(INTERESTING_64 if size == 8 else INTERESTING_32)
            if size == 2:
                value = rng.choice((-1, 0, 1, 2, 0x7FFF, -0x8000))
            elif size == 1:
                value = rng.choice((-128, -1, 0, 1, 2, 127))
            struct.pack_into(fmt, out, i * entry_size + at, _wrap(value, size))
            return bytes(out)
        if count >= 2 and kind == 1:
            i, j = rng.sample(range(count), 2)
            slots = [data[k * entry_size : (k + 1) * entry_size] for k in range(count)]
            slots[i], slots[j] = slots[j], slots[i]
            return b"".join(slots) + data[count * entry_size :]
        return generic(data, rng)

    return mutate


def _wrap(value: int, size: int) -> int:
    bits = 8 * size
    value &= (1 << bits) - 1
    return value - (1 << bits) if value >> (bits - 1) else value


def _wrap32(value: int) -> int:
    return _wrap(value, 4)


# -- text files -------------------------------------------------------------------------------------------------

_TEXT_PIECES = (
    b"\n",
    b"\r",
    b"\r\n",
    b" ",
    b"\t",
    b"\x0b",
    b"-",
    b"+",
    b"0",
    b"-1",
    b"2147483648",
    b"9223372036854775808",
    b"-9223372036854775809",
    b"99999999999999999999999999",
    b"\xff\xfe",
    b"\xc3",
    b"\xed\xa0\x80",
    b"\x00",
    b"=",
    b":",
    b"\\",
    b"\\u12",
    b"\\uzzzz",
    b"#",
    b"!",
    b'"',
    b"{",
    b"}",
    b"[",
    b"]",
    b"null",
    b"1e400",
    b"NaN",
    b"-0",
    b"0x10",
    b"AAAAAAAAAAAAAAAAAAAAAA",
    b"\xe2\x80\xa8",
)


def mutate_text(data: bytes, rng: random.Random) -> bytes:
    """Token-level mutations of line-oriented text files (checkpoints, properties, JSON), plus generic ones."""
    kind = rng.randrange(6)
    if kind == 0:
        i = rng.randrange(len(data) + 1)
        return data[:i] + rng.choice(_TEXT_PIECES) + data[i:]
    if kind == 1 and data:  # replace a token (a run of non-blank bytes)
        tokens = [
            i
            for i in range(len(data))
            if data[i : i + 1] not in (b" ", b"\n") and (i == 0 or data[i - 1 : i] in (b" ", b"\n"))
        ]
        if tokens:
            start = rng.choice(tokens)
            end = start
            while end < len(data) and data[end : end + 1] not in (b" ", b"\n"):
                end += 1
            return data[:start] + rng.choice(_TEXT_PIECES) + data[end:]
    if kind == 2 and data:  # duplicate or drop a line
        lines = data.split(b"\n")
        i = rng.randrange(len(lines))
        if rng.random() < 0.5:
            lines.insert(i, lines[i])
        else:
            del lines[i]
        return b"\n".join(lines)
    if kind == 3:  # a very long line
        return data + b"x" * rng.choice((1000, 100000)) + b"\n"
    return generic(data, rng)


# -- structural attacks of the differential harness (tests/differential) ----------------------------------------
# Each keeps the rest of the file well formed (lengths and CRCs repaired unless the CRC is the target), so the
# damage reaches the check Kafka makes for it and the run goes on to show what follows.

_MAGICS = (0, 1, 2, 3, 0x7F, 0x80, 0x81, 0xFE, 0xFF)


def _v2_frames(data: bytes) -> list[tuple[int, int, int]]:
    return [f for f in frames(data) if f[2] == 2 and f[1] >= 61]


def _reframe_v2(data: bytes, pos: int, total: int, body: bytes) -> bytes:
    """Replace the bytes after the v2 header (61) of the entry at ``pos``, fixing its length and CRC."""
    head = bytearray(data[pos : pos + 61])
    _I32.pack_into(head, 8, len(body) + 49)
    struct.pack_into(">I", head, 17, crc32c.crc32c(bytes(head[21:]) + body))
    return data[:pos] + bytes(head) + body + data[pos + total :]


def attack_magic(data: bytes, rng: random.Random) -> bytes:
    """Any magic byte (a signed Java byte: 0x80-0xff is negative) on an entry of any version."""
    frame = _pick_frame(data, rng)
    if frame is None:
        return set_bytes(data, rng)
    out = bytearray(data)
    out[frame[0] + 16] = rng.choice(_MAGICS) if rng.random() < 0.8 else rng.randrange(256)
    return bytes(out)


def attack_codec(data: bytes, rng: random.Random) -> bytes:
    """Re-encode a v2 batch's records with another codec (or claim one without re-encoding: codec ids 5-7,
    a codec over plain bytes), attributes, length and CRC made consistent."""
    found = _v2_frames(data)
    if not found:
        return attack_legacy(data, rng)
    pos, total, _ = rng.choice(found)
    attributes = struct.unpack_from(">h", data, pos + 21)[0]
    codec = attributes & 7
    body = data[pos + 61 : pos + total]
    new_codec = rng.randrange(8)
    if rng.random() < 0.7 and codec <= 4 and new_codec <= 4:
        try:
            plain = compression.decompress(codec, body)
            body = compression.compress(new_codec, plain)
        except (KdumpError, Exception):  # noqa: BLE001 - a damaged payload stays as it is
            pass
    out = _reframe_v2(data, pos, total, body)
    fixed = bytearray(out)
    struct.pack_into(">h", fixed, pos + 21, (attributes & ~7) | new_codec)
    struct.pack_into(
        ">I",
        fixed,
        pos + 17,
        crc32c.crc32c(bytes(fixed[pos + 21 : pos + 12 + _I32.unpack_from(fixed, pos + 8)[0]])),
    )
    return bytes(fixed)


def attack_count(data: bytes, rng: random.Random) -> bytes:
    """The v2 record count one off, zero, negative or huge (CRC repaired): the iterators' order of checks."""
    found = _v2_frames(data)
    if not found:
        return set_int32(data, rng)
    pos, total, _ = rng.choice(found)
    count = _I32.unpack_from(data, pos + 57)[0]
    value = rng.choice((count - 1, count + 1, count - 2, count + 2, 0, -1, 1 << 20, 0x7FFFFFFF))
    out = bytearray(data)
    _I32.pack_into(out, pos + 57, _wrap32(value))
    struct.pack_into(">I", out, pos + 17, crc32c.crc32c(bytes(out[pos + 21 : pos + total])))
    return bytes(out)


def attack_crc(data: bytes, rng: random.Random) -> bytes:
    """A wrong CRC on an otherwise intact entry (the only damage)."""
    frame = _pick_frame(data, rng)
    if frame is None:
        return flip_bits(data, rng)
    pos, _, magic = frame
    at = pos + (17 if magic >= 2 else 12)
    out = bytearray(data)
    if at + 4 <= len(out):
        out[at + rng.randrange(4)] ^= 1 << rng.randrange(8)
    return bytes(out)


def truncate_in_entry(data: bytes, rng: random.Random) -> bytes:
    """Cut the file inside an entry at a field boundary (log overhead, magic, CRC, header, first record)."""
    frame = _pick_frame(data, rng)
    if frame is None:
        return truncate(data, rng)
    pos, total, _ = frame
    cut = rng.choice((1, 8, 11, 12, 16, 17, 21, 22, 57, 60, 61, 62, total - 1, rng.randrange(1, total)))
    return data[: pos + min(cut, total - 1)]


def attack_record_varints(data: bytes, rng: random.Random) -> bytes:
    """One varint of a record of an uncompressed v2 batch (its length, a delta, key/value/header sizes) set to
    an interesting value; length and CRC repaired."""
    found = [f for f in _v2_frames(data) if struct.unpack_from(">h", data, f[0] + 21)[0] & 7 == 0]
    if not found:
        return attack_v2_records(data, rng)
    pos, total, _ = rng.choice(found)
    body = bytearray(data[pos + 61 : pos + total])
    # the record starts: walk the length varints
    starts = []
    i = 0
    while i < len(body):
        value, n = _read_varint(body, i)
        if n == 0:
            break
        starts.append(i)
        i += n + max(0, value)
    if not starts:
        return attack_v2_records(data, rng)
    at = rng.choice(starts)
    if rng.random() < 0.5:  # the record's length
        _, n = _read_varint(body, at)
        replacement = _zigzag(rng.choice((-1, 0, 1, 5, 1 << 20, -(1 << 31))))
        body[at : at + n] = replacement
    else:  # a varint inside: attributes, timestamp delta, offset delta, key length
        _, n = _read_varint(body, at)
        inner = at + n + 1  # past the attributes byte
        k = rng.randrange(3)
        for _ in range(k):
            _, m = _read_varint(body, inner)
            if m == 0:
                break
            inner += m
        _, m = _read_varint(body, inner)
        if m:
            body[inner : inner + m] = _zigzag(rng.choice((-2, -1, 0, 1, 1 << 16, (1 << 31) - 1, -(1 << 31))))
    return _reframe_v2(data, pos, total, bytes(body))


def attack_header_count(data: bytes, rng: random.Random) -> bytes:
    """The header count of a record of an uncompressed v2 batch set to an interesting value (around the 4,096
    headers decoded eagerly, negative, huge, one off); length and CRC repaired."""
    found = [f for f in _v2_frames(data) if struct.unpack_from(">h", data, f[0] + 21)[0] & 7 == 0]
    if not found:
        return attack_record_varints(data, rng)
    pos, total, _ = rng.choice(found)
    body = bytearray(data[pos + 61 : pos + total])
    counts = []  # where each record's header-count varint is
    i = 0
    while i < len(body):
        length, n = _read_varint(body, i)
        if n == 0 or length <= 0:
            break
        j = i + n + 1  # past the length and the attributes byte
        ok = True
        for sized in (False, False, True, True):  # timestamp delta, offset delta, key, value
            value, m = _read_varint(body, j)
            if m == 0:
                ok = False
                break
            j += m + (max(0, value) if sized else 0)
        if ok:
            counts.append(j)
        i += n + length
    if not counts:
        return attack_record_varints(data, rng)
    at = rng.choice(counts)
    old, m = _read_varint(body, at)
    body[at : at + m] = _zigzag(
        rng.choice((-1, 0, old - 1, old + 1, 4095, 4096, 4097, 1 << 20, (1 << 31) - 1))
    )
    return _reframe_v2(data, pos, total, bytes(body))


def _read_varint(buf: bytes | bytearray, pos: int) -> tuple[int, int]:
    """A zigzag varint at ``pos``: (value, bytes used); (0, 0) when it does not end within 5 bytes."""
    raw = 0
    for k in range(5):
        if pos + k >= len(buf):
            return 0, 0
        b = buf[pos + k]
        raw |= (b & 0x7F) << (7 * k)
        if not b & 0x80:
            return (raw >> 1) ^ -(raw & 1), k + 1
    return 0, 0


def _zigzag(value: int) -> bytes:
    return encode_unsigned_varint(((value << 1) ^ (value >> 31)) & 0xFFFFFFFF)


STRUCTURAL: tuple[Mutator, ...] = (
    attack_magic,
    attack_codec,
    attack_codec,
    attack_count,
    attack_count,
    attack_crc,
    truncate_in_entry,
    attack_record_varints,
    attack_record_varints,
    attack_header_count,
)


def mutate_segment_structural(data: bytes, rng: random.Random) -> bytes:
    """The segment mutations plus the structural attacks; the differential harness's mutator of logs."""
    if rng.random() < 0.5:
        return mutate_segment(data, rng)
    data = rng.choice(STRUCTURAL)(data, rng)
    if rng.random() < 0.2:
        data = rng.choice(STRUCTURAL)(data, rng)
    return data


def index_entry_mutator(entry_size: int, key: str, value_at: int) -> Mutator:
    """Mutations of an index's entries that keep it looking sane at a glance: a key repeated or going back,
    a position or offset near a neighbour's, zero-filled tails, a partial entry, the last entry dropped."""
    fields = slot_mutator(entry_size, ((0, key), (value_at, ">i")))
    key_size = struct.calcsize(key)

    def mutate(data: bytes, rng: random.Random) -> bytes:
        count = len(data) // entry_size
        kind = rng.randrange(7)
        if kind == 0 or count == 0:
            return fields(data, rng)
        i = rng.randrange(count)
        out = bytearray(data)
        if kind == 1 and count >= 2:  # the key of one entry copied from another (repeated, going back)
            j = rng.randrange(count)
            out[i * entry_size : i * entry_size + key_size] = data[j * entry_size : j * entry_size + key_size]
        elif kind == 2:  # a value off by a little
            v = _I32.unpack_from(data, i * entry_size + value_at)[0]
            _I32.pack_into(out, i * entry_size + value_at, _wrap32(v + rng.choice((-13, -1, 1, 12, 61))))
        elif kind == 3:  # a zero-filled tail (preallocated, never trimmed)
            out += bytes(entry_size * rng.choice((1, 2, 5)))
        elif kind == 4:  # a partial entry at the end
            out += data[i * entry_size : i * entry_size + rng.randrange(1, entry_size)]
        elif kind == 5:  # entries dropped at the end
            del out[rng.randrange(count) * entry_size :]
        else:  # one entry zeroed in the middle
            out[i * entry_size : (i + 1) * entry_size] = bytes(entry_size)
        return bytes(out)

    return mutate


mutate_offset_index = index_entry_mutator(8, ">i", 4)
mutate_time_index = index_entry_mutator(12, ">q", 8)
