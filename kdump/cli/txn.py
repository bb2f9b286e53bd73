"""``kdump txn``: the last stable offset, open, aborted and hanging transactions of each partition."""

from __future__ import annotations

import click

from kdump.cli.path_args import Location
from kdump.cli.remote_options import RemoteArgs, remote_options
from kdump.cli.time_options import max_timeout_option, now_option


@click.command("txn")
@click.argument("paths", nargs=-1, type=Location(exists=True, file_okay=True, dir_okay=True))
@now_option("Measure ages against", "the newest record's timestamp")
@max_timeout_option()
@click.option(
    "--bootstrap-server",
    default="BROKER:9092",
    show_default=True,
    help="The broker address written into the suggested kafka-transactions.sh commands.",
)
@click.option("--json", "as_json", is_flag=True, help="One JSON object per partition.")
@click.option("--wide", is_flag=True, help="On a terminal, every column, however wide the table gets.")
@remote_options(
    "Read tiered partitions as one log: their segments in remote storage under this root (Kafka's "
    "RemoteLogSegmentFileset layout, as `kdump tiered`), then their local ones; a local path or a URL."
)
def command(
    paths: tuple[str, ...],
    now: int | None,
    max_timeout_ms: int,
    bootstrap_server: str,
    as_json: bool,
    wide: bool,
    remote_args: RemoteArgs,
) -> None:
    """Why is a read_committed consumer stuck? Per partition (PATH: a partition or log directory; default the
    current directory): the last stable offset as the broker computes it, open transactions with their age,
    aborted ranges, commit/abort counts and durations. Open transactions are cross-checked with
    __transaction_state in the same data directory; for each hanging one the kafka-transactions.sh command that
    aborts it is printed. Exits 1 when a hanging transaction is found.

    With --remote-root a tiered partition is one log (its remote segments below the first local one, then its
    local ones): the log start offset, the aborted ranges (the remote .txnindex too) and the commit/abort
    counts are the whole partition's.
    """
    from kdump.cli import directory_arguments, run_report
    from kdump.commands.txn import TxnCommand
    from kdump.render import txn as render

    remote = remote_args.checks()
    try:
        cmd = TxnCommand(
            directory_arguments(paths),
            now=now,
            max_timeout_ms=max_timeout_ms,
            bootstrap_server=bootstrap_server,
            remote=remote,
        )
    except ValueError as e:
        raise click.UsageError(str(e)) from None
    run_report(
        cmd.run,
        as_json=as_json,
        wide=wide,
        sections=lambda facts, human: render.sections(facts, human=human),
        json_lines=render.json_lines,
    )
