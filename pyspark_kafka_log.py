"""Automatic registration of kdump's ``kafka-log`` data source.

PySpark (4.0+) looks for top-level modules named ``pyspark_*`` that expose ``DefaultSource`` and registers
them in every session, so with kdump installed ``spark.read.format("kafka-log")`` works without calling
``kdump.spark.register``.
"""

from kdump.spark.source import KafkaLogDataSource as DefaultSource

__all__ = ["DefaultSource"]
