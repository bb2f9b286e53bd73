"""``kdump.storage.crc_combine``: the CRC of a byte range from prefix CRCs and GF(2) shifts equals the CRC summed
directly by the ``crc32c`` package (CRC-32C) and by ``zlib.crc32`` (CRC-32), on random data and ranges."""

from __future__ import annotations

import mmap
import random
import zlib
from pathlib import Path

import crc32c as crc32c_package
import pytest

from kdump.storage.crc_combine import CRC32, CRC32C, CrcArithmetic, PrefixCrcs, multiply

ORACLES = {"CRC-32C": crc32c_package.crc32c, "CRC-32": zlib.crc32}
ARITHMETIC = [CRC32C, CRC32]


def oracle(arithmetic: CrcArithmetic, data: bytes, value: int = 0) -> int:
    return ORACLES[arithmetic.name](data, value)


def test_the_polynomials_are_the_ones_of_the_oracles() -> None:
    assert CRC32C.crc(b"123456789") == 0xE3069283 == oracle(CRC32C, b"123456789")  # the CRC-32C check value
    assert CRC32.crc(b"123456789") == 0xCBF43926 == oracle(CRC32, b"123456789")  # the CRC-32 check value


@pytest.mark.parametrize("arithmetic", ARITHMETIC, ids=lambda a: a.name)
def test_multiply_is_a_commutative_ring_product_with_one(arithmetic: CrcArithmetic) -> None:
    rng = random.Random(1)
    one = 1 << 31  # x^0, reflected
    for _ in range(200):
        a, b, c = (rng.getrandbits(32) for _ in range(3))
        assert multiply(a, one, arithmetic.poly) == a == multiply(one, a, arithmetic.poly)
        assert multiply(a, b, arithmetic.poly) == multiply(b, a, arithmetic.poly)
        assert multiply(a, b ^ c, arithmetic.poly) == multiply(a, b, arithmetic.poly) ^ multiply(
            a, c, arithmetic.poly
        )
        assert multiply(multiply(a, b, arithmetic.poly), c, arithmetic.poly) == multiply(
            a, multiply(b, c, arithmetic.poly), arithmetic.poly
        )


@pytest.mark.parametrize("arithmetic", ARITHMETIC, ids=lambda a: a.name)
def test_shift_is_appending_zero_bytes(arithmetic: CrcArithmetic) -> None:
    """Appending n zero bytes to data with CRC c gives shift(c, n) ^ crc(n zeros): lengths 0..several MiB."""
    rng = random.Random(2)
    lengths = [0, 1, 2, 3, 7, 8, 255, 256, 257, 4095, 4096, 65535, 65536, 65537, 1 << 20, (5 << 20) + 3]
    lengths += [rng.randrange(1, 3 << 20) for _ in range(6)]
    for n in lengths:
        zeros = bytes(n)
        for c in (0, 0xFFFFFFFF, rng.getrandbits(32)):
            assert arithmetic.shift(c, n) == oracle(arithmetic, zeros, c) ^ oracle(arithmetic, zeros), (n, c)


@pytest.mark.parametrize("arithmetic", ARITHMETIC, ids=lambda a: a.name)
def test_shifts_compose_up_to_2_gib(arithmetic: CrcArithmetic) -> None:
    """Shifts beyond what can be summed here: shift(shift(c, a), b) == shift(c, a + b), up to 2^31 - 1 bytes."""
    rng = random.Random(3)
    for _ in range(100):
        c = rng.getrandbits(32)
        a, b = rng.randrange(1 << 31), rng.randrange(1 << 31)
        assert arithmetic.shift(arithmetic.shift(c, a), b) == arithmetic.shift(c, a + b)
    assert arithmetic.shift(0, (1 << 31) - 1) == 0
    with pytest.raises(ValueError):
        arithmetic.shift(1, -1)


@pytest.mark.parametrize("arithmetic", ARITHMETIC, ids=lambda a: a.name)
def test_combine_is_the_crc_of_the_concatenation(arithmetic: CrcArithmetic) -> None:
    rng = random.Random(4)
    for _ in range(60):
        a = rng.randbytes(rng.choice((0, 1, 5, rng.randrange(100_000))))
        b = rng.randbytes(rng.choice((0, 1, 5, rng.randrange(100_000))))
        assert arithmetic.combine(oracle(arithmetic, a), oracle(arithmetic, b), len(b)) == oracle(
            arithmetic, a + b
        )


def _ranges(rng: random.Random, origin: int, end: int, block: int) -> list[tuple[int, int]]:
    """Random ranges, and the edges: empty ones, the whole span, block boundaries and one byte either side."""
    edges = {origin, end, min(end, origin + block), max(origin, end - 1), min(end, origin + 1)}
    for k in range(1, 4):
        for d in (-1, 0, 1):
            at = origin + k * block + d
            if origin <= at <= end:
                edges.add(at)
    edges_sorted = sorted(edges)
    out = [(a, b) for a in edges_sorted for b in edges_sorted if a <= b]
    for _ in range(300):
        a = rng.randrange(origin, end + 1)
        b = rng.randrange(a, end + 1)
        out.append((a, b))
    for length in (0, 1, block - 1, block, block + 1, 3 * block, (end - origin) // 2):
        if 0 <= length <= end - origin:
            a = rng.randrange(origin, end - length + 1)
            out.append((a, a + length))
    return out


@pytest.mark.parametrize("arithmetic", ARITHMETIC, ids=lambda a: a.name)
@pytest.mark.parametrize("block", [1, 7, 4096, 65536])
def test_range_crcs_from_prefixes(arithmetic: CrcArithmetic, block: int) -> None:
    rng = random.Random(block)
    size = 200_000 if block < 4096 else (4 << 20) + 123
    data = rng.randbytes(size)
    origin = rng.randrange(1000)
    end = size - rng.randrange(1000)
    prefixes = PrefixCrcs(arithmetic, data, origin, end, block)
    for a, b in _ranges(rng, origin, end, block):
        assert prefixes.crc(a, b) == oracle(arithmetic, data[a:b]), (a, b)


@pytest.mark.parametrize("arithmetic", ARITHMETIC, ids=lambda a: a.name)
def test_range_crcs_from_prefixes_in_any_order(arithmetic: CrcArithmetic) -> None:
    """The table grows as far as a range needs, whatever order the ranges come in (far ones first, then near)."""
    rng = random.Random(5)
    data = rng.randbytes(1 << 20)
    prefixes = PrefixCrcs(arithmetic, data, 0, len(data), 4096)
    ranges = [(len(data) - 10, len(data)), (0, 0), (5, 100), (4096, 8192), (0, len(data))]
    ranges += [(a, rng.randrange(a, len(data) + 1)) for a in (rng.randrange(len(data)) for _ in range(100))]
    for a, b in ranges:
        assert prefixes.crc(a, b) == oracle(arithmetic, data[a:b]), (a, b)


def test_outside_the_span_is_refused() -> None:
    prefixes = PrefixCrcs(CRC32C, bytes(100), 10, 90, 8)
    for a, b in ((9, 20), (20, 91), (30, 20)):
        with pytest.raises(ValueError):
            prefixes.crc(a, b)
    with pytest.raises(ValueError):
        PrefixCrcs(CRC32C, bytes(100), 0, 100, 0)


@pytest.mark.parametrize("arithmetic", ARITHMETIC, ids=lambda a: a.name)
def test_range_crcs_of_a_memory_map(arithmetic: CrcArithmetic, tmp_path: Path) -> None:
    """On a map (whose pages are dropped after reading), the same CRCs; the map stays readable."""
    rng = random.Random(6)
    data = rng.randbytes((3 << 20) + 5)
    path = tmp_path / "data"
    path.write_bytes(data)
    with open(path, "rb") as f, mmap.mmap(f.fileno(), 0, access=mmap.ACCESS_READ) as mm:
        prefixes = PrefixCrcs(arithmetic, mm, 17, len(data), 65536)
        for a, b in _ranges(rng, 17, len(data), 65536)[:200]:
            assert prefixes.crc(a, b) == oracle(arithmetic, data[a:b]), (a, b)
        assert mm[:] == data
