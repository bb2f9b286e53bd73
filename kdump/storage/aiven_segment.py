"""Segments as Aiven's tiered-storage plugin for Kafka stores them (Aiven-Open/tiered-storage-for-apache-kafka,
the most used open-source RemoteStorageManager): names, the ``.rsm-manifest``, and the ``.log`` read back
through its chunk index.

Per segment (``ObjectKeyFactory.mainPath``): ``<prefix><topic>-<topic id>/<partition>/<start offset, 20
digits>-<segment id>`` with the suffixes ``.log`` (the segment, cut into chunks, each transformed), ``.indexes``
(the offset, time, producer-snapshot, leader-epoch and transaction indexes one after the other, each at the
manifest's position) and ``.rsm-manifest`` (``SegmentManifestV1`` as JSON, ``"version": "1"``):

* ``chunkIndex``: ``{"type": "fixed", originalChunkSize, originalFileSize, transformedChunkSize,
  finalTransformedChunkSize}`` (``FixedSizeChunkIndex``: every transformed chunk the same size but the last) or
  ``{"type": "variable", originalChunkSize, originalFileSize, transformedChunks}`` (``VariableSizeChunkIndex``;
  the sizes as ``TransformedChunksSerializer`` writes them: base64 of a zstd frame of ``ChunkSizesBinaryCodec``'s
  bytes -- count, base, bytes per value, the values less the base, the last value whole, big-endian);
* ``compression``: each chunk is one zstd frame (``CompressionChunkEnumeration``) with its content size;
* ``encryption``: each chunk AES-256-GCM with its IV first (``DecryptionChunkEnumeration``), the data key
  RSA-wrapped in the manifest -- not read here (a clear error says so).

Chunk ``i`` holds original bytes ``[i * originalChunkSize, ...)`` (the last one the rest) and transformed bytes
after the transformed sizes of the chunks before it (``AbstractChunkIndex.materializeChunks``).  Reading a range of
the original ``.log`` fetches the transformed chunks that cover it in one ranged read and undoes each.
"""

from __future__ import annotations

import base64
import binascii
import json
import re
from dataclasses import dataclass
from typing import Any

from kdump.errors import KdumpError
from kdump.storage import naming
from kdump.storage.byte_source import DEFAULT_READ_AHEAD, ByteSource, RangedSource
from kdump.storage.kafka_uuid import encode_uuid

LOG_SUFFIX = ".log"
INDEXES_SUFFIX = ".indexes"
MANIFEST_SUFFIX = ".rsm-manifest"
SUFFIXES = (LOG_SUFFIX, INDEXES_SUFFIX, MANIFEST_SUFFIX)
#: The indexes of ``SegmentIndexesV1``, in the order the plugin writes them into ``.indexes``.
INDEX_NAMES = ("offset", "timestamp", "producerSnapshot", "leaderEpoch", "transaction")


def partition_prefix(topic: str, topic_id: bytes, partition: int) -> str:
    """``<topic>-<topic id>/<partition>``: the partition's part of ``ObjectKeyFactory.mainPath``."""
    return f"{topic}-{encode_uuid(topic_id)}/{partition}"


def object_name(start_offset: int, segment_id: bytes, suffix: str) -> str:
    """The last part of a segment object's key: ``<20-digit start offset>-<segment id><suffix>``."""
    return f"{naming.offset_to_filename(start_offset, '')}-{encode_uuid(segment_id)}{suffix}"


_OBJECT_NAME = re.compile(r"^([0-9]+)-([a-zA-Z0-9_-]{22})(\.log|\.indexes|\.rsm-manifest)$")


@dataclass(frozen=True)
class ObjectName:
    start_offset: int
    segment_id: str  # Kafka's base64 form, as in the key
    suffix: str


def parse_object_name(name: str) -> ObjectName | None:
    """The start offset, segment id and suffix of a segment object's name; None for any other name."""
    m = _OBJECT_NAME.match(name)
    return None if m is None else ObjectName(int(m.group(1)), m.group(2), m.group(3))


class ManifestError(KdumpError):
    """A ``.rsm-manifest`` kdump cannot use: not the plugin's JSON, or encrypted."""


@dataclass(frozen=True)
class Chunk:
    original_position: int
    original_size: int
    transformed_position: int
    transformed_size: int


@dataclass
class SegmentManifest:
    chunks: list[Chunk]
    original_chunk_size: int
    original_file_size: int
    compression: bool
    encrypted: bool
    #: Each index's (position, size) in ``.indexes``; None where it is absent (no transaction index).
    indexes: dict[str, tuple[int, int] | None]

    @property
    def transformed_size(self) -> int:
        """The size the ``.log`` object has: the transformed chunks end to end."""
        return sum(c.transformed_size for c in self.chunks)


def decode_chunk_sizes(data: bytes) -> list[int]:
    """``ChunkSizesBinaryCodec.decode``; ValueError when ``data`` is not one."""
    pos = 0

    def take(n: int) -> int:
        nonlocal pos
        if pos + n > len(data):
            raise ValueError("chunk sizes cut short")
        value = int.from_bytes(data[pos : pos + n], "big", signed=n == 4)
        pos += n
        return value

    count = take(4)
    if count < 0 or count > len(data):  # never trust a count for allocation
        raise ValueError(f"chunk count {count}")
    if count == 0:
        return []
    if count == 1:
        return [take(4)]
    base = take(4)
    width = take(1)
    if not 1 <= width <= 4:
        raise ValueError(f"{width} bytes per chunk size")
    if 9 + (count - 1) * width + 4 != len(data):
        raise ValueError(f"{len(data)} bytes do not hold {count} chunk sizes of {width} bytes")
    values = [take(width) + base for _ in range(count - 1)]
    values.append(take(4))
    return values


#: ``TransformedChunksDeserializer.MAX_DECOMPRESSED_SIZE``.
MAX_CHUNK_SIZES_BYTES = 10 * 1024 * 1024


def _unzstd(data: bytes) -> bytes:
    """``TransformedChunksDeserializer``: the chunk sizes are a zstd frame (with its content size) in base64."""
    import zstandard

    try:
        params = zstandard.get_frame_parameters(data)
        if not 0 <= params.content_size <= MAX_CHUNK_SIZES_BYTES:
            raise ValueError(f"invalid decompressed size {params.content_size}")
        return zstandard.ZstdDecompressor().decompress(data, max_output_size=params.content_size)
    except zstandard.ZstdError as e:
        raise ValueError(f"not a zstd frame: {e}") from None


def _int(obj: dict[str, Any], name: str, where: str) -> int:
    value = obj.get(name)
    if not isinstance(value, int) or isinstance(value, bool) or value < 0:
        raise ManifestError(f"{name} is {value!r}, not a size", path=where)
    return value


def parse_manifest(data: bytes, where: str) -> SegmentManifest:
    """A ``.rsm-manifest``'s content (``SegmentManifestV1``); :class:`ManifestError` naming ``where``."""
    try:
        doc = json.loads(data)
    except (UnicodeDecodeError, json.JSONDecodeError) as e:
        raise ManifestError(f"not JSON: {e}", path=where) from None
    if not isinstance(doc, dict) or doc.get("version") != "1":
        raise ManifestError(
            f"not a version 1 segment manifest (version {doc.get('version') if isinstance(doc, dict) else None!r})",
            path=where,
        )
    index = doc.get("chunkIndex")
    if not isinstance(index, dict):
        raise ManifestError("no chunkIndex", path=where)
    ocs = _int(index, "originalChunkSize", where)
    ofs = _int(index, "originalFileSize", where)
    if ocs == 0:
        raise ManifestError("originalChunkSize is 0", path=where)
    count = -(-ofs // ocs)
    kind = index.get("type")
    if kind == "fixed":
        tcs = _int(index, "transformedChunkSize", where)
        final = _int(index, "finalTransformedChunkSize", where)
        sizes = [tcs] * (count - 1) + [final] if count else []
    elif kind == "variable":
        try:
            sizes = decode_chunk_sizes(
                _unzstd(base64.b64decode(str(index.get("transformedChunks")), validate=True))
            )
        except (ValueError, binascii.Error) as e:
            raise ManifestError(f"transformedChunks: {e}", path=where) from None
        if len(sizes) != count:
            raise ManifestError(
                f"{len(sizes)} transformed chunks for {count} chunks of {ocs} bytes in {ofs}", path=where
            )
    else:
        raise ManifestError(f"chunkIndex type {kind!r} (fixed or variable expected)", path=where)
    chunks = []
    original = transformed = 0
    for i, size in enumerate(sizes):
        osize = min(ocs, ofs - i * ocs)
        chunks.append(Chunk(original, osize, transformed, size))
        original += osize
        transformed += size
    indexes: dict[str, tuple[int, int] | None] = {}
    segment_indexes = doc.get("segmentIndexes") or {}
    for name in INDEX_NAMES:
        entry = segment_indexes.get(name) if isinstance(segment_indexes, dict) else None
        indexes[name] = (
            None
            if not isinstance(entry, dict)
            else (_int(entry, "position", where), _int(entry, "size", where))
        )
    return SegmentManifest(
        chunks, ocs, ofs, doc.get("compression") is True, doc.get("encryption") is not None, indexes
    )


def chunked_log(
    manifest: SegmentManifest, log: ByteSource, *, read_ahead: int = DEFAULT_READ_AHEAD
) -> RangedSource:
    """The original ``.log`` of a segment whose transformed chunks are ``log`` (the ``.log`` object), read a range
    at a time: each read fetches the transformed chunks that cover it (one ranged read) and undoes them."""
    if manifest.encrypted:
        raise ManifestError(
            "the segment is encrypted (AES-256-GCM, its data key RSA-wrapped): kdump does not decrypt it yet",
            path=log.location,
        )
    chunks = manifest.chunks
    size = manifest.original_chunk_size

    def fetch(start: int, end: int) -> bytes:
        first, last = start // size, (end - 1) // size
        lo = chunks[first].transformed_position
        hi = chunks[last].transformed_position + chunks[last].transformed_size
        data = log.read(lo, hi)
        if len(data) != hi - lo:
            raise KdumpError(
                f"the .log object ends at byte {lo + len(data)}, before chunk {last} does ({hi}): shorter than "
                "its manifest says",
                path=log.location,
                position=lo + len(data),
            )
        parts = []
        for chunk in chunks[first : last + 1]:
            raw = data[
                chunk.transformed_position - lo : chunk.transformed_position - lo + chunk.transformed_size
            ]
            parts.append(_undo(raw, chunk, manifest, log.location))
        whole = b"".join(parts)
        skip = start - chunks[first].original_position
        return whole[skip : skip + end - start]

    return RangedSource(log.location, manifest.original_file_size, fetch, read_ahead=read_ahead)


def _undo(raw: bytes, chunk: Chunk, manifest: SegmentManifest, where: str) -> bytes:
    if manifest.compression:
        import zstandard

        try:
            out = zstandard.ZstdDecompressor().decompress(raw, max_output_size=chunk.original_size)
        except zstandard.ZstdError as e:
            raise KdumpError(
                f"chunk at byte {chunk.transformed_position} does not decompress (zstd: {e})",
                path=where,
                position=chunk.transformed_position,
            ) from None
    else:
        out = raw
    if len(out) != chunk.original_size:
        raise KdumpError(
            f"chunk at byte {chunk.transformed_position} holds {len(out)} bytes, not the {chunk.original_size} of "
            "the manifest",
            path=where,
            position=chunk.transformed_position,
        )
    return out
