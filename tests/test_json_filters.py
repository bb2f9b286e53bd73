"""``kdump files --json``, the filters and ``--print-header-values``.

* JSON carries every fact of the text: Kafka's own output of each corpus run is rebuilt from kdump's JSON
  objects (by this test's own formatter) and must come out byte for byte.
* Every JSON object kdump prints validates against the documented schema (every command's: test_json_commands).
* Each filter agrees with a brute-force selection over the unfiltered records, and offset/time filters start
  reading at the index position instead of byte 0.
"""

from __future__ import annotations

import base64
import json
import re
from pathlib import Path

import pytest

from kdump.analysis import record_filter
from kdump.jdk.text import decode_utf8_jdk
from kdump.render.json_schema import validate
from kdump.storage.control_record import ControlRecordType
from tests.builder import SimpleRecord, build_end_txn_marker_batch, build_v2_batch
from tests.corpus import CORPUS, FIXTURE_CORPUS, corpus_available, supported_runs
from tests.replay import run_kdump

ROOT = CORPUS if corpus_available() else FIXTURE_CORPUS


def _text_value(obj: dict, name: str) -> str:
    raw = obj[name]
    if obj.get(name + "Encoding") == "base64":
        return decode_utf8_jdk(base64.b64decode(raw))
    return raw


def _bool(b: bool) -> str:
    return "true" if b else "false"


def rebuild_kafka_text(objects: list[dict]) -> str:
    """Kafka's text, from kdump's JSON objects (an independent formatter, written from man kdump-files)."""
    out = []
    for o in objects:
        t = o["type"]
        if t == "file":
            out.append(f"Dumping {o['file']}\n")
            if o["kind"] == "log":
                out.append(f"Log starting offset: {o['logStartingOffset']}\n")
            elif o["kind"] == "bootstrap-snapshot":
                out.append("KRaft bootstrap snapshot\n")
            elif o["kind"] == "snapshot":
                out.append(f"Snapshot end offset: {o['snapshotEndOffset']}, epoch: {o['epoch']}\n")
        elif t == "batch":
            if o["magic"] >= 2:
                horizon = o["deleteHorizonMs"]
                head = (
                    f"baseOffset: {o['baseOffset']} lastOffset: {o['lastOffset']} count: {o['count']} "
                    f"baseSequence: {o['baseSequence']} lastSequence: {o['lastSequence']} producerId: {o['producerId']} "
                    f"producerEpoch: {o['producerEpoch']} partitionLeaderEpoch: {o['partitionLeaderEpoch']} "
                    f"isTransactional: {_bool(o['isTransactional'])} isControl: {_bool(o['isControl'])} "
                    f"deleteHorizonMs: {'OptionalLong.empty' if horizon is None else f'OptionalLong[{horizon}]'}"
                )
            else:
                head = f"offset: {o['offset']}"
            out.append(
                f"{head} position: {o['position']} {o['timestampType']}: {o['timestamp']} size: {o['size']} "
                f"magic: {o['magic']} compresscodec: {o['compresscodec']} crc: {o['crc']} isvalid: {_bool(o['isvalid'])}\n"
            )
        elif t == "record":
            line = f"| offset: {o['offset']} {o['timestampType']}: {o['timestamp']} keySize: {o['keySize']} valueSize: {o['valueSize']}"
            if "sequence" in o:
                line += f" sequence: {o['sequence']} headerKeys: [{','.join(o['headerKeys'])}]"
            if "isValid" in o:
                line += f" isValid: {_bool(o['isValid'])} crc: {o['crc']}}}"
            if "endTxnMarker" in o:
                line += f" endTxnMarker: {o['endTxnMarker']} coordinatorEpoch: {o['coordinatorEpoch']}"
            elif "controlType" in o:
                labels = {"SNAPSHOT_HEADER": "SnapshotHeader", "SNAPSHOT_FOOTER": "SnapshotFooter",
                          "KRAFT_VERSION": "KRaftVersion", "KRAFT_VOTERS": "KRaftVoters"}  # fmt: skip
                if o["controlType"] in labels and "controlMessage" in o:
                    message = json.dumps(o["controlMessage"], separators=(",", ":"), ensure_ascii=False)
                    line += f" {labels[o['controlType']]} {message}"
                else:
                    line += f" controlType: {o['controlType']}({o['controlTypeId']})"
            if o.get("key") is not None:
                line += f" key: {_text_value(o, 'key')}"
            if o.get("payload") is not None:
                line += f" payload: {_text_value(o, 'payload')}"
            out.append(line + "\n")
        elif t == "invalidBytes":
            out.append(f"Found {o['bytes']} invalid bytes at the end of {o['file'].rsplit('/', 1)[-1]}\n")
    return "".join(out)


def _json_runs() -> list:
    runs = []
    for r in supported_runs(ROOT):
        if r.tool != "kafka-4.0.0" or r.category != "log" or r.kafka_died or r.exit_code != 0:
            continue
        if any(a in r.argv for a in ("--skip-record-metadata", "--max-bytes")) or any(
            "decoder" in a for a in r.argv
        ):
            continue
        runs.append(pytest.param(r, id=r.id))
    return runs


def json_objects(argv: list[str]) -> list[dict]:
    code, out, err = run_kdump([*argv, "--json"])
    assert code == 0, err
    objects = [json.loads(line) for line in out.decode().splitlines()]
    for o in objects:
        assert validate(o) == [], o
    return objects


@pytest.mark.parametrize("run", _json_runs())
def test_json_carries_every_fact_of_kafkas_text(run, monkeypatch: pytest.MonkeyPatch) -> None:  # noqa: ANN001
    monkeypatch.chdir(ROOT)
    objects = json_objects(list(run.argv))
    assert rebuild_kafka_text(objects).encode() == run.expected_stdout(ROOT)


@pytest.mark.parametrize(
    "name",
    [
        "data/small-index-0/00000000000000001423.index",
        "data/small-index-0/00000000000000001423.timeindex",
        "data/txn-0/00000000000000000030.txnindex",
        "data/replication-offset-checkpoint",
        "data/meta.properties",
    ],
)
def test_other_files_validate(name: str, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(ROOT)
    objects = json_objects(["--files", name])
    assert objects[0]["type"] == "file" and len(objects) > 1


# -- filters ------------------------------------------------------------------------------------------------

SEGMENT = "data/small-index-0/00000000000000001423.log"


def _records(argv: list[str]) -> list[dict]:
    return [o for o in json_objects(argv) if o["type"] == "record"]


@pytest.fixture
def everything(monkeypatch: pytest.MonkeyPatch) -> list[dict]:
    monkeypatch.chdir(ROOT)
    return _records(["--files", SEGMENT, "--print-data-log"])


@pytest.mark.parametrize(
    ("options", "keep"),
    [
        (["--from-offset", "1450", "--to-offset", "1470"], lambda r: 1450 <= r["offset"] <= 1470),
        (["--from-offset", "1490"], lambda r: r["offset"] >= 1490),
        (["--to-offset", "1430"], lambda r: r["offset"] <= 1430),
        (["--from-time", "1700000145000"], lambda r: r["timestamp"] >= 1700000145000),
        (
            ["--from-time", "2023-11-14T22:15:45Z", "--to-time", "2023-11-14T22:15:46.5+00:00"],
            lambda r: 1700000145000 <= r["timestamp"] <= 1700000146500,
        ),
        (["--key", "k3"], lambda r: r["key"] == "k3"),
        (["--key-regex", "^k1[0-9]$"], lambda r: re.search("^k1[0-9]$", r["key"])),
    ],
)
def test_filters_agree_with_brute_force(everything: list[dict], options: list[str], keep) -> None:  # noqa: ANN001
    want = [r["offset"] for r in everything if keep(r)]
    assert want, "the case must select something"
    assert [r["offset"] for r in _records(["--files", SEGMENT, "--print-data-log", *options])] == want


def test_max_records(everything: list[dict]) -> None:
    got = _records(["--files", SEGMENT, "--deep-iteration", "--from-offset", "1440", "--max-records", "7"])
    assert [r["offset"] for r in got] == [r["offset"] for r in everything if r["offset"] >= 1440][:7]


def test_batch_filters(tmp_path: Path) -> None:
    def data(base: int, pid: int, txn: bool) -> bytes:
        records = [SimpleRecord(b"v", b"k", timestamp=base) for _ in range(3)]
        return build_v2_batch(
            records, base_offset=base, producer_id=pid, producer_epoch=0, is_transactional=txn
        )

    def marker(base: int, pid: int) -> bytes:
        return build_end_txn_marker_batch(
            ControlRecordType.COMMIT, coordinator_epoch=1, producer_id=pid, producer_epoch=0, base_offset=base,
            timestamp=base,
        )  # fmt: skip

    segment = tmp_path / "00000000000000000000.log"
    segment.write_bytes(
        data(0, 1, True) + data(3, 2, False) + marker(6, 1) + data(7, -1, False) + data(10, 2, True)
    )
    batches = [o for o in json_objects(["--files", str(segment)]) if o["type"] == "batch"]
    for options, keep in (
        (["--control-only"], lambda b: b["isControl"]),
        (["--transactional-only"], lambda b: b["isTransactional"]),
        (["--producer-id", "2"], lambda b: b["producerId"] == 2),
        (
            ["--producer-id", "1", "--transactional-only"],
            lambda b: b["producerId"] == 1 and b["isTransactional"],
        ),
    ):
        want = [b["baseOffset"] for b in batches if keep(b)]
        got = [
            o["baseOffset"] for o in json_objects(["--files", str(segment), *options]) if o["type"] == "batch"
        ]
        assert got == want and 0 < len(want) < len(batches), options


def test_text_mode_filters_print_kafka_lines(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(ROOT)
    code, out, _ = run_kdump(["--files", SEGMENT, "--print-data-log", "--key", "k3", "--max-records", "1"])
    full = run_kdump(["--files", SEGMENT, "--print-data-log"])[1].decode().splitlines()
    lines = out.decode().splitlines()
    assert code == 0 and lines[:2] == full[:2] and len(lines) == 4
    assert lines[2] in full and lines[3] in full and " key: k3 " in lines[3]


def test_offset_and_time_filters_seek(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(ROOT)
    starts: list[int] = []
    real = record_filter.RecordFilter.start_position

    def spy(self, path, records):  # noqa: ANN001, ANN202
        position = real(self, path, records)
        starts.append(position)
        return position

    monkeypatch.setattr(record_filter.RecordFilter, "start_position", spy)
    everything = [o for o in json_objects(["--files", SEGMENT]) if o["type"] == "batch"]
    for options, target in ((["--from-offset", "1490"], 1490), (["--from-time", "1700000148000"], None)):
        starts.clear()
        got = [o for o in json_objects(["--files", SEGMENT, *options]) if o["type"] == "batch"]
        (start,) = starts
        assert start > 0, options
        first = got[0]
        assert start <= first["position"]
        skipped = [b for b in everything if b["position"] < start]
        assert skipped and all(b["lastOffset"] < first["baseOffset"] for b in skipped)
        if target is not None:
            assert first["baseOffset"] <= target <= first["lastOffset"]


def test_print_header_values(tmp_path: Path) -> None:
    records = [
        SimpleRecord(b"v0", b"k0", headers=(("h1", b"one"), ("h2", None)), timestamp=5),
        SimpleRecord(b"v1", b"k1", headers=(("h1", b"\xff"),), timestamp=6),
    ]
    path = tmp_path / "00000000000000000000.log"
    path.write_bytes(build_v2_batch(records))
    code, out, _ = run_kdump(["--files", str(path), "--print-data-log", "--print-header-values"])
    lines = out.decode().splitlines()
    assert code == 0
    assert lines[3].endswith("headerKeys: [h1,h2] headerValues: [one,null] key: k0 payload: v0")
    assert lines[4].endswith("headerKeys: [h1] headerValues: [\ufffd] key: k1 payload: v1")
    plain = run_kdump(["--files", str(path), "--print-data-log"])[1].decode().splitlines()
    assert [
        line.replace(" headerValues: [one,null]", "").replace(" headerValues: [\ufffd]", "") for line in lines
    ] == plain
    (record,) = [
        o for o in json_objects(["--files", str(path), "--print-data-log"]) if o["type"] == "record"
    ][1:]
    assert record["headers"] == [{"key": "h1", "value": "/w==", "valueEncoding": "base64"}]


def test_bad_filter_values_are_one_error_line() -> None:
    for options in (
        ["--from-offset", "x"],
        ["--from-time", "yesterday"],
        ["--key-regex", "("],
        ["--max-records", "0"],
    ):
        code, out, err = run_kdump(["--files", "whatever.log", *options])
        assert code == 2 and err.startswith(b"kdump: ") and err.count(b"\n") == 1, (options, err)
