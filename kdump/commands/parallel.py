"""Ordered parallel rendering of one large segment for ``kdump files`` (deep iteration / print-data-log).

The segment is cut into chunks at positions its offset index names (Kafka writes an entry at a batch's start),
or, without a usable index, at batch headers found near each cut by their CRC (:func:`probe_bounds`; failing
both, a deep iteration walks the batch headers once in the parent).  Forked workers render
chunks ``w, w + W, w + 2W, ...`` with exactly the sequential code (the ``render`` callable: ``kdump files`` passes
the Kafka-text sink's whole-segment renderer, :meth:`kdump.render.files_text.TextLog.render_batches`) into
memory, then write them straight to the output file descriptor in file order: a token travels round the
workers through pipes, and a worker writes chunk ``k`` only once it holds the token for ``k``.  The parent
never touches the text; it collects each chunk's offset-gap findings and error, stitches the gaps across chunk
boundaries, and re-raises the first error in file order -- after which nothing later was written, so the output
is the sequential output byte for byte, errors included.  Nothing an index says is trusted: a chunk whose walk
(from a start the chunk before it ended exactly at, 0 for the first) does not end exactly where the next chunk
starts was cut inside a batch, and its worker renders on from where it stopped to the end of the segment itself
-- the sequential code from a batch start the sequential walk reaches -- and nothing after it is written.  A stale
or damaged index costs time, never a byte.

Used only when it pays: Kafka's text (no JSON or filters), output to a real file descriptor, more than one CPU,
and a slice of :func:`~kdump.commands.parallel_policy.min_parallel_bytes` or more (32 MiB; a shallow dump,
batch lines only, 192 MiB and only when the index or the probes cut it: the parent's header walk would cost what
the second core saves).  ``KDUMP_WORKERS=1`` turns it off.
"""

from __future__ import annotations

import io
import os
import pickle
import signal
import struct
import sys
from collections.abc import Callable
from dataclasses import dataclass, field

from kdump.analysis.offset_gaps import OffsetGaps
from kdump.analysis.pair_list import PairList
from kdump.errors import KdumpError
from kdump.facts.files import RenderChunk
from kdump.facts.output import Output
from kdump.storage.atomic_write import write_all
from kdump.storage.file_records import FileRecords

#: Bytes of log per chunk: small enough to keep each worker's rendered text small, large enough to amortise.
CHUNK_BYTES = 4 << 20
#: A shallow dump's chunks: its text is about a hundredth of the log, so fewer, larger chunks.
SHALLOW_CHUNK_BYTES = 32 << 20
#: At most this much of an offset index is read to cut a segment (a 1 GiB segment indexed every 4 KiB: 2 MiB).
MAX_INDEX_BYTES = 16 << 20

_GO, _STOP = b"g", b"s"


@dataclass
class _ChunkResult:
    index: int
    gaps: OffsetGaps = field(default_factory=OffsetGaps)
    end: int = 0
    error: KdumpError | None = None
    broken_pipe: bool = False
    #: The chunk did not end at its bound: its worker rendered the rest of the segment, and later chunks
    #: are not part of the output.
    took_over: bool = False


def workers_wanted() -> int:
    env = os.environ.get("KDUMP_WORKERS")
    if env is not None:
        try:
            return max(1, int(env))
        except ValueError:
            return 1
    return min(os.cpu_count() or 1, 4)


def _output_fd(out: Output) -> int | None:
    try:
        return out.stream.fileno()
    except (AttributeError, OSError, io.UnsupportedOperation, ValueError):
        return None


def worth_it(out: Output, records: FileRecords) -> bool:
    """Whether :func:`dump_batches` may pay, for a slice the caller found big enough
    (:func:`kdump.commands.parallel_policy.min_parallel_bytes`, checked before this module is imported)."""
    return (
        not records.fetched_on_demand  # an object store's segment: one ordered walk fetches it once
        and hasattr(os, "fork")
        and workers_wanted() > 1
        and _output_fd(out) is not None
    )


def _bounds_at(cuts: list[int]) -> list[tuple[int, int | None]] | None:
    """``[(0, c1), (c1, c2), ..., (cn, None)]``, or None without a cut."""
    if not cuts:
        return None
    return list(zip([0, *cuts], [*cuts, None], strict=True))


def index_bounds(path: str, records: FileRecords, chunk_bytes: int) -> list[tuple[int, int | None]] | None:
    """Chunk bounds ``[(0, c1), (c1, c2), ..., (cn, None)]`` at positions of the segment's offset index (the
    ``.index`` beside the ``.log``), about ``chunk_bytes`` apart, each below the slice's end; None without an
    index or a position to cut at.  Proposals only: see :func:`_work` for what a wrong one costs."""
    from array import array
    from bisect import bisect_left

    if not path.endswith(".log"):
        return None
    try:
        with open(path[: -len(".log")] + ".index", "rb") as f:
            data = f.read(MAX_INDEX_BYTES)
    except OSError:
        return None
    data = data.rstrip(b"\0")  # an active segment's index is preallocated with zeros
    entries = array("i")
    entries.frombytes(data[: len(data) // 8 * 8])
    if entries.itemsize != 4:  # pragma: no cover - "i" is 4 bytes wherever CPython runs
        return None
    if sys.byteorder == "little":
        entries.byteswap()
    positions = entries[1::2]
    cuts: list[int] = []
    target = chunk_bytes
    while True:
        i = bisect_left(positions, target)
        if i >= len(positions):
            break
        cut = positions[i]
        if cut >= records.end or (cuts and cut <= cuts[-1]) or cut <= 0:
            break
        cuts.append(cut)
        target = cut + chunk_bytes
    return _bounds_at(cuts)


#: Bytes read at each proposed cut to find a batch start there (a batch that does not fit is passed over).
PROBE_WINDOW = 256 << 10


def probe_bounds(path: str, records: FileRecords, chunk_bytes: int) -> list[tuple[int, int | None]] | None:
    """Chunk bounds like :func:`index_bounds` for a segment without a usable index: every ``chunk_bytes`` the
    first position in :data:`PROBE_WINDOW` bytes (read with pread; no page of the log is mapped here) where a
    v2 batch header stands whose CRC-32C matches its bytes and which the next header (or the slice's end)
    follows.  Proposals only, as the index's are; None when no cut was found (legacy segments among them)."""
    try:
        fd = os.open(path, os.O_RDONLY | getattr(os, "O_CLOEXEC", 0))
    except OSError:
        return None
    cuts: list[int] = []
    try:
        target = chunk_bytes
        while target < records.end:
            data = os.pread(fd, min(PROBE_WINDOW, records.end - target), target)
            found = _batch_start(data, target, records.end)
            if found is not None and (not cuts or found > cuts[-1]):
                cuts.append(found)
                target = found + chunk_bytes
            else:
                target += chunk_bytes
    except OSError:
        return None
    finally:
        os.close(fd)
    return _bounds_at(cuts)


def _batch_start(data: bytes, base: int, end: int) -> int | None:
    """The first position in ``data`` (read at ``base``) of a v2 batch whose CRC-32C is right and whose end is
    the slice's ``end`` or the start of a header with magic 2, both inside ``data``."""
    from kdump.storage.checksum import crc32c

    view = memoryview(data)
    magic = 16  # the magic byte's place in a batch header (offset 8, length 4, leader epoch 4)
    while True:
        at = data.find(b"\x02", magic)
        if at < 0:
            return None
        p = at - 16
        magic = at + 1
        if p + 61 > len(data):
            return None
        (size,) = struct.unpack_from(">i", data, p + 8)
        after = p + 12 + size
        if size < 49 or base + after > end or after > len(data):
            continue
        if base + after != end and (after + 17 > len(data) or data[after + 16] != 2):
            continue
        (stored,) = struct.unpack_from(">I", data, p + 17)
        if crc32c(view[p + 21 : after]) == stored:
            return base + p


def _chunks(records: FileRecords, chunk_bytes: int) -> tuple[list[tuple[int, int | None]], KdumpError | None]:
    """Chunk bounds at batch starts, covering the whole batches from 0, and the framing error that ended the
    walk early, if any (it belongs after the last chunk)."""
    bounds: list[tuple[int, int | None]] = []
    start = 0
    end = 0
    error = None
    try:
        for batch in records.batches():
            if batch.position - start >= chunk_bytes:
                bounds.append((start, batch.position))
                start = batch.position
            end = batch.position + batch.size_in_bytes
    except KdumpError as e:
        error = e
    if end > start or not bounds:
        bounds.append((start, end))
    return bounds, error


def dump_batches(
    render: RenderChunk,
    out: Output,
    path: str,
    records: FileRecords,
    on_gaps: Callable[[PairList], None],
    *,
    deep: bool = True,
) -> int | None:
    """Render the whole slice of ``records`` (the file at ``path``) in parallel into ``out``; returns where the
    whole batches end, or None when there is nothing worth splitting (the caller then renders in-process).
    ``on_gaps`` receives the non-consecutive offsets found, in file order, also when an error ends the run.
    ``deep``: records are rendered (else batch lines only, cut only where the offset index or the probes cut
    them: no header walk first)."""
    chunk_bytes = int(os.environ.get("KDUMP_CHUNK_BYTES", CHUNK_BYTES if deep else SHALLOW_CHUNK_BYTES))
    framing_error = None
    proposed = index_bounds(path, records, chunk_bytes) or probe_bounds(path, records, chunk_bytes)
    if proposed is not None:
        bounds = proposed
    elif deep:
        bounds, framing_error = _chunks(records, chunk_bytes)
    else:
        return None
    if len(bounds) < 2:
        return None
    fd = _output_fd(out)
    assert fd is not None
    out.flush()
    workers = min(workers_wanted(), len(bounds))
    tokens = [os.pipe() for _ in range(workers)]
    results = [os.pipe() for _ in range(workers)]
    pids = []
    for w in range(workers):
        pid = os.fork()
        if pid == 0:  # pragma: no cover - runs in the child; covered through the subprocess tests
            code = 0
            try:
                signal.signal(signal.SIGINT, signal.SIG_DFL)
                for i, (r, wr) in enumerate(tokens):
                    if i != w:
                        os.close(r)
                    if i != (w + 1) % workers:
                        os.close(wr)
                for i, (r, wr) in enumerate(results):
                    os.close(r)
                    if i != w:
                        os.close(wr)
                _work(render, path, bounds, w, workers, tokens, results[w][1], fd)
            except BaseException:  # noqa: BLE001 - a child must never return into the parent's code
                code = 1
            finally:
                os._exit(code)
        pids.append(pid)
    for r, wr in tokens:
        os.close(r)
        if wr != tokens[0][1]:
            os.close(wr)
    for _, wr in results:
        os.close(wr)
    os.write(tokens[0][1], _GO)
    os.close(tokens[0][1])
    chunk_results = _collect([r for r, _ in results])
    for pid in pids:
        os.waitpid(pid, 0)
    return _merge(path, bounds, chunk_results, framing_error, on_gaps)


def _work(
    render: RenderChunk,
    path: str,
    bounds: list[tuple[int, int | None]],
    w: int,
    workers: int,
    tokens: list[tuple[int, int]],
    result_fd: int,
    fd: int,
) -> None:
    """A worker: render my next chunk while the others write, write it when the token comes, pass it on."""
    token_in = tokens[w][0]
    token_out = tokens[(w + 1) % workers][1]
    stopped = False
    for index in range(w, len(bounds), workers):
        result = None
        buffer = io.BytesIO()
        if not stopped:
            start, end = bounds[index]
            result = _ChunkResult(index)
            out = Output(buffer, chunk=1 << 20)
            try:
                result.end = render(start, end, out, result.gaps)
            except KdumpError as e:
                result.error = e
            except Exception as e:  # noqa: BLE001 - reported like the sequential path's last-resort line
                result.error = KdumpError(f"internal error ({type(e).__name__}: {e})", path=path)
            out.flush()
        if os.read(token_in, 1) != _GO:
            stopped = True
        if not stopped and result is not None:
            try:
                write_all(fd, buffer.getbuffer())
            except BrokenPipeError:
                result.broken_pipe = True
            bound = bounds[index][1]
            if result.error is None and not result.broken_pipe and bound is not None and result.end != bound:
                _take_over(render, path, result, fd)  # cut inside a batch: the rest is rendered here
            if result.error is not None or result.broken_pipe or result.took_over:
                stopped = True
        buffer.close()
        try:
            os.write(token_out, _STOP if stopped else _GO)
        except BrokenPipeError:
            pass
        if result is not None:
            payload = pickle.dumps(result)
            write_all(result_fd, memoryview(struct.pack(">I", len(payload)) + payload))


def _take_over(render: RenderChunk, path: str, result: _ChunkResult, fd: int) -> None:
    """Render from where ``result``'s chunk stopped (a batch start the sequential walk reaches) to the end of the
    segment, straight to ``fd``: the sequential code, as the in-process path runs it."""
    result.took_over = True
    with open(fd, "wb", closefd=False) as stream:
        out = Output(stream, chunk=1 << 20)
        try:
            result.end = render(result.end, None, out, result.gaps)
        except KdumpError as e:
            result.error = e
        except BrokenPipeError:
            result.broken_pipe = True
        except Exception as e:  # noqa: BLE001 - reported like the sequential path's last-resort line
            result.error = KdumpError(f"internal error ({type(e).__name__}: {e})", path=path)
        try:
            out.flush()  # what Kafka printed before an error, too
        except BrokenPipeError:
            result.broken_pipe = True
        except KdumpError as e:
            result.error = result.error or e


def _collect(fds: list[int]) -> dict[int, _ChunkResult]:
    """Read every worker's length-prefixed results at once (a worker blocked on a full pipe would stall the
    token ring)."""
    import selectors

    found: dict[int, _ChunkResult] = {}
    buffers = {fd: bytearray() for fd in fds}
    with selectors.DefaultSelector() as selector:
        for fd in fds:
            selector.register(fd, selectors.EVENT_READ)
        while buffers:
            for key, _ in selector.select():
                fd = key.fd
                data = os.read(fd, 1 << 16)
                if data:
                    buffers[fd] += data
                    continue
                selector.unregister(fd)
                os.close(fd)
                buf = buffers.pop(fd)
                pos = 0
                while pos + 4 <= len(buf):
                    (size,) = struct.unpack_from(">I", buf, pos)
                    result: _ChunkResult = pickle.loads(bytes(buf[pos + 4 : pos + 4 + size]))
                    found[result.index] = result
                    pos += 4 + size
    return found


def _merge(
    path: str,
    bounds: list[tuple[int, int | None]],
    chunk_results: dict[int, _ChunkResult],
    framing_error: KdumpError | None,
    on_gaps: Callable[[PairList], None],
) -> int:
    """Gaps in file order (including those across chunk boundaries), then the first error, if any."""
    merged = OffsetGaps()
    end = 0
    for index in range(len(bounds)):
        result = chunk_results.get(index)
        if result is None:
            raise KdumpError("a worker rendering the segment failed", path=path, position=bounds[index][0])
        merged.extend(result.gaps)
        end = result.end
        if result.broken_pipe:
            raise BrokenPipeError
        if result.error is not None:
            if merged.pairs:
                on_gaps(merged.pairs)
            raise result.error
        if result.took_over:
            break  # it rendered the rest; later chunks were cut wrongly and not written
    if merged.pairs:
        on_gaps(merged.pairs)
    if framing_error is not None:
        framing_error.located(path)
        raise framing_error
    return end


__all__ = ["CHUNK_BYTES", "OffsetGaps", "RenderChunk", "dump_batches", "worth_it"]
