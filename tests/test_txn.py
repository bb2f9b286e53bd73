"""``kdump txn``: last stable offset, open/aborted/hanging transactions, on built situations and the corpus."""

from __future__ import annotations

import json
import os
import re
import struct

import pytest
from click.testing import CliRunner

from kdump.cli.commands import cli
from kdump.commands.txn import TxnCommand
from kdump.storage.producer_snapshot import ProducerSnapshotEntry, encode_producer_snapshot
from tests.corpus import CORPUS, corpus_available
from tests.forensic_data import T0, stuck_transaction_log_dir


def run(*args: str) -> tuple[int, str]:
    result = CliRunner().invoke(cli, list(args))
    return result.exit_code, result.output


def test_producer_killed_mid_transaction_without_coordinator(tmp_path):
    stuck_transaction_log_dir(str(tmp_path), coordinator_status=None)
    [f] = TxnCommand([str(tmp_path / "txn-0")]).facts()
    assert (f.first_unstable_offset, f.last_stable_offset, f.high_watermark, f.log_end_offset) == (
        4,
        4,
        10,
        10,
    )
    [o] = f.open
    assert (o.producer_id, o.producer_epoch, o.first_offset, o.last_offset) == (7, 1, 4, 5)
    assert (o.first_timestamp, o.last_timestamp) == (T0 + 100, T0 + 101)
    assert o.age_ms == (T0 + 300) - (T0 + 100)  # against the newest record
    assert not o.hanging  # 200 ms is within transaction.max.timeout.ms
    assert (f.stats.commits, f.stats.aborts) == (1, 1)
    assert f.stats.commit_durations == [50] and f.stats.abort_durations == [30]
    assert [(a.producer_id, a.first_offset, a.last_offset) for a in f.aborted] == [(5, 6, 8)]
    assert f.coordinator_source is None

    code, out = run("txn", "--now", str(T0 + 3_600_000), str(tmp_path / "txn-0"))
    assert code == 1
    assert "last stable offset 4 (first unstable offset 4" in out
    assert (
        "kafka-transactions.sh --bootstrap-server BROKER:9092 abort --topic txn --partition 0 --start-offset 4"
        in out
    )


@pytest.mark.parametrize(
    ("status", "hanging", "reason"),
    [(1, False, "Ongoing"), (4, True, "CompleteCommit"), (5, True, "CompleteAbort")],
)
def test_cross_check_with_transaction_state(tmp_path, status, hanging, reason):
    stuck_transaction_log_dir(str(tmp_path), coordinator_status=status)
    code, out = run("txn", "--json", str(tmp_path))
    lines = [json.loads(x) for x in out.splitlines()]
    assert [x["type"] for x in lines] == ["txnPartition"]  # internal topics are not listed
    [o] = lines[0]["openTransactions"]
    assert o["coordinator"]["transactionalId"] == "app-7"
    assert o["coordinator"]["timeoutMs"] == 60000
    assert o["hanging"] is hanging and reason in o["reason"]
    assert (o["abortCommand"] is not None) is hanging
    assert code == (1 if hanging else 0)


def test_snapshot_then_replay(tmp_path):
    """The transaction opened before the producer snapshot comes from it (``currentTxnFirstOffset``)."""
    stuck_transaction_log_dir(str(tmp_path), coordinator_status=None)
    part = tmp_path / "txn-0"
    entry = ProducerSnapshotEntry(7, 1, 1, 5, 1, T0 + 101, 0, 4)
    (part / "00000000000000000006.snapshot").write_bytes(encode_producer_snapshot([entry]))
    [f] = TxnCommand([str(part)]).facts()
    [o] = f.open
    assert (o.producer_id, o.first_offset, f.last_stable_offset) == (7, 4, 4)
    assert o.first_timestamp == T0 + 100  # filled from the batch at the first offset


def test_plain_text_is_aligned(tmp_path):
    stuck_transaction_log_dir(str(tmp_path), coordinator_status=4)
    code, out = run("txn", str(tmp_path / "txn-0"))
    assert code == 1
    lines = out.splitlines()
    header = next(i for i, x in enumerate(lines) if x.startswith("PRODUCER-ID"))
    assert lines[header + 1].split()[:3] == ["7", "1", "4"]
    assert lines[header + 1].index("4") == lines[header].index("FIRST-OFFSET")
    assert all(x == x.rstrip() for x in lines)


@pytest.mark.skipif(not corpus_available(), reason=f"reference corpus not found at {CORPUS}")
def test_corpus_txn_topic_against_kafka_tool_output():
    """Counts and aborted ranges agree with the real kafka-dump-log.sh output of the same files."""
    expected = CORPUS / "expected" / "data" / "txn-0"
    commits = aborts = 0
    for path in expected.glob("*.log.deep-iteration.txt"):
        text = path.read_text()
        commits += text.count("endTxnMarker: COMMIT")
        aborts += text.count("endTxnMarker: ABORT")
    ranges = []
    for path in sorted(expected.glob("*.txnindex.default.txt")):
        for m in re.finditer(r"producerId: (\d+) firstOffset: (\d+) lastOffset: (\d+)", path.read_text()):
            ranges.append(tuple(int(x) for x in m.groups()))
    code, out = run("txn", "--json", str(CORPUS / "data" / "txn-0"))
    assert code == 0
    [f] = [json.loads(x) for x in out.splitlines()]
    assert (f["commits"], f["aborts"]) == (commits, aborts) and commits > 0 and aborts > 0
    assert [(a["producerId"], a["firstOffset"], a["lastOffset"]) for a in f["abortedTransactions"]] == ranges
    assert f["openTransactions"] == [] and f["lastStableOffset"] == f["highWatermark"] == f["logEndOffset"]
    # the last producer snapshot agrees: no producer has a transaction open (currentTxnFirstOffset -1)
    data = (CORPUS / "data" / "txn-0" / "00000000000000000828.snapshot").read_bytes()
    count = struct.unpack_from(">i", data, 6)[0]
    assert all(struct.unpack_from(">q", data, 10 + 46 * i + 38)[0] == -1 for i in range(count))
    assert f["coordinatorSource"].endswith("__transaction_state-0")


def test_usage_errors(tmp_path):
    code, out = run("txn", str(tmp_path))
    assert code == 2 and "no partition directory" in out
    os.makedirs(tmp_path / "t-0")
    code, _ = run("txn", "--now", "yesterday", str(tmp_path / "t-0"))
    assert code == 2


def test_ls_and_txn_apply_one_rule_to_open_transactions(tmp_path):
    """``kdump ls`` replays every batch from byte 0, ``kdump txn`` the latest producer snapshot then the batches
    after it, both through one tracker (Kafka's ProducerAppendInfo rules): without a snapshot they name the same
    transactions; a snapshot that says otherwise moves only txn's answer, as it moves a broker's."""
    stuck_transaction_log_dir(str(tmp_path), coordinator_status=None)
    part = tmp_path / "txn-0"

    def ls_open() -> list[tuple[int, int, int]]:
        code, out = run("ls", "--json", str(part))
        assert code == 0
        [o] = [json.loads(x) for x in out.splitlines()]
        return [(t["producerId"], t["producerEpoch"], t["firstOffset"]) for t in o["openTransactions"]]

    def txn_open() -> list[tuple[int, int, int]]:
        [f] = TxnCommand([str(part)]).facts()
        return [(t.producer_id, t.producer_epoch, t.first_offset) for t in f.open]

    # producer 7 (epoch 1) opened at offset 4 and never ended; producer 5's two transactions were ended
    assert ls_open() == txn_open() == [(7, 1, 4)]
    # a snapshot at offset 6 in which producer 7 has no transaction open: the broker (and txn) trust it
    entry = ProducerSnapshotEntry(7, 1, 1, 5, 1, T0 + 101, 0, -1)
    (part / "00000000000000000006.snapshot").write_bytes(encode_producer_snapshot([entry]))
    assert txn_open() == []
    assert ls_open() == [(7, 1, 4)]
