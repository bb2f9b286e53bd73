"""Speed of ``kdump find`` on a partition of 10,000 segments.

The partition is built once under ``bench/data/find-10k/bench-0`` (git-ignored; about 60 MB: 10,000 segments
of 8 batches, each with its ``.index`` and ``.timeindex``; see ``tests/partition_builder.py``).  Figures, the
files being in the page cache:

* **offset, in process**: ``Find(directory, offset=n).search()`` (what ``kdump find`` runs: ``find_offset`` on
  ``LocalLog.scan_segments(directory)``) for random offsets -- the directory listing, the binary search over
  segment names, the index lookup and the bounded scan -- median and 95th percentile;
* **timestamp, in process**: the same for ``find_timestamp`` (which reads 12 bytes of the time index of every
  segment before the answer: ListOffsets' "first segment whose largest timestamp is at or after T");
* **command**: ``python -m kdump find --offset n`` as a child process, process start included, best of 5.

Usage::

    .venv/bin/python bench/find_bench.py [--segments N] [--lookups N] [--json]
"""

from __future__ import annotations

import argparse
import json
import os
import random
import shutil
import statistics
import subprocess
import sys
import time
from pathlib import Path

BENCH = Path(__file__).resolve().parent
REPO = BENCH.parent
sys.path.insert(0, str(REPO / "tests"))
sys.path.insert(0, str(REPO))

from partition_builder import BASE_TIMESTAMP, build_partition  # noqa: E402

from kdump.commands.find import Find  # noqa: E402

BATCHES_PER_SEGMENT = 8
RECORDS_PER_BATCH = 5


def partition_dir(segments: int) -> Path:
    return BENCH / "data" / f"find-{segments // 1000}k" / "bench-0"


def ensure_partition(segments: int) -> Path:
    directory = partition_dir(segments)
    marker = directory.parent / "complete"
    if not marker.is_file() or marker.read_text() != str(segments):
        shutil.rmtree(directory.parent, ignore_errors=True)
        print(f"building {segments} segments in {directory} ...", file=sys.stderr)
        build_partition(
            str(directory),
            segments,
            batches_per_segment=BATCHES_PER_SEGMENT,
            records_per_batch=RECORDS_PER_BATCH,
        )
        marker.write_text(str(segments))
    for name in os.listdir(directory):  # into the page cache
        with open(directory / name, "rb") as f:
            f.read()
    return directory


def timed(fn, samples: list[float]) -> object:  # noqa: ANN001
    start = time.perf_counter()
    result = fn()
    samples.append((time.perf_counter() - start) * 1000)
    return result


def summary(samples: list[float]) -> dict[str, float]:
    ordered = sorted(samples)
    return {
        "medianMs": round(statistics.median(ordered), 2),
        "p95Ms": round(ordered[int(len(ordered) * 0.95) - 1], 2),
        "maxMs": round(ordered[-1], 2),
    }


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--segments", type=int, default=10_000)
    parser.add_argument("--lookups", type=int, default=200)
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args(argv)
    directory = ensure_partition(args.segments)
    per_segment = BATCHES_PER_SEGMENT * RECORDS_PER_BATCH
    end = args.segments * per_segment
    rng = random.Random(7)
    offset_ms: list[float] = []
    for _ in range(args.lookups):
        offset = rng.randrange(end)
        result = timed(lambda o=offset: Find(str(directory), None, offset=o).search(), offset_ms)  # type: ignore[arg-type]
        assert result.found and result.record.offset == offset  # type: ignore[attr-defined]
    timestamp_ms: list[float] = []
    for _ in range(max(10, args.lookups // 4)):
        segment = rng.randrange(args.segments)
        target = BASE_TIMESTAMP + segment * 1000 + rng.randrange(RECORDS_PER_BATCH)
        result = timed(lambda t=target: Find(str(directory), None, timestamp=t).search(), timestamp_ms)  # type: ignore[arg-type]
        assert result.found  # type: ignore[attr-defined]
    command = []
    for _ in range(5):
        offset = rng.randrange(end)
        start = time.perf_counter()
        subprocess.run(
            [sys.executable, "-m", "kdump", "find", "--offset", str(offset), str(directory)],
            check=True,
            stdout=subprocess.DEVNULL,
            cwd=REPO,
        )
        command.append((time.perf_counter() - start) * 1000)
    figures = {
        "segments": args.segments,
        "offset": summary(offset_ms),
        "timestamp": summary(timestamp_ms),
        "commandBestMs": round(min(command), 1),
    }
    if args.json:
        print(json.dumps(figures, indent=2))
    else:
        o, t = figures["offset"], figures["timestamp"]
        print(f"partition: {directory.relative_to(REPO)} ({args.segments} segments)")
        print(
            f"find --offset, in process:     median {o['medianMs']} ms, p95 {o['p95Ms']} ms, max {o['maxMs']} ms"
        )
        print(
            f"find --timestamp, in process:  median {t['medianMs']} ms, p95 {t['p95Ms']} ms, max {t['maxMs']} ms"
        )
        print(f"kdump find --offset (process): {figures['commandBestMs']} ms, process start included")
    return 0


if __name__ == "__main__":
    sys.exit(main())
