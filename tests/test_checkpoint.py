"""Text checkpoint and state files (kdump.storage.checkpoint and the modules of each format): Kafka's reader semantics and error texts,
encoders that reproduce the real files byte for byte, and random input."""

from __future__ import annotations

import os
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from kdump.errors import CheckpointFormatError
from kdump.storage.checkpoint import read_checkpoint
from kdump.storage.clean_shutdown import CleanShutdown, encode_clean_shutdown, parse_clean_shutdown
from kdump.storage.kafka_uuid import decode_uuid, encode_uuid
from kdump.storage.leader_epoch_checkpoint import (
    EpochEntry,
    LeaderEpochCheckpoint,
    encode_leader_epoch_checkpoint,
    parse_leader_epoch_checkpoint,
    read_leader_epoch_checkpoint,
)
from kdump.storage.meta_properties import (
    MetaProperties,
    encode_meta_properties,
    parse_meta_properties,
    read_meta_properties,
)
from kdump.storage.offset_checkpoint import (
    OffsetCheckpoint,
    TopicPartitionOffset,
    encode_offset_checkpoint,
    parse_offset_checkpoint,
    read_offset_checkpoint,
)
from kdump.storage.partition_metadata import (
    PartitionMetadata,
    encode_partition_metadata,
    parse_partition_metadata,
    read_partition_metadata,
)
from kdump.storage.quorum_state import QuorumState, encode_quorum_state, parse_quorum_state, read_quorum_state
from tests.corpus import CORPUS

FIXTURES = Path(__file__).resolve().parent / "fixtures" / "corpus"
STATE_FILES = {
    "recovery-point-offset-checkpoint",
    "replication-offset-checkpoint",
    "log-start-offset-checkpoint",
    "cleaner-offset-checkpoint",
    "leader-epoch-checkpoint",
    "partition.metadata",
    "meta.properties",
    "quorum-state",
    ".kafka_cleanshutdown",
}


def state_files(root: Path) -> list[Path]:
    found = []
    for directory in ("data", "data-kafka39-zk", "damaged"):
        for dirpath, _, names in os.walk(root / directory):
            found += [Path(dirpath) / name for name in names if name in STATE_FILES]
    return sorted(found)


def reencode(decoded, original: bytes) -> bytes:
    """Write a decoded file back with the matching encoder."""
    if isinstance(decoded, OffsetCheckpoint):
        return b"" if decoded.version is None else encode_offset_checkpoint(decoded.entries)
    if isinstance(decoded, LeaderEpochCheckpoint):
        return b"" if decoded.version is None else encode_leader_epoch_checkpoint(decoded.entries)
    if isinstance(decoded, PartitionMetadata):
        return encode_partition_metadata(decoded.topic_id, version=decoded.version)
    if isinstance(decoded, MetaProperties):
        return encode_meta_properties(decoded.properties, date=decoded.comments[1][1:])
    if isinstance(decoded, QuorumState):
        return encode_quorum_state(decoded)
    if isinstance(decoded, CleanShutdown):
        return (
            b"" if decoded.is_empty else encode_clean_shutdown(decoded.broker_epoch, version=decoded.version)
        )
    raise AssertionError(decoded)


def corpus_params() -> list:
    params = [
        pytest.param(path, id=f"fixtures:{path.relative_to(FIXTURES)}") for path in state_files(FIXTURES)
    ]
    if CORPUS.is_dir():
        params += [
            pytest.param(path, id=f"corpus:{path.relative_to(CORPUS)}") for path in state_files(CORPUS)
        ]
    else:
        params.append(pytest.param(None, marks=pytest.mark.skip(reason=f"corpus not found at {CORPUS}")))
    return params


# ---------------------------------------------------------------------------------------------------------------
# real files


@pytest.mark.corpus
@pytest.mark.parametrize("path", corpus_params())
def test_real_state_files_decode_and_reencode(path):
    """Every state file the brokers wrote decodes, and encoding the result gives the same bytes back."""
    decoded = read_checkpoint(path)
    assert reencode(decoded, path.read_bytes()) == path.read_bytes()


def test_fixture_state_files_present():
    names = {path.name for path in state_files(FIXTURES)}
    assert names == STATE_FILES


def test_fixture_offset_checkpoints():
    recovery = read_offset_checkpoint(FIXTURES / "data/recovery-point-offset-checkpoint")
    assert recovery.version == 0 and len(recovery.entries) == 20
    assert recovery.entries[0] == TopicPartitionOffset("codec-zstd", 0, 201)
    assert recovery.offsets()[("idempotent", 0)] == 1520
    assert read_offset_checkpoint(FIXTURES / "data/cleaner-offset-checkpoint").entries == (
        TopicPartitionOffset("compact", 0, 575),
    )
    assert read_offset_checkpoint(FIXTURES / "data/log-start-offset-checkpoint").offsets() == {
        ("plain-kpy", 0): 10
    }
    empty = read_offset_checkpoint(FIXTURES / "data-kafka39-zk/cleaner-offset-checkpoint")
    assert empty.version is None and empty.entries == ()
    assert read_offset_checkpoint(
        FIXTURES / "data-kafka39-zk/log-start-offset-checkpoint"
    ) == OffsetCheckpoint(0, (), str(FIXTURES / "data-kafka39-zk/log-start-offset-checkpoint"))


def test_fixture_other_state_files():
    epochs = read_leader_epoch_checkpoint(FIXTURES / "data/idempotent-0/leader-epoch-checkpoint")
    assert epochs.version == 0 and epochs.entries[0] == EpochEntry(0, 0)
    metadata = read_partition_metadata(FIXTURES / "data/idempotent-0/partition.metadata")
    assert metadata.version == 0 and len(metadata.topic_id) == 22
    assert encode_uuid(metadata.topic_id_bytes) == metadata.topic_id
    kraft = read_meta_properties(FIXTURES / "data/meta.properties")
    assert (kraft.version, kraft.node_id, kraft.cluster_id, kraft.directory_id) == (
        1,
        1,
        "8oPobcUUSFCTM0yBFvSWNw",
        "ygP1c0K7TAqSR1oa6g1g_w",
    )
    assert kraft.comments == ("#", "#Sat Nov 21 05:24:10 UTC 2026")
    zk = read_meta_properties(FIXTURES / "data-kafka39-zk/meta.properties")
    assert (zk.version, zk.node_id, zk.cluster_id, zk.directory_id) == (0, 0, "hkoeLPucScO0DJDs2GhfCg", None)
    quorum = read_quorum_state(FIXTURES / "data/__cluster_metadata-0/quorum-state")
    assert (quorum.data_version, quorum.leader_id, quorum.leader_epoch, quorum.voted_id) == (1, 1, 5, -1)
    assert quorum.voted_directory_id == "AAAAAAAAAAAAAAAAAAAAAA"
    assert read_checkpoint(FIXTURES / "data/.kafka_cleanshutdown") == CleanShutdown(
        0, 938, str(FIXTURES / "data/.kafka_cleanshutdown")
    )
    assert read_checkpoint(FIXTURES / "data-kafka39-zk/.kafka_cleanshutdown").broker_epoch == -1
    with pytest.raises(ValueError):
        read_checkpoint(FIXTURES / "data/small-index-0/00000000000000001423.index")


# ---------------------------------------------------------------------------------------------------------------
# generic checkpoint files


def offset_error(data: bytes, tmp_path: Path, monkeypatch) -> CheckpointFormatError:
    monkeypatch.chdir(tmp_path)
    Path("recovery-point-offset-checkpoint").write_bytes(data)
    with pytest.raises(CheckpointFormatError) as caught:
        read_offset_checkpoint("recovery-point-offset-checkpoint")
    assert caught.value.path == "recovery-point-offset-checkpoint"
    return caught.value


@pytest.mark.parametrize(
    ("data", "line", "text"),
    [
        (b"x\n", 1, "Malformed line in checkpoint file [{p}]: x"),
        (b" 0\n", 1, "Malformed line in checkpoint file [{p}]:  0"),
        (b"1\n0\n", 1, "Unrecognised version:1, expected version: 0 in checkpoint file at: {p}"),
        (b"0\n1 \n", 2, "Malformed line in checkpoint file [{p}]: 1 "),
        (b"0\n2\nt 0 5\n", 2, "Expected [2] entries in checkpoint file [{p}], but found only [1]"),
        (b"0\n0\nt 0 5\n", 2, "Expected [0] entries in checkpoint file [{p}], but found only [1]"),
        (b"0\n1\nt 0\n", 3, "Malformed line in checkpoint file [{p}]: t 0"),
        (b"0\n1\n t 0 5\n", 3, "Malformed line in checkpoint file [{p}]:  t 0 5"),
        (b"0\n1\nt x 5\n", 3, "Malformed line in checkpoint file [{p}]: t x 5"),
        (
            b"0\n1\nt 0 99999999999999999999\n",
            3,
            "Malformed line in checkpoint file [{p}]: t 0 99999999999999999999",
        ),
        (b"0\n2\nt 0 5\n\n", 4, "Malformed line in checkpoint file [{p}]: "),
        (b"0\n-1\n", 2, "negative entry count -1 in checkpoint file [{p}]"),
        (b"0\n1\nt\xff 0 5\n", 3, "invalid UTF-8 at byte 5 in checkpoint file [{p}]"),
    ],
)
def test_offset_checkpoint_errors(data, line, text, tmp_path, monkeypatch):
    error = offset_error(data, tmp_path, monkeypatch)
    expected = text.format(p=f"{tmp_path}/recovery-point-offset-checkpoint")
    assert error.message == f"line {line}: {expected}"
    assert error.line == line


def test_offset_checkpoint_kafka_messages(tmp_path, monkeypatch):
    assert offset_error(b"0\n1\nt x 5\n", tmp_path, monkeypatch).kafka_message == 'For input string: "x"'
    assert offset_error(b"0\n-3\n", tmp_path, monkeypatch).kafka_message == "Illegal Capacity: -3"
    error = offset_error(b"0\n1\nt 0\n", tmp_path, monkeypatch)
    assert error.position == 4 and error.kafka_message.startswith("Malformed line in checkpoint file [")


def test_offset_checkpoint_java_parsing_rules():
    # only the version line: no entries; tabs and trailing blanks are fine; CR and CRLF end lines too
    assert parse_offset_checkpoint(b"0\n").entries == ()
    assert parse_offset_checkpoint(b"0").version == 0
    assert parse_offset_checkpoint(b"0\r\n2\rt\t0  +5 \r\nu 1 -1").entries == (
        TopicPartitionOffset("t", 0, 5),
        TopicPartitionOffset("u", 1, -1),
    )
    # Java's parseInt takes any Unicode decimal digit
    assert parse_offset_checkpoint("0\n1\nt \u0661 5\n".encode()).entries == (
        TopicPartitionOffset("t", 1, 5),
    )
    # Python would accept these, Java does not
    for bad in (b"0\n1\nt 1_0 5\n", b"0\n1\nt 0 0x5\n", b"0\n+\n"):
        with pytest.raises(CheckpointFormatError):
            parse_offset_checkpoint(bad)
    entries = [TopicPartitionOffset("a", 0, 1), TopicPartitionOffset("a", 0, 2)]
    assert parse_offset_checkpoint(encode_offset_checkpoint(entries)).offsets() == {("a", 0): 2}
    assert encode_offset_checkpoint({("x", 3): 7}) == b"0\n1\nx 3 7\n"


def test_leader_epoch_checkpoint():
    data = encode_leader_epoch_checkpoint([EpochEntry(0, 0), EpochEntry(2, 45)])
    assert data == b"0\n2\n0 0\n2 45\n"
    assert parse_leader_epoch_checkpoint(data).entries == (EpochEntry(0, 0), EpochEntry(2, 45))
    with pytest.raises(
        CheckpointFormatError, match=r"^line 3: Malformed line in checkpoint file \[.*\]: 0 0 0$"
    ):
        parse_leader_epoch_checkpoint(b"0\n1\n0 0 0\n", "leader-epoch-checkpoint")
    with pytest.raises(CheckpointFormatError, match="line 3: Malformed line") as caught:
        parse_leader_epoch_checkpoint(b"0\n1\n2147483648 0\n")
    assert caught.value.kafka_message == 'For input string: "2147483648"'


# ---------------------------------------------------------------------------------------------------------------
# partition.metadata


@pytest.mark.parametrize(
    ("data", "line", "text"),
    [
        (b"", 1, "missing version line in partition metadata file ({p})"),
        (
            b"version 0\ntopic_id: clC6LB2oQ6CJ6JqC1OeGQg",
            1,
            "Malformed line in checkpoint file [{p}]: version 0",
        ),
        (b"version: x\n", 1, "Malformed line in checkpoint file [{p}]: version: x"),
        (b"version: -1\n", 1, "Unrecognized version of partition metadata file + ({p}): -1"),
        (b"version: 0", 2, "missing topic_id line in partition metadata file ({p})"),
        (b"version: 0\ntopic_id:abc", 2, "Malformed line in checkpoint file [{p}]: topic_id:abc"),
        (
            b"version: 0\ntopic_id: AAAAAAAAAAAAAAAAAAAAAA",
            2,
            "Invalid topic ID in partition metadata file ({p})",
        ),
        (
            b"version: 0\ntopic_id: abc",
            2,
            "Input string `abc` decoded as 2 bytes, which is not equal to the expected 16 bytes of a "
            "base64-encoded UUID",
        ),
        (
            b"version: 0\ntopic_id: clC6LB2oQ6CJ6JqC1OeGQg+",
            2,
            "Illegal base64 character 2b",
        ),
        (
            b"version: 0\ntopic_id: clC6LB2oQ6CJ6JqC1OeGQgAAAAAAA",
            2,
            "Input string with prefix `clC6LB2oQ6CJ6JqC1OeGQgAA` is too long to be decoded as a base64 UUID",
        ),
    ],
)
def test_partition_metadata_errors(data, line, text, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    Path("partition.metadata").write_bytes(data)
    with pytest.raises(CheckpointFormatError) as caught:
        read_partition_metadata("partition.metadata")
    assert caught.value.message == f"line {line}: " + text.format(p=f"{tmp_path}/partition.metadata")


def test_partition_metadata_lenient_like_kafka():
    # labels are not checked, later lines are ignored, padding is accepted, a higher version is accepted
    parsed = parse_partition_metadata(b"foo:\t3\nbar:  clC6LB2oQ6CJ6JqC1OeGQg==\nmore stuff")
    assert (parsed.version, parsed.topic_id) == (3, "clC6LB2oQ6CJ6JqC1OeGQg")
    assert (
        encode_partition_metadata("clC6LB2oQ6CJ6JqC1OeGQg") == b"version: 0\ntopic_id: clC6LB2oQ6CJ6JqC1OeGQg"
    )


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("a", "Input byte[] should at least have 2 bytes for base64 bytes"),
        ("A=", "Last unit does not have enough valid bits"),
        ("==", "Input byte array has wrong 4-byte ending unit"),
        ("AAAAA", "Last unit does not have enough valid bits"),
        ("AA=A", "Input byte array has wrong 4-byte ending unit"),
        ("AA==AA", "Input byte array has incorrect ending byte at 4"),
        ("AA/A", "Illegal base64 character 2f"),
        ("AA\u00e9A", "Illegal base64 character -17"),
    ],
)
def test_uuid_decoding_errors_follow_java(text, message):
    with pytest.raises(ValueError) as caught:
        decode_uuid(text)
    assert str(caught.value) == message


# ---------------------------------------------------------------------------------------------------------------
# meta.properties


def test_meta_properties_java_syntax():
    data = (
        b"# comment\n! other comment\n\n  version = 1\nnode.id:7\ncluster.id   abc\\\n    def\n"
        b"directory.id=ygP1c0K7TAqSR1oa6g1g_w\nweird\\ key=va\\u0041l\\tue\nempty\n"
    )
    parsed = parse_meta_properties(data)
    assert (parsed.version, parsed.node_id, parsed.cluster_id) == (1, 7, "abcdef")
    assert parsed.properties["weird key"] == "vaAl\tue"
    assert parsed.properties["empty"] == ""
    assert parsed.comments == ("# comment", "! other comment")
    round_trip = parse_meta_properties(encode_meta_properties(parsed.properties))
    assert round_trip.properties == parsed.properties


@pytest.mark.parametrize(
    ("data", "line", "text"),
    [
        (b"version=x\n", 1, "Invalid meta.properties version string 'x'"),
        (b"#\nversion=2\n", 2, "Unknown meta.properties version number 2"),
        (b"version=1\ncluster.id=a\n", 3, "Failed to find node.id"),
        (b"version=1\nnode.id=1\n", 3, "cluster.id was not found."),
        (b"version=1\nnode.id=1 \ncluster.id=a\n", 2, "Unable to read node.id as a base-10 number."),
        (b"broker.id=x\n", 1, "Unable to read broker.id as a base-10 number."),
        (
            b"version=1\nnode.id=1\ncluster.id=a\ndirectory.id=zz\n",
            4,
            "Unable to read directory.id as a Uuid: Input string `zz` decoded as 1 bytes, which is not equal "
            "to the expected 16 bytes of a base64-encoded UUID",
        ),
        (b"a=\\u12\n", 1, "Malformed \\uxxxx encoding."),
    ],
)
def test_meta_properties_errors(data, line, text):
    with pytest.raises(CheckpointFormatError) as caught:
        parse_meta_properties(data, "meta.properties")
    assert caught.value.message == f"line {line}: {text}"


def test_meta_properties_v0_without_broker_id():
    parsed = parse_meta_properties(b"version= 0 \n")
    assert (parsed.version, parsed.node_id, parsed.cluster_id) == (0, None, None)


# ---------------------------------------------------------------------------------------------------------------
# quorum-state and .kafka_cleanshutdown


def test_quorum_state_v0_and_trailing_content():
    v0 = QuorumState(0, 3, 7, -1, None, "cid", 99, (1, 2, 3))
    data = encode_quorum_state(v0)
    assert data == (
        b'{"clusterId":"cid","leaderId":3,"leaderEpoch":7,"votedId":-1,"appliedOffset":99,'
        b'"currentVoters":[{"voterId":1},{"voterId":2},{"voterId":3}],"data_version":0}'
    )
    assert parse_quorum_state(data) == v0
    # only the first line counts, and content after the JSON value is ignored (Jackson)
    assert parse_quorum_state(data + b" trailing\nsecond line") == v0


@pytest.mark.parametrize(
    ("data", "text"),
    [
        (b"", "File ended prematurely."),
        (b"[1]\n", "Deserialized node [1] is not an object node"),
        (b'{"leaderId":1}', 'Deserialized node {"leaderId":1} does not have data_version field'),
        (b'{"data_version":2}', "data_version (2) is not within the min (0) and max (1) supported version"),
        (
            b'{"data_version":1,"leaderId":1,"leaderEpoch":1}',
            "QuorumStateData: unable to locate field 'votedId', which is mandatory in version 1",
        ),
        (
            b'{"data_version":1,"leaderId":"1","leaderEpoch":1,"votedId":1,"votedDirectoryId":"AAAAAAAAAAAAAAAAAAAAAA"}',
            "QuorumStateData: expected an integer or string type, but got STRING",
        ),
        (
            b'{"data_version":1,"leaderId":1.5,"leaderEpoch":1,"votedId":1,"votedDirectoryId":"AAAAAAAAAAAAAAAAAAAAAA"}',
            'QuorumStateData: failed to parse number: For input string: "1.5"',
        ),
        (
            b'{"data_version":1,"leaderId":1,"leaderEpoch":1,"votedId":1,"votedDirectoryId":5}',
            "QuorumStateData expected a JSON string type, but got OBJECT",
        ),
    ],
)
def test_quorum_state_errors(data, text):
    with pytest.raises(CheckpointFormatError) as caught:
        parse_quorum_state(data, "quorum-state")
    assert caught.value.message == f"line 1: {text}"


def test_quorum_state_bad_json():
    with pytest.raises(CheckpointFormatError, match=r"^line 1: invalid JSON: "):
        parse_quorum_state(b'{"data_version": }')
    with pytest.raises(CheckpointFormatError, match=r"^line 1: invalid JSON: "):
        parse_quorum_state(b"[" * 100000)


def test_clean_shutdown():
    assert parse_clean_shutdown(b"").is_empty
    assert parse_clean_shutdown(b"\n").is_empty
    assert parse_clean_shutdown(b'{"version":0,"brokerEpoch":5,"extra":true}') == CleanShutdown(0, 5)
    assert encode_clean_shutdown(938) == b'{"version":0,"brokerEpoch":938}'
    with pytest.raises(CheckpointFormatError, match="^line 2: invalid JSON"):
        parse_clean_shutdown(b'{"version":0,\n"brokerEpoch":}')
    with pytest.raises(CheckpointFormatError, match="field 'brokerEpoch' is not an integer"):
        parse_clean_shutdown(b'{"brokerEpoch":"5"}')
    with pytest.raises(CheckpointFormatError, match="expected a JSON object"):
        parse_clean_shutdown(b"5")


# ---------------------------------------------------------------------------------------------------------------
# robustness: any bytes give a result or a CheckpointFormatError naming the file and a line

PARSERS = [
    parse_offset_checkpoint,
    parse_leader_epoch_checkpoint,
    parse_partition_metadata,
    parse_meta_properties,
    parse_quorum_state,
    parse_clean_shutdown,
]
TEXTISH = st.lists(
    st.sampled_from(
        ["0", "1", "2", "-", "+", " ", "\t", "\n", "\r", "t", ":", "=", "\\", "#", "{", "}", '"', "é"]
    ),
    max_size=60,
).map(lambda parts: "".join(parts).encode("utf-8"))


@pytest.mark.parametrize("parser", PARSERS, ids=lambda p: p.__name__)
@given(data=st.one_of(st.binary(max_size=200), TEXTISH))
@settings(max_examples=150, deadline=None)
def test_any_bytes(parser, data):
    try:
        parser(data, "some/file")
    except CheckpointFormatError as error:
        assert error.path == "some/file"
        assert error.message.startswith(f"line {error.line}: ") and error.line >= 1


@given(
    st.lists(
        st.builds(
            TopicPartitionOffset,
            st.text(
                st.characters(blacklist_categories=("Cs",), blacklist_characters=" \t\n\x0b\f\r"),
                min_size=1,
                max_size=10,
            ),
            st.integers(-(2**31), 2**31 - 1),
            st.integers(-(2**63), 2**63 - 1),
        ),
        max_size=10,
    )
)
@settings(max_examples=100, deadline=None)
def test_offset_checkpoint_round_trip(entries):
    assert parse_offset_checkpoint(encode_offset_checkpoint(entries)).entries == tuple(entries)
