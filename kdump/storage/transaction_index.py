"""The transaction index (``<base offset>.txnindex``): Kafka's ``TransactionIndex`` and ``AbortedTxn``.

The file lists the *aborted* transactions whose ABORT marker lies in the segment, in increasing marker offset,
as 34-byte records with no header and no preallocation::

    version int16 (0) | producerId int64 | firstOffset int64 | lastOffset int64 | lastStableOffset int64

Kafka reads whole records while at least 34 bytes remain and silently ignores a shorter tail.  Its
``AbortedTxn.version()`` reads only the *first* byte of the 2-byte version field, as a signed byte, and any
value > 0 stops the read with "Unexpected aborted transaction version ...".  Kafka treats a missing file as an
empty index (the file is only created when something is appended); so does this module.
"""

from __future__ import annotations

import mmap
import os
import struct
from collections.abc import Iterator
from typing import NamedTuple

from kdump.errors import CorruptIndexError, KdumpError
from kdump.storage import object_store, sigbus_guard
from kdump.storage.byte_source import ByteSource, LocalFile, location_of, read_all
from kdump.storage.naming import java_absolute_path, offset_from_file
from kdump.storage.object_store import is_url

__all__ = ["ENTRY_SIZE", "AbortedTxn", "TransactionIndex", "TxnIndexSearchResult"]

ENTRY_SIZE = 34
"""Bytes per aborted-transaction record (Kafka's ``AbortedTxn.TOTAL_SIZE``)."""

CURRENT_VERSION = 0

_RECORD = struct.Struct(">bxqqqq")


class AbortedTxn(NamedTuple):
    """One aborted transaction (Kafka's ``AbortedTxn``).

    ``version`` is what Kafka reports: the first byte of the version field as a signed byte (the second byte is
    not looked at).  ``last_offset`` is the offset of the ABORT marker; ``last_stable_offset`` the LSO when the
    transaction completed.
    """

    version: int
    producer_id: int
    first_offset: int
    last_offset: int
    last_stable_offset: int

    def __str__(self) -> str:
        """Kafka's ``AbortedTxn.toString`` (used in its sanity-check message)."""
        return (
            f"AbortedTxn(version={self.version}, producerId={self.producer_id}, firstOffset={self.first_offset}, "
            f"lastOffset={self.last_offset}, lastStableOffset={self.last_stable_offset})"
        )

    def encode(self) -> bytes:
        """The 34 bytes Kafka writes for this entry (``version`` goes into the first byte, the second is 0)."""
        return _RECORD.pack(
            self.version, self.producer_id, self.first_offset, self.last_offset, self.last_stable_offset
        )


class TxnIndexSearchResult(NamedTuple):
    """Kafka's ``TxnIndexSearchResult``: the matching aborted transactions, and whether the search may stop
    (an entry's last stable offset reached the upper bound, so later segments cannot contribute)."""

    aborted_transactions: list[AbortedTxn]
    is_complete: bool


def encode_transaction_index(entries: list[AbortedTxn] | tuple[AbortedTxn, ...]) -> bytes:
    """The bytes of a ``.txnindex`` holding ``entries`` in the given order."""
    return b"".join(entry.encode() for entry in entries)


class TransactionIndex:
    """A read-only view of a ``.txnindex`` file with Kafka's ``TransactionIndex`` semantics.

    ``start_offset`` is the segment base offset (from the file name unless given).  ``entry_count`` counts the
    whole 34-byte records; ``partial_tail_length`` is the length of an ignored incomplete record at the end
    (0 when there is none).  Iteration decodes lazily and raises :class:`KdumpError` (Kafka:
    ``KafkaException``) at the first record whose version byte is > 0, like Kafka's iterator.
    """

    ENTRY_SIZE = ENTRY_SIZE

    def __init__(self, path: str | os.PathLike[str], start_offset: int | None = None) -> None:
        if start_offset is None:
            start_offset = offset_from_file(path)
        try:
            if is_url(path):  # an object in a store, read whole; a missing one is empty, as a missing file
                exists = object_store.exists(os.fspath(path))
                data: bytes | mmap.mmap = read_all(path) if exists else b""
            else:
                data = sigbus_guard.map_file(os.fspath(path))[0]
                exists = True
        except FileNotFoundError:
            data, exists = b"", False
        self._init(data, start_offset, os.fspath(path), exists)

    @classmethod
    def open(
        cls, source: str | os.PathLike[str] | ByteSource, start_offset: int | None = None
    ) -> TransactionIndex:
        """The transaction index of any :class:`~kdump.storage.byte_source.ByteSource` (or local path): a local
        file is mapped as ``TransactionIndex(path)`` does, any other source read whole."""
        if isinstance(source, (str, os.PathLike)) or isinstance(source, LocalFile):
            return cls(location_of(source), start_offset)
        if start_offset is None:
            start_offset = offset_from_file(source.location)
        return cls.from_bytes(read_all(source), start_offset, source.location)

    @classmethod
    def from_bytes(
        cls, data: bytes, start_offset: int, path: str | os.PathLike[str] | None = None
    ) -> TransactionIndex:
        """A transaction index over ``data`` (the file's whole content); ``path`` is only used in messages."""
        index = cls.__new__(cls)
        index._init(bytes(data), start_offset, None if path is None else os.fspath(path), True)
        return index

    def _init(self, data: bytes | mmap.mmap, start_offset: int, path: str | None, exists: bool) -> None:
        self._data = data
        self.path: str | None = path
        self.start_offset: int = start_offset
        self.exists: bool = exists
        """False when the file does not exist (Kafka then sees an empty index)."""
        self.length: int = len(data)
        self.entry_count: int = len(data) // ENTRY_SIZE
        self.partial_tail_length: int = len(data) % ENTRY_SIZE
        """Length of the incomplete record at the end that Kafka silently ignores (0 if none)."""

    @property
    def absolute_path(self) -> str:
        """The path as Kafka's messages print it (``File.getAbsolutePath``)."""
        return java_absolute_path(self.path) if self.path is not None else "<memory>"

    def __len__(self) -> int:
        return self.entry_count

    def __iter__(self) -> Iterator[AbortedTxn]:
        """Whole records in file order; raises at a record with a version byte > 0 (Kafka's iterator)."""
        for i in range(self.entry_count):
            entry = AbortedTxn._make(_RECORD.unpack_from(self._data, i * ENTRY_SIZE))
            if entry.version > CURRENT_VERSION:
                raise KdumpError(
                    f"Unexpected aborted transaction version {entry.version} in transaction index "
                    f"{self.absolute_path}, current version is {CURRENT_VERSION}",
                    path=self.path,
                    position=i * ENTRY_SIZE,
                )
            yield entry

    def aborted_txns(self) -> list[AbortedTxn]:
        """All entries (Kafka's ``allAbortedTxns``): fails as a whole, before anything is returned, if any
        record has a version byte > 0 -- which is why DumpLogSegments prints nothing for such a file."""
        return list(self)

    def collect_aborted_txns(self, fetch_offset: int, upper_bound_offset: int) -> TxnIndexSearchResult:
        """Aborted transactions overlapping the fetch range [``fetch_offset``, ``upper_bound_offset``)
        (Kafka's ``collectAbortedTxns``): entries with last offset >= fetch offset and first offset < upper
        bound.  The scan stops at the first entry whose last stable offset is >= the upper bound and reports
        the result as complete."""
        found: list[AbortedTxn] = []
        for entry in self:
            if entry.last_offset >= fetch_offset and entry.first_offset < upper_bound_offset:
                found.append(entry)
            if entry.last_stable_offset >= upper_bound_offset:
                return TxnIndexSearchResult(found, True)
        return TxnIndexSearchResult(found, False)

    def sanity_check(self, base_offset: int | None = None) -> None:
        """Kafka's ``TransactionIndex.sanityCheck`` (the one index check brokers still run at startup): every
        entry's last offset must be >= the segment's start offset (``base_offset``, by default the index's own
        ``start_offset``).  Raises :class:`CorruptIndexError` with Kafka's text."""
        start = self.start_offset if base_offset is None else base_offset
        for i, entry in enumerate(self):
            if entry.last_offset < start:
                raise CorruptIndexError(
                    f"Last offset of aborted transaction {entry} in index {self.absolute_path} is less than "
                    f"start offset {start}",
                    path=self.path,
                    position=i * ENTRY_SIZE,
                )

    def __repr__(self) -> str:
        return (
            f"TransactionIndex(path={self.path!r}, start_offset={self.start_offset}, "
            f"entries={self.entry_count}, partial_tail_length={self.partial_tail_length})"
        )
