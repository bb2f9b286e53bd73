"""Every command's ``--json``: one schema (``kdump.render.json_schema``), one version, one vocabulary.

Each command that has ``--json`` runs over the fixture corpus (and the full corpus when present): every line
it prints must be a JSON object of a type the schema gives that command, with the documented fields and JSON
types, and carry the schema version exactly when its type opens a unit of output.  Each command's man page
(JSON OUTPUT) must name every type and field the command writes.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest
from click.testing import CliRunner

from kdump.cli import cli
from kdump.render.json_lines import JSON_SCHEMA_VERSION
from kdump.render.json_schema import (
    COMMAND_TYPES,
    DATA,
    FILE_VERSION_TYPES,
    HEAD_TYPES,
    MEMBERS,
    NULL,
    SCHEMA,
    validate,
)
from kdump.storage.naming import parse_partition_dir
from kdump.storage.offset_checkpoint import encode_offset_checkpoint
from tests.corpus import CORPUS, FIXTURE_CORPUS, REPO, corpus_available
from tests.forensic_data import (
    T0,
    offset_commit_key,
    offset_commit_value,
    records_batch,
    stuck_transaction_log_dir,
    write_segment,
)
from tests.partition_builder import build_partition
from tests.replay import run_kdump

MAN = REPO / "man"

ROOTS = [
    pytest.param(FIXTURE_CORPUS, id="fixtures"),
    pytest.param(
        CORPUS,
        id="corpus",
        marks=pytest.mark.skipif(not corpus_available(), reason=f"the corpus is not at {CORPUS}"),
    ),
]

#: Decoder options of ``kdump files``, by the internal topic whose segments they decode.
DECODERS = {
    "__consumer_offsets": "--offsets-decoder",
    "__transaction_state": "--transaction-log-decoder",
    "__cluster_metadata": "--cluster-metadata-decoder",
    "__share_group_state": "--share-group-state-decoder",
}


def _objects(command: str, text: str) -> list[dict]:
    """The objects of one run's standard output, each checked against the schema and the command's types."""
    objects = []
    for line in text.splitlines():
        obj = json.loads(line)
        assert isinstance(obj, dict), line
        assert validate(obj) == [], (command, line[:500])
        assert obj["type"] in COMMAND_TYPES[command], (command, obj["type"])
        objects.append(obj)
    return objects


def _cli(command: str, *args: str) -> list[dict]:
    result = CliRunner().invoke(cli, [command, "--json", *args])
    assert result.exit_code in (0, 1), (command, args, result.output, result.exception)
    assert "Traceback" not in result.stderr and "internal error" not in result.stderr, result.stderr
    return _objects(command, result.stdout)


def _files(*args: str) -> list[dict]:
    code, out, err = run_kdump([*args, "--json"])
    assert b"internal error" not in err, (args, err)
    return _objects("files", out.decode())


def _partition_dirs(top: Path) -> list[Path]:
    return sorted(p for p in top.iterdir() if p.is_dir() and parse_partition_dir(p.name) is not None)


def _every_file(root: Path) -> Iterator[Path]:
    for top in ("data", "data-kafka39-zk", "damaged", "synthetic-legacy"):
        for path in sorted((root / top).rglob("*")):
            if path.is_file():
                yield path


def _run_every_command(root: Path, tmp: Path) -> dict[str, list[dict]]:
    """command -> every object its ``--json`` printed over ``root``."""
    data, zk, damaged = root / "data", root / "data-kafka39-zk", root / "damaged"
    seen: dict[str, list[dict]] = {c: [] for c in COMMAND_TYPES}
    tiered = REPO / "tests" / "fixtures" / "tiered-broker"  # a real broker's tiered partition
    for remote in (tiered / "remote", tiered / "local"):  # the objects, then a root without them (problems)
        seen["tiered"] += _cli(
            "tiered", "--deep", "--remote-root", str(remote), str(tiered / "local" / "tiered-0")
        )
    for path in _every_file(root):
        args = ["--files", str(path), "--deep-iteration", "--print-data-log"]
        seen["files"] += _files(*args)
        parsed = parse_partition_dir(path.parent.name)
        if parsed is not None and parsed.topic in DECODERS and path.suffix == ".log":
            seen["files"] += _files(*args, DECODERS[parsed.topic])
        if path.suffix == ".index":
            seen["files"] += _files("--files", str(path), "--verify-index-only")
            seen["files"] += _files("--files", str(path), "--index-sanity-check")
    for partition in _partition_dirs(data) + _partition_dirs(zk):
        for args in (
            ["--offset", "0", "--print-data-log"],
            ["--offset", "999999999"],
            ["--timestamp", "0"],
            ["--timestamp", "99999999999999"],
        ):
            seen["find"] += _cli("find", *args, str(partition))
    for top in (data, zk):
        seen["find"] += _cli("find", "--group", "g", str(top))
        seen["find"] += _cli("find", "--transactional-id", "t", "--partitions", "50", str(top))
    # a group with offsets and classic metadata (the only group of the ZooKeeper-era data directory)
    seen["find"] += _cli("find", "--group", "legacy-group", "--partitions", "1", str(zk))
    # a producer stuck mid-transaction, with its coordinator's state
    stuck = tmp / "stuck"
    stuck_transaction_log_dir(str(stuck), coordinator_status=1)
    seen["txn"] += _cli("txn", str(stuck))
    seen["ls"] += _cli("ls", str(stuck))
    seen["find"] += _cli("find", "--transactional-id", "app-7", "--partitions", "1", str(stuck))
    seen["report"] += _cli("report", str(stuck))
    # problems kdump report meets itself: a leader-epoch-checkpoint that is not one, a record of
    # __transaction_state whose length is not its bytes'
    troubled = tmp / "troubled"
    stuck_transaction_log_dir(str(troubled), coordinator_status=1)
    (troubled / "txn-0" / "leader-epoch-checkpoint").write_text("0\n1\nnot an entry\n")
    write_segment(
        str(troubled / "__consumer_offsets-0"),
        0,
        [
            records_batch(
                0, [offset_commit_value(1, 0, "", T0)], ts=T0, keys=[offset_commit_key("g", "txn", 0)]
            )
        ],
    )
    for coordinator in ("__transaction_state-0", "__consumer_offsets-0"):
        state_log = troubled / coordinator / "00000000000000000000.log"
        damaged_state = bytearray(state_log.read_bytes())
        damaged_state[61] = 0x7F  # the first record's length varint (after the 61-byte batch header): -64
        state_log.write_bytes(bytes(damaged_state))
    # a high watermark beyond the log end: a problem of the log directory's own file (logDirFindings)
    (troubled / "replication-offset-checkpoint").write_bytes(encode_offset_checkpoint({("txn", 0): 999}))
    seen["report"] += _cli("report", str(troubled))
    # two copies of a partition that diverge at offset 1 (the second has one more batch)
    for copy, values in (("a", [b"x", b"y"]), ("b", [b"x", b"z", b"w"])):
        write_segment(
            str(tmp / "copies" / copy / "t-0"),
            0,
            [records_batch(i, [v], ts=T0 + i) for i, v in enumerate(values)],
        )
    seen["diff"] += _cli("diff", str(tmp / "copies" / "a"), str(tmp / "copies" / "b"))
    # the active segment's index files as a running broker leaves them, preallocated: notes, not problems
    noted = tmp / "noted"
    build_partition(str(noted / "orders-0"), 2)
    for suffix, entry_size in ((".index", 8), (".timeindex", 12)):
        active = max((noted / "orders-0").glob(f"*{suffix}"))
        os.truncate(active, 1024 * 1024 // entry_size * entry_size)
    for top in (data, zk, damaged, noted):
        seen["ls"] += _cli("ls", str(top))
        seen["verify-index"] += _cli("verify-index", "--no-progress", str(top))
        seen["txn"] += _cli("txn", str(top))
        seen["retention"] += _cli("retention", str(top))
        seen["report"] += _cli("report", str(top))
        for options in ([], ["--deep"], ["--indexes-only"]):
            seen["verify"] += _cli("verify", *options, str(top))
        seen["rebuild-index"] += _cli("rebuild-index", "--dry-run", "-v", str(top))
    # a rebuild that writes (on a copy): files rewritten and created, their backups
    shutil.copytree(damaged, tmp / "rebuilt")
    seen["rebuild-index"] += _cli("rebuild-index", str(tmp / "rebuilt"))
    names = {p.name for p in _partition_dirs(data)}
    for case in sorted(p for p in damaged.iterdir() if p.is_dir()):
        if names & {p.name for p in _partition_dirs(case)}:
            seen["diff"] += _cli("diff", str(data), str(case))
        for segment in sorted(case.glob("*/*.log")):
            out = tmp / case.name / segment.parent.name
            out.mkdir(parents=True, exist_ok=True)
            seen["salvage"] += _cli("salvage", str(segment), "--out", str(out / segment.name))
    return seen


@pytest.fixture(scope="module", params=ROOTS)
def written(
    request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory
) -> dict[str, list[dict]]:
    return _run_every_command(request.param, tmp_path_factory.mktemp("salvaged"))


def test_every_command_writes_the_schema(written: dict[str, list[dict]]) -> None:
    """Every object validated as it was read (``_objects``); here: every command wrote, and the head objects
    carry this version."""
    for command, objects in written.items():
        assert objects, command
        heads = [o for o in objects if o["type"] in HEAD_TYPES]
        assert heads and {o["version"] for o in heads} == {JSON_SCHEMA_VERSION}, command
        members = [o for o in objects if o["type"] not in HEAD_TYPES | FILE_VERSION_TYPES]
        assert all("version" not in o for o in members), command


def test_same_name_same_meaning(written: dict[str, list[dict]]) -> None:
    """``partition`` is a partition number wherever it appears, ``directory`` a partition directory, ``topic``
    the topic of that directory."""
    for command, objects in written.items():
        for o in objects:
            if "directory" in o and o["directory"] is not None and o["type"] != "location":
                parsed = parse_partition_dir(os.path.basename(os.path.normpath(o["directory"])))
                assert os.path.isdir(o["directory"]), (command, o["directory"])
                assert (o.get("topic"), o.get("partition")) == (
                    (parsed.topic, parsed.partition) if parsed else (None, None)
                ), (command, o)
            if o["type"] == "location":
                assert os.path.isdir(o["directory"]) and "partition" not in o
            if o["type"] == "diffPartition":
                assert parse_partition_dir(o["name"]) is not None and "partition" not in o


def test_every_type_is_written_somewhere(written: dict[str, list[dict]]) -> None:
    """The runs above reach every type the schema gives a command, but for those the fixture data cannot
    produce (each has its own test elsewhere)."""
    elsewhere = {
        # kdump files ignores .kafka_cleanshutdown, as Kafka's tool does; render/state_files has its object
        "files": {"cleanShutdown"},
        "ls": {"unreadable"},  # test_ls_unreadable_directory below
        # tests/test_cli_rules.py::test_one_rule_for_what_cannot_be_read (a directory without permission)
        "txn": {"unreadable"},
        "retention": {"unreadable"},
        "diff": {"unreadable"},
        "report": {"unreadable"},
    }
    for command, types in COMMAND_TYPES.items():
        missing = set(types) - {o["type"] for o in written[command]} - elsewhere.get(command, set())
        assert not missing, (command, missing)
    paths: set[str] = set()
    for objects in written.values():
        for o in objects:
            for name, value in o.items():
                if f"{o['type']}.{name}" not in DATA:
                    _member_paths(f"{o['type']}.{name}", value, paths)
    # tests/test_problem_facts.py: a damaged __transaction_state batch (the fixtures' coordinators read clean)
    # tests/test_tiered_aiven.py: find over a tiered segment in Aiven's layout (checked there against the schema)
    members_elsewhere = {"coordinator.problemDetails[]", "location.chunk"}
    assert set(MEMBERS) - paths - members_elsewhere == set()


def _member_paths(path: str, value: object, found: set[str]) -> None:
    if isinstance(value, list):
        for item in value:
            _member_paths(path + "[]", item, found)
    elif isinstance(value, dict):
        found.add(path)
        for name, member in value.items():
            _member_paths(f"{path}.{name}", member, found)


SETPRIV = shutil.which("setpriv")


@pytest.mark.skipif(
    os.geteuid() == 0 and SETPRIV is None, reason="root without setpriv cannot drop its override"
)
def test_ls_unreadable_directory(tmp_path: Path) -> None:
    logs = tmp_path / "logs"
    build_partition(str(logs / "a-0"), 1)
    (logs / "locked").mkdir()
    (logs / "locked").chmod(0)
    prefix = [SETPRIV, "--bounding-set", "-dac_override,-dac_read_search"] if os.geteuid() == 0 else []
    try:
        r = subprocess.run(
            [*prefix, sys.executable, "-m", "kdump", "ls", "--json", str(logs)],
            capture_output=True,
            text=True,
            timeout=60,
            check=False,
        )
    finally:
        (logs / "locked").chmod(0o755)
    objects = _objects("ls", r.stdout)
    unreadable = [o for o in objects if o["type"] == "unreadable"]
    if not unreadable:
        pytest.skip("this process can read directories without permission (capabilities not dropped)")
    assert [o["path"] for o in unreadable] == [str(logs / "locked")]
    assert [o["type"] for o in objects] == ["partition", "unreadable"]


def test_the_version_rule_is_the_schemas() -> None:
    """The types that carry ``version`` are the head types (the schema version) and the four whose
    ``version`` is their file's format version, as Kafka's text labels it."""
    with_version = {t for t, fields in SCHEMA.items() if "version" in fields}
    assert with_version == HEAD_TYPES | FILE_VERSION_TYPES
    assert not HEAD_TYPES & FILE_VERSION_TYPES
    assert set(COMMAND_TYPES["files"]) >= FILE_VERSION_TYPES


def test_one_json_type_per_name() -> None:
    """A field name has one JSON type (null aside) in every type and member object that has it."""
    types: dict[str, set[str]] = {}
    for fields in [*SCHEMA.values(), *MEMBERS.values()]:
        for name, allowed in fields.items():
            types.setdefault(name, set()).update(t for t in allowed if t != NULL)
    mixed = {name: kinds for name, kinds in types.items() if len(kinds) > 1 and name not in DATA_FIELDS}
    assert mixed == {}


#: Fields that hold data of any JSON type (a decoded payload).
DATA_FIELDS = {"decodedKey", "decodedValue"}


def test_every_type_belongs_to_a_command() -> None:
    written = [t for types in COMMAND_TYPES.values() for t in types]
    assert sorted(set(written)) == sorted(SCHEMA)
    assert set(COMMAND_TYPES["find"]) & set(COMMAND_TYPES["files"]) == set()


def _json_section(command: str) -> str:
    text = (MAN / f"kdump-{command}.1").read_text()
    text = text.replace("\\-", "-").replace("\\fB", "").replace("\\fR", "").replace("\\fI", "")
    assert ".SH JSON OUTPUT" in text, command
    return text.split(".SH JSON OUTPUT", 1)[1].split("\n.SH ", 1)[0]


@pytest.mark.parametrize("command", sorted(COMMAND_TYPES))
def test_man_page_documents_every_type_and_field(command: str) -> None:
    section = _json_section(command)
    assert re.search(rf"\b{JSON_SCHEMA_VERSION}\b", section), "the schema version"
    for kind in COMMAND_TYPES[command]:
        assert re.search(rf"\b{kind}\b", section), kind
        for name in SCHEMA[kind]:
            assert re.search(rf"\b{name}\b", section), f"{kind}.{name}"
    for path, fields in MEMBERS.items():
        if path.split(".", 1)[0] in COMMAND_TYPES[command]:
            for name in fields:
                assert re.search(rf"\b{name}\b", section), f"{path}.{name}"


def test_validate_enforces_the_version_rule_and_nesting() -> None:
    assert validate({"type": "summary", "problems": 0}) == [
        f"summary: version None, not the schema version {JSON_SCHEMA_VERSION}"
    ]
    assert validate({"type": "txnPartition", "version": JSON_SCHEMA_VERSION - 1}) != []
    assert validate({"type": "problem", "version": JSON_SCHEMA_VERSION, "kind": "crc"}) == [
        "problem: undocumented field 'version'"
    ]
    location = {"type": "location", "version": JSON_SCHEMA_VERSION, "directory": "t-0"}
    assert "location.batch: not a batch object" in validate({**location, "batch": {"type": "record"}})
    assert validate({**location, "batch": {"type": "batch", "offset": "1"}}) == [
        "location.batch: batch.offset: string is not one of ('integer',)"
    ]
    # a record's decoded data may hold any names, "type" and "version" included
    assert validate({"type": "record", "offset": 1, "decoded": {"type": "X", "version": 0}}) == []
