"""A single record as Kafka's ``Record`` interface presents it, for every message format.

One class serves v2 records (``DefaultRecord``) and legacy v0/v1 messages (``LegacyRecord``) so that every
consumer of the storage core — the text renderer, JSON output, Spark — handles one shape.  Legacy messages also
carry their own CRC and validity, which Kafka prints per record.
"""

from __future__ import annotations

from collections.abc import Iterator
from itertools import islice
from typing import Any

from kdump.errors import KdumpError
from kdump.storage.varint import read_varint

#: Records with more headers than this keep them encoded (:class:`LazyHeaders`) instead of one object each:
#: memory stays flat for a record of millions of headers.
MAX_EAGER_HEADERS = 4096
#: The most headers of one record that kdump's JSON output and Spark rows hold (a list of objects each); a record
#: with more stops with one clear line there (the Kafka text prints them all, streamed).
MAX_OBJECT_HEADERS = 100_000


def check_object_headers(record: Record) -> None:
    """KdumpError when ``record`` has more headers than :data:`MAX_OBJECT_HEADERS`."""
    if len(record.headers) > MAX_OBJECT_HEADERS:
        raise KdumpError(
            f"the record at offset {record.offset} has {len(record.headers)} headers, more than the "
            f"{MAX_OBJECT_HEADERS} kdump puts in a JSON object or a Spark row (the Kafka text prints them all)",
            position=record.position if record.position >= 0 else None,
        )


class Header:
    """A record header: the key as raw bytes (Kafka decodes it as UTF-8) and a value that may be null."""

    __slots__ = ("key", "value")

    def __init__(self, key: bytes, value: bytes | None) -> None:
        self.key = key
        self.value = value

    def __repr__(self) -> str:
        return f"Header(key={self.key!r}, value={self.value!r})"

    def __eq__(self, other: object) -> bool:
        return isinstance(other, Header) and self.key == other.key and self.value == other.value

    def __hash__(self) -> int:
        return hash((self.key, self.value))


class LazyHeaders:
    """The headers of a record that has more than :data:`MAX_EAGER_HEADERS`, kept as their encoded bytes
    (already checked by the decoder) and decoded one at a time when iterated.  Behaves as the tuple of
    :class:`Header` it stands for: ``len``, truth, iteration, indexing, equality."""

    __slots__ = ("_buf", "_start", "_end", "_count")

    def __init__(self, buf: Any, start: int, end: int, count: int) -> None:
        self._buf = buf
        self._start = start
        self._end = end
        self._count = count

    def __len__(self) -> int:
        return self._count

    def __bool__(self) -> bool:
        return self._count > 0

    def _entries(self) -> Iterator[tuple[int, int, int, int]]:
        """``(key start, key end, value start, value end)`` of each header; value start -1 for a null value."""
        buf, pos, end = self._buf, self._start, self._end
        for _ in range(self._count):
            size, pos = read_varint(buf, pos, end)
            key_start = pos
            pos += size
            key_end = pos
            size, pos = read_varint(buf, pos, end)
            if size < 0:
                yield key_start, key_end, -1, -1
            else:
                yield key_start, key_end, pos, pos + size
                pos += size

    def keys(self) -> Iterator[bytes]:
        buf = self._buf
        for ks, ke, _, _ in self._entries():
            yield bytes(buf[ks:ke])

    def __iter__(self) -> Iterator[Header]:
        buf = self._buf
        for ks, ke, vs, ve in self._entries():
            yield Header(bytes(buf[ks:ke]), None if vs < 0 else bytes(buf[vs:ve]))

    def __getitem__(self, i: int) -> Header:
        if i < 0:
            i += self._count
        if not 0 <= i < self._count:
            raise IndexError("header index out of range")
        return next(islice(iter(self), i, None))

    def __eq__(self, other: object) -> bool:
        if isinstance(other, (LazyHeaders, tuple, list)):
            return len(self) == len(other) and all(a == b for a, b in zip(self, other, strict=True))
        return NotImplemented

    __hash__ = None  # type: ignore[assignment]

    def __repr__(self) -> str:
        return f"LazyHeaders({self._count} headers)"


class Record:
    """One record.

    ``key_size``/``value_size`` are what Kafka prints as ``keySize``/``valueSize`` (-1 for null).  ``sequence`` is
    the producer sequence of this record (-1 when the batch has none; always -1 for legacy messages).
    ``crc``/``valid`` are set for legacy messages only (None for v2 records, whose CRC lives in the batch).
    ``position`` is the byte position of the record's start: in the segment for uncompressed v2 records and
    uncompressed legacy messages, in the decompressed stream for records of a compressed batch.
    ``key``/``value`` are ``bytes``, except from ``records(views=True)``: then a key or value of
    ``record_batch.MAX_EAGER_BYTES`` or more in an uncompressed batch is a read-only ``memoryview`` of the segment.
    """

    __slots__ = (
        "offset",
        "timestamp",
        "sequence",
        "key",
        "value",
        "headers",
        "attributes",
        "key_size",
        "value_size",
        "magic",
        "crc",
        "valid",
        "position",
        "size_in_bytes",
    )

    def __init__(
        self,
        offset: int,
        timestamp: int,
        sequence: int,
        key: bytes | None,
        value: bytes | None,
        headers: tuple[Header, ...] | LazyHeaders = (),
        attributes: int = 0,
        key_size: int | None = None,
        value_size: int | None = None,
        magic: int = 2,
        crc: int | None = None,
        valid: bool | None = None,
        position: int = -1,
        size_in_bytes: int = 0,
    ) -> None:
        self.offset = offset
        self.timestamp = timestamp
        self.sequence = sequence
        self.key = key
        self.value = value
        self.headers = headers
        self.attributes = attributes
        self.key_size = key_size if key_size is not None else (-1 if key is None else len(key))
        self.value_size = value_size if value_size is not None else (-1 if value is None else len(value))
        self.magic = magic
        self.crc = crc
        self.valid = valid
        self.position = position
        self.size_in_bytes = size_in_bytes

    @property
    def is_legacy(self) -> bool:
        return self.magic < 2

    def __repr__(self) -> str:
        return (
            f"Record(offset={self.offset}, timestamp={self.timestamp}, key={self.key!r}, "
            f"value={self.value!r}, headers={self.headers!r})"
        )
