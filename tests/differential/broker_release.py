"""Data of a real Kafka 4.1 broker (``tests/fixtures/broker-4.1``) and what the real 4.0 and 4.1 tools print for it.

The data was written by a single-node KRaft broker of the 4.1.0 distribution (``../shared/kafka-4.1.0``,
metadata.version 4.1-IV1, transaction.version 2, share.version 1; 384 MiB heap; stopped by its pid): a plain
topic, a compacted topic (overwritten keys, tombstones, cleaned segments), transactions of the 4.1 Java
producer (``kafka-producer-perf-test.sh --transactional-id``: transaction.version 2 markers), a
consumer-protocol group and a classic group (``__consumer_offsets``), a share group (``__share_group_state``),
KRaft snapshots (``.checkpoint``, 4.1's records, LeaderChange control records in ``__cluster_metadata``).  The
script that made it is ``tests/differential/broker41.sh``.

    python -m tests.differential.broker_release     # (re)record both tools' outputs of the runs

``__cluster_metadata-0``'s segment is the first 6,969 bytes of the broker's (whole batches: the registration,
the first LeaderChange, the topics' records), without its indexes.

``expected/MANIFEST.tsv``: one row per run and release (``id``, ``release``, exit status, stdout, stderr, the
arguments separated by spaces); stdout and stderr as in :mod:`tests.release_outputs`: for 4.0 ``-`` (empty) or
a file of ``expected/4.0``, for 4.1 ``=`` (4.0's bytes), ``-`` or a file of ``expected/4.1`` (a line delta
against 4.0's output, or whole).  The fixture directory's absolute path is written as ``${ROOT}``.
"""

from __future__ import annotations

import shutil
import sys
import tempfile
from dataclasses import dataclass
from pathlib import Path

HERE = Path(__file__).resolve().parent
FIXTURE = HERE.parent / "fixtures" / "broker-4.1"
EXPECTED = FIXTURE / "expected"
RELEASES = ("4.0", "4.1")
ROOT_PLACEHOLDER = b"${ROOT}"
_DECODERS = {
    "__consumer_offsets": "--offsets-decoder",
    "__transaction_state": "--transaction-log-decoder",
    "__share_group_state": "--share-group-state-decoder",
    "__cluster_metadata": "--cluster-metadata-decoder",
}


@dataclass(frozen=True)
class BrokerRun:
    id: str
    argv: tuple[str, ...]


def runs() -> list[BrokerRun]:
    """The runs over the fixture's files: every option set of a .log/.checkpoint (and its topic's decoder),
    indexes and producer snapshots as they are."""
    out = []
    data = FIXTURE / "data"
    for path in sorted(data.rglob("*")):
        if not path.is_file():
            continue
        rel = path.relative_to(FIXTURE).as_posix()
        topic = path.parent.name.rsplit("-", 1)[0]
        if path.suffix in (".log", ".checkpoint"):
            sets = [
                (),
                ("--deep-iteration",),
                ("--print-data-log",),
                ("--deep-iteration", "--skip-record-metadata"),
            ]
            decoder = _DECODERS.get(
                topic, "--cluster-metadata-decoder" if path.suffix == ".checkpoint" else None
            )
            if decoder is not None:
                sets.append((decoder,))
            if topic == "__consumer_offsets":
                sets.append(("--offsets-decoder", "--skip-record-metadata"))
        else:
            sets = [()]
        for options in sets:
            name = rel.removeprefix("data/") + "".join("." + o.lstrip("-") for o in options)
            out.append(BrokerRun(name.replace("/", "__"), ("--files", rel, *options)))
    out.append(BrokerRun("help", ("--help",)))
    out.append(BrokerRun("version", ("--version",)))
    return out


def expected(release: str, run: BrokerRun, root: Path) -> tuple[int, bytes, bytes]:
    """What the real tool of ``release`` printed for ``run`` (the placeholder replaced by ``root``)."""
    from tests.release_outputs import decode

    rows = {}
    with open(EXPECTED / "MANIFEST.tsv", encoding="utf-8") as f:
        next(f)
        for line in f:
            rid, rel, code, out, err, _ = line.rstrip("\n").split("\t")
            rows[(rid, rel)] = (int(code), out, err)
    base_code, base_out, base_err = rows[(run.id, "4.0")]
    out40 = decode(EXPECTED, base_out, b"")
    err40 = decode(EXPECTED, base_err, b"")
    code, out, err = rows[(run.id, release)]
    if release != "4.0":
        out, err = decode(EXPECTED, out, out40), decode(EXPECTED, err, err40)
    else:
        out, err = out40, err40
    path = str(root).encode()
    return code, out.replace(ROOT_PLACEHOLDER, path), err.replace(ROOT_PLACEHOLDER, path)


def record() -> int:
    from .kafka import DumpServer, run_script, unavailable_reason

    for release in RELEASES:
        if (reason := unavailable_reason(release)) is not None:
            print(f"cannot run the real {release} tool: {reason}", file=sys.stderr)
            return 2
    from tests.release_outputs import encode

    if EXPECTED.exists():
        shutil.rmtree(EXPECTED)
    EXPECTED.mkdir(parents=True)
    all_runs = runs()
    outcomes: dict[tuple[str, str], tuple[int, bytes, bytes]] = {}
    for release in RELEASES:
        work = Path(tempfile.mkdtemp(prefix="kdump-broker41-"))
        try:
            shutil.copytree(FIXTURE / "data", work / "data")
            root = str(work.resolve()).encode()
            with DumpServer(work, version=release) as server:
                for run in all_runs:
                    got = server.run(list(run.argv))
                    if b"Exception in thread " in got.err:  # the script's own stack trace
                        got = run_script(list(run.argv), work, version=release)
                    outcomes[(run.id, release)] = (
                        got.code,
                        got.out.replace(root, ROOT_PLACEHOLDER),
                        got.err.replace(root, ROOT_PLACEHOLDER),
                    )
        finally:
            shutil.rmtree(work, ignore_errors=True)
    rows = ["id\trelease\texit_code\tstdout\tstderr\targv\n"]
    for run in all_runs:
        _, out40, err40 = outcomes[(run.id, "4.0")]
        for release in RELEASES:
            code, out, err = outcomes[(run.id, release)]
            base_out, base_err = (None, None) if release == "4.0" else (out40, err40)
            out_entry = encode(EXPECTED, f"{release}/{run.id}", "stdout", base_out, out)
            err_entry = encode(EXPECTED, f"{release}/{run.id}", "stderr", base_err, err)
            rows.append(f"{run.id}\t{release}\t{code}\t{out_entry}\t{err_entry}\t{' '.join(run.argv)}\n")
    (EXPECTED / "MANIFEST.tsv").write_text("".join(rows), encoding="utf-8")
    print(f"{len(all_runs)} runs x {len(RELEASES)} releases recorded in {EXPECTED}")
    return 0


if __name__ == "__main__":
    sys.exit(record())
