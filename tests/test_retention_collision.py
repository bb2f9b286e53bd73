"""Two keys of one MD5 digest are one key to ``kdump retention``'s census, with or without the C accelerator,
as they are to Kafka's cleaner: ``SkimpyOffsetMap`` (``storage/.../SkimpyOffsetMap.java``, Kafka 4.0) holds a key
as its MD5 digest, and its ``put`` overwrites the slot whose digest is equal (``get`` finds it the same way), so
the cleaner keeps only the later of two colliding keys.  The keys here are a published MD5 collision (two
128-byte blocks, Wang and Yu 2005); the expected counts are derived by hand from that rule."""

from __future__ import annotations

import hashlib
import json
from pathlib import Path

import pytest
from click.testing import CliRunner

from kdump.analysis import cleaning, digest_map
from kdump.cli.commands import cli
from kdump.commands import retention
from tests.builder import SimpleRecord, build_v2_batch

A = bytes.fromhex(
    "d131dd02c5e6eec4693d9a0698aff95c2fcab58712467eab4004583eb8fb7f8955ad340609f4b30283e488832571415a"
    "085125e8f7cdc99fd91dbdf280373c5bd8823e3156348f5bae6dacd436c919c6dd53e2b487da03fd02396306d248cda0"
    "e99f33420f577ee8ce54b67080a80d1ec69821bcb6a8839396f9652b6ff72a70"
)
B = bytes.fromhex(
    "d131dd02c5e6eec4693d9a0698aff95c2fcab50712467eab4004583eb8fb7f8955ad340609f4b30283e4888325f1415a"
    "085125e8f7cdc99fd91dbd7280373c5bd8823e3156348f5bae6dacd436c919c6dd53e23487da03fd02396306d248cda0"
    "e99f33420f577ee8ce54b67080280d1ec69821bcb6a8839396f965ab6ff72a70"
)


def test_the_keys_collide() -> None:
    assert A != B and hashlib.md5(A).digest() == hashlib.md5(B).digest()


@pytest.mark.parametrize("path", ["c", "pure-python"])
@pytest.mark.parametrize("budget", [None, 300], ids=["in-memory", "spilled"])
def test_two_keys_of_one_digest_are_one_key(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, path: str, budget: int | None
) -> None:
    if path == "c" and digest_map.DIGESTS is None:
        pytest.skip("kdump._digests is not built (no C compiler) or KDUMP_PURE_PYTHON")
    if path == "pure-python":
        monkeypatch.setattr(retention, "DIGESTS", None)
        monkeypatch.setattr(cleaning, "DIGESTS", None)
    if budget is not None:
        monkeypatch.setattr(retention, "BUDGET_BYTES", budget)
    part = tmp_path / "compacted-0"
    part.mkdir()
    records = [
        SimpleRecord(b"a", key=A),
        SimpleRecord(b"k1", key=b"k1"),
        SimpleRecord(None, key=B),  # a tombstone, the latest record of the digest A and B share
        SimpleRecord(b"k2", key=b"k2"),
        SimpleRecord(b"k1 again", key=b"k1"),
    ]
    (part / "00000000000000000000.log").write_bytes(build_v2_batch(records, base_offset=0))
    args = ["retention", "--json", "--now", "5000000", "--config", "cleanup.policy=compact", str(part)]
    result = CliRunner().invoke(cli, args, catch_exceptions=False)
    compaction = json.loads(result.output.splitlines()[0])["compaction"]
    # SkimpyOffsetMap's rule: keys A and B are one key (its latest record a tombstone), k1 and k2 two more
    assert compaction["distinctKeys"] == 3
    assert compaction["liveTombstones"] == 1
    assert compaction["superseded"] == 2  # the record of A (superseded by B's) and k1's first
