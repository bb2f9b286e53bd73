"""``kdump report`` at scale: a data directory of many partitions, each a hardlink of the bench's 254 MiB
segment with its indexes (``bench/data/verify/one/bench-0``, made by ``bench/verify_bench.py``), reported once;
prints the CPU seconds of the whole process tree (the forked workers included), the wall time and the peak RSS
of the largest process.

    .venv/bin/python bench/report_bench.py --gb 100 [--checkout DIR] [--json]

The hardlinks share one file, so the page cache holds 254 MiB whatever the size: what is measured is kdump's
CPU, not the disk.  ``--checkout`` runs another tree's kdump (say ``git archive main | tar -x -C DIR`` with its
C accelerator built in place) for a before/after on the same directory.

``--small N`` builds a log directory of N small partitions instead (topics ``t0`` to ``t99``, 20 to 160 records
each, hardlinks of four templates) with a ``__consumer_offsets`` partition whose groups committed offsets of
them: the many-partition case (the overview's aggregates, the lag charts of thousands of partitions and the
work the main process does per partition).
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


def build_small(root: Path, count: int, groups: int = 40) -> int:
    """``root``: a log directory of ``count`` small partitions (:func:`tests.partition_builder.build_partition`
    templates of 1, 2, 4 and 8 segments of 4 batches of 5 records, hardlinked) and ``__consumer_offsets-0``, where
    group ``billing`` committed every partition (lags 0 to 159) and ``groups`` - 1 others one partition each;
    returns ``count``."""
    sys.path.insert(0, str(REPO))
    from tests.builder import SimpleRecord, build_v2_batch
    from tests.forensic_data import offset_commit_key, offset_commit_value
    from tests.partition_builder import build_partition

    marker = root / f".small-{count}-{groups}"
    if marker.exists():
        return count
    if root.exists():
        shutil.rmtree(root)
    templates = root / ".templates"
    ends = []
    for k, segments in enumerate((1, 2, 4, 8)):
        spans = build_partition(
            str(templates / f"k{k}"), segments, batches_per_segment=4, records_per_batch=5
        )
        ends.append(spans[-1][1])
    (root / "meta.properties").write_text("version=1\nnode.id=1\ncluster.id=K5hpkBvRSWm5NwQK1Ur9eA\n")
    commits = []
    for i in range(count):
        k = (i * 7) % 4
        part = root / f"t{i % 100}-{i // 100}"
        part.mkdir()
        for f in sorted((templates / f"k{k}").iterdir()):
            os.link(f, part / f.name)
        commits.append(("billing", f"t{i % 100}", i // 100, (i * 13) % (ends[k] + 1)))
    commits += [(f"g{j}", f"t{j % 100}", j // 100, 0) for j in range(1, groups)]
    ts = 1_700_000_000_000
    batch = build_v2_batch(
        [
            SimpleRecord(
                offset_commit_value(offset, 0, "", ts), key=offset_commit_key(group, topic, partition)
            )
            for group, topic, partition, offset in commits
        ],
        base_offset=0,
    )
    offsets = root / "__consumer_offsets-0"
    offsets.mkdir()
    (offsets / "00000000000000000000.log").write_bytes(batch)
    shutil.rmtree(templates)
    marker.touch()
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
    parser.add_argument("--small", type=int, metavar="N", help="N small partitions instead of --gb")
    args = parser.parse_args()
    if args.small:
        count = build_small(args.root, args.small)
        print(f"{count} small partitions and __consumer_offsets-0 in {args.root}")
    else:
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
