"""The fuzz harness: mutate seed files, run every parser and command on them, and report anything that is not a
clean :class:`~kdump.errors.KdumpError`.

A *finding* is any of:

* an exception other than :class:`KdumpError` escaping a storage parser or ``kdump files``/``verify-index``
  (what ``run_guarded`` would turn into its "internal error" line), ``MemoryError`` and ``RecursionError``
  included;
* a :class:`KdumpError` that reaches the command line without naming the file, or, for content errors,
  without a byte position;
* an input that takes longer than the per-input time limit (a hang).

Every iteration draws its own ``random.Random(f"{seed}:{target}:{i}")``, so a finding is reproduced by running
the same target, seed and iteration again (``python -m tests.fuzz --target T --seed S --start I -n 1``), and
with ``--save DIR`` the offending files are kept.
"""

from __future__ import annotations

import io
import os
import random
import shutil
import signal
import time
import traceback
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path

from kdump.errors import KdumpError
from kdump.facts.output import Output
from kdump.storage import checkpoint, clean_shutdown
from kdump.storage.file_records import FileRecords
from kdump.storage.offset_index import OffsetIndex
from kdump.storage.producer_snapshot import parse_producer_snapshot
from kdump.storage.time_index import TimeIndex
from kdump.storage.transaction_index import TransactionIndex

from . import mutators, seeds
from .seeds import Seed

#: Default per-input time limit (seconds).  Every input is a few KiB; anything near this is a hang.
DEFAULT_TIMEOUT = 10.0


class Failure(Exception):
    """A parser misbehaved on an input (raised by the checks)."""


class _Timeout(BaseException):
    """Raised by the alarm when one input runs for too long (BaseException so that no except clause of the
    code under test can swallow it)."""


@dataclass
class Finding:
    target: str
    seed: int
    iteration: int
    seed_label: str
    kind: str
    detail: str
    saved: Path | None = None

    def describe(self) -> str:
        where = f" (saved in {self.saved})" if self.saved else ""
        return (
            f"[{self.target} seed={self.seed} iteration={self.iteration} from {self.seed_label}] {self.kind}: "
            f"{self.detail}{where}"
        )


Check = Callable[[Path, Seed, random.Random], None]


@dataclass
class Target:
    name: str
    seeds: list[Seed]
    mutate: mutators.Mutator
    check: Check
    #: Extra command-line flags per seed label (internal-topic decoders).
    flags: dict[str, str] = field(default_factory=dict)


# -- running the code under test ---------------------------------------------------------------------------------


class _Sink(io.RawIOBase):
    """A binary stream that only counts (the dumps can be large; nobody reads them)."""

    def __init__(self) -> None:
        self.written = 0

    def writable(self) -> bool:
        return True

    def write(self, b) -> int:  # noqa: ANN001
        self.written += len(b)
        return len(b)


def _located(e: KdumpError, *, need_position: bool) -> None:
    if e.path is None:
        raise Failure(f"{type(e).__name__} does not name the file: {e.describe()}")
    missing_file = "No such file" in e.message or "no such index file" in e.message
    if need_position and e.position is None and not missing_file:
        raise Failure(f"{type(e).__name__} does not name a byte position: {e.describe()}")


def run_files(argv: list[str], *, need_position: bool = True) -> int:
    """Run ``kdump files`` in-process; a KdumpError must name the file (and the byte, for content errors)."""
    from kdump.cli import files

    out = Output(_Sink())  # type: ignore[arg-type]
    err = Output(_Sink())  # type: ignore[arg-type]
    try:
        status = files.run(argv, out, err)
        out.flush()
        err.flush()
        return status
    except KdumpError as e:
        _located(e, need_position=need_position)
        return 1


def run_verify_index(directory: Path) -> int:
    from kdump.commands.verify_index import VerifyIndex, select_segments
    from kdump.render.problems import JsonSink, TextSink

    targets, partitions = select_segments([str(directory)])
    for sink in (TextSink, JsonSink):
        out = Output(_Sink())  # type: ignore[arg-type]
        VerifyIndex(targets, partitions, sink(out)).run()
        out.flush()
    return 0


def exercise_segment(path: Path) -> None:
    """The storage core directly: every batch property and every record field, past bad batches."""
    with FileRecords(str(path)) as records:
        try:
            for batch in records.batches():
                _touch_batch(batch)
        except KdumpError:
            pass
        try:
            records.valid_bytes()
        except KdumpError:
            pass


def _touch_batch(batch) -> None:  # noqa: ANN001
    for name in (
        "base_offset",
        "last_offset",
        "magic",
        "max_timestamp",
        "timestamp_type",
        "checksum",
        "is_control_batch",
        "is_transactional",
        "producer_id",
        "producer_epoch",
        "base_sequence",
        "partition_leader_epoch",
        "size_in_bytes",
        "compression_name",
    ):
        try:
            getattr(batch, name)
        except KdumpError:
            pass
    for method in ("is_valid", "compute_checksum"):
        try:
            getattr(batch, method)()
        except KdumpError:
            pass
    if batch.magic >= 2:
        for name in ("next_offset", "last_sequence", "delete_horizon_ms", "records_count"):
            getattr(batch, name)
    try:
        for record in batch.records():
            _ = (record.offset, record.timestamp, record.key, record.value, record.headers, record.sequence)
            _ = (record.key_size, record.value_size, record.crc, record.valid)
    except KdumpError:
        pass


def _recover_indexes(path: Path) -> None:
    try:
        from kdump.analysis.index_recovery import recover_indexes
    except ImportError:  # not in this version
        return
    with FileRecords(str(path)) as records:
        try:
            result = recover_indexes(records, 0, 0)
        except KdumpError:
            return
        result.offset_index_bytes()
        result.time_index_bytes()


def _salvage(path: Path) -> None:
    """``kdump salvage``'s core must succeed on any input, and what it writes must hold up: the new segment is
    exactly the kept batches, kept and lost ranges tile the input, offsets increase, the new segment salvages
    as intact and its fresh indexes verify clean."""
    try:
        from kdump.analysis import salvage
        from kdump.analysis.index_verification import verify_segment
        from kdump.commands.salvage import salvage_segment
        from kdump.storage.local_log import LocalLog
    except ImportError:  # not in this version
        return
    out = path.parent / "salvaged"
    if out.exists():
        shutil.rmtree(out)
    result = salvage_segment(str(path), str(out))
    data = path.read_bytes()
    written = (out / path.name).read_bytes()
    if written != b"".join(data[b.position : b.position + b.size] for b in result.batches):
        raise Failure("salvage: the new segment is not the kept batches byte for byte")
    spans = sorted(
        [(b.position, b.position + b.size) for b in result.batches] + [(r.start, r.end) for r in result.lost]
    )
    position = 0
    for start, end in spans:
        if start != position or end <= start:
            raise Failure(f"salvage: kept and lost ranges do not tile the input at byte {position}: {spans}")
        position = end
    if position != len(data):
        raise Failure(f"salvage: ranges end at {position}, the input has {len(data)} bytes")
    for a, b in zip(result.batches, result.batches[1:], strict=False):
        if b.first_offset <= a.last_offset:
            raise Failure(
                f"salvage: offsets do not increase between the batches at bytes {a.position} and {b.position}"
            )
    again = salvage.scan_segment(FileRecords(str(out / path.name)), result.base_offset)
    if not again.intact or len(again.batches) != len(result.batches):
        raise Failure(f"salvage: the new segment is not intact: {again.lost}")
    if result.offset_index is not None:
        for segment in LocalLog.scan(str(out)).segments:
            problems = verify_segment(segment).problems
            if problems:
                raise Failure(f"salvage: the new indexes do not verify: {problems[0]}")


# -- checks per kind of file -------------------------------------------------------------------------------------

_LOG_OPTION_SETS = (
    ["--deep-iteration"],
    ["--print-data-log", "--skip-record-metadata"],
    ["--deep-iteration", "--skip-record-metadata"],
    ["--max-bytes", "{max_bytes}", "--print-data-log"],
    [
        "--value-decoder-class",
        "org.apache.kafka.tools.api.IntegerDecoder",
        "--key-decoder-class",
        "org.apache.kafka.tools.api.LongDecoder",
    ],
    ["--print-data-log", "--print-header-values"],
    ["--json", "--print-data-log"],
    ["--json", "--deep-iteration", "--from-offset", "2", "--max-records", "3"],
    ["--print-data-log", "--key-regex", "key-[0-9]", "--to-time", "1700000000010"],
)


def check_segment(directory: Path, seed: Seed, rng: random.Random) -> None:
    path = directory / seed.victim
    size = path.stat().st_size
    run_files(["--files", str(path)])
    run_files(["--files", str(path), "--print-data-log"])
    extra = [a.replace("{max_bytes}", str(rng.randrange(size + 2))) for a in rng.choice(_LOG_OPTION_SETS)]
    run_files(["--files", str(path), *extra])
    exercise_segment(path)
    _recover_indexes(path)
    _salvage(path)


def check_kraft_snapshot(directory: Path, seed: Seed, rng: random.Random) -> None:
    path = directory / seed.victim
    run_files(["--files", str(path)])
    run_files(["--files", str(path), "--print-data-log"])
    run_files(
        ["--files", str(path), "--cluster-metadata-decoder", *rng.choice(([], ["--skip-record-metadata"]))]
    )
    exercise_segment(path)


def check_internal_topic(directory: Path, seed: Seed, rng: random.Random, flag: str) -> None:
    path = directory / seed.victim
    run_files(["--files", str(path), flag])
    run_files(["--files", str(path), flag, "--skip-record-metadata"])


def check_index(directory: Path, seed: Seed, rng: random.Random) -> None:
    path = directory / seed.victim
    for options in ([], ["--index-sanity-check"], ["--verify-index-only"]):
        run_files(
            [
                "--files",
                str(path),
                *options,
                *rng.choice(([], ["--max-message-size", str(rng.randrange(100))])),
            ]
        )
    base = 0
    try:
        base = int(seed.victim.split(".")[0])
    except ValueError:
        pass
    cls = TimeIndex if seed.victim.endswith(".timeindex") else OffsetIndex
    if seed.victim.endswith((".index", ".timeindex")):
        index = cls(str(path), base)
        try:
            index.sanity_check()
        except KdumpError as e:
            _located(e, need_position=True)
        list(index)
        list(index.dump_entries())
        index.lookup(rng.choice((0, base, base + 5, -1, 1 << 62)))
        if cls is OffsetIndex:
            index.fetch_upper_bound_offset(rng.randrange(1 << 16), rng.randrange(1 << 16))
    if (directory / seeds.LOG).exists() or any(directory.glob("*.log")):
        run_verify_index(directory)


def check_txn_index(directory: Path, seed: Seed, rng: random.Random) -> None:
    path = directory / seed.victim
    run_files(["--files", str(path)])
    index = TransactionIndex(str(path), 0)
    for call in (index.aborted_txns, index.sanity_check, lambda: index.collect_aborted_txns(0, 1 << 40)):
        try:
            call()
        except KdumpError as e:
            _located(e, need_position=True)
    run_verify_index(directory)


def check_snapshot(directory: Path, seed: Seed, rng: random.Random) -> None:
    path = directory / seed.victim
    run_files(["--files", str(path)])
    try:
        parse_producer_snapshot(path.read_bytes(), str(path))
    except KdumpError as e:
        _located(e, need_position=True)


def check_state_file(directory: Path, seed: Seed, rng: random.Random) -> None:
    path = directory / seed.victim
    if seed.victim == ".kafka_cleanshutdown":
        try:
            clean_shutdown.parse_clean_shutdown(path.read_bytes(), str(path))
        except KdumpError as e:
            _located(e, need_position=True)
    else:
        run_files(["--files", str(path)])
    try:
        checkpoint.read_checkpoint(str(path))
    except KdumpError as e:
        _located(e, need_position=True)


# -- the targets -------------------------------------------------------------------------------------------------


def build_targets(full_corpus: Path | None = None) -> dict[str, Target]:
    """Every fuzz target, seeded from built files, the fixture corpus and (when given) the full corpus."""
    roots = seeds.corpus_roots(full_corpus)
    internal = seeds.internal_topic_seeds(roots)
    flags = {s.label: flag for flag, s in internal}

    def internal_check(directory: Path, seed: Seed, rng: random.Random) -> None:
        check_internal_topic(directory, seed, rng, flags[seed.label])

    txn_mutator = mutators.slot_mutator(
        34, ((0, ">b"), (1, ">b"), (2, ">q"), (10, ">q"), (18, ">q"), (26, ">q"))
    )
    snapshot_slots = mutators.slot_mutator(
        46, ((0, ">q"), (8, ">h"), (10, ">i"), (14, ">q"), (22, ">i"), (26, ">q"))
    )

    def mutate_snapshot(data: bytes, rng: random.Random) -> bytes:
        if len(data) > 10 and rng.random() < 0.5:
            body = snapshot_slots(data[10:], rng)
            data = data[:10] + body
        else:
            data = mutators.generic(data, rng)
        if len(data) >= 6 and rng.random() < 0.6:  # repair the CRC so the entries are parsed
            import crc32c

            data = data[:2] + crc32c.crc32c(data[6:]).to_bytes(4, "big") + data[6:]
        return data

    targets = [
        Target(
            "segment",
            seeds.segment_seeds() + seeds.corpus_segment_seeds(roots),
            mutators.mutate_segment,
            check_segment,
        ),
        Target(
            "kraft-snapshot", seeds.kraft_snapshot_seeds(roots), mutators.mutate_segment, check_kraft_snapshot
        ),
        Target(
            "offset-index",
            [s for s in seeds.built_index_seeds() if s.victim.endswith(".index")]
            + seeds.index_seeds(roots, ".index"),
            mutators.slot_mutator(8, ((0, ">i"), (4, ">i"))),
            check_index,
        ),
        Target(
            "time-index",
            [s for s in seeds.built_index_seeds() if s.victim.endswith(".timeindex")]
            + seeds.index_seeds(roots, ".timeindex"),
            mutators.slot_mutator(12, ((0, ">q"), (8, ">i"))),
            check_index,
        ),
        Target("txn-index", seeds.txn_index_seeds(roots), txn_mutator, check_txn_index),
        Target("producer-snapshot", seeds.snapshot_seeds(roots), mutate_snapshot, check_snapshot),
        Target("state-file", seeds.state_file_seeds(roots), mutators.mutate_text, check_state_file),
        Target("internal-topic", [s for _, s in internal], mutators.mutate_segment, internal_check, flags),
    ]
    return {t.name: t for t in targets}


# -- the loop ----------------------------------------------------------------------------------------------------


@contextmanager
def _time_limit(seconds: float) -> Iterator[None]:
    if seconds <= 0 or not hasattr(signal, "setitimer"):
        yield
        return

    def expire(signum, frame):  # noqa: ANN001, ANN202
        raise _Timeout

    previous = signal.signal(signal.SIGALRM, expire)
    signal.setitimer(signal.ITIMER_REAL, seconds)
    try:
        yield
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, previous)


def _write_case(directory: Path, seed: Seed, victim_bytes: bytes) -> None:
    if directory.exists():
        shutil.rmtree(directory)
    directory.mkdir(parents=True)
    for name, content in seed.files.items():
        (directory / name).write_bytes(victim_bytes if name == seed.victim else content)


def fuzz_target(
    target: Target,
    *,
    seed: int,
    start: int,
    iterations: int,
    workdir: Path,
    timeout: float = DEFAULT_TIMEOUT,
    deadline: float | None = None,
    save_dir: Path | None = None,
) -> tuple[int, list[Finding]]:
    """Run ``iterations`` mutated inputs of ``target`` (or fewer if ``deadline``, a ``time.monotonic()``
    value, passes first).  Returns the number of inputs run and the findings."""
    findings: list[Finding] = []
    directory = workdir / target.name
    done = 0
    for i in range(start, start + iterations):
        if deadline is not None and time.monotonic() > deadline:
            break
        rng = random.Random(f"{seed}:{target.name}:{i}")
        chosen = rng.choice(target.seeds)
        data = target.mutate(chosen.files[chosen.victim], rng)
        _write_case(directory, chosen, data)
        kind = None
        detail = ""
        try:
            with _time_limit(timeout):
                target.check(directory, chosen, rng)
        except _Timeout:
            kind, detail = "hang", f"no result after {timeout:g} s"
        except Failure as e:
            kind, detail = "unlocated error", str(e)
        except MemoryError:
            kind, detail = "memory", traceback.format_exc(limit=-6)
        except Exception as e:  # noqa: BLE001 - this is what the harness is looking for
            kind = f"uncaught {type(e).__name__}"
            detail = "".join(traceback.format_exception(e, limit=-6)).strip()
        done += 1
        if kind is not None:
            saved = None
            if save_dir is not None:
                saved = save_dir / f"{target.name}-{seed}-{i}"
                if saved.exists():
                    shutil.rmtree(saved)
                shutil.copytree(directory, saved)
            findings.append(Finding(target.name, seed, i, chosen.label, kind, detail, saved))
    if directory.exists():
        shutil.rmtree(directory)
    return done, findings


def fuzz(
    targets: list[Target],
    *,
    seed: int = 0,
    start: int = 0,
    iterations: int = 100,
    workdir: Path,
    seconds: float | None = None,
    timeout: float = DEFAULT_TIMEOUT,
    save_dir: Path | None = None,
    progress: Callable[[str], None] | None = None,
) -> list[Finding]:
    """Fuzz each target in turn: ``iterations`` inputs each, or for ``seconds`` split evenly between them."""
    findings: list[Finding] = []
    os.makedirs(workdir, exist_ok=True)
    remaining = seconds
    for n, target in enumerate(targets):
        deadline = None
        count = iterations
        if remaining is not None:  # what is left, shared by the targets still to run
            deadline = time.monotonic() + remaining / (len(targets) - n)
            count = 1 << 62
        began = time.monotonic()
        done, found = fuzz_target(
            target,
            seed=seed,
            start=start,
            iterations=count,
            workdir=workdir,
            timeout=timeout,
            deadline=deadline,
            save_dir=save_dir,
        )
        findings.extend(found)
        if remaining is not None:
            remaining -= time.monotonic() - began
        if progress is not None:
            progress(
                f"{target.name}: {done} inputs from {len(target.seeds)} seeds in {time.monotonic() - began:.1f} s, "
                f"{len(found)} findings"
            )
    return findings
