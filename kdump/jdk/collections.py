"""Java and Scala collection semantics that decide the order of Kafka's output: ``String.hashCode``, Java
``int`` wrap-around, and the iteration order of Scala 2.13's ``mutable.HashMap``."""

from __future__ import annotations


def to_int32(v: int) -> int:
    """Java ``int`` arithmetic: keep the low 32 bits, signed."""
    v &= 0xFFFFFFFF
    return v - 0x100000000 if v >= 0x80000000 else v


def java_string_hash(s: str) -> int:
    """Java's ``String.hashCode`` (over UTF-16 code units)."""
    h = 0
    data = s.encode("utf-16-be", "surrogatepass")
    for i in range(0, len(data), 2):
        h = (31 * h + int.from_bytes(data[i : i + 2], "big")) & 0xFFFFFFFF
    return to_int32(h)


def improve_hash(h: int) -> int:
    """Scala 2.13's ``HashMap``/``HashSet`` ``improveHash``: ``h ^ (h >>> 16)``."""
    return to_int32(h ^ ((h & 0xFFFFFFFF) >> 16))


def scala_hashmap_order(keys: list[str]) -> list[str]:
    """Iteration order of a Scala 2.13 ``mutable.HashMap`` filled with ``keys`` in this order.

    Kafka's tool keeps its per-file summaries in such maps, so this decides the order of the groups.  Buckets
    are visited in index order (improved ``String.hashCode`` masked by the table size, which starts at 16 and
    doubles before it would reach 3/4 full); inside a bucket entries are ordered by improved hash.
    """
    table = 16
    for n in range(1, len(keys) + 1):
        while n >= int(table * 0.75):
            table *= 2
    hashes = {k: improve_hash(java_string_hash(k)) for k in keys}
    position = {k: i for i, k in enumerate(keys)}
    return sorted(keys, key=lambda k: (hashes[k] & (table - 1), hashes[k], position[k]))
