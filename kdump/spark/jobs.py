"""The jobs behind ``kdump spark export`` and ``kdump spark verify`` (PySpark imported here)."""

from __future__ import annotations

import glob
import json
import os
import shutil
import tempfile
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any, TextIO

from kdump.spark import prepare_environment, read, session
from kdump.spark.planning import expand_paths

if TYPE_CHECKING:
    from kdump.commands.remote_tier import RemoteChecks


def export(
    paths: list[str],
    output: str,
    *,
    fmt: str = "parquet",
    options: Mapping[str, str] | None = None,
    master: str | None = "local[*]",
    overwrite: bool = False,
    out: TextIO,
    progress: TextIO | None = None,
) -> int:
    """Write the records under ``paths`` to ``output`` (a directory, in ``fmt``); report skipped batches.
    ``progress``: where to show what Spark is doing (a terminal; :class:`kdump.render.progress.SparkProgress`).

    Returns the number of batches reported as damaged.
    """
    bar = _progress("export", progress)
    try:
        created = _no_session(master)
        spark = session(master, "kdump spark export", _progress_conf(bar), log_level="OFF")
    except BaseException:
        if bar is not None:
            bar.close()
        raise
    if bar is not None:
        bar.attach(spark.sparkContext)
    report_dir = None
    opts = dict(options or {})
    if "corruptReportDir" not in opts:
        report_dir = tempfile.mkdtemp(prefix="kdump-spark-report-")
        opts["corruptReportDir"] = report_dir
        opts.setdefault("corruptReportStderr", "false")  # listed below instead
    # the planner cannot ask Spark how many cores there are: tell it (splits are made for that many tasks)
    opts.setdefault("minPartitions", str(spark.sparkContext.defaultParallelism))
    try:
        # the JVM engine when it can be used (kdump.spark.engine; the same rows), else the Python source
        df = read(spark, paths, opts)
        df.write.mode("overwrite" if overwrite else "errorifexists").format(fmt).save(output)
        if bar is not None:
            bar.close()
            bar = None
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
        if bar is not None:
            bar.close()
        if created:
            spark.stop()
        if report_dir is not None:
            shutil.rmtree(report_dir, ignore_errors=True)


def _progress(label: str, stream: TextIO | None) -> Any:
    if stream is None:
        return None
    from kdump.render.progress import SparkProgress

    return SparkProgress(label, stream)


def _progress_conf(bar: Any) -> dict[str, str]:
    """With a progress display, executors report their tasks' metrics (the rows read) every second rather
    than every 10 s (``spark.executor.heartbeatInterval``), so the display's row count moves while a task
    runs; the setting applies to a session this job starts."""
    return {} if bar is None else {"spark.executor.heartbeatInterval": "1s"}


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


def verify(
    paths: list[str],
    *,
    master: str | None = "local[*]",
    deep: bool = False,
    gaps: bool = False,
    remote: RemoteChecks | None = None,
    out: TextIO,
    report: TextIO | None = None,
    progress: TextIO | None = None,
) -> int:
    """``kdump verify`` on Spark: the same checks with the same code (:class:`kdump.commands.verify.Verify`),
    each segment one Spark task (:func:`kdump.commands.verify.segment_task`), the partition-level checks on the
    driver.  ``remote``: the run's :class:`kdump.commands.remote_tier.RemoteChecks` (``--remote-root``): a tiered
    partition is then checked as one log, its remote segments tasks like the local ones, reading their objects
    straight from the store.  Prints what ``kdump verify`` prints (and writes its JSON lines to ``report``);
    returns the number of problems."""
    from kdump.analysis.log_verification import SegmentFacts
    from kdump.commands.verify import SegmentTask, Verify, segment_task, select
    from kdump.render.verify_report import JsonSink, TeeSink, TextSink

    targets, log_dirs = select(expand_paths(paths))

    def spark_map(tasks: list[SegmentTask]) -> list[SegmentFacts]:
        if not tasks:
            return []
        bar = _progress("verify", progress)
        try:
            created = _no_session(master)
            spark = session(master, "kdump spark verify", _progress_conf(bar), log_level="OFF")
            if bar is not None:
                bar.attach(spark.sparkContext)
            try:
                return spark.sparkContext.parallelize(tasks, len(tasks)).map(segment_task).collect()
            finally:
                if bar is not None:
                    bar.close()
                    bar = None
                if created:
                    spark.stop()
        finally:
            if bar is not None:
                bar.close()

    counted = _CountingSink(TextSink(out) if report is None else TeeSink(TextSink(out), JsonSink(report)))
    Verify(targets, counted, deep=deep, gaps=gaps, mapper=spark_map, log_dirs=log_dirs, remote=remote).run()
    return counted.problems


class _CountingSink:
    def __init__(self, sink: Any) -> None:
        self.sink = sink
        self.problems = 0

    def __getattr__(self, name: str) -> Any:
        return getattr(self.sink, name)

    def problem(self, problem: Any) -> None:
        self.problems += 1
        self.sink.problem(problem)
