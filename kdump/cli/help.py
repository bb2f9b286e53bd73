"""``kdump help [COMMAND]``: every command's options, ``kdump files``' included (Kafka's and kdump's own).

``kdump files --help`` must stay Kafka's table on standard error with status 1 (scripts depend on that), so
kdump's own options of ``files`` are found here, with ``kdump files -h`` or ``kdump files --kdump-help``.
"""

from __future__ import annotations

import click


@click.command("help")
@click.argument("command_name", metavar="[COMMAND]", required=False)
@click.option(
    "--man",
    "manual",
    is_flag=True,
    help="Show the manual page (kdump, or kdump-COMMAND) instead, found after any install (also pip install -e).",
)
@click.pass_context
def command(ctx: click.Context, command_name: str | None, manual: bool) -> None:
    """Show the options of COMMAND (for `files`: kafka-dump-log.sh's options and kdump's own)."""
    group = ctx.parent.command if ctx.parent is not None else None
    if manual:
        import sys

        from kdump.cli import man_pages

        page = man_pages.find_page(command_name)
        if page is None:
            raise click.UsageError(
                f"no manual page {man_pages.page_name(command_name)} (looked in {man_pages.environment_note()})"
            )
        sys.exit(man_pages.show(page))
    if command_name == "files":
        from kdump.cli.files import chosen_release, kdump_help_text

        click.echo(kdump_help_text(chosen_release([])), nl=False)
        return
    if not isinstance(group, click.Group):  # pragma: no cover - always run below the kdump group
        raise click.UsageError("kdump help runs as a subcommand of kdump")
    if command_name is None:
        click.echo(group.get_help(ctx.parent))  # type: ignore[arg-type]
        return
    sub = group.get_command(ctx, command_name)
    if sub is None:
        names = ", ".join(sorted(group.list_commands(ctx)))
        raise click.UsageError(f"no such command {command_name!r}; the commands: {names}")
    with click.Context(sub, info_name=command_name, parent=ctx.parent) as sub_ctx:
        click.echo(sub.get_help(sub_ctx))
