"""``kdump spark``: export and verify whole log directories with Apache Spark (``pip install 'kdump[spark]'``).

Only click and the standard library are imported here; PySpark is imported when a command runs.
"""

from __future__ import annotations

import re
import sys

import click

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
    "--decoder",
    type=click.Choice(
        ["offsets", "transaction-log", "cluster-metadata", "share-group-state", "remote-log-metadata"]
    ),
    help="Add the decoded column: keys and values decoded by this internal-topic decoder, as JSON.",
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
@click.option("--overwrite", is_flag=True, help="Replace the output directory if it exists.")
@click.option("--master", help=_MASTER_HELP)
def export_command(
    paths: tuple[str, ...],
    output: str,
    fmt: str,
    isolation_level: str,
    include_headers: bool,
    decoder: str | None,
    topics: str | None,
    topic_pattern: str | None,
    partitions: str | None,
    on_corrupt: str,
    extra: tuple[str, ...],
    overwrite: bool,
    master: str | None,
) -> None:
    """Write the records under PATH... (log directories, partition directories or globs) as Parquet or JSON.

    Columns: spark-sql-kafka's key, value, topic, partition, offset, timestamp, timestampType (and headers),
    then the forensic columns. Damaged batches are listed after the run.
    """
    _check_spark()
    options = {
        "isolation.level": isolation_level,
        "includeHeaders": "true" if include_headers else "false",
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
    for item in extra:
        key, sep, value = item.partition("=")
        if not sep or not key:
            raise click.BadParameter(f"expected KEY=VALUE, not {item!r}", param_hint="--option")
        options[key] = value
    from kdump.spark.jobs import export

    try:
        export(
            list(paths),
            output,
            fmt=fmt,
            options=options,
            master=_default_master(master),
            overwrite=overwrite,
            out=sys.stdout,
        )
    except Exception as e:  # a Spark failure: one line, not a JVM stack trace
        raise click.ClickException(_first_line(e)) from None


@command.command("verify")
@click.argument("paths", nargs=-1, required=True)
@click.option("--output", "-o", help="Also write the report as JSON lines (one per problem, then a summary).")
@click.option("--deep", is_flag=True, help="Also decode every record of every batch.")
@click.option("--gaps", is_flag=True, help="Also report offset gaps (normal in compacted topics).")
@click.option("--master", help=_MASTER_HELP)
def verify_command(
    paths: tuple[str, ...], output: str | None, deep: bool, gaps: bool, master: str | None
) -> None:
    """Run `kdump verify` on Spark: the same checks with the same code, one task per segment.

    Prints what `kdump verify` prints; exits 0 when nothing was found, 1 when problems were found, 2 on usage
    errors.
    """
    _check_spark()
    from kdump.spark.jobs import verify

    report = open(output, "w", encoding="utf-8") if output else None  # noqa: SIM115
    try:
        found = verify(
            list(paths), master=_default_master(master), deep=deep, gaps=gaps, out=sys.stdout, report=report
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


def _first_line(e: Exception) -> str:
    """The informative line of a Spark failure: the Python error raised in a task or while planning (e.g.
    ``kdump.spark.reader.CorruptBatchError: crc: ...``) rather than Py4J's ``An error occurred while calling``."""
    text = str(e).strip() or type(e).__name__
    lines = [line.strip() for line in text.splitlines() if line.strip()]
    for line in reversed(lines):
        if re.match(r"^[A-Za-z_][\w.]*(Error|Exception): ", line) and "Py4J" not in line:
            return line
    return lines[0] if lines else text
