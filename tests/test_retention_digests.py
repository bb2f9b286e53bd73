"""``kdump retention``'s C path (``kdump/_digests.c``: keys by MD5 digest in 24-byte slots, as Kafka's
``SkimpyOffsetMap``) gives the pure-Python path's answers, record for record: on random compacted partitions
(several segments, tombstones with and without a delete horizon, keys missing, an aborted transaction, every
codec, a corrupt batch), in memory and spilled to disk.  The pure-Python path's answers are themselves checked
against the real cleaner (tests/test_broker_oracle.py's cleaner scenarios, tests/test_broker_rules.py)."""

from __future__ import annotations

import hashlib
import json
import random
from pathlib import Path

import pytest
from click.testing import CliRunner

from kdump.analysis import cleaning, digest_map
from kdump.cli.commands import cli
from kdump.commands import retention
from kdump.storage.compression import GZIP, LZ4, NONE, SNAPPY, ZSTD
from kdump.storage.control_record import ControlRecordType
from kdump.storage.transaction_index import AbortedTxn, encode_transaction_index
from tests.builder import SimpleRecord, build_end_txn_marker_batch, build_v2_batch

pytestmark = pytest.mark.skipif(
    digest_map.DIGESTS is None, reason="kdump._digests is not built (no C compiler) or KDUMP_PURE_PYTHON"
)


def _partition(tmp_path: Path, seed: int, corrupt: bool = False) -> Path:
    rnd = random.Random(seed)
    part = tmp_path / f"compacted{seed}-0"
    part.mkdir()
    offset = 0
    aborted: list[AbortedTxn] = []
    keys = [b"k%d" % i for i in range(rnd.randint(5, 400))] + [b"", b"x" * 300]
    for _segment in range(rnd.randint(1, 4)):
        base = offset
        batches = []
        for _ in range(rnd.randint(1, 12)):
            n = rnd.randint(1, 60)
            records = [
                SimpleRecord(
                    None if rnd.random() < 0.2 else b"v%d" % rnd.randint(0, 9),
                    key=None if rnd.random() < 0.05 else rnd.choice(keys),
                )
                for _ in range(n)
            ]
            codec = rnd.choice([NONE, NONE, GZIP, SNAPPY, LZ4, ZSTD])
            horizon = rnd.choice([None, None, 1_000, 10_000_000])
            if rnd.random() < 0.1:  # an aborted transaction and its marker
                batches.append(
                    build_v2_batch(
                        records, base_offset=offset, compression=codec, producer_id=7, producer_epoch=0,
                        base_sequence=0, is_transactional=True,
                    )
                )  # fmt: skip
                aborted.append(AbortedTxn(0, 7, offset, offset + n, offset + n))
                offset += n
                batches.append(
                    build_end_txn_marker_batch(
                        ControlRecordType.ABORT, coordinator_epoch=0, producer_id=7, producer_epoch=0,
                        base_offset=offset, timestamp=1,
                    )
                )  # fmt: skip
                offset += 1
                continue
            batches.append(
                build_v2_batch(records, base_offset=offset, compression=codec, delete_horizon_ms=horizon)
            )
            offset += n
        data = bytearray(b"".join(batches))
        if corrupt and _segment == 0:
            data[len(data) // 2] ^= 0xFF
        (part / f"{base:020d}.log").write_bytes(bytes(data))
    if aborted:
        (part / "00000000000000000000.txnindex").write_bytes(encode_transaction_index(aborted))
    return part


def _retention(part: Path, checkpoint: int | None) -> list[dict]:
    args = ["retention", "--json", "--now", "5000000", "--config", "cleanup.policy=compact", str(part)]
    if checkpoint is not None:
        (part.parent / "cleaner-offset-checkpoint").write_text(f"0\n1\n{part.name[:-2]} 0 {checkpoint}\n")
    result = CliRunner().invoke(cli, args, catch_exceptions=False)
    return [json.loads(line) for line in result.output.splitlines()]


@pytest.mark.parametrize("seed", range(12))
@pytest.mark.parametrize("budget", [None, 3000], ids=["in-memory", "spilled"])
def test_the_digest_path_gives_the_pure_python_answers(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, seed: int, budget: int | None
) -> None:
    part = _partition(tmp_path, seed, corrupt=seed % 5 == 4)
    checkpoint = None if seed % 3 else random.Random(seed).randint(0, 50)
    if budget is not None:
        monkeypatch.setattr(retention, "BUDGET_BYTES", budget)
    fast = _retention(part, checkpoint)
    monkeypatch.setattr(retention, "DIGESTS", None)
    monkeypatch.setattr(cleaning, "DIGESTS", None)
    assert fast == _retention(part, checkpoint)
    compaction = fast[0]["compaction"]
    assert compaction["records"] > 0


def test_the_digests_are_md5() -> None:
    from tests.hostile_batches import record, zigzag_varint

    rnd = random.Random(5)
    keys = [bytes(rnd.getrandbits(8) for _ in range(n)) for n in [*range(130), 1000, 70_000]]
    plain = b"".join(record(i, zigzag_varint(len(k)) + k + b"\x01\x00") for i, k in enumerate(keys)) + record(
        len(keys), b"\x01\x02v\x00"
    )  # no key
    entries = digest_map.DIGESTS.key_digests(plain, 0, len(plain), len(keys) + 1, 100, True)
    assert [entries[i * 25 : i * 25 + 16] for i in range(len(keys))] == [
        hashlib.md5(k).digest() for k in keys
    ]
    assert [
        int.from_bytes(entries[i * 25 + 16 : i * 25 + 24], "little") for i in range(len(keys) + 1)
    ] == list(range(100, 101 + len(keys)))
    assert digest_map.flags_of(entries) == b"\x03" * len(keys) + b"\x00"
    # malformed or short: None, the records then decide
    assert digest_map.DIGESTS.key_digests(plain, 0, len(plain) - 1, len(keys) + 1, 100, True) is None
    assert digest_map.DIGESTS.key_digests(plain, 0, len(plain), len(keys), 100, True) is None


def test_a_census_splits_a_bucket_that_does_not_fit(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(digest_map, "BUCKETS", 2)
    census = digest_map.DigestCensus(64 * 24)  # 48 keys before it spills
    reference: dict[bytes, bool] = {}
    for i in range(5000):
        key = b"%d" % ((i * 31) % 1700)
        tomb = i % 5 == 0
        reference[hashlib.md5(key).digest()] = tomb
        census.add(hashlib.md5(key).digest() + i.to_bytes(8, "little") + bytes([1 | tomb << 1]))
    assert census.counts() == (len(reference), sum(reference.values()))
