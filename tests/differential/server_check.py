"""The resident JVM (KafkaDumpServer) against the corpus: every Kafka 4.0 run of the MANIFEST replayed through
it must print what the real script printed (stack traces: their first line; the resident JVM's traces have
a few more frames, of the reflective call)."""

from __future__ import annotations

from pathlib import Path

from tests.corpus import load_manifest

from .kafka import DumpServer


def _trace_head(err: bytes) -> bytes:
    at = err.find(b"Exception in thread ")
    if at < 0:
        return err
    end = err.find(b"\n", at)
    return err[: end if end >= 0 else len(err)]


def check_server(corpus: Path, limit: int | None = None) -> int:
    runs = [r for r in load_manifest(corpus) if r.tool == "kafka-4.0.0"][:limit]
    root = str(corpus.resolve()).encode()
    bad = 0
    with DumpServer(corpus.resolve()) as server:
        for run in runs:
            got = server.run(list(run.argv))
            out = run.expected_stdout(corpus).replace(b"${CORPUS_ROOT}", root)
            err = run.expected_stderr(corpus).replace(b"${CORPUS_ROOT}", root)
            same = (got.code, got.out, _trace_head(got.err)) == (run.exit_code, out, _trace_head(err))
            if not same:
                bad += 1
                print(f"DIFFERS {run.id}: exit {got.code} vs {run.exit_code}, argv {list(run.argv)}")
    print(f"{len(runs) - bad}/{len(runs)} corpus runs reproduced by the resident JVM")
    return 1 if bad else 0
