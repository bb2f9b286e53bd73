"""The objects of Aiven's tiered-storage plugin as the tests (and bench/remote_bench.py) write them, from the
plugin's source (``KafkaRemoteStorageManager``, ``CompressionChunkEnumeration``, ``EncryptionChunkEnumeration``,
``RsaEncryptionProvider``, ``SegmentManifestV1``, ``ChunkSizesBinaryCodec``): the plugin (Java, BouncyCastle, its
storage backends) could not run here.  Independent of kdump's reader: zstd by ``zstandard``, AES-GCM by
``cryptography``, the data key wrapped by OpenSSL's command line (RSA-OAEP, SHA3-512 for the hash and MGF1)."""

from __future__ import annotations

import base64
import os
import struct
import subprocess
from pathlib import Path

import zstandard

from kdump.storage.aiven_segment import INDEX_NAMES

#: The five indexes a manifest names (``SegmentIndexesV1``), for segments whose ``.indexes`` are not read.
INDEXES = {
    "offset": {"position": 0, "size": 1},
    "timestamp": {"position": 1, "size": 1},
    "producerSnapshot": {"position": 2, "size": 1},
    "leaderEpoch": {"position": 3, "size": 1},
    "transaction": {"position": 4, "size": 1},
}


def encode_chunk_sizes(values: list[int]) -> bytes:
    """``ChunkSizesBinaryCodec.encode``, for the tests."""
    if not values:
        return struct.pack(">i", 0)
    if len(values) == 1:
        return struct.pack(">ii", 1, values[0])
    base = min(values[:-1])
    width = max(
        1 if v - base <= 0xFF else 2 if v - base <= 0xFFFF else 3 if v - base <= 0xFFFFFF else 4
        for v in values[:-1]
    )
    body = b"".join((v - base).to_bytes(4, "big")[4 - width :] for v in values[:-1])
    return struct.pack(">iib", len(values), base, width) + body + struct.pack(">i", values[-1])


def write_aiven(log: bytes, chunk_size: int, *, compression: bool, variable: bool) -> tuple[bytes, dict]:
    """The ``.log`` object and the manifest the plugin writes for a segment (``KafkaRemoteStorageManager``)."""
    chunks = [log[i : i + chunk_size] for i in range(0, len(log), chunk_size)]
    if compression:
        cctx = zstandard.ZstdCompressor(write_content_size=True)
        chunks = [cctx.compress(c) for c in chunks]
    sizes = [len(c) for c in chunks]
    if variable:
        index = {"type": "variable", "originalChunkSize": chunk_size, "originalFileSize": len(log)}
        frame = zstandard.ZstdCompressor(write_content_size=True).compress(encode_chunk_sizes(sizes))
        index["transformedChunks"] = base64.b64encode(frame).decode()
    else:
        index = {"type": "fixed", "originalChunkSize": chunk_size, "originalFileSize": len(log)}
        index["transformedChunkSize"] = sizes[0] if sizes else 0
        index["finalTransformedChunkSize"] = sizes[-1] if sizes else 0
    manifest = {"version": "1", "chunkIndex": index, "segmentIndexes": INDEXES, "compression": compression}
    return b"".join(chunks), manifest


def indexes_blob(indexes: dict[str, bytes]) -> tuple[bytes, dict]:
    """``uploadIndexes`` without encryption: the indexes end to end, each at its position (an absent one size 0)."""
    blob, positions = b"", {}
    for name in ("offset", "timestamp", "producerSnapshot", "leaderEpoch", "transaction"):
        positions[name] = {"position": len(blob), "size": len(indexes.get(name, b""))}
        blob += indexes.get(name, b"")
    return blob, positions


def openssl(*args: str, data: bytes | None = None) -> bytes:
    return subprocess.run(["openssl", *args], input=data, capture_output=True, check=True).stdout


def make_keys(directory: Path) -> dict[str, Path]:
    """Two RSA key pairs in PEM (PKCS#8, as the plugin's RsaKeyReader reads them), made by OpenSSL in
    ``directory``: ``{"k1": k1.pem, "k2": k2.pem}`` (each public key beside it, ``<name>.pub.pem``)."""
    out = {}
    for name in ("k1", "k2"):
        openssl(
            "genpkey",
            "-algorithm",
            "RSA",
            "-pkeyopt",
            "rsa_keygen_bits:2048",
            "-out",
            str(directory / f"{name}.pem"),
        )
        openssl(
            "pkey",
            "-in",
            str(directory / f"{name}.pem"),
            "-pubout",
            "-out",
            str(directory / f"{name}.pub.pem"),
        )
        out[name] = directory / f"{name}.pem"
    return out


def wrap_key(data_key: bytes, pem: Path) -> bytes:
    """``RsaEncryptionProvider.encryptDataKey``, by OpenSSL: RSA-OAEP, SHA3-512 for the hash and MGF1."""
    pub = pem.with_name(pem.stem + ".pub.pem")
    return openssl(
        "pkeyutl",
        "-encrypt",
        "-pubin",
        "-inkey",
        str(pub),
        "-pkeyopt",
        "rsa_padding_mode:oaep",
        "-pkeyopt",
        "rsa_oaep_md:sha3-512",
        "-pkeyopt",
        "rsa_mgf1_md:sha3-512",
        data=data_key,
    )


def encrypt_chunk(chunk: bytes, key: bytes, aad: bytes) -> bytes:
    """``EncryptionChunkEnumeration.nextElement``: the cipher's IV, then ``doFinal`` (ciphertext and tag)."""
    from cryptography.hazmat.primitives.ciphers.aead import AESGCM

    iv = os.urandom(12)
    return iv + AESGCM(key).encrypt(iv, chunk, aad)


def write_encrypted(
    log: bytes,
    chunk_size: int,
    pem: Path,
    key_pair: str = "k1",
    *,
    compression: bool,
    indexes: dict[str, bytes],
) -> tuple[bytes, bytes, dict]:
    """The ``.log``, the ``.indexes`` and the manifest the plugin writes for an encrypted segment: each chunk
    compressed (when asked) then encrypted; each index one encrypted chunk (``transformIndex``), an empty one
    size 0; the data key and AAD two separate AES-256 keys (``createDataKeyAndAAD``)."""
    data_key, aad = os.urandom(32), os.urandom(32)
    chunks = [log[i : i + chunk_size] for i in range(0, len(log), chunk_size)]
    if compression:
        chunks = [zstandard.ZstdCompressor(write_content_size=True).compress(c) for c in chunks]
    chunks = [encrypt_chunk(c, data_key, aad) for c in chunks]
    sizes = [len(c) for c in chunks]
    if compression:
        index = {"type": "variable", "originalChunkSize": chunk_size, "originalFileSize": len(log)}
        frame = zstandard.ZstdCompressor(write_content_size=True).compress(encode_chunk_sizes(sizes))
        index["transformedChunks"] = base64.b64encode(frame).decode()
    else:  # a fixed index: every encrypted chunk IV + size + tag (the last one shorter)
        index = {"type": "fixed", "originalChunkSize": chunk_size, "originalFileSize": len(log)}
        index["transformedChunkSize"], index["finalTransformedChunkSize"] = sizes[0], sizes[-1]
    blob, positions = b"", {}
    for name in INDEX_NAMES:
        raw = indexes.get(name, b"")
        part = encrypt_chunk(raw, data_key, aad) if raw else b""
        positions[name] = {"position": len(blob), "size": len(part)}
        blob += part
    manifest = {
        "version": "1",
        "chunkIndex": index,
        "segmentIndexes": positions,
        "compression": compression,
        "encryption": {
            "dataKey": f"{key_pair}:{base64.b64encode(wrap_key(data_key, pem)).decode()}",
            "aad": base64.b64encode(aad).decode(),
        },
    }
    return b"".join(chunks), blob, manifest
