"""Benchmark schema-registry decoding: ``kdump files --print-data-log`` against
``kdump files --decode-values schema-registry`` (which implies ``--print-data-log``) on the Avro variant of
the benchmark segment (``bench/make_segments.py --avro``: 2,230,000 records, values an Avro record framed in
Confluent's wire format, 100 bytes each; ``_schemas-0`` beside it).  The target (issue 19): decoding makes
``--print-data-log`` at most 2x slower.

Each case is a child process writing to /dev/null, best of ``--repeat`` by wall time; CPU time (user +
system of the child) is reported too, as the fairer figure on a shared machine.  Results go to
``bench/results/avro-latest.json`` (``avro-latest-quick.json`` with ``--quick``).

Usage::

    .venv/bin/python bench/avro_bench.py [--quick] [--repeat N]
"""

from __future__ import annotations

import argparse
import datetime
import json
import os
import subprocess
import sys
from pathlib import Path

BENCH = Path(__file__).resolve().parent
sys.path.insert(0, str(BENCH))

import make_segments  # noqa: E402
from run import REPO, git_commit, kdump_command, machine_info, run_once, warm  # noqa: E402

CASES = {
    "print-devnull": ["--print-data-log"],
    "decode-devnull": ["--decode-values", "schema-registry"],
}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--quick", action="store_true", help="the 10x smaller data set")
    parser.add_argument("--repeat", type=int, default=3, help="runs per case (default 3; the best is kept)")
    args = parser.parse_args(argv)
    subprocess.run(
        [sys.executable, "-m", "compileall", "-q", str(REPO / "kdump")], check=True, capture_output=True
    )
    data = make_segments.build_avro(args.quick)
    segment = data / "avro-0" / make_segments.SEGMENT
    warm(segment)
    figures = {}
    for case, extra in CASES.items():
        runs = [run_once(kdump_command(segment, extra), os.devnull) for _ in range(args.repeat)]
        best = min(runs, key=lambda r: r[0])
        figures[case] = {
            "best_s": round(best[0], 3),
            "runs_s": [round(r[0], 3) for r in runs],
            "best_cpu_s": round(min(r[2] for r in runs), 3),
            "peak_rss_mib": round(max(r[1] for r in runs), 1),
            "exit_code": max(r[3] for r in runs),
        }
        print(f"  {case}: {best[0]:.2f} s wall, {figures[case]['best_cpu_s']:.2f} s CPU", file=sys.stderr)
    ratio_wall = figures["decode-devnull"]["best_s"] / figures["print-devnull"]["best_s"]
    ratio_cpu = figures["decode-devnull"]["best_cpu_s"] / figures["print-devnull"]["best_cpu_s"]
    result = {
        "date": datetime.datetime.now(datetime.UTC).isoformat(timespec="seconds"),
        "quick": args.quick,
        "repeat": args.repeat,
        "machine": machine_info(),
        "load_average": os.getloadavg(),
        "kdump": git_commit(),
        "data": json.loads((data / "manifest.json").read_text()),
        "figures": figures,
        "decode_over_print": {"wall": round(ratio_wall, 2), "cpu": round(ratio_cpu, 2)},
        "target": "decode_over_print <= 2.0",
    }
    out = BENCH / "results" / ("avro-latest-quick.json" if args.quick else "avro-latest.json")
    out.write_text(json.dumps(result, indent=2) + "\n")
    print(f"decode / print: {ratio_wall:.2f}x wall, {ratio_cpu:.2f}x CPU  (results: {out.relative_to(REPO)})")
    return 0 if all(f["exit_code"] == 0 for f in figures.values()) else 1


if __name__ == "__main__":
    sys.exit(main())
