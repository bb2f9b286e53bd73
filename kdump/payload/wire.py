"""Confluent's wire format for schema-registry payloads.

A framed payload is ``0x00`` (the magic byte), the schema id as a 4-byte big-endian signed int, then the
serialized data.  Protobuf payloads carry, before the message, the path of the message type inside its
``.proto`` file: a zig-zag varint count, then that many zig-zag varint indexes (the top-level message's index in
the file, then the nested message's index in it, ...); the count 0 alone stands for ``[0]``, the first message
of the file (the common case, one byte).
"""

from __future__ import annotations

MAGIC_BYTE = 0
HEADER_SIZE = 5
#: More nesting than any real .proto file has; a longer path is garbage, not a schema.
MAX_INDEX_DEPTH = 64


class FramingError(Exception):
    """The payload is not (or not entirely) in Confluent's wire format; ``message`` says why."""

    def __init__(self, message: str) -> None:
        super().__init__(message)
        self.message = message


def schema_id_of(data: bytes) -> int:
    """The schema id of a framed payload; raises :class:`FramingError` on a wrong magic byte or a payload too
    short to hold the header."""
    if len(data) < HEADER_SIZE:
        if data and data[0] != MAGIC_BYTE:
            raise FramingError(f"not schema-registry framed (magic byte {data[0]}, expected 0)")
        raise FramingError(f"truncated: {len(data)} bytes, the schema-registry header alone takes 5")
    if data[0] != MAGIC_BYTE:
        raise FramingError(f"not schema-registry framed (magic byte {data[0]}, expected 0)")
    return int.from_bytes(data[1:5], "big", signed=True)


def _zigzag_varint(data: bytes, pos: int) -> tuple[int, int]:
    result = 0
    shift = 0
    end = len(data)
    while True:
        if pos >= end:
            raise FramingError("truncated in the Protobuf message indexes")
        b = data[pos]
        pos += 1
        result |= (b & 0x7F) << shift
        if not b & 0x80:
            break
        shift += 7
        if shift > 28:
            raise FramingError("a Protobuf message index varint runs past 5 bytes")
    return (result >> 1) ^ -(result & 1), pos


def message_indexes(data: bytes, pos: int = HEADER_SIZE) -> tuple[list[int], int]:
    """The Protobuf message indexes at ``pos`` and where the message starts."""
    count, pos = _zigzag_varint(data, pos)
    if count == 0:
        return [0], pos
    if count < 0 or count > MAX_INDEX_DEPTH:
        raise FramingError(f"bad Protobuf message index count {count}")
    indexes = []
    for _ in range(count):
        index, pos = _zigzag_varint(data, pos)
        if index < 0:
            raise FramingError(f"negative Protobuf message index {index}")
        indexes.append(index)
    return indexes, pos


def frame(schema_id: int, body: bytes, indexes: list[int] | None = None) -> bytes:
    """A framed payload (the serializer's side; for tests and benchmarks).  ``indexes``: Protobuf only."""
    head = bytes([MAGIC_BYTE]) + schema_id.to_bytes(4, "big", signed=True)
    if indexes is None:
        return head + body
    if indexes == [0]:
        return head + b"\x00" + body
    return head + b"".join(_zigzag(n) for n in (len(indexes), *indexes)) + body


def _zigzag(n: int) -> bytes:
    z = (n << 1) ^ (n >> 63)
    out = bytearray()
    while z > 0x7F:
        out.append((z & 0x7F) | 0x80)
        z >>= 7
    out.append(z)
    return bytes(out)
