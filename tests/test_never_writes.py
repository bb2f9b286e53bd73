"""kdump never writes its inputs: the whole corpus (the reference corpus, or the bundled fixtures without it) is
hashed before and after every command has run on it, and nothing may differ -- content, size, mode, mtime and
ctime of every file, and the mtime of every directory (a temporary file created and removed would change it)."""

from __future__ import annotations

import hashlib
import io
import os
from pathlib import Path

from click.testing import CliRunner

from kdump.cli import cli, files, run_guarded
from kdump.cli.commands import all_commands
from tests.corpus import CORPUS, FIXTURE_CORPUS, corpus_available, load_manifest

ROOT = CORPUS if corpus_available() else FIXTURE_CORPUS

#: ``kdump files`` option sets, by kind of file (every option of kafka-dump-log.sh that changes what is read).
LOG_OPTION_SETS = (
    [],
    ["--print-data-log"],
    ["--deep-iteration"],
    ["--print-data-log", "--skip-record-metadata"],
    ["--deep-iteration", "--skip-record-metadata"],
    ["--max-bytes", "1000", "--print-data-log"],
    ["--value-decoder-class", "org.apache.kafka.tools.api.IntegerDecoder", "--key-decoder-class"],
    ["--offsets-decoder"],
    ["--transaction-log-decoder"],
    ["--cluster-metadata-decoder"],
    ["--remote-log-metadata-decoder"],
    ["--share-group-state-decoder"],
)
INDEX_OPTION_SETS = ([], ["--index-sanity-check"], ["--verify-index-only"], ["--max-message-size", "100"])


def _state(root: Path) -> dict[str, tuple]:
    state: dict[str, tuple] = {}
    for directory, dirs, names in os.walk(root):
        st = os.stat(directory)
        state[directory] = ("dir", st.st_mode, st.st_mtime_ns, st.st_ctime_ns, tuple(sorted(dirs + names)))
        for name in names:
            path = os.path.join(directory, name)
            st = os.lstat(path)
            with open(path, "rb") as f:
                digest = hashlib.sha256(f.read()).hexdigest()
            state[path] = (digest, st.st_size, st.st_mode, st.st_mtime_ns, st.st_ctime_ns)
    return state


def _files_run(argv: list[str]) -> int:
    return run_guarded(lambda o, e: files.run(argv, o, e), io.BytesIO(), io.BytesIO())


def _data_files(root: Path) -> list[Path]:
    return sorted(
        p for p in root.rglob("*") if p.is_file() and "expected" not in p.relative_to(root).parts[0]
    )


def test_no_command_writes_its_input(tmp_path: Path) -> None:
    before = _state(ROOT)
    runner = CliRunner()
    previous = os.getcwd()
    os.chdir(ROOT)
    try:
        for run in load_manifest(ROOT):  # every run of the real tool, as it was run
            _files_run(list(run.argv))
        for path in _data_files(ROOT):
            name = path.name
            if name.endswith((".log", ".checkpoint")):
                option_sets = LOG_OPTION_SETS
            elif name.endswith((".index", ".timeindex")):
                option_sets = INDEX_OPTION_SETS
            else:
                option_sets = ([],)
            for options in option_sets:
                _files_run(["--files", str(path), *options])
    finally:
        os.chdir(previous)

    commands = set(all_commands())
    partitions = sorted({p.parent for p in ROOT.rglob("*.log")})
    assert runner.invoke(cli, ["verify-index", "--no-progress", str(ROOT)]).exit_code in (0, 1)
    assert runner.invoke(cli, ["verify-index", "--json", str(ROOT)]).exit_code in (0, 1)
    if "ls" in commands:
        for args in (["--no-progress"], ["--json"]):
            assert runner.invoke(cli, ["ls", *args, str(ROOT)]).exit_code in (0, 1)
    if "find" in commands:
        for partition in partitions:
            for query in (["--offset", "0"], ["--offset", "45", "--print-data-log"], ["--timestamp", "0"]):
                assert runner.invoke(cli, ["find", *query, str(partition)]).exit_code in (0, 1, 2)
    if "rebuild-index" in commands:
        result = runner.invoke(cli, ["rebuild-index", "--dry-run", str(ROOT)])
        assert result.exit_code in (0, 1), result.output
    if "salvage" in commands:
        for n, path in enumerate(sorted(ROOT.rglob("*.log")) + sorted(ROOT.rglob("*.checkpoint"))[:3]):
            result = runner.invoke(cli, ["salvage", str(path), "--out", str(tmp_path / str(n))])
            assert result.exit_code in (0, 1), result.output
        assert runner.invoke(cli, ["salvage", str(path), "--out", str(path.parent)]).exit_code == 2

    if "report" in commands:
        for args in (["-o", str(tmp_path / "report.html")], ["--json"]):
            assert runner.invoke(cli, ["report", *args, str(ROOT)]).exit_code in (0, 1)

    after = _state(ROOT)
    changed = sorted(p for p in before.keys() | after.keys() if before.get(p) != after.get(p))
    assert changed == [], changed
