"""Automatic registration of kdump's ``kafka-log`` data source.

PySpark (4.0+) looks for top-level modules named ``pyspark_*`` that expose ``DefaultSource`` and registers
them in every session, so with kdump installed ``spark.read.format("kafka-log")`` works without calling
``kdump.spark.register``.  In a session :func:`kdump.spark.session` started with the JVM engine's jar
(``KDUMP_SPARK_JVM_SOURCE`` set in its environment) ``kafka-log`` is that engine's name, and this Python source
registers as ``kafka-log-python``.
"""

import os

from kdump.spark.source import NAME, PYTHON_NAME, KafkaLogDataSource


class DefaultSource(KafkaLogDataSource):
    @classmethod
    def name(cls) -> str:
        return PYTHON_NAME if os.environ.get("KDUMP_SPARK_JVM_SOURCE") == "1" else NAME


__all__ = ["DefaultSource"]
