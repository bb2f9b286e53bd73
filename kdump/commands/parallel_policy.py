"""When ``kdump files`` and ``kdump report`` spread one run over processes: the size below which a run stays in
one process.  Apart from :mod:`kdump.commands.parallel` so that a dump too small for it never imports it (the
dump of a small file is started in pipelines many times over)."""

from __future__ import annotations

import os

#: Segments (or --max-bytes slices) smaller than this are rendered in-process.
MIN_PARALLEL_BYTES = 32 << 20


def min_parallel_bytes() -> int:
    """:data:`MIN_PARALLEL_BYTES`, or ``$KDUMP_PARALLEL_MIN_BYTES`` (the tests' small segments)."""
    try:
        return int(os.environ.get("KDUMP_PARALLEL_MIN_BYTES", MIN_PARALLEL_BYTES))
    except ValueError:
        return MIN_PARALLEL_BYTES
