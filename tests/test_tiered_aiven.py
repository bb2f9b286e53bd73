"""A real broker's tiered partition (``tests/fixtures/tiered-broker``) read as one log in Aiven's layout and in a
``--layout-template`` layout, through the one partition model (``RemoteChecks.one_log``) every command walks.

The remote segments the broker copied (Kafka's ``LocalTieredStorage``) are written again as Aiven's plugin writes
them (``KafkaRemoteStorageManager``, from its source: the plugin itself cannot run here): each ``.log`` cut into
chunks, zstd-compressed and/or AES-256-GCM encrypted, its five indexes in one ``.indexes`` object, a
``.rsm-manifest``.  The oracle: every command over the Aiven copy says what it says over the broker's own objects
(``ls``, ``txn``, ``verify``, ``find``'s batch) -- and ``find``'s chunk is checked by undoing the chunk here,
with zstandard and ``cryptography``'s AES-GCM, not kdump's reader."""

from __future__ import annotations

import json
import shutil
import uuid
from pathlib import Path

import pytest
import zstandard
from click.testing import CliRunner

from kdump.cli.commands import cli
from kdump.render.json_schema import validate
from kdump.storage.aiven_segment import object_name, partition_prefix
from kdump.storage.kafka_uuid import decode_uuid
from tests.aiven_objects import indexes_blob, make_keys, write_aiven, write_encrypted
from tests.test_tiered_broker import FILESET, FIXTURE

pytestmark = pytest.mark.skipif(not FIXTURE.is_dir(), reason="tests/fixtures/tiered-broker is absent")

#: The plugin's chunk.size for these copies: each 6-8 KB segment is 3-4 chunks.
CHUNK = 2048
#: ``.indexes``' names for the fileset's suffixes (``SegmentIndexesV1``).
INDEX_SUFFIXES = {
    "offset": ".index",
    "timestamp": ".timeindex",
    "producerSnapshot": ".snapshot",
    "leaderEpoch": ".leader_epoch_checkpoint",
    "transaction": ".txnindex",
}


class AivenCopy:
    """A copy of the broker's tiered partition: ``remote`` (Kafka's layout, as the broker left it) and
    ``aiven`` (the same segments in Aiven's layout), with the local part and the metadata partition."""

    def __init__(self, root: Path, *, compression: bool, pem: Path | None = None) -> None:
        shutil.copytree(FIXTURE, root)
        self.root = root
        self.broker = json.loads((root / "broker.json").read_text())
        self.kafka = next((root / "remote").iterdir())
        self.local = root / "local" / "tiered-0"
        self.topic_id = uuid.UUID(bytes=decode_uuid(self.broker["topic_id"]))
        self.aiven_root = root / "aiven"
        self.aiven = self.aiven_root / partition_prefix("tiered", self.topic_id.bytes, 0)
        self.aiven.mkdir(parents=True)
        self.data_keys: dict[str, tuple[bytes, bytes]] = {}
        for log in sorted(self.kafka.glob("*.log")):
            m = FILESET.match(log.name)
            assert m
            start, sid = int(m.group(1)), m.group(2)
            stem = log.with_suffix("")
            indexes = {
                name: stem.with_name(stem.name + suffix).read_bytes()
                for name, suffix in INDEX_SUFFIXES.items()
                if stem.with_name(stem.name + suffix).exists()
            }
            if pem is not None:
                data, blob, manifest = write_encrypted(
                    log.read_bytes(), CHUNK, pem, compression=compression, indexes=indexes
                )
            else:
                data, manifest = write_aiven(
                    log.read_bytes(), CHUNK, compression=compression, variable=compression
                )
                blob, manifest["segmentIndexes"] = indexes_blob(indexes)
            sid_bytes = decode_uuid(sid)
            (self.aiven / object_name(start, sid_bytes, ".log")).write_bytes(data)
            (self.aiven / object_name(start, sid_bytes, ".indexes")).write_bytes(blob)
            (self.aiven / object_name(start, sid_bytes, ".rsm-manifest")).write_text(json.dumps(manifest))
            if pem is not None:
                self.data_keys[object_name(start, sid_bytes, ".log")] = _unwrap(manifest, pem)

    def run(self, *args: str, aiven: bool, keys: tuple[str, ...] = ()) -> tuple[int, str]:
        root = (
            ["--remote-root", str(self.aiven_root), "--layout", "aiven"]
            if aiven
            else ["--remote-root", str(self.root / "remote")]
        )
        extra = [a for k in keys for a in ("--aiven-private-key", k)]
        result = CliRunner().invoke(cli, [*args, *root, *extra])
        assert result.exception is None or isinstance(result.exception, SystemExit), result.exception
        return result.exit_code, result.stdout


@pytest.fixture(scope="module")
def zstd_copy(tmp_path_factory: pytest.TempPathFactory) -> AivenCopy:
    return AivenCopy(tmp_path_factory.mktemp("aiven") / "zstd", compression=True)


@pytest.fixture(scope="module")
def plain_copy(tmp_path_factory: pytest.TempPathFactory) -> AivenCopy:
    return AivenCopy(tmp_path_factory.mktemp("aiven") / "plain", compression=False)


def _unwrap(manifest: dict, pem: Path) -> tuple[bytes, bytes]:
    """The data key and AAD of an encrypted segment's manifest, the key unwrapped by OpenSSL (RSA-OAEP with
    SHA3-512 for the hash and MGF1, as the plugin's BouncyCastle cipher): the test's own, not kdump's."""
    import base64
    import subprocess

    wrapped = base64.b64decode(manifest["encryption"]["dataKey"].split(":", 1)[1])
    key = subprocess.run(
        [
            "openssl",
            "pkeyutl",
            "-decrypt",
            "-inkey",
            str(pem),
            "-pkeyopt",
            "rsa_padding_mode:oaep",
            "-pkeyopt",
            "rsa_oaep_md:sha3-512",
            "-pkeyopt",
            "rsa_mgf1_md:sha3-512",
        ],
        input=wrapped,
        capture_output=True,
        check=True,
    ).stdout
    return key, base64.b64decode(manifest["encryption"]["aad"])


@pytest.fixture(scope="module")
def encrypted_copy(tmp_path_factory: pytest.TempPathFactory) -> tuple[AivenCopy, dict[str, Path]]:
    pytest.importorskip("cryptography", reason="cryptography is not installed (pip install 'kdump[aiven]')")
    if shutil.which("openssl") is None:
        pytest.skip("the openssl command is not installed")
    keys = make_keys(tmp_path_factory.mktemp("keys"))
    copy = AivenCopy(tmp_path_factory.mktemp("aiven") / "encrypted", compression=True, pem=keys["k1"])
    return copy, keys


def test_an_encrypted_copy_is_the_same_one_log_with_its_key(
    encrypted_copy: tuple[AivenCopy, dict[str, Path]],
) -> None:
    copy, keys = encrypted_copy
    key = (f"k1={keys['k1']}",)
    for command in (["ls", str(copy.local), "--json"], ["txn", str(copy.local), "--json"]):
        code_k, kafka = copy.run(*command, aiven=False)
        code_a, aiven = copy.run(*command, aiven=True, keys=key)
        assert code_k == code_a == 0 and aiven == kafka
    code, out = copy.run("find", str(copy.local), "--offset", "400", "--json", aiven=True, keys=key)
    found = json.loads(out)
    chunk = found["chunk"]
    assert code == 0 and chunk["cipher"] == "AES-256-GCM" and chunk["codec"] == "zstd"
    undone = _undo_chunk(copy, chunk, copy.data_keys[Path(chunk["object"]).name])
    assert int.from_bytes(undone[chunk["byte"] : chunk["byte"] + 8], "big") == found["batch"]["baseOffset"]
    # no key, or another key pair's: one line naming the manifest, no traceback, status 1
    for given in ((), (f"k1={keys['k2']}",)):
        code, out = copy.run("find", str(copy.local), "--offset", "400", aiven=True, keys=given)
        result = CliRunner().invoke(
            cli,
            [
                "find",
                str(copy.local),
                "--offset",
                "400",
                "--remote-root",
                str(copy.aiven_root),
                "--layout",
                "aiven",
            ]
            + [a for k in given for a in ("--aiven-private-key", k)],
        )
        assert result.exit_code == 1, result.output
        lines = result.output.splitlines()
        assert len(lines) == 1 and lines[0].startswith(f"kdump: {copy.aiven}/00000000000000000298-"), lines
        assert ("--aiven-private-key" if not given else "does not unwrap") in result.output


def _same_but_names(copy: AivenCopy, kafka: str, aiven: str) -> None:
    """The two outputs are the same once the remote objects' names are mapped (Kafka's fileset names to
    Aiven's keys)."""
    for log in copy.kafka.glob("*.log"):
        m = FILESET.match(log.name)
        assert m
        key = copy.aiven / object_name(int(m.group(1)), decode_uuid(m.group(2)), ".log")
        kafka = kafka.replace(str(log), str(key))
    assert aiven == kafka


@pytest.mark.parametrize("which", ["zstd_copy", "plain_copy"])
def test_ls_and_txn_read_aivens_layout_as_the_same_one_log(
    which: str, request: pytest.FixtureRequest
) -> None:
    copy: AivenCopy = request.getfixturevalue(which)
    for command in (["ls", str(copy.local), "--json"], ["txn", str(copy.local), "--json"]):
        code_k, kafka = copy.run(*command, aiven=False)
        code_a, aiven = copy.run(*command, aiven=True)
        assert code_k == code_a == 0, aiven
        assert aiven == kafka
        assert all(validate(json.loads(line)) == [] for line in aiven.splitlines())
    row = json.loads(copy.run("ls", str(copy.local), "--json", aiven=True)[1])
    offsets = copy.broker["list_offsets"]
    assert (row["logStartOffset"], row["logEndOffset"], row["remoteSegments"]) == (
        offsets["earliest"],
        offsets["latest"],
        4,
    )


def test_verify_checks_aivens_segments_as_one_log(zstd_copy: AivenCopy) -> None:
    code_k, kafka = zstd_copy.run("verify", str(zstd_copy.local), "--json", aiven=False)
    code_a, aiven = zstd_copy.run("verify", str(zstd_copy.local), "--json", aiven=True)
    assert code_k == code_a == 0, aiven
    k, a = json.loads(kafka.splitlines()[-1]), json.loads(aiven.splitlines()[-1])
    assert a == k and a["problems"] == 0


def _undo_chunk(copy: AivenCopy, chunk: dict, key: tuple[bytes, bytes] | None = None) -> bytes:
    """The chunk's segment bytes, undone here (zstandard; AES-GCM by ``cryptography``), not by kdump."""
    data = Path(chunk["object"]).read_bytes()[chunk["position"] : chunk["position"] + chunk["size"]]
    if chunk["cipher"]:
        from cryptography.hazmat.primitives.ciphers.aead import AESGCM

        assert key is not None
        data = AESGCM(key[0]).decrypt(data[:12], data[12:], key[1])
    if chunk["codec"]:
        data = zstandard.ZstdDecompressor().decompress(data, max_output_size=chunk["segmentSize"])
    return data


@pytest.mark.parametrize("which", ["zstd_copy", "plain_copy"])
def test_find_names_the_chunk_and_the_byte(which: str, request: pytest.FixtureRequest) -> None:
    copy: AivenCopy = request.getfixturevalue(which)
    for offset in (147, 400, 600, 722):
        code_k, kafka = copy.run("find", str(copy.local), "--offset", str(offset), "--json", aiven=False)
        code_a, aiven = copy.run("find", str(copy.local), "--offset", str(offset), "--json", aiven=True)
        assert code_k == code_a == 0, aiven
        k, a = json.loads(kafka), json.loads(aiven)
        assert validate(a) == []
        chunk = a.pop("chunk")
        for obj in (k, a):  # the objects' names differ, nothing else
            obj.pop("segment")
            obj["indexEntry"].pop("file")
            obj["batch"].pop("file", None)
        assert a == k
        assert chunk["segmentPosition"] <= a["position"] < chunk["segmentPosition"] + chunk["segmentSize"]
        assert (
            chunk["index"] == a["position"] // CHUNK
            and chunk["byte"] == a["position"] - chunk["segmentPosition"]
        )
        assert chunk["codec"] == ("zstd" if which == "zstd_copy" else None)
        undone = _undo_chunk(copy, chunk, copy.data_keys.get(Path(chunk["object"]).name))
        # the batch's first bytes (its base offset, 8 bytes big-endian) are at the chunk's byte
        head = undone[chunk["byte"] : chunk["byte"] + 8]
        if len(head) == 8:
            assert int.from_bytes(head, "big") == a["batch"]["baseOffset"]
    code, text = copy.run("find", str(copy.local), "--offset", "400", aiven=True)
    assert code == 0
    line = next(x for x in text.splitlines() if x.startswith("chunk: "))
    assert f"in {copy.aiven}/" in line and "batch at byte: " in line


def test_a_template_layout_is_the_same_one_log(plain_copy: AivenCopy) -> None:
    """Kafka's own layout written as a template reads as --layout kafka does."""
    copy = plain_copy
    template = "{topic}-{partition}-{topicId}/{startOffset:020d}-{segmentId}{suffix}"
    for command in (["ls", str(copy.local), "--json"], ["txn", str(copy.local), "--json"]):
        _, kafka = copy.run(*command, aiven=False)
        result = CliRunner().invoke(
            cli, [*command, "--remote-root", str(copy.root / "remote"), "--layout-template", template]
        )
        assert result.exit_code == 0 and result.stdout == kafka


@pytest.mark.parametrize("which", ["zstd_copy", "plain_copy"])
def test_files_dumps_aivens_one_log_as_kafkas_tool_does(which: str, request: pytest.FixtureRequest) -> None:
    """kdump files --remote-root --layout aiven PARTITION: each remote segment's .log read back through its
    chunks, dumped as the real kafka-dump-log.sh 4.0 dumped the same segments (recorded in the fixture): the
    same text but for the Dumping lines' paths."""
    import gzip

    from tests.test_verify_remote import _numbered_dumping
    from tests.tiered_broker.__main__ import DUMP_NAME, DUMP_OPTIONS

    copy: AivenCopy = request.getfixturevalue(which)
    kafka = gzip.decompress((copy.root / DUMP_NAME).read_bytes()).decode()
    result = CliRunner().invoke(
        cli,
        ["files", *DUMP_OPTIONS, "--remote-root", str(copy.aiven_root), "--layout", "aiven", str(copy.local)],
    )
    assert result.exit_code == 0, result.stdout
    assert _numbered_dumping(result.stdout) == _numbered_dumping(kafka)
    dumping = [line.split(" ", 1)[1] for line in result.stdout.splitlines() if line.startswith("Dumping ")]
    assert all(d.startswith(str(copy.aiven)) for d in dumping[:4]) and len(dumping) == 6


def test_files_layout_options_go_with_remote_root(plain_copy: AivenCopy) -> None:
    result = CliRunner().invoke(cli, ["files", "--layout", "aiven", str(plain_copy.local)])
    assert result.exit_code == 2 and "--layout goes with --remote-root" in result.output


def test_ls_shows_the_remote_part_at_80_columns(zstd_copy: AivenCopy) -> None:
    """On an 80-column terminal the REMOTE column (count and bytes) stays; its numbers are the broker's remote
    segments below the local log start and the sizes of their .log files (the broker's own copies)."""
    from kdump.commands.ls import ListPartitions
    from kdump.render.ls_table import terminal_text

    code, out = zstd_copy.run("ls", str(zstd_copy.local), "--json", aiven=True)
    row = json.loads(out)
    remote = [p for p in zstd_copy.kafka.glob("*.log") if int(p.name[:20]) < 723]
    assert (row["remoteSegments"], row["remoteBytes"]) == (4, sum(p.stat().st_size for p in remote))
    from kdump.cli.remote_options import RemoteArgs

    checks = RemoteArgs(remote_root=str(zstd_copy.aiven_root), layout="aiven").checks()
    summaries = ListPartitions([str(zstd_copy.local)], remote=checks).summaries()
    text = terminal_text(summaries, [], 80)
    assert max(len(line) for line in text.splitlines()) <= 80
    header, first = text.splitlines()[:2]
    assert "REMOTE" in header.split() and "4: 28.0 KiB" in first


def test_find_a_timestamp_uses_the_remote_time_indexes(zstd_copy: AivenCopy) -> None:
    """find --timestamp over the one log reads each remote segment's time index (an object, or a part of
    .indexes) for its largest timestamp, as for a local segment: no note that it is missing, and the same answer
    in both layouts (the first record at or after the time, offsets as the broker wrote them)."""
    for ts in ("1795728771365", "1795728790000", "1795728800129"):
        answers = []
        for aiven in (False, True):
            code, out = zstd_copy.run("find", str(zstd_copy.local), "--timestamp", ts, "--json", aiven=aiven)
            assert code == 0, out
            found = json.loads(out)
            assert found["notes"] == [], found["notes"]
            answers.append(
                (found["offset"], found["timestamp"], found["position"], found["batch"]["baseOffset"])
            )
        assert answers[0] == answers[1]
