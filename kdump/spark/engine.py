"""The JVM engine of the ``kafka-log`` source: column batches filled on the JVM, no Python worker per task.

PySpark's Python data sources hand Spark rows only (``PythonPartitionReaderFactory``): the Arrow batches the
Python reader builds are turned into rows and copied again by the scan, which caps a read near 0.6M records
per CPU-second whatever the Python side does (issue 33's JFR).  The JVM engine is a DataSource V2 source
written in Java (``kdump/spark/jvm/*.java``) with a columnar reader (``PartitionReaderFactory.
supportColumnarReads``): it fills Spark's column vectors straight from the segments' batches.

One planner: the JVM source asks the Python planner on the driver (``python -m kdump.spark.jvm_planner``, the
same splits, cuts and read_committed state as the Python source, :func:`kdump.spark.planning.plan`) for the
schema and the tasks when a DataFrame is loaded, and again for a query with filters Spark pushed down on
``topic``, ``partition``, ``offset`` or ``timestamp`` (``SupportsPushDownFilters``;
:func:`kdump.spark.options.push_filters`, as the Python source's ``pushFilters``): partitions and segments
left out, a partition started at the offset index's position for its first wanted offset or time; the reader
also leaves out batches whose header puts every record outside the timestamp filters.  Spark applies every
filter again to the rows read.
The JVM reader reads magic-2 batches of local files (every codec; headers, control records, read_committed)
and hands the rest of a split, from the first batch it does not read (legacy magic, a CRC mismatch, a batch
that does not decode, a torn tail...), to the Python reader (``python -m kdump.spark.fallback``), whose Arrow
batches it passes on: the rows are exactly the Python source's.  A read with ``decoder`` or
``decodeKeys``/``decodeValues``, and a split in an object store, goes to that reader whole.

The source is ``spark.read.format("kafka-log")`` where its jar is loaded (a ``DataSourceRegister``; the Python
source is then ``kafka-log-python``, see :func:`kdump.spark.register`) and :func:`read`'s JVM engine.

The Java sources are compiled on first use with ``javac`` against the jars PySpark ships into a jar cached
under ``$KDUMP_CACHE_DIR`` (default ``~/.cache/kdump``), keyed by the sources' hash and the Spark version;
:func:`kdump.spark.session` puts it on the session's class path.  Without ``javac`` (``KDUMP_JAVAC`` names
another; ``KDUMP_JAVAC=none`` turns it off), or on a session started without the jar, :func:`read` uses the
Python source: nothing else changes.

Which engine :func:`read` takes: the ``engine`` argument or option (``auto``, ``jvm``, ``python``; default
``$KDUMP_SPARK_ENGINE`` or ``auto``).  ``auto`` and ``jvm`` take the JVM engine when the jar is loaded and the
read has none of ``decoder``, ``decodeKeys``/``decodeValues`` or a path in an object store (the Python source
reads those without a process per task), the Python source otherwise; ``jvm`` says on standard error why it
could not be used.
"""

from __future__ import annotations

import json
import os
import sys
from collections.abc import Mapping, Sequence
from dataclasses import asdict
from pathlib import Path
from typing import Any

from kdump.spark.options import (
    OptionError,
    ReadOptions,
    _get,
    decoder,
    payload_options,
)
from kdump.spark.planning import Split

#: The JVM source's class (``format`` takes it).
SOURCE_CLASS = "kdump.spark.jvm.KafkaLogSource"
#: The service file naming the source for ``spark.read.format("kafka-log")``.
REGISTER_SERVICE = "org.apache.spark.sql.sources.DataSourceRegister"
#: ``KafkaLogSource.REVISION`` this module agrees with.
REVISION = 5
ENGINES = ("auto", "jvm", "python")
JAVA_DIR = Path(__file__).parent / "jvm"
#: Why the jar is not there (None: it is, or it was not asked for yet).
jar_problem: str | None = None


def kdump_root() -> str:
    """The directory this kdump is imported from (for ``PYTHONPATH`` of the processes the JVM source starts)."""
    return str(Path(__file__).resolve().parent.parent.parent)


def worker_python() -> str:
    """The Python the JVM source runs (the planner, the executors' reader): PySpark's workers', or this one."""
    return os.environ.get("PYSPARK_PYTHON") or sys.executable


def default_engine() -> str:
    engine = (os.environ.get("KDUMP_SPARK_ENGINE") or "auto").strip().lower()
    return engine if engine in ENGINES else "auto"


def _javac() -> str | None:
    import shutil

    named = os.environ.get("KDUMP_JAVAC")
    if named is not None:
        if named.strip().lower() in ("", "none", "0", "off"):
            return None
        return named if os.path.isfile(named) and os.access(named, os.X_OK) else shutil.which(named)
    return shutil.which("javac")


def _spark_jars() -> tuple[Path, str] | None:
    """PySpark's jar directory and version, or None without PySpark."""
    try:
        import pyspark
    except ImportError:
        return None
    jars = Path(pyspark.__file__).parent / "jars"
    return (jars, pyspark.__version__) if jars.is_dir() else None


def _cache_dir() -> Path:
    base = os.environ.get("KDUMP_CACHE_DIR")
    if base:
        return Path(base)
    xdg = os.environ.get("XDG_CACHE_HOME")
    return (Path(xdg) if xdg else Path.home() / ".cache") / "kdump"


def sources() -> list[Path]:
    return sorted(JAVA_DIR.glob("*.java"))


def jar_path() -> Path | None:
    """The engine's jar, compiled now if it is not cached yet; None (and :data:`jar_problem` says why) when
    there is no javac, no PySpark, or the compilation fails."""
    global jar_problem
    # (imported here: the JVM planner imports this module on every query and builds no jar)
    import hashlib
    import subprocess
    import tempfile
    import zipfile

    spark = _spark_jars()
    if spark is None:
        jar_problem = "PySpark is not installed"
        return None
    jars, version = spark
    files = sources()
    if not files:
        jar_problem = f"no Java sources in {JAVA_DIR}"
        return None
    digest = hashlib.sha256(version.encode() + b"\0" + REGISTER_SERVICE.encode())
    for f in files:
        digest.update(f.name.encode() + b"\0" + f.read_bytes())
    target = _cache_dir() / "spark-jvm" / f"{digest.hexdigest()[:20]}-spark-{version}" / "kdump-spark-jvm.jar"
    if target.is_file():
        jar_problem = None
        return target
    javac = _javac()
    if javac is None:
        jar_problem = "no javac (KDUMP_JAVAC, PATH)"
        return None
    try:
        target.parent.mkdir(parents=True, exist_ok=True)
        with tempfile.TemporaryDirectory(prefix="kdump-jvm-", dir=target.parent) as tmp:
            classes = Path(tmp) / "classes"
            classes.mkdir()
            done = subprocess.run(
                [
                    javac,
                    "-nowarn",
                    "-Xlint:-options",
                    "--release",
                    "17",
                    "-encoding",
                    "UTF-8",
                    "-cp",
                    str(jars / "*"),
                    "-d",
                    str(classes),
                    *map(str, files),
                ],
                capture_output=True,
                text=True,
                timeout=600,
            )
            if done.returncode != 0:
                jar_problem = f"javac failed: {(done.stderr or done.stdout).strip()[:2000]}"
                return None
            partial = Path(tmp) / "kdump-spark-jvm.jar"
            with zipfile.ZipFile(partial, "w", zipfile.ZIP_DEFLATED) as jar:
                jar.writestr("META-INF/MANIFEST.MF", "Manifest-Version: 1.0\r\nCreated-By: kdump\r\n\r\n")
                # spark.read.format("kafka-log") finds the source by this (DataSourceRegister.shortName)
                jar.writestr(f"META-INF/services/{REGISTER_SERVICE}", SOURCE_CLASS + "\n")
                for cls in sorted(classes.rglob("*.class")):
                    jar.write(cls, cls.relative_to(classes).as_posix())
            os.replace(partial, target)  # atomic: a concurrent build writes the same bytes
    except (OSError, subprocess.SubprocessError) as e:
        jar_problem = f"building the jar failed: {e}"
        return None
    jar_problem = None
    return target


def session_conf(conf: Mapping[str, str] | None) -> dict[str, str]:
    """``spark.jars`` with the engine's jar added (to what ``conf`` gives), or {} when the engine is off or
    the jar cannot be built."""
    if default_engine() == "python" or (conf or {}).get("kdump.engine", "").lower() == "python":
        return {}
    jar = jar_path()
    if jar is None:
        return {}
    given = (conf or {}).get("spark.jars", "")
    return {"spark.jars": f"{given},{jar}" if given else str(jar)}


def jvm_loaded(spark: Any) -> bool:
    """Whether the session's JVM has the engine's source class, of this :data:`REVISION`."""
    try:
        jvm = spark.sparkContext._jvm
        loader = jvm.java.lang.Thread.currentThread().getContextClassLoader()
        cls = jvm.java.lang.Class.forName(SOURCE_CLASS, True, loader)
        return int(cls.getField("REVISION").getInt(None)) == REVISION
    except Exception:  # noqa: BLE001 -- Spark Connect, no jar, an old jar: not there
        return False


def _why_not_jvm(spark: Any, options: Mapping[str, str]) -> str | None:
    if not jvm_loaded(spark):
        problem = (
            jar_problem
            or "the session was started without the engine's jar (start it with kdump.spark.session)"
        )
        return problem
    if decoder(options) is not None:
        return "the decoder option needs the Python reader"
    if payload_options(options):
        return "decodeKeys/decodeValues need the Python reader"
    return None


def split_json(split: Split) -> dict[str, Any]:
    return {
        "path": split.path,
        "topic": split.topic,
        "partition": split.partition,
        "segment_base_offset": split.segment_base_offset,
        "start_position": split.start_position,
        "end_position": split.end_position,
        "start_offset": split.start_offset,
        "end_offset": split.end_offset,
        "aborted": [list(t) for t in split.aborted],
        "last_stable_offset": split.last_stable_offset,
        "size": split.size,
    }


def split_from_json(data: Mapping[str, Any]) -> Split:
    from kdump.storage.transaction_index import AbortedTxn

    fields = {k: v for k, v in data.items() if k not in ("python", "pickled")}  # the JVM reader's marks
    fields["aborted"] = tuple(AbortedTxn(*t) for t in fields.get("aborted", ()))
    return Split(**fields)


#: The ReadOptions fields the fallback gets (the JVM engine never reads with a decoder or payload columns).
_FALLBACK_FIELDS = (
    "include_headers",
    "read_committed",
    "include_control",
    "corrupt",
    "report_dir",
    "report_stderr",
    "rows_per_batch",
)


def read_options_json(read: ReadOptions) -> str:
    fields = asdict(read) if read.payload is None else {}
    return json.dumps({k: fields.get(k, getattr(read, k)) for k in _FALLBACK_FIELDS})


def read(
    spark: Any,
    paths: str | Sequence[str],
    options: Mapping[str, str] | None = None,
    *,
    engine: str | None = None,
) -> Any:
    """``spark.read.format("kafka-log").options(**options).load(paths)``, through the JVM engine when it can
    be used (see the module docstring): the same DataFrame, rows and columns.  ``engine`` (or the ``engine``
    option): ``auto``, ``jvm`` or ``python`` (``kafka-log-python``).  The JVM engine plans when called (and
    again for a query with pushed filters), the Python source when each query runs."""
    opts = {str(k): str(v) for k, v in (options or {}).items()}
    chosen = (engine or _get(opts, "engine") or default_engine()).strip().lower()
    opts = {k: v for k, v in opts.items() if k.lower() != "engine"}
    if chosen not in ENGINES:
        raise OptionError(f"engine: expected one of {', '.join(ENGINES)}, not {chosen!r}")
    path_list = [paths] if isinstance(paths, str) else list(paths)
    if chosen != "python":
        why = _why_not_jvm(spark, opts)
        if why is None:
            df = _jvm_read(spark, path_list, opts, chosen == "jvm")
            if df is not None:
                return df
        elif chosen == "jvm":
            print(f"kdump kafka-log: engine=jvm not used: {why}", file=sys.stderr)
    from kdump.spark.source import PYTHON_NAME

    if not _python_registered(spark):
        from kdump.spark import register

        register(spark)
    return spark.read.format(PYTHON_NAME).options(**opts).load(path_list)


def _python_registered(spark: Any) -> bool:
    from kdump.spark.source import PYTHON_NAME

    try:
        manager = spark._jsparkSession.sessionState().dataSourceManager()
        return bool(manager.dataSourceExists(PYTHON_NAME))
    except Exception:  # noqa: BLE001 -- Spark Connect: register (again)
        return False


def _jvm_read(spark: Any, paths: list[str], opts: dict[str, str], verbose: bool) -> Any:
    """The JVM source read by class name, as ``spark.read.format("kafka-log")`` reads it where its jar is
    loaded: it asks the Python planner (``python -m kdump.spark.jvm_planner``) for the schema and the tasks
    now, and again for a query with pushed filters.  None for paths in an object store (the Python source reads
    those without a process per task)."""
    from kdump.storage.locations import is_url

    given = {k: v for k, v in opts.items() if k.lower() not in ("path", "paths")}
    urls = [p for p in paths if is_url(p)]
    if urls:
        if verbose:
            print(f"kdump kafka-log: engine=jvm not used: {urls[0]} is in an object store", file=sys.stderr)
        return None
    reader = spark.read.format(SOURCE_CLASS).options(**given)
    # the planner and the readers run this interpreter (PySpark's workers' when set)
    reader = reader.option("python", worker_python()).option("pythonPath", kdump_root())
    log = os.environ.get("KDUMP_FALLBACK_LOG")
    if log:  # passed on: the JVM may have been started before it was set
        reader = reader.option("fallbackLog", log)
    codecs = os.environ.get("KDUMP_JVM_CODECS")
    if codecs is not None:
        reader = reader.option("codecs", codecs)
    return reader.load(paths)


__all__ = [
    "ENGINES",
    "REVISION",
    "SOURCE_CLASS",
    "default_engine",
    "jar_path",
    "jvm_loaded",
    "read",
    "session_conf",
    "split_from_json",
    "split_json",
]
