"""The man pages render without warnings and document every option that --help shows."""

from __future__ import annotations

import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from click.testing import CliRunner

from kdump.cli import cli
from kdump.cli.commands import all_commands
from kdump.cli.files import KDUMP_OPTIONS, OPTIONS, usage_text

MAN = Path(__file__).resolve().parents[1] / "man"
PAGES = sorted(MAN.glob("*.1"))


def test_pages_exist() -> None:
    assert {p.name for p in PAGES} >= {"kdump.1", "kdump-files.1"}


@pytest.mark.parametrize("page", PAGES, ids=lambda p: p.name)
def test_renders_without_warnings(page: Path) -> None:
    groff = shutil.which("groff")
    if groff is None:
        pytest.skip("groff is not installed (apt-get install groff-base)")
    result = subprocess.run([groff, "-man", "-Tutf8", "-ww", "-z", str(page)], capture_output=True, text=True)
    assert result.returncode == 0 and result.stderr == ""


def _man_text(page: str) -> str:
    text = (MAN / page).read_text(encoding="utf-8")
    return text.replace("\\-", "-").replace("\\fB", "").replace("\\fR", "").replace("\\fI", "")


def test_every_files_option_is_documented() -> None:
    text = _man_text("kdump-files.1")
    shown = re.findall(r"^(--[a-z][a-z-]+)", usage_text(), flags=re.M)
    assert len(shown) == len(OPTIONS)
    for option in shown:
        assert option in text, option


def test_every_kdump_files_addition_is_documented() -> None:
    """kdump's own `files` options stay out of Kafka's --help table, so the man page is where they are told."""
    text = _man_text("kdump-files.1")
    for spec in KDUMP_OPTIONS:
        assert spec.hidden and f"--{spec.name}" in text, spec.name
    shown = set(re.findall(r"^--([a-z][a-z-]+)", usage_text(), flags=re.M))
    assert not shown & {spec.name for spec in KDUMP_OPTIONS}


def test_every_top_level_option_and_command_is_documented() -> None:
    help_text = CliRunner().invoke(cli, ["--help"]).output
    text = _man_text("kdump.1")
    for option in re.findall(r"(--?[a-z][a-z-]*)", help_text.split("Options:")[1].split("Commands:")[0]):
        assert option in text, option
    for command in re.findall(r"^  ([a-z-]+)\s", help_text.split("Commands:")[1], flags=re.M):
        assert command in text and (MAN / f"kdump-{command}.1").exists(), command


def test_kdump_files_help_is_kafkas_table() -> None:
    result = subprocess.run([sys.executable, "-m", "kdump", "files", "--help"], capture_output=True)
    assert result.returncode == 1 and result.stdout == b""
    assert result.stderr.splitlines()[1].startswith(b"Option ")


def _subcommands() -> list[tuple[str, list[str]]]:
    """(man page, command path) for every click command below ``kdump`` except ``files`` (jopt, tested above)."""
    import click

    found = []
    for name, command in all_commands().items():
        if name == "files":
            continue
        found.append((f"kdump-{name}.1", [name]))
        if isinstance(command, click.Group):
            found.extend((f"kdump-{name}.1", [name, sub]) for sub in command.commands)
    return found


@pytest.mark.parametrize(
    ("page", "path"), _subcommands(), ids=lambda v: v if isinstance(v, str) else " ".join(v)
)
def test_every_subcommand_option_is_documented(page: str, path: list[str]) -> None:
    help_text = CliRunner().invoke(cli, [*path, "--help"]).output
    text = _man_text(page)
    options = re.findall(r"^\s+(?:-[a-zA-Z], )?(--[a-z][a-z0-9-]*)", help_text, flags=re.M)
    assert options, help_text
    for option in options:
        assert option in text, f"{option} of kdump {' '.join(path)} is not in man/{page}"
