"""Aiven's tiered-storage plugin layout (kdump.storage.aiven_segment) and ``kdump tiered --layout aiven``.

Oracles: the plugin's own test vectors (Aiven-Open/tiered-storage-for-apache-kafka, core/src/test:
``ChunkIndexSerializationTest``'s fixed and variable chunk indexes and its ``ENCODED_CHUNKS``,
``ChunkSizesBinaryCodecTest``'s value lists and bytes per value, ``SegmentManifestV1SerdeTest``'s manifest JSON).
The segment objects themselves are written here from the plugin's source (``KafkaRemoteStorageManager``,
``CompressionChunkEnumeration``, ``SegmentManifestV1``): the plugin (Java, with its storage backends) could not be
run here, so no object it wrote is among the tests -- said in README and man kdump-tiered."""

from __future__ import annotations

import json
import struct
from pathlib import Path

import pytest

from kdump.errors import KdumpError
from kdump.storage.aiven_segment import (
    chunked_log,
    decode_chunk_sizes,
    object_name,
    parse_manifest,
    partition_prefix,
)
from kdump.storage.byte_source import InMemory
from kdump.storage.file_records import FileRecords
from tests.aiven_objects import INDEXES, encode_chunk_sizes, indexes_blob, write_aiven
from tests.corpus import FIXTURE_CORPUS
from tests.tiered_partition import SEG_A, SEG_B, TOPIC_ID, Tiered

ENCODED_CHUNKS = "KLUv/SAPeQAAAAAAAwAAAAoBAAoAAAAe"  # ChunkIndexSerializationTest: 10, 20, 30


def _chunks(manifest_json: str) -> list[tuple[int, int, int, int]]:
    m = parse_manifest(manifest_json.encode(), "m")
    return [
        (c.original_position, c.original_size, c.transformed_position, c.transformed_size) for c in m.chunks
    ]


def test_the_plugins_chunk_indexes() -> None:
    fixed = {"type": "fixed", "originalChunkSize": 100, "originalFileSize": 250, "transformedChunkSize": 110}
    fixed["finalTransformedChunkSize"] = 30
    doc = {"version": "1", "chunkIndex": fixed, "segmentIndexes": INDEXES, "compression": False}
    assert _chunks(json.dumps(doc)) == [(0, 100, 0, 110), (100, 100, 110, 110), (200, 50, 220, 30)]
    variable = {"type": "variable", "originalChunkSize": 100, "originalFileSize": 250}
    doc["chunkIndex"] = {**variable, "transformedChunks": ENCODED_CHUNKS}
    assert _chunks(json.dumps(doc)) == [(0, 100, 0, 10), (100, 100, 10, 20), (200, 50, 30, 30)]


MAX = 2**31 - 1


@pytest.mark.parametrize(
    ("values", "width"),
    [
        ([0, 1000, 2, 44002, 369], 2),
        ([MAX, MAX - 1, MAX - 2, 10], 1),
        ([MAX // 2, MAX // 2 - 1, MAX // 2 - 2, 10], 1),
        ([1, 2, 3, MAX], 1),
        ([1, 0xFF + 10, 0xFF + 20, 0xFF + 30, MAX], 2),
        ([1, 0xFFFF + 10, 0xFFFF + 20, 0xFFFF + 30, MAX], 3),
        ([1, 0xFFFFFF + 10, 0xFFFFFF + 20, 0xFFFFFF + 30, MAX], 4),
        (list(range(0, 200_000_000, 1000)), 4),
    ],
)
def test_chunk_sizes_codec_cases_of_the_plugins_test(values: list[int], width: int) -> None:
    encoded = encode_chunk_sizes(values)
    assert len(encoded) == 4 + 4 + 1 + (len(values) - 1) * width + 4  # ChunkSizesBinaryCodecTest's length
    assert encoded[8] == width
    assert decode_chunk_sizes(encoded) == values


@pytest.mark.parametrize("values", [[], [213], [MAX]])
def test_chunk_sizes_codec_short_lists(values: list[int]) -> None:
    assert decode_chunk_sizes(encode_chunk_sizes(values)) == values


@pytest.mark.parametrize(
    "data", [b"", b"\x00\x00\x00\x05", b"\x7f\xff\xff\xff", b"\x00\x00\x00\x03\x00\x00\x00\x01\x09"]
)
def test_bad_chunk_sizes_are_an_error_not_an_allocation(data: bytes) -> None:
    with pytest.raises(ValueError):
        decode_chunk_sizes(data)


def test_an_encrypted_segment_is_a_clear_error() -> None:
    fixed = {"type": "fixed", "originalChunkSize": 100, "originalFileSize": 1000, "transformedChunkSize": 110}
    fixed["finalTransformedChunkSize"] = 110
    doc = {"version": "1", "chunkIndex": fixed, "segmentIndexes": INDEXES, "compression": False}
    # SegmentManifestV1SerdeTest's WITH_ENCRYPTION_WITHOUT_SECRET_KEY_JSON: dataKey is required (@JsonProperty)
    doc["encryption"] = {"aad": "CgsMDQ=="}
    with pytest.raises(KdumpError, match="dataKey"):
        parse_manifest(json.dumps(doc).encode(), "m")
    doc["encryption"] = {"aad": "CgsMDQ==", "dataKey": "k1:AAECAw=="}  # EncryptedDataKey's form, no key given
    manifest = parse_manifest(json.dumps(doc).encode(), "m")
    assert manifest.encryption is not None and manifest.encryption.key_pair_id == "k1"
    with pytest.raises(KdumpError, match="encrypted .* key pair 'k1'.*--aiven-private-key"):
        chunked_log(manifest, InMemory(b"", "s3://b/k.log"))


# -- writing the plugin's objects (from its source) and reading them back -------------------------------------


def _records(source) -> list[tuple[int, int, bytes | None]]:  # noqa: ANN001
    with FileRecords.open(source) as records:
        return [(r.offset, r.timestamp, r.value) for b in records.batches() for r in b.records()]


@pytest.mark.parametrize("read_ahead", [1, 97, 1 << 20])
def test_a_compressed_variable_chunked_log_reads_back_as_the_segment(read_ahead: int) -> None:
    from tests.tiered_partition import segment

    log = segment(0, 40, {0: 0, 3: 20})
    data, manifest = write_aiven(log, 64, compression=True, variable=True)
    source = chunked_log(
        parse_manifest(json.dumps(manifest).encode(), "m"), InMemory(data, "x.log"), read_ahead=read_ahead
    )
    assert source.size() == len(log)
    assert source.read(0, len(log)) == log
    assert _records(source) == _records(InMemory(log, "x.log"))


#: A segment's five indexes as a broker writes them (a real broker's producer snapshot from the fixture corpus;
#: no transaction index).
INDEX_BYTES = {
    "offset": struct.pack(">ii", 5, 0) + struct.pack(">ii", 12, 400),
    "timestamp": struct.pack(">qi", 1_700_000_000_000, 5),
    "producerSnapshot": (
        FIXTURE_CORPUS / "data" / "idempotent-0" / "00000000000000000341.snapshot"
    ).read_bytes(),
    "leaderEpoch": b"0\n1\n0 0\n",
}


class AivenTiered(Tiered):
    """The partition of tests/test_tiered.py with its remote segments in the plugin's layout."""

    def __init__(self, root: Path, *, compression: bool = True, variable: bool = True) -> None:
        super().__init__(root)
        self.remote_root = root / "bucket-prefix"
        self.remote = self.remote_root / partition_prefix("orders", TOPIC_ID.bytes, 0)
        self.remote.mkdir(parents=True)
        from tests.tiered_partition import A, B, segment

        for seg, (first, last, epochs) in ((SEG_A, A), (SEG_B, B)):
            data, manifest = write_aiven(
                segment(first, last, epochs), 100, compression=compression, variable=variable
            )
            blob, manifest["segmentIndexes"] = indexes_blob(INDEX_BYTES)
            (self.remote / object_name(first, seg.bytes, ".log")).write_bytes(data)
            (self.remote / object_name(first, seg.bytes, ".indexes")).write_bytes(blob)
            (self.remote / object_name(first, seg.bytes, ".rsm-manifest")).write_text(json.dumps(manifest))

    def file(self, seg, first: int, suffix: str) -> Path:  # noqa: ANN001
        return self.remote / object_name(first, seg.bytes, suffix)

    def run(self, *extra: str, remote_root: str | None = None) -> tuple[int, str]:
        return super().run("--layout", "aiven", *extra, remote_root=remote_root)


def _kinds(out: str) -> set[str]:
    return {
        line.split(": ")[1] for line in out.splitlines() if line.count(": ") >= 2 and line.startswith("/")
    }


# compression makes chunk sizes vary: the plugin then writes a variable index (a fixed one is for plain chunks)
@pytest.mark.parametrize(("compression", "variable"), [(True, True), (False, False), (False, True)])
def test_a_sound_aiven_partition_is_one_log(tmp_path: Path, compression: bool, variable: bool) -> None:
    tiered = AivenTiered(tmp_path, compression=compression, variable=variable)
    code, out = tiered.run("--deep")
    assert code == 0, out
    rows = [line.split()[:2] for line in out.splitlines() if line.startswith(("remote", "local"))]
    assert rows == [["remote", "0"], ["remote", "10"], ["local", "10"], ["local", "20"]]
    # the objects are the transformed ones: what --deep read is the segment itself (offsets, epochs checked)
    assert (tiered.file(SEG_A, 0, ".log").stat().st_size < 700) == compression


def test_aiven_inconsistencies_are_found(tmp_path: Path) -> None:
    tiered = AivenTiered(tmp_path)
    tiered.file(SEG_A, 0, ".rsm-manifest").unlink()
    log = tiered.file(SEG_B, 10, ".log")
    log.write_bytes(log.read_bytes()[:-3])
    code, out = tiered.run("--deep")
    assert code == 1
    assert _kinds(out) == {"missing-object", "size"}


def test_a_corrupt_chunk_is_found_by_deep(tmp_path: Path) -> None:
    tiered = AivenTiered(tmp_path)
    log = tiered.file(SEG_B, 10, ".log")
    data = bytearray(log.read_bytes())
    data[4:8] = b"\xff\xff\xff\xff"  # the first frame's header
    log.write_bytes(bytes(data))
    assert tiered.run()[0] == 0  # without --deep the chunks are not read
    code, out = tiered.run("--deep")
    assert code == 1
    assert _kinds(out) == {"log"}
    assert "does not decompress" in out


def test_an_encrypted_aiven_segment_is_said_not_misread(tmp_path: Path) -> None:
    tiered = AivenTiered(tmp_path)
    path = tiered.file(SEG_A, 0, ".rsm-manifest")
    manifest = json.loads(path.read_text())
    manifest["encryption"] = {"aad": "CgsMDQ==", "dataKey": "k1:AAAA"}
    path.write_text(json.dumps(manifest))
    code, out = tiered.run("--deep")
    assert code == 1
    assert _kinds(out) == {"manifest"}
    assert "encrypted" in out
