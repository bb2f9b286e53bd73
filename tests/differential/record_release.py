"""Recording what another release's real tool prints for every run of the corpus MANIFEST (``python -m
tests.differential --record 4.1``), kept compactly beside kdump's tests as differences from the outputs the
corpus holds (Kafka 4.0's, or 3.9's for the 3.9 rows): :mod:`tests.release_outputs`.

The runs go through the release's resident JVM (``KafkaDumpServer``) in a copy of the corpus (the tool may create
an index it does not find); a run that differs there (or dies) is run again through the release's own
``kafka-dump-log.sh`` (a fresh JVM), whose output is what is stored, so that stack traces are the script's.
"""

from __future__ import annotations

import shutil
import tempfile
from pathlib import Path

from tests.corpus import load_manifest
from tests.release_outputs import HEADER, encode

from .kafka import DumpServer, run_script

ROOT_PLACEHOLDER = b"${CORPUS_ROOT}"
RELEASES = {"4.1": "kafka-4.1.0"}


def _trace_head(err: bytes) -> bytes:
    at = err.find(b"Exception in thread ")
    if at < 0:
        return err
    end = err.find(b"\n", at)
    return err[: end if end >= 0 else len(err)]


def record(version: str, corpus: Path, target: Path, progress: bool = True) -> int:
    tool = RELEASES[version]
    runs = load_manifest(corpus)
    work = Path(tempfile.mkdtemp(prefix="kdump-record-"))
    try:
        for name in ("data", "data-kafka39-zk", "synthetic-legacy", "damaged"):
            shutil.copytree(corpus / name, work / name, symlinks=True)
        root = str(work.resolve()).encode()
        if target.exists():
            shutil.rmtree(target)
        target.mkdir(parents=True)
        rows = []
        stored = 0
        with DumpServer(work, version=version) as server:
            for n, run in enumerate(runs):
                got = server.run(list(run.argv))
                out = got.out.replace(root, ROOT_PLACEHOLDER)
                err = got.err.replace(root, ROOT_PLACEHOLDER)
                base_out, base_err = run.expected_stdout(corpus), run.expected_stderr(corpus)
                same = (got.code, out, _trace_head(err)) == (run.exit_code, base_out, _trace_head(base_err))
                code = got.code
                if not same or b"Exception in thread " in err:
                    script = run_script(list(run.argv), work, version=version)
                    code = script.code
                    out = script.out.replace(root, ROOT_PLACEHOLDER)
                    err = script.err.replace(root, ROOT_PLACEHOLDER)
                stem = run.stdout_file.removesuffix(".txt")
                out_entry = encode(target, stem, "stdout", base_out, out)
                err_entry = encode(target, stem, "stderr", base_err, err)
                stored += (out_entry, err_entry) != ("=", "=") and (out_entry, err_entry) != ("=", "-")
                rows.append(f"{run.line}\t{code}\t{out_entry}\t{err_entry}\n")
                if progress and n % 100 == 0:
                    print(f"{n}/{len(runs)} runs, {stored} differ", flush=True)
        with open(target / "MANIFEST.tsv", "w", encoding="utf-8") as f:
            f.write(HEADER)
            f.writelines(rows)
        print(f"{len(runs)} runs of {tool}, {stored} differ from the corpus's output; stored in {target}")
        return 0
    finally:
        shutil.rmtree(work, ignore_errors=True)
