"""``kdump verify --remote-root``: the remote checks over a real broker's tiered partition
(``tests/fixtures/tiered-broker``: Kafka 4.0 with its own LocalTieredStorage; see tests/tiered_broker).

The oracle: the broker left the partition healthy (it served ListOffsets from it just before it stopped), so
verify must find no problem in it; then each inconsistency is injected into a copy -- an object deleted, a
``.log`` truncated, an orphaned fileset, a metadata record stuck in COPY_SEGMENT_STARTED or
DELETE_SEGMENT_STARTED, a deleted middle segment (a gap between remote segments), a gap between the remote and
the local log -- and each must be found, as its own kind and nothing else."""

from __future__ import annotations

import json
import shutil
import uuid
from pathlib import Path

import pytest
from click.testing import CliRunner

from kdump.cli.commands import cli
from kdump.commands.remote_tier import REMOTE_PROBLEM_KINDS
from kdump.render.json_schema import validate
from kdump.storage.file_records import FileRecords
from kdump.storage.kafka_uuid import decode_uuid
from tests.builder import SimpleRecord, build_v2_batch
from tests.remote_metadata_records import DELETE_FINISHED, DELETE_STARTED, FINISHED, STARTED, framed
from tests.test_tiered_broker import FILESET, FIXTURE

pytestmark = pytest.mark.skipif(not FIXTURE.is_dir(), reason="tests/fixtures/tiered-broker is absent")


class Copy:
    """A copy of the broker's tiered partition, to damage."""

    def __init__(self, root: Path) -> None:
        shutil.copytree(FIXTURE, root)
        self.root = root
        self.broker = json.loads((root / "broker.json").read_text())
        self.remote = next((root / "remote").iterdir())
        self.local = root / "local" / "tiered-0"
        self.topic_id = uuid.UUID(bytes=decode_uuid(self.broker["topic_id"]))
        #: start offset -> segment id, as LocalTieredStorage named the objects
        self.segments: dict[int, str] = {}
        for path in self.remote.glob("*.log"):
            m = FILESET.match(path.name)
            assert m
            self.segments[int(m.group(1))] = m.group(2)

    def file(self, start: int, suffix: str) -> Path:
        return self.remote / f"{start:020d}-{self.segments[start]}{suffix}"

    def append_metadata(self, *payloads: bytes) -> None:
        """Records appended to the metadata partition as its next offsets (in the broker's leader epoch)."""
        log = self.root / "local" / self.broker["metadata_partition"] / "00000000000000000000.log"
        with FileRecords(str(log)) as records:
            batches = list(records.batches())
        nxt = batches[-1].last_offset + 1
        epoch = batches[-1].partition_leader_epoch
        stamp = 1_800_000_000_000
        data = b"".join(
            build_v2_batch(
                [SimpleRecord(value=v, timestamp=stamp + i)],
                base_offset=nxt + i,
                partition_leader_epoch=epoch,
            )
            for i, v in enumerate(payloads)
        )
        log.write_bytes(log.read_bytes() + data)

    def _id(self, segment: uuid.UUID) -> dict:
        return {"TopicIdPartition": {"Name": "tiered", "Id": self.topic_id, "Partition": 0}, "Id": segment}

    def added(self, segment: uuid.UUID, start: int, end: int, epochs: dict[int, int], size: int) -> bytes:
        return framed(
            "RemoteLogSegmentMetadataRecord",
            {
                "RemoteLogSegmentId": self._id(segment),
                "StartOffset": start,
                "EndOffset": end,
                "BrokerId": 1,
                "MaxTimestampMs": 1_800_000_000_000,
                "EventTimestampMs": 1_800_000_000_000,
                "SegmentLeaderEpochs": [{"LeaderEpoch": e, "Offset": o} for e, o in sorted(epochs.items())],
                "SegmentSizeInBytes": size,
                "CustomMetadata": None,
                "RemoteLogSegmentState": STARTED,
            },
        )

    def update(self, start: int, state: int) -> bytes:
        segment = uuid.UUID(bytes=decode_uuid(self.segments[start]))
        return framed(
            "RemoteLogSegmentMetadataUpdateRecord",
            {
                "RemoteLogSegmentId": self._id(segment),
                "BrokerId": 1,
                "EventTimestampMs": 1_800_000_000_001,
                "CustomMetadata": None,
                "RemoteLogSegmentState": state,
            },
        )

    def verify(self, *extra: str) -> tuple[int, str, dict[str, int]]:
        args = ["verify", str(self.root / "local"), "--remote-root", str(self.root / "remote"), *extra]
        result = CliRunner().invoke(cli, [*args, "--json"])
        summary = json.loads(result.stdout.splitlines()[-1])
        text = CliRunner().invoke(cli, args)
        assert text.exit_code == result.exit_code
        return result.exit_code, text.stdout, summary["kinds"]


@pytest.fixture
def copy(tmp_path: Path) -> Copy:
    return Copy(tmp_path / "tiered-broker")


def test_the_brokers_healthy_tiered_partition_gives_no_problem(copy: Copy) -> None:
    code, out, kinds = copy.verify()
    assert (code, kinds) == (0, {}), out
    assert "5 remote segments" in out and "no problems found" in out
    summary = json.loads(
        CliRunner()
        .invoke(
            cli, ["verify", str(copy.root / "local"), "--remote-root", str(copy.root / "remote"), "--json"]
        )
        .stdout.splitlines()[-1]
    )
    assert (summary["tieredPartitions"], summary["remoteSegments"]) == (1, 5)
    assert validate(summary) == []


def test_without_remote_root_nothing_remote_is_checked(copy: Copy) -> None:
    copy.file(298, ".log").unlink()
    result = CliRunner().invoke(cli, ["verify", str(copy.root / "local"), "--json"])
    summary = json.loads(result.stdout.splitlines()[-1])
    assert result.exit_code == 0 and "remoteSegments" not in summary


def test_a_deleted_object_is_found(copy: Copy) -> None:
    copy.file(435, ".timeindex").unlink()
    code, out, kinds = copy.verify()
    assert (code, kinds) == (1, {"remote-missing-object": 1}), out
    assert copy.file(435, ".timeindex").name in out


def test_a_deleted_log_is_found(copy: Copy) -> None:
    copy.file(298, ".log").unlink()
    code, out, kinds = copy.verify()
    assert (code, kinds) == (1, {"remote-missing-object": 1}), out


def test_a_truncated_log_is_found(copy: Copy) -> None:
    log = copy.file(596, ".log")
    log.write_bytes(log.read_bytes()[:-100])  # into the last batch
    code, out, kinds = copy.verify()
    assert code == 1
    # the remote checks, and verify's own on the remote segment: its torn tail, its index entries now past the end
    assert kinds == {
        "remote-size": 1,
        "remote-log": 1,
        "remote-offset-range": 1,
        "log": 1,
        "past-end": 2,
    }, out
    assert "the metadata says segmentSizeInBytes 7466" in out


def test_a_log_cut_at_a_batch_boundary_is_found_by_its_offsets(copy: Copy) -> None:
    log = copy.file(147, ".log")
    with FileRecords(str(log)) as records:
        last = list(records.batches())[-1]
    log.write_bytes(log.read_bytes()[: last.position])
    code, out, kinds = copy.verify()
    assert kinds == {"remote-size": 1, "remote-offset-range": 1, "past-end": 2}, out


def test_a_corrupt_batch_in_a_remote_segment_is_found(copy: Copy) -> None:
    """A bit flipped inside a record of a remote segment: its size, offsets and epochs are still the metadata's;
    verify checks the remote segments of the one log as it checks local ones, so the batch's CRC finds it
    (as Kafka's tool does on the segment: isvalid false)."""
    log = copy.file(298, ".log")
    data = bytearray(log.read_bytes())
    data[3000] ^= 0x40
    log.write_bytes(bytes(data))
    code, out, kinds = copy.verify()
    assert (code, kinds) == (1, {"crc": 1}), out
    assert f"{log}: byte 2724: crc: stored CRC" in out


def test_an_orphaned_fileset_is_found(copy: Copy) -> None:
    stranger = "AAAAAAAAAAAAAAAAAAAAAA"
    for path in list(copy.remote.glob(f"00000000000000000723-{copy.segments[723]}.*")):
        shutil.copy(path, copy.remote / path.name.replace(copy.segments[723], stranger))
    code, out, kinds = copy.verify()
    assert (code, kinds) == (1, {"remote-orphaned-object": 1}), out
    assert stranger in out


def test_a_segment_stuck_in_copy_segment_started_is_found(copy: Copy) -> None:
    # the active segment's offsets (894-971) added by a copy that never finished
    copy.append_metadata(copy.added(uuid.UUID(int=0xC0FFEE), 894, 971, {2: 894}, 5142))
    code, out, kinds = copy.verify()
    assert (code, kinds) == (1, {"remote-unfinished": 1}), out
    assert "is still COPY_SEGMENT_STARTED" in out


def test_a_segment_stuck_in_delete_segment_started_is_found(copy: Copy) -> None:
    copy.append_metadata(copy.update(147, DELETE_STARTED))
    code, out, kinds = copy.verify()
    assert (code, kinds) == (1, {"remote-unfinished": 1}), out
    assert "is still DELETE_SEGMENT_STARTED" in out


def test_a_middle_segment_deleted_leaves_a_gap(copy: Copy) -> None:
    copy.append_metadata(copy.update(435, DELETE_STARTED), copy.update(435, DELETE_FINISHED))
    for path in copy.remote.glob(f"00000000000000000435-{copy.segments[435]}.*"):
        path.unlink()
    code, out, kinds = copy.verify()
    assert (code, kinds) == (1, {"remote-gap": 1}), out
    assert "offsets 435-595 are in no remote segment" in out


def test_a_gap_between_remote_and_local_is_found(copy: Copy) -> None:
    """The last remote segment deleted (metadata and objects) and its local copy gone too: offsets 723-893 are
    nowhere."""
    copy.append_metadata(copy.update(723, DELETE_STARTED), copy.update(723, DELETE_FINISHED))
    for path in copy.remote.glob(f"00000000000000000723-{copy.segments[723]}.*"):
        path.unlink()
    for path in copy.local.glob("00000000000000000723.*"):
        path.unlink()
    code, out, kinds = copy.verify()
    assert kinds.get("remote-gap") == 1, out
    assert "offsets 723-893 are neither in remote storage" in out


def test_a_repeated_state_is_no_problem_but_a_skipped_one_is(copy: Copy) -> None:
    """RemoteLogSegmentState.isValidTransition (Kafka 4.0): a self transition is valid (a retry after a
    failover), COPY_SEGMENT_FINISHED -> DELETE_SEGMENT_FINISHED is not (the cache ignores it)."""
    copy.append_metadata(copy.update(298, FINISHED))
    code, out, kinds = copy.verify()
    assert (code, kinds) == (0, {}), out
    copy.append_metadata(copy.update(298, DELETE_FINISHED))
    code, out, kinds = copy.verify()
    assert (code, kinds) == (1, {"remote-metadata": 1}), out
    assert "invalid transition COPY_SEGMENT_FINISHED -> DELETE_SEGMENT_FINISHED" in out


def test_every_remote_kind_is_documented() -> None:
    man = (Path(__file__).resolve().parents[1] / "man" / "kdump-verify.1").read_text()
    for kind in REMOTE_PROBLEM_KINDS:
        assert kind.replace("-", "\\-") in man, kind


def test_remote_options_need_remote_root(copy: Copy) -> None:
    result = CliRunner().invoke(cli, ["verify", str(copy.root / "local"), "--layout", "aiven"])
    assert result.exit_code == 2
    result = CliRunner().invoke(
        cli,
        ["verify", "--indexes-only", str(copy.root / "local"), "--remote-root", str(copy.root / "remote")],
    )
    assert result.exit_code == 2


def test_the_remote_root_may_be_a_url(copy: Copy) -> None:
    pytest.importorskip("fsspec", reason="fsspec is not installed (pip install 'kdump[s3]')")
    copy.file(435, ".timeindex").unlink()
    code, out, kinds = copy.verify()
    url = "file://" + str(copy.root / "remote")
    result = CliRunner().invoke(cli, ["verify", str(copy.root / "local"), "--remote-root", url])
    assert result.exit_code == code == 1
    assert result.stdout == out.replace(str(copy.root / "remote"), url)


def test_ls_reads_the_tiered_partition_as_one_log(copy: Copy) -> None:
    """kdump ls --remote-root: the remote segments below the first local one, then the local ones, as the
    broker served them: from its earliest offset (ListOffsets) to its latest, every offset a record, offsets
    continuous across remote and local segments."""
    from kdump.commands.remote_tier import RemoteChecks, RemoteOptions
    from kdump.storage.local_log import LocalLog

    offsets = copy.broker["list_offsets"]
    args = ["ls", str(copy.root / "local"), "--remote-root", str(copy.root / "remote"), "--json"]
    result = CliRunner().invoke(cli, args)
    assert result.exit_code == 0, result.stdout
    rows = {o["topic"]: o for o in map(json.loads, result.stdout.splitlines())}
    row = rows["tiered"]
    assert all(validate(o) == [] for o in rows.values())
    assert row["logStartOffset"] == offsets["earliest"] == 147
    assert row["logEndOffset"] == offsets["latest"]
    assert (
        row["records"] == offsets["latest"] - offsets["earliest"]
    )  # no compaction: every offset is a record
    assert (row["segments"], row["remoteSegments"], row["anomalies"]) == (6, 4, [])
    assert "remoteSegments" not in rows["__remote_log_metadata"]
    # the one log, segment by segment: remote (below earliest-local), then local, offsets continuous
    log = LocalLog.scan(copy.local)
    one, remote = RemoteChecks(RemoteOptions(str(copy.root / "remote"))).one_log(log) or (None, 0)
    assert one is not None and remote == 4
    bases = [s.base_offset for s in one.log_segments]
    assert bases == [*sorted(b for b in copy.segments if b < offsets["earliest-local"]), 723, 894]
    assert all(s.directory == str(copy.remote) for s in one.log_segments[:4])
    expected = offsets["earliest"]
    for segment in one.log_segments:
        with segment.open_log() as records:
            for batch in records.batches():
                assert batch.base_offset == expected, (segment.log_path, batch.base_offset)
                expected = batch.last_offset + 1
    assert expected == offsets["latest"]
    # without --remote-root: the local part only, from the broker's earliest-local offset
    local = CliRunner().invoke(cli, ["ls", str(copy.local), "--json"])
    row = json.loads(local.stdout)
    assert (row["logStartOffset"], row["segments"]) == (offsets["earliest-local"], 2)
    assert "remoteSegments" not in row


def test_ls_one_log_with_the_remote_root_as_a_url(copy: Copy) -> None:
    pytest.importorskip("fsspec", reason="fsspec is not installed (pip install 'kdump[s3]')")
    args = ["ls", str(copy.local), "--json", "--remote-root"]
    local = CliRunner().invoke(cli, [*args, str(copy.root / "remote")])
    url = CliRunner().invoke(cli, [*args, "file://" + str(copy.root / "remote")])
    assert url.exit_code == local.exit_code == 0
    assert url.stdout == local.stdout and json.loads(url.stdout)["remoteSegments"] == 4


def _schedule() -> tuple[list[tuple[int, int]], int, int]:
    """What tests.tiered_broker's producers wrote, phase by phase (1-3): 160 plain records, 60 in gzip
    batches, then 4 transactions of 25 records and their marker, the 2nd and 4th aborted: the aborted ranges
    (first offset, marker's offset), how many transactions there were, and the log end offset."""
    plain, zipped, records, transactions = 160, 60, 25, 4
    per_phase = plain + zipped + transactions * (records + 1)
    aborted = []
    for phase in range(3):
        for t in range(transactions):
            first = phase * per_phase + plain + zipped + t * (records + 1)
            if t % 2:
                aborted.append((first, first + records))
    return aborted, 3 * transactions, 3 * per_phase


def test_txn_reads_the_tiered_partition_as_one_log(copy: Copy) -> None:
    """kdump txn --remote-root: every transaction the producers wrote above the broker's log start offset, the
    aborted ones' ranges from the remote .txnindex files and the local ones alike (the producers' schedule is
    the oracle); without the option only those in the local segments."""
    aborted, count, end = _schedule()
    assert end == copy.broker["list_offsets"]["latest"]  # the schedule is what the broker holds
    args = ["txn", str(copy.local), "--json"]
    one = json.loads(CliRunner().invoke(cli, [*args, "--remote-root", str(copy.root / "remote")]).stdout)
    assert validate(one) == []
    assert one["logStartOffset"] == copy.broker["list_offsets"]["earliest"]
    assert [(a["firstOffset"], a["lastOffset"]) for a in one["abortedTransactions"]] == aborted
    assert (one["commits"], one["aborts"]) == (count // 2, count // 2)
    local = json.loads(CliRunner().invoke(cli, args).stdout)
    start = copy.broker["list_offsets"]["earliest-local"]
    assert local["logStartOffset"] == start
    assert [(a["firstOffset"], a["lastOffset"]) for a in local["abortedTransactions"]] == [
        r for r in aborted if r[0] >= start
    ]


def _numbered_dumping(text: str) -> str:
    """Each ``Dumping <path>`` line as ``Dumping #n``: the remote objects' paths are not the Kafka-named copies
    the real tool was given."""
    lines = text.splitlines(keepends=True)
    n = 0
    for i, line in enumerate(lines):
        if line.startswith("Dumping "):
            lines[i] = f"Dumping #{n}\n"
            n += 1
    return "".join(lines)


def test_files_dumps_the_one_log_as_kafkas_tool_does(copy: Copy) -> None:
    """kdump files --remote-root PARTITION: the one log's .log files, remote objects first (their start offset
    from the metadata), each dumped as Kafka's kafka-dump-log.sh dumps that segment under its Kafka name:
    identical to the real tool's recorded output but for the Dumping lines' paths."""
    import gzip

    from tests.tiered_broker.__main__ import DUMP_NAME, DUMP_OPTIONS

    kafka = gzip.decompress((copy.root / DUMP_NAME).read_bytes()).decode()
    result = CliRunner().invoke(
        cli, ["files", *DUMP_OPTIONS, "--remote-root", str(copy.root / "remote"), str(copy.local)]
    )
    assert result.exit_code == 0, result.stdout
    assert _numbered_dumping(result.stdout) == _numbered_dumping(kafka)
    dumping = [line.split(" ", 1)[1] for line in result.stdout.splitlines() if line.startswith("Dumping ")]
    assert dumping[:4] == [str(copy.file(b, ".log")) for b in (147, 298, 435, 596)]
    assert dumping[4:] == [str(copy.local / f"{b:020d}.log") for b in (723, 894)]
    # a partition that is not tiered: its local .log files, with or without the option
    plain = copy.root / "local" / copy.broker["metadata_partition"]
    with_root = CliRunner().invoke(cli, ["files", "--remote-root", str(copy.root / "remote"), str(plain)])
    alone = CliRunner().invoke(cli, ["files", str(plain / "00000000000000000000.log")])
    assert with_root.stdout == alone.stdout and with_root.exit_code == 0


@pytest.mark.kafka
def test_files_over_the_one_log_against_the_live_tool(copy: Copy, tmp_path: Path) -> None:
    """The recording above, made again with the real Kafka 4.0 tool (skipped without Java or ../shared)."""
    from tests.broker_oracle.cluster import launcher
    from tests.tiered_broker.__main__ import DUMP_OPTIONS, record_dump

    if not launcher("4.0.0").is_file() or shutil.which("java") is None:
        pytest.skip("needs Java and ../shared/kafka-4.0.0")
    kafka = record_dump(copy.root, tmp_path / "stage").decode()
    result = CliRunner().invoke(
        cli, ["files", *DUMP_OPTIONS, "--remote-root", str(copy.root / "remote"), str(copy.local)]
    )
    assert _numbered_dumping(result.stdout) == _numbered_dumping(kafka)
