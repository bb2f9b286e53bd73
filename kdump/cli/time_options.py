"""The options that set a reporting command's clock and its transaction timeout, the same in every command that
takes them: ``--now`` (``report``, ``retention``, ``txn``) and ``--max-timeout-ms`` (``report``, ``txn``)."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, TypeVar

import click

F = TypeVar("F", bound=Callable[..., Any])

#: Kafka's default ``transaction.max.timeout.ms`` (``TransactionStateManagerConfig``); the same as
#: ``kdump.commands.txn.DEFAULT_MAX_TIMEOUT_MS``, written here so that ``--help`` loads no command.
DEFAULT_MAX_TIMEOUT_MS = 900_000


def _parse_now(ctx: click.Context, param: click.Parameter, value: str | None) -> int | None:
    if value is None:
        return None
    from kdump.storage.timestamp_type import parse_timestamp

    try:
        return parse_timestamp(value)
    except ValueError as e:
        raise click.BadParameter(str(e), ctx=ctx, param=param) from None


def now_option(what: str, default: str) -> Callable[[F], F]:
    """``--now T``: ``what`` is done at T (epoch milliseconds or ISO-8601, no zone meaning UTC) instead of
    ``default``; the command gets ``now``, epoch milliseconds or None."""
    return click.option(
        "--now",
        "now",
        metavar="T",
        callback=_parse_now,
        help=f"{what} T (epoch milliseconds or ISO-8601; no zone means UTC) [default: {default}].",
    )


def max_timeout_option() -> Callable[[F], F]:
    """``--max-timeout-ms N``: the broker's ``transaction.max.timeout.ms``, what an open transaction outlives to
    be hanging when no coordinator state says otherwise; the command gets ``max_timeout_ms``."""
    return click.option(
        "--max-timeout-ms",
        type=click.IntRange(min=0),
        metavar="N",
        default=DEFAULT_MAX_TIMEOUT_MS,
        show_default=True,
        help="transaction.max.timeout.ms: without a __transaction_state partition, an open transaction older "
        "than this is hanging.",
    )
