"""``python -m tests.fuzz``: the long fuzzing run, for local use.

    python -m tests.fuzz                       # every target, 2000 inputs each, seed 0
    python -m tests.fuzz --seconds 600         # every target for ten minutes in all
    python -m tests.fuzz -t segment -n 20000 --seed 7 --corpus ../shared/kafka-corpus --save /tmp/findings
    python -m tests.fuzz -t segment --seed 7 --start 1234 -n 1   # reproduce one finding

Exits 1 when something was found (each finding is printed with its target, seed and iteration).
"""

from __future__ import annotations

import argparse
import os
import resource
import sys
import tempfile
from pathlib import Path

from tests.corpus import CORPUS

from .harness import DEFAULT_TIMEOUT, build_targets, fuzz


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m tests.fuzz", description=__doc__.split("\n\n")[0])
    parser.add_argument("-t", "--target", action="append", help="target to fuzz (repeatable; default: all)")
    parser.add_argument("-n", "--iterations", type=int, default=2000, help="inputs per target (default 2000)")
    parser.add_argument(
        "--seconds", type=float, help="run for this long in all instead of -n inputs per target"
    )
    parser.add_argument("--seed", type=int, default=0, help="random seed (default 0)")
    parser.add_argument(
        "--start", type=int, default=0, help="first iteration number (to reproduce a finding)"
    )
    parser.add_argument(
        "--corpus",
        type=Path,
        default=CORPUS,
        help="also seed from this reference corpus when it exists (default ../shared/kafka-corpus)",
    )
    parser.add_argument(
        "--no-corpus", action="store_true", help="seed from built files and the fixtures only"
    )
    parser.add_argument(
        "--timeout", type=float, default=DEFAULT_TIMEOUT, help="per-input time limit in seconds"
    )
    parser.add_argument("--memory", type=int, default=2048, help="address-space limit in MiB (0: none)")
    parser.add_argument("--save", type=Path, help="copy the files of every finding into this directory")
    parser.add_argument("--list", action="store_true", help="list the targets and their seed counts")
    args = parser.parse_args(argv)

    if args.memory:
        limit = args.memory << 20
        resource.setrlimit(resource.RLIMIT_AS, (limit, limit))
    targets = build_targets(None if args.no_corpus else args.corpus)
    if args.list:
        for name, target in targets.items():
            print(f"{name}: {len(target.seeds)} seeds")
        return 0
    chosen = args.target or list(targets)
    unknown = [t for t in chosen if t not in targets]
    if unknown:
        parser.error(f"unknown target(s) {', '.join(unknown)}; choose from {', '.join(targets)}")
    # tmpfs when there is one: every input is written to a file, and salvage fsyncs what it writes
    shm = "/dev/shm" if os.path.isdir("/dev/shm") and os.access("/dev/shm", os.W_OK) else None
    with tempfile.TemporaryDirectory(prefix="kdump-fuzz-", dir=shm) as work:
        findings = fuzz(
            [targets[t] for t in chosen],
            seed=args.seed,
            start=args.start,
            iterations=args.iterations,
            seconds=args.seconds,
            workdir=Path(work),
            timeout=args.timeout,
            save_dir=args.save,
            progress=lambda line: print(line, file=sys.stderr, flush=True),
        )
    for finding in findings:
        print(finding.describe())
    print(f"{len(findings)} findings", file=sys.stderr)
    return 1 if findings else 0


if __name__ == "__main__":
    sys.exit(main())
