"""Variable-length integers as Kafka writes them (``ByteUtils``): protobuf LEB128 with zigzag mapping.

Kafka reads at most 5 bytes for an int varint and 10 for a long varint and keeps only 32 (64) bits of the
accumulated value, so these readers do the same: a 5th byte with its continuation bit set is an error, and
surplus high bits of the last byte are dropped exactly as Java's shifting drops them.
"""

from __future__ import annotations

_MASK32 = 0xFFFFFFFF
_MASK64 = 0xFFFFFFFFFFFFFFFF


class VarintError(ValueError):
    """A varint ran past the end of the buffer or is longer than Kafka allows."""


def read_varint(buf: bytes, pos: int, end: int) -> tuple[int, int]:
    """Read a zigzag-encoded signed 32-bit varint at ``pos``; returns ``(value, next_pos)``."""
    if pos >= end:
        raise VarintError("premature end of buffer while reading a varint")
    b = buf[pos]
    if b < 0x80:
        return (b >> 1) ^ -(b & 1), pos + 1
    value = b & 0x7F
    shift = 7
    pos += 1
    while True:
        if pos >= end:
            raise VarintError("premature end of buffer while reading a varint")
        b = buf[pos]
        pos += 1
        value |= (b & 0x7F) << shift
        if b < 0x80:
            break
        shift += 7
        if shift > 28:
            raise VarintError("Varint is too long, the most significant bit in the 5th byte is set")
    value &= _MASK32
    return (value >> 1) ^ -(value & 1), pos


def read_varlong(buf: bytes, pos: int, end: int) -> tuple[int, int]:
    """Read a zigzag-encoded signed 64-bit varint at ``pos``; returns ``(value, next_pos)``."""
    if pos >= end:
        raise VarintError("premature end of buffer while reading a varlong")
    b = buf[pos]
    if b < 0x80:
        return (b >> 1) ^ -(b & 1), pos + 1
    value = b & 0x7F
    shift = 7
    pos += 1
    while True:
        if pos >= end:
            raise VarintError("premature end of buffer while reading a varlong")
        b = buf[pos]
        pos += 1
        value |= (b & 0x7F) << shift
        if b < 0x80:
            break
        shift += 7
        if shift > 63:
            raise VarintError("Varlong is too long, most significant bit in the 10th byte is set")
    value &= _MASK64
    return (value >> 1) ^ -(value & 1), pos


def encode_unsigned_varint(value: int) -> bytes:
    """Encode a non-negative integer as an unsigned LEB128 varint."""
    if value < 0:
        raise ValueError("unsigned varint must be >= 0")
    out = bytearray()
    while value >= 0x80:
        out.append((value & 0x7F) | 0x80)
        value >>= 7
    out.append(value)
    return bytes(out)


def encode_varint(value: int) -> bytes:
    """Encode a signed 32-bit integer as a zigzag varint."""
    return encode_unsigned_varint(((value << 1) ^ (value >> 31)) & _MASK32)


def encode_varlong(value: int) -> bytes:
    """Encode a signed 64-bit integer as a zigzag varlong."""
    return encode_unsigned_varint(((value << 1) ^ (value >> 63)) & _MASK64)
