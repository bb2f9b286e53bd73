"""Encrypted segments of Aiven's tiered-storage plugin (kdump.storage.aiven_segment): AES-256-GCM chunks (a
12-byte IV first, the 128-bit tag last, the manifest's AAD), the 32-byte data key wrapped with RSA-OAEP
(SHA3-512 as hash and in MGF1: BouncyCastle's ``OAEPWithSHA3-512AndMGF1Padding``), the ``.indexes`` blob, and
the per-segment object keys of the remote log metadata's custom metadata.

The plugin (Java, BouncyCastle, its storage backends) could not run here, so the segments are written in the
test from the plugin's source (``KafkaRemoteStorageManager``, ``EncryptionChunkEnumeration``,
``RsaEncryptionProvider``, ``SegmentEncryptionMetadataV1``), independently of kdump's decoder: the data key is
wrapped by OpenSSL's own command line (``openssl pkeyutl`` with OAEP SHA3-512 / MGF1 SHA3-512), the chunks are
encrypted with the ``cryptography`` package's AES-GCM, the custom metadata is Kafka's tagged-fields encoding
written by hand."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

pytest.importorskip("cryptography", reason="cryptography is not installed (pip install 'kdump[aiven]')")


from kdump.errors import KdumpError  # noqa: E402
from kdump.storage.aiven_segment import (  # noqa: E402
    INDEX_NAMES,
    Keyring,
    ManifestError,
    chunked_log,
    parse_manifest,
    read_index,
)
from kdump.storage.byte_source import InMemory  # noqa: E402
from tests.aiven_objects import make_keys, write_encrypted  # noqa: E402
from tests.test_aiven_segment import INDEX_BYTES, AivenTiered, _kinds, _records  # noqa: E402
from tests.tiered_partition import SEG_A, SEG_B, segment  # noqa: E402

needs_openssl = pytest.mark.skipif(
    shutil.which("openssl") is None, reason="the openssl command is not installed"
)


INDEXES = INDEX_BYTES


@pytest.fixture(scope="module")
def keys(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    if shutil.which("openssl") is None:
        pytest.skip("the openssl command is not installed")
    return make_keys(tmp_path_factory.mktemp("keys"))


@pytest.mark.parametrize("compression", [True, False])
def test_an_encrypted_segment_reads_back(keys: dict[str, Path], compression: bool) -> None:
    log = segment(0, 40, {0: 0, 3: 20})
    data, blob, manifest = write_encrypted(log, 64, keys["k1"], compression=compression, indexes=INDEXES)
    ring = Keyring.load([f"k1={keys['k1']}"])
    m = parse_manifest(json.dumps(manifest).encode(), "m", ring)
    source = chunked_log(m, InMemory(data, "s3://b/x.log"), read_ahead=100)
    assert source.read(0, len(log)) == log
    assert _records(source) == _records(InMemory(log, "x.log"))
    for name in INDEX_NAMES:
        assert read_index(m, InMemory(blob, "s3://b/x.indexes"), name) == INDEXES.get(name, b"")
    # a key without an id serves every key pair
    m2 = parse_manifest(json.dumps(manifest).encode(), "m", Keyring.load([str(keys["k1"])]))
    assert m2.encryption is not None and m2.encryption.data_key == m.encryption.data_key  # type: ignore[union-attr]


def test_the_wrong_key_a_missing_key_and_a_damaged_chunk(keys: dict[str, Path]) -> None:
    log = segment(0, 40, {0: 0})
    data, blob, manifest = write_encrypted(log, 64, keys["k1"], compression=True, indexes=INDEXES)
    text = json.dumps(manifest).encode()
    with pytest.raises(ManifestError, match="does not unwrap"):
        parse_manifest(text, "m", Keyring.load([f"k1={keys['k2']}"]))
    no_key = parse_manifest(text, "m", Keyring.load([f"other={keys['k1']}"]))
    with pytest.raises(ManifestError, match="key pair 'k1'"):
        chunked_log(no_key, InMemory(data, "x.log"))
    with pytest.raises(ManifestError, match="key pair 'k1'"):
        read_index(no_key, InMemory(blob, "x.indexes"), "offset")
    m = parse_manifest(text, "m", Keyring.load([f"k1={keys['k1']}"]))
    damaged = bytearray(data)
    damaged[m.chunks[1].transformed_position + 20] ^= 1
    source = chunked_log(m, InMemory(bytes(damaged), "x.log"))
    with pytest.raises(
        KdumpError, match=f"chunk at byte {m.chunks[1].transformed_position} does not decrypt"
    ):
        source.read(0, len(log))


def test_a_key_file_that_is_not_a_key_is_a_usage_error(tmp_path: Path) -> None:
    bad = tmp_path / "bad.pem"
    bad.write_text("not a key")
    with pytest.raises(ValueError, match="bad.pem: not an RSA private key"):
        Keyring.load([str(bad)])


class EncryptedAivenTiered(AivenTiered):
    """tests/test_tiered.py's partition with its remote segments encrypted by the plugin's rules."""

    def __init__(self, root: Path, pem: Path) -> None:
        super().__init__(root)
        from tests.tiered_partition import A, B

        for seg, (first, last, epochs) in ((SEG_A, A), (SEG_B, B)):
            data, blob, manifest = write_encrypted(
                segment(first, last, epochs), 100, pem, compression=True, indexes=INDEXES
            )
            self.file(seg, first, ".log").write_bytes(data)
            self.file(seg, first, ".indexes").write_bytes(blob)
            self.file(seg, first, ".rsm-manifest").write_text(json.dumps(manifest))


def test_kdump_tiered_reads_an_encrypted_partition(keys: dict[str, Path], tmp_path: Path) -> None:
    tiered = EncryptedAivenTiered(tmp_path, keys["k1"])
    code, out = tiered.run("--deep", "--aiven-private-key", f"k1={keys['k1']}")
    assert code == 0, out
    code, out = tiered.run("--deep")  # no key: said, not misread (no key kept from the run before)
    assert code == 1 and _kinds(out) == {"manifest"} and "--aiven-private-key" in out
    code, out = tiered.run("--deep", "--aiven-private-key", f"k1={keys['k2']}")
    assert code == 1 and "does not unwrap" in out


def test_deep_checks_the_indexes_out_of_the_blob(keys: dict[str, Path], tmp_path: Path) -> None:
    tiered = EncryptedAivenTiered(tmp_path, keys["k1"])
    blob = tiered.file(SEG_B, 10, ".indexes")
    data = bytearray(blob.read_bytes())
    data[-1] ^= 1  # the last index's tag
    blob.write_bytes(bytes(data))
    code, out = tiered.run("--deep", "--aiven-private-key", f"k1={keys['k1']}")
    assert code == 1 and _kinds(out) == {"indexes"} and "does not decrypt" in out, out
    blob.write_bytes(bytes(data[:-5]))  # shorter than the manifest's positions: found without --deep
    code, out = tiered.run("--aiven-private-key", f"k1={keys['k1']}")
    assert code == 1 and _kinds(out) == {"size"} and "indexes end at byte" in out, out
