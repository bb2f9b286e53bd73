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
* ``encryption`` (``SegmentEncryptionMetadataV1``): ``{"dataKey": "<key pair id>:<base64>", "aad": "<base64>"}``.
  Each chunk is compressed first, then encrypted (``KafkaRemoteStorageManager.transformation``): AES-256-GCM,
  a fresh 12-byte IV first, then the ciphertext and its 128-bit tag, the manifest's ``aad`` as additional data
  (``AesEncryptionProvider``, ``EncryptionChunkEnumeration``/``DecryptionChunkEnumeration``).  The 32-byte data
  key is wrapped with the RSA public key of the key pair named before the colon (``EncryptedDataKey``), as
  ``RsaEncryptionProvider`` does it: BouncyCastle's ``RSA/NONE/OAEPWithSHA3-512AndMGF1Padding``, which takes
  SHA3-512 for the OAEP hash *and* for MGF1 (BouncyCastle's ``CipherSpi.engineSetPadding``), empty label.
  Unwrapping needs the private key (``--aiven-private-key``, PEM: PKCS#8 as ``RsaKeyReader`` reads it, or
  PKCS#1); :class:`Keyring`.

``.indexes`` (``KafkaRemoteStorageManager.uploadIndexes``): the five indexes end to end in the order of
:data:`INDEX_NAMES`, each at the manifest's ``segmentIndexes.<name>.position`` with its ``size``; each one is one
chunk, encrypted like a ``.log`` chunk when the segment is (never compressed); an empty one (no transaction
index) has size 0.  :func:`read_index`.

Per segment, the remote log metadata's custom metadata (``RemoteLogSegmentMetadata.customMetadata``, written by
``SegmentCustomMetadataSerde``: a tagged-fields section, tag 0 ``remote_size`` varlong, 1 ``object_prefix`` and
2 ``object_key`` compact strings) may name the prefix and the main path the ``.log`` and ``.indexes`` objects
were written under (``KafkaRemoteStorageManager.objectKey``; the ``.rsm-manifest`` is always read at the
configured prefix and the computed path: ``fetchLogSegment``/``fetchIndex`` ask ``objectKeyFactory.key(metadata,
MANIFEST)``).  :func:`parse_custom_metadata`, :func:`object_key`.

Chunk ``i`` holds original bytes ``[i * originalChunkSize, ...)`` (the last one the rest) and transformed bytes
after the transformed sizes of the chunks before it (``AbstractChunkIndex.materializeChunks``).  Reading a range of
the original ``.log`` fetches the transformed chunks that cover it in one ranged read and undoes each.
"""

from __future__ import annotations

import base64
import binascii
import hashlib
import json
import re
import struct
from dataclasses import dataclass, field
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
    """A ``.rsm-manifest`` kdump cannot use: not the plugin's JSON, or encrypted with a key kdump was not given."""


@dataclass(frozen=True)
class Encryption:
    """A segment's ``SegmentEncryptionMetadataV1``: the wrapped data key's key-pair id and bytes, the AAD, and
    the data key itself once unwrapped (None without the key pair's private key)."""

    key_pair_id: str
    wrapped_key: bytes
    aad: bytes
    #: never shown (a split or a task that carries it may be printed)
    data_key: bytes | None = field(repr=False)


#: ``SegmentEncryptionMetadataV1.IV_SIZE`` and ``AesEncryptionProvider.GCM_TAG_LENGTH`` (bits / 8).
IV_SIZE = 12
TAG_SIZE = 16
#: The option that gives kdump a private key (named in errors).
KEY_OPTION = "--aiven-private-key"


class Keyring:
    """The RSA private keys of the plugin's key pairs (``encryption.key.pairs``), by key-pair id; a key given
    without an id is tried for every id no key was given for.  Reading them needs the ``cryptography`` package
    (``pip install 'kdump[aiven]'``): PEM and PKCS#8 parsing, and AES-GCM, are left to it (OpenSSL underneath)."""

    def __init__(self, keys: dict[str | None, Any]) -> None:
        self.keys = keys

    @classmethod
    def load(cls, specs: list[str] | tuple[str, ...]) -> Keyring:
        """Keys from ``[ID=]PEM-FILE`` specs; ValueError (a usage error) naming the file when one is not an RSA
        private key in PEM."""
        serialization = _crypto("hazmat.primitives.serialization")
        rsa = _crypto("hazmat.primitives.asymmetric.rsa")
        from kdump.storage.byte_source import read_all

        keys: dict[str | None, Any] = {}
        for spec in specs:
            key_id, sep, path = spec.partition("=")
            if not sep or "/" in key_id or not key_id:
                key_id, path = "", spec
            try:
                data = read_all(path)
            except OSError as e:
                raise ValueError(f"{KEY_OPTION} {path}: {e.strerror or e}") from None
            try:
                key = serialization.load_pem_private_key(data, password=None)
            except (ValueError, TypeError) as e:
                raise ValueError(f"{KEY_OPTION} {path}: not an RSA private key in PEM ({e})") from None
            if not isinstance(key, rsa.RSAPrivateKey):
                raise ValueError(f"{KEY_OPTION} {path}: not an RSA private key")
            keys[key_id or None] = key
        return cls(keys)

    def unwrap(self, key_pair_id: str, wrapped: bytes, where: str) -> bytes | None:
        """The data key ``wrapped`` under key pair ``key_pair_id`` (``RsaEncryptionProvider.decryptDataKey``);
        None when no key was given for it; :class:`ManifestError` when the given key does not unwrap it."""
        key = self.keys.get(key_pair_id, self.keys.get(None))
        if key is None:
            return None
        numbers = key.private_numbers()
        data_key = oaep_sha3_512_decrypt(numbers.public_numbers.n, numbers.d, wrapped)
        if data_key is None:
            raise ManifestError(
                f"the data key of key pair {key_pair_id!r} does not unwrap with the private key given for it "
                "(RSA-OAEP with SHA3-512: another key pair's key?)",
                path=where,
            )
        return data_key


def _crypto(module: str) -> Any:
    import importlib

    try:
        return importlib.import_module(f"cryptography.{module}")
    except ImportError:
        raise ValueError(
            "reading encrypted Aiven segments needs the cryptography package (pip install 'kdump[aiven]')"
        ) from None


def _mgf1_sha3_512(seed: bytes, length: int) -> bytes:
    """MGF1 (RFC 8017 B.2.1) with SHA3-512."""
    out = bytearray()
    counter = 0
    while len(out) < length:
        out += hashlib.sha3_512(seed + counter.to_bytes(4, "big")).digest()
        counter += 1
    return bytes(out[:length])


def oaep_sha3_512_decrypt(n: int, d: int, ciphertext: bytes) -> bytes | None:
    """RSAES-OAEP decryption (RFC 8017 7.1.2) with SHA3-512 as the hash and in MGF1, empty label: what
    BouncyCastle's ``OAEPWithSHA3-512AndMGF1Padding`` undoes.  (The ``cryptography`` package's OAEP does not
    offer SHA3.)  None when ``ciphertext`` is not an OAEP encryption under this key."""
    k = (n.bit_length() + 7) // 8
    h = 64
    if len(ciphertext) != k or k < 2 * h + 2:
        return None
    c = int.from_bytes(ciphertext, "big")
    if c >= n:
        return None
    em = pow(c, d, n).to_bytes(k, "big")
    masked_seed, masked_db = em[1 : 1 + h], em[1 + h :]
    seed = bytes(a ^ b for a, b in zip(masked_seed, _mgf1_sha3_512(masked_db, h), strict=True))
    db = bytes(a ^ b for a, b in zip(masked_db, _mgf1_sha3_512(seed, k - h - 1), strict=True))
    rest = db[h:].lstrip(b"\0")
    if em[0] != 0 or db[:h] != hashlib.sha3_512(b"").digest() or not rest or rest[0] != 1:
        return None
    return rest[1:]


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
    #: The encryption metadata; None for a segment that is not encrypted.
    encryption: Encryption | None
    #: Each index's (position, size) in ``.indexes``; None where it is absent (no transaction index).
    indexes: dict[str, tuple[int, int] | None]

    @property
    def encrypted(self) -> bool:
        return self.encryption is not None

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


def _encryption(doc: dict[str, Any], where: str, keyring: Keyring | None) -> Encryption | None:
    """``SegmentEncryptionMetadataV1`` (its ``dataKey`` as ``EncryptedDataKey.parse`` reads it), the data key
    unwrapped when ``keyring`` has the key pair's private key."""
    found = doc.get("encryption")
    if found is None:
        return None
    if not isinstance(found, dict):
        raise ManifestError(f"encryption is {type(found).__name__}, not an object", path=where)
    text = found.get("dataKey")
    if not isinstance(text, str) or text.count(":") != 1:
        raise ManifestError(f"encryption.dataKey {text!r} is not <key pair id>:<base64>", path=where)
    key_pair_id, _, wrapped_text = text.partition(":")
    try:
        wrapped = base64.b64decode(wrapped_text, validate=True)
        aad = base64.b64decode(str(found.get("aad")), validate=True)
    except (ValueError, binascii.Error) as e:
        raise ManifestError(f"encryption: not base64 ({e})", path=where) from None
    if not key_pair_id.strip() or not wrapped:
        raise ManifestError(f"encryption.dataKey {text!r} has an empty key pair id or key", path=where)
    data_key = None if keyring is None else keyring.unwrap(key_pair_id, wrapped, where)
    if data_key is not None and len(data_key) != 32:
        raise ManifestError(f"the data key is {len(data_key)} bytes, not an AES-256 key", path=where)
    return Encryption(key_pair_id, wrapped, aad, data_key)


def parse_manifest(data: bytes, where: str, keyring: Keyring | None = None) -> SegmentManifest:
    """A ``.rsm-manifest``'s content (``SegmentManifestV1``); :class:`ManifestError` naming ``where``.  An
    encrypted segment's data key is unwrapped with ``keyring`` (the command's, from ``--aiven-private-key``)
    when it has the key."""
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
        chunks, ocs, ofs, doc.get("compression") is True, _encryption(doc, where, keyring), indexes
    )


def chunked_log(
    manifest: SegmentManifest, log: ByteSource, *, read_ahead: int = DEFAULT_READ_AHEAD
) -> RangedSource:
    """The original ``.log`` of a segment whose transformed chunks are ``log`` (the ``.log`` object), read a range
    at a time: each read fetches the transformed chunks that cover it (one ranged read) and undoes them."""
    _need_key(manifest, log.location)
    return RangedSource(
        log.location,
        manifest.original_file_size,
        lambda start, end: fetch_original(manifest, log, start, end),
        read_ahead=read_ahead,
    )


def chunk_at(manifest: SegmentManifest, position: int) -> tuple[int, Chunk] | None:
    """The chunk (its index in the manifest's chunk index, and the chunk) holding byte ``position`` of the
    original ``.log``; None past its end."""
    if not 0 <= position < manifest.original_file_size:
        return None
    i = position // manifest.original_chunk_size
    return i, manifest.chunks[i]


def fetch_original(manifest: SegmentManifest, log: ByteSource, start: int, end: int) -> bytes:
    """Bytes ``[start, end)`` of the original ``.log``: the transformed chunks that cover them fetched from
    ``log`` in one ranged read (``AbstractChunkIndex.chunksForRange``), each undone."""
    chunks = manifest.chunks
    size = manifest.original_chunk_size
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
        raw = data[chunk.transformed_position - lo : chunk.transformed_position - lo + chunk.transformed_size]
        parts.append(_undo(raw, chunk, manifest, log.location))
    whole = b"".join(parts)
    skip = start - chunks[first].original_position
    return whole[skip : skip + end - start]


class UnreadableObjectError(KdumpError, OSError):
    """An object of an Aiven segment that cannot be read back (its manifest, an index out of ``.indexes``):
    also an :class:`OSError`, so that every reader that reports an unreadable index file reports it the same
    way (``strerror``: the message)."""

    def __init__(self, message: str, *, path: str | None = None, position: int | None = None) -> None:
        super().__init__(message, path=path, position=position)
        self.strerror = message


class SegmentObjects:
    """One Aiven segment's objects -- its ``.log``, ``.indexes`` and ``.rsm-manifest`` (paths or URLs) -- and
    the keyring its data key is unwrapped with (given by the command, from ``--aiven-private-key``); the
    manifest is read when first needed, once.  Pickled (a verify worker), it carries the manifest read and
    its data key, not the keyring."""

    def __init__(self, log: str, indexes: str, manifest: str, keyring: Keyring | None = None) -> None:
        self.log = log
        self.indexes = indexes
        self.manifest_location = manifest
        self.keyring = keyring
        self._manifest: SegmentManifest | None = None
        self._error: KdumpError | None = None

    def manifest(self) -> SegmentManifest:
        """The segment's manifest; :class:`UnreadableObjectError` naming it when it cannot be read or used."""
        if self._manifest is None:
            if self._error is not None:
                raise self._error
            from kdump.storage.byte_source import read_all

            try:
                self._manifest = parse_manifest(
                    read_all(self.manifest_location), self.manifest_location, self.keyring
                )
            except KdumpError as e:
                self._error = UnreadableObjectError(e.message, path=e.path or self.manifest_location)
                raise self._error from None
            except OSError as e:
                self._error = UnreadableObjectError(
                    f"cannot read it: {e.strerror or e}", path=self.manifest_location
                )
                raise self._error from None
        return self._manifest

    def __getstate__(self) -> dict[str, Any]:
        try:
            self.manifest()
        except KdumpError:
            pass  # kept as the error, raised where it is read
        state = self.__dict__.copy()
        state["keyring"] = None
        return state


class SegmentLog(RangedSource):
    """An Aiven segment's original ``.log`` as a ranged source (what a segment's ``.log`` is to every reader):
    ``size`` bytes (the remote log metadata's ``segmentSizeInBytes``), each read fetching the transformed chunks
    that cover it, with read-ahead; named by the ``.log`` object's location."""

    def __init__(self, objects: SegmentObjects, size: int, *, read_ahead: int = DEFAULT_READ_AHEAD) -> None:
        super().__init__(objects.log, size, self._fetch_original, read_ahead=read_ahead)
        self.objects = objects
        self._object: ByteSource | None = None

    def check(self) -> SegmentManifest:
        """The manifest, once it is known that the segment can be read back: it can be read, its
        ``originalFileSize`` is the metadata's size, and an encrypted segment's data key is unwrapped.  Raises
        what a read would (a :class:`~kdump.errors.KdumpError` naming the object)."""
        manifest = self.objects.manifest()
        if manifest.original_file_size != self._size:
            raise UnreadableObjectError(
                f"originalFileSize {manifest.original_file_size}, but the metadata says segmentSizeInBytes "
                f"{self._size}",
                path=self.objects.manifest_location,
            )
        _need_key(manifest, self.location)
        return manifest

    def _fetch_original(self, start: int, end: int) -> bytes:
        manifest = self.check()
        if self._object is None:
            from kdump.storage.byte_source import source_of

            self._object = source_of(self.location)
        return fetch_original(manifest, self._object, start, end)

    def __getstate__(self) -> dict[str, Any]:
        state = self.__dict__.copy()
        for name in ("_fetch", "_object", "_buffer"):
            state.pop(name, None)
        state["_lo"] = state["_hi"] = 0
        return state

    def __setstate__(self, state: dict[str, Any]) -> None:
        self.__dict__.update(state)
        self._fetch = self._fetch_original
        self._object = None
        self._buffer = None


class SegmentIndex:
    """One index out of an Aiven segment's ``.indexes`` (:data:`INDEX_NAMES`) as a byte source, read (and
    decrypted) whole when first read; named ``<.indexes object>#<name>`` (its bytes are not the object's: an
    index is one chunk of it, maybe encrypted).  An absent index (no transaction index) is empty.  Errors are
    :class:`UnreadableObjectError`."""

    def __init__(self, objects: SegmentObjects, name: str) -> None:
        self.objects = objects
        self.name = name
        self.location = f"{objects.indexes}#{name}"
        self._data: bytes | None = None

    def _load(self) -> bytes:
        if self._data is None:
            from kdump.storage.byte_source import source_of

            manifest = self.objects.manifest()
            try:
                entry = manifest.indexes.get(self.name)
                data = (
                    b""
                    if entry is None or entry[1] == 0
                    else read_index(manifest, source_of(self.objects.indexes), self.name)
                )
            except KdumpError as e:
                raise UnreadableObjectError(
                    f"the {self.name} index: {e.message}", path=e.path, position=e.position
                ) from None
            except OSError as e:
                raise UnreadableObjectError(
                    f"the {self.name} index: cannot read it: {e.strerror or e}", path=self.objects.indexes
                ) from None
            self._data = data or b""
        return self._data

    def size(self) -> int:
        return len(self._load())

    def read(self, start: int, end: int) -> bytes:
        return self._load()[start:end]


def _need_key(manifest: SegmentManifest, where: str) -> None:
    e = manifest.encryption
    if e is not None and e.data_key is None:
        raise ManifestError(
            f"the segment is encrypted (AES-256-GCM, its data key wrapped with key pair {e.key_pair_id!r}): "
            f"give that key pair's private key with {KEY_OPTION}",
            path=where,
        )


def _decrypt(raw: bytes, encryption: Encryption, position: int, where: str) -> bytes:
    """One encrypted chunk: 12-byte IV, ciphertext, 128-bit tag (``DecryptionChunkEnumeration``)."""
    aead = _crypto("hazmat.primitives.ciphers.aead")
    exceptions = _crypto("exceptions")
    if len(raw) < IV_SIZE + TAG_SIZE:
        raise KdumpError(
            f"encrypted chunk at byte {position} is {len(raw)} bytes, shorter than its IV and tag",
            path=where,
            position=position,
        )
    assert encryption.data_key is not None
    try:
        return bytes(aead.AESGCM(encryption.data_key).decrypt(raw[:IV_SIZE], raw[IV_SIZE:], encryption.aad))
    except exceptions.InvalidTag:
        raise KdumpError(
            f"chunk at byte {position} does not decrypt (AES-GCM tag mismatch: damaged, or another key's)",
            path=where,
            position=position,
        ) from None


def _undo(raw: bytes, chunk: Chunk, manifest: SegmentManifest, where: str) -> bytes:
    if manifest.encryption is not None:
        raw = _decrypt(raw, manifest.encryption, chunk.transformed_position, where)
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


def read_index(manifest: SegmentManifest, indexes: ByteSource, name: str) -> bytes | None:
    """The index ``name`` (of :data:`INDEX_NAMES`) out of a segment's ``.indexes`` object, decrypted when the
    segment is encrypted (``KafkaRemoteStorageManager.fetchIndexBytes``): one ranged read.  None when the
    manifest has no such index; ``b""`` for an empty one; :class:`KdumpError` naming the object when the range
    is not there or does not decrypt."""
    entry = manifest.indexes.get(name)
    if entry is None:
        return None
    position, size = entry
    if size == 0:
        return b""
    _need_key(manifest, indexes.location)
    data = indexes.read(position, position + size)
    if len(data) != size:
        raise KdumpError(
            f"the {name} index ends at byte {position + len(data)}, before its manifest's {position + size}",
            path=indexes.location,
            position=position + len(data),
        )
    if manifest.encryption is not None:
        data = _decrypt(data, manifest.encryption, position, indexes.location)
    return data


@dataclass(frozen=True)
class IndexFault:
    """What is wrong with one index out of ``.indexes`` (:func:`check_indexes`): ``index`` (one of
    :data:`INDEX_NAMES`), ``case`` -- ``unreadable`` (message: the error's), ``absent`` (the manifest has
    none), ``length`` (bytes, width: not whole entries), ``order`` (index_entry, relative_offset, log_position,
    previous, segment_size: an offset-index entry out of order or outside the segment), ``parse`` (message: the
    producer snapshot or leader-epoch checkpoint does not parse) -- and the case's values."""

    index: str
    case: str
    data: tuple[tuple[str, Any], ...] = ()


def check_indexes(manifest: SegmentManifest, indexes: ByteSource) -> list[IndexFault]:
    """Each index out of ``.indexes`` read (decrypted) and checked as Kafka reads it back
    (``RemoteIndexCache``): the offset index in 8-byte entries whose offsets and positions increase, positions
    inside the original ``.log``; the time index in 12-byte entries; the producer snapshot (its CRC) and the
    leader-epoch checkpoint parsed; the transaction index in 34-byte entries.  What is wrong, one fault each."""
    from kdump.storage.leader_epoch_checkpoint import parse_leader_epoch_checkpoint
    from kdump.storage.producer_snapshot import parse_producer_snapshot

    found: list[IndexFault] = []
    for name in INDEX_NAMES:
        try:
            data = read_index(manifest, indexes, name)
        except KdumpError as e:
            found.append(IndexFault(name, "unreadable", (("message", e.message),)))
            continue
        if name != "transaction" and data is None:
            found.append(IndexFault(name, "absent"))
        if not data:
            continue
        width = {"offset": 8, "timestamp": 12, "transaction": 34}.get(name)
        if width is not None and len(data) % width:
            found.append(IndexFault(name, "length", (("bytes", len(data)), ("width", width))))
            continue
        if name == "offset":
            last = (-1, -1)
            for at in range(0, len(data), 8):
                entry = struct.unpack_from(">ii", data, at)
                if entry <= last or not 0 <= entry[1] < manifest.original_file_size:
                    values = (
                        ("index_entry", at // 8),
                        ("relative_offset", entry[0]),
                        ("log_position", entry[1]),
                        ("previous", last),
                        ("segment_size", manifest.original_file_size),
                    )
                    found.append(IndexFault(name, "order", values))
                    break
                last = entry
        elif name in ("producerSnapshot", "leaderEpoch"):
            parse = parse_producer_snapshot if name == "producerSnapshot" else parse_leader_epoch_checkpoint
            try:
                parse(data)
            except (KdumpError, ValueError) as e:
                found.append(IndexFault(name, "parse", (("message", getattr(e, "message", str(e))),)))
    return found


def offset_position(manifest: SegmentManifest, indexes: ByteSource, base_offset: int, offset: int) -> int:
    """Where to start looking for ``offset`` in the original ``.log``: the position of the segment's offset-index
    entry (out of ``.indexes``) with the largest offset at or below it (``OffsetIndex.lookup``), else 0."""
    try:
        data = read_index(manifest, indexes, "offset") or b""
    except KdumpError:
        return 0
    position = 0
    for at in range(0, len(data) - len(data) % 8, 8):
        relative, pos = struct.unpack_from(">ii", data, at)
        if base_offset + relative > offset:
            break
        position = pos
    return position


def indexes_size(manifest: SegmentManifest) -> int:
    """The size the ``.indexes`` object has: where its last index ends."""
    return max((p + n for p, n in (e for e in manifest.indexes.values() if e is not None)), default=0)


# -- per-segment object keys from the remote log metadata's custom metadata -----------------------------------

#: ``SegmentCustomMetadataField``'s tags.
REMOTE_SIZE, OBJECT_PREFIX, OBJECT_KEY = 0, 1, 2


def _uvarint(data: bytes, pos: int) -> tuple[int, int]:
    value = shift = 0
    while True:
        if pos >= len(data) or shift > 63:
            raise ValueError("a varint runs past the end")
        b = data[pos]
        pos += 1
        value |= (b & 0x7F) << shift
        if not b & 0x80:
            return value, pos
        shift += 7


def parse_custom_metadata(data: bytes | None) -> dict[int, int | str]:
    """``SegmentCustomMetadataSerde.deserialize``: Kafka's tagged-fields section (an unsigned varint count, then
    per field its tag, its size and its bytes): tag 0 ``remote_size`` (a zigzag varlong), 1 ``object_prefix``
    and 2 ``object_key`` (compact strings: length + 1 as an unsigned varint, UTF-8).  Unknown tags are kept as
    their size.  ValueError when ``data`` is not such a section."""
    fields: dict[int, int | str] = {}
    if not data:
        return fields
    count, pos = _uvarint(data, 0)
    if count > len(data):
        raise ValueError(f"{count} tagged fields in {len(data)} bytes")
    for _ in range(count):
        tag, pos = _uvarint(data, pos)
        size, pos = _uvarint(data, pos)
        if pos + size > len(data):
            raise ValueError(f"tagged field {tag} of {size} bytes runs past the end")
        value = data[pos : pos + size]
        pos += size
        if tag == REMOTE_SIZE:
            raw, _ = _uvarint(value, 0)
            fields[tag] = (raw >> 1) ^ -(raw & 1)
        elif tag in (OBJECT_PREFIX, OBJECT_KEY):
            length, at = _uvarint(value, 0)
            if length == 0 or at + length - 1 != len(value):
                raise ValueError(f"tagged field {tag} is not a compact string")
            fields[tag] = value[at:].decode("utf-8", errors="replace")
        else:
            fields[tag] = size
    if pos != len(data):
        raise ValueError(f"{len(data) - pos} bytes after the tagged fields")
    return fields


def main_path(topic: str, topic_id: bytes, partition: int, start_offset: int, segment_id: bytes) -> str:
    """``ObjectKeyFactory.mainPath``: ``<topic>-<topic id>/<partition>/<20-digit start offset>-<segment id>``."""
    return f"{partition_prefix(topic, topic_id, partition)}/{object_name(start_offset, segment_id, '')}"


def object_key(prefix: str, main: str, suffix: str, custom: dict[int, int | str] | None = None) -> str:
    """``ObjectKeyFactory.key(fields, metadata, suffix)``: the object's key, the custom metadata's
    ``object_prefix`` and ``object_key`` replacing the configured prefix and the computed main path (the
    ``.rsm-manifest`` is always asked without them: pass no ``custom`` for it)."""
    custom = custom or {}
    return f"{custom.get(OBJECT_PREFIX, prefix)}{custom.get(OBJECT_KEY, main)}{suffix}"
