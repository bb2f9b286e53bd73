"""The manual after either install the README gives (issue 31): ``pip install .`` and ``pip install -e .`` put
the pages where ``man`` finds them (``<venv>/share/man/man1``, on man's path through ``PATH``; for the editable
install setup.py's ``EditableWheel`` adds the data files setuptools' ``editable_wheel`` leaves out), and
``kdump help --man`` finds the pages after both.  Checked with real installs of this checkout
into a fresh virtual environment (no network: ``--no-deps --no-index``, click taken from this environment) and the
real ``man``; the oracle is man's own lookup (``man -w``) and the page's NAME line."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import venv
from pathlib import Path

import click
import pytest

ROOT = Path(__file__).resolve().parents[1]

real_installs = [
    pytest.mark.skipif(shutil.which("man") is None, reason="man is not installed (apt-get install man-db)"),
    pytest.mark.skipif(
        not os.environ.get("KDUMP_INSTALL_TESTS"),
        reason="two real installs into a new virtual environment (~40 s): KDUMP_INSTALL_TESTS=1 runs them; "
        "test_page_lookup_in_both_layouts checks the lookup in the default suite",
    ),
]


def test_page_lookup_in_both_layouts(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from kdump.cli import man_pages

    assert man_pages.find_page("ls") == ROOT / "man" / "kdump-ls.1"  # a checkout, or an editable install
    installed = tmp_path / "share" / "man" / "man1"  # pip install .: the data files under the prefix
    installed.mkdir(parents=True)
    (installed / "kdump.1").write_text(".TH KDUMP 1\n")
    package = tmp_path / "lib" / "python3" / "site-packages" / "kdump" / "cli" / "man_pages.py"
    monkeypatch.setattr(man_pages, "__file__", str(package))
    monkeypatch.setattr(sys, "prefix", str(tmp_path))
    # every prefix the lookup asks is the pretend install's: the running environment's own share/man (where an
    # editable install now puts the pages too) must not answer
    monkeypatch.setattr(sys, "base_prefix", str(tmp_path))
    monkeypatch.setattr(man_pages.sysconfig, "get_path", lambda *args, **kwargs: str(tmp_path))
    assert man_pages.find_page(None) == installed / "kdump.1"
    assert man_pages.find_page("ls") is None


def _pip(python: Path, *args: str) -> None:
    env = {**os.environ, "CC": "false"}  # the C accelerator is optional: not built here, to stay quick
    # the build backend (setuptools, wheel) from this environment: no network
    env["PYTHONPATH"] = os.pathsep.join(p for p in sys.path if p.endswith("site-packages"))
    subprocess.run(
        [str(python), "-m", "pip", "install", "-q", "--no-deps", "--no-index", "--no-build-isolation", *args],
        check=True,
        env=env,
        capture_output=True,
    )


def _run(env_dir: Path, deps: Path, *args: str) -> subprocess.CompletedProcess[str]:
    env = {k: v for k, v in os.environ.items() if k not in ("MANPATH", "PYTHONPATH")}
    env["PATH"] = f"{env_dir / 'bin'}{os.pathsep}{env['PATH']}"  # as an activated environment has it
    env["PYTHONPATH"] = str(deps)
    env["MANPAGER"] = env["PAGER"] = "cat"
    return subprocess.run(list(args), capture_output=True, text=True, env=env, cwd=deps)


@pytest.fixture(scope="module")
def environment(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path]:
    root = tmp_path_factory.mktemp("install")
    env_dir = root / "venv"
    try:
        venv.create(env_dir, with_pip=True)
    except (subprocess.CalledProcessError, OSError) as e:
        pytest.skip(f"cannot create a virtual environment with pip: {e}")
    deps = root / "deps"  # kdump's one import for help: click, from this environment (not its kdump)
    deps.mkdir()
    (deps / "click").symlink_to(Path(click.__file__).parent)
    return env_dir, deps


@real_installs[0]
@real_installs[1]
def test_man_after_pip_install_and_pip_install_editable(environment: tuple[Path, Path]) -> None:
    env_dir, deps = environment
    python = env_dir / "bin" / "python"

    _pip(python, str(ROOT))
    assert _run(env_dir, deps, "man", "-w", "kdump").stdout.strip() == str(
        env_dir / "share" / "man" / "man1" / "kdump.1"
    )
    shown = _run(env_dir, deps, str(env_dir / "bin" / "kdump"), "help", "--man", "txn")
    assert shown.returncode == 0 and "kdump-txn - last stable offset" in " ".join(shown.stdout.split())

    subprocess.run(
        [str(python), "-m", "pip", "uninstall", "-q", "-y", "kdump"], check=True, capture_output=True
    )
    assert not (env_dir / "share" / "man" / "man1" / "kdump.1").exists()  # uninstalled with the package
    _pip(python, "-e", str(ROOT))
    for page in ("kdump", "kdump-txn"):  # plain man, as the README's own install leaves it
        assert _run(env_dir, deps, "man", "-w", page).stdout.strip() == str(
            env_dir / "share" / "man" / "man1" / f"{page}.1"
        )
    shown = _run(env_dir, deps, "man", "kdump-ls")
    assert shown.returncode == 0 and "kdump-ls - " in " ".join(shown.stdout.split())
    shown = _run(env_dir, deps, str(env_dir / "bin" / "kdump"), "help", "--man")
    assert shown.returncode == 0 and "kdump - offline forensic inspector" in " ".join(shown.stdout.split())
    missing = _run(env_dir, deps, str(env_dir / "bin" / "kdump"), "help", "--man", "nosuch")
    assert missing.returncode == 2 and "no manual page kdump-nosuch.1" in missing.stderr
