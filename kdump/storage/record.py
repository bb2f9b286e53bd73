"""A single record as Kafka's ``Record`` interface presents it, for every message format.

One class serves v2 records (``DefaultRecord``) and legacy v0/v1 messages (``LegacyRecord``) so that every
consumer of the storage core — the text renderer, JSON output, Spark — handles one shape.  Legacy messages also
carry their own CRC and validity, which Kafka prints per record.
"""

from __future__ import annotations


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


class Record:
    """One record.

    ``key_size``/``value_size`` are what Kafka prints as ``keySize``/``valueSize`` (-1 for null).  ``sequence`` is
    the producer sequence of this record (-1 when the batch has none; always -1 for legacy messages).
    ``crc``/``valid`` are set for legacy messages only (None for v2 records, whose CRC lives in the batch).
    ``position`` is the byte position of the record's start: in the segment for uncompressed v2 records and
    uncompressed legacy messages, in the decompressed stream for records of a compressed batch.
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
        headers: tuple[Header, ...] = (),
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
