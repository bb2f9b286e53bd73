"""How long the ``kafka-log`` source takes to plan a read of a data directory of many partitions.

Builds ``--partitions`` partition directories of one small segment each (``.log``, ``.index``, ``.timeindex``
written by ``tests/partition_builder.py`` once, then copied; 100 topics), and times
:func:`kdump.spark.planning.plan` (what the Spark driver runs before any task starts: directory listings, a
look at each ``.log``, the split cuts and the packing into tasks) for a plain read, a ``read_committed`` read
and a read with a starting timestamp (one time-index lookup per partition).  Prints one line per read: the
seconds and CPU seconds (best of ``--repeat``; the CPU figure holds when other work shares the machine), the
splits and the tasks.

Usage::

    .venv/bin/python bench/spark_plan_bench.py                       # 10,000 partitions, in a temp directory
    .venv/bin/python bench/spark_plan_bench.py --partitions 1000 --dir /tmp/plan-bench
"""

from __future__ import annotations

import argparse
import os
import shutil
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from kdump.spark.options import parse_options  # noqa: E402
from kdump.spark.planning import plan  # noqa: E402
from tests.partition_builder import BASE_TIMESTAMP, build_partition  # noqa: E402


def build(root: str, partitions: int) -> str:
    logs = os.path.join(root, "logs")
    if os.path.isdir(logs) and len(os.listdir(logs)) == partitions:
        return logs
    shutil.rmtree(logs, ignore_errors=True)
    template = os.path.join(root, "template")
    shutil.rmtree(template, ignore_errors=True)
    build_partition(template, 1, batches_per_segment=4, records_per_batch=5)
    names = os.listdir(template)
    for i in range(partitions):
        directory = os.path.join(logs, f"topic{i % 100}-{i // 100}")
        os.makedirs(directory)
        for name in names:
            shutil.copyfile(os.path.join(template, name), os.path.join(directory, name))
    shutil.rmtree(template)
    return logs


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--partitions", type=int, default=10_000)
    parser.add_argument("--dir", help="where to build the partitions (kept; default: a temporary directory)")
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--min-partitions", default="2")
    args = parser.parse_args()
    root = args.dir or tempfile.mkdtemp(prefix="kdump-plan-bench-")
    try:
        started = time.perf_counter()
        logs = build(root, args.partitions)
        print(f"{args.partitions} partitions in {logs} (built in {time.perf_counter() - started:.1f} s)")
        reads = {
            "plain": {},
            "read_committed": {"isolation.level": "read_committed"},
            "startingTimestamp": {"startingTimestamp": str(BASE_TIMESTAMP + 3)},
        }
        for name, extra in reads.items():
            options = {"path": logs, "minPartitions": args.min_partitions, **extra}
            best = cpu = float("inf")
            for _ in range(args.repeat):
                t, c = time.perf_counter(), time.process_time()
                result = plan(parse_options(options))
                best = min(best, time.perf_counter() - t)
                cpu = min(cpu, time.process_time() - c)
            print(
                f"{name:18} {best:6.2f} s ({cpu:.2f} CPU s)  {len(result.splits)} splits in {len(result.tasks)} tasks "
                f"({len(result.partitions)} partitions)"
            )
    finally:
        if not args.dir:
            shutil.rmtree(root, ignore_errors=True)


if __name__ == "__main__":
    main()
