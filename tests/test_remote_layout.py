"""Layouts of remote objects other than Kafka's and Aiven's defaults: ``kdump tiered --layout-template`` (checked
against Kafka's own layout, which a template can spell, and a layout of its own) and Aiven's per-segment keys
from the remote log metadata's custom metadata (``--aiven-key-prefix``)."""

from __future__ import annotations

import shutil
import uuid
from pathlib import Path

import pytest

from kdump.storage.aiven_segment import object_key, parse_custom_metadata
from kdump.storage.remote_layout import parse_template
from tests.remote_metadata_records import FINISHED, framed
from tests.test_aiven_segment import AivenTiered, _kinds
from tests.tiered_partition import SEG_A, SEG_B, TIP, TOPIC_ID, A, B, Tiered

KAFKA = "{topic}-{partition}-{topicId}/{startOffset:020d}-{segmentId}{suffix}"


def test_kafkas_layout_as_a_template(tmp_path: Path) -> None:
    tiered = Tiered(tmp_path)
    root = str(tiered.remote_root / "kafka-tiered-storage")
    code, out = tiered.run("--deep", "--layout-template", KAFKA, remote_root=root)
    assert code == 0, out
    same = tiered.run("--deep", remote_root=root)[1]

    def rows(text: str) -> list[str]:
        return [line for line in text.splitlines() if line.startswith(("remote", "local"))]

    assert rows(out) == rows(same) and len(rows(out)) == 4  # the same segments as --layout kafka
    tiered.file(SEG_A, 0, ".log").unlink()
    code, out = tiered.run("--deep", "--layout-template", KAFKA, remote_root=root)
    assert code == 1 and _kinds(out) == {"missing-object"}


def test_a_layout_of_its_own(tmp_path: Path) -> None:
    """Another plugin: ``<topic uuid>/p<partition>/<start>-<end>.log``, only the .log kept."""
    tiered = Tiered(tmp_path)
    mine = tmp_path / "other-plugin"
    template = "{topicUuid}/p{partition}/{startOffset}-{endOffset}.log"
    for seg, (first, last, _) in ((SEG_A, A), (SEG_B, B)):
        target = mine / str(TOPIC_ID) / "p0" / f"{first}-{last}.log"
        target.parent.mkdir(parents=True, exist_ok=True)
        shutil.copy(tiered.file(seg, first, ".log"), target)
    code, out = tiered.run("--deep", "--layout-template", template, remote_root=str(mine))
    assert code == 0, out
    (mine / str(TOPIC_ID) / "p0" / "10-19.log").write_bytes(b"")
    code, out = tiered.run("--deep", "--layout-template", template, remote_root=str(mine))
    assert code == 1 and _kinds(out) == {"size", "offset-range", "leader-epochs"}, out
    assert str(mine / str(TOPIC_ID) / "p0" / "10-19.log") in out


@pytest.mark.parametrize(
    ("template", "words"),
    [
        ("{topic}/{nope}.log", "unknown field {nope}"),
        ("{topic.__class__}.log", "unknown field"),
        ("{topic}/{startOffset}", "needs {suffix} or to end in .log"),
        ("{topic!r}.log", "format spec only"),
        ("{startOffset:q}.log", "Unknown format code"),
        ("plain.log", "no field"),
    ],
)
def test_a_bad_template_is_a_usage_error(template: str, words: str, tmp_path: Path) -> None:
    with pytest.raises(ValueError, match=words):
        parse_template(template)
    tiered = Tiered(tmp_path)
    code, out = tiered.run("--layout-template", template)
    assert code == 2


def test_template_keys() -> None:
    t = parse_template(KAFKA)
    kw = dict(topic="t", partition=3, topic_id=uuid.UUID(int=1), start_offset=42, end_offset=50)
    kw.update(segment_id=uuid.UUID(int=2), broker_id=1)
    assert (
        t.key(**kw, suffix=".index")
        == "t-3-AAAAAAAAAAAAAAAAAAAAAQ/00000000000000000042-AAAAAAAAAAAAAAAAAAAAAg.index"
    )
    t = parse_template("/x/{segmentUuid}/{startOffset:08d}.log")
    assert t.key(**kw, suffix=".log") == "x/00000000-0000-0000-0000-000000000002/00000042.log"
    assert t.key(**kw, suffix=".timeindex") == "x/00000000-0000-0000-0000-000000000002/00000042.timeindex"


def _finished_with(seg: uuid.UUID, custom: bytes) -> bytes:
    return framed(
        "RemoteLogSegmentMetadataUpdateRecord",
        {
            "RemoteLogSegmentId": {"TopicIdPartition": TIP, "Id": seg},
            "BrokerId": 1,
            "EventTimestampMs": 1_800_000_000_001,
            "CustomMetadata": custom,
            "RemoteLogSegmentState": FINISHED,
        },
    )


def test_aiven_custom_metadata_names_where_a_segment_is(tmp_path: Path) -> None:
    """Segment A was copied while the plugin's key.prefix was ``old/``: its .log and .indexes are there (its
    custom metadata says so), its manifest is read at the current prefix ``new/`` as the plugin reads it."""
    tiered = AivenTiered(tmp_path)
    storage = tmp_path / "bucket"
    new = storage / "new"
    new.mkdir(parents=True)
    shutil.move(str(tiered.remote_root / "orders-WloBI0VniavN7wARIjNEVQ"), str(new))
    tiered.remote = new / "orders-WloBI0VniavN7wARIjNEVQ" / "0"
    main = f"orders-WloBI0VniavN7wARIjNEVQ/0/{tiered.file(SEG_A, 0, '').name}"
    old = storage / "old" / main
    old.parent.mkdir(parents=True)
    for suffix in (".log", ".indexes"):
        shutil.move(str(tiered.file(SEG_A, 0, suffix)), str(old) + suffix)
    args = ("--deep", "--aiven-key-prefix", "new/")
    code, out = tiered.run(*args, remote_root=str(storage))
    assert code == 1 and _kinds(out) == {"missing-object"}  # without the custom metadata: not found
    tiered.events[1] = _finished_with(SEG_A, _tagged({0: b"\x02", 1: _compact("old/"), 2: _compact(main)}))
    code, out = tiered.run(*args, remote_root=str(storage))
    assert code == 0, out
    tiered.events[1] = _finished_with(SEG_A, b"\x07\x00")  # not a tagged-fields section
    code, out = tiered.run(*args, remote_root=str(storage))
    assert code == 1 and {"metadata", "missing-object"} == _kinds(out)


# -- custom metadata: per-segment object keys ------------------------------------------------------------------


def _compact(text: str) -> bytes:
    data = text.encode()
    return _uvarint(len(data) + 1) + data


def _uvarint(n: int) -> bytes:
    out = bytearray()
    while True:
        b = n & 0x7F
        n >>= 7
        out.append(b | (0x80 if n else 0))
        if not n:
            return bytes(out)


def _tagged(fields: dict[int, bytes]) -> bytes:
    """Kafka's tagged-fields section (``TaggedFields.writeTo``): count, then tag, size, bytes, by tag."""
    out = _uvarint(len(fields))
    for tag in sorted(fields):
        out += _uvarint(tag) + _uvarint(len(fields[tag])) + fields[tag]
    return out


def test_custom_metadata_overrides_the_object_keys() -> None:
    remote_size = 123456
    zigzag = (remote_size << 1) ^ (remote_size >> 63)
    data = _tagged(
        {0: _uvarint(zigzag), 1: _compact("old-prefix/"), 2: _compact("t-AAAAAAAAAAAAAAAAAAAAAQ/0/x")}
    )
    fields = parse_custom_metadata(data)
    assert fields == {0: remote_size, 1: "old-prefix/", 2: "t-AAAAAAAAAAAAAAAAAAAAAQ/0/x"}
    assert object_key("new/", "main", ".log", fields) == "old-prefix/t-AAAAAAAAAAAAAAAAAAAAAQ/0/x.log"
    assert object_key("new/", "main", ".log", {0: 5}) == "new/main.log"
    assert object_key("new/", "main", ".rsm-manifest") == "new/main.rsm-manifest"
    assert parse_custom_metadata(b"") == {} and parse_custom_metadata(None) == {}
    for bad in (b"\x05", _tagged({1: b"\x00"}), data + b"\x00", b"\x01\x01\x09ab"):
        with pytest.raises(ValueError):
            parse_custom_metadata(bad)
