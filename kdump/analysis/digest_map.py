"""Keys held as Kafka's log cleaner holds them, by digest, for ``kdump retention`` (its key census and cleaning
prediction), with the optional C accelerator ``kdump/_digests.c``.

Kafka's cleaner never holds a key: ``SkimpyOffsetMap`` (``storage/.../SkimpyOffsetMap.java``, Kafka 4.0) keeps
the key's MD5 digest (``hashAlgorithm`` "MD5", 16 bytes) and an offset in a fixed-size slot, and two keys of one
digest are one key to it (``put`` overwrites the slot whose digest is equal).  kdump does the same: a record is
an *entry* of 25 bytes -- its key's MD5 digest (zeros without a key), its offset (int64, little-endian) and a
flags byte (1: it has a key; 2: its value is null) -- and keys live in a *table* of 24-byte slots (digest and a
64-bit value; 24 zero bytes is an empty slot, as ``SkimpyOffsetMap.isEmpty``) in one ``bytearray``: 24 bytes a
key instead of a dict entry and a key object (~100 bytes and more).

:func:`batch_entries` makes the entries of a batch (in C for a v2 batch the accelerator accepts; else from the
decoded records, with ``hashlib``).  :class:`DigestCensus` counts the distinct keys, and those whose latest record
is a tombstone, in a table of a bounded size: past it the table's entries go to temporary files by a digest byte,
each counted alone at the end.  Without the accelerator (no C compiler, ``KDUMP_PURE_PYTHON``) :data:`DIGESTS`
is None and the callers keep their pure-Python dicts, which give the same answers.
"""

from __future__ import annotations

import hashlib
import os
import struct
from typing import IO, Any

from kdump.errors import DecompressionError, KdumpError
from kdump.storage import compression
from kdump.storage.record_batch import RECORD_BATCH_OVERHEAD, STREAMED_RECORDS_BYTES, DefaultRecordBatch

#: Bytes of an entry and of a table slot.
ENTRY = 25
SLOT = 24
#: The ``REVISION`` of ``kdump/_digests.c`` this module agrees with (3: ``batch_headers`` also reads a file
#: descriptor, an int, with pread).
DIGESTS_REVISION = 3
#: Files the census's spilled entries are spread over (by the digest's byte 8 + level).
BUCKETS = 64
#: How full the census lets its table get before it spills (linear probing stays short).
LOAD = 0.75


def _load() -> Any:
    if os.environ.get("KDUMP_PURE_PYTHON"):
        return None
    try:
        from kdump import _digests  # type: ignore[attr-defined]
    except ImportError:
        return None
    return _digests if getattr(_digests, "REVISION", None) == DIGESTS_REVISION else None


#: The C module, or None (the callers then use their pure-Python dicts).
DIGESTS = _load()

_OFFSET_FLAGS = struct.Struct("<qB")


def digest(key: bytes | memoryview) -> bytes:
    return hashlib.md5(key).digest()  # noqa: S324 - the hash Kafka's SkimpyOffsetMap keys by


def batch_entries(batch: Any, digests: bool = True) -> tuple[bytes, KdumpError | None]:
    """The entries of ``batch``'s records (``digests`` false: their digests left zero), and the error that
    stopped its records (None: every record), as ``batch.records()`` gives them: the records before a bad one
    of an uncompressed batch, none of a bad compressed one."""
    if DIGESTS is not None and type(batch) is DefaultRecordBatch:
        fast = _c_entries(batch, digests)
        if fast is not None:
            return fast, None
    out = []
    pack = _OFFSET_FLAGS.pack
    zero = bytes(16)
    try:
        for record in batch.records():
            key = record.key
            flags = (key is not None) | (record.value is None) << 1
            out.append((zero if key is None or not digests else digest(key)) + pack(record.offset, flags))
    except KdumpError as e:
        return b"".join(out), e
    return b"".join(out), None


def _c_entries(batch: DefaultRecordBatch, digests: bool) -> bytes | None:
    """The C accelerator's entries of a v2 batch, or None (the records then decide)."""
    count = batch.records_count
    if batch.size_in_bytes < RECORD_BATCH_OVERHEAD or count <= 0:
        return None
    start = batch.position + RECORD_BATCH_OVERHEAD
    end = batch.position + batch.size_in_bytes
    codec = batch.compression_type_id
    if codec == compression.NONE:
        return DIGESTS.key_digests(batch.buf, start, end, count, batch.base_offset, digests)  # type: ignore[no-any-return]
    if codec > compression.ZSTD:
        return None
    try:
        reader = compression.open_eager_decompressor(
            codec, batch.buf[start:end], magic=batch.magic, limit=batch.decompression_limit
        )
        plain = reader.read_up_to(STREAMED_RECORDS_BYTES + 1)
    except DecompressionError:
        return None
    if len(plain) > STREAMED_RECORDS_BYTES:
        return None
    return DIGESTS.key_digests(plain, 0, len(plain), count, batch.base_offset, digests)  # type: ignore[no-any-return]


def flags_of(entries: bytes) -> bytes:
    """The entries' flags bytes (``.count(3)``: keyed tombstones; ``.count(1)``: keyed values)."""
    return entries[ENTRY - 1 :: ENTRY]


class DigestTable:
    """A table of ``slots`` 24-byte slots (C accelerator only): mode 0 maps a digest to its latest offset (the
    cleaning's map), mode 1 to whether its latest record is a tombstone (the census)."""

    __slots__ = ("size", "table")

    def __init__(self, slots: int) -> None:
        self.table = bytearray(max(2, slots) * SLOT)
        self.size = 0

    def put(self, entries: bytes | memoryview, limit: int, mode: int, min_offset: int = -(1 << 63)) -> int:
        """Put ``entries``' keyed ones of offset >= ``min_offset`` while the table holds fewer than ``limit``
        keys; how many entries were used."""
        used, self.size = _put(self.table, entries, self.size, limit, mode, min_offset)
        return used  # type: ignore[no-any-return]

    def judge(
        self, entries: bytes, latest_offset: int, keep_tombstones: bool
    ) -> tuple[int, int, int, int, int]:
        """``Cleaner.shouldRetainRecord`` for each entry against the offsets of mode 0: (kept, tombstones
        kept, superseded, tombstones removed, without a key)."""
        return DIGESTS.table_judge(self.table, entries, latest_offset, keep_tombstones)  # type: ignore[no-any-return]


def _put(
    table: bytearray, entries: bytes | memoryview, size: int, limit: int, mode: int, min_offset: int
) -> Any:
    return DIGESTS.table_put(table, entries, size, limit, mode, min_offset)


class DigestCensus:
    """The distinct keys of a partition, and those whose latest record is a tombstone, from its entries in
    record order (:meth:`add`), in a table of about ``budget`` bytes; past it the table's entries are written to
    :data:`BUCKETS` temporary files by the digest's byte 8, and at the end each file is counted alone (latest
    wins again: a file's entries are in the order they were seen), split again by the next byte when it does
    not fit."""

    __slots__ = ("_files", "limit", "size", "table")

    def __init__(self, budget: int) -> None:
        slots = max(64, budget // SLOT)
        self.table = bytearray(slots * SLOT)
        self.limit = int(slots * LOAD)
        self.size = 0
        self._files: list[IO[bytes]] | None = None

    def add(self, entries: bytes) -> None:
        view = memoryview(entries)
        while True:
            used, self.size = _put(self.table, view, self.size, self.limit, 1, -(1 << 63))
            if used * ENTRY >= len(view):
                return
            view = view[used * ENTRY :]
            self._files = self._spill(self._files, 0)

    def _spill(self, files: list[IO[bytes]] | None, level: int) -> list[IO[bytes]]:
        if files is None:
            import tempfile  # only for a partition of this many keys

            files = [tempfile.TemporaryFile(prefix="kdump-keys-") for _ in range(BUCKETS)]
        for f, part in zip(files, DIGESTS.table_drain(self.table, BUCKETS, level), strict=True):
            if part:
                f.write(part)
        self.size = 0
        return files

    def counts(self) -> tuple[int, int]:
        """(distinct keys, keys whose latest record is a tombstone)."""
        if self._files is None:
            return DIGESTS.table_count(self.table, True)  # type: ignore[no-any-return]
        files, self._files = self._spill(self._files, 0), None
        distinct = tombstones = 0
        for f in files:
            d, t = self._count(f, 1)
            distinct += d
            tombstones += t
        return distinct, tombstones

    def _count(self, f: IO[bytes], level: int) -> tuple[int, int]:
        """Count one bucket file (then closed) in a table sized for it (at most the budget's), split by the
        digest's next byte when its keys do not fit."""
        split: list[IO[bytes]] | None = None
        whole = self.table
        with f:
            entries = f.seek(0, os.SEEK_END) // ENTRY
            f.seek(0)
            slots = min(len(whole) // SLOT, max(64, int(entries / LOAD) + 1))
            self.table = whole if slots == len(whole) // SLOT else bytearray(slots * SLOT)
            limit, self.size = min(self.limit, int(slots * LOAD)), 0
            try:
                while chunk := f.read(ENTRY << 16):
                    view = memoryview(chunk)
                    while True:
                        used, self.size = _put(self.table, view, self.size, limit, 1, -(1 << 63))
                        if used * ENTRY >= len(view):
                            break
                        view = view[used * ENTRY :]
                        split = self._spill(split, min(level, 7))  # level 8: 64**8 tables of keys, never
                if split is None:
                    return DIGESTS.table_count(self.table, True)  # type: ignore[no-any-return]
                split = self._spill(split, min(level, 7))
            finally:
                self.table, self.size = whole, 0
        distinct = tombstones = 0
        for part in split:
            d, t = self._count(part, level + 1)
            distinct += d
            tombstones += t
        return distinct, tombstones
