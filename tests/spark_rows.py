"""Rows of a ``kdump spark export --format json`` in the layout of ``tests.test_spark_storage.arrow_rows`` (one
helper for every test that holds an export to a read without Spark)."""

from __future__ import annotations

import base64
import os
from datetime import datetime


def _binary(value: str | None) -> bytes | None:
    return None if value is None else base64.b64decode(value)


def json_row(row: dict, include_headers: bool = False, *, segment_offset: bool = False) -> tuple:
    """A row of a JSON export (binary columns base64, the timestamp ISO text, null fields left out) in
    ``arrow_rows``' layout; with ``segment_offset``, the segment column (a path or a URL) as its start offset
    (the 20 digits its name begins with, in Kafka's names, RemoteLogSegmentFileset's and Aiven's)."""
    from kdump.spark.schema import column_names

    values = dict(row)
    values["key"], values["value"] = _binary(row.get("key")), _binary(row.get("value"))
    values["timestamp"] = round(datetime.fromisoformat(row["timestamp"]).timestamp() * 1000)
    if include_headers and row.get("headers") is not None:
        values["headers"] = [(h.get("key"), _binary(h.get("value"))) for h in row["headers"]]
    if segment_offset:
        values["segment"] = int(os.path.basename(row["segment"])[:20])
    return tuple(values.get(name) for name in column_names(include_headers))
