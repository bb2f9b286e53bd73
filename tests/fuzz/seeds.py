"""Seed inputs of the fuzz harness: files built with :mod:`tests.builder` (every format and codec) and
files of the bundled fixture corpus (and of the full reference corpus when asked for).

A :class:`Seed` is a small set of files that belong together (a ``.log`` with its indexes, a partition's
state file) and names the one that gets mutated.  Everything is deterministic: the same seeds in the same
order on every machine.
"""

from __future__ import annotations

import struct
from dataclasses import dataclass
from pathlib import Path

from kdump.storage import clean_shutdown, leader_epoch_checkpoint, offset_checkpoint
from kdump.storage.compression import GZIP, LZ4, NONE, SNAPPY, ZSTD
from kdump.storage.control_record import ControlRecordType
from kdump.storage.producer_snapshot import ProducerSnapshotEntry, encode_producer_snapshot
from kdump.storage.transaction_index import AbortedTxn, encode_transaction_index
from tests import builder
from tests.builder import SimpleRecord

REPO = Path(__file__).resolve().parents[2]
FIXTURE_CORPUS = REPO / "tests" / "fixtures" / "corpus"

LOG = "00000000000000000000.log"
MAX_SEED_FILE = 64 * 1024


@dataclass(frozen=True)
class Seed:
    """Files to write into an empty directory (relative path -> content); ``victim`` is the one mutated."""

    label: str
    files: dict[str, bytes]
    victim: str


def _records(n: int, *, start_ts: int = 1_700_000_000_000, headers: bool = True) -> list[SimpleRecord]:
    out = []
    for i in range(n):
        key = None if i % 3 == 2 else f"key-{i}".encode()
        value = None if i % 5 == 4 else (f"value-{i}-" + "é" * (i % 4)).encode() * (1 + i % 3)
        hs = ((f"h{i}", b"v"), ("n", None)) if headers and i % 2 else ()
        out.append(SimpleRecord(value, key=key, headers=hs, timestamp=start_ts + 7 * i))
    return out


def _legacy_records(n: int) -> list[SimpleRecord]:
    return [SimpleRecord(r.value, key=r.key, timestamp=r.timestamp) for r in _records(n, headers=False)]


def v2_segment(codec: int) -> bytes:
    batches = []
    offset = 0
    for size in (1, 4, 3):
        records = _records(size, start_ts=1_700_000_000_000 + offset)
        batches.append(
            builder.build_v2_batch(
                records,
                base_offset=offset,
                compression=codec,
                producer_id=7,
                producer_epoch=1,
                base_sequence=0,
            )
        )
        offset += size
    batches.append(
        builder.build_v2_batch(
            _records(2), base_offset=offset, compression=codec, log_append_time=1_700_000_009_999
        )
    )
    return builder.build_segment(batches)


def legacy_segment(magic: int, codec: int) -> bytes:
    parts = [
        builder.build_legacy_message_set(_legacy_records(3), magic=magic, base_offset=0, compression=codec),
        builder.build_legacy_message_set(_legacy_records(2), magic=magic, base_offset=3, compression=codec),
    ]
    if magic == 1:
        parts.append(
            builder.build_legacy_message_set(
                _legacy_records(2),
                magic=1,
                base_offset=5,
                compression=codec,
                log_append_time=1_700_000_001_000,
            )
        )
    return builder.build_segment(parts)


def transactional_segment() -> bytes:
    data = builder.build_v2_batch(
        _records(3), base_offset=0, producer_id=42, producer_epoch=0, base_sequence=0, is_transactional=True
    )
    marker = builder.build_end_txn_marker_batch(
        ControlRecordType.ABORT,
        coordinator_epoch=3,
        producer_id=42,
        producer_epoch=0,
        base_offset=3,
        timestamp=1_700_000_000_100,
    )
    commit = builder.build_end_txn_marker_batch(
        ControlRecordType.COMMIT,
        coordinator_epoch=3,
        producer_id=43,
        producer_epoch=0,
        base_offset=4,
        timestamp=1_700_000_000_200,
    )
    return builder.build_segment([data, marker, commit])


def mixed_segment() -> bytes:
    return builder.build_segment(
        [
            builder.build_legacy_message_set(_legacy_records(2), magic=0, base_offset=0),
            builder.build_legacy_message_set(_legacy_records(2), magic=1, base_offset=2, compression=GZIP),
            builder.build_v2_batch(_records(3), base_offset=4, compression=ZSTD),
        ]
    )


def _string16(s: str) -> bytes:
    raw = s.encode()
    return struct.pack(">h", len(raw)) + raw


def consumer_offsets_segment() -> bytes:
    """Two ``__consumer_offsets`` records: an OffsetCommit (key type 1, value v3) and its tombstone."""
    key = struct.pack(">h", 1) + _string16("group-a") + _string16("orders") + struct.pack(">i", 3)
    value = struct.pack(">hqi", 3, 1234, 5) + _string16("meta") + struct.pack(">q", 1_700_000_000_000)
    records = [
        SimpleRecord(value, key=key, timestamp=1_700_000_000_000),
        SimpleRecord(None, key=key, timestamp=1_700_000_000_001),
    ]
    return builder.build_v2_batch(records, base_offset=0)


def transaction_log_segment() -> bytes:
    """A ``__transaction_state`` record: key v0 (transactional id), value v0 with one topic partition."""
    key = struct.pack(">h", 0) + _string16("txn-1")
    value = (
        struct.pack(">hqhib", 0, 42, 0, 60000, 2)
        + struct.pack(">i", 1)
        + _string16("orders")
        + struct.pack(">ii", 1, 0)
        + struct.pack(">qq", 1_700_000_000_000, 1_700_000_000_000)
    )
    return builder.build_v2_batch([SimpleRecord(value, key=key, timestamp=1_700_000_000_000)], base_offset=0)


def many_headers_segment(codec: int) -> bytes:
    """A record of 5,000 headers (past the 4,096 decoded eagerly: kept encoded) between two plain records."""
    headers = tuple((f"h{i % 7}", None if i % 3 else b"x") for i in range(5000))
    records = [*_records(1), SimpleRecord(b"v", key=b"k", headers=headers, timestamp=1_700_000_000_100)]
    records += _records(1, start_ts=1_700_000_000_200)
    return builder.build_v2_batch(records, base_offset=0, compression=codec)


def many_records_segment(codec: int) -> bytes:
    """One batch of 5,000 tiny records (past the 4,096 lines written at once: streamed)."""
    records = [SimpleRecord(None, timestamp=1_700_000_000_000 + i) for i in range(5000)]
    return builder.build_v2_batch(records, base_offset=0, compression=codec)


def many_inner_messages_segment(magic: int, codec: int) -> bytes:
    """A v0/v1 wrapper of 5,000 inner messages (decoded one at a time)."""
    records = [SimpleRecord(b"m", timestamp=1_700_000_000_000) for _ in range(5000)]
    return builder.build_segment(
        [builder.build_legacy_message_set(records, magic=magic, base_offset=0, compression=codec)]
    )


def segment_seeds() -> list[Seed]:
    seeds = [Seed(f"v2-{name}", {LOG: v2_segment(codec)}, LOG) for codec, name in _CODECS]
    for codec, name in ((NONE, "none"), (ZSTD, "zstd")):
        seeds.append(Seed(f"many-headers-{name}", {LOG: many_headers_segment(codec)}, LOG))
        seeds.append(Seed(f"many-records-{name}", {LOG: many_records_segment(codec)}, LOG))
    seeds.append(Seed("many-inner-v0-gzip", {LOG: many_inner_messages_segment(0, GZIP)}, LOG))
    seeds.append(Seed("many-inner-v1-lz4", {LOG: many_inner_messages_segment(1, LZ4)}, LOG))
    for magic in (0, 1):
        for codec, name in _CODECS[:4]:
            seeds.append(Seed(f"v{magic}-{name}", {LOG: legacy_segment(magic, codec)}, LOG))
    seeds.append(Seed("txn-markers", {LOG: transactional_segment()}, LOG))
    seeds.append(Seed("mixed-magic", {LOG: mixed_segment()}, LOG))
    return seeds


_CODECS = ((NONE, "none"), (GZIP, "gzip"), (SNAPPY, "snappy"), (LZ4, "lz4"), (ZSTD, "zstd"))


def corpus_files(root: Path, pattern: str) -> list[Path]:
    """Files of a corpus root matching ``pattern`` (glob, recursive), small enough to be seeds, sorted."""
    if not root.is_dir():
        return []
    return sorted(p for p in root.glob(pattern) if p.is_file() and p.stat().st_size <= MAX_SEED_FILE)


def corpus_roots(full_corpus: Path | None) -> list[Path]:
    roots = [FIXTURE_CORPUS]
    if full_corpus is not None and (full_corpus / "MANIFEST.tsv").is_file():
        roots.append(full_corpus)
    return roots


def corpus_segment_seeds(roots: list[Path]) -> list[Seed]:
    seeds = []
    for root in roots:
        for path in corpus_files(root, "**/*.log"):
            if path.stat().st_size:
                seeds.append(
                    Seed(f"{root.name}:{path.relative_to(root)}", {path.name: path.read_bytes()}, path.name)
                )
    return seeds


def index_seeds(roots: list[Path], suffix: str) -> list[Seed]:
    """Index files with their ``.log`` (and the ``.index`` beside a ``.timeindex``), the index mutated."""
    seeds = []
    for root in roots:
        for path in corpus_files(root, f"**/*{suffix}"):
            files = {path.name: path.read_bytes()}
            stem = path.name.split(".")[0]
            for sibling in (".log", ".index", ".timeindex", ".txnindex"):
                other = path.with_name(stem + sibling)
                if other != path and other.is_file() and other.stat().st_size <= 4 * MAX_SEED_FILE:
                    files[other.name] = other.read_bytes()
            seeds.append(Seed(f"{root.name}:{path.relative_to(root)}", files, path.name))
    return seeds


def built_index_seeds() -> list[Seed]:
    """A built segment with an index entry for every batch (interval 0), from the index rebuilder when it is
    there, else written here."""
    log = v2_segment(NONE) + b""
    positions = []
    offsets = []
    timestamps = []
    pos = 0
    while pos < len(log):
        base, size = struct.unpack_from(">qi", log, pos)
        last_delta = struct.unpack_from(">i", log, pos + 23)[0]
        max_ts = struct.unpack_from(">q", log, pos + 35)[0]
        positions.append(pos)
        offsets.append(base + last_delta)
        timestamps.append(max_ts)
        pos += 12 + size
    index = b"".join(struct.pack(">ii", o, p) for o, p in zip(offsets, positions, strict=True))
    time_index = b"".join(struct.pack(">qi", t, o) for t, o in zip(timestamps, offsets, strict=True))
    files = {LOG: log, "00000000000000000000.index": index, "00000000000000000000.timeindex": time_index}
    return [
        Seed("built.index", files, "00000000000000000000.index"),
        Seed("built.timeindex", files, "00000000000000000000.timeindex"),
    ]


def snapshot_seeds(roots: list[Path]) -> list[Seed]:
    entries = [
        ProducerSnapshotEntry(
            1000 + i, i % 3, 10 * i, 100 + i, i % 5, 1_700_000_000_000 + i, 7, -1 if i % 2 else 50
        )
        for i in range(4)
    ]
    seeds = [
        Seed(
            "built",
            {"00000000000000000104.snapshot": encode_producer_snapshot(entries)},
            "00000000000000000104.snapshot",
        )
    ]
    for root in roots:
        for path in corpus_files(root, "**/*.snapshot"):
            seeds.append(
                Seed(f"{root.name}:{path.relative_to(root)}", {path.name: path.read_bytes()}, path.name)
            )
    return seeds


def txn_index_seeds(roots: list[Path]) -> list[Seed]:
    entries = [AbortedTxn(0, 42 + i, 10 * i, 10 * i + 5, 10 * i + 3) for i in range(3)]
    name = "00000000000000000000.txnindex"
    seeds = [Seed("built", {name: encode_transaction_index(entries), LOG: transactional_segment()}, name)]
    seeds += index_seeds(roots, ".txnindex")
    return seeds


STATE_FILE_NAMES = (
    "recovery-point-offset-checkpoint",
    "replication-offset-checkpoint",
    "log-start-offset-checkpoint",
    "cleaner-offset-checkpoint",
    "leader-epoch-checkpoint",
    "partition.metadata",
    "meta.properties",
    "quorum-state",
    ".kafka_cleanshutdown",
)


def state_file_seeds(roots: list[Path]) -> list[Seed]:
    seeds = [
        Seed(
            "built-offsets",
            {
                "recovery-point-offset-checkpoint": offset_checkpoint.encode_offset_checkpoint(
                    [
                        offset_checkpoint.TopicPartitionOffset("orders", 0, 12),
                        offset_checkpoint.TopicPartitionOffset("a.b-c", 7, 0),
                    ]
                )
            },
            "recovery-point-offset-checkpoint",
        ),
        Seed(
            "built-epochs",
            {
                "leader-epoch-checkpoint": leader_epoch_checkpoint.encode_leader_epoch_checkpoint(
                    [leader_epoch_checkpoint.EpochEntry(0, 0), leader_epoch_checkpoint.EpochEntry(3, 120)]
                )
            },
            "leader-epoch-checkpoint",
        ),
        Seed(
            "built-clean-shutdown",
            {".kafka_cleanshutdown": clean_shutdown.encode_clean_shutdown(17)},
            ".kafka_cleanshutdown",
        ),
    ]
    for root in roots:
        for name in STATE_FILE_NAMES:
            for path in corpus_files(root, f"**/{name}"):
                seeds.append(Seed(f"{root.name}:{path.relative_to(root)}", {name: path.read_bytes()}, name))
    return seeds


def kraft_snapshot_seeds(roots: list[Path]) -> list[Seed]:
    seeds = []
    for root in roots:
        for path in corpus_files(root, "**/*.checkpoint"):
            seeds.append(
                Seed(f"{root.name}:{path.relative_to(root)}", {path.name: path.read_bytes()}, path.name)
            )
    return seeds


#: Internal topics: the decoder flag and the partition directories whose logs it decodes.
INTERNAL_TOPICS = (
    ("--offsets-decoder", "__consumer_offsets-0"),
    ("--transaction-log-decoder", "__transaction_state-0"),
    ("--share-group-state-decoder", "__share_group_state-0"),
    ("--cluster-metadata-decoder", "__cluster_metadata-0"),
)


def internal_topic_seeds(roots: list[Path]) -> list[tuple[str, Seed]]:
    """(decoder flag, seed) pairs: built records of the coordinator topics and corpus logs/snapshots."""
    seeds = [
        ("--offsets-decoder", Seed("built-offsets", {LOG: consumer_offsets_segment()}, LOG)),
        ("--transaction-log-decoder", Seed("built-txn-log", {LOG: transaction_log_segment()}, LOG)),
    ]
    for root in roots:
        for flag, directory in INTERNAL_TOPICS:
            for pattern in (f"**/{directory}/*.log", f"**/{directory}/*.checkpoint"):
                for path in corpus_files(root, pattern):
                    if path.stat().st_size:
                        seeds.append(
                            (
                                flag,
                                Seed(
                                    f"{root.name}:{path.relative_to(root)}",
                                    {path.name: path.read_bytes()},
                                    path.name,
                                ),
                            )
                        )
        for path in corpus_files(root, "**/bootstrap.checkpoint"):
            seeds.append(
                (
                    "--cluster-metadata-decoder",
                    Seed(f"{root.name}:{path.relative_to(root)}", {path.name: path.read_bytes()}, path.name),
                )
            )
    return seeds
