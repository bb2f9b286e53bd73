"""An XXH32 written from its specification (a test oracle: kdump has its own), and the shim that lets
kafka-python read and write magic-0 LZ4 without the optional ``xxhash`` package."""

from __future__ import annotations

_P1, _P2, _P3, _P4, _P5 = 2654435761, 2246822519, 3266489917, 668265263, 374761393
_M32 = 0xFFFFFFFF


def _rotl(x: int, r: int) -> int:
    return ((x << r) | (x >> (32 - r))) & _M32


def xxh32_reference(data: bytes, seed: int = 0) -> int:
    """XXH32 written from its specification (test oracle; kdump has its own implementation)."""
    n, i = len(data), 0
    if n >= 16:
        v = [(seed + _P1 + _P2) & _M32, (seed + _P2) & _M32, seed, (seed - _P1) & _M32]
        while i <= n - 16:
            for lane in range(4):
                word = int.from_bytes(data[i : i + 4], "little")
                v[lane] = _rotl((v[lane] + word * _P2) & _M32, 13) * _P1 & _M32
                i += 4
        h = (_rotl(v[0], 1) + _rotl(v[1], 7) + _rotl(v[2], 12) + _rotl(v[3], 18)) & _M32
    else:
        h = (seed + _P5) & _M32
    h = (h + n) & _M32
    while i + 4 <= n:
        h = _rotl((h + int.from_bytes(data[i : i + 4], "little") * _P3) & _M32, 17) * _P4 & _M32
        i += 4
    while i < n:
        h = _rotl((h + data[i] * _P5) & _M32, 11) * _P1 & _M32
        i += 1
    h ^= h >> 15
    h = h * _P2 & _M32
    h ^= h >> 13
    h = h * _P3 & _M32
    return h ^ (h >> 16)


class _XxhashShim:
    """The part of the ``xxhash`` module kafka-python's old-Kafka LZ4 codec uses."""

    class _Digest:
        def __init__(self, data: bytes) -> None:
            self._h = xxh32_reference(bytes(data))

        def digest(self) -> bytes:
            return self._h.to_bytes(4, "big")

    xxh32 = _Digest


def install_xxhash_shim() -> None:
    """Let kafka-python read and write magic-0 LZ4 without the optional ``xxhash`` package."""
    import kafka.codec as kc

    if kc.xxhash is None:
        kc.xxhash = _XxhashShim
