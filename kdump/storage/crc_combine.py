"""The CRC of any byte range of a file from CRCs of its prefixes, for CRC-32C and CRC-32 (GF(2) arithmetic).

A CRC is linear: for the standard CRCs (initial value and final xor all ones, bits reflected),

    crc(A + B) = shift(crc(A), len(B)) ^ crc(B)

where ``shift(c, n)`` multiplies ``c`` by x^(8n) modulo the CRC's polynomial (zlib's ``crc32_combine``).  So the
CRC of ``buf[a:b]`` is ``crc(buf[o:b]) ^ shift(crc(buf[o:a]), b - a)`` for any origin ``o <= a``; with the
CRCs of the prefixes ``buf[o:o + k * block]`` stored (one int per block, computed once, in one pass), the CRC
of any range costs the CRCs of two partial blocks plus one shift, whatever the range's length.
:mod:`kdump.analysis.salvage` checks the CRC of every candidate batch position this way when it resynchronises
on a damaged segment (a false candidate in damaged bytes often declares a size of tens of MiB).

Polynomials are held bit-reflected, as the CRCs compute them: bit 31 is the coefficient of x^0, bit 0 that of
x^31.  A shift by ``n`` bytes multiplies by the precomputed x^(8 * 2^k) for each bit k of ``n``; each of those
multiplications is four lookups in byte tables built the first time that power is needed (linear maps in
GF(2)), so a shift costs microseconds.
"""

from __future__ import annotations

import mmap
import zlib
from array import array
from collections.abc import Callable

from kdump.storage.checksum import crc32c
from kdump.storage.resident_pages import drop_pages

__all__ = ["CRC32", "CRC32C", "CrcArithmetic", "PrefixCrcs"]

#: Bytes summed between two drops of the pages read (a prefix pass over a map keeps the resident set flat).
_DROP_EVERY = 8 << 20
#: What the kernel maps around a page fault in a file map (Linux's fault_around_bytes).
_FAULT_AROUND = 64 << 10


def multiply(a: int, b: int, poly: int) -> int:
    """``a * b`` modulo the polynomial, all three bit-reflected (``poly`` without its x^32 term)."""
    product = 0
    bit = 1 << 31  # x^0 of a, then x^1, ...
    while a:
        if a & bit:
            product ^= b
            a ^= bit
        bit >>= 1
        b = (b >> 1) ^ poly if b & 1 else b >> 1  # b * x
    return product


class CrcArithmetic:
    """Shifting and combining the CRCs of one polynomial (``function(data, value=0)`` computes the CRC)."""

    def __init__(self, name: str, poly: int, function: Callable[..., int]) -> None:
        self.name = name
        self.poly = poly
        self.function = function
        #: x^(8 * 2^k) modulo the polynomial, k = 0, 1, ...: x^8 is bit 23 in the reflected form.
        self._powers = [1 << 23]
        #: The byte tables of the multiplication by _powers[k] (1024 ints: four tables of 256), built lazily.
        self._tables: dict[int, list[int]] = {}

    def crc(self, data: object, value: int = 0) -> int:
        return self.function(data, value)

    def _table(self, k: int) -> list[int]:
        table = self._tables.get(k)
        if table is None:
            while len(self._powers) <= k:
                last = self._powers[-1]
                self._powers.append(multiply(last, last, self.poly))
            power = self._powers[k]
            table = [0] * 1024
            for j in range(4):  # the byte of the multiplicand: bits 8j..8j+7
                base = 256 * j
                for i in range(8):
                    term = multiply(1 << (8 * j + i), power, self.poly)
                    step = 1 << i
                    for v in range(step):
                        table[base + step + v] = table[base + v] ^ term
            self._tables[k] = table
        return table

    def shift(self, crc: int, n: int) -> int:
        """``crc`` multiplied by x^(8n): what it becomes when ``n`` zero bytes are summed after it, less the CRC
        of those zero bytes alone (the linear part of appending them)."""
        if n < 0:
            raise ValueError(f"cannot shift a CRC by {n} bytes")
        k = 0
        while n:
            if n & 1:
                t = self._table(k)
                crc = (
                    t[crc & 0xFF]
                    ^ t[256 + ((crc >> 8) & 0xFF)]
                    ^ t[512 + ((crc >> 16) & 0xFF)]
                    ^ t[768 + (crc >> 24)]
                )
            n >>= 1
            k += 1
        return crc

    def combine(self, crc1: int, crc2: int, length2: int) -> int:
        """The CRC of ``A + B`` from ``crc1 = crc(A)``, ``crc2 = crc(B)`` and ``length2 = len(B)``."""
        return self.shift(crc1, length2) ^ crc2


#: CRC-32C (Castagnoli), v2 record batches.
CRC32C = CrcArithmetic("CRC-32C", 0x82F63B78, crc32c)
#: CRC-32 (zlib's), v0/v1 messages.
CRC32 = CrcArithmetic("CRC-32", 0xEDB88320, zlib.crc32)


class PrefixCrcs:
    """CRCs of ranges of ``buf[origin:end]`` from the CRCs of its prefixes at every ``block`` bytes.

    The prefix CRCs are computed the first time a range needs them, in one forward pass as far as that range
    ends; one 32-bit int per block is kept.  The pages of a memory map that are read (by the pass, and for the
    partial blocks at the ends of a range) are dropped from the resident set again, so that ranges ending
    anywhere in a big file do not make it resident.  :meth:`crc` of ``[start, stop)`` with ``origin <= start <= stop <= end`` equals ``crc(buf[start:stop])``.
    """

    def __init__(
        self, arithmetic: CrcArithmetic, buf: bytes, origin: int, end: int, block: int = 64 << 10
    ) -> None:
        if block <= 0:
            raise ValueError(f"block of {block} bytes")
        self.arithmetic = arithmetic
        self.buf = buf
        self.origin = origin
        self.end = end
        self.block = block
        self._map = buf if isinstance(buf, mmap.mmap) else None
        #: _prefixes[i]: the CRC of buf[origin : origin + i * block]
        self._prefixes = array("I", [0])

    def _prefix(self, position: int) -> int:
        """The CRC of ``buf[origin:position]``."""
        function = self.arithmetic.function
        index, within = divmod(position - self.origin, self.block)
        prefixes = self._prefixes
        if index >= len(prefixes):
            self._extend(index)
        at = self.origin + index * self.block
        crc = prefixes[index]
        if not within:
            return crc
        with memoryview(self.buf) as view:  # no view outlives the call (a map with views cannot be closed)
            crc = function(view[at : at + within], crc)
        if self._map is not None:
            # the kernel maps the pages around a page read (fault-around, 64 KiB): drop those too
            first = at // _FAULT_AROUND * _FAULT_AROUND
            last = min(len(self._map), -(-(at + within) // _FAULT_AROUND) * _FAULT_AROUND)
            if not drop_pages(self._map, first, last):
                self._map = None
        return crc

    def _extend(self, index: int) -> None:
        """Prefix CRCs up to ``_prefixes[index]``, from the last one known."""
        function = self.arithmetic.function
        prefixes = self._prefixes
        block = self.block
        at = self.origin + (len(prefixes) - 1) * block
        crc = prefixes[-1]
        dropped = at
        with memoryview(self.buf) as view:
            while len(prefixes) <= index:
                crc = function(view[at : at + block], crc)
                at += block
                prefixes.append(crc)
                if self._map is not None and at - dropped >= _DROP_EVERY:
                    if not drop_pages(self._map, dropped, at):
                        self._map = None
                    dropped = at
        if self._map is not None and at > dropped:
            drop_pages(self._map, dropped, at)

    def crc(self, start: int, stop: int) -> int:
        """The CRC of ``buf[start:stop]``."""
        if not self.origin <= start <= stop <= self.end:
            raise ValueError(f"range [{start}, {stop}) is not within [{self.origin}, {self.end})")
        return self._prefix(stop) ^ self.arithmetic.shift(self._prefix(start), stop - start)
