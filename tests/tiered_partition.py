"""A tiered partition as the tests make it (tests/test_tiered.py, tests/test_aiven_*.py, tests/test_remote_layout.py):
segments by tests/builder (Kafka's batch format, checked elsewhere against the real tool), the fileset names of
Kafka's ``RemoteLogSegmentFileset``/``RemoteTopicPartitionDirectory`` (4.0 source), and ``__remote_log_metadata``
records written with kdump's message writer from Kafka's schemas (tests/remote_metadata_records.py)."""

from __future__ import annotations

import uuid
from pathlib import Path

from click.testing import CliRunner

from kdump.analysis.remote_log_metadata import metadata_partition
from kdump.cli.commands import cli
from kdump.storage.partition_metadata import encode_partition_metadata
from kdump.storage.remote_log_segment import fileset_name, partition_dir_name
from tests.builder import SimpleRecord, build_segment, build_v2_batch
from tests.remote_metadata_records import FINISHED, STARTED, framed

TOPIC_ID = uuid.UUID(int=0x5A5A_0123_4567_89AB_CDEF_0011_2233_4455)
SEG_A = uuid.UUID(int=0xA)
SEG_B = uuid.UUID(int=0xB)
SEG_C = uuid.UUID(int=0xC)


def segment(first: int, last: int, epochs: dict[int, int]) -> bytes:
    """One batch per offset, each in the leader epoch in force at its offset (``epochs``: epoch -> first offset)."""
    batches = []
    for offset in range(first, last + 1):
        epoch = max(e for e, start in epochs.items() if start <= offset)
        batches.append(
            build_v2_batch(
                [SimpleRecord(value=b"v%d" % offset, timestamp=1_700_000_000_000 + offset)],
                base_offset=offset,
                partition_leader_epoch=epoch,
            )
        )
    return build_segment(batches)


TIP = {"Name": "orders", "Id": TOPIC_ID, "Partition": 0}


def added(seg: uuid.UUID, start: int, end: int, epochs: dict[int, int], size: int) -> bytes:
    return framed(
        "RemoteLogSegmentMetadataRecord",
        {
            "RemoteLogSegmentId": {"TopicIdPartition": TIP, "Id": seg},
            "StartOffset": start,
            "EndOffset": end,
            "BrokerId": 1,
            "MaxTimestampMs": 1_700_000_000_000 + end,
            "EventTimestampMs": 1_800_000_000_000,
            "SegmentLeaderEpochs": [{"LeaderEpoch": e, "Offset": o} for e, o in sorted(epochs.items())],
            "SegmentSizeInBytes": size,
            "CustomMetadata": None,
            "RemoteLogSegmentState": STARTED,
        },
    )


def update(seg: uuid.UUID, state: int) -> bytes:
    return framed(
        "RemoteLogSegmentMetadataUpdateRecord",
        {
            "RemoteLogSegmentId": {"TopicIdPartition": TIP, "Id": seg},
            "BrokerId": 1,
            "EventTimestampMs": 1_800_000_000_001,
            "CustomMetadata": None,
            "RemoteLogSegmentState": state,
        },
    )


A = (0, 9, {0: 0})
B = (10, 19, {0: 10, 1: 15})
C = (20, 29, {1: 20})


class Tiered:
    """The files of one tiered partition, to damage before a run."""

    def __init__(self, root: Path) -> None:
        self.logs = root / "logs"
        self.partition = self.logs / "orders-0"
        self.partition.mkdir(parents=True)
        (self.partition / "partition.metadata").write_bytes(encode_partition_metadata(kafka_id(TOPIC_ID)))
        # local: B (still local: local retention has not deleted it) and C, the active segment
        for first, last, epochs in (B, C):
            (self.partition / f"{first:020d}.log").write_bytes(segment(first, last, epochs))
        self.remote_root = root / "tiered"
        self.remote = self.remote_root / "kafka-tiered-storage" / partition_dir_name("orders", 0, TOPIC_ID)
        self.remote.mkdir(parents=True)
        self.events: list[bytes] = []
        for seg, (first, last, epochs) in ((SEG_A, A), (SEG_B, B)):
            data = segment(first, last, epochs)
            for suffix in (".log", ".index", ".timeindex", ".leader_epoch_checkpoint", ".snapshot"):
                (self.remote / fileset_name(first, seg, suffix)).write_bytes(
                    data if suffix == ".log" else b""
                )
            self.events += [added(seg, first, last, epochs, len(data)), update(seg, FINISHED)]

    def file(self, seg: uuid.UUID, first: int, suffix: str) -> Path:
        return self.remote / fileset_name(first, seg, suffix)

    def write_metadata(self) -> None:
        directory = self.logs / f"__remote_log_metadata-{metadata_partition(TOPIC_ID, 0)}"
        directory.mkdir(exist_ok=True)
        batches = [build_v2_batch([SimpleRecord(value=v)], base_offset=i) for i, v in enumerate(self.events)]
        (directory / "00000000000000000000.log").write_bytes(build_segment(batches))

    def run(self, *extra: str, remote_root: str | None = None) -> tuple[int, str]:
        self.write_metadata()
        result = CliRunner().invoke(
            cli,
            ["tiered", str(self.partition), "--remote-root", remote_root or str(self.remote_root), *extra],
        )
        return result.exit_code, result.stdout


def kafka_id(u: uuid.UUID) -> str:
    from kdump.storage.kafka_uuid import encode_uuid

    return encode_uuid(u.bytes)
