"""Benchmark of the Spark pipeline's Arrow path: records/s per core, end to end and stage by stage.

Uses the data set of ``bench/make_segments.py`` (2,230,000 records of 9-byte keys and 100-byte values, 136 per
batch, once uncompressed and once zstd; built first if missing) and measures, for each segment:

* ``core``: the storage core alone, ``FileRecords.batches()`` + ``batch.records()`` (one core, in process);
* ``arrow``: the data source's task code, :func:`kdump.spark.reader.read_split` over every split, producing the
  Arrow batches Spark receives (one core, in process);
* ``spark``, ``spark-jvm`` and ``spark-name``: ``spark.read.format("kafka-log-python")`` (the Python data
  source), ``kdump.spark.read(..., engine="jvm")`` (the JVM engine) and ``spark.read.format("kafka-log")`` (the
  name: the JVM engine in this session, which loads its jar); ``--engines`` picks, interleaved; written to
  Spark's ``noop`` sink (every column
  materialised in the JVM) on ``local[N]``; records/s per core = records / wall time / N, and records per
  CPU-second of the whole process tree (JVM and Python workers; robust when other work shares the machine),
  split into the JVM's own CPU seconds (``jvm_cpu_seconds``; of which ``jit_cpu_seconds`` the JIT compiler
  threads) and the Python side's (the driver and its Python workers).
  The session start and a warm-up are not counted: before the first measured query every option set is
  written once to the ``noop`` sink over every segment (the JVM's JIT compiles Spark's row conversion in the
  first queries: the first query of a fresh JVM took 1.5-2x the CPU of the third), then each figure
  does its own warm-up count.

With ``--variants``, the ``arrow`` and ``spark`` stages also run with each option set of ``VARIANTS``
(``includeHeaders``, ``includeControlRecords``, ``isolation.level=read_committed``), as stages
``arrow+headers``, ``spark+headers`` and so on.

Each figure is the run with the least CPU time of ``--repeat`` runs; ``rec/cpu-s`` (records per CPU-second)
is the per-core figure that stays meaningful when other work shares the machine.

Usage::

    .venv/bin/python bench/spark_bench.py            # full data set, local[2], best of 3
    .venv/bin/python bench/spark_bench.py --quick    # 10x smaller data set
    .venv/bin/python bench/spark_bench.py --profile  # cProfile top-15 of the arrow stage (quick data set)
    .venv/bin/python bench/spark_bench.py --variants # also the headers, control and read_committed variants
    .venv/bin/python bench/spark_bench.py --pushdown # bytes the JVM engine reads with filters pushed down

Results go to ``bench/results/spark-latest.json`` (``spark-latest-quick.json`` with ``--quick``).
"""

from __future__ import annotations

import argparse
import cProfile
import io
import json
import os
import platform
import pstats
import sys
import time
from pathlib import Path
from typing import Any

BENCH = Path(__file__).resolve().parent
sys.path.insert(0, str(BENCH.parent))
sys.path.insert(0, str(BENCH))

import make_segments  # noqa: E402

from kdump.spark.options import parse_options  # noqa: E402
from kdump.spark.planning import plan  # noqa: E402
from kdump.storage.file_records import FileRecords  # noqa: E402
from tests.spark_cluster import tree_cpu_seconds  # noqa: E402

GOAL = 500_000
SPLIT_BYTES = 32 * 1024 * 1024
#: Option sets of ``--variants``: (stage suffix, options).
VARIANTS = (
    ("headers", {"includeHeaders": "true"}),
    ("control", {"includeControlRecords": "true"}),
    ("committed", {"isolation.level": "read_committed"}),
)


def core_stage(segment: Path) -> tuple[int, float, float]:
    started, cpu = time.perf_counter(), time.process_time()
    n = 0
    with FileRecords(str(segment)) as records:
        for batch in records.batches():
            for _ in batch.records():
                n += 1
    return n, time.perf_counter() - started, time.process_time() - cpu


def arrow_stage(directory: Path, extra: dict[str, str] | None = None) -> tuple[int, float, float]:
    from kdump.spark.reader import read_split

    selection = parse_options({"path": str(directory), "maxBytesPerSplit": str(SPLIT_BYTES), **(extra or {})})
    started, cpu = time.perf_counter(), time.process_time()
    n = 0
    for split in plan(selection).splits:
        for batch in read_split(split, selection.read):
            n += batch.num_rows
    return n, time.perf_counter() - started, time.process_time() - cpu


def jvm_cpu_seconds(pid: int | None) -> tuple[float, float]:
    """CPU seconds of the JVM process ``pid`` (every thread, ended ones included) and of its JIT compiler
    threads (those alive now: they live as long as the JVM); (0, 0) without /proc or a JVM pid."""
    if pid is None:
        return 0.0, 0.0
    ticks = os.sysconf("SC_CLK_TCK")
    try:
        with open(f"/proc/{pid}/stat") as f:
            fields = f.read().rsplit(")", 1)[1].split()
        total = (int(fields[11]) + int(fields[12])) / ticks
        jit = 0.0
        for tid in os.listdir(f"/proc/{pid}/task"):
            try:
                with open(f"/proc/{pid}/task/{tid}/stat") as f:
                    raw = f.read()
            except OSError:
                continue
            if "CompilerThre" in raw[raw.index("(") : raw.rindex(")")]:
                fields = raw.rsplit(")", 1)[1].split()
                jit += (int(fields[11]) + int(fields[12])) / ticks
    except OSError:
        return 0.0, 0.0
    return total, jit


def jvm_pid(spark) -> int | None:
    """The pid of the JVM PySpark started for ``spark`` (None when it was not started by this process)."""
    proc = getattr(spark.sparkContext._gateway, "proc", None)
    return None if proc is None else proc.pid


def load(spark, directory: Path, extra: dict[str, str] | None, engine: str):
    """The DataFrame of ``directory`` through ``engine`` (``python``: the Python data source; ``jvm``: the
    JVM engine, :func:`kdump.spark.read`; ``name``: ``spark.read.format("kafka-log")``; planning counted)."""
    from kdump.spark import read

    options = {"maxBytesPerSplit": str(SPLIT_BYTES), **(extra or {})}
    if engine == "name":
        return spark.read.format("kafka-log").options(**options).load(str(directory))
    return read(spark, str(directory), options, engine=engine)


def spark_stage(
    spark, directory: Path, repeat: int, extra: dict[str, str] | None = None, engine: str = "python"
) -> tuple[int, list[float], list[float], int, list[tuple[float, float]]]:
    n = load(spark, directory, extra, engine).count()  # warm-up (also the record count)
    times = []
    cpu = []
    jvm = []
    pid = jvm_pid(spark)
    for _ in range(repeat):
        cpu_before = tree_cpu_seconds([os.getpid()])
        jvm_before = jvm_cpu_seconds(pid)
        started = time.perf_counter()
        load(spark, directory, extra, engine).write.format("noop").mode("overwrite").save()
        times.append(time.perf_counter() - started)
        cpu.append(tree_cpu_seconds([os.getpid()]) - cpu_before)
        jvm_after = jvm_cpu_seconds(pid)
        jvm.append((jvm_after[0] - jvm_before[0], jvm_after[1] - jvm_before[1]))
    splits = len(plan(parse_options({"path": str(directory), "maxBytesPerSplit": str(SPLIT_BYTES)})).splits)
    return n, times, cpu, splits, jvm


def warm_up(spark, data: Path, variants: tuple, engines: tuple[str, ...] = ("python",)) -> None:
    """Every option set written once to the noop sink over every segment: the JIT's first compilations of
    Spark's row conversion are not measured (see the module's doc)."""
    for engine in engines:
        for name, (_, extra) in ((n, v) for v in variants for n in make_segments.LAYOUT):
            load(spark, data / name, extra, engine).write.format("noop").mode("overwrite").save()


def jvm_bytes_read(spark) -> int:
    """KafkaLogSource.bytesRead(): the bytes the JVM engine's readers of this (local) JVM read from segments."""
    from kdump.spark.engine import SOURCE_CLASS

    jvm = spark.sparkContext._jvm
    loader = jvm.java.lang.Thread.currentThread().getContextClassLoader()
    cls = jvm.java.lang.Class.forName(SOURCE_CLASS, True, loader)
    return int(cls.getMethod("bytesRead", None).invoke(None, None))


def pushdown(spark, data: Path) -> list[dict[str, Any]]:
    """Bytes the JVM engine reads with a filter pushed down and without (a count of the rows each keeps)."""
    from kdump.spark import read

    rows = []
    for name in make_segments.LAYOUT:
        df = read(spark, str(data / name), {"maxBytesPerSplit": str(SPLIT_BYTES)}, engine="jvm")
        n, lo, hi = df.selectExpr(
            "count(*)", "min(unix_micros(timestamp))", "max(unix_micros(timestamp))"
        ).first()
        conditions = [
            None,
            f"offset >= {n * 9 // 10}",
            "offset < 1000",
            f"offset = {n // 2}",
            f"offset BETWEEN {n // 4} AND {n // 4 + 9999}",
            f"timestamp >= timestamp_micros({lo + (hi - lo) * 9 // 10})",
            f"timestamp < timestamp_micros({lo + (hi - lo) // 10})",
            "partition = 1",
        ]
        for condition in conditions:
            query = df if condition is None else df.filter(condition)
            before, cpu = jvm_bytes_read(spark), tree_cpu_seconds([os.getpid()])
            kept = query.count()
            rows.append(
                {
                    "segment": name,
                    "filter": condition or "(none)",
                    "rows": kept,
                    "bytes_read": jvm_bytes_read(spark) - before,
                    "cpu_seconds": round(tree_cpu_seconds([os.getpid()]) - cpu, 2),
                }
            )
    return rows


def profile_arrow(directory: Path, top: int = 15) -> str:
    profiler = cProfile.Profile()
    profiler.enable()
    arrow_stage(directory)
    profiler.disable()
    out = io.StringIO()
    pstats.Stats(profiler, stream=out).sort_stats("tottime").print_stats(top)
    return out.getvalue()


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description="Records/s per core of the kafka-log Spark source.")
    parser.add_argument("--quick", action="store_true", help="use the 10x smaller data set")
    parser.add_argument("--repeat", type=int, default=3, help="Spark runs per segment (best is reported)")
    parser.add_argument("--cores", type=int, default=os.cpu_count() or 2, help="N of local[N] (default: all)")
    parser.add_argument("--profile", action="store_true", help="print a cProfile of the arrow stage and exit")
    parser.add_argument("--out", help="results file (default: bench/results/spark-latest[-quick].json)")
    parser.add_argument(
        "--variants", action="store_true", help="also the headers, control and read_committed option sets"
    )
    parser.add_argument(
        "--engines",
        default="python,jvm,name",
        help="comma-separated Spark engines to measure, interleaved: python (the Python data source, stage "
        "spark), jvm (kdump.spark.read's JVM engine, stage spark-jvm), name (spark.read.format('kafka-log'), "
        "stage spark-name); default all three",
    )
    parser.add_argument("--no-stages", action="store_true", help="only the Spark figures (no core/arrow)")
    parser.add_argument(
        "--pushdown",
        action="store_true",
        help="only the bytes the JVM engine reads with offset, timestamp and partition filters pushed down",
    )
    args = parser.parse_args(argv)

    if args.profile:
        print(profile_arrow(make_segments.build(True, verbose=True) / "plain-0"))
        return 0
    data = make_segments.build(args.quick, verbose=True)

    from kdump.spark import session

    if args.pushdown:
        spark = session(f"local[{args.cores}]", "kdump spark bench")
        try:
            table = pushdown(spark, data)
        finally:
            spark.stop()
        print(f"\n{'segment':<10}{'filter':<58}{'rows':>10}{'bytes read':>14}{'of all':>8}{'cpu-s':>7}")
        whole = {}
        for r in table:
            whole.setdefault(r["segment"], r["bytes_read"] or 1)
            share = r["bytes_read"] / whole[r["segment"]]
            print(
                f"{r['segment']:<10}{r['filter']:<58}{r['rows']:>10,}{r['bytes_read']:>14,}{share:>8.1%}"
                f"{r['cpu_seconds']:>7.2f}"
            )
        return 0
    variants = (("", {}), *VARIANTS) if args.variants else (("", {}),)
    engines = tuple(e.strip() for e in args.engines.split(",") if e.strip())
    figures = []
    for name in make_segments.LAYOUT if not args.no_stages else ():
        segment = data / name / make_segments.SEGMENT
        segment.read_bytes()  # into the page cache
        stages: list[tuple[str, Any, tuple]] = [("core", core_stage, (segment,))]
        for suffix, extra in variants:
            stages.append((f"arrow+{suffix}" if suffix else "arrow", arrow_stage, (data / name, extra)))
        for stage, run, run_args in stages:
            runs = [run(*run_args) for _ in range(args.repeat)]
            n, seconds, cpu = min(runs, key=lambda r: r[2])
            figures.append(
                {
                    "segment": name,
                    "stage": stage,
                    "records": n,
                    "seconds": seconds,
                    "cpu_seconds": round(cpu, 2),
                    "cores": 1,
                }
            )
    spark = session(f"local[{args.cores}]", "kdump spark bench")
    try:
        from kdump.spark.engine import jvm_loaded

        if {"jvm", "name"} & set(engines) and not jvm_loaded(spark):
            print("the JVM engine is not available (no javac?): its figures are the Python source's")
        warm_up(spark, data, variants, engines)
        runs = ((n, v, e) for v in variants for n in make_segments.LAYOUT for e in engines)
        for name, (suffix, extra), engine in runs:
            n, times, cpu, splits, jvm = spark_stage(spark, data / name, args.repeat, extra, engine)
            best = cpu.index(min(cpu))
            stage = "spark" if engine == "python" else f"spark-{engine}"
            figures.append(
                {
                    "segment": name,
                    "stage": f"{stage}+{suffix}" if suffix else stage,
                    "records": n,
                    "seconds": times[best],
                    "cpu_seconds": round(cpu[best], 2),
                    "jvm_cpu_seconds": round(jvm[best][0], 2),
                    "jit_cpu_seconds": round(jvm[best][1], 2),
                    "runs": times,
                    "cores": args.cores,
                    "splits": splits,
                }
            )
    finally:
        spark.stop()
    for f in figures:
        f["records_per_s_per_core"] = round(f["records"] / f["seconds"] / f["cores"])
        if "cpu_seconds" in f:
            f["records_per_cpu_s"] = round(f["records"] / f["cpu_seconds"]) if f["cpu_seconds"] else None
    result = {
        "machine": {
            "python": platform.python_version(),
            "cpus": os.cpu_count(),
            "platform": platform.platform(),
        },
        "data": json.loads((data / "manifest.json").read_text()),
        "goal_records_per_s_per_core": GOAL,
        "figures": figures,
    }
    out = BENCH / "results" / ("spark-latest-quick.json" if args.quick else "spark-latest.json")
    if args.out:
        out = Path(args.out).resolve()
    out.parent.mkdir(exist_ok=True)
    out.write_text(json.dumps(result, indent=2) + "\n")
    print(
        f"\n{'segment':<10}{'stage':<20}{'records':>12}{'seconds':>10}{'cores':>7}{'rec/s/core':>14}{'rec/cpu-s':>12}"
        f"{'cpu-s':>8}{'jvm':>7}{'jit':>7}"
    )
    for f in figures:
        per_cpu = f.get("records_per_cpu_s")
        jvm = f"{f['jvm_cpu_seconds']:>7.2f}{f['jit_cpu_seconds']:>7.2f}" if "jvm_cpu_seconds" in f else ""
        print(
            f"{f['segment']:<10}{f['stage']:<20}{f['records']:>12,}{f['seconds']:>10.2f}{f['cores']:>7}"
            f"{f['records_per_s_per_core']:>14,}{'' if per_cpu is None else format(per_cpu, ','):>12}"
            f"{f['cpu_seconds']:>8.2f}{jvm}"
        )
    print(f"(goal: {GOAL:,} records/s per core end to end; results in {out})")
    return 0


if __name__ == "__main__":
    sys.exit(main())
