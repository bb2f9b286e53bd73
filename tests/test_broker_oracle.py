"""kdump's judgments against real brokers (the broker oracle, ``tests/broker_oracle``).

The default suite replays the recorded scenarios in ``tests/fixtures/broker_oracle`` (data written by 3-node
Kafka 4.0 and 4.1 clusters, and what the brokers answered about it) without Java; ``pytest -m broker`` with
``KDUMP_BROKER_ORACLE=1`` makes new scenarios with real brokers first (minutes; one cluster at a time)."""

from __future__ import annotations

import json
import os
import time
from pathlib import Path

import pytest

from tests.broker_oracle.judge import HEALTHY, judge_fixture, scenarios

FIXTURES = Path(__file__).parent / "fixtures" / "broker_oracle"
SCENARIOS = scenarios(FIXTURES)


@pytest.mark.parametrize("answers", SCENARIOS, ids=[p.stem for p in SCENARIOS])
def test_scenario_agrees_with_the_broker(answers: Path, tmp_path: Path) -> None:
    verdict = judge_fixture(answers, tmp_path)
    assert verdict.checks > 0
    assert verdict.disagreements == [], "\n".join(verdict.disagreements)


def test_scenarios_cover_both_versions_and_every_kind() -> None:
    kinds = {(json.loads(p.read_text())["version"], json.loads(p.read_text())["kind"]) for p in SCENARIOS}
    for version in ("4.0.0", "4.1.0"):
        for kind in (
            "live",
            "killed",
            "clean",
            "damaged",
            "retained",
            "unclean",
            "ops",
            "cleaner",
            "hanging",
        ):
            assert (version, kind) in kinds, f"no {kind} scenario of Kafka {version}"


@pytest.mark.broker
@pytest.mark.skipif(
    os.environ.get("KDUMP_BROKER_ORACLE") != "1", reason="set KDUMP_BROKER_ORACLE=1 to run brokers"
)
@pytest.mark.parametrize("version", ["4.0.0", "4.1.0"])
def test_live_brokers_agree(version: str, tmp_path: Path) -> None:
    from tests.broker_oracle.cluster import unavailable_reason
    from tests.broker_oracle.record import run_all

    reason = unavailable_reason(version)
    if reason is not None:
        pytest.skip(reason)
    # KDUMP_BROKER_ORACLE_OUT keeps the new scenarios (to replace tests/fixtures/broker_oracle's by hand)
    out = Path(os.environ.get("KDUMP_BROKER_ORACLE_OUT") or tmp_path / "fixtures") / version
    started = time.monotonic()
    names = run_all(version, tmp_path / "work", out)
    disagreements = []
    checks = verify_problems = damages = found = 0
    for name in names:
        verdict = judge_fixture(out / f"{name}.json", tmp_path / "judge" / name)
        disagreements += [f"{name}: {d}" for d in verdict.disagreements]
        checks += verdict.checks
        damages += verdict.damages
        found += verdict.damages_found
        verify_problems += verdict.verify_problems if verdict.kind in HEALTHY else 0
    print(
        f"\nKafka {version}: {len(names)} scenarios, {checks} checks, {len(disagreements)} disagreements, "
        f"{verify_problems} verify problems on healthy scenarios, {found}/{damages} injected damages found, "
        f"{time.monotonic() - started:.0f} s"
    )
    assert disagreements == []
