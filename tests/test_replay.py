"""Byte-exact replay of the real kafka-dump-log.sh runs: the bundled fixture subset always, the whole
reference corpus (../shared/kafka-corpus) when it is present."""

from __future__ import annotations

import pytest

from tests.corpus import CORPUS, FIXTURE_CORPUS, corpus_available, load_manifest, release_runs, supported_runs
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


# -- the other releases: the corpus replayed with --kafka-version against each release's own outputs ---------

RELEASE_41_RUNS = release_runs("kafka-4.1.0") if corpus_available() else []


@pytest.mark.corpus
@pytest.mark.skipif(not RELEASE_41_RUNS, reason=f"reference corpus not found at {CORPUS}")
@pytest.mark.parametrize("run", _params(RELEASE_41_RUNS) or [pytest.param(None, id="no-corpus")])
def test_corpus_replay_kafka_41(run) -> None:  # noqa: ANN001
    """Every corpus run as the real Kafka 4.1.0 tool printed it (tests/fixtures/kafka-4.1.0)."""
    assert_replays(CORPUS, run)


#: Kafka 4.2.0 changed only --skip-record-metadata's help text (DumpLogSegments of the tag 4.2.0-rc1 against
#: 4.1.0; the README of ../shared/kafka-4.1.0 says the same of the release): its help table's row, as jopt-simple
#: wraps and pads it, in place of 4.1's.  No 4.2 distribution is at hand, so 4.2's outputs are 4.1's with this
#: row and the version.
_SKIP_ROW_41 = (
    b"--skip-record-metadata               Whether to skip printing metadata for each \n"
    b"                                       record.                                  \n"
)
_SKIP_ROW_42 = (
    b"--skip-record-metadata               Skip metadata when printing records. This  \n"
    b"                                       flag also skips control records.         \n"
)


@pytest.mark.corpus
@pytest.mark.skipif(not RELEASE_41_RUNS, reason=f"reference corpus not found at {CORPUS}")
@pytest.mark.parametrize("run", _params(RELEASE_41_RUNS) or [pytest.param(None, id="no-corpus")])
def test_corpus_replay_kafka_42(run, monkeypatch) -> None:  # noqa: ANN001
    """Every corpus run in 4.2 mode: 4.1's outputs with 4.2's help row and version."""
    out, err = run.expected_stdout(CORPUS), run.expected_stderr(CORPUS)
    if run.argv == ("--version",):
        assert out == b"4.1.0\n"
        out = b"4.2.0\n"
    if _SKIP_ROW_41 in err:
        err = err.replace(_SKIP_ROW_41, _SKIP_ROW_42)
    monkeypatch.setattr(type(run), "expected_stdout", lambda self, root: out)
    monkeypatch.setattr(type(run), "expected_stderr", lambda self, root: err)
    assert_replays(CORPUS, run, "4.2")


def test_default_release_is_the_newest(monkeypatch) -> None:  # noqa: ANN001
    """Without --kafka-version and KDUMP_KAFKA_VERSION kdump files is Kafka 4.2's tool; the option wins over the
    variable; a patch release prints its own version; a bad value is a usage error naming the releases."""
    from tests.replay import run_kdump

    monkeypatch.delenv("KDUMP_KAFKA_VERSION", raising=False)
    assert run_kdump(["--version"]) == (0, b"4.2.0\n", b"")
    monkeypatch.setenv("KDUMP_KAFKA_VERSION", "4.1")
    assert run_kdump(["--version"]) == (0, b"4.1.0\n", b"")
    assert run_kdump(["--version", "--kafka-version", "4.0"]) == (0, b"4.0.0\n", b"")
    assert run_kdump(["--kafka-version=4.1.1", "--version"]) == (0, b"4.1.1\n", b"")
    code, out, err = run_kdump(["--kafka-version", "5.0", "--version"])
    assert (code, out) == (2, b"") and b"3.9, 4.0, 4.1, 4.2" in err and err.count(b"\n") == 1, err
    monkeypatch.setenv("KDUMP_KAFKA_VERSION", "2.8")
    code, out, err = run_kdump(["--version"])
    assert code == 2 and b"KDUMP_KAFKA_VERSION" in err and b"3.9, 4.0, 4.1, 4.2" in err, err


def test_compat_version_names_the_releases() -> None:
    from kdump import KAFKA_COMPAT_VERSION
    from kdump.storage.kafka_release import LINES

    assert KAFKA_COMPAT_VERSION == ", ".join(LINES)


# -- Kafka 3.9: the corpus's 3.9 runs (its own data and 15 runs on 4.0 files), every category ----------------

RELEASE_39_RUNS = (
    [r for r in load_manifest(CORPUS) if r.tool == "kafka-3.9.0" and r.category != "state-file"]
    if corpus_available()
    else []
)


@pytest.mark.corpus
@pytest.mark.skipif(not RELEASE_39_RUNS, reason=f"reference corpus not found at {CORPUS}")
@pytest.mark.parametrize("run", _params(RELEASE_39_RUNS) or [pytest.param(None, id="no-corpus")])
def test_corpus_replay_kafka_39(run) -> None:  # noqa: ANN001
    """Every 3.9.0 run of the corpus in 3.9 mode (help, decoders included: 3.9 has no share-group-state decoder
    and knows group record types 0-8)."""
    assert_replays(CORPUS, run)
