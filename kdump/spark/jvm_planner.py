"""``python -m kdump.spark.jvm_planner``: the JVM engine's schema and plan, from the Python planner.

The JVM source (``KafkaLogSource``, read as ``spark.read.format("kafka-log")`` or through
:func:`kdump.spark.engine.read`) starts this on the driver when a DataFrame is loaded (its schema, and the plan
a query without pushed filters reads), and again for a query with filters Spark pushed down
(``LogScanBuilder.pushFilters``).  Standard input: ``{"options": {...}, "filters": [...]}`` (Spark's options,
``path`` or ``paths`` among them; the filters on topic, partition, offset and timestamp as ``{"kind":
"GreaterThanOrEqual", "column": "offset", "values": [100]}``, a timestamp as ``{"micros": N}``); standard
output: :func:`source_read`'s answer.  The narrowing is the Python source's own
(:func:`kdump.spark.options.push_filters` and :func:`kdump.spark.planning.plan`): one planner for both engines.
The planner's problems go to standard error, as a read's do; a bad option is one line there and status 2.
"""

from __future__ import annotations

import datetime as dt
import json
import sys
from dataclasses import replace
from typing import Any

_EPOCH = dt.datetime(1970, 1, 1, tzinfo=dt.UTC)


def filter_objects(described: list[dict[str, Any]]) -> list[Any]:
    """The filters as objects :func:`kdump.spark.options.push_filters` reads (it matches PySpark's filter
    classes by name: ``attribute``, a tuple, and ``value``); a timestamp as an aware datetime, a filter whose
    time Python cannot hold left out (Spark applies every filter anyway)."""
    out = []
    for d in described:
        values: list[Any] = []
        for v in d["values"]:
            if isinstance(v, dict):
                try:
                    values.append(_EPOCH + dt.timedelta(microseconds=int(v["micros"])))
                except OverflowError:
                    break
            else:
                values.append(v)
        else:
            kind = str(d["kind"])
            value = tuple(values) if kind == "In" else values[0]
            out.append(type(kind, (), {"attribute": (str(d["column"]),), "value": value})())
    return out


def _split(split: Any, python: bool) -> dict[str, Any]:
    """A split as the JVM source reads it; ``python`` (and, when JSON cannot hold it, ``pickled``: the split
    itself) when the JVM hands it whole to the Python reader."""
    from kdump.spark.engine import split_json
    from kdump.storage.locations import is_url

    out = split_json(split)
    elsewhere = split.source is not None or is_url(split.path)  # (not a local file)
    if python or elsewhere:
        out["python"] = True
    if elsewhere:
        out["pickled"] = _pickled(split)
    return out


def _pickled(value: Any) -> str:
    import base64
    import pickle

    return base64.b64encode(pickle.dumps(value, protocol=pickle.HIGHEST_PROTOCOL)).decode("ascii")


def source_read(request: dict[str, Any]) -> dict[str, Any]:
    """The JVM source's read of ``{"options": {...}, "filters": [...]}``: the schema (Spark's JSON), the
    readers' settings and the tasks, planned with the filters.  ``options`` are Spark's (``path`` or ``paths``
    among them).  A read the JVM does not decode (``decoder``, ``decodeKeys``/``decodeValues``) has every split
    marked ``python``; a split in an object store too."""
    from kdump.spark.engine import kdump_root, read_options_json, worker_python
    from kdump.spark.options import decoder, parse_options, payload_options, push_filters
    from kdump.spark.planning import plan
    from kdump.spark.schema import source_schema_json

    options = {str(k): str(v) for k, v in request["options"].items()}
    selection = parse_options(options)
    python_only = decoder(options) is not None or bool(payload_options(options))
    read = selection.read
    settings: dict[str, Any] = {
        "includeHeaders": read.include_headers,
        "readCommitted": read.read_committed,
        "includeControl": read.include_control,
        "readOptions": read_options_json(read),
        "pythonOnly": python_only,
        # the executors' Python reader (what kdump.spark.engine.read passes as options)
        "python": worker_python(),
        "pythonPath": kdump_root(),
    }
    if python_only:
        settings["pickledOptions"] = _pickled(read)
    selection = replace(
        selection, pushed=push_filters(filter_objects(request.get("filters") or []), selection.pushed)
    )
    result = plan(selection)
    for problem in result.problems:
        print(f"kdump kafka-log: {problem}", file=sys.stderr)
    tasks = [[_split(s, python_only) for s in task] for task in result.tasks]
    return {"schema": source_schema_json(options), "settings": settings, "tasks": tasks}


def main() -> int:
    from kdump.spark.options import OptionError

    try:
        answer = source_read(json.loads(sys.stdin.buffer.read()))
    except OptionError as e:
        print(f"kafka-log: {e}", file=sys.stderr)
        return 2
    sys.stdout.write(json.dumps(answer, separators=(",", ":")))
    sys.stdout.flush()
    return 0


if __name__ == "__main__":
    sys.exit(main())
