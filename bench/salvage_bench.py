"""Wall time and peak RSS of ``kdump salvage`` on segments with scattered damage (and on an intact one).

The segments are the bench data set's (``bench/make_segments.py``; built when missing): a 16 MiB prefix of
``plain-0`` (cut at a batch boundary) and the whole 253 MiB ``plain-0`` (``--source zstd`` takes ``zstd-0``
instead), each copied to ``bench/data/salvage/`` with N random bytes changed (positions and new values from a
seeded generator, so the damaged bytes are the same on every run).  Each case runs
``python -m kdump salvage <segment> --out <dir> --json`` as a child process; the table gives its wall time, its
peak RSS (``ru_maxrss`` from ``os.wait4``), what it kept and lost, and a digest of the JSON report (paths and
schema version left out) and of the new segment, so that two versions of kdump can be checked to salvage the same.

Usage::

    .venv/bin/python bench/salvage_bench.py                       # the three default cases
    .venv/bin/python bench/salvage_bench.py --case 16:100 --case 256:0 --repeat 3
    .venv/bin/python bench/salvage_bench.py --kdump /path/to/other/checkout --timeout 1200

``--case MIB:FLIPS`` (repeatable; MIB 0 or above the segment means the whole segment): the segment's size and
the number of changed bytes.  ``--kdump DIR`` runs the ``kdump`` package found in DIR (another checkout, e.g.
the version before a change).  ``--timeout`` stops a run after that many seconds (reported as ``>``).
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import random
import shutil
import signal
import struct
import subprocess
import sys
import time
from pathlib import Path

BENCH = Path(__file__).resolve().parent
sys.path.insert(0, str(BENCH.parent))

from make_segments import SEGMENT, data_dir  # noqa: E402

SEED = 20251125
DEFAULT_CASES = ("16:100", "256:2000", "256:0")
#: Left out of the digest: paths, and the JSON schema's version (not a fact of the salvage).
_LEFT_OUT = {"file", "output", "offsetIndex", "timeIndex", "version"}


def source_segment(source: str) -> Path:
    path = data_dir(False) / f"{source}-0" / SEGMENT
    if not path.exists():
        subprocess.run([sys.executable, str(BENCH / "make_segments.py")], check=True)
    return path


def prefix_size(path: Path, limit: int) -> int:
    """The largest batch boundary of ``path`` at most ``limit`` bytes in (the whole file when ``limit`` is 0)."""
    total = path.stat().st_size
    if limit <= 0 or limit >= total:
        return total
    position = 0
    with open(path, "rb") as f:
        while True:
            f.seek(position + 8)
            size = struct.unpack(">i", f.read(4))[0]
            if position + 12 + size > limit:
                return position
            position += 12 + size


def damaged_copy(path: Path, mib: int, flips: int, seed: int, work: Path) -> Path:
    """``work/<source>-<mib>m-<flips>f-<seed>/<segment>``: a prefix of ``path`` with ``flips`` bytes changed."""
    size = prefix_size(path, mib << 20)
    target = work / f"{path.parent.name}-{mib}m-{flips}f-{seed}" / SEGMENT
    if target.exists() and target.stat().st_size == size:
        return target
    target.parent.mkdir(parents=True, exist_ok=True)
    with open(path, "rb") as src, open(target, "wb") as dst:
        left = size
        while left:
            chunk = src.read(min(left, 16 << 20))
            dst.write(chunk)
            left -= len(chunk)
    rng = random.Random(f"{seed}:{mib}:{flips}")
    with open(target, "r+b") as f:
        for position in sorted(rng.sample(range(size), flips)):
            f.seek(position)
            old = f.read(1)[0]
            f.seek(position)
            f.write(bytes([old ^ rng.randrange(1, 256)]))
    return target


def run_once(kdump_root: Path, segment: Path, out: Path, timeout: float | None) -> dict:
    shutil.rmtree(out, ignore_errors=True)
    env = dict(os.environ, PYTHONPATH=str(kdump_root))
    report = out.parent / (out.name + ".json")
    started = time.perf_counter()
    with open(report, "wb") as stdout:
        child = subprocess.Popen(
            [sys.executable, "-m", "kdump", "salvage", str(segment), "--out", str(out), "--json"],
            cwd=kdump_root,
            env=env,
            stdout=stdout,
            stderr=subprocess.PIPE,
            start_new_session=True,
        )
        deadline = None if timeout is None else started + timeout
        while True:
            pid, status, usage = os.wait4(child.pid, os.WNOHANG)
            if pid:
                break
            if deadline is not None and time.perf_counter() > deadline:
                os.killpg(child.pid, signal.SIGKILL)
                pid, status, usage = os.wait4(child.pid, 0)
                child.returncode = -9
                return {
                    "wall": time.perf_counter() - started,
                    "rss_mib": usage.ru_maxrss / 1024,
                    "timeout": True,
                }
            time.sleep(0.02)
    wall = time.perf_counter() - started
    code = os.waitstatus_to_exitcode(status)
    stderr = child.stderr.read().decode() if child.stderr else ""
    lines = [json.loads(line) for line in report.read_text().splitlines() if line.strip()]
    summary = lines[-1] if lines else {}
    digest = hashlib.sha256()
    for line in lines:
        digest.update(
            json.dumps({k: v for k, v in line.items() if k not in _LEFT_OUT}, sort_keys=True).encode()
        )
    written = out / segment.name
    if written.exists():
        with open(written, "rb") as f:
            for chunk in iter(lambda: f.read(16 << 20), b""):
                digest.update(chunk)
    report.unlink()
    shutil.rmtree(out, ignore_errors=True)
    return {
        "wall": wall,
        "rss_mib": usage.ru_maxrss / 1024,
        "exit": code,
        "kept_batches": summary.get("keptBatches"),
        "lost_ranges": summary.get("lostRanges"),
        "lost_bytes": summary.get("lostBytes"),
        "digest": digest.hexdigest()[:16],
        "stderr": stderr.strip().splitlines()[-1:] if code not in (0, 1) else [],
        "timeout": False,
    }


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument(
        "--case", action="append", help="MIB:FLIPS (repeatable); default: " + " ".join(DEFAULT_CASES)
    )
    parser.add_argument("--source", choices=("plain", "zstd"), default="plain")
    parser.add_argument("--seed", type=int, default=SEED)
    parser.add_argument(
        "--repeat", type=int, default=1, help="runs per case (the best wall time is reported)"
    )
    parser.add_argument("--timeout", type=float, help="seconds before a run is stopped")
    parser.add_argument("--kdump", type=Path, default=BENCH.parent, help="the checkout whose kdump runs")
    parser.add_argument("--json", action="store_true", help="print the results as JSON too")
    opts = parser.parse_args()
    path = source_segment(opts.source)
    work = data_dir(False) / "salvage"
    work.mkdir(parents=True, exist_ok=True)
    kdump_root = opts.kdump.resolve()
    results = []
    print(f"kdump from {kdump_root}, source {path}, seed {opts.seed}")
    print("| segment | flips | wall | peak RSS | exit | kept batches | lost ranges | lost bytes | digest |")
    print("| --- | --- | --- | --- | --- | --- | --- | --- | --- |")
    for case in opts.case or DEFAULT_CASES:
        mib, flips = (int(x) for x in case.split(":"))
        segment = damaged_copy(path, mib, flips, opts.seed, work)
        with open(segment, "rb") as f:  # in the page cache before the runs
            while f.read(16 << 20):
                pass
        runs = [
            run_once(kdump_root, segment, work / f"out-{os.getpid()}", opts.timeout)
            for _ in range(opts.repeat)
        ]
        best = min(runs, key=lambda r: r["wall"])
        size = segment.stat().st_size
        wall = f"> {best['wall']:.1f} s" if best["timeout"] else f"{best['wall']:.2f} s"
        print(
            f"| {size / (1 << 20):.0f} MiB | {flips} | {wall} | {best['rss_mib']:.0f} MiB | {best.get('exit', '-')} "
            f"| {best.get('kept_batches', '-')} | {best.get('lost_ranges', '-')} | {best.get('lost_bytes', '-')} "
            f"| {best.get('digest', '-')} |",
            flush=True,
        )
        for r in runs:
            if r.get("stderr"):
                print("   stderr:", r["stderr"])
        results.append({"case": case, "source": opts.source, "size": size, "runs": runs})
    if opts.json:
        print(json.dumps(results, indent=1))
    return 0


if __name__ == "__main__":
    sys.exit(main())
