"""``python -m kdump.spark.jvm_planner``: the JVM engine's plan of a read narrowed by Spark's pushed filters.

The JVM source (``KafkaLogSource.LogScanBuilder.pushFilters``) learns a query's filters only when Spark plans
that query, after :func:`kdump.spark.engine.read` has planned the read without them.  It then starts this on the
driver: standard input, ``{"paths": [...], "options": {...}, "filters": [...]}`` (the read's paths and options,
and the filters on topic, partition, offset and timestamp as ``{"kind": "GreaterThanOrEqual", "column":
"offset", "values": [100]}``, a timestamp as ``{"micros": N}``); standard output, the tasks as
:func:`kdump.spark.engine.read` passes them.  The narrowing is the Python source's own
(:func:`kdump.spark.options.push_filters` and :func:`kdump.spark.planning.plan`): one planner for both engines.
The planner's problems go to standard error, as a read's do.
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


def main() -> int:
    from kdump.spark.engine import split_json
    from kdump.spark.options import parse_options, push_filters
    from kdump.spark.planning import plan

    request = json.loads(sys.stdin.buffer.read())
    selection = parse_options({**request["options"], "paths": json.dumps(request["paths"])})
    selection = replace(selection, pushed=push_filters(filter_objects(request["filters"]), selection.pushed))
    result = plan(selection)
    for problem in result.problems:
        print(f"kdump kafka-log: {problem}", file=sys.stderr)
    tasks = [[split_json(s) for s in task] for task in result.tasks]
    sys.stdout.write(json.dumps(tasks, separators=(",", ":")))
    sys.stdout.flush()
    return 0


if __name__ == "__main__":
    sys.exit(main())
