"""kdump on Apache Spark: the ``kafka-log`` data source and the jobs behind ``kdump spark``.

Importing this package needs neither PySpark nor pyarrow; :func:`register` and :func:`session` import
PySpark when called.  Typical use::

    from kdump.spark import register
    register(spark)
    df = spark.read.format("kafka-log").option("isolation.level", "read_committed").load("/data/kafka-logs")
"""

from __future__ import annotations

import os
import sys
from collections.abc import Mapping
from typing import Any

DATA_SOURCE_NAME = "kafka-log"
#: Set (to 1) in the environment of a session started with the JVM engine's jar: ``pyspark_kafka_log`` then
#: registers the Python source as ``kafka-log-python``, leaving ``kafka-log`` to the JVM source.
JVM_SOURCE_VARIABLE = "KDUMP_SPARK_JVM_SOURCE"


def register(spark: Any) -> None:
    """Register the Python ``kafka-log`` data source with ``spark`` (a SparkSession): as ``kafka-log-python``
    always, and as ``kafka-log`` unless the JVM engine's jar is loaded (:func:`kdump.spark.engine.jvm_loaded`),
    whose source then has that name (Spark refuses a name that is both a JVM and a Python source).  With
    ``pushFilters`` on by default when :func:`pushdown_plan_per_scan` says this Spark keeps a pushed-down plan
    per scan, off (opt-in) otherwise (PySpark 4.3, see :class:`kdump.spark.source.KafkaLogFilteringReader`)."""
    from kdump.spark.engine import jvm_loaded
    from kdump.spark.source import (
        KafkaLogDataSource,
        KafkaLogDataSourcePushing,
        KafkaLogPythonDataSource,
        KafkaLogPythonDataSourcePushing,
    )

    per_scan = pushdown_plan_per_scan(spark)
    spark.dataSource.register(KafkaLogPythonDataSourcePushing if per_scan else KafkaLogPythonDataSource)
    if not jvm_loaded(spark):
        spark.dataSource.register(KafkaLogDataSourcePushing if per_scan else KafkaLogDataSource)


#: The JVM class whose fields tell whether a pushed-down plan stays with its scan.
SCAN_BUILDER_CLASS = "org.apache.spark.sql.execution.datasources.v2.python.PythonScanBuilder"


def pushdown_plan_per_scan(spark: Any) -> bool:
    """Whether this Spark keeps the plan a Python data source's ``pushFilters`` produced with the one scan
    that pushed it: its ``PythonScanBuilder`` has a ``readInfo`` field (Spark's master after SPARK-58551, for
    5.0), rather than storing it in the DataFrame's ``PythonDataSourceV2`` (``setReadInfo``), where PySpark 4.3
    hands it to every later scan of that DataFrame.  False when it cannot be told (no JVM: Spark Connect)."""
    try:
        jvm = spark.sparkContext._jvm
        loader = jvm.java.lang.Thread.currentThread().getContextClassLoader()
        builder = jvm.java.lang.Class.forName(SCAN_BUILDER_CLASS, False, loader)
        return any(f.getName() == "readInfo" for f in builder.getDeclaredFields())
    except Exception:  # noqa: BLE001 -- any failure means: not known to be safe
        return False


def prepare_environment(master: str | None) -> None:
    """Environment a session started from this Python process needs: workers run this interpreter (so they
    can import kdump) and, on a local master, Spark binds to the loopback address."""
    os.environ.setdefault("PYSPARK_PYTHON", sys.executable)
    os.environ.setdefault("PYSPARK_DRIVER_PYTHON", sys.executable)
    if master is None or master.startswith("local"):
        os.environ.setdefault("SPARK_LOCAL_IP", "127.0.0.1")


#: JVM options of the sessions :func:`session` starts (unless ``conf`` gives the same keys): Arrow Java without
#: its bounds checks and its null check in ``get`` (``BoundsChecking``, ``NullCheckingForGet``).  Spark turns
#: the source's Arrow batches into rows reading each field through ``ArrowColumnVector`` (``isNullAt``,
#: ``getBinary``...), and the checks (``ArrowBuf.chk``: ``refCnt``, ``checkIndexD``) were 11% of the task
#: thread's samples (JFR) on the bench segments; without them the task thread took 3.6-3.7 CPU-s instead of
#: 4.1 for 2.23M records (best of 3, two interleaved pairs of sessions, local[1], noop sink).  The batches the
#: C builder writes are validated before Spark reads them
#: (:mod:`kdump.spark.reader`); PySpark's own Arrow paths (pandas UDFs, toArrow) then run unchecked too.
ARROW_JAVA_OPTIONS = "-Darrow.enable_unsafe_memory_access=true -Darrow.enable_null_check_for_get=false"


def session(
    master: str | None = "local[*]",
    app_name: str = "kdump",
    conf: Mapping[str, str] | None = None,
    *,
    log_level: str = "ERROR",
) -> Any:
    """A SparkSession with the ``kafka-log`` source registered.

    ``master`` None keeps what ``spark-submit`` (or ``spark.master``) set.  The session time zone is UTC, so
    timestamps print as Kafka stores them.  ``log_level`` is Spark's (``OFF`` for a command line that reports
    failures itself).
    """
    prepare_environment(master)
    from pyspark.sql import SparkSession

    builder = SparkSession.builder.appName(app_name)
    if master is not None:
        builder = builder.master(master)
    settings = {
        "spark.sql.session.timeZone": "UTC",
        "spark.ui.showConsoleProgress": "false",
        "spark.python.worker.reuse": "true",
        # filters on topic, partition, offset and timestamp narrow the read (kdump.spark.source)
        "spark.sql.python.filterPushdown.enabled": "true",
        # Arrow Java's per-access bounds and reference-count checks off (ARROW_JAVA_OPTIONS): Spark reads every
        # field of every row of the source's Arrow batches through them
        "spark.driver.extraJavaOptions": ARROW_JAVA_OPTIONS,
        "spark.executor.extraJavaOptions": ARROW_JAVA_OPTIONS,
    }
    settings.update(conf or {})
    # the JVM engine's jar (kdump.spark.engine), compiled on first use; {} without javac
    from kdump.spark.engine import kdump_root, session_conf

    # the JVM source's planner on the driver imports this kdump (KafkaLogSource.Planner)
    settings.setdefault("spark.kdump.pythonPath", kdump_root())
    engine_conf = session_conf(settings)
    settings.update(engine_conf)
    settings.pop("kdump.engine", None)
    for key, value in settings.items():
        builder = builder.config(key, value)
    saved = os.environ.get(JVM_SOURCE_VARIABLE)
    if engine_conf:  # the JVM engine answers to kafka-log: PySpark's lookup of pyspark_kafka_log steps aside
        os.environ[JVM_SOURCE_VARIABLE] = "1"  # (in the JVM's environment, which its Python workers inherit)
    try:
        spark = builder.getOrCreate()
    finally:
        if saved is None:
            os.environ.pop(JVM_SOURCE_VARIABLE, None)
        else:
            os.environ[JVM_SOURCE_VARIABLE] = saved
    spark.sparkContext.setLogLevel(log_level)
    register(spark)
    return spark


def read(
    spark: Any, paths: Any, options: Mapping[str, str] | None = None, *, engine: str | None = None
) -> Any:
    """``spark.read.format("kafka-log").options(**options).load(paths)`` through the JVM engine when it can be
    used (:func:`kdump.spark.engine.read`: the same rows, column batches filled on the JVM)."""
    from kdump.spark.engine import read as engine_read

    return engine_read(spark, paths, options, engine=engine)


__all__ = ["DATA_SOURCE_NAME", "read", "prepare_environment", "pushdown_plan_per_scan", "register", "session"]
