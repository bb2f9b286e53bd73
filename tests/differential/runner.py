"""Running cases through both tools, in parallel, and keeping the ones that diverge as reproducers."""

from __future__ import annotations

import json
import multiprocessing
import os
import shutil
import signal
import tempfile
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path

from tests.replay import differences, run_kdump

from .cases import CASE_DIR, Case, make_case, uses_state_file
from .kafka import DumpServer, KafkaTimeout, Outcome

TESTS = Path(__file__).resolve().parents[1]

KDUMP_TIMEOUT = 60.0
#: ``kdump files`` options beyond Kafka's (opt-in; Kafka rejects them as unrecognized).
KDUMP_ONLY_OPTIONS = (
    "json",
    "print-header-values",
    "from-offset",
    "to-offset",
    "from-time",
    "to-time",
    "key",
    "key-regex",
    "producer-id",
    "max-records",
    "transactional-only",
    "control-only",
)
ROOT_PLACEHOLDER = b"${CORPUS_ROOT}"


@dataclass
class Result:
    seed: int
    number: int
    kind: str
    label: str
    argv: list[str]
    status: str  # same | diverges | deliberate | kafka-timeout | kdump-timeout
    #: The Kafka release both tools ran as (the real tool of that release, ``kdump files --kafka-version``).
    version: str = "4.0"
    problems: list[str] = field(default_factory=list)
    kafka: Outcome | None = None
    kdump: Outcome | None = None
    kafka_seconds: float = 0.0
    kdump_seconds: float = 0.0
    shrunk: Case | None = None

    @property
    def name(self) -> str:
        return f"{self.seed}-{self.number}"

    def signature(self) -> str:
        """A short class of the divergence (for the summary)."""
        first = b""
        if self.kafka is not None:
            for line in self.kafka.err.splitlines():
                if line.startswith(b"Exception in thread"):
                    first = line.split(b":", 1)[0].rsplit(b" ", 1)[-1]
                    break
        what = "+".join(p.split(":")[0].split(",")[0] for p in self.problems)
        return f"{self.kind}: {what}" + (f" (Kafka: {first.decode(errors='replace')})" if first else "")


def deliberate(case: Case, kafka: Outcome, kdump: Outcome) -> str | None:
    """The README's deliberate differences ("What differs"), or None."""
    if uses_state_file(case):
        return "deliberate: kdump parses checkpoint and state files"
    head = kafka.err.split(b"\n", 1)[0]
    if head.startswith(b'Exception in thread "main" joptsimple.UnrecognizedOptionException: ') and any(
        head.endswith(f": {name} is not a recognized option".encode()) for name in KDUMP_ONLY_OPTIONS
    ):
        return "deliberate: kdump's own options (README: opt-in additions), which Kafka rejects"
    if kafka.err.startswith(b'Missing required argument "[files]"') and kdump.out.startswith(b"Dumping "):
        return "deliberate: files given without --files are dumped (Kafka: missing required argument)"
    return None


class _Timeout(BaseException):
    pass


@contextmanager
def _time_limit(seconds: float) -> Iterator[None]:
    def expire(signum, frame):  # noqa: ANN001, ANN202
        raise _Timeout

    previous = signal.signal(signal.SIGALRM, expire)
    signal.setitimer(signal.ITIMER_REAL, seconds)
    try:
        yield
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, previous)


def write_case(workdir: Path, case: Case) -> None:
    target = workdir / CASE_DIR
    if target.exists():
        shutil.rmtree(target)
    target.mkdir(parents=True)
    for name, data in case.files.items():
        path = target / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(data)


class Runner:
    """Runs cases in ``workdir`` (kdump in this process, Kafka in a resident JVM whose cwd is ``workdir``)."""

    def __init__(
        self, workdir: Path, *, kafka_timeout: float = 60.0, versions: tuple[str, ...] = ("4.0",)
    ) -> None:
        self.workdir = workdir
        self.versions = versions
        #: One resident JVM per release (``KafkaDumpServer`` started by that release's distribution).
        self.servers = {v: DumpServer(workdir, timeout=kafka_timeout, version=v) for v in versions}

    def close(self) -> None:
        for server in self.servers.values():
            server.close()

    def run_both(
        self, case: Case, version: str = "4.0"
    ) -> tuple[Outcome | None, Outcome | None, float, float]:
        """kdump (``--kafka-version version``) first: Kafka's tool may create files (an index it does not find is
        created empty); the case's files are written afresh for each pair of runs."""
        write_case(self.workdir, case)
        previous = os.getcwd()
        os.chdir(self.workdir)
        started = time.monotonic()
        try:
            with _time_limit(KDUMP_TIMEOUT):
                kdump: Outcome | None = Outcome(*run_kdump(["--kafka-version", version, *case.argv]))
        except _Timeout:
            kdump = None
        finally:
            os.chdir(previous)
        kdump_seconds = time.monotonic() - started
        started = time.monotonic()
        try:
            kafka: Outcome | None = self.servers[version].run(case.argv)
        except (KafkaTimeout, EOFError, OSError):
            kafka = None
        return kafka, kdump, time.monotonic() - started, kdump_seconds

    def check_all(self, case: Case, *, shrink: bool = True) -> list[Result]:
        """The case against the real tool of every release of the runner."""
        return [self.check(case, shrink=shrink, version=v) for v in self.versions]

    def check(self, case: Case, *, shrink: bool = True, version: str = "4.0") -> Result:
        kafka, kdump, ks, ds = self.run_both(case, version)
        result = Result(
            case.seed, case.number, case.kind, case.label, list(case.argv), "same", version=version
        )
        result.kafka, result.kdump, result.kafka_seconds, result.kdump_seconds = kafka, kdump, ks, ds
        if kafka is None:
            result.status = "kafka-timeout"
        elif kdump is None:
            result.status = "kdump-timeout"
            result.problems = [f"kdump took more than {KDUMP_TIMEOUT:.0f} s"]
        else:
            result.problems = differences(kafka.triple(), kdump.triple(), case.paths)
            if result.problems:
                reason = deliberate(case, kafka, kdump)
                result.status = "diverges" if reason is None else "deliberate"
                if reason is not None:
                    result.problems = [reason]
        if result.status in ("diverges", "kdump-timeout") and shrink:
            result.shrunk = self.shrink(case, version)
        return result

    def shrink(self, case: Case, version: str = "4.0") -> Case | None:
        """A smaller case that diverges the same way: one of several --files elements alone."""
        paths = case.paths
        if len(paths) < 2:
            return None
        joined = [a for a in case.argv if "," in a or a.startswith("--files=")]
        for path in dict.fromkeys(paths):
            argv = [
                (("--files=" + path) if a.startswith("--files=") else path) if a in joined else a
                for a in case.argv
            ]
            sub = path.split("/")[1] if path.count("/") >= 2 else None
            files = {k: v for k, v in case.files.items() if sub is None or k.split("/")[0] == sub}
            small = Case(case.seed, case.number, case.kind, case.label, files, argv)
            kafka, kdump, _, _ = self.run_both(small, version)
            if kafka and kdump and differences(kafka.triple(), kdump.triple(), small.paths):
                return small
        return None


def save(result: Result, directory: Path, workdir: Path) -> Path:
    """Keep a diverging case: its files (``case/...``), arguments and both tools' outputs."""
    case = result.shrunk or make_case_from(result)
    target = directory / (result.name if result.version == "4.0" else f"{result.name}-kafka{result.version}")
    if target.exists():
        shutil.rmtree(target)
    target.mkdir(parents=True)
    for name, data in case.files.items():
        path = target / CASE_DIR / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(data)
    root = str(workdir.resolve()).encode()
    meta = {
        "seed": result.seed,
        "number": result.number,
        "kind": result.kind,
        "label": result.label,
        "version": result.version,
        "argv": case.argv,
        "problems": result.problems,
        "shrunk": result.shrunk is not None,
    }
    if result.shrunk is not None:  # the outputs of the smaller case
        runner_outcomes = _rerun(case, workdir, result.version)
    else:
        runner_outcomes = (result.kafka, result.kdump)
    for who, outcome in zip(("kafka", "kdump"), runner_outcomes, strict=True):
        if outcome is None:
            continue
        meta[f"{who}_exit"] = outcome.code
        (target / f"{who}.stdout").write_bytes(outcome.out.replace(root, ROOT_PLACEHOLDER))
        (target / f"{who}.stderr").write_bytes(outcome.err.replace(root, ROOT_PLACEHOLDER))
    (target / "case.json").write_text(json.dumps(meta, indent=1, ensure_ascii=False) + "\n")
    return target


_RUNNER: Runner | None = None
_FULL_CORPUS: Path | None = None
_KINDS: tuple[str, ...] = ()


def _rerun(case: Case, workdir: Path, version: str = "4.0") -> tuple[Outcome | None, Outcome | None]:
    assert _RUNNER is not None
    kafka, kdump, _, _ = _RUNNER.run_both(case, version)
    return kafka, kdump


def make_case_from(result: Result) -> Case:
    return make_case(result.seed, result.number, _FULL_CORPUS, _KINDS)


def _init(
    base: str,
    full_corpus: Path | None,
    kinds: tuple[str, ...],
    save_dir: Path | None,
    save_all: bool = False,
    versions: tuple[str, ...] = ("4.0",),
) -> None:
    global _RUNNER, _FULL_CORPUS, _KINDS, _SAVE, _SAVE_ALL
    workdir = Path(tempfile.mkdtemp(prefix="kdump-difftest-", dir=base))
    _RUNNER = Runner(workdir, versions=versions)
    _FULL_CORPUS, _KINDS, _SAVE, _SAVE_ALL = full_corpus, kinds, save_dir, save_all
    import atexit

    atexit.register(_RUNNER.close)


_SAVE: Path | None = None
_SAVE_ALL = False


def _work(chunk: tuple[int, list[int]]) -> list[Result]:
    seed, numbers = chunk
    assert _RUNNER is not None
    out = []
    for n in numbers:
        case = make_case(seed, n, _FULL_CORPUS, _KINDS)
        for result in _RUNNER.check_all(case):
            if _SAVE is not None and (_SAVE_ALL or result.status in ("diverges", "kdump-timeout")):
                save(result, _SAVE, _RUNNER.workdir)
            # keep only what the summary needs across the process boundary
            if result.status == "same":
                result.kafka = result.kdump = None
            result.shrunk = None
            out.append(result)
    shutil.rmtree(_RUNNER.workdir / CASE_DIR, ignore_errors=True)
    return out


def run(
    *,
    seed: int,
    start: int,
    count: int,
    jobs: int,
    full_corpus: Path | None,
    kinds: tuple[str, ...] = (),
    save_dir: Path | None = None,
    save_all: bool = False,
    chunk: int = 20,
    progress: Callable[[str], None] | None = None,
    numbers: list[int] | None = None,
    versions: tuple[str, ...] = ("4.0",),
) -> list[Result]:
    """Run cases ``start .. start+count-1`` (or ``numbers``) of ``seed`` on ``jobs`` processes (each with its
    own JVM)."""
    shm = "/dev/shm" if os.path.isdir("/dev/shm") and os.access("/dev/shm", os.W_OK) else None
    base = tempfile.mkdtemp(prefix="kdump-difftest-", dir=shm)
    wanted = list(range(start, start + count)) if numbers is None else numbers
    count = len(wanted)
    chunks = [(seed, wanted[i : i + chunk]) for i in range(0, count, chunk)]
    results: list[Result] = []
    started = time.monotonic()
    try:
        if jobs <= 1:
            _init(base, full_corpus, kinds, save_dir, save_all, versions)
            iterator: Iterator[list[Result]] = map(_work, chunks)
            pool = None
        else:
            ctx = multiprocessing.get_context("fork")
            pool = ctx.Pool(jobs, _init, (base, full_corpus, kinds, save_dir, save_all, versions))
            iterator = pool.imap_unordered(_work, chunks)
        for done in iterator:
            results.extend(done)
            if progress is not None:
                bad = sum(r.status == "diverges" for r in results)
                done_cases = len(results) // len(versions)
                rate = done_cases / max(1e-9, time.monotonic() - started)
                progress(f"{done_cases}/{count} cases, {bad} diverging, {rate:.1f} cases/s")
        if pool is not None:
            pool.close()
            pool.join()
    finally:
        if jobs <= 1 and _RUNNER is not None:
            _RUNNER.close()
        shutil.rmtree(base, ignore_errors=True)
    results.sort(key=lambda r: (r.number, r.version))
    return results
