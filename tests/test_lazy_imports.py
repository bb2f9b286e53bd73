"""Start-up speed depends on lazy imports, and the layers on their import rule (ARCHITECTURE.md).

``kdump files`` (run in pipelines many times over) must not load click, rich, Spark or a compression library it
does not need, and the storage layer must not load any layer above it: each such check runs a fresh interpreter
and reads its ``sys.modules``.  The source is read too, so that a deferred import cannot hide a wrong one."""

from __future__ import annotations

import ast
import json
import subprocess
import sys
from pathlib import Path

import pytest

from tests.corpus import FIXTURE_CORPUS, REPO

KDUMP = REPO / "kdump"

PLAIN = FIXTURE_CORPUS / "data" / "plain-0" / "00000000000000000000.log"
ZSTD = FIXTURE_CORPUS / "data" / "codec-zstd-0" / "00000000000000000000.log"

#: Never needed by ``kdump files`` on an uncompressed segment.
HEAVY = ("click", "rich", "pyspark", "pyarrow", "zstandard", "lz4", "snappy", "cramjam", "kdump.cli.commands")

_SCRIPT = """
import io, json, sys
from kdump.cli import files, run_guarded
code = run_guarded(lambda o, e: files.run(sys.argv[1:], o, e), io.BytesIO(), io.BytesIO())
print(json.dumps({"code": int(code), "modules": sorted(sys.modules)}))
"""


def _modules_after(*argv: str) -> tuple[int, set[str]]:
    result = subprocess.run(
        [sys.executable, "-c", _SCRIPT, *argv], capture_output=True, text=True, timeout=120, check=True
    )
    report = json.loads(result.stdout.strip().splitlines()[-1])
    return report["code"], set(report["modules"])


def _loaded(modules: set[str], root: str) -> bool:
    return any(m == root or m.startswith(root + ".") for m in modules)


@pytest.mark.parametrize("extra", [(), ("--deep-iteration",), ("--print-data-log",)])
def test_files_on_an_uncompressed_segment_loads_nothing_heavy(extra: tuple[str, ...]) -> None:
    code, modules = _modules_after("--files", str(PLAIN), *extra)
    assert code == 0
    assert "kdump.commands.files" in modules  # the run really happened
    assert [m for m in HEAVY if _loaded(modules, m)] == []


#: Loaded by ``kdump files`` only for what needs them (each costs start-up, which is most of a shallow dump's
#: time): the parallel deep walk (it may fork workers, and pickles what they found), a control record's text
#: (the message schemas and the JSON writer), producer snapshots and transaction indexes, help text.
DEFERRED_FOR_DEEP = ("kdump.commands.parallel", "pickle")
DEFERRED = (
    "kdump.render.control_text",
    "kdump.render.kafka_json",
    "kdump.storage.control_record",
    "kdump.storage.message_schema",
    "kdump.storage.producer_snapshot",
    "kdump.storage.transaction_index",
    "uuid",
    "textwrap",
    "platform",
)


@pytest.mark.parametrize("extra", [(), ("--deep-iteration",), ("--print-data-log",)])
def test_files_loads_only_what_the_segment_needs(extra: tuple[str, ...]) -> None:
    """The fixture segment has no control record; a shallow dump does not walk in parallel."""
    code, modules = _modules_after("--files", str(PLAIN), *extra)
    assert code == 0
    assert "kdump.commands.files" in modules  # the run really happened
    deferred = DEFERRED if extra else DEFERRED + DEFERRED_FOR_DEEP
    assert [m for m in deferred if _loaded(modules, m)] == []


_COMMAND_SCRIPT = """
import json, sys
from kdump.cli import main
try:
    main()
except SystemExit as e:
    code = e.code
print(json.dumps({"code": code, "modules": sorted(sys.modules)}))
"""


def _modules_after_command(*argv: str) -> tuple[int, set[str]]:
    result = subprocess.run(
        [sys.executable, "-c", _COMMAND_SCRIPT, *argv],
        capture_output=True,
        text=True,
        timeout=120,
        check=True,
    )
    report = json.loads(result.stdout.strip().splitlines()[-1])
    return report["code"], set(report["modules"])


def test_verify_loads_no_other_command_nor_what_its_data_does_not_need(tmp_path: Path) -> None:
    """``kdump verify`` imports its own command's module alone (the group loads a command when it is asked
    for), and a partition with transactions but no cluster metadata beside it loads no message schema (a
    control batch's type is read by ``control_record_type``) and no pickle (no second process)."""
    import shutil

    partition = tmp_path / "txn-0"
    shutil.copytree(FIXTURE_CORPUS / "data" / "txn-0", partition)
    code, modules = _modules_after_command("verify", "--no-progress", str(partition))
    assert code in (0, 1)  # the fixture's subset of the partition lacks some index files
    assert "kdump.commands.verify" in modules  # the run really happened
    from kdump.cli.commands import SUBCOMMANDS

    others = [f"kdump.cli.{m}" for name, m in SUBCOMMANDS.items() if name != "verify"]
    assert [m for m in others if m in modules] == []
    assert [
        m for m in ("kdump.storage.message_schema", "kdump.storage.control_record", "pickle") if m in modules
    ] == []


def test_help_lists_every_command() -> None:
    """``kdump --help`` asks the lazy group for every command: all of them listed, as when registered up front."""
    result = subprocess.run(
        [sys.executable, "-m", "kdump", "--help"], capture_output=True, text=True, timeout=120
    )
    listed = result.stdout.split("Commands:")[1].split("More help:")[0]
    names = [line.split()[0] for line in listed.splitlines() if line.startswith("  ") and line.split()]
    from kdump.cli.commands import SUBCOMMANDS

    assert names == sorted({"files", *SUBCOMMANDS})


def test_a_control_record_loads_its_text_when_met() -> None:
    segment = FIXTURE_CORPUS / "data" / "__cluster_metadata-0" / "00000000000000000090-0000000002.checkpoint"
    if not segment.exists():
        pytest.skip(f"{segment} is not in the fixture corpus")
    code, modules = _modules_after("--files", str(segment), "--deep-iteration")
    assert code == 0
    assert "kdump.render.control_text" in modules


def test_a_codec_is_loaded_when_a_batch_uses_it() -> None:
    code, modules = _modules_after("--files", str(ZSTD), "--print-data-log")
    assert code == 0
    assert _loaded(modules, "zstandard")
    assert [m for m in HEAVY if m != "zstandard" and _loaded(modules, m)] == []


def test_storage_loads_no_layer_above_it() -> None:
    script = (
        "import importlib, json, pkgutil, sys, kdump.storage as s\n"
        "for m in pkgutil.walk_packages(s.__path__, 'kdump.storage.'):\n"
        "    importlib.import_module(m.name)\n"
        "print(json.dumps(sorted(sys.modules)))\n"
    )
    result = subprocess.run(
        [sys.executable, "-c", script], capture_output=True, text=True, timeout=120, check=True
    )
    modules = set(json.loads(result.stdout.strip().splitlines()[-1]))
    above = ("kdump.cli", "kdump.commands", "kdump.render", "kdump.spark", "click", "rich", "pyspark")
    assert [m for m in above if _loaded(modules, m)] == []


def _imported_names(path: Path) -> set[str]:
    names: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            names.update(a.name for a in node.names)
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            names.add(node.module)
    return names


#: The layers of ARCHITECTURE.md, bottom up: each may import only the layers below it (and ``jdk``,
#: ``errors``, ``exit_status``, which any may use). ``payload`` sits beside ``analysis``; ``cli`` and ``spark``
#: are the two front ends on top.
_UI = ("click", "rich", "pyspark")
LAYER_RULES = [
    ("jdk", ("kdump",)),
    (
        "storage",
        (
            "kdump.analysis",
            "kdump.payload",
            "kdump.facts",
            "kdump.commands",
            "kdump.render",
            "kdump.cli",
            "kdump.spark",
            *_UI,
        ),
    ),
    (
        "analysis",
        ("kdump.payload", "kdump.facts", "kdump.commands", "kdump.render", "kdump.cli", "kdump.spark", *_UI),
    ),
    (
        "payload",  # its Spark types (payload/spark_types) name pyspark's
        (
            "kdump.analysis",
            "kdump.facts",
            "kdump.commands",
            "kdump.render",
            "kdump.cli",
            "kdump.spark",
            "click",
            "rich",
        ),
    ),
    ("facts", ("kdump.commands", "kdump.render", "kdump.cli", "kdump.spark", *_UI)),
    ("commands", ("kdump.render", "kdump.cli", "kdump.spark", "click", "rich")),
    ("render", ("kdump.commands", "kdump.cli", "kdump.spark", "click")),
    ("spark", ("kdump.cli", "click")),
]


@pytest.mark.parametrize(("package", "forbidden"), LAYER_RULES)
def test_no_import_of_a_layer_above_not_even_inside_a_function(
    package: str, forbidden: tuple[str, ...]
) -> None:
    """The layering in ARCHITECTURE.md, read from the source: deferred imports count too."""
    found = {
        f"{path.relative_to(KDUMP)}: {name}"
        for path in sorted((KDUMP / package).rglob("*.py"))
        for name in _imported_names(path)
        if any(name == f or name.startswith(f + ".") for f in forbidden)
    }
    assert found == set()
