"""``kdump salvage``: write the intact batches of a damaged segment into a clean new segment with fresh indexes.

What to keep is decided by :mod:`kdump.analysis.salvage` (:func:`~kdump.analysis.salvage.scan_segment`, a
:class:`~kdump.analysis.salvage.SalvageResult`); this module writes it: the kept batches byte for byte into
``<out>/<same name>`` and, for a ``.log``, the ``.index`` and ``.timeindex`` a broker's recovery would build
(:func:`kdump.analysis.index_recovery.recover_indexes`), each through :func:`kdump.storage.atomic_write.create_new`
(a temporary name, then a rename; no existing file is ever overwritten).  The result, with the paths written, is
handed to the caller's sink (:mod:`kdump.render.salvage_report` writes it as text or JSON lines).

The input is only ever read (memory-mapped read-only), and nothing is written into its directory.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Iterator

from kdump.analysis import salvage as storage_salvage
from kdump.analysis.index_recovery import DEFAULT_INDEX_INTERVAL_BYTES, recover_indexes
from kdump.analysis.salvage import SalvageResult
from kdump.errors import KdumpError
from kdump.exit_status import ExitStatus
from kdump.storage import locations, naming
from kdump.storage.atomic_write import create_new
from kdump.storage.file_records import FileRecords

__all__ = [
    "DEFAULT_INDEX_INTERVAL_BYTES",
    "SalvageError",
    "check_output_dir",
    "output_path_for",
    "run",
    "salvage_segment",
]

#: Bytes copied (and their pages of the input released) at a time.
_COPY_CHUNK = 8 << 20


class SalvageError(KdumpError):
    """Salvage cannot run as asked (output in the input's directory, an output file that exists, ...)."""


def output_path_for(source: str, out_dir: str) -> str:
    """Where :func:`salvage_segment` writes the new segment: ``out_dir`` and the input's file name."""
    return os.path.join(out_dir, os.path.basename(source))


def check_output_dir(source: str, out_dir: str) -> None:
    """Raise :class:`SalvageError` when ``out_dir`` is the input's own directory (salvage never writes there)."""
    source_dir = os.path.dirname(locations.abspath(source))
    if os.path.realpath(out_dir) == locations.realpath(source_dir):
        raise SalvageError(
            f"the output directory {out_dir} is the input's own directory; salvage never writes beside its input",
            path=source,
        )


def salvage_segment(
    source: str,
    out_dir: str,
    *,
    index_interval_bytes: int = DEFAULT_INDEX_INTERVAL_BYTES,
) -> SalvageResult:
    """Scan ``source`` and write its intact batches to ``out_dir/<same name>`` (created if needed), with a fresh
    ``.index`` and ``.timeindex`` for a ``.log``.

    Raises :class:`SalvageError` when ``out_dir`` is the input's directory or an output file exists, and
    :class:`KdumpError` for unreadable input."""
    check_output_dir(source, out_dir)
    name = os.path.basename(source)
    base_offset = storage_salvage.base_offset_from_name(source)
    target = output_path_for(source, out_dir)
    stem = name.split(".", 1)[0]
    index_paths = (
        [os.path.join(out_dir, stem + s) for s in (naming.INDEX_FILE_SUFFIX, naming.TIME_INDEX_FILE_SUFFIX)]
        if base_offset is not None
        else []
    )
    for path in (target, *index_paths):
        if os.path.lexists(path):
            raise SalvageError(f"{path} exists; salvage does not overwrite files", path=source)
    next_base_offset = storage_salvage.next_base_offset(source, base_offset)
    with FileRecords(source, whole=True) as records:
        result = storage_salvage.scan_segment(records, base_offset, next_base_offset)
        records.check_unchanged()  # truncated underneath: stop before writing anything
        try:
            os.makedirs(out_dir, exist_ok=True)
            create_new(target, _kept_chunks(result, records))
        except OSError as e:
            raise SalvageError(f"cannot write {target}: {e.strerror or e}", path=source) from None
        try:
            records.check_unchanged()  # the copy read the input again
        except KdumpError:
            os.unlink(target)
            raise
    result.output = target
    if index_paths:
        with FileRecords(target) as written:
            indexes = recover_indexes(written, base_offset or 0, index_interval_bytes)
        try:
            create_new(index_paths[0], [indexes.offset_index_bytes()])
            create_new(index_paths[1], [indexes.time_index_bytes()])
        except OSError as e:
            raise SalvageError(
                f"cannot write the indexes in {out_dir}: {e.strerror or e}", path=source
            ) from None
        result.offset_index, result.time_index = index_paths
        result.offset_index_entries = len(indexes.offset_entries)
        result.time_index_entries = len(indexes.time_entries)
    return result


def _kept_chunks(result: SalvageResult, records: FileRecords) -> Iterator[memoryview]:
    """The kept batches of ``records``, runs of adjacent ones in one go, at most ``_COPY_CHUNK`` bytes at a time
    (the input's pages are released behind the copy: memory stays flat in the segment size)."""
    buf = records.buf
    run_start = run_end = -1
    for b in [*result.batches, None]:
        if b is not None and b.position == run_end:
            run_end += b.size
            continue
        for at in range(run_start, run_end, _COPY_CHUNK):
            yield memoryview(buf)[at : min(run_end, at + _COPY_CHUNK)]
            records.release(at, min(run_end, at + _COPY_CHUNK))
        if b is not None:
            run_start, run_end = b.position, b.position + b.size


def run(
    source: str,
    out_dir: str,
    sink: Callable[[SalvageResult], None],
    *,
    index_interval_bytes: int = DEFAULT_INDEX_INTERVAL_BYTES,
) -> ExitStatus:
    """Salvage ``source`` into ``out_dir`` and hand what was kept, lost and written to ``sink``: OK when nothing
    was lost, PROBLEMS when something was (the new segment is written all the same)."""
    result = salvage_segment(source, out_dir, index_interval_bytes=index_interval_bytes)
    sink(result)
    return ExitStatus.OK if result.intact else ExitStatus.PROBLEMS
