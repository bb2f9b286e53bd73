"""xxHash32 (XXH32), which LZ4 frames use for their header checksum byte and their optional block and content
checksums (:mod:`kdump.storage.compression` reads and writes Kafka's LZ4 frames with it)."""

from __future__ import annotations

import struct

_U32_LE = struct.Struct("<I")
_M32 = 0xFFFFFFFF
_P1, _P2, _P3, _P4, _P5 = 2654435761, 2246822519, 3266489917, 668265263, 374761393
_STRIPES = struct.Struct("<4I")


def xxh32(data: bytes | bytearray | memoryview, seed: int = 0) -> int:
    """xxHash32 of ``data`` (pure Python; meant for LZ4 frame descriptors and the rare block checksum)."""
    data = bytes(data)
    n = len(data)
    pos = 0
    if n >= 16:
        v1 = (seed + _P1 + _P2) & _M32
        v2 = (seed + _P2) & _M32
        v3 = seed & _M32
        v4 = (seed - _P1) & _M32
        pos = n - n % 16
        for a, b, c, d in _STRIPES.iter_unpack(data[:pos]):
            v1 = (v1 + a * _P2) & _M32
            v1 = (((v1 << 13) | (v1 >> 19)) & _M32) * _P1 & _M32
            v2 = (v2 + b * _P2) & _M32
            v2 = (((v2 << 13) | (v2 >> 19)) & _M32) * _P1 & _M32
            v3 = (v3 + c * _P2) & _M32
            v3 = (((v3 << 13) | (v3 >> 19)) & _M32) * _P1 & _M32
            v4 = (v4 + d * _P2) & _M32
            v4 = (((v4 << 13) | (v4 >> 19)) & _M32) * _P1 & _M32
        h = (
            ((v1 << 1) | (v1 >> 31))
            + ((v2 << 7) | (v2 >> 25))
            + ((v3 << 12) | (v3 >> 20))
            + ((v4 << 18) | (v4 >> 14))
        ) & _M32
    else:
        h = (seed + _P5) & _M32
    h = (h + n) & _M32
    while pos + 4 <= n:
        (k,) = _U32_LE.unpack_from(data, pos)
        h = (h + k * _P3) & _M32
        h = (((h << 17) | (h >> 15)) & _M32) * _P4 & _M32
        pos += 4
    while pos < n:
        h = (h + data[pos] * _P5) & _M32
        h = (((h << 11) | (h >> 21)) & _M32) * _P1 & _M32
        pos += 1
    h ^= h >> 15
    h = h * _P2 & _M32
    h ^= h >> 13
    h = h * _P3 & _M32
    h ^= h >> 16
    return h
