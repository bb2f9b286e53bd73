"""``--now`` (report, retention, txn) and ``--max-timeout-ms`` (report, txn) are one option each
(kdump/cli/time_options.py): parsed alike, and ``report`` judges a transaction as ``txn`` does with the same
values."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest
from click.testing import CliRunner

from kdump.cli import cli
from kdump.cli.time_options import DEFAULT_MAX_TIMEOUT_MS
from kdump.commands import txn
from tests.forensic_data import T0, stuck_transaction_log_dir


def _run(*args: str) -> tuple[int, str]:
    result = CliRunner().invoke(cli, list(args))
    return result.exit_code, result.output


def test_the_default_is_the_commands() -> None:
    assert (
        DEFAULT_MAX_TIMEOUT_MS == txn.DEFAULT_MAX_TIMEOUT_MS == 900_000
    )  # Kafka's transaction.max.timeout.ms


@pytest.mark.parametrize("command", ["report", "retention", "txn"])
def test_now_is_parsed_alike(tmp_path: Path, command: str) -> None:
    stuck_transaction_log_dir(str(tmp_path), coordinator_status=None)
    code, out = _run(command, "--json", "--now", "yesterday", str(tmp_path))
    assert code == 2
    assert "Invalid value for '--now': yesterday: not epoch milliseconds nor an ISO-8601" in out
    code, _ = _run(command, "--json", "--now", "2026-12-01T00:00", str(tmp_path))
    assert code in (0, 1)


def _hanging(objects: list[dict], unit: str) -> list[bool]:
    found = []
    for o in objects:
        if o["type"] == unit and os.path.basename(o["directory"]) == "txn-0":
            facts = o if unit == "txnPartition" else o["txn"]
            found += [t["hanging"] for t in facts["openTransactions"]]
    return found


@pytest.mark.parametrize(("limit", "hanging"), [((), False), (("--max-timeout-ms", "199"), True)])
def test_max_timeout_reaches_txn_and_report(tmp_path: Path, limit: tuple[str, ...], hanging: bool) -> None:
    """No ``__transaction_state``: producer 7's transaction, open for 200 ms at the newest record (900 ms at
    report's --now), hangs only when ``transaction.max.timeout.ms`` is below that."""
    stuck_transaction_log_dir(str(tmp_path), coordinator_status=None)
    code, out = _run("txn", "--json", *limit, str(tmp_path))
    assert _hanging([json.loads(x) for x in out.splitlines()], "txnPartition") == [hanging]
    assert code == (1 if hanging else 0)
    # report's ages are against --now: 900 ms
    code, out = _run("report", "--json", "--now", str(T0 + 1_000), *limit, str(tmp_path))
    assert _hanging([json.loads(x) for x in out.splitlines()], "reportPartition") == [hanging]
