"""``kdump diff``: replicas after an unclean leader election (built here, expected truncations worked out by hand
from Kafka's leader-epoch protocol) and corpus partitions copied and altered."""

from __future__ import annotations

import json
import shutil
import struct

import crc32c
import pytest
from click.testing import CliRunner

from kdump.cli.commands import cli
from kdump.commands.diff import end_offset_for
from kdump.storage.leader_epoch_checkpoint import EpochEntry, encode_leader_epoch_checkpoint
from kdump.storage.offset_checkpoint import encode_offset_checkpoint
from tests.corpus import CORPUS, corpus_available
from tests.forensic_data import T0, records_batch, write_segment


def run(*args: str) -> tuple[int, str]:
    result = CliRunner().invoke(cli, list(args))
    return result.exit_code, result.output


def _replica(log_dir, batches: list[bytes], epochs: list[tuple[int, int]], hw: int):
    part = log_dir / "t-0"
    write_segment(str(part), 0, batches)
    (part / "leader-epoch-checkpoint").write_bytes(
        encode_leader_epoch_checkpoint([EpochEntry(e, o) for e, o in epochs])
    )
    (log_dir / "replication-offset-checkpoint").write_bytes(encode_offset_checkpoint({("t", 0): hw}))
    return part


def _unclean_election(tmp_path):
    """Broker A led at epoch 0 and wrote 0-14; only 0-9 reached broker B, which was then elected uncleanly at
    epoch 1 and wrote its own 10-12."""
    common = [records_batch(0, [b"a"] * 5, ts=T0), records_batch(5, [b"b"] * 5, ts=T0 + 10)]
    a = _replica(
        tmp_path / "a",
        [*common, records_batch(10, [b"lost"] * 5, ts=T0 + 20)],
        [(0, 0)],
        hw=10,
    )
    b = _replica(
        tmp_path / "b",
        [*common, records_batch(10, [b"new"] * 3, ts=T0 + 30, partition_leader_epoch=1)],
        [(0, 0), (1, 10)],
        hw=13,
    )
    return a, b


def test_end_offset_for_follows_leader_epoch_file_cache():
    epochs = [(0, 0), (2, 10), (4, 30)]
    assert end_offset_for(epochs, 4, 50) == (4, 50)  # the latest epoch: the log end offset
    assert end_offset_for(epochs, 2, 50) == (2, 30)
    assert end_offset_for(epochs, 3, 50) == (2, 30)  # unknown epoch: the floor epoch, the next start
    assert end_offset_for([(2, 10), (4, 30)], 1, 50) == (1, 10)  # below every epoch
    assert end_offset_for(epochs, 5, 50) == (-1, -1)
    assert end_offset_for([], 0, 50) == (-1, -1)


def test_unclean_election(tmp_path):
    a, b = _unclean_election(tmp_path)
    code, out = run("diff", "--json", str(a), str(b))
    assert code == 1
    [p] = [json.loads(x) for x in out.splitlines()]
    assert p["type"] == "diffPartition" and p["diverged"] is True
    [pair] = p["pairs"]
    assert pair["matchingBatches"] == 2
    fd = pair["firstDivergence"]
    assert (fd["offset"], fd["kind"]) == (10, "batch boundaries")
    batch_a, batch_b = fd["batchA"], fd["batchB"]
    assert (batch_a["lastOffset"], batch_b["lastOffset"], batch_b["partitionLeaderEpoch"]) == (14, 12, 1)
    assert [c["batchEpochs"] for c in p["copies"]] == [
        [{"epoch": 0, "startOffset": 0}],
        [{"epoch": 0, "startOffset": 0}, {"epoch": 1, "startOffset": 10}],
    ]
    trunc = {(t["follower"], t["leader"]): (t["truncateTo"], t["removedOffsets"]) for t in p["truncations"]}
    # A follows B (new epoch 2 from B's 13): asks epoch 0, B answers (0, 10): A drops 10-14.
    # B follows A (new epoch 2 from A's 15): asks epoch 1, A answers (0, 15); B's own end of epoch 0 is 10.
    assert trunc == {(0, 1): (10, 5), (1, 0): (10, 3)}
    # the protocol's exchange, as the comment above reasons it out by hand
    steps = {(t["follower"], t["leader"]): t["steps"] for t in p["truncations"]}
    assert steps[(0, 1)] == [
        "leader elected at epoch 2 from offset 13",
        "OffsetsForLeaderEpoch(0) -> epoch 0, end offset 10",
    ]
    assert steps[(1, 0)][:2] == [
        "leader elected at epoch 2 from offset 15",
        "OffsetsForLeaderEpoch(1) -> epoch 0, end offset 15",
    ]

    code, text = run("diff", str(a), str(b))
    assert code == 1 and "t-0: 2 copies DIVERGED" in text
    assert "copies 0/1 first diverge at offset 10 (batch boundaries):" in text


def test_log_dirs_matched_by_partition_and_identical_copies(tmp_path):
    a, b = _unclean_election(tmp_path)
    shutil.copytree(a, tmp_path / "c" / "t-0")
    (tmp_path / "c" / "u-0").mkdir()
    code, out = run("diff", "--json", str(tmp_path / "a"), str(tmp_path / "c"))
    assert code == 0
    [p] = [json.loads(x) for x in out.splitlines()]
    assert p["name"] == "t-0" and "partition" not in p and p["diverged"] is False
    assert all(t["removedOffsets"] == 0 for t in p["truncations"])


def test_usage(tmp_path):
    a, _ = _unclean_election(tmp_path)
    assert run("diff", str(a))[0] == 2


@pytest.mark.skipif(not corpus_available(), reason=f"reference corpus not found at {CORPUS}")
def test_corpus_partition_with_one_changed_record(tmp_path):
    """A copy of txn-0 with one value byte changed: the CRC differs at that batch and only that record is
    named; batches after it match again."""
    src = CORPUS / "data" / "txn-0"
    a = shutil.copytree(src, tmp_path / "a" / "txn-0")
    b = shutil.copytree(src, tmp_path / "b" / "txn-0")
    seg = b / "00000000000000000305.log"
    data = bytearray(seg.read_bytes())
    pos = (
        struct.unpack_from(">i", data, 8)[0] + 12
    )  # the second batch (offsets 306-315; the first is a marker)
    (length,) = struct.unpack_from(">i", data, pos + 8)
    data[pos + 12 + length - 2] ^= 0x01  # the last value byte (before the header count); then a valid CRC-32C
    struct.pack_into(">I", data, pos + 17, crc32c.crc32c(bytes(data[pos + 21 : pos + 12 + length])))
    seg.chmod(0o644)
    seg.write_bytes(bytes(data))
    code, out = run("diff", "--json", str(a), str(b))
    assert code == 1
    [pair] = json.loads(out)["pairs"]
    fd = pair["firstDivergence"]
    assert fd["offset"] == 306 and fd["kind"] == "crc"
    assert pair["divergedBatches"] == 1 and pair["offsetsOnlyInA"] == pair["offsetsOnlyInB"] == 0
    assert len(fd["recordDifferences"]) == 1 and fd["recordDifferences"][0].startswith("offset ")


# -- damaged copies: each copy's problems are its own, told once; the C header runs give the Python walk's facts -


def _damaged_pair(tmp_path):
    batches = [records_batch(i * 5, [b"v%d" % i] * 5, ts=T0 + i) for i in range(12)]
    a = _replica(tmp_path / "a", batches, [(0, 0)], 60)
    damaged = [bytearray(b) for b in batches]
    damaged[3][-2] ^= 0xFF  # a byte of a record: the CRC fails
    struct.pack_into(">i", damaged[8], 8, 5)  # a size field below 14: the walk stops with an error there
    b = _replica(tmp_path / "b", [bytes(x) for x in damaged], [(0, 0)], 60)
    return a, b


@pytest.mark.parametrize("order", ["ab", "ba"])
def test_a_damaged_copys_problems_are_its_own_and_told_once(tmp_path, order) -> None:
    a, b = _damaged_pair(tmp_path)
    first, second = (a, b) if order == "ab" else (b, a)
    _, out = run("diff", "--json", str(first), str(second))
    [obj] = [json.loads(x) for x in out.splitlines()]
    kinds = [[p["kind"] for p in c["problemDetails"]] for c in obj["copies"]]
    damaged = ["corrupt-batch", "corrupt-record"]
    assert kinds == ([[], damaged] if order == "ab" else [damaged, []])
    pair = obj["pairs"][0]
    assert pair["matchingBatches"] == 7 and pair["divergedBatches"] == 1
    assert pair["firstDivergence"]["kind"] == "corrupt" and pair["firstDivergence"]["offset"] == 15


def test_the_c_header_runs_give_the_python_walks_facts(tmp_path, monkeypatch) -> None:
    from kdump.commands import diff

    if diff.DIGESTS is None:
        pytest.skip("kdump._digests is not built (no C compiler) or KDUMP_PURE_PYTHON")
    a, b = _damaged_pair(tmp_path)
    c = _replica(tmp_path / "c", [records_batch(i * 5, [b"w"] * 5, ts=T0) for i in range(14)], [(0, 0)], 70)
    args = ["diff", "--json", str(a), str(b)]
    three = ["diff", "--json", str(a), str(b), str(c)]
    fast = run(*args), run(*three)
    monkeypatch.setattr(diff, "DIGESTS", None)
    assert (run(*args), run(*three)) == fast
