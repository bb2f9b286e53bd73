"""Runs of plain batch headers read from a file descriptor with pread (``header_run(fd, ...)``: ``kdump report``'s
header pass maps no page of the segment) against the real tool: on every segment of the corpus (and its damaged
copies) that ``kafka-dump-log.sh`` dumped with its default options, the runs read from the descriptor -- in C and
by the pure-Python twin, with and without CRCs -- cover exactly the batches its lines list, with their counts,
sizes, offsets and timestamps; and ``kdump report`` / ``kdump verify`` say the same with the descriptor as
through the map.  A file that shrinks while it is read still gives one line, never a crash."""

from __future__ import annotations

import json
import os
import re
import shutil
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

from kdump.analysis import header_run as hr
from kdump.cli import cli
from kdump.storage import record_batch
from kdump.storage.checksum import crc32c
from kdump.storage.file_records import FileChangedError, FileRecords
from tests.corpus import CORPUS, FIXTURE_CORPUS, corpus_available, load_manifest

C_RUN = getattr(record_batch._SPEEDUPS, "header_run", None)
FUNCTIONS = [("twin", hr.header_run_py)] + ([("c", C_RUN)] if C_RUN is not None else [])
NOW = "2026-12-01T00:00:00Z"

_LINE = re.compile(
    r"^baseOffset: (-?\d+) lastOffset: (-?\d+) count: (-?\d+) .*?producerId: (-?\d+) .*?"
    r"partitionLeaderEpoch: (-?\d+) isTransactional: (\w+) isControl: (\w+) deleteHorizonMs: (\S+) "
    r"position: (\d+) (?:CreateTime|LogAppendTime|NoTimestampType): (-?\d+) size: (\d+) magic: (\d+) "
    r"compresscodec: (\w+) crc: \d+ isvalid: (\w+)$"
)
_CODECS = {"none": 0, "gzip": 1, "snappy": 2, "lz4": 3, "zstd": 4}


def _oracle_batches(stdout: str) -> list[dict[str, Any]]:
    """The batches of a default dump, as the real tool listed them."""
    out = []
    for line in stdout.splitlines():
        m = _LINE.match(line)
        if m is None:
            if line.startswith("baseOffset:"):
                raise AssertionError(f"unparsed batch line: {line}")
            continue
        g = m.groups()
        out.append(
            {
                "base": int(g[0]),
                "last": int(g[1]),
                "count": int(g[2]),
                "pid": int(g[3]),
                "epoch": int(g[4]),
                "plain_kind": g[5] == "false" and g[6] == "false" and g[7] == "OptionalLong.empty",
                "position": int(g[8]),
                "ts": int(g[9]),
                "size": int(g[10]),
                "magic": int(g[11]),
                "codec": _CODECS[g[12]],
                "valid": g[13] == "true",
            }
        )
    return out


def _default_dumps() -> list[tuple[Path, Path, str]]:
    """(corpus root, segment, the real tool's stdout) of every default dump of one .log file."""
    roots = [FIXTURE_CORPUS] + ([CORPUS] if corpus_available() else [])
    found = []
    for root in roots:
        for run in load_manifest(root):
            files = run.files
            if run.tool != "kafka-4.0.0" or len(files) != 1 or not files[0].endswith(".log"):
                continue
            if run.argv != ("--files", files[0]):
                continue
            segment = root / files[0]
            if segment.is_file() and (root / run.stdout_file).is_file():
                found.append((root, segment, run.expected_stdout(root).decode("utf-8")))
    return found


def _expected_run(batches: list[dict[str, Any]], i: int, crc: bool) -> int:
    """How many of the listed batches from ``i`` on a run takes (0: none), by the rules of header_run's comment
    (what can be seen in the tool's lines: magic, kind, codec, CRC validity, consecutive offsets, the epoch, at
    most 8 producer ids)."""
    producers: set[int] = set()
    previous = batches[i]["base"] - 1
    epoch = batches[i]["epoch"]
    n = 0
    for b in batches[i:]:
        if b["magic"] != 2 or not b["plain_kind"] or b["base"] != previous + 1 or b["epoch"] != epoch:
            break
        if b["last"] < b["base"] or b["count"] < 0 or (crc and not b["valid"]):
            break
        if b["pid"] >= 0 and b["pid"] not in producers:
            if len(producers) == hr.RUN_PRODUCERS:
                break
            producers.add(b["pid"])
        previous = b["last"]
        n += 1
    return n


def _limits(batch: dict[str, Any]) -> tuple[int, ...]:
    """Limits that hold nothing back but the walk's own rules: the previous last offset and the epoch."""
    return (
        -hr.NO_LIMIT - 1,
        batch["base"] - 1,
        batch["epoch"],
        -1,
        hr.NO_LIMIT,
        hr.NO_LIMIT,
        0,
        hr.NO_LIMIT,
        -1,
    )


@pytest.mark.parametrize(("name", "function"), FUNCTIONS)
def test_runs_from_a_descriptor_are_the_real_tools_batches(name: str, function: Any) -> None:
    dumps = _default_dumps()
    assert len(dumps) >= 10
    compared = 0
    for _root, segment, stdout in dumps:
        batches = _oracle_batches(stdout)
        size = segment.stat().st_size
        data = segment.read_bytes()
        fd = os.open(segment, os.O_RDONLY)
        try:
            for crc in (None, crc32c):
                for i, first in enumerate(batches):
                    expected = _expected_run(batches, i, crc is not None)
                    args = (first["position"], size, size, crc, _limits(first), None, None, None, None)
                    found = function(fd, *args)
                    assert found == function(data, *args), (segment, i, crc)  # the map's answer too
                    if expected == 0:
                        assert found is None, (segment, i, crc)
                        continue
                    assert found is not None, (segment, i, crc)
                    run = hr.HeaderRun._make(found)
                    taken = batches[i : i + expected]
                    last = taken[-1]
                    stamps = [b["ts"] for b in taken]
                    assert (run.batches, run.records, run.bytes) == (
                        expected,
                        sum(b["count"] for b in taken),
                        sum(b["size"] for b in taken),
                    ), (segment, i)
                    assert (run.end, run.last_position, run.last_offset, run.last_size) == (
                        last["position"] + last["size"],
                        last["position"],
                        last["last"],
                        last["size"],
                    ), (segment, i)
                    assert run.max_timestamp == max(stamps)
                    assert run.min_timestamp == min((t for t in stamps if t >= 0), default=-1)
                    assert run.codecs == sum({1 << b["codec"] for b in taken})
                    compared += 1
        finally:
            os.close(fd)
    assert compared > 100, compared


@pytest.mark.parametrize(("name", "function"), FUNCTIONS)
def test_a_short_read_ends_the_run(tmp_path: Path, name: str, function: Any) -> None:
    """The descriptor's file is shorter than the walk was told (it shrank after it was opened): with CRCs the
    run ends before the batch whose bytes cannot be read; headers alone end where a header cannot be read."""
    source = FIXTURE_CORPUS / "data" / "plain-0" / "00000000000000000000.log"
    batches = _oracle_batches(
        (FIXTURE_CORPUS / "expected" / "data" / "plain-0")
        .joinpath("00000000000000000000.log.default.txt")
        .read_text()
    )
    size = source.stat().st_size
    cut = batches[2]["position"] + 70  # the third batch's header is whole, its records are not
    short = tmp_path / "00000000000000000000.log"
    short.write_bytes(source.read_bytes()[:cut])
    fd = os.open(short, os.O_RDONLY)
    try:
        with_crc = function(fd, 0, size, size, crc32c, _limits(batches[0]), None, None, None, None)
        assert with_crc is not None and with_crc[0] == batches[2]["position"]
        headers = function(fd, 0, size, size, None, _limits(batches[0]), None, None, None, None)
        assert headers is not None and headers[0] == batches[3]["position"]  # the fourth header is gone
    finally:
        os.close(fd)


def _json_lines(*args: str) -> tuple[int, list[Any]]:
    result = CliRunner().invoke(cli, list(args))
    assert "Traceback" not in result.stderr and "internal error" not in result.stderr, result.stderr
    return result.exit_code, [json.loads(line) for line in result.stdout.splitlines()]


def test_report_and_verify_say_the_same_with_a_descriptor(monkeypatch: pytest.MonkeyPatch) -> None:
    """The header pass through the descriptor against the map (the walk before it), on the corpus and on every
    damaged case: the same JSON facts."""
    monkeypatch.setenv("KDUMP_WORKERS", "1")
    roots = [FIXTURE_CORPUS / "data"] + sorted(
        p for p in (FIXTURE_CORPUS / "damaged").iterdir() if p.is_dir()
    )
    if corpus_available():
        roots.append(CORPUS / "data")
    for root in roots:
        for args in (
            ("report", "--json", "--now", NOW, str(root)),
            ("report", "--json", "--crc", "--now", NOW, str(root)),
            ("verify", "--json", str(root)),
        ):
            monkeypatch.setattr(hr.RunWalk, "takes_fd", True)
            with_fd = _json_lines(*args)
            monkeypatch.setattr(hr.RunWalk, "takes_fd", False)
            assert with_fd == _json_lines(*args), (root, args)


def test_the_header_pass_reads_through_the_descriptor(monkeypatch: pytest.MonkeyPatch) -> None:
    """``kdump report``'s pass (no CRC) gives header_run the descriptor, not the map."""
    seen: list[Any] = []
    real = hr.header_run

    def spy(source: Any, *args: Any) -> Any:
        seen.append(source)
        return real(source, *args)

    monkeypatch.setattr(hr, "header_run", spy)
    monkeypatch.setenv("KDUMP_WORKERS", "1")
    code, _ = _json_lines("report", "--json", "--now", NOW, str(FIXTURE_CORPUS / "data" / "plain-0"))
    assert code in (0, 1)
    assert seen and all(isinstance(s, int) for s in seen)


def test_a_file_truncated_during_the_header_pass_is_one_line(tmp_path: Path) -> None:
    """The segment shrinks between the open (the map's size) and the walk: the descriptor's reads come back
    short, the map's pages are gone; one line naming the file, no traceback, no signal."""
    part = tmp_path / "plain-0"
    shutil.copytree(FIXTURE_CORPUS / "data" / "plain-0", part)
    log = part / "00000000000000000000.log"
    with FileRecords(str(log)) as records:
        os.truncate(log, 300)
        reader = _Reader()
        with pytest.raises(FileChangedError) as caught:
            for batch in records.batches(runs=hr.RunWalk([reader])):
                reader.last = batch.last_offset
    assert "truncated" in caught.value.describe() and str(log) in caught.value.describe()


class _Reader:
    """A reader of runs with no limits beyond the walk's (the previous offset and epoch: any)."""

    runs = True

    def __init__(self) -> None:
        self.last: int | None = None

    def limit(self, limits: hr.RunLimits) -> None:
        limits.crc = False
        limits.previous(self.last)
        limits.leader_epoch(0)

    def run(self, run: hr.HeaderRun) -> None:
        self.last = run.last_offset
