"""The PySpark Python data source ``kafka-log`` (PySpark >= 4.1, pyarrow).

``spark.read.format("kafka-log").load(path_or_paths)`` after :func:`kdump.spark.register`.  The driver plans
the splits and packs them into tasks (:mod:`kdump.spark.planning`); each task reads its splits with
:func:`kdump.spark.reader.read_split` and hands Spark Arrow record batches.
Filters on ``topic``, ``partition``, ``offset`` and ``timestamp`` (from below) are pushed down with
``pushFilters=true`` when PySpark's filter pushdown is on (:class:`KafkaLogFilteringReader`, which says why it
is opt-in); the options (topics, partitions, offset and time ranges) do the same without it.
"""

from __future__ import annotations

import sys
from collections.abc import Iterator, Sequence
from dataclasses import replace
from typing import Any

from pyspark.sql.datasource import DataSource, DataSourceReader, InputPartition

from kdump.spark.options import (
    parse_options,
    push_filters,
    push_filters_wanted,
)
from kdump.spark.planning import Split, plan
from kdump.spark.schema import source_schema

NAME = "kafka-log"
#: The Python source's own name: ``kafka-log`` is the JVM engine's where its jar is loaded
#: (:func:`kdump.spark.register`).
PYTHON_NAME = "kafka-log-python"


class SplitPartition(InputPartition):
    """One Spark task: ``value`` is a tuple of :class:`kdump.spark.planning.Split` read one after the other
    (small segments are packed together, see :func:`kdump.spark.planning.pack`), empty for an empty read."""

    def __init__(self, splits: tuple[Split, ...]) -> None:
        super().__init__(splits)


class KafkaLogReader(DataSourceReader):
    def __init__(self, options: Any) -> None:
        self.selection = parse_options(dict(options))

    def partitions(self) -> Sequence[InputPartition]:
        result = plan(self.selection)
        for problem in result.problems:
            print(f"kdump kafka-log: {problem}", file=sys.stderr)
        if not result.tasks:
            return [SplitPartition(())]
        return [SplitPartition(task) for task in result.tasks]

    def read(self, partition: InputPartition) -> Iterator[Any]:
        from kdump.spark.reader import read_split

        columns = self.selection.read.columns
        for split in partition.value:
            for batch in read_split(split, self.selection.read):
                yield batch if columns is None else batch.select(list(columns))


class KafkaLogFilteringReader(KafkaLogReader):
    """The reader when ``pushFilters=true`` and Spark pushes filters down
    (``spark.sql.python.filterPushdown.enabled``, which :func:`kdump.spark.session` sets): filters on
    ``topic``, ``partition``, ``offset`` and a lower bound on ``timestamp`` narrow the plan
    (:func:`kdump.spark.options.push_filters`): partitions and segments left out, a partition started at the
    offset index's position for its first wanted offset.  Every filter is handed back to Spark, which applies
    it again to the rows read, so the rows of that query are exactly those of a read without pushdown.

    Opt-in because of PySpark 4.3 itself: ``PythonScanBuilder.pushFilters`` stores the narrowed plan in the
    DataFrame's ``PythonDataSourceV2`` (``setReadInfo``) and ``getOrCreateReadInfo`` hands it to every later
    query of the same DataFrame that has no filter Spark can push (or runs with pushdown off): such a query
    would read only what the earlier filter wanted (seen: ``df.filter(timestamp >= t).count()`` then
    ``df.filter(offset >= 100).count()`` with pushdown off gave 245 rows, not 746).  With pushFilters, load
    a DataFrame for each query."""

    def pushFilters(self, filters: list[Any]) -> Iterator[Any]:  # noqa: N802 -- PySpark's name
        self.selection = replace(self.selection, pushed=push_filters(filters, self.selection.pushed))
        yield from filters


def _pushing_filters() -> bool:
    """Whether :meth:`KafkaLogDataSource.reader` is called by PySpark's filter-pushdown worker
    (``pyspark/sql/worker/data_source_pushdown_filters.py``, run only when pushdown is enabled and there are
    filters).  PySpark refuses a reader that implements ``pushFilters`` when pushdown is disabled
    (DATA_SOURCE_PUSHDOWN_DISABLED), and the data source is not told the setting: the filtering reader is
    given to that worker only, the plain one (the same reads, nothing pushed) otherwise."""
    frame = sys._getframe(1)
    while frame is not None:
        if frame.f_code.co_filename.endswith("data_source_pushdown_filters.py"):
            return True
        frame = frame.f_back  # type: ignore[assignment]
    return False


class KafkaLogDataSource(DataSource):
    """Kafka log directories as a table: spark-sql-kafka's columns plus forensic ones."""

    #: ``pushFilters`` when the option is not given: off, because of PySpark 4.3 (:class:`KafkaLogFilteringReader`)
    push_filters_default = False

    @classmethod
    def name(cls) -> str:
        return NAME

    def schema(self) -> Any:
        return source_schema(dict(self.options))

    def reader(self, schema: Any) -> DataSourceReader:
        if push_filters_wanted(dict(self.options), self.push_filters_default) and _pushing_filters():
            return KafkaLogFilteringReader(self.options)
        return KafkaLogReader(self.options)


class KafkaLogDataSourcePushing(KafkaLogDataSource):
    """The same source with ``pushFilters`` on unless the option says false: what :func:`kdump.spark.register`
    registers on a Spark whose ``PythonScanBuilder`` keeps a pushed-down plan with its own scan
    (:func:`kdump.spark.pushdown_plan_per_scan`), where the reuse described in :class:`KafkaLogFilteringReader`
    cannot happen."""

    push_filters_default = True


class KafkaLogPythonDataSource(KafkaLogDataSource):
    """The Python source under :data:`PYTHON_NAME` (``kdump.spark.read(..., engine="python")``)."""

    @classmethod
    def name(cls) -> str:
        return PYTHON_NAME


class KafkaLogPythonDataSourcePushing(KafkaLogDataSourcePushing):
    """:class:`KafkaLogDataSourcePushing` under :data:`PYTHON_NAME`."""

    @classmethod
    def name(cls) -> str:
        return PYTHON_NAME
