"""The jobs behind ``kdump spark export`` and ``kdump spark verify`` (PySpark imported here)."""

from __future__ import annotations

import glob
import json
import os
import shutil
import tempfile
from collections.abc import Mapping
from typing import Any, TextIO

from kdump.spark import prepare_environment, session
from kdump.spark.planning import partition_dirs, topic_partition
from kdump.spark.verify import across_segments, verify_one
from kdump.storage.local_log import LocalLog


def export(
    paths: list[str],
    output: str,
    *,
    fmt: str = "parquet",
    options: Mapping[str, str] | None = None,
    master: str | None = "local[*]",
    overwrite: bool = False,
    out: TextIO,
) -> int:
    """Write the records under ``paths`` to ``output`` (a directory, in ``fmt``); report skipped batches.

    Returns the number of batches reported as damaged.
    """
    created = _no_session(master)
    spark = session(master, "kdump spark export", log_level="OFF")
    report_dir = None
    opts = dict(options or {})
    if "corruptReportDir" not in opts:
        report_dir = tempfile.mkdtemp(prefix="kdump-spark-report-")
        opts["corruptReportDir"] = report_dir
        opts.setdefault("corruptReportStderr", "false")  # listed below instead
    try:
        df = spark.read.format("kafka-log").options(**opts).load(paths)
        df.write.mode("overwrite" if overwrite else "errorifexists").format(fmt).save(output)
        reported = _read_reports(opts["corruptReportDir"]) if _is_local(master) else []
        for row in reported:
            where = row["segment"] if row["position"] is None else f"{row['segment']}: byte {row['position']}"
            out.write(f"{where}: {row['action']}: {row['kind']}: {row['message']}\n")
        out.write(
            f"Wrote {output} ({fmt})"
            + (f"; {len(reported)} damaged batches reported" if reported else "")
            + ".\n"
        )
        return len(reported)
    finally:
        if created:
            spark.stop()
        if report_dir is not None:
            shutil.rmtree(report_dir, ignore_errors=True)


def _no_session(master: str | None) -> bool:
    """True when no SparkSession is active yet (the job then stops the one it starts)."""
    prepare_environment(master)
    from pyspark.sql import SparkSession

    return SparkSession.getActiveSession() is None


def _is_local(master: str | None) -> bool:
    return master is None or master.startswith("local")


def _read_reports(directory: str) -> list[dict[str, Any]]:
    rows: list[dict[str, Any]] = []
    for name in sorted(glob.glob(os.path.join(directory, "*.jsonl"))):
        with open(name, encoding="utf-8") as f:
            rows.extend(json.loads(line) for line in f if line.strip())
    rows.sort(key=lambda r: (r["segment"], r["position"] or 0))
    return rows


def verify_tasks(paths: list[str], deep: bool, gaps: bool) -> list[tuple]:
    """One task per segment (with or without its ``.log``) under ``paths``, largest first."""
    tasks = []
    for directory in partition_dirs(paths):
        try:
            log = LocalLog.scan(directory)
        except OSError:
            continue
        topic, partition = topic_partition(log)
        for segment in log.segments:
            tasks.append((topic, partition, segment, deep, gaps))
    tasks.sort(key=lambda t: -t[2].log_size)
    return tasks


def verify(
    paths: list[str],
    *,
    master: str | None = "local[*]",
    deep: bool = False,
    gaps: bool = False,
    out: TextIO,
    report: TextIO | None = None,
) -> int:
    """Check every segment under ``paths`` in parallel; print one line per problem and a summary (and write
    JSON lines to ``report``).  Returns the number of problems."""
    tasks = verify_tasks(paths, deep, gaps)
    results: list[dict[str, Any]] = []
    if tasks:
        created = _no_session(master)
        spark = session(master, "kdump spark verify", log_level="OFF")
        try:
            rdd = spark.sparkContext.parallelize(tasks, len(tasks))
            results = rdd.map(verify_one).collect()
        finally:
            if created:
                spark.stop()
    problems = [p for r in results for p in r["problems"]] + across_segments(results, gaps)
    problems.sort(key=lambda p: (p["path"], p["position"] if p["position"] is not None else -1, p["kind"]))
    for p in problems:
        where = [p["path"]]
        if p["entry"] is not None:
            where.append(
                f"entry {p['entry']}" + ("" if p["position"] is None else f" (byte {p['position']})")
            )
        elif p["position"] is not None:
            where.append(f"byte {p['position']}")
        out.write(f"{': '.join(where)}: {p['kind']}: {p['message']}\n")
    kinds: dict[str, int] = {}
    for p in problems:
        kinds[p["kind"]] = kinds.get(p["kind"], 0) + 1
    summary = {
        "type": "summary",
        "partitions": len({r["directory"] for r in results}),
        "segments": len(results),
        "batches": sum(r["batches"] for r in results),
        "logBytes": sum(r["log_bytes"] for r in results),
        "problems": len(problems),
        "filesWithProblems": len({p["path"] for p in problems}),
        "kinds": kinds,
    }
    text = (
        f"Checked {summary['segments']} segments in {summary['partitions']} partitions "
        f"({summary['batches']} batches, {summary['logBytes']} log bytes): "
    )
    if problems:
        text += (
            f"{len(problems)} problems in {summary['filesWithProblems']} files ("
            + ", ".join(f"{k}: {v}" for k, v in sorted(kinds.items()))
            + ").\n"
        )
    else:
        text += "no problems found.\n"
    out.write(text)
    if report is not None:
        for p in problems:
            report.write(json.dumps({"type": "problem", **p}, ensure_ascii=False) + "\n")
        report.write(json.dumps(summary) + "\n")
    return len(problems)
