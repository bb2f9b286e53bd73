"""The PySpark Python data source ``kafka-log`` (PySpark >= 4.1, pyarrow).

``spark.read.format("kafka-log").load(path_or_paths)`` after :func:`kdump.spark.register`.  The driver plans
the splits and packs them into tasks (:mod:`kdump.spark.planning`); each task reads its splits with
:func:`kdump.spark.reader.read_split` and hands Spark Arrow record batches.  Filters are not pushed down (PySpark 4.3's pushdown is off by default and
wrong when on); use the options instead (topics, partitions, offset and time ranges), which prune whole
segments before any task starts.
"""

from __future__ import annotations

import sys
from collections.abc import Iterator, Sequence
from typing import Any

from pyspark.sql.datasource import DataSource, DataSourceReader, InputPartition

from kdump.spark.options import ReadOptions, decoder, include_headers, parse_options, payload_options
from kdump.spark.planning import Split, plan
from kdump.spark.schema import spark_schema

NAME = "kafka-log"


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

        for split in partition.value:
            yield from read_split(split, self.selection.read)


class KafkaLogDataSource(DataSource):
    """Kafka log directories as a table: spark-sql-kafka's columns plus forensic ones."""

    @classmethod
    def name(cls) -> str:
        return NAME

    def schema(self) -> Any:
        options = dict(self.options)
        read = ReadOptions(**payload_options(options))
        return spark_schema(
            include_headers(options), decoder(options) is not None, read.payload_columns, read.value_kind
        )

    def reader(self, schema: Any) -> DataSourceReader:
        return KafkaLogReader(self.options)
