"""``kdump files --kafka-version``: each release's text on data of a real Kafka 4.1 broker, against what the real
4.0 and 4.1 tools printed for it (tests/fixtures/broker-4.1, recorded by ``python -m
tests.differential.broker_release``; compared without Java here, the real tools re-run by the ``kafka`` test
when they are installed), and the release rules the corpus does not reach."""

from __future__ import annotations

import os
import shutil
import struct
from pathlib import Path

import pytest

from tests.differential.broker_release import FIXTURE, RELEASES, BrokerRun, expected, runs
from tests.replay import differences, run_kdump

RUNS = runs()


def _kdump(release: str, run: BrokerRun, root: Path) -> tuple[int, bytes, bytes]:
    previous = os.getcwd()
    os.chdir(root)
    try:
        return run_kdump(["--kafka-version", release, *run.argv])
    finally:
        os.chdir(previous)


def _files(run: BrokerRun) -> list[str]:
    return [run.argv[1]] if run.argv[:1] == ("--files",) else []


@pytest.mark.parametrize("release", RELEASES)
@pytest.mark.parametrize("run", RUNS, ids=[r.id for r in RUNS])
def test_broker41_data(run: BrokerRun, release: str) -> None:
    """kdump in 4.0 and 4.1 mode prints what the real 4.0 and 4.1 tools printed for the 4.1 broker's files."""
    want = expected(release, run, FIXTURE)
    got = _kdump(release, run, FIXTURE)
    assert not differences(want, got, _files(run)), (run.argv, release, got[2][:300])


def test_broker41_data_shows_the_releases_differences() -> None:
    """The fixture reaches what differs (LeaderChange, the transaction log's JSON of transaction.version 2, the
    4.1 group and share records): the two tools' outputs differ on those runs."""
    differ = {r.id for r in RUNS if expected("4.0", r, FIXTURE)[1] != expected("4.1", r, FIXTURE)[1]}
    for wanted in (
        "__cluster_metadata-0__00000000000000000000.log.deep-iteration",
        "__transaction_state-0__00000000000000000000.log.transaction-log-decoder",
        "__consumer_offsets-0__00000000000000000000.log.offsets-decoder",
        "__share_group_state-0__00000000000000000000.log.share-group-state-decoder",
        "version",
    ):
        assert wanted in differ, wanted
    tv2 = expected(
        "4.1",
        RUNS[
            [r.id for r in RUNS].index(
                "__transaction_state-0__00000000000000000000.log.transaction-log-decoder"
            )
        ],
        FIXTURE,
    )[1]
    assert b'"clientTransactionVersion":2' in tv2


@pytest.mark.kafka
@pytest.mark.parametrize("release", RELEASES)
def test_recorded_outputs_are_the_real_tools(release: str, tmp_path: Path) -> None:
    """The recorded outputs are what the real tool of each release prints today (its resident JVM, on a copy)."""
    from tests.differential.kafka import DumpServer, unavailable_reason

    reason = unavailable_reason(release)
    if reason is not None:
        pytest.skip(reason)
    shutil.copytree(FIXTURE / "data", tmp_path / "data")
    with DumpServer(tmp_path, version=release) as server:
        for run in RUNS:
            got = server.run(list(run.argv))
            code, out, err = expected(release, run, tmp_path.resolve())
            assert (got.code, got.out) == (code, out), run.id
            assert got.err.split(b"\n\tat ", 1)[0] == err.split(b"\n\tat ", 1)[0], run.id


def test_kafka_39_loads_the_deprecated_decoder_names(tmp_path: Path) -> None:
    """Kafka 3.9's DumpLogSegments.convertDeprecatedDecoderClass: a kafka.serializer stock decoder name is loaded
    as the org.apache.kafka.tools.api one, after a line on standard output (before the log's header; the value
    decoder first); 4.0 removed the names (kdump's one error line, status 1, as Kafka dies)."""
    log = FIXTURE / "data" / "plain-0" / "00000000000000000000.log"
    argv = ["--files", str(log), "--value-decoder-class", "kafka.serializer.StringDecoder"]
    code, out, err = run_kdump(
        ["--kafka-version", "3.9", *argv, "--key-decoder-class=kafka.serializer.DefaultDecoder"]
    )
    lines = out.decode().splitlines()
    assert code == 0 and err == b""
    assert lines[1:4] == [
        "kafka.serializer.StringDecoder is deprecated. Please use org.apache.kafka.tools.api.StringDecoder instead",
        "kafka.serializer.DefaultDecoder is deprecated. Please use org.apache.kafka.tools.api.DefaultDecoder instead",
        "Log starting offset: 0",
    ]
    assert " key: [B@" in lines[5] and " payload: v1" in lines[5]
    code, out, err = run_kdump(["--kafka-version", "4.0", *argv])
    assert code == 1 and out.decode().splitlines()[1:] == [] and err.startswith(b"kdump: ")


def test_kafka_39_has_no_share_group_state_decoder() -> None:
    code, out, err = run_kdump(["--kafka-version", "3.9", "--files", "x.log", "--share-group-state-decoder"])
    assert code == 1 and out == b"" and b"share-group-state-decoder is not a recognized option" in err
    code, out, err = run_kdump(["--kafka-version", "3.9", "--help"])
    assert b"--share-group-state-decoder" not in err and b"--offsets-decoder" in err


# -- records newer than a release: each release fails on them as its tool does ---------------------------------


def _uvarint(n: int) -> bytes:
    out = bytearray()
    while n >= 0x80:
        out.append(n & 0x7F | 0x80)
        n >>= 7
    out.append(n)
    return bytes(out)


def _string(s: str) -> bytes:  # a non-flexible (int16-length) string
    return struct.pack(">h", len(s)) + s.encode()


def _write_segments(root: Path) -> dict[str, list[str]]:
    """Coordinator and control records of Kafka 4.1 layouts (encoded here by hand from the tags' JSON schemas),
    one partition directory per decoder; returns each run's arguments."""
    from kdump.storage.control_record import ControlRecordType
    from tests.builder import SimpleRecord, build_control_batch, build_v2_batch

    ts = 1_700_000_000_000
    group = [
        # type 17 StreamsGroupMetadata (4.1): Epoch, MetadataHash, no tagged fields
        (struct.pack(">h", 17) + _string("sg"), struct.pack(">hiq", 0, 7, 99) + b"\x00"),
        # type 11 ShareGroupMetadata in 4.1's layout (MetadataHash after Epoch)
        (struct.pack(">h", 11) + _string("shg"), struct.pack(">hiq", 0, 3, 1234) + b"\x00"),
        # type 1 OffsetCommit at value version 5 (newer than every release)
        (
            struct.pack(">h", 1) + _string("g") + _string("t") + struct.pack(">i", 0),
            struct.pack(">h", 5) + b"\x00" * 8,
        ),
        # type 0 (old offset commit key) with value version 3: 4.1 reads type 0 as LegacyOffsetCommitValue v0 only
        (
            struct.pack(">h", 0) + _string("g") + _string("t") + struct.pack(">i", 1),
            struct.pack(">hqi", 3, 42, -1) + _string("") + struct.pack(">q", ts),
        ),
    ]
    txn = [  # a TransactionLogValue at version 2 (no release knows it): fatal in 4.0, skipped in 4.1
        (struct.pack(">h", 0) + _string("tx"), struct.pack(">h", 2) + b"\x00" * 40),
    ]
    dirs = {"__consumer_offsets-0": group, "__transaction_state-0": txn}
    runs = {}
    for name, records in dirs.items():
        (root / name).mkdir()
        batch = build_v2_batch([SimpleRecord(v, key=k, timestamp=ts) for k, v in records])
        (root / name / "00000000000000000000.log").write_bytes(batch)
        decoder = "--offsets-decoder" if name.startswith("__consumer") else "--transaction-log-decoder"
        runs[name] = ["--files", f"{name}/00000000000000000000.log", decoder]
    # a LeaderChange message whose Version field says 1: 4.1 writes its JSON at version 1 (voterDirectoryId)
    (root / "lc-0").mkdir()
    voters = _uvarint(2) + struct.pack(">i", 1) + b"\x00"
    value = struct.pack(">hi", 1, 1) + voters + voters + b"\x00"
    control = build_control_batch(ControlRecordType.LEADER_CHANGE, value, base_offset=0, timestamp=ts)
    (root / "lc-0" / "00000000000000000000.log").write_bytes(control)
    runs["lc-0"] = ["--files", "lc-0/00000000000000000000.log", "--deep-iteration"]
    return runs


def _run_in(root: Path, argv: list[str]) -> tuple[int, bytes, bytes]:
    previous = os.getcwd()
    os.chdir(root)
    try:
        return run_kdump(argv)
    finally:
        os.chdir(previous)


def test_newer_records_fail_as_each_release_fails(tmp_path: Path) -> None:
    runs = _write_segments(tmp_path)
    offsets = {
        v: _run_in(tmp_path, ["--kafka-version", v, *runs["__consumer_offsets-0"]])[1].decode()
        for v in ("3.9", "4.0", "4.1")
    }
    assert "key: Unknown record type 17 at offset 0, skipping." in offsets["4.0"]
    assert (
        'key: {"type":"17","data":{"groupId":"sg"}} payload: {"version":"0","data":{"epoch":7,"metadataHash":99}}'
        in offsets["4.1"]
    )
    assert "Unknown record type 11 at offset 1" in offsets["3.9"]
    assert '{"epoch":3,"metadataHash":1234}' in offsets["4.1"]
    for v in ("3.9", "4.0", "4.1"):
        assert "Error at offset 2, skipping. Found an unknown record version 5 for 1 type" in offsets[v]
    assert '"offset":42' in offsets["4.0"]
    assert "Error at offset 3, skipping. Found an unknown record version 3 for 0 type" in offsets["4.1"]
    code40, _, err40 = _run_in(tmp_path, ["--kafka-version", "4.0", *runs["__transaction_state-0"]])
    code41, out41, _ = _run_in(tmp_path, ["--kafka-version", "4.1", *runs["__transaction_state-0"]])
    assert code40 == 1 and b"Unknown version 2 from the transaction log message value" in err40
    assert (
        code41 == 0 and b"Error at offset 0, skipping. Found an unknown record version 2 for 0 type" in out41
    )
    lc = _run_in(tmp_path, ["--kafka-version", "4.1", *runs["lc-0"]])[1].decode()
    zero = "AAAAAAAAAAAAAAAAAAAAAA"
    assert (
        f'LeaderChange: {{"version":1,"leaderId":1,"voters":[{{"voterId":1,"voterDirectoryId":"{zero}"}}],'
        f'"grantingVoters":[{{"voterId":1,"voterDirectoryId":"{zero}"}}]}}'
    ) in lc
    assert (
        "controlType: LEADER_CHANGE(2)"
        in _run_in(tmp_path, ["--kafka-version", "4.0", *runs["lc-0"]])[1].decode()
    )


@pytest.mark.kafka
@pytest.mark.parametrize("release", RELEASES)
def test_newer_records_against_the_real_tools(release: str, tmp_path: Path) -> None:
    """The same segments through the real 4.0 and 4.1 tools: kdump prints what each prints."""
    from tests.differential.kafka import DumpServer, unavailable_reason

    reason = unavailable_reason(release)
    if reason is not None:
        pytest.skip(reason)
    runs = _write_segments(tmp_path)
    with DumpServer(tmp_path, version=release) as server:
        for argv in runs.values():
            want = server.run(argv).triple()
            got = _run_in(tmp_path, ["--kafka-version", release, *argv])
            assert not differences(want, got, [argv[1]]), (argv, want, got)
