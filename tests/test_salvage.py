"""``kdump salvage``: every intact batch of a damaged segment comes back, byte for byte, in a clean segment with
fresh indexes; what is lost is reported; the input is never touched."""

from __future__ import annotations

import hashlib
import json
import os
import random
import struct
import zlib
from pathlib import Path

import crc32c
import pytest
from click.testing import CliRunner

from kdump.analysis.index_verification import verify_segment
from kdump.analysis.salvage import scan_segment
from kdump.cli import cli
from kdump.commands.salvage import SalvageError, salvage_segment
from kdump.storage.compression import GZIP, LZ4, NONE, SNAPPY, ZSTD
from kdump.storage.file_records import FileRecords
from kdump.storage.local_log import LocalLog
from tests import builder
from tests.builder import SimpleRecord
from tests.corpus import CORPUS, FIXTURE_CORPUS, corpus_available

ROOT = CORPUS if corpus_available() else FIXTURE_CORPUS
NAME = "00000000000000000000.log"


def _spans(data: bytes) -> list[tuple[int, int]]:
    """(position, size) of the whole entries of a clean segment."""
    out, position = [], 0
    while position + 12 <= len(data):
        size = 12 + struct.unpack_from(">i", data, position + 8)[0]
        if position + size > len(data):
            break
        out.append((position, size))
        position += size
    return out


def _is_subsequence(needles: list[bytes], haystack: list[bytes]) -> bool:
    it = iter(haystack)
    return all(any(n == h for h in it) for n in needles)


def _salvaged(result, data: bytes) -> list[bytes]:  # noqa: ANN001
    return [data[b.position : b.position + b.size] for b in result.batches]


def _digest(path: Path) -> tuple[str, int]:
    return hashlib.sha256(path.read_bytes()).hexdigest(), path.stat().st_mtime_ns


# -- the damaged corpus cases ------------------------------------------------------------------------------------

DAMAGED = sorted(
    p
    for suffix in ("*.log", "*.checkpoint")
    for p in (ROOT / "damaged").glob(f"*/*/{suffix}")
    if p.stat().st_size or p.parent.parent.name == "empty-log"
)

#: (lost byte ranges, offset gaps) the damage described in CASES.tsv must produce.
EXPECTED = {
    "bad-magic": ([(80, 210, "magic byte 3 is not a known message format")], [(1, 4)]),
    "crc-flip-compressed": ([(918, 1916, "CRC mismatch")], [(40, 79)]),
    "crc-flip-uncompressed": ([(3852, 5810, "CRC mismatch")], [(46, 66)]),
    "garbage-tail": ([(2799, 2899, "runs past the end of the file")], [(50, None)]),
    "oversized-length": ([(2468, 2799, "size field 1048576 runs past the end")], [(45, None)]),
    "truncated-mid-batch": ([(2468, 2633, "size field 319 runs past the end")], [(45, None)]),
    "truncated-in-header": ([(13535, 13565, "runs past the end")], [(157, None)]),
    "empty-log": ([], []),
}


@pytest.mark.parametrize("damaged", DAMAGED, ids=lambda p: str(p.relative_to(ROOT / "damaged")))
def test_every_damaged_corpus_segment(damaged: Path, tmp_path: Path) -> None:
    case = damaged.relative_to(ROOT / "damaged").parts[0]
    before = _digest(damaged)
    result = salvage_segment(str(damaged), str(tmp_path / "out"))
    assert _digest(damaged) == before
    data = damaged.read_bytes()
    out = tmp_path / "out" / damaged.name
    assert out.read_bytes() == b"".join(_salvaged(result, data))
    # every batch of the undamaged original that is still whole where it was comes back
    original = ROOT / "data" / damaged.relative_to(ROOT / "damaged" / case)
    if original.exists():
        clean = original.read_bytes()
        untouched = [clean[p : p + n] for p, n in _spans(clean) if data[p : p + n] == clean[p : p + n]]
        assert _is_subsequence(untouched, _salvaged(result, data))
        assert len(result.batches) == len(untouched)
    if case in EXPECTED:
        lost, gaps = EXPECTED[case]
        assert [(r.start, r.end) for r in result.lost] == [(a, b) for a, b, _ in lost]
        for r, (_, _, reason) in zip(result.lost, lost, strict=True):
            assert reason in r.reason
        assert [(g.first, g.last) for g in result.gaps] == gaps
    if damaged.suffix == ".log":
        problems = [
            p for s in LocalLog.scan(str(tmp_path / "out")).segments for p in verify_segment(s).problems
        ]
        assert problems == []


# -- randomised damage -------------------------------------------------------------------------------------------


def _built_segments() -> list[bytes]:
    def records(n: int, at: int) -> list[SimpleRecord]:
        return [
            SimpleRecord(
                f"value-{at + i}".encode() * 5,
                key=f"k{at + i}".encode(),
                timestamp=1_700_000_000_000 + at + i,
            )
            for i in range(n)
        ]

    segments = [
        builder.build_segment(
            builder.build_v2_batch(records(4, 4 * i), base_offset=4 * i, compression=codec) for i in range(12)
        )
        for codec in (NONE, GZIP, SNAPPY, LZ4, ZSTD)
    ]
    for magic in (0, 1):
        for codec in (NONE, GZIP):
            segments.append(
                builder.build_segment(
                    builder.build_legacy_message_set(
                        records(3, 3 * i), magic=magic, base_offset=3 * i, compression=codec
                    )
                    for i in range(10)
                )
            )
    return segments


def _corpus_segments() -> list[bytes]:
    paths = sorted(p for p in (ROOT / "data").glob("*/*.log") if 0 < p.stat().st_size <= 64 * 1024)
    paths += sorted((ROOT / "data-kafka39-zk").glob("*/*.log"))[:4]
    return [p.read_bytes() for p in paths if p.stat().st_size]


SEGMENTS = _built_segments() + _corpus_segments()


def _damage(data: bytes, rng: random.Random) -> tuple[bytes, list[bytes]]:
    """Damage ``data`` at a random place; return the damaged bytes and the batches the damage did not touch."""
    spans = _spans(data)
    kind = rng.choice(("flip", "flip", "zero", "overwrite", "truncate", "insert", "insert"))
    at = rng.randrange(len(data))
    if kind == "truncate":
        return data[:at], [data[p : p + n] for p, n in spans if p + n <= at]
    if kind == "insert":
        inserted = bytes(rng.randrange(256) for _ in range(rng.choice((1, 3, 12, 61, 300))))
        return data[:at] + inserted + data[at:], [data[p : p + n] for p, n in spans if p + n <= at or p >= at]
    length = rng.choice((1, 1, 2, 4, 8, 30, 200))
    end = min(len(data), at + length)
    damaged = bytearray(data)
    if kind == "flip":
        for _ in range(rng.choice((1, 2, 8))):
            damaged[rng.randrange(at, end)] ^= 1 << rng.randrange(8)
    elif kind == "zero":
        damaged[at:end] = bytes(end - at)
    else:
        damaged[at:end] = bytes(rng.randrange(256) for _ in range(end - at))
    touched = {i for i in range(at, end) if damaged[i] != data[i]}
    return bytes(damaged), [data[p : p + n] for p, n in spans if not any(p <= i < p + n for i in touched)]


@pytest.mark.parametrize("seed", range(8))
def test_random_damage_loses_only_damaged_batches(seed: int) -> None:
    rng = random.Random(seed)
    for _ in range(60):
        data = rng.choice(SEGMENTS)
        damaged, untouched = _damage(data, rng)
        result = scan_segment(FileRecords.from_bytes(damaged), 0)
        kept = _salvaged(result, damaged)
        assert _is_subsequence(untouched, kept), (seed, [(r.start, r.end, r.reason) for r in result.lost])
        covered = sorted(
            [(b.position, b.position + b.size) for b in result.batches]
            + [(r.start, r.end) for r in result.lost]
        )
        assert [a for a, _ in covered] == [0] + [b for _, b in covered[:-1]] and (
            covered[-1][1] if covered else 0
        ) == len(damaged)


def test_random_damage_end_to_end(tmp_path: Path) -> None:
    """The whole path on a few damaged files: written segment, fresh indexes that verify, a clean re-salvage."""
    rng = random.Random(99)
    for n in range(6):
        data = SEGMENTS[n % len(SEGMENTS)]
        damaged, untouched = _damage(data, rng)
        source = tmp_path / f"in{n}" / NAME
        source.parent.mkdir()
        source.write_bytes(damaged)
        out = tmp_path / f"out{n}"
        result = salvage_segment(str(source), str(out))
        written = (out / NAME).read_bytes()
        assert _is_subsequence(untouched, _spans_bytes(written))
        assert [p for s in LocalLog.scan(str(out)).segments for p in verify_segment(s).problems] == []
        again = salvage_segment(str(out / NAME), str(tmp_path / f"again{n}"))
        assert again.intact and (tmp_path / f"again{n}" / NAME).read_bytes() == written
        assert result.offset_index_entries == again.offset_index_entries


def _spans_bytes(data: bytes) -> list[bytes]:
    return [data[p : p + n] for p, n in _spans(data)]


# -- offsets the CRC does not cover ------------------------------------------------------------------------------


def _five_batches() -> list[bytes]:
    return [
        builder.build_v2_batch([SimpleRecord(b"v", timestamp=1)] * 5, base_offset=5 * i) for i in range(5)
    ]


def _with_offset(batch: bytes, offset: int) -> bytes:
    return struct.pack(">q", offset) + batch[8:]  # the CRC still verifies: it does not cover the offset


@pytest.mark.parametrize(
    ("damaged", "offset", "dropped"),
    [(1, 1, 1), (0, 3, 0), (2, 1 << 40, 2), (4, 2, 4)],
    ids=["into-previous", "first-into-next", "far-ahead", "last-backwards"],
)
def test_a_damaged_offset_field_drops_that_batch_only(damaged: int, offset: int, dropped: int) -> None:
    batches = _five_batches()
    batches[damaged] = _with_offset(batches[damaged], offset)
    data = b"".join(batches)
    result = scan_segment(FileRecords.from_bytes(data), 0)
    assert _salvaged(result, data) == [b for i, b in enumerate(batches) if i != dropped]
    (lost,) = result.lost
    assert "do not" in lost.reason and lost.length == len(batches[dropped])


def test_legacy_crc_is_checked(tmp_path: Path) -> None:
    entries = [
        builder.build_legacy_message(SimpleRecord(b"x" * 20, timestamp=5), magic=1, offset=i)
        for i in range(4)
    ]
    bad = bytearray(entries[2])
    bad[-1] ^= 1
    data = entries[0] + entries[1] + bytes(bad) + entries[3]
    result = scan_segment(FileRecords.from_bytes(data), 0)
    assert _salvaged(result, data) == [entries[0], entries[1], entries[3]]
    assert result.lost[0].reason.startswith("CRC mismatch") and zlib.crc32(bytes(bad[16:])) != 0
    assert [(g.first, g.last) for g in result.gaps] == [(2, 2)]


def test_v2_crc_is_checked() -> None:
    batches = _five_batches()
    bad = bytearray(batches[3])
    bad[70] ^= 0x40
    assert crc32c.crc32c(bytes(bad[21:])) != struct.unpack_from(">I", bad, 17)[0]
    data = b"".join([*batches[:3], bytes(bad), batches[4]])
    result = scan_segment(FileRecords.from_bytes(data), 0)
    assert _salvaged(result, data) == batches[:3] + batches[4:]
    assert [(g.first, g.last) for g in result.gaps] == [(15, 19)]


def test_zero_filled_tail_is_skipped_quickly() -> None:
    batches = _five_batches()
    data = b"".join(batches) + bytes(64 << 20)  # a preallocated segment after an unclean shutdown
    result = scan_segment(FileRecords.from_bytes(data), 0)
    assert len(result.batches) == 5 and [(r.start, r.end) for r in result.lost] == [
        (len(data) - (64 << 20), len(data))
    ]


# -- the command -------------------------------------------------------------------------------------------------


def _segment_dir(tmp_path: Path, data: bytes) -> Path:
    source = tmp_path / "orders-0" / NAME
    source.parent.mkdir()
    source.write_bytes(data)
    return source


def test_cli_text_report(tmp_path: Path) -> None:
    batches = _five_batches()
    bad = bytearray(batches[1])
    bad[30] ^= 1
    source = _segment_dir(tmp_path, b"".join([batches[0], bytes(bad), *batches[2:]]))
    before = _digest(source)
    result = CliRunner().invoke(cli, ["salvage", str(source), "--out", str(tmp_path / "out")])
    assert result.exit_code == 1, result.output
    lines = result.output.splitlines()
    n = len(batches[0])
    assert lines[0] == (
        f"{source}: byte {n}: lost bytes {n}-{2 * n - 1} ({n} bytes): CRC mismatch "
        f"(stored {struct.unpack_from('>I', bad, 17)[0]}, computed {crc32c.crc32c(bytes(bad[21:]))})"
    )
    assert lines[1] == f"{source}: byte {n}: missing offsets 5-9 (5 offsets)"
    assert lines[2].startswith(f"Salvaged {source} to {tmp_path / 'out' / NAME}: kept 4 batches")
    assert "lost 1 range" in lines[2] and "5 offsets missing" in lines[2] and len(lines) == 3
    assert _digest(source) == before
    assert (tmp_path / "out" / NAME).read_bytes() == b"".join([batches[0], *batches[2:]])
    for suffix in (".index", ".timeindex"):
        assert (tmp_path / "out" / NAME.replace(".log", suffix)).exists()


def test_cli_json_report_and_clean_segment(tmp_path: Path) -> None:
    batches = _five_batches()
    source = _segment_dir(tmp_path, b"".join(batches) + b"\x01\x02\x03")
    result = CliRunner().invoke(cli, ["salvage", "--json", str(source), "--out", str(tmp_path / "out")])
    assert result.exit_code == 1
    objects = [json.loads(line) for line in result.output.splitlines()]
    assert [o["type"] for o in objects] == ["lost", "gap", "salvageSummary"]
    assert objects[0]["start"] == sum(map(len, batches)) and objects[0]["bytes"] == 3
    assert objects[1]["firstOffset"] == 25 and objects[1]["lastOffset"] is None
    assert objects[2]["keptBatches"] == 5 and objects[2]["missingOffsets"] is None

    (tmp_path / "c").mkdir()
    clean = _segment_dir(tmp_path / "c", b"".join(batches))
    result = CliRunner().invoke(cli, ["salvage", str(clean), "--out", str(tmp_path / "c-out")])
    assert result.exit_code == 0 and "nothing lost" in result.output


def test_cli_refuses_the_inputs_directory_and_existing_files(tmp_path: Path) -> None:
    source = _segment_dir(tmp_path, b"".join(_five_batches()))
    before = sorted(os.listdir(source.parent))
    runner = CliRunner()
    result = runner.invoke(cli, ["salvage", str(source), "--out", str(source.parent)])
    assert result.exit_code == 2 and "input's own directory" in result.output
    link = tmp_path / "link"
    link.symlink_to(source.parent)
    assert runner.invoke(cli, ["salvage", str(source), "--out", str(link)]).exit_code == 2
    assert sorted(os.listdir(source.parent)) == before
    assert runner.invoke(cli, ["salvage", str(source), "--out", str(tmp_path / "out")]).exit_code == 0
    again = runner.invoke(cli, ["salvage", str(source), "--out", str(tmp_path / "out")])
    assert again.exit_code == 2 and "exists" in again.output
    with pytest.raises(SalvageError):
        salvage_segment(str(source), str(source.parent))


def test_kraft_snapshot_gets_no_indexes(tmp_path: Path) -> None:
    snapshot = sorted((ROOT / "data" / "__cluster_metadata-0").glob("*.checkpoint"))[-1]
    result = salvage_segment(str(snapshot), str(tmp_path))
    assert result.intact and result.offset_index is None
    assert (tmp_path / snapshot.name).read_bytes() == snapshot.read_bytes()
    assert sorted(os.listdir(tmp_path)) == [snapshot.name]


def test_a_block_overwritten_by_the_next_segment_is_dropped_and_the_batches_after_it_kept(
    tmp_path: Path,
) -> None:
    """Segment 0 (offsets 0-199, one record a batch) with batches 50-129 overwritten in place by the next
    segment's first 80 batches (offsets 1000-1079, intact, same sizes): more batches than the tail after the block,
    so the longest increasing chain alone would keep the block and drop offsets 130-199.  The next segment's base
    offset (its file name) bounds this segment's offsets: the block is dropped, the tail kept."""

    def batch(offset: int) -> bytes:
        return builder.build_v2_batch(
            [SimpleRecord(b"value-%06d" % offset, key=b"k", timestamp=1_700_000_000_000 + offset)],
            base_offset=offset,
        )

    original = [batch(o) for o in range(200)]
    block = [batch(1000 + i) for i in range(80)]
    assert {len(b) for b in original} == {len(b) for b in block}
    damaged = b"".join(original[:50] + block + original[130:])
    directory = tmp_path / "orders-0"
    directory.mkdir()
    (directory / "00000000000000000000.log").write_bytes(damaged)
    (directory / "00000000000000001000.log").write_bytes(b"".join(batch(1000 + i) for i in range(100)))
    result = salvage_segment(str(directory / "00000000000000000000.log"), str(tmp_path / "out"))
    kept = [(b.first_offset, b.last_offset) for b in result.batches]
    assert kept == [(o, o) for o in list(range(50)) + list(range(130, 200))]
    (lost,) = result.lost
    assert "they belong to the next segment (base offset 1000" in lost.reason
    assert (lost.start, lost.end) == (50 * len(original[0]), 130 * len(original[0]))
    # without the next segment beside it, nothing says the block is foreign: the longest chain wins
    alone = scan_segment(FileRecords.from_bytes(damaged), 0)
    assert [b.first_offset for b in alone.batches][50] == 1000


# -- each rule of "an intact batch at this position", pinned to its reason ---------------------------------------


def _v2_entry(offset: int, last_offset_delta: int, max_timestamp: int, body: bytes = b"") -> bytes:
    """A hand-encoded v2 batch (no records) whose CRC-32C (the crc32c package) covers bytes 21..end."""
    after_crc = struct.pack(">hiqqqhii", 0, last_offset_delta, 1, max_timestamp, -1, -1, -1, 0) + body
    head = struct.pack(">qiib", offset, 9 + len(after_crc), 0, 2)
    return head + struct.pack(">I", crc32c.crc32c(after_crc)) + after_crc


def _legacy_entry(offset: int, magic: int, attributes: int, rest: bytes) -> bytes:
    """A hand-encoded v0/v1 entry whose CRC-32 (zlib) covers the message from its magic byte on."""
    body = bytes([magic, attributes]) + rest
    return struct.pack(">qiI", offset, 4 + len(body), zlib.crc32(body)) + body


_GOOD = _v2_entry(100, 0, 7)


@pytest.mark.parametrize(
    ("damaged", "reason"),
    [
        (b"\x01" * 10, "only 10 bytes left, too few for a batch header (a torn write)"),
        (struct.pack(">qib", 0, 13, 2) + bytes(8), "size field 13 is below the smallest message (14 bytes)"),
        (
            struct.pack(">qi", 0, 40) + b"\x00" * 4 + b"\x02" + bytes(35),
            "v2 batch of 52 bytes is shorter than its 61-byte header",
        ),
        (_legacy_entry(0, 1, 0, bytes(12)), "v1 message of 18 bytes is shorter than its 22-byte header"),
        (
            struct.pack(">qi", 0, 20) + b"\x00" * 4 + b"\x07" + bytes(15),
            "magic byte 7 is not a known message format",
        ),
        (
            struct.pack(">qi", 0, 20) + b"\x00" * 4 + b"\x80" + bytes(15),
            "magic byte 128 is not a known message format",
        ),
    ],
    ids=["torn-header", "size-below-14", "v2-short", "v1-short", "magic-7", "magic-0x80"],
)
def test_each_framing_rule_has_its_reason(damaged: bytes, reason: str) -> None:
    data = damaged + _GOOD if not reason.startswith("only") else _GOOD + damaged
    result = scan_segment(FileRecords.from_bytes(data))
    assert _salvaged(result, data) == [_GOOD]
    (lost,) = result.lost
    assert lost.reason == reason
    assert (lost.start, lost.end) == (
        (len(_GOOD), len(data)) if reason.startswith("only") else (0, len(damaged))
    )


def test_crc_mismatch_reasons_name_both_crcs() -> None:
    v2 = bytearray(_v2_entry(0, 0, 7, b"abc"))
    v2[-1] ^= 1
    v1 = bytearray(_legacy_entry(1, 1, 0, struct.pack(">qii", 5, -1, 1) + b"x"))
    v1[-1] ^= 1
    for bad, stored, computed in [
        (v2, struct.unpack_from(">I", v2, 17)[0], crc32c.crc32c(bytes(v2[21:]))),
        (v1, struct.unpack_from(">I", v1, 12)[0], zlib.crc32(bytes(v1[16:]))),
    ]:
        result = scan_segment(FileRecords.from_bytes(bytes(bad) + _GOOD))
        assert [r.reason for r in result.lost] == [f"CRC mismatch (stored {stored}, computed {computed})"]


def test_offsets_and_timestamps_of_kept_batches() -> None:
    """A v2 batch's last offset is base + lastOffsetDelta and its max timestamp the header's; a v1 message's
    timestamp is its own, a v0 message's -1; a compressed v1 wrapper spans its inner offsets (relative to the
    wrapper's, which is the last), a v0 wrapper's are absolute."""
    v1_wrapper = builder.build_legacy_message_set(
        [SimpleRecord(b"a", timestamp=3)] * 3, magic=1, base_offset=20, compression=GZIP
    )
    v0_wrapper = builder.build_legacy_message_set(
        [SimpleRecord(b"a")] * 2, magic=0, base_offset=23, compression=GZIP
    )
    entries = [
        _v2_entry(10, 4, 99),
        _legacy_entry(15, 1, 0, struct.pack(">qii", 42, -1, 1) + b"x"),
        _legacy_entry(16, 0, 0, struct.pack(">ii", -1, 1) + b"x"),
        v1_wrapper,
        v0_wrapper,
    ]
    result = scan_segment(FileRecords.from_bytes(b"".join(entries)))
    assert result.intact
    assert [(b.magic, b.first_offset, b.last_offset, b.max_timestamp) for b in result.batches] == [
        (2, 10, 14, 99),
        (1, 15, 15, 42),
        (0, 16, 16, -1),
        (1, 20, 22, 3),
        (0, 23, 24, -1),
    ]


def test_a_v0_wrapper_whose_offset_is_not_its_last_inner_offset_is_lost() -> None:
    wrapper = builder.build_legacy_message_set(
        [SimpleRecord(b"a")] * 3, magic=0, base_offset=0, compression=GZIP
    )
    data = _with_offset(wrapper, 7) + _GOOD
    result = scan_segment(FileRecords.from_bytes(data))
    assert _salvaged(result, data) == [_GOOD]
    assert [r.reason for r in result.lost] == [
        "v0 wrapper offset 7 is not its last inner offset 2 (the offset field is not covered by the CRC)"
    ]


def test_batches_that_cannot_be_kept_have_their_reasons() -> None:
    backwards = _v2_entry(50, -3, 1)  # the CRC covers lastOffsetDelta: intact, but its offsets go backwards
    far = _v2_entry(1 << 40, 0, 1)
    data = backwards + far + _GOOD
    result = scan_segment(FileRecords.from_bytes(data), 0)
    assert _salvaged(result, data) == [_GOOD]
    assert [r.reason for r in result.lost] == [
        "intact batch dropped: its last offset 47 is below its first offset 50"
    ]
    assert [(r.start, r.end) for r in result.lost] == [(0, len(backwards) + len(far))]
    result = scan_segment(FileRecords.from_bytes(far + _GOOD), 0)
    assert [r.reason for r in result.lost] == [
        f"intact batch with offsets {1 << 40}-{1 << 40} dropped: they do not fit the index of a segment with base "
        "offset 0"
    ]
