"""Records of Kafka releases newer than 4.0: the default text stays Kafka 4.0's (which cannot decode them),
kdump's JSON decodes them with the newest schemas it holds and says so.  The records are encoded here by hand
from the message format (unsigned varints, compact arrays and strings, tagged fields), independently of kdump's
reader; the Kafka 4.0 text comes from the real tool when it is installed."""

from __future__ import annotations

import json
import shutil
import struct
import subprocess
import sys
import uuid
from pathlib import Path

import pytest

from tests.builder import SimpleRecord, build_v2_batch

KAFKA_TOOL = Path(__file__).resolve().parents[2] / "shared" / "kafka-4.0.0" / "kafka"
BROKER_DIR = uuid.UUID("6ba7b810-9dad-11d1-80b4-00c04fd430c8").bytes
INCARNATION = uuid.UUID("12345678-1234-5678-1234-567812345678").bytes


def uvarint(n: int) -> bytes:
    out = bytearray()
    while n >= 0x80:
        out.append(n & 0x7F | 0x80)
        n >>= 7
    out.append(n)
    return bytes(out)


def compact_string(s: str | None) -> bytes:
    if s is None:
        return uvarint(0)
    data = s.encode()
    return uvarint(len(data) + 1) + data


def register_broker_v4(*, version: int = 4) -> bytes:
    """RegisterBrokerRecord (apiKey 0) at ``version`` (3 or 4), framed as a metadata record value."""
    body = struct.pack(">i", 1) + b"\x00" + INCARNATION + struct.pack(">q", 42)
    body += (
        uvarint(2) + compact_string("PLAINTEXT") + compact_string("localhost") + struct.pack(">Hh", 9092, 0)
    )
    body += uvarint(0)  # the endpoint's tagged fields
    body += uvarint(2) + compact_string("metadata.version") + struct.pack(">hh", 1, 27) + uvarint(0)
    body += compact_string(None) + b"\x01" + b"\x00"  # Rack null, Fenced, InControlledShutdown
    log_dirs = uvarint(2) + BROKER_DIR
    tagged = [(0, log_dirs)]
    if version >= 4:
        tagged.append((1, uvarint(2) + BROKER_DIR))  # CordonedLogDirs
    body += uvarint(len(tagged)) + b"".join(uvarint(t) + uvarint(len(d)) + d for t, d in tagged)
    return uvarint(1) + uvarint(0) + uvarint(version) + body


def unregister_controller() -> bytes:
    """UnregisterControllerRecord (apiKey 29, new after 4.0)."""
    return uvarint(1) + uvarint(29) + uvarint(0) + struct.pack(">i", 3000) + uvarint(0)


@pytest.fixture
def segment(tmp_path: Path) -> Path:
    part = tmp_path / "__cluster_metadata-0"
    part.mkdir()
    values = [register_broker_v4(version=3), register_broker_v4(), unregister_controller()]
    batch = build_v2_batch([SimpleRecord(v, key=None, timestamp=1_700_000_000_000) for v in values])
    path = part / "00000000000000000000.log"
    path.write_bytes(batch)
    return path


def kdump_files(*args: str) -> subprocess.CompletedProcess[bytes]:
    return subprocess.run([sys.executable, "-m", "kdump", "files", *args], capture_output=True, timeout=120)


def test_default_text_is_kafka_40s(segment: Path) -> None:
    out = kdump_files("--files", str(segment), "--cluster-metadata-decoder").stdout.decode()
    lines = [line for line in out.splitlines() if "payload" in line or "skipping" in line]
    assert len(lines) == 3
    assert '"type":"REGISTER_BROKER_RECORD","version":3' in lines[0]
    assert "Error at 1, skipping. Failed to deserialize record with type 0" in lines[1]
    assert (
        "Error at 2, skipping. org.apache.kafka.common.errors.UnsupportedVersionException: Unknown metadata id 29"
        in lines[2]
    )


def test_json_decodes_the_newest_and_says_so(segment: Path) -> None:
    out = kdump_files("--files", str(segment), "--cluster-metadata-decoder", "--json").stdout.decode()
    decoded = [json.loads(line)["decoded"] for line in out.splitlines() if '"decoded"' in line]
    assert [d.get("type") for d in decoded] == [
        "REGISTER_BROKER_RECORD",
        "REGISTER_BROKER_RECORD",
        "UNREGISTER_CONTROLLER_RECORD",
    ]
    assert "beyondKafka40" not in decoded[0] and "cordonedLogDirs" not in decoded[0]["value"]
    assert decoded[1]["beyondKafka40"] is True and decoded[1]["valueVersion"] == 4
    assert decoded[1]["value"]["cordonedLogDirs"] == decoded[1]["value"]["logDirs"]
    assert decoded[2]["beyondKafka40"] is True and decoded[2]["value"] == {"controllerId": 3000}


def test_a_version_newer_than_kdump_knows_is_named(tmp_path: Path) -> None:
    part = tmp_path / "__cluster_metadata-0"
    part.mkdir()
    value = register_broker_v4()[:2] + uvarint(9) + register_broker_v4()[3:]
    (part / "00000000000000000000.log").write_bytes(
        build_v2_batch([SimpleRecord(value, key=None, timestamp=1)])
    )
    out = kdump_files(
        "--files", str(part / "00000000000000000000.log"), "--cluster-metadata-decoder", "--json"
    )
    (decoded,) = [
        json.loads(line)["decoded"] for line in out.stdout.decode().splitlines() if '"decoded"' in line
    ]
    assert "RegisterBrokerRecord version 9 is newer than kdump knows (versions 0-4" in decoded["error"]


@pytest.mark.skipif(
    not KAFKA_TOOL.exists() or shutil.which("java") is None,
    reason="the Kafka 4.0 tool or Java is not installed",
)
def test_default_text_matches_the_real_kafka_40_tool(segment: Path) -> None:
    args = ["--files", str(segment), "--cluster-metadata-decoder"]
    real = subprocess.run([str(KAFKA_TOOL), "kafka-dump-log.sh", *args], capture_output=True, timeout=120)
    ours = kdump_files(*args)
    assert ours.stdout == real.stdout and ours.returncode == real.returncode


# -- group and share coordinators: streams groups (types 17, 19-23) and share layouts changed after 4.0 ---------


def coordinator_key(record_type: int, *strings: str) -> bytes:
    """A coordinator key: int16 record type, then non-flexible (int16-length) strings."""
    return struct.pack(">h", record_type) + b"".join(struct.pack(">h", len(s)) + s.encode() for s in strings)


def streams_group_metadata_value() -> bytes:
    """StreamsGroupMetadataValue v0 (flexible), hand-encoded from the newest source's JSON: Epoch int32,
    MetadataHash int64, then tagged fields 0 (ValidatedTopologyEpoch int32) and 1 (LastAssignmentConfigs, a
    compact array of {Key, Value} compact strings)."""
    configs = uvarint(2) + compact_string("num.standby") + compact_string("1") + uvarint(0)
    tagged = [(0, struct.pack(">i", 3)), (1, configs)]
    body = struct.pack(">iq", 7, 1234)
    body += uvarint(len(tagged)) + b"".join(uvarint(t) + uvarint(len(d)) + d for t, d in tagged)
    return struct.pack(">h", 0) + body


def share_snapshot_value() -> bytes:
    """ShareSnapshotValue v0 as the newest source lays it out: SnapshotEpoch int32 (uint16 in 4.0), StateEpoch,
    LeaderEpoch, StartOffset, CreateTimestamp, WriteTimestamp, StateBatches, tagged DeliveryCompleteCount."""
    body = struct.pack(">iiiqqq", 70000, 2, 3, 100, 1_700_000_000_000, 1_700_000_000_500)
    body += (
        uvarint(2) + struct.pack(">qqbh", 100, 109, 2, 1) + uvarint(0)
    )  # one state batch, its tagged fields
    body += uvarint(1) + uvarint(0) + uvarint(4) + struct.pack(">i", 10)  # tag 0: DeliveryCompleteCount 10
    return struct.pack(">h", 0) + body


def _decoded(path: Path, decoder: str) -> list[dict]:
    out = kdump_files("--files", str(path), f"--{decoder}", "--json").stdout.decode()
    return [json.loads(line)["decoded"] for line in out.splitlines() if '"decoded"' in line]


def test_streams_group_records_decode_with_the_newest_schemas(tmp_path: Path) -> None:
    part = tmp_path / "__consumer_offsets-0"
    part.mkdir()
    log = part / "00000000000000000000.log"
    records = [SimpleRecord(streams_group_metadata_value(), key=coordinator_key(17, "app"), timestamp=1)]
    log.write_bytes(build_v2_batch(records))
    (decoded,) = _decoded(log, "offsets-decoder")
    assert decoded["beyondKafka40"] is True
    assert decoded["key"] == {"groupId": "app"} or decoded["key"].get("groupId") == "app"
    value = decoded["value"]
    assert value["epoch"] == 7 and value["metadataHash"] == 1234 and value["validatedTopologyEpoch"] == 3
    assert value["lastAssignmentConfigs"] == [{"key": "num.standby", "value": "1"}]
    # Kafka 4.0's text does not know type 17
    text = kdump_files("--files", str(log), "--offsets-decoder").stdout.decode()
    assert text.splitlines()[-1].endswith(
        " key: Unknown record type 17 at offset 0, skipping."
    )  # the real tool's


def test_share_snapshot_newest_layout(tmp_path: Path) -> None:
    part = tmp_path / "__share_group_state-0"
    part.mkdir()
    log = part / "00000000000000000000.log"
    key = struct.pack(">h", 0) + struct.pack(">h", 1) + b"g" + uuid.UUID(int=5).bytes + struct.pack(">i", 0)
    log.write_bytes(build_v2_batch([SimpleRecord(share_snapshot_value(), key=key, timestamp=1)]))
    (decoded,) = _decoded(log, "share-group-state-decoder")
    assert decoded["beyondKafka40"] is True
    value = decoded["value"]
    assert value["snapshotEpoch"] == 70000 and value["createTimestamp"] == 1_700_000_000_000
    assert value["deliveryCompleteCount"] == 10
    assert value["stateBatches"] == [
        {"firstOffset": 100, "lastOffset": 109, "deliveryState": 2, "deliveryCount": 1}
    ]


def test_verify_deep_names_records_newer_than_kdump_knows(tmp_path: Path) -> None:
    """`kdump verify --deep` decodes internal topics with the newest schemas; what is newer still is a note
    (a broker newer than kdump is not damage), counted in the summary; the exit status stays 0."""
    part = tmp_path / "logs" / "__consumer_offsets-0"
    part.mkdir(parents=True)
    (tmp_path / "logs" / "meta.properties").write_text("version=1\nnode.id=1\n")
    records = [
        SimpleRecord(streams_group_metadata_value(), key=coordinator_key(17, "app"), timestamp=1),
        SimpleRecord(b"\x00\x00", key=coordinator_key(99, "app"), timestamp=1),
        SimpleRecord(b"\x00\x00", key=coordinator_key(99, "other"), timestamp=1),
    ]
    (part / "00000000000000000000.log").write_bytes(build_v2_batch(records))
    for suffix in (".index", ".timeindex"):
        (part / f"00000000000000000000{suffix}").write_bytes(b"")
    r = subprocess.run(
        [sys.executable, "-m", "kdump", "verify", "--deep", "--json", str(tmp_path / "logs")],
        capture_output=True,
        timeout=120,
    )
    objects = [json.loads(line) for line in r.stdout.decode().splitlines()]
    (note,) = [o for o in objects if o["type"] == "note"]
    assert note["kind"] == "newer-record" and note["offset"] == 1
    assert note["message"] == "2 records not decoded: Found an unknown record type 99 (first at offset 1)"
    summary = objects[-1]
    assert summary["newerRecords"] == 2 and summary["records"] == 3 and summary["problems"] == 0
    assert r.returncode == 0, r.stdout
