"""Differential testing against the real kafka-dump-log.sh (tests/differential, README "Differential testing").

Always: every kept reproducer (tests/fixtures/differential) replays through kdump against the real tool's
recorded output.  With Java and the Kafka 4.0 distribution (marker ``kafka``): a bounded sample of generated cases
through both tools, and the resident JVM checked against the script itself.
"""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from tests.differential import fixtures
from tests.differential.kafka import unavailable_reason
from tests.differential.known import open_issue
from tests.replay import differences, run_kdump

REPRODUCERS = fixtures.load()
NO_KAFKA = unavailable_reason()
SAMPLE_SEED = 20
SAMPLE_CASES = int(os.environ.get("KDUMP_DIFFTEST_SAMPLE", "300"))


def _params():  # noqa: ANN202
    out = []
    for r in REPRODUCERS:
        marks = [pytest.mark.xfail(strict=True, reason=r.open_issue)] if r.open_issue else []
        out.append(pytest.param(r, id=r.name, marks=marks))
    return out


def test_reproducers_exist() -> None:
    assert len(REPRODUCERS) >= 5


@pytest.mark.parametrize("reproducer", _params())
def test_reproducer_replays(reproducer: fixtures.Reproducer) -> None:
    previous = os.getcwd()
    os.chdir(reproducer.directory)
    try:
        actual = run_kdump(list(reproducer.argv))
    finally:
        os.chdir(previous)
    problems = differences(reproducer.expected(), actual, [])
    assert not problems, (
        f"{reproducer.name} ({reproducer.note}): {problems}\n{actual[1][-2000:]!r}\n{actual[2]!r}"
    )


@pytest.mark.kafka
@pytest.mark.skipif(NO_KAFKA is not None, reason=f"the real tool cannot run: {NO_KAFKA}")
def test_sample_matches_kafka() -> None:
    from tests.differential.runner import run

    results = run(seed=SAMPLE_SEED, start=0, count=SAMPLE_CASES, jobs=1, full_corpus=None)
    assert len(results) == SAMPLE_CASES
    unexpected = [
        r
        for r in results
        if r.status == "kdump-timeout"
        or (r.status == "diverges" and (r.kafka is None or open_issue(r.kafka.err) is None))
    ]
    assert not unexpected, "\n".join(f"{r.name} {r.label} {r.argv}: {r.problems}" for r in unexpected)
    assert sum(r.status == "same" for r in results) >= 0.9 * SAMPLE_CASES


@pytest.mark.kafka
@pytest.mark.skipif(NO_KAFKA is not None, reason=f"the real tool cannot run: {NO_KAFKA}")
def test_resident_jvm_prints_what_the_script_prints(tmp_path: Path) -> None:
    """The speed-up (one JVM for many runs) against the real kafka-dump-log.sh, on a few reproducers."""
    import shutil

    from tests.differential.kafka import DumpServer, run_script

    chosen = REPRODUCERS[:3]
    assert chosen
    for r in chosen:  # in copies: Kafka's tool creates an index it does not find
        for where in ("script", "resident"):
            shutil.copytree(r.directory, tmp_path / r.name / where)
        script = run_script(r.argv, tmp_path / r.name / "script")
        with DumpServer(tmp_path / r.name / "resident") as server:
            resident = server.run(r.argv)
        head = lambda err: err.split(b"\n\tat ", 1)[0]  # noqa: E731 - the traces differ below the first frame

        def same_dir(text: bytes, where: str, name: str = r.name) -> bytes:
            """The two copies' absolute paths (``Non-consecutive offsets in ...``) as one placeholder."""
            return text.replace(str(tmp_path / name / where).encode(), b"${CASE}")

        assert (
            resident.code,
            same_dir(resident.out, "resident"),
            same_dir(head(resident.err), "resident"),
        ) == (
            script.code,
            same_dir(script.out, "script"),
            same_dir(head(script.err), "script"),
        )
