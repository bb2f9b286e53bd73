"""``python -m kdump.spark.fallback``: the Python reader for the part of a split the JVM engine declines.

The JVM engine (:mod:`kdump.spark.engine`) starts this on the executor when it meets a batch it does not read
(legacy magic, a CRC mismatch, a batch that does not decode, a torn tail, ...).  Standard input: one JSON
object, ``{"split": <split>, "start": <byte position>, "options": <ReadOptions fields>, "columns": [...]}``;
standard output: an Arrow IPC stream of :func:`kdump.spark.reader.read_split`'s batches of the split from that
position on, with just those columns; or ``{"splits": [...], ...}``: those splits whole, each from its own
start (a read the JVM does not decode, an object in a store; a split the planner pickled as ``pickled``, the
read's options as ``pickled_options``).  Reports go where the Python source's go (standard error, the report
directory); with ``KDUMP_FALLBACK_LOG`` set, one JSON line per split is appended to that file.  Under
``corruptBatches=fail`` the error is one line on standard error and status 1, which fails the task with it.
"""

from __future__ import annotations

import json
import os
import sys
from dataclasses import replace
from typing import Any


def _unpickled(text: str) -> Any:
    import base64
    import pickle

    return pickle.loads(base64.b64decode(text))  # noqa: S301 -- written by kdump's own planner on the driver


def main() -> int:
    import pyarrow as pa

    from kdump.spark.engine import split_from_json
    from kdump.spark.options import ReadOptions
    from kdump.spark.reader import CorruptBatchError, read_split
    from kdump.spark.schema import arrow_schema

    request = json.loads(sys.stdin.buffer.read())
    if "splits" in request:  # whole splits: each from its own start
        splits = [
            _unpickled(s["pickled"]) if "pickled" in s else split_from_json(s) for s in request["splits"]
        ]
    else:
        splits = [replace(split_from_json(request["split"]), start_position=int(request["start"]))]
    log = os.environ.get("KDUMP_FALLBACK_LOG")
    if log:  # what the tests look at: which splits the JVM engine handed over, from where
        with open(log, "a", encoding="utf-8") as f:
            for split in splits:
                f.write(json.dumps({"path": split.path, "start": split.start_position}) + "\n")
    pickled = request.get("pickled_options")
    options = _unpickled(pickled) if pickled else ReadOptions(**request["options"])
    columns = list(request["columns"])
    full = arrow_schema(
        options.include_headers, options.decoder is not None, options.payload_columns, options.value_kind
    )
    schema = pa.schema([full.field(c) for c in columns])
    out = sys.stdout.buffer
    try:
        with pa.ipc.new_stream(out, schema) as writer:
            for split in splits:
                for batch in read_split(split, options):
                    writer.write_batch(batch.select(columns))
    except CorruptBatchError as e:  # corruptBatches=fail: one line, which the JVM reader puts in its error
        print(f"kafka-log: {e.describe()}", file=sys.stderr)
        return 1
    out.flush()
    return 0


if __name__ == "__main__":
    sys.exit(main())
