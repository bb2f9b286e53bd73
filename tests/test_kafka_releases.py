"""``kdump files --kafka-version``: each release's text on data of a real Kafka 4.1 broker, against what the real
4.0 and 4.1 tools printed for it (tests/fixtures/broker-4.1, recorded by ``python -m
tests.differential.broker_release``; compared without Java here, the real tools re-run by the ``kafka`` test
when they are installed), and the release rules the corpus does not reach."""

from __future__ import annotations

import os
import shutil
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
