"""``kdump report`` at scale: a data directory of many partitions, each a hardlink of the bench's 254 MiB
segment with its indexes (``bench/data/verify/one/bench-0``, made by ``bench/verify_bench.py``), reported once;
prints the CPU seconds of the whole process tree (the forked workers included), the wall time and the peak RSS
of the largest process.

    .venv/bin/python bench/report_bench.py --gb 100 [--checkout DIR] [--json]

The hardlinks share one file, so the page cache holds 254 MiB whatever the size: what is measured is kdump's
CPU, not the disk.  ``--checkout`` runs another tree's kdump (say ``git archive main | tar -x -C DIR`` with its
C accelerator built in place) for a before/after on the same directory.
"""

from __future__ import annotations

import argparse
import os
import resource
import shutil
import subprocess
import sys
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
SEGMENT = REPO / "bench" / "data" / "verify" / "one" / "bench-0"


def build(root: Path, gigabytes: float, source: Path) -> int:
    """``root``: partitions ``bench-N`` of hardlinked segment files until ``gigabytes`` are reached; returns how
    many partitions."""
    files = sorted(source.iterdir())
    size = sum(f.stat().st_size for f in files)
    count = max(1, round(gigabytes * 1e9 / size))
    root.mkdir(parents=True, exist_ok=True)
    for i in range(count):
        part = root / f"bench-{i}"
        if part.exists():
            continue
        part.mkdir()
        for f in files:
            os.link(f, part / f.name)
    for extra in sorted(p for p in root.iterdir() if p.name.startswith("bench-")):
        if int(extra.name.split("-")[1]) >= count:
            shutil.rmtree(extra)
    return count


def run(checkout: Path, root: Path, json_out: bool, now: str) -> tuple[float, float, int]:
    """(CPU seconds of the tree, wall seconds, peak RSS in KiB of its largest process)."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    args = [sys.executable, "-m", "kdump", "report", str(root), "--now", now]
    args += ["--json", "-o", os.devnull] if json_out else ["-o", os.devnull]
    start = time.perf_counter()
    proc = subprocess.run(args, cwd=checkout, env={**os.environ, "PYTHONPATH": str(checkout)}, check=False)
    wall = time.perf_counter() - start
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    if proc.returncode not in (0, 1):
        raise SystemExit(f"kdump report exited {proc.returncode}")
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    return cpu, wall, after.ru_maxrss


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--gb", type=float, default=10.0, help="size of the data directory (decimal GB)")
    parser.add_argument("--root", type=Path, default=Path("/tmp/kdump-report-bench"))
    parser.add_argument("--segment", type=Path, default=SEGMENT, help="partition directory to hardlink")
    parser.add_argument("--checkout", type=Path, action="append", help="a kdump tree to run (repeatable)")
    parser.add_argument("--json", action="store_true", help="report --json instead of the page")
    parser.add_argument("--now", default="2026-12-01T00:00:00Z")
    args = parser.parse_args()
    count = build(args.root, args.gb, args.segment)
    size = sum(f.stat().st_size for f in args.segment.iterdir()) * count
    print(f"{count} partitions, {size / 1e9:.1f} GB (hardlinks of {args.segment})")
    for checkout in args.checkout or [REPO]:
        cpu, wall, rss = run(checkout, args.root, args.json, args.now)
        print(
            f"{checkout}: CPU {cpu:.1f} s, wall {wall:.1f} s, peak RSS {rss / 1024:.0f} MiB (largest process)"
        )


if __name__ == "__main__":
    main()
