"""``kdump find --group`` / ``--transactional-id``: the coordinator partition and what it holds."""

from __future__ import annotations

import json
import re

import pytest
from click.testing import CliRunner

from kdump.cli.commands import cli
from kdump.commands.coordinator import java_string_hash, partition_for
from kdump.storage.control_record import ControlRecordType
from tests.builder import SimpleRecord, build_end_txn_marker_batch, build_v2_batch
from tests.corpus import CORPUS, corpus_available
from tests.forensic_data import (
    T0,
    offset_commit_key,
    offset_commit_value,
    stuck_transaction_log_dir,
    write_segment,
)

#: ``String.hashCode()`` and ``Utils.abs(h) % 50`` as printed by Java 17 (``java Hash.java``) for these ids;
#: two of them hash to Integer.MIN_VALUE, which Utils.abs maps to 0.
JAVA = {
    "": (0, 0),
    "hello": (99162322, 22),
    "my-group": (-1906497762, 12),
    "kref-txn-1": (-2078085175, 25),
    "polygenelubricants": (-2147483648, 0),
    "GydZG_": (-2147483648, 0),
    "\u00e9t\u00e9-\U0001f600": (-1803456526, 26),
    "console-consumer-12345": (158455506, 6),
}


def run(*args: str) -> tuple[int, str]:
    result = CliRunner().invoke(cli, list(args))
    return result.exit_code, result.output


@pytest.mark.parametrize("key", list(JAVA))
def test_partition_for_matches_java(key):
    assert (java_string_hash(key), partition_for(key, 50)) == JAVA[key]


def _commit(offset: int, group: str, topic: str, partition: int, value: int, **kw: int | bool) -> bytes:
    return build_v2_batch(
        [
            SimpleRecord(
                offset_commit_value(value, 3, f"m{value}", T0 + offset),
                key=offset_commit_key(group, topic, partition),
                timestamp=T0 + offset,
            )
        ],
        base_offset=offset,
        **kw,  # type: ignore[arg-type]
    )


def test_group_offsets_with_transactional_commits(tmp_path):
    partition = partition_for("g1", 4)
    part = tmp_path / f"__consumer_offsets-{partition}"
    batches = [
        _commit(0, "g1", "a", 0, 10),
        _commit(1, "other", "a", 0, 99),
        _commit(2, "g1", "a", 0, 20),  # supersedes offset 10
        _commit(3, "g1", "b", 1, 5, producer_id=9, producer_epoch=0, is_transactional=True),
        build_end_txn_marker_batch(
            ControlRecordType.COMMIT, coordinator_epoch=0, producer_id=9, producer_epoch=0, base_offset=4,
            timestamp=T0,
        ),
        _commit(5, "g1", "c", 0, 7, producer_id=9, producer_epoch=0, is_transactional=True),
        build_end_txn_marker_batch(
            ControlRecordType.ABORT, coordinator_epoch=0, producer_id=9, producer_epoch=0, base_offset=6,
            timestamp=T0,
        ),
        _commit(7, "g1", "d", 0, 8, producer_id=11, producer_epoch=0, is_transactional=True),  # still open
        _commit(8, "g1", "e", 0, 1),
        build_v2_batch([SimpleRecord(None, key=offset_commit_key("g1", "e", 0), timestamp=T0)], base_offset=9),
    ]  # fmt: skip
    write_segment(str(part), 0, batches)
    code, out = run("find", "--json", "--group", "g1", "--partitions", "4", str(tmp_path))
    assert code == 0
    obj = json.loads(out)
    assert (obj["type"], obj["partition"], obj["partitionCountSource"]) == (
        "coordinator",
        partition,
        "--partitions",
    )
    got = [(o["topic"], o["partition"], o["offset"], o["leaderEpoch"], o["metadata"]) for o in obj["offsets"]]
    assert got == [("a", 0, 20, 3, "m20"), ("b", 1, 5, 3, "m5")]  # c aborted, d pending, e deleted
    assert obj["pendingTransactionalOffsets"] == 1

    code, out = run("find", "--group", "nobody-here", "--partitions", "4", str(tmp_path))
    assert code == 1


def test_transactional_id(tmp_path):
    stuck_transaction_log_dir(str(tmp_path), coordinator_status=4)
    code, out = run("find", "--transactional-id", "app-7", "--partitions", "1", str(tmp_path))
    assert code == 0
    assert re.search(r"^app-7\s+7\s+1\s+CompleteCommit\s+60000\s+txn-0\s", out, re.M)
    code, out = run("find", "--transactional-id", "app-9", "--partitions", "1", str(tmp_path))
    assert code == 1 and "no record of this transactional id" in out
    code, out = run("find", "--transactional-id", "app-7", "--partitions", "2", str(tmp_path))
    assert "__transaction_state-" in out


def test_usage(tmp_path):
    assert run("find", "--group", "g", "--offset", "3", str(tmp_path))[0] == 2
    assert run("find", "--partitions", "3", "--offset", "3", str(tmp_path))[0] == 2


def _expected_offsets(group: str) -> dict[tuple[str, int], int]:
    """Replay the real kafka-dump-log.sh --offsets-decoder output: last value wins, <DELETE> removes."""
    found: dict[tuple[str, int], int] = {}
    text = (
        CORPUS / "expected/data/__consumer_offsets-0/00000000000000000000.log.offsets-decoder.txt"
    ).read_text()
    for m in re.finditer(r'key: (\{"type":"[01]".*?\}\}) payload: (<DELETE>|\{.*\}\})$', text, re.M):
        key = json.loads(m.group(1))["data"]
        if key["group"] != group:
            continue
        tp = (key["topic"], key["partition"])
        if m.group(2) == "<DELETE>":
            found.pop(tp, None)
        else:
            found[tp] = json.loads(m.group(2))["data"]["offset"]
    return found


@pytest.mark.skipif(not corpus_available(), reason=f"reference corpus not found at {CORPUS}")
@pytest.mark.parametrize(
    "group", ["kref-meta-group", "kref-classic-group", "kref-kpy-group", "kref-to-delete"]
)
def test_corpus_groups_against_kafka_decoder(group):
    code, out = run("find", "--json", "--group", group, str(CORPUS / "data"))
    obj = json.loads(out)
    assert obj["partitionCountSource"] == "metadata log" and obj["partition"] == 0
    got = {(o["topic"], o["partition"]): o["offset"] for o in obj["offsets"]}
    assert got == _expected_offsets(group)
    assert code == (0 if obj["found"] else 1)


@pytest.mark.skipif(not corpus_available(), reason=f"reference corpus not found at {CORPUS}")
def test_corpus_transactional_id_against_kafka_decoder():
    text = (
        CORPUS / "expected/data/__transaction_state-0/00000000000000000000.log.transaction-log-decoder.txt"
    ).read_text()
    last = re.findall(
        r"transactionalId=kref-txn-2 payload: producerId:(\d+),producerEpoch:(\d+),state=(\w+),.*"
        r"txnTimeoutMs=(\d+)",
        text,
    )[-1]
    code, out = run("find", "--json", "--transactional-id", "kref-txn-2", str(CORPUS / "data"))
    assert code == 0
    t = json.loads(out)["transaction"]
    assert (str(t["producerId"]), str(t["producerEpoch"]), t["state"], str(t["timeoutMs"])) == last
