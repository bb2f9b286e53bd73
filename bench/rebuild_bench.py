"""Speed of ``kdump rebuild-index`` on the large uncompressed benchmark segment (``bench/make_segments.py``).

Two figures, the segment being in the page cache:

* **recovery**: Kafka's recovery loop alone (:func:`kdump.analysis.index_recovery.recover_indexes`: every batch
  framed and CRC-checked, the index entries computed), in process, best of ``--repeat``;
* **command**: ``python -m kdump rebuild-index`` as a child process on a directory holding a hard link to the
  segment, its index files deleted before each run so that they are written (atomically) every time; process
  start included, best of ``--repeat``.

Usage::

    .venv/bin/python bench/rebuild_bench.py [--quick] [--repeat N] [--json]
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

BENCH = Path(__file__).resolve().parent
REPO = BENCH.parent
sys.path.insert(0, str(BENCH))
sys.path.insert(0, str(REPO))

import make_segments  # noqa: E402

from kdump.analysis.index_recovery import recover_indexes  # noqa: E402
from kdump.storage.file_records import FileRecords  # noqa: E402

GIB = 1 << 30


def warm(path: Path) -> None:
    with open(path, "rb") as f:
        while f.read(1 << 24):
            pass


def recovery_seconds(segment: Path, repeat: int) -> tuple[float, int, int]:
    best = float("inf")
    entries = batches = 0
    for _ in range(repeat):
        start = time.perf_counter()
        with FileRecords(str(segment)) as records:
            result = recover_indexes(records, 0)
        best = min(best, time.perf_counter() - start)
        entries, batches = len(result.offset_entries), result.batches
    return best, entries, batches


def command_seconds(segment: Path, repeat: int) -> float:
    with tempfile.TemporaryDirectory(dir=segment.parent.parent) as scratch:
        partition = Path(scratch) / "plain-0"
        partition.mkdir()
        target = partition / segment.name
        try:
            os.link(segment, target)
        except OSError:
            target.symlink_to(segment)
        best = float("inf")
        for _ in range(repeat):
            for suffix in (".index", ".timeindex"):
                (partition / (segment.stem + suffix)).unlink(missing_ok=True)
            start = time.perf_counter()
            subprocess.run(
                [sys.executable, "-m", "kdump", "rebuild-index", "--no-backup", str(partition)],
                check=True,
                stdout=subprocess.DEVNULL,
                cwd=REPO,
            )
            best = min(best, time.perf_counter() - start)
    return best


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--quick", action="store_true", help="use the 10x smaller data set")
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--json", action="store_true", help="print the figures as JSON")
    args = parser.parse_args(argv)
    data = make_segments.build(args.quick, verbose=False)
    segment = data / "plain-0" / make_segments.SEGMENT
    size = segment.stat().st_size
    warm(segment)
    recovery, entries, batches = recovery_seconds(segment, args.repeat)
    command = command_seconds(segment, args.repeat)
    figures = {
        "segment": str(segment.relative_to(REPO)),
        "bytes": size,
        "batches": batches,
        "offsetIndexEntries": entries,
        "recoverySeconds": round(recovery, 4),
        "recoveryGiBps": round(size / recovery / GIB, 2),
        "commandSeconds": round(command, 4),
        "commandGiBps": round(size / command / GIB, 2),
    }
    if args.json:
        print(json.dumps(figures, indent=2))
    else:
        print(
            f"segment: {figures['segment']} ({size / (1 << 20):.0f} MiB, {batches} batches, {entries} index entries)"
        )
        print(f"recovery (in process):   {recovery * 1000:8.1f} ms  {figures['recoveryGiBps']:.2f} GiB/s")
        print(
            f"kdump rebuild-index:     {command * 1000:8.1f} ms  {figures['commandGiBps']:.2f} GiB/s (process start included)"
        )
    return 0


if __name__ == "__main__":
    sys.exit(main())
