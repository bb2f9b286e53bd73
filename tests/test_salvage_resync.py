"""Salvage's resynchronisation with CRCs from prefix CRCs (``kdump.storage.crc_combine``) finds exactly what it
found summing every candidate's CRC directly (``COMBINED_CRC_FROM = None``): the same kept batches, lost ranges,
offset gaps and output bytes, on segments with scattered random damage (v2 plain and compressed, v0/v1)."""

from __future__ import annotations

import random
import struct
import zlib
from pathlib import Path

import pytest

from kdump.analysis import salvage
from kdump.analysis.salvage import check_batch_at, scan_segment
from kdump.commands.salvage import salvage_segment
from kdump.storage import crc_combine
from kdump.storage.compression import GZIP, LZ4, NONE, SNAPPY, ZSTD
from kdump.storage.file_records import FileRecords
from tests import builder
from tests.builder import SimpleRecord
from tests.test_salvage import SEGMENTS, _damage

NAME = "00000000000000000000.log"


class _CountingPrefixCrcs(crc_combine.PrefixCrcs):
    """PrefixCrcs that counts the ranges it sums and how many of them matched the stored CRC (seen by the
    caller), so that a test can tell the combined path was taken."""

    ranges = 0

    def crc(self, start: int, stop: int) -> int:
        type(self).ranges += 1
        return super().crc(start, stop)


@pytest.fixture
def counting(monkeypatch: pytest.MonkeyPatch) -> type[_CountingPrefixCrcs]:
    _CountingPrefixCrcs.ranges = 0
    monkeypatch.setattr(salvage, "PrefixCrcs", _CountingPrefixCrcs)
    return _CountingPrefixCrcs


def _scattered(data: bytes, rng: random.Random, flips: int) -> bytes:
    damaged = bytearray(data)
    for _ in range(flips):
        damaged[rng.randrange(len(damaged))] ^= rng.randrange(1, 256)
    return bytes(damaged)


def _facts(data: bytes, base_offset: int | None = 0) -> tuple[list, list, list, bytes]:
    result = scan_segment(FileRecords.from_bytes(data), base_offset)
    kept = b"".join(data[b.position : b.position + b.size] for b in result.batches)
    return result.batches, result.lost, result.gaps, kept


def _both_ways(monkeypatch: pytest.MonkeyPatch, data: bytes, combined_from: int, block: int) -> tuple:
    monkeypatch.setattr(salvage, "COMBINED_CRC_FROM", None)
    direct = _facts(data)
    monkeypatch.setattr(salvage, "COMBINED_CRC_FROM", combined_from)
    monkeypatch.setattr(salvage, "_CRC_BLOCK", block)
    return direct, _facts(data)


@pytest.mark.parametrize("seed", range(6))
def test_every_candidate_crc_from_prefixes_finds_the_same(
    seed: int, monkeypatch: pytest.MonkeyPatch, counting: type[_CountingPrefixCrcs]
) -> None:
    """Every candidate's CRC from prefix CRCs (COMBINED_CRC_FROM 0, blocks of a few bytes, so that ranges cut
    blocks everywhere), on the small built segments (v2 in every codec, v0/v1 plain and gzip) and the corpus's,
    with scattered flips and the random damage of test_salvage."""
    rng = random.Random(seed)
    for _ in range(25):
        data = rng.choice(SEGMENTS)
        damaged = (
            _scattered(data, rng, rng.choice((1, 3, 10, 40))) if rng.random() < 0.6 else _damage(data, rng)[0]
        )
        direct, combined = _both_ways(monkeypatch, damaged, 0, rng.choice((1, 5, 64, 4096)))
        assert combined == direct, seed
    assert counting.ranges > 100


def _random_records(rng: random.Random, count: int, at: int, value_size: int) -> list[SimpleRecord]:
    return [
        SimpleRecord(rng.randbytes(value_size), key=b"k%d" % (at + i), timestamp=1_700_000_000_000 + at + i)
        for i in range(count)
    ]


def _big_segment(rng: random.Random, kind: str) -> bytes:
    """About 3 MiB of batches of random (incompressible) values: false candidates in them declare sizes of
    up to the whole file, so long CRCs are combined with the default threshold."""
    if kind.startswith("v2"):
        codec = {"v2": NONE, "v2-gzip": GZIP, "v2-snappy": SNAPPY, "v2-lz4": LZ4, "v2-zstd": ZSTD}[kind]
        return builder.build_segment(
            builder.build_v2_batch(
                _random_records(rng, 20, 20 * i, 1500), base_offset=20 * i, compression=codec
            )
            for i in range(100)
        )
    magic, codec = {"v0": (0, NONE), "v1": (1, NONE), "v0-gzip": (0, GZIP), "v1-gzip": (1, GZIP)}[kind]
    return builder.build_segment(
        builder.build_legacy_message_set(
            _random_records(rng, 10, 10 * i, 1500), magic=magic, base_offset=10 * i, compression=codec
        )
        for i in range(200)
    )


@pytest.mark.parametrize(
    ("kind", "seed"),
    [
        ("v2", 1),
        ("v2", 2),
        ("v2-gzip", 3),
        ("v2-zstd", 4),
        ("v2-lz4", 5),
        ("v0", 6),
        ("v1", 7),
        ("v1-gzip", 8),
    ],
)
def test_scattered_damage_on_megabytes_finds_the_same(
    kind: str, seed: int, monkeypatch: pytest.MonkeyPatch, counting: type[_CountingPrefixCrcs]
) -> None:
    """The default threshold and block on a few MiB with 30 scattered random byte changes: the same result,
    and long candidates did go through prefix CRCs."""
    rng = random.Random(seed)
    data = _scattered(_big_segment(rng, kind), rng, 30)
    direct, combined = _both_ways(monkeypatch, data, salvage.COMBINED_CRC_FROM or 0, salvage._CRC_BLOCK)
    assert combined == direct
    assert direct[1], "the damage lost nothing"
    assert counting.ranges > 0


def test_written_segment_and_indexes_are_the_same(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, counting: type[_CountingPrefixCrcs]
) -> None:
    """End to end (salvage_segment): the same output segment, indexes and counts either way."""
    rng = random.Random(11)
    for n, kind in enumerate(("v2", "v1")):
        source = tmp_path / f"in{n}" / NAME
        source.parent.mkdir()
        source.write_bytes(_scattered(_big_segment(rng, kind), rng, 20))
        written = []
        for way, combined_from in (("direct", None), ("combined", 0)):
            monkeypatch.setattr(salvage, "COMBINED_CRC_FROM", combined_from)
            out = tmp_path / f"{way}{n}"
            result = salvage_segment(str(source), str(out))
            files = sorted(out.iterdir())
            written.append(
                (
                    [p.name for p in files],
                    [p.read_bytes() for p in files],
                    result.batches,
                    result.lost,
                    result.gaps,
                    result.offset_index_entries,
                    result.time_index_entries,
                )
            )
        assert written[0] == written[1]
    assert counting.ranges > 0


def test_prefix_crcs_give_the_same_verdict_at_every_position(monkeypatch: pytest.MonkeyPatch) -> None:
    """At every position of damaged segments, check_batch_at with every CRC from prefix CRCs says what it says
    summing the bytes: the same batch, or the same reason there is none."""
    monkeypatch.setattr(salvage, "COMBINED_CRC_FROM", 0)
    rng = random.Random(21)
    samples = [rng.choice(SEGMENTS) for _ in range(6)] + [_big_segment(rng, "v2")[:200_000]]
    samples.append(
        builder.build_segment(
            builder.build_legacy_message_set(_random_records(rng, 3, 3 * i, 50), magic=0, base_offset=3 * i)
            for i in range(20)
        )
    )
    intact = 0
    for data in samples:
        damaged = _scattered(data, rng, 5)
        end = len(damaged)
        prefix_crcs = salvage._PrefixCrcs(damaged, end)
        prefix_crcs.start_at(0)
        for position in range(end):
            found = check_batch_at(damaged, position, end)
            # the same verdict, and the same words (a CRC mismatch names the same computed CRC)
            assert check_batch_at(damaged, position, end, prefix_crcs) == found, position
            intact += not isinstance(found, str)
    assert intact > 20


def _legacy_message(magic: int, crc_ok: bool, size: int) -> bytes:
    body = bytes([magic, 0]) + (b"\x00" * 8 if magic else b"") + b"\xff\xff\xff\xff" + struct.pack(">i", size)
    body += bytes(size)
    crc = zlib.crc32(body) ^ (0 if crc_ok else 1)
    message = struct.pack(">I", crc) + body
    return struct.pack(">qi", 0, len(message)) + message


def test_a_long_batch_after_damage_is_found(monkeypatch: pytest.MonkeyPatch) -> None:
    """A batch longer than the threshold right after damaged bytes (its CRC from prefix CRCs matches) is kept,
    and one whose CRC does not match is not; both ways agree."""
    rng = random.Random(31)
    big_v2 = builder.build_v2_batch(_random_records(rng, 2, 0, 300_000), base_offset=0)
    for batch in (big_v2, _legacy_message(1, True, 400_000), _legacy_message(0, True, 300_000)):
        for good in (True, False):
            damaged = bytearray(batch)
            if not good:
                damaged[len(damaged) // 2] ^= 0x40
            data = rng.randbytes(40) + bytes(damaged) + rng.randbytes(30)
            direct, combined = _both_ways(monkeypatch, data, salvage.COMBINED_CRC_FROM or 0, 4096)
            assert combined == direct
            assert (direct[3] == bytes(damaged)) is good


def test_zero_skip_lands_where_the_zeros_end() -> None:
    """_skip_zeros (4 KiB first, then doubling chunks): 11 bytes before the first non-zero byte, never before
    where it starts, for zero runs of every size around the chunk sizes."""
    rng = random.Random(41)
    for run in (0, 1, 11, 12, 4095, 4096, 4097, 12_288, 12_300, (1 << 20) + 5, (3 << 20) - 1):
        for lead in (0, 5):
            data = rng.randbytes(lead) + bytes(run) + b"\x07" + rng.randbytes(20)
            position = lead
            expected = position if data[position] else max(position, lead + run - 11)
            assert salvage._skip_zeros(data, position, len(data)) == expected, (run, lead)
            assert salvage._skip_zeros(data, position, lead + run) == (lead + run if run else position)
