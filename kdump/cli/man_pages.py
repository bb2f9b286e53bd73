"""``kdump help --man [COMMAND]``: the manual page, whichever way kdump was installed.

``pip install .`` puts the pages in ``<prefix>/share/man/man1`` (``data-files`` of pyproject.toml), where ``man
kdump`` finds them when ``<prefix>/bin`` is on ``PATH`` (an activated virtual environment, ``/usr/local``); ``pip
install -e .`` (an editable install, PEP 660) installs no data files, and the pages stay in the checkout's ``man/``
beside the package.  This looks in both places and shows the page with ``man -l`` (man-db), else formats it with
``groff``, else prints the page's source.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import sysconfig
from pathlib import Path


def page_name(command: str | None) -> str:
    return "kdump.1" if command is None else f"kdump-{command}.1"


def page_dirs() -> list[Path]:
    """Where pages may be: the checkout's ``man/`` (editable install, or run from the source tree), then the
    installed ``share/man/man1`` of this interpreter's prefixes."""
    package = Path(__file__).resolve().parents[1]
    dirs = [package.parent / "man"]
    for prefix in dict.fromkeys([sys.prefix, sysconfig.get_path("data"), sys.base_prefix]):
        dirs.append(Path(prefix) / "share" / "man" / "man1")
    return dirs


def find_page(command: str | None) -> Path | None:
    name = page_name(command)
    for directory in page_dirs():
        if (directory / name).is_file():
            return directory / name
    return None


def show(page: Path) -> int:
    """Show ``page`` as ``man`` would (paged on a terminal); its exit status."""
    man = shutil.which("man")
    if man is not None:
        return subprocess.run([man, "-l", str(page)]).returncode
    groff = shutil.which("groff")
    if groff is not None:
        width = shutil.get_terminal_size().columns
        formatted = subprocess.run(
            [groff, "-man", "-Tutf8", "-P-c", f"-rLL={max(width - 2, 40)}n", str(page)],
            capture_output=True,
        )
        if formatted.returncode == 0:
            sys.stdout.buffer.write(formatted.stdout)
            return 0
    sys.stdout.write(page.read_text(encoding="utf-8"))  # no formatter: the source, readable enough
    return 0


def environment_note() -> str:
    return os.pathsep.join(str(d) for d in page_dirs())
