"""Issue 16, the operator's first hour: one stream across many files and the error messages of ``kdump files``.

The data is built here (:mod:`partition_builder`), so the expected offsets come from the builder's layout, not
from kdump: segment ``i`` holds offsets ``40 * i`` to ``40 * i + 39`` in batches of 5 records.
"""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from kdump.render.json_schema import validate
from tests.builder import SimpleRecord, build_v2_batch
from tests.partition_builder import build_partition
from tests.replay import run_kdump

SEGMENTS = 5
PER_SEGMENT = 40


@pytest.fixture(scope="module")
def partition(tmp_path_factory: pytest.TempPathFactory) -> Path:
    directory = tmp_path_factory.mktemp("data") / "orders-3"
    build_partition(str(directory), SEGMENTS)
    return directory


def _logs(partition: Path) -> list[str]:
    return sorted(str(p) for p in partition.glob("*.log"))


def _record_offsets(text: str) -> list[int]:
    return [int(line.split()[2]) for line in text.splitlines() if line.startswith("| offset: ")]


def test_max_records_counts_over_the_whole_run(partition: Path) -> None:
    # offsets 75..79 are the end of segment 1, 80 and 81 the start of segment 2
    code, out, err = run_kdump(
        ["--deep-iteration", "--from-offset", "75", "--max-records", "7", *_logs(partition)]
    )
    text = out.decode()
    assert (code, err) == (0, b"")
    assert _record_offsets(text) == list(range(75, 82))
    dumped = [line.split()[1] for line in text.splitlines() if line.startswith("Dumping ")]
    assert dumped == _logs(partition)[1:3]


def test_max_records_alone_stops_after_the_first_file(partition: Path) -> None:
    code, out, _ = run_kdump(["--deep-iteration", "--max-records", "2", *_logs(partition)])
    assert code == 0 and _record_offsets(out.decode()) == [0, 1]
    assert out.decode().count("Dumping ") == 1


def test_filtered_text_prints_only_the_headers_of_files_with_a_match(partition: Path) -> None:
    code, out, _ = run_kdump(
        ["--deep-iteration", "--from-offset", "85", "--to-offset", "86", *_logs(partition)]
    )
    lines = out.decode().splitlines()
    assert code == 0
    assert lines[0] == f"Dumping {_logs(partition)[2]}" and lines[1] == "Log starting offset: 80"
    assert sum(line.startswith(("Dumping ", "Log starting offset")) for line in lines) == 2
    assert _record_offsets(out.decode()) == [85, 86]


def test_unfiltered_text_keeps_every_header(partition: Path) -> None:
    code, out, _ = run_kdump(["--print-header-values", *_logs(partition)])
    assert code == 0 and out.decode().count("Dumping ") == SEGMENTS


def test_json_records_say_file_topic_and_partition(partition: Path) -> None:
    code, out, _ = run_kdump(
        ["--json", "--deep-iteration", "--from-offset", "121", "--max-records", "1", *_logs(partition)]
    )
    records = [json.loads(line) for line in out.splitlines() if b'"type":"record"' in line]
    assert code == 0 and len(records) == 1
    assert records[0]["file"] == _logs(partition)[3]
    assert (records[0]["topic"], records[0]["partition"], records[0]["offset"]) == ("orders", 3, 121)
    assert validate(records[0]) == []


def test_a_fatal_error_ends_the_json_stream_with_an_error_object(partition: Path) -> None:
    code, out, err = run_kdump(["--json", _logs(partition)[0], str(partition)])
    last = json.loads(out.splitlines()[-1])
    assert code == 1
    assert last["type"] == "error" and last["file"] == str(partition) and "is a directory" in last["message"]
    assert validate(last) == []
    assert err.decode() == f"kdump: {partition}: {last['message']}\n"


def test_a_directory_given_to_files_is_named_so(partition: Path) -> None:
    code, out, err = run_kdump(["--files", str(partition)])
    assert code == 1
    assert (
        out.decode() == f"Dumping {partition}\n"
    )  # what Kafka prints before its StringIndexOutOfBoundsException
    assert err.decode().startswith(f"kdump: {partition}: is a directory")


def test_a_missing_file_is_no_such_file(tmp_path: Path) -> None:
    missing = tmp_path / "00000000000000000000.log"
    code, _, err = run_kdump(["--files", str(missing)])
    assert code == 1 and err.decode() == f"kdump: {missing}: No such file\n"


@pytest.mark.parametrize(
    "options",
    [
        ["--from-offset", "-5"],
        ["--to-offset", "-1"],
        ["--from-offset", "9", "--to-offset", "3"],
        ["--max-records", "0"],
        ["--max-records", "-2"],
    ],
)
def test_kdump_option_values_out_of_range_are_usage_errors(partition: Path, options: list[str]) -> None:
    code, out, err = run_kdump([*options, _logs(partition)[0]])
    assert code == 2 and out == b""
    assert err.startswith(b"kdump: --") and err.count(b"\n") == 1


def test_kafka_option_errors_keep_kafkas_status() -> None:
    code, _, err = run_kdump(["--files", "x.log", "--max-bytes", "many"])
    assert code == 1 and b"Cannot parse argument 'many' of option max-bytes" in err


def test_the_transaction_log_decoder_on_an_ordinary_topic_says_so(tmp_path: Path) -> None:
    segment = tmp_path / "orders-0" / "00000000000000000000.log"
    segment.parent.mkdir()
    segment.write_bytes(build_v2_batch([SimpleRecord(b"an order")]))
    code, out, err = run_kdump(["--transaction-log-decoder", "--files", str(segment)])
    assert code == 1
    assert err.decode() == (
        f"kdump: {segment}: byte 0: the record at offset 0 has no key, so this is not __transaction_state data "
        "(--transaction-log-decoder reads only that topic)\n"
    )


# -- item 2: discoverability ---------------------------------------------------------------------------------


@pytest.mark.parametrize("flag", ["-h", "--kdump-help"])
def test_files_h_lists_kafkas_options_and_kdumps_own(flag: str) -> None:
    from kdump.cli.files import KDUMP_OPTIONS, usage_text

    code, out, err = run_kdump([flag])
    text = out.decode()
    assert (code, err) == (0, b"")
    assert usage_text() in text  # Kafka's table, unchanged
    for spec in KDUMP_OPTIONS:
        assert f"\n--{spec.name}" in text, spec.name


def test_h_as_the_argument_of_an_option_is_not_help(partition: Path) -> None:
    code, out, _ = run_kdump(["--deep-iteration", "--key", "-h", _logs(partition)[0]])
    assert (code, out) == (0, b"")  # a filter for the key "-h": nothing matches, so not even a header


def test_files_help_stays_kafkas() -> None:
    from kdump.cli.files import DESCRIPTION, usage_text

    code, out, err = run_kdump(["--help"])
    assert (code, out, err.decode()) == (1, b"", DESCRIPTION + "\n" + usage_text())


def test_kdump_help_files_and_the_pointer_to_it() -> None:
    from click.testing import CliRunner

    from kdump.cli import cli
    from kdump.cli.files import kdump_help_text

    runner = CliRunner()
    result = runner.invoke(cli, ["help", "files"])
    assert result.exit_code == 0 and result.output == kdump_help_text()
    assert "kdump help files" in runner.invoke(cli, ["--help"]).output
    ls_help = runner.invoke(cli, ["help", "ls"])
    assert ls_help.exit_code == 0 and ls_help.output == runner.invoke(cli, ["ls", "-h"]).output
    unknown = runner.invoke(cli, ["help", "nosuch"])
    assert unknown.exit_code == 2 and "no such command 'nosuch'" in unknown.output


def test_shell_completion_completes_commands_and_options() -> None:
    import os
    import subprocess
    import sys

    def complete(words: str, cword: int) -> str:
        env = {
            **os.environ,
            "_KDUMP_COMPLETE": "bash_complete",
            "COMP_WORDS": words,
            "COMP_CWORD": str(cword),
        }
        return subprocess.run(
            [sys.executable, "-m", "kdump"], env=env, capture_output=True, text=True, check=True
        ).stdout

    assert "plain,ls" in complete("kdump l", 1).splitlines()
    assert "plain,--json" in complete("kdump ls --j", 2).splitlines()


def test_the_man_pages_are_installed_with_the_package() -> None:
    import glob
    import tomllib

    root = Path(__file__).resolve().parents[1]
    config = tomllib.loads((root / "pyproject.toml").read_text())["tool"]["setuptools"]["data-files"]
    installed = {Path(p).name for pattern in config["share/man/man1"] for p in glob.glob(str(root / pattern))}
    assert installed == {p.name for p in (root / "man").glob("*.1")} and "kdump.1" in installed


def test_kdump_find_man_page_quotes_json() -> None:
    import os
    import subprocess

    page = Path(__file__).resolve().parents[1] / "man" / "kdump-find.1"
    text = subprocess.run(
        ["groff", "-man", "-Tutf8", str(page)],
        capture_output=True,
        check=True,
        env={**os.environ, "GROFF_NO_SGR": "1"},
    ).stdout.decode()
    text = re.sub(r".\x08", "", text)
    for shown in (
        '{"offset": N}',
        '{"timestamp": T}',
        '"entry", "offset", "position"}',
        '"entry", "timestamp", "offset"}',
    ):
        assert shown in text, shown


# -- item 4: human timestamps ----------------------------------------------------------------------------------


def _utc(ms: int) -> str:
    import time

    return time.strftime("%Y-%m-%dT%H:%M:%S", time.gmtime(ms // 1000)) + f".{ms % 1000:03d}Z"


def test_human_time_follows_every_timestamp_of_the_text(partition: Path) -> None:
    from tests.partition_builder import BASE_TIMESTAMP

    log = _logs(partition)[1]
    code, out, _ = run_kdump(["--deep-iteration", "--human-time", log])
    plain_code, plain, _ = run_kdump(["--deep-iteration", log])
    text = out.decode()
    assert code == plain_code == 0
    stamps = re.findall(r"CreateTime: (\d+) \(([^)]*)\)", text)
    assert len(stamps) == 8 + 40  # every batch and record line of segment 1
    assert all(iso == _utc(int(ms)) for ms, iso in stamps)
    assert f"CreateTime: {BASE_TIMESTAMP + 1000} ({_utc(BASE_TIMESTAMP + 1000)}) keySize:" in text
    assert re.sub(r" \([^)]*Z\)", "", text) == plain.decode()  # nothing else changes


def test_human_time_in_another_zone_and_on_time_indexes(partition: Path) -> None:
    timeindex = _logs(partition)[0].replace(".log", ".timeindex")
    code, out, _ = run_kdump(["--tz", "+05:30", timeindex])
    lines = [line for line in out.decode().splitlines() if line.startswith("timestamp: ")]
    assert code == 0 and lines
    for line in lines:
        ms = int(line.split()[1])
        local = _utc(ms + 5 * 3600_000 + 1800_000)[:-1] + "+05:30"
        assert line.startswith(f"timestamp: {ms} ({local}) offset: ")


def test_a_bad_zone_is_a_usage_error(partition: Path) -> None:
    code, _, err = run_kdump(["--tz", "Mars/Olympus", _logs(partition)[0]])
    assert code == 2 and err.startswith(b"kdump: --tz: ")
