"""Kafka's ``TimestampType``: which clock a batch's timestamps come from."""

from __future__ import annotations

NO_TIMESTAMP_TYPE = "NoTimestampType"
CREATE_TIME = "CreateTime"
LOG_APPEND_TIME = "LogAppendTime"

#: Timestamp of records that have none (magic 0), Kafka's ``RecordBatch.NO_TIMESTAMP``.
NO_TIMESTAMP = -1
