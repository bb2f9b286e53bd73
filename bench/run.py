"""Benchmark ``kdump files`` against Kafka's own ``kafka-dump-log.sh`` reference figures.

For each segment made by ``bench/make_segments.py`` (uncompressed ``plain-0`` and ``zstd-0``) this runs, as
child processes started with :mod:`subprocess`::

    kdump files --files <segment>                                   shallow
    kdump files --files <segment> --deep-iteration                  deep
    kdump files --files <segment> --print-data-log > /dev/null      print (/dev/null)
    kdump files --files <segment> --print-data-log > <file>         print (file)

Each case runs ``--repeat`` times (default 3); the figure is the best wall-clock time.  Peak RSS is the
child's ``ru_maxrss``: the ``RUSAGE_CHILDREN`` accounting, collected per child with ``os.wait4`` (plain
``getrusage(RUSAGE_CHILDREN)`` reports the maximum over *all* children waited for so far, so it could not tell
the cases apart).  The segment is read once beforehand so that every run finds it in the page cache, as the
Kafka figures did.

Results go to ``bench/results/latest.json`` (machine, kdump commit, figures and Kafka's reference numbers) and
a table is printed.  ``--quick`` uses the 10x smaller data set (Kafka's numbers are then not comparable).
``--profile`` also prints a cProfile top-10 of the print path.

Usage::

    .venv/bin/python bench/run.py [--quick] [--repeat N] [--profile]
"""

from __future__ import annotations

import argparse
import datetime
import io
import json
import os
import platform
import pstats
import subprocess
import sys
import tempfile
import time
from dataclasses import asdict, dataclass
from pathlib import Path

BENCH = Path(__file__).resolve().parent
REPO = BENCH.parent
sys.path.insert(0, str(BENCH))

import make_segments  # noqa: E402

#: kafka-dump-log.sh (Kafka 4.0) on the same shape of segment: seconds, and peak RSS range in MiB.
KAFKA_REFERENCE = {
    "description": (
        "kafka-dump-log.sh, Kafka 4.0, 2,230,000 records (9-byte keys, 100-byte values, 136 records per "
        "batch), ~254 MiB segment"
    ),
    "seconds": {
        "plain-0": {"shallow": 1.22, "deep": 4.08, "print-devnull": 5.96, "print-file": 12.5},
        "zstd-0": {"shallow": 1.25, "print-devnull": 8.93},
    },
    "peak_rss_mib": [242, 319],
}

CASES: dict[str, tuple[list[str], str]] = {
    # name: (extra arguments, where stdout goes)
    "shallow": ([], "devnull"),
    "deep": (["--deep-iteration"], "devnull"),
    "print-devnull": (["--print-data-log"], "devnull"),
    "print-file": (["--print-data-log"], "file"),
}


@dataclass
class Figure:
    segment: str
    case: str
    best_s: float
    runs_s: list[float]
    peak_rss_mib: float
    cpu_s: float  # user + system time of the best run
    output_bytes: int
    exit_code: int
    kafka_s: float | None

    @property
    def ratio(self) -> float | None:
        return None if self.kafka_s is None else self.best_s / self.kafka_s


def kdump_command(segment: Path, extra: list[str]) -> list[str]:
    return [sys.executable, "-m", "kdump", "files", "--files", str(segment), *extra]


def run_once(argv: list[str], stdout_path: str) -> tuple[float, float, float, int, int]:
    """Run ``argv`` once; returns (wall seconds, peak RSS MiB, CPU seconds, exit code, bytes written)."""
    with open(stdout_path, "wb") as out, tempfile.TemporaryFile() as err:
        started = time.perf_counter()
        proc = subprocess.Popen(argv, stdout=out, stderr=err, cwd=REPO)
        # wait4 reaps this child and returns its own rusage (the RUSAGE_CHILDREN accounting, per child)
        _, status, usage = os.wait4(proc.pid, 0)
        wall = time.perf_counter() - started
        proc.returncode = code = os.waitstatus_to_exitcode(status)
        if code != 0:
            err.seek(0)
            sys.stderr.write(err.read().decode("utf-8", "replace")[-2000:])
    written = os.path.getsize(stdout_path) if stdout_path != os.devnull else 0
    rss_mib = usage.ru_maxrss / 1024  # Linux reports KiB
    return wall, rss_mib, usage.ru_utime + usage.ru_stime, code, written


def warm(path: Path) -> None:
    """Read the file once so that every timed run finds it in the page cache."""
    with open(path, "rb") as f:
        while f.read(1 << 24):
            pass


def measure(segment_name: str, segment: Path, case: str, repeat: int, scratch: Path, quick: bool) -> Figure:
    extra, sink = CASES[case]
    argv = kdump_command(segment, extra)
    runs = []
    for _ in range(repeat):
        target = os.devnull if sink == "devnull" else str(scratch / "print-out.txt")
        runs.append(run_once(argv, target))
        if sink == "file":
            os.unlink(target)
    best = min(runs, key=lambda r: r[0])
    kafka = None if quick else KAFKA_REFERENCE["seconds"].get(segment_name, {}).get(case)
    return Figure(
        segment=segment_name,
        case=case,
        best_s=round(best[0], 3),
        runs_s=[round(r[0], 3) for r in runs],
        peak_rss_mib=round(max(r[1] for r in runs), 1),
        cpu_s=round(best[2], 3),
        output_bytes=best[4],
        exit_code=max(r[3] for r in runs),
        kafka_s=kafka,
    )


def machine_info() -> dict[str, object]:
    cpu = platform.processor()
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                cpu = line.split(":", 1)[1].strip()
                break
    except OSError:
        pass
    mem = None
    try:
        for line in Path("/proc/meminfo").read_text().splitlines():
            if line.startswith("MemTotal:"):
                mem = round(int(line.split()[1]) / 2**20, 1)
    except OSError:
        pass
    return {
        "hostname": platform.node(),
        "platform": platform.platform(),
        "cpu": cpu,
        "cpus": os.cpu_count(),
        "memory_gib": mem,
        "python": sys.version.split()[0],
        "implementation": platform.python_implementation(),
    }


def git_commit() -> dict[str, object]:
    """The kdump commit (read-only git queries; ``--no-optional-locks`` keeps status from touching the index)."""

    def git(*args: str) -> str:
        return subprocess.run(
            ["git", "--no-optional-locks", *args], cwd=REPO, capture_output=True, text=True, check=True
        ).stdout.strip()

    try:
        return {
            "commit": git("rev-parse", "HEAD"),
            "dirty": bool(git("status", "--porcelain", "--untracked-files=no")),
        }
    except (OSError, subprocess.CalledProcessError):
        return {"commit": None, "dirty": None}


def profile_print(segment: Path, top: int = 10) -> str:
    """cProfile top-``top`` (by internal time) of ``kdump files --print-data-log`` on ``segment``."""
    with tempfile.TemporaryDirectory() as tmp:
        prof = Path(tmp) / "print.prof"
        argv = [sys.executable, "-m", "cProfile", "-o", str(prof), "-m", "kdump", "files"]
        argv += ["--files", str(segment), "--print-data-log"]
        with open(os.devnull, "wb") as out:
            subprocess.run(argv, stdout=out, cwd=REPO, check=True)
        buf = io.StringIO()
        stats = pstats.Stats(str(prof), stream=buf)
        stats.strip_dirs().sort_stats("tottime").print_stats(top)
        return buf.getvalue()


def table(figures: list[Figure], quick: bool) -> str:
    head = f"{'segment':<8} {'case':<14} {'best s':>8} {'runs s':<24} {'cpu s':>7} {'peak RSS':>9} {'output':>10}"
    if not quick:
        head += f" {'Kafka s':>8} {'kdump/Kafka':>11}"
    lines = [head, "-" * len(head)]
    for f in figures:
        line = (
            f"{f.segment:<8} {f.case:<14} {f.best_s:>8.2f} {' '.join(f'{r:.2f}' for r in f.runs_s):<24} "
            f"{f.cpu_s:>7.2f} {f.peak_rss_mib:>6.0f} MiB {_size(f.output_bytes):>10}"
        )
        if not quick:
            line += f" {f.kafka_s:>8.2f} {f.ratio:>10.2f}x" if f.kafka_s else f" {'-':>8} {'-':>11}"
        if f.exit_code:
            line += f"  (exit {f.exit_code})"
        lines.append(line)
    if not quick:
        lo, hi = KAFKA_REFERENCE["peak_rss_mib"]
        lines.append(f"Kafka peak RSS: {lo}-{hi} MiB")
    return "\n".join(lines)


def _size(n: int) -> str:
    return "-" if not n else f"{n / 2**20:.0f} MiB"


def build_big(data: Path) -> Path:
    """``big-0``: the uncompressed segment written four times over (about 1 GiB; offsets repeat, which only adds
    three non-consecutive-offset pairs to the deep runs' summaries)."""
    source = data / "plain-0" / make_segments.SEGMENT
    target = data / "big-0" / make_segments.SEGMENT
    if target.exists() and target.stat().st_size == 4 * source.stat().st_size:
        return target
    target.parent.mkdir(parents=True, exist_ok=True)
    with open(target, "wb") as out:
        for _ in range(4):
            with open(source, "rb") as f:
                while chunk := f.read(1 << 24):
                    out.write(chunk)
    return target


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description="Benchmark kdump files against kafka-dump-log.sh figures.")
    parser.add_argument("--quick", action="store_true", help="use the 10x smaller data set")
    parser.add_argument(
        "--repeat", type=int, default=3, help="runs per case; the best is reported (default 3)"
    )
    parser.add_argument(
        "--profile", action="store_true", help="also print a cProfile top-10 of the print path"
    )
    parser.add_argument(
        "--big",
        action="store_true",
        help="also measure a 1 GiB segment (the uncompressed one four times over) for time and peak RSS",
    )
    parser.add_argument(
        "--output",
        type=Path,
        help="where to write the JSON results (default bench/results/latest.json, latest-quick.json with --quick)",
    )
    args = parser.parse_args(argv)
    if args.output is None:
        args.output = BENCH / "results" / ("latest-quick.json" if args.quick else "latest.json")

    # Timed runs load kdump from bytecode, as an installed kdump does (pip compiles it); in an environment with
    # PYTHONDONTWRITEBYTECODE set nothing would ever be cached and every run would recompile every module.
    subprocess.run(
        [sys.executable, "-m", "compileall", "-q", str(REPO / "kdump")], check=True, capture_output=True
    )
    data = make_segments.build(args.quick)
    manifest = json.loads((data / "manifest.json").read_text())
    figures: list[Figure] = []
    with tempfile.TemporaryDirectory(dir=data) as scratch:
        for name in make_segments.LAYOUT:
            segment = data / name / make_segments.SEGMENT
            warm(segment)
            for case in CASES:
                fig = measure(name, segment, case, args.repeat, Path(scratch), args.quick)
                figures.append(fig)
                print(f"  {name} {case}: {fig.best_s:.2f} s", file=sys.stderr, flush=True)

        if args.big and not args.quick:
            big = build_big(data)
            warm(big)
            for case in ("shallow", "deep", "print-devnull"):
                fig = measure("big-0", big, case, 1, Path(scratch), True)
                figures.append(fig)
                print(
                    f"  big-0 {case}: {fig.best_s:.2f} s, {fig.peak_rss_mib:.0f} MiB",
                    file=sys.stderr,
                    flush=True,
                )

    result = {
        "date": datetime.datetime.now(datetime.UTC).isoformat(timespec="seconds"),
        "quick": args.quick,
        "repeat": args.repeat,
        "machine": machine_info(),
        "kdump": git_commit(),
        "data": manifest,
        "figures": [
            asdict(f) | {"kdump_over_kafka": None if f.ratio is None else round(f.ratio, 2)} for f in figures
        ],
        "kafka_reference": KAFKA_REFERENCE,
    }
    args.output.parent.mkdir(parents=True, exist_ok=True)
    tmp = args.output.with_suffix(".json.tmp")
    tmp.write_text(json.dumps(result, indent=2) + "\n")
    tmp.replace(args.output)

    print(table(figures, args.quick))
    print(f"\nresults written to {args.output}")
    if args.profile:
        slowest = max(figures, key=lambda f: f.best_s)
        target = make_segments.build(True, verbose=False) / slowest.segment / make_segments.SEGMENT
        print(
            f"\ncProfile top-10 (internal time) of `kdump files --print-data-log` on the quick data set, "
            f"{target.relative_to(REPO)} (slowest case: {slowest.segment} {slowest.case})"
        )
        print(profile_print(target))
    return 0 if all(f.exit_code == 0 for f in figures) else 1


if __name__ == "__main__":
    sys.exit(main())
