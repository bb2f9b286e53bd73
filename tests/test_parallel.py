"""The ordered parallel path of ``kdump files`` gives the sequential output byte for byte: text, end-of-run
summaries, errors part-way through, closed pipes.  Run as subprocesses writing to real file descriptors, with
chunks small enough that every corpus segment is split across workers."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from tests.corpus import CORPUS, FIXTURE_CORPUS, corpus_available

ROOT = CORPUS if corpus_available() else FIXTURE_CORPUS

CASES = [
    ["data/compact-0/00000000000000000000.log", "--deep-iteration"],  # offset gaps -> summaries
    ["data/codec-zstd-0/00000000000000000000.log", "--print-data-log"],
    ["data/txn-0/00000000000000000744.log", "--print-data-log"],
    ["data/logappend-0/00000000000000000396.log", "--deep-iteration"],
    ["data-kafka39-zk/legacy-v1-0/00000000000000000720.log", "--print-data-log"],
    ["damaged/crc-flip-compressed/codec-gzip-0/00000000000000000000.log", "--print-data-log"],  # dies mid-way
    ["damaged/truncated-mid-batch/plain-0/00000000000000000000.log", "--deep-iteration"],  # invalid bytes
    ["damaged/bad-magic/plain-0/00000000000000000000.log", "--deep-iteration"],
    ["data/plain-0/00000000000000000000.log", "data/compact-0/00000000000000000575.log", "--deep-iteration"],
]


def kdump(args: list[str], workers: int, chunk: int = 700) -> subprocess.CompletedProcess:
    env = dict(
        os.environ, KDUMP_WORKERS=str(workers), KDUMP_PARALLEL_MIN_BYTES="0", KDUMP_CHUNK_BYTES=str(chunk)
    )
    return subprocess.run(
        [sys.executable, "-m", "kdump", "files", *args], cwd=ROOT, env=env, capture_output=True, timeout=60
    )


@pytest.mark.parametrize("args", CASES, ids=lambda a: a[0].split("/")[-2] + ":" + a[-1])
@pytest.mark.parametrize("workers", [2, 3])
def test_parallel_equals_sequential(args: list[str], workers: int) -> None:
    sequential = kdump(args, 1)
    parallel = kdump(args, workers)
    assert parallel.stdout == sequential.stdout
    assert parallel.stderr == sequential.stderr
    assert parallel.returncode == sequential.returncode


def test_the_corpus_replay_agrees(tmp_path: Path) -> None:
    # the sequential path is the one the corpus replay checks; confirm one damaged case against Kafka too
    args = ["damaged/crc-flip-compressed/codec-gzip-0/00000000000000000000.log", "--print-data-log"]
    result = kdump(args, 2)
    expected = ROOT / "expected" / (args[0] + ".print-data-log.txt")
    assert result.stdout == expected.read_bytes()
    assert result.returncode == 1 and result.stderr.count(b"\n") == 1


def test_closed_pipe_stops_quietly() -> None:
    env = dict(os.environ, KDUMP_WORKERS="2", KDUMP_PARALLEL_MIN_BYTES="0", KDUMP_CHUNK_BYTES="500")
    seg = "data/codec-zstd-0/00000000000000000000.log"
    command = f"{sys.executable} -m kdump files {seg} --print-data-log | head -3"
    result = subprocess.run(
        ["bash", "-o", "pipefail", "-c", command], cwd=ROOT, env=env, capture_output=True, timeout=60
    )
    assert result.returncode == 0 and result.stderr == b""
    assert len(result.stdout.splitlines()) == 3
