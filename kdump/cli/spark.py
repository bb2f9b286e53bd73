"""``kdump spark``: export and verify whole log directories with Apache Spark (``pip install 'kdump[spark]'``).

Only click and the standard library are imported here; PySpark is imported when a command runs.
"""

from __future__ import annotations

import os
import re
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from typing import TextIO

import click

from kdump.cli.remote_options import RemoteArgs, remote_options

_MASTER_HELP = (
    "Spark master URL: local[*] (default: all cores of this machine), local[N], spark://HOST:7077, yarn, ... "
    "Under spark-submit, the master spark-submit was given."
)


def _check_spark() -> None:
    try:
        import pyarrow  # noqa: F401
        import pyspark  # noqa: F401
    except ImportError as e:
        raise click.ClickException(
            f"{e.name} is not installed: pip install 'kdump[spark]' (and Java 17+ for Spark)"
        ) from None


def make_parents(output: str) -> None:
    """The one rule for output paths (as ``salvage --out``): missing parent directories are created; a parent
    that cannot be (a plain file in the way, no permission) is a usage error."""
    from kdump.cli import make_parents as make

    try:
        make(output)
    except OSError as e:
        raise click.UsageError(str(e)) from None


def _preflight(
    paths: tuple[str, ...],
    *,
    output: str | None = None,
    overwrite: bool = False,
    topics: str | None = None,
    topic_pattern: str | None = None,
) -> None:
    """What can be checked before a JVM starts, as usage errors (status 2): the output directory, the paths,
    the topics asked for, and a working Java."""
    from kdump.spark.planning import partition_dirs
    from kdump.storage.local_log import no_kafka_data
    from kdump.storage.naming import parse_partition_dir

    if output is not None:
        if os.path.exists(output) and not overwrite:
            raise click.UsageError(
                f"{output} exists; name a new directory, or pass --overwrite to replace it"
            )
        parent = os.path.dirname(os.path.abspath(output))
        while not os.path.exists(parent):  # created after the checks (make_parents); what is in the way now
            parent = os.path.dirname(parent)
        if not os.path.isdir(parent):
            raise click.UsageError(f"{parent}: not a directory (where --output {output} would go)")
    try:
        directories = partition_dirs(paths)
    except FileNotFoundError as e:
        raise click.UsageError(str(e)) from None
    if not directories:
        raise click.UsageError(no_kafka_data(", ".join(paths)))
    if topics is not None or topic_pattern is not None:
        names = sorted(
            {
                p.topic
                for p in (parse_partition_dir(os.path.basename(d)) for d in directories)
                if p is not None
            }
        )
        wanted = None if topics is None else {t.strip() for t in topics.split(",") if t.strip()}
        try:
            pattern = None if topic_pattern is None else re.compile(topic_pattern)
        except re.error as e:
            raise click.UsageError(f"--topic-pattern: not a regular expression ({e})") from None
        matching = [
            n
            for n in names
            if (wanted is None or n in wanted) and (pattern is None or pattern.fullmatch(n) is not None)
        ]
        if not matching:
            asked = " and ".join(
                x
                for x in (
                    None if topics is None else f"--topics {topics}",
                    None if topic_pattern is None else f"--topic-pattern {topic_pattern}",
                )
                if x
            )
            shown = ", ".join(names[:20]) + (", ..." if len(names) > 20 else "")
            raise click.UsageError(f"no topic matches {asked}; the topics here: {shown or 'none'}")
    if not os.environ.get("PYSPARK_GATEWAY_PORT"):  # under spark-submit the JVM is already running
        _check_java()


def _check_java() -> None:
    """Spark needs Java 17 or later: the ``java`` of ``JAVA_HOME``, else the one on ``PATH``."""
    import shutil
    import subprocess

    home = os.environ.get("JAVA_HOME")
    java = os.path.join(home, "bin", "java") if home else shutil.which("java")
    where = f"JAVA_HOME={home}" if home else "PATH"
    if not java or not os.access(java, os.X_OK):
        raise click.UsageError(f"no Java found (looked in {where}); Spark needs Java 17 or later")
    try:
        result = subprocess.run([java, "-version"], capture_output=True, text=True, timeout=120)
    except (OSError, subprocess.TimeoutExpired) as e:
        raise click.UsageError(f"{java} does not run ({e}); Spark needs Java 17 or later") from None
    text = (result.stderr or result.stdout).strip()
    if result.returncode != 0:
        first = text.splitlines()[0] if text else f"exit status {result.returncode}"
        raise click.UsageError(f"{java} -version fails ({first}); Spark needs a working Java 17 or later")
    m = re.search(r'version "(\d+)(?:\.(\d+))?', text)
    if m:
        major = int(m[1]) if m[1] != "1" else int(m[2] or 0)
        if major < 17:
            raise click.UsageError(f"{java} is Java {major}; Spark needs Java 17 or later (set JAVA_HOME)")


@contextmanager
def _jvm_log(verbose: bool) -> Iterator[TextIO]:
    """Without ``--verbose``, the JVM's start-up lines and log (it writes to the process's standard error,
    file descriptor 2) go to a discarded temporary file; kdump's own messages are printed after.  Yields the
    real standard error (where the progress display goes)."""
    if verbose:
        yield sys.stderr
        return
    import tempfile

    sys.stderr.flush()
    saved = os.dup(2)
    with tempfile.TemporaryFile() as log, os.fdopen(os.dup(saved), "w", encoding="utf-8") as terminal:
        os.dup2(log.fileno(), 2)
        try:
            yield terminal
        finally:
            sys.stderr.flush()
            os.dup2(saved, 2)
            os.close(saved)


def _default_master(master: str | None) -> str | None:
    if master is not None:
        return master
    import os

    # under spark-submit the master is already set
    return None if os.environ.get("PYSPARK_GATEWAY_PORT") else "local[*]"


@click.group("spark")
def command() -> None:
    """Read Kafka log directories with Apache Spark: export records, verify segments at scale.

    The same storage core as `kdump files`, as the PySpark data source `kafka-log`; see man kdump-spark.
    """


@command.command("export")
@click.argument("paths", nargs=-1, required=True)
@click.option(
    "--output", "-o", required=True, help="Directory to write (it must not exist, unless --overwrite)."
)
@click.option(
    "--format",
    "fmt",
    type=click.Choice(["parquet", "json"]),
    default="parquet",
    show_default=True,
    help="Output format.",
)
@click.option(
    "--isolation-level",
    type=click.Choice(["read_uncommitted", "read_committed"]),
    default="read_uncommitted",
    show_default=True,
    help="read_committed: only what a read_committed consumer returns.",
)
@click.option("--include-headers", is_flag=True, help="Add the headers column.")
@click.option(
    "--include-control",
    is_flag=True,
    help="Also export control records (transaction markers), which no consumer returns.",
)
@click.option(
    "--decoder",
    type=click.Choice(
        ["offsets", "transaction-log", "cluster-metadata", "share-group-state", "remote-log-metadata"]
    ),
    metavar="NAME",
    help="Add the decoded column: keys and values decoded by this internal-topic decoder, as JSON: "
    "offsets, transaction-log, cluster-metadata, share-group-state or remote-log-metadata.",
)
@click.option("--topics", help="Comma-separated topics to export (default: all).")
@click.option("--topic-pattern", help="Regular expression a topic must match in full.")
@click.option("--partitions", help="Partitions to export, e.g. 0,2,5-7.")
@click.option(
    "--on-corrupt",
    type=click.Choice(["skip", "keep", "fail"]),
    default="skip",
    show_default=True,
    help="A damaged batch: skip and report it, keep CRC failures that decode, or fail.",
)
@click.option(
    "--option",
    "extra",
    multiple=True,
    metavar="KEY=VALUE",
    help="Any other kafka-log option (startingOffsets, endingTimestamp, ...); repeatable.",
)
@remote_options(
    "Remote storage of tiered partitions: each is read as one log, the segments __remote_log_metadata says were "
    "copied (in --layout's layout, as `kdump tiered`), read by the tasks straight from there, then its local "
    "ones; a local path or a URL.",
)
@click.option("--overwrite", is_flag=True, help="Replace the output directory if it exists.")
@click.option(
    "--no-progress", is_flag=True, help="Never show the progress display (on a terminal: stages, partitions)."
)
@click.option("--master", help=_MASTER_HELP)
@click.option("-v", "--verbose", is_flag=True, help="Show Spark's own log on standard error.")
def export_command(
    paths: tuple[str, ...],
    output: str,
    fmt: str,
    isolation_level: str,
    include_headers: bool,
    include_control: bool,
    decoder: str | None,
    topics: str | None,
    topic_pattern: str | None,
    partitions: str | None,
    on_corrupt: str,
    extra: tuple[str, ...],
    remote_args: RemoteArgs,
    overwrite: bool,
    no_progress: bool,
    master: str | None,
    verbose: bool,
) -> None:
    """Write the records under PATH... (log directories, partition directories or globs) as Parquet or JSON.

    Columns: spark-sql-kafka's key, value, topic, partition, offset, timestamp, timestampType (and headers),
    then the forensic columns. Damaged batches are listed after the run. As a consumer sees them: no control
    records unless --include-control.
    """
    # the usage errors of the commands (options without --remote-root, a bad template, a key file that is not a
    # key); the source takes the options again, and only its planner, on the driver, loads the keys
    remote_args.checks()
    _preflight(paths, output=output, overwrite=overwrite, topics=topics, topic_pattern=topic_pattern)
    _check_spark()
    make_parents(output)
    from kdump.storage import locations

    options = {
        "isolation.level": isolation_level,
        "includeHeaders": "true" if include_headers else "false",
        "includeControlRecords": "true" if include_control else "false",
        "corruptBatches": on_corrupt,
    }
    for name, value in (
        ("topics", topics),
        ("topicPattern", topic_pattern),
        ("partitions", partitions),
        ("decoder", decoder),
    ):
        if value is not None:
            options[name] = value
    options.update(remote_args.source_options({"directory": locations.abspath, "key": _key_spec}))
    for item in extra:
        key, sep, value = item.partition("=")
        if not sep or not key:
            raise click.BadParameter(f"expected KEY=VALUE, not {item!r}", param_hint="--option")
        options[key] = value
    from kdump.spark.jobs import export

    try:
        with _jvm_log(verbose) as terminal:
            export(
                list(paths),
                output,
                fmt=fmt,
                options=options,
                master=_default_master(master),
                overwrite=overwrite,
                out=sys.stdout,
                progress=terminal if not no_progress and terminal.isatty() else None,
            )
    except Exception as e:  # a Spark failure: one line, not a JVM stack trace
        raise click.ClickException(_first_line(e)) from None


@command.command("verify")
@click.argument("paths", nargs=-1, required=True)
@click.option("--output", "-o", help="Also write the report as JSON lines (one per problem, then a summary).")
@click.option("--deep", is_flag=True, help="Also decode every record of every batch.")
@click.option("--gaps", is_flag=True, help="Also report offset gaps (normal in compacted topics).")
@remote_options(
    "Also check tiered partitions' remote segments under this root (as `kdump verify --remote-root`): each "
    "remote segment is one Spark task reading its objects straight from there; a local path or a URL.",
)
@click.option("--master", help=_MASTER_HELP)
@click.option("-v", "--verbose", is_flag=True, help="Show Spark's own log on standard error.")
@click.option(
    "--no-progress", is_flag=True, help="Never show the progress display (on a terminal: stages, partitions)."
)
def verify_command(
    paths: tuple[str, ...],
    output: str | None,
    deep: bool,
    gaps: bool,
    remote_args: RemoteArgs,
    master: str | None,
    verbose: bool,
    no_progress: bool,
) -> None:
    """Run `kdump verify` on Spark: the same checks with the same code, one task per segment.

    Prints what `kdump verify` prints; exits 0 when nothing was found, 1 when problems were found, 2 on usage
    errors. With --remote-root, tiered partitions are checked as one log, remote segments included, with the
    remote checks of `kdump verify --remote-root`.
    """
    remote = remote_args.checks()
    _preflight(paths)
    _check_spark()
    if output:
        make_parents(output)
    from kdump.spark.jobs import verify

    report = open(output, "w", encoding="utf-8") if output else None  # noqa: SIM115
    try:
        with _jvm_log(verbose) as terminal:
            found = verify(
                list(paths),
                master=_default_master(master),
                deep=deep,
                gaps=gaps,
                remote=remote,
                out=sys.stdout,
                report=report,
                progress=terminal if not no_progress and terminal.isatty() else None,
            )
    except ValueError as e:  # no Kafka data below a path, or a file that is not a segment file
        raise click.UsageError(str(e)) from None
    except Exception as e:
        raise click.ClickException(_first_line(e)) from None
    finally:
        if report is not None:
            report.close()
    from kdump.exit_status import ExitStatus

    sys.exit(ExitStatus.PROBLEMS if found else ExitStatus.OK)


def _key_spec(spec: str) -> str:
    """An ``--aiven-private-key`` ``[ID=]PEM`` with the PEM path made absolute (the planner may run elsewhere)."""
    key_id, sep, path = spec.partition("=")
    if not sep or "/" in key_id or not key_id:
        return os.path.abspath(spec)
    return f"{key_id}={os.path.abspath(path)}"


def _first_line(e: Exception) -> str:
    """The informative line of a Spark failure: the Python error raised in a task or while planning (e.g.
    ``kdump.spark.reader.CorruptBatchError: crc: ...``) rather than Py4J's ``An error occurred while calling``."""
    text = str(e).strip() or type(e).__name__
    lines = [line.strip() for line in text.splitlines() if line.strip()]
    for line in reversed(lines):
        if re.match(r"^[A-Za-z_][\w.]*(Error|Exception): ", line) and "Py4J" not in line:
            return line
    return lines[0] if lines else text
