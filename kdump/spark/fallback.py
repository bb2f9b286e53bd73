"""``python -m kdump.spark.fallback``: the Python reader for the part of a split the JVM engine declines.

The JVM engine (:mod:`kdump.spark.engine`) starts this on the executor when it meets a batch it does not read
(legacy magic, a CRC mismatch, a batch that does not decode, a torn tail, ...).  Standard input: one JSON
object, ``{"split": <split>, "start": <byte position>, "options": <ReadOptions fields>, "columns": [...]}``;
standard output: an Arrow IPC stream of :func:`kdump.spark.reader.read_split`'s batches of the split from that
position on, with just those columns.  Reports go where the Python source's go (standard error, the report
directory); with ``KDUMP_FALLBACK_LOG`` set, one JSON line per start is appended to that file.  Under
``corruptBatches=fail`` the error ends this process with status 1, which fails the task.
"""

from __future__ import annotations

import json
import os
import sys
from dataclasses import replace


def main() -> int:
    import pyarrow as pa

    from kdump.spark.engine import split_from_json
    from kdump.spark.options import ReadOptions
    from kdump.spark.reader import read_split
    from kdump.spark.schema import arrow_schema

    request = json.loads(sys.stdin.buffer.read())
    split = replace(split_from_json(request["split"]), start_position=int(request["start"]))
    log = os.environ.get("KDUMP_FALLBACK_LOG")
    if log:  # what the tests look at: which splits the JVM engine handed over, from where
        with open(log, "a", encoding="utf-8") as f:
            f.write(json.dumps({"path": split.path, "start": split.start_position}) + "\n")
    options = ReadOptions(**request["options"])
    columns = list(request["columns"])
    full = arrow_schema(options.include_headers)
    schema = pa.schema([full.field(c) for c in columns])
    out = sys.stdout.buffer
    with pa.ipc.new_stream(out, schema) as writer:
        for batch in read_split(split, options):
            writer.write_batch(batch.select(columns))
    out.flush()
    return 0


if __name__ == "__main__":
    sys.exit(main())
