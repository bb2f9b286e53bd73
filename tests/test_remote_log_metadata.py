"""Reading ``__remote_log_metadata`` (kdump.analysis.remote_log_metadata) against Kafka's own classes: the
fixture ``tests/fixtures/remote_log_metadata_oracle.txt`` is what ``tests/remote_metadata_oracle/
RemoteMetadataOracle.java`` printed with Kafka 4.0's jars (seed 30): ``RemoteLogMetadataTopicPartitioner``'s
answers for 300 seeded topic-id partitions, 200 seeded metadata events serialized by ``RemoteLogMetadataSerde``,
and the segments ``RemoteLogMetadataCache`` held after applying them.  The default suite replays it; the
``kafka`` test runs the program again with ../shared's Kafka 4.0 and compares."""

from __future__ import annotations

import os
import shutil
import subprocess
import uuid
from pathlib import Path

import pytest

from kdump.analysis.remote_log_metadata import RemoteLogMetadata, metadata_partition, read_remote_log_metadata
from kdump.storage.internal_topics import decode_framed
from kdump.storage.kafka_uuid import decode_uuid, encode_uuid
from kdump.storage.schemas import remote_log_metadata as schemas
from tests.corpus import REPO

FIXTURE = REPO / "tests" / "fixtures" / "remote_log_metadata_oracle.txt"
PROGRAM = REPO / "tests" / "remote_metadata_oracle" / "RemoteMetadataOracle.java"
KAFKA = REPO.parent / "shared" / "kafka-4.0.0" / "kafka"


def _lines(kind: str, text: str | None = None) -> list[list[str]]:
    text = FIXTURE.read_text() if text is None else text
    return [line.split(" ")[1:] for line in text.splitlines() if line.startswith(kind + " ")]


def _uuid(text: str) -> uuid.UUID:
    return uuid.UUID(bytes=decode_uuid(text))


def test_the_fixture_has_every_part() -> None:
    assert len(_lines("P")) == 300 and len(_lines("E")) == 200 and len(_lines("S")) >= 5


def test_metadata_partition_is_kafkas() -> None:
    for topic_id, partition, in_50, in_7 in _lines("P"):
        assert metadata_partition(_uuid(topic_id), int(partition)) == int(in_50)
        assert metadata_partition(_uuid(topic_id), int(partition), 7) == int(in_7)


def _folded(values: list[bytes]) -> RemoteLogMetadata:
    out = RemoteLogMetadata()
    for offset, value in enumerate(values):
        decoded = decode_framed("remote-log-metadata", schemas.BY_API_KEY, value)
        out.apply(decoded.kind, decoded.value, ("__remote_log_metadata-0", offset))
    return out


def _segments(out: RemoteLogMetadata) -> list[list[str]]:
    (partition,) = out.partitions.values()
    rows = []
    for s in partition.segments.values():
        epochs = "{" + ",".join(f"{e}={o}" for e, o in s.leader_epochs) + "}"
        rows.append(
            [
                encode_uuid(s.segment_id.bytes),
                s.state,
                str(s.start_offset),
                str(s.end_offset),
                str(s.broker_id),
                str(s.event_timestamp),
                str(s.size_in_bytes),
                "-" if s.custom_metadata is None else bytes(s.custom_metadata).hex(),
                epochs,
                str(s.txn_index_empty).lower(),
            ]
        )
    return sorted(rows, key=lambda r: " ".join(r))


def test_kafkas_serialized_events_fold_to_the_segments_its_cache_holds() -> None:
    out = _folded([bytes.fromhex(v) for (v,) in _lines("E")])
    assert out.records == 200
    assert _segments(out) == sorted(_lines("S"), key=lambda r: " ".join(r))
    # the events Kafka's cache refuses are reported (invalid transitions, updates of unknown segments)
    assert out.problems


def test_a_metadata_partition_directory_is_read_in_offset_order(tmp_path: Path) -> None:
    from tests.builder import SimpleRecord, build_segment, build_v2_batch

    values = [bytes.fromhex(v) for (v,) in _lines("E")]
    directory = tmp_path / "__remote_log_metadata-0"
    directory.mkdir()
    for base, part in ((0, values[:120]), (120, values[120:])):
        batches = [build_v2_batch([SimpleRecord(value=v)], base_offset=base + i) for i, v in enumerate(part)]
        (directory / f"{base:020d}.log").write_bytes(build_segment(batches))
    read = read_remote_log_metadata([str(tmp_path)])
    assert _segments(read) == _segments(_folded(values))
    assert read.records == 200


@pytest.mark.kafka
def test_the_fixture_is_what_kafka_prints() -> None:
    if shutil.which("java") is None or not KAFKA.exists():
        pytest.skip("needs Java 17+ and ../shared/kafka-4.0.0")
    subprocess.run([str(KAFKA)], capture_output=True, timeout=300)  # unpacks the distribution once
    libs = (
        Path(os.environ.get("KDUMP_KAFKA_HOME", Path.home() / ".cache" / "kdump-kafka-4.0.0"))
        / "kafka"
        / "libs"
    )
    result = subprocess.run(
        ["java", "-cp", f"{libs}/*", str(PROGRAM), "30"],
        capture_output=True,
        text=True,
        timeout=600,
        check=True,
    )
    answers = [line for line in result.stdout.splitlines(keepends=True) if line[:2] in ("P ", "E ", "S ")]
    assert "".join(answers) == FIXTURE.read_text()  # Kafka's cache logs the events it drops on stdout too
