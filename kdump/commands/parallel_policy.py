"""When ``kdump files`` and ``kdump report`` spread one run over processes: the size below which a run stays in
one process.  Apart from :mod:`kdump.commands.parallel` so that a dump too small for it never imports it (the
dump of a small file is started in pipelines many times over)."""

from __future__ import annotations

import os

#: Segments (or --max-bytes slices) smaller than this are rendered in-process.
MIN_PARALLEL_BYTES = 32 << 20
#: The same for a shallow dump (batch lines only), whose walk is cheap next to the workers' own cost (about
#: 35 ms: forks, copied pages, results): measured against one process, 152 MiB (zstd bench segment) took 1.06x
#: the time, 253 MiB 0.91x.
MIN_SHALLOW_PARALLEL_BYTES = 192 << 20


def min_parallel_bytes(deep: bool = True) -> int:
    """:data:`MIN_PARALLEL_BYTES` (``deep``: records rendered) or :data:`MIN_SHALLOW_PARALLEL_BYTES`, or
    ``$KDUMP_PARALLEL_MIN_BYTES`` for both (the tests' small segments)."""
    least = MIN_PARALLEL_BYTES if deep else MIN_SHALLOW_PARALLEL_BYTES
    try:
        return int(os.environ.get("KDUMP_PARALLEL_MIN_BYTES", least))
    except ValueError:
        return least
