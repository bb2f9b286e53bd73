"""Byte-exact replay of the real kafka-dump-log.sh runs: the bundled fixture subset always, the whole
reference corpus (../shared/kafka-corpus) when it is present."""

from __future__ import annotations

import pytest

from tests.corpus import CORPUS, FIXTURE_CORPUS, corpus_available, supported_runs
from tests.replay import assert_replays

FIXTURE_RUNS = supported_runs(FIXTURE_CORPUS)
CORPUS_RUNS = supported_runs(CORPUS) if corpus_available() else []


def _params(runs):  # noqa: ANN001, ANN202
    return [pytest.param(r, id=r.id) for r in runs]


def test_fixture_subset_is_substantial() -> None:
    categories = {r.category for r in FIXTURE_RUNS}
    assert len(FIXTURE_RUNS) >= 130 and {"log", "cli"} <= categories


@pytest.mark.parametrize("run", _params(FIXTURE_RUNS))
def test_fixture_replay(run) -> None:  # noqa: ANN001
    assert_replays(FIXTURE_CORPUS, run)


@pytest.mark.corpus
@pytest.mark.skipif(not corpus_available(), reason=f"reference corpus not found at {CORPUS}")
@pytest.mark.parametrize("run", _params(CORPUS_RUNS) or [pytest.param(None, id="no-corpus")])
def test_corpus_replay(run) -> None:  # noqa: ANN001
    assert_replays(CORPUS, run)


@pytest.mark.corpus
@pytest.mark.skipif(not corpus_available(), reason=f"reference corpus not found at {CORPUS}")
def test_corpus_replay_covers_every_log_run() -> None:
    """The issue's count: every .log/.checkpoint run without decoder flags is replayed."""
    logs = [r for r in CORPUS_RUNS if r.category == "log"]
    assert sum(r.tool == "kafka-4.0.0" for r in logs) == 448
    assert sum(r.tool == "kafka-3.9.0" for r in logs) == 69
