"""``python -m tests.differential``: kdump files against the real kafka-dump-log.sh on generated cases.

    python -m tests.differential -n 2000 --seed 1                 # 2,000 cases, one process
    python -m tests.differential -n 20000 --seed 7 --jobs 2 --save /tmp/diverging
    python -m tests.differential --seed 7 --start 1234 -n 1 -v    # one case again, with both outputs
    python -m tests.differential --kind mutated --kind multi -n 500
    python -m tests.differential --check-server                   # the resident JVM against the corpus
    python -m tests.differential --record 4.1                     # the 4.1 tool's outputs of the corpus
    python -m tests.differential --kafka-version 4.0 --kafka-version 4.1 -n 20000   # both real tools, each
                                                                  # case against each (two resident JVMs)

Exits 1 when a case diverges (each is listed with its seed and number; --save keeps its files and both
outputs), 2 when the real tool is not available.
"""

from __future__ import annotations

import argparse
import collections
import sys
import time
from pathlib import Path

from .cases import KINDS, REPO, make_case
from .kafka import unavailable_reason
from .known import open_issue
from .runner import run


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="python -m tests.differential", description=__doc__.split("\n\n")[0]
    )
    parser.add_argument("-n", "--cases", type=int, default=1000, help="number of cases (default 1000)")
    parser.add_argument("--seed", type=int, default=0, help="random seed (default 0)")
    parser.add_argument("--start", type=int, default=0, help="first case number (to reproduce one)")
    parser.add_argument(
        "-j", "--jobs", type=int, default=1, help="processes, each with its own JVM (default 1)"
    )
    parser.add_argument(
        "--kind", action="append", choices=[k for k, _ in KINDS], help="only cases of this kind (repeatable)"
    )
    parser.add_argument(
        "--corpus",
        type=Path,
        default=REPO.parent / "shared" / "kafka-corpus",
        help="the reference corpus to draw inputs from when present (default ../shared/kafka-corpus)",
    )
    parser.add_argument("--no-corpus", action="store_true", help="built files and the bundled fixtures only")
    parser.add_argument(
        "--save", type=Path, help="keep every diverging case (files, arguments, both outputs)"
    )
    parser.add_argument(
        "--save-all", action="store_true", help="with --save: keep every case (to make fixtures)"
    )
    parser.add_argument(
        "--rerun", type=Path, help="run again the cases kept in this --save directory (of the same --seed)"
    )
    parser.add_argument("-v", "--verbose", action="store_true", help="print both outputs of diverging cases")
    parser.add_argument("--show", action="store_true", help="print the cases' arguments, run nothing")
    parser.add_argument(
        "--check-server", action="store_true", help="replay the corpus through the resident JVM and compare"
    )
    parser.add_argument(
        "--record",
        choices=["4.1"],
        help="run every corpus run through this release's real tool and store what differs from the corpus's "
        "outputs (tests/fixtures/kafka-<release>)",
    )
    parser.add_argument(
        "--kafka-version",
        action="append",
        choices=["4.0", "4.1"],
        help="the real tool(s) to compare with, kdump running as the same release (repeatable; default 4.0)",
    )
    args = parser.parse_args(argv)
    versions = tuple(dict.fromkeys(args.kafka_version or ["4.0"]))
    full = None if args.no_corpus else args.corpus
    kinds = tuple(args.kind or ())
    if args.show:
        for n in range(args.start, args.start + args.cases):
            case = make_case(args.seed, n, full, kinds)
            print(f"{args.seed}-{n} {case.kind} {case.label}: {case.argv}")
        return 0
    reason = next((r for v in versions if (r := unavailable_reason(v)) is not None), None)
    if reason:
        print(f"cannot run the real tool: {reason}", file=sys.stderr)
        return 2
    if args.record:
        from .record_release import RELEASES, record

        if (reason := unavailable_reason(args.record)) is not None:
            print(f"cannot run the real tool: {reason}", file=sys.stderr)
            return 2
        return record(args.record, args.corpus, REPO / "tests" / "fixtures" / RELEASES[args.record])
    if args.check_server:
        from .server_check import check_server

        return check_server(args.corpus)
    numbers = None
    if args.rerun is not None:
        numbers = sorted(
            {
                int(d.name.split("-")[1])
                for d in args.rerun.iterdir()
                if d.name.startswith(f"{args.seed}-") and (d / "case.json").is_file()
            }
        )
    started = time.monotonic()
    results = run(
        numbers=numbers,
        seed=args.seed,
        start=args.start,
        count=args.cases,
        jobs=args.jobs,
        full_corpus=full,
        kinds=kinds,
        save_dir=args.save,
        save_all=args.save_all,
        progress=lambda line: print(line, file=sys.stderr, flush=True),
        versions=versions,
    )
    elapsed = time.monotonic() - started
    statuses = collections.Counter(r.status for r in results)
    by_kind = collections.Counter(r.kind for r in results)
    diverging = [r for r in results if r.status in ("diverges", "kdump-timeout")]
    for r in diverging:
        print(f"DIVERGES {r.name} (Kafka {r.version}) [{r.kind} {r.label}] {r.problems} argv={r.argv}")
        if args.verbose and r.kafka and r.kdump:
            for who, o in (("kafka", r.kafka), ("kdump", r.kdump)):
                print(
                    f"--- {who}: exit {o.code}\n{o.out.decode(errors='replace')}{o.err.decode(errors='replace')}"
                )
    open_ones = [r for r in diverging if r.kafka is not None and open_issue(r.kafka.err)]
    signatures = collections.Counter(
        r.signature() + (f" [open: {open_issue(r.kafka.err)}]" if r in open_ones and r.kafka else "")
        for r in diverging
    )
    signatures.update(r.problems[0] for r in results if r.status == "deliberate")
    print(
        f"\n{len(results)} cases (seed {args.seed}, "
        + (f"cases {args.start}..{args.start + args.cases - 1}" if numbers is None else "rerun")
        + ") in "
        f"{elapsed:.0f} s with {args.jobs} job(s): "
        + ", ".join(f"{n} {s}" for s, n in sorted(statuses.items()))
    )
    print(
        f"diverging: {len(diverging)}, of which {len(open_ones)} in classes open in another issue "
        f"(tests/differential/known.py), {len(diverging) - len(open_ones)} others"
    )
    print("by kind: " + ", ".join(f"{k} {n}" for k, n in sorted(by_kind.items())))
    for version in versions:
        mine = [r for r in results if r.version == version]
        counts = collections.Counter(r.status for r in mine)
        print(
            f"Kafka {version}: {len(mine)} cases, "
            + ", ".join(f"{n} {s}" for s, n in sorted(counts.items()))
            + f"; diverging {sum(r in diverging for r in mine)}"
        )
    for sig, n in signatures.most_common():
        print(f"  {n:5d}  {sig}")
    return 1 if diverging else 0


if __name__ == "__main__":
    sys.exit(main())
