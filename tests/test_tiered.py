"""``kdump tiered``: a tiered partition (local partition directory + remote objects in Kafka's
RemoteLogSegmentFileset layout + ``__remote_log_metadata``) seen as one log, and every injected inconsistency
found.

The partition is made here: segments by tests/builder (Kafka's batch format, checked elsewhere against the real
tool), the fileset names of Kafka's ``RemoteLogSegmentFileset``/``RemoteTopicPartitionDirectory`` (4.0 source),
and metadata records written with kdump's message writer from Kafka's schemas (the reading of Kafka's own
serialized records is checked in tests/test_remote_log_metadata.py).  No real RemoteStorageManager wrote them:
Kafka ships none (LocalTieredStorage is in its test sources)."""

from __future__ import annotations

import shutil
import uuid
from pathlib import Path

import pytest

from kdump.storage.remote_log_segment import fileset_name
from tests.remote_metadata_records import DELETE_FINISHED, DELETE_STARTED
from tests.tiered_partition import SEG_A, SEG_B, SEG_C, Tiered, added, update


@pytest.fixture
def tiered(tmp_path: Path) -> Tiered:
    return Tiered(tmp_path)


def test_a_sound_tiered_partition_is_one_log(tiered: Tiered) -> None:
    code, out = tiered.run("--deep")
    assert code == 0, out
    lines = out.splitlines()
    rows = [line.split() for line in lines if line.startswith(("remote", "local"))]
    assert [(r[0], r[1]) for r in rows] == [
        ("remote", "0"),
        ("remote", "10"),
        ("local", "10"),
        ("local", "20"),
    ]
    assert rows[0][4] == rows[1][4] == "COPY_SEGMENT_FINISHED"
    assert "(also remote)" in out  # local 10-19 is also in remote storage: normal
    assert "orders-0: 2 remote segment(s), 2 local" in lines[0]
    assert "no problems found" in out


def test_the_remote_root_may_be_a_url(tiered: Tiered) -> None:
    pytest.importorskip("fsspec", reason="fsspec is not installed (pip install 'kdump[s3]')")
    code, out = tiered.run("--deep")
    url = "file://" + str(tiered.remote_root)
    rcode, rout = tiered.run("--deep", remote_root=url)
    assert (rcode, rout) == (code, out.replace(str(tiered.remote_root), url))


def _kinds(out: str) -> set[str]:
    return {
        line.split(": ")[1] for line in out.splitlines() if line.count(": ") >= 2 and line.startswith("/")
    }


def test_a_missing_object_is_found(tiered: Tiered) -> None:
    tiered.file(SEG_A, 0, ".timeindex").unlink()
    code, out = tiered.run()
    assert code == 1
    assert _kinds(out) == {"missing-object"}
    assert fileset_name(0, SEG_A, ".timeindex") in out


def test_a_size_that_differs_from_the_metadata_is_found(tiered: Tiered) -> None:
    log = tiered.file(SEG_B, 10, ".log")
    log.write_bytes(log.read_bytes()[:-20])
    code, out = tiered.run("--deep")
    assert code == 1
    assert _kinds(out) == {"size", "log", "offset-range"}


def test_an_orphaned_fileset_is_found(tiered: Tiered) -> None:
    shutil.copy(tiered.file(SEG_A, 0, ".log"), tiered.file(uuid.UUID(int=0xDEAD), 0, ".log"))
    code, out = tiered.run()
    assert code == 1
    assert _kinds(out) == {"orphaned-object"}


def test_a_segment_stuck_in_copy_or_delete_is_found(tiered: Tiered) -> None:
    tiered.events.append(added(SEG_C, 20, 29, {1: 20}, 100))  # never finished
    tiered.events.append(update(SEG_A, DELETE_STARTED))  # never finished
    code, out = tiered.run()
    assert code == 1
    assert _kinds(out) == {"unfinished"}
    assert "COPY_SEGMENT_STARTED" in out and "DELETE_SEGMENT_STARTED" in out


def test_a_finished_deletion_removes_the_segment_and_leaves_its_objects_orphaned(tiered: Tiered) -> None:
    tiered.events += [update(SEG_A, DELETE_STARTED), update(SEG_A, DELETE_FINISHED)]
    code, out = tiered.run()
    assert code == 1
    assert _kinds(out) == {"orphaned-object"}
    assert [line.split()[1] for line in out.splitlines() if line.startswith("remote")] == ["10"]


def test_wrong_offsets_and_leader_epochs_are_found_by_deep(tiered: Tiered) -> None:
    tiered.events[0] = added(SEG_A, 0, 8, {0: 0}, tiered.file(SEG_A, 0, ".log").stat().st_size)
    tiered.events[2] = added(SEG_B, 10, 19, {0: 10, 2: 15}, tiered.file(SEG_B, 10, ".log").stat().st_size)
    code, out = tiered.run()
    assert "offset-range" not in out  # without --deep the logs are not read
    code, out = tiered.run("--deep")
    assert code == 1
    assert _kinds(out) == {"offset-range", "leader-epochs", "gap"}  # A's end 8: offset 9 in no segment


def test_a_gap_between_remote_and_local_is_found(tiered: Tiered) -> None:
    (tiered.partition / "00000000000000000010.log").unlink()
    (tiered.partition / "00000000000000000020.log").rename(tiered.partition / "00000000000000000025.log")
    code, out = tiered.run()
    assert code == 1
    assert _kinds(out) == {"gap"}
    assert "offsets 20-24 are neither in remote storage" in out


def test_an_invalid_transition_in_the_metadata_is_found(tiered: Tiered) -> None:
    tiered.events.append(update(SEG_B, DELETE_FINISHED))  # FINISHED -> DELETE_FINISHED: Kafka ignores it
    code, out = tiered.run()
    assert code == 1
    assert _kinds(out) == {"metadata"}
    assert "invalid transition COPY_SEGMENT_FINISHED -> DELETE_SEGMENT_FINISHED" in out


def test_the_remote_root_may_be_in_s3(tmp_path: Path) -> None:
    """The remote part in a real S3 API (moto's server, as in tests/test_object_store.py), the Kafka layout
    and Aiven's: the same table and problems as from the local copy of the objects."""
    pytest.importorskip("s3fs", reason="s3fs is not installed (pip install 'kdump[s3]')")
    pytest.importorskip("moto.server", reason="moto[server] is not installed")
    import boto3

    from tests.test_aiven_segment import AivenTiered
    from tests.test_object_store import moto_s3

    with moto_s3() as (bucket, _):
        client = boto3.client("s3")
        for name, cls in (("kafka", Tiered), ("aiven", AivenTiered)):
            tiered = cls(tmp_path / name)
            tiered.file(SEG_A, 0, ".log").unlink()  # a problem to report too
            for path in sorted(tiered.remote_root.rglob("*")):
                if path.is_file():
                    key = f"{name}/{path.relative_to(tiered.remote_root)}"
                    client.put_object(Bucket=bucket, Key=key, Body=path.read_bytes())
            code, out = tiered.run("--deep")
            url = f"s3://{bucket}/{name}"
            rcode, rout = tiered.run("--deep", remote_root=url)
            assert code == 1 and "missing-object" in out
            assert (rcode, rout) == (code, out.replace(str(tiered.remote_root), url))
