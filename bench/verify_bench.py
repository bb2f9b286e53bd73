"""Speed of ``kdump verify`` on the bench segment (``bench/make_segments.py``: 253 MiB, 16,398 batches of 136
records, uncompressed).

The segment is hard-linked into ``bench/data/verify/`` (git-ignored) with indexes built by ``kdump
rebuild-index``: once as one partition, and as ``--copies`` partitions for the many-partition figure.  Figures
(the files being in the page cache, best of ``--repeat`` runs, process start included):

* **one segment, shallow**: ``kdump verify`` (CRC of every batch, offsets, indexes; no record decoded), with
  the log checks in a forked child while the parent checks the indexes, and with ``KDUMP_WORKERS=1``;
* **one segment, deep**: ``kdump verify --deep``;
* **in process**: ``verify_log_segment`` alone (what one pool worker or Spark task does);
* **N partitions, 1 worker / all cores**: ``KDUMP_WORKERS=1`` against the default pool.

Each figure is given in wall time and in CPU time (user + system of the process and its workers, best run): on a
loaded machine only the CPU figure is steady.

Usage::

    .venv/bin/python bench/verify_bench.py [--copies 8] [--repeat 3] [--json] [--segment PATH] [--work DIR]

``--segment`` links another checkout's bench segment (one copy of it in the page cache for every checkout that
links it), ``--work`` puts the partitions elsewhere (on the segment's file system: they are hard links).
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import subprocess
import sys
import time
from pathlib import Path

BENCH = Path(__file__).resolve().parent
REPO = BENCH.parent
sys.path.insert(0, str(REPO))

SEGMENT = BENCH / "data" / "plain-0" / "00000000000000000000.log"
WORK = BENCH / "data" / "verify"


def prepare(copies: int, segment: Path = SEGMENT, work: Path = WORK) -> tuple[Path, Path]:
    one = work / "one" / "bench-0"
    many = work / "many"
    for directory in [one] + [many / f"bench-{i}" for i in range(copies)]:
        log = directory / SEGMENT.name
        if not log.exists():
            directory.mkdir(parents=True, exist_ok=True)
            os.link(segment, log)
        if not (directory / "00000000000000000000.index").exists():
            subprocess.run(
                [sys.executable, "-m", "kdump", "rebuild-index", "--no-backup", str(directory)],
                check=True,
                capture_output=True,
            )
    return one.parent, many


#: CPU seconds (user + system, the process and the workers it waited for) of the last :func:`timed` case's best
#: run: on a loaded machine the steadier figure (wall time waits for the other processes).
CPU: dict[str, float] = {}


def timed(argv: list[str], env: dict[str, str] | None = None, repeat: int = 3, name: str = "") -> float:
    best = float("inf")
    for _ in range(repeat):
        before = resource.getrusage(resource.RUSAGE_CHILDREN)
        started = time.perf_counter()
        subprocess.run(argv, stdout=subprocess.DEVNULL, env=env, check=False, cwd=REPO)
        wall = time.perf_counter() - started
        after = resource.getrusage(resource.RUSAGE_CHILDREN)
        cpu = after.ru_utime - before.ru_utime + after.ru_stime - before.ru_stime
        best = min(best, wall)
        CPU[name] = min(CPU.get(name, float("inf")), cpu)
    return best


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--copies", type=int, default=8)
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--json", action="store_true")
    parser.add_argument("--segment", type=Path, default=SEGMENT, help="the bench segment to link")
    parser.add_argument("--work", type=Path, default=WORK, help="where the partitions are made")
    args = parser.parse_args()
    if not args.segment.exists():
        sys.exit(f"{args.segment} is missing: run bench/make_segments.py first")
    one, many = prepare(args.copies, args.segment, args.work)
    # Timed runs load kdump from bytecode, as an installed kdump does (see run.py): with PYTHONDONTWRITEBYTECODE
    # set, every run would otherwise recompile every module (~0.2 s of the ~0.4 s measured before this).
    subprocess.run(
        [sys.executable, "-m", "compileall", "-q", str(REPO / "kdump")], check=True, capture_output=True
    )
    with open(args.segment, "rb") as f:
        while f.read(1 << 24):
            pass
    size = args.segment.stat().st_size
    kdump = [sys.executable, "-m", "kdump", "verify"]
    figures: dict[str, float] = {}
    env1 = dict(os.environ, KDUMP_WORKERS="1")
    for name, argv, env, repeat in (
        ("one segment, shallow", [*kdump, str(one)], None, args.repeat),
        ("one segment, shallow, 1 process", [*kdump, str(one)], env1, args.repeat),
        ("one segment, deep", [*kdump, "--deep", str(one)], None, 1),
    ):
        figures[name] = timed(argv, env, repeat, name)
    from kdump.analysis.log_verification import verify_log_segment
    from kdump.storage.local_log import LocalLog

    (segment,) = LocalLog.scan(one / "bench-0").segments
    best = float("inf")
    for _ in range(args.repeat):
        started = time.perf_counter()
        verify_log_segment(segment)
        best = min(best, time.perf_counter() - started)
    figures["one segment, in process"] = best
    for name, env in (
        (f"{args.copies} partitions, 1 worker", env1),
        (f"{args.copies} partitions, all cores", None),
    ):
        figures[name] = timed([*kdump, str(many)], env, args.repeat, name)
    rows = []
    for name, seconds in figures.items():
        total = size * (args.copies if "partitions" in name else 1)
        cpu = CPU.get(name)
        rows.append(
            {
                "case": name,
                "seconds": round(seconds, 3),
                "gib_per_s": round(total / seconds / 2**30, 2),
                "cpu_seconds": None if cpu is None else round(cpu, 3),
                "gib_per_cpu_s": None if not cpu else round(total / cpu / 2**30, 2),
            }
        )
    if args.json:
        print(json.dumps({"segment_bytes": size, "cpus": os.cpu_count(), "figures": rows}, indent=2))
    else:
        for r in rows:
            cpu = (
                ""
                if r["cpu_seconds"] is None
                else f"  CPU {r['cpu_seconds']:>7.3f} s {r['gib_per_cpu_s']:>6.2f} GiB/CPU-s"
            )
            print(f"{r['case']:<34} {r['seconds']:>7.3f} s {r['gib_per_s']:>6.2f} GiB/s{cpu}")


if __name__ == "__main__":
    main()
