"""The progress interface long commands report through: the command asks a :data:`ProgressFactory` for a
:class:`Progress` when its work is large; the command line passes one (the terminal bar,
:class:`kdump.render.progress.ProgressBar`) only when a person is watching, None otherwise."""

from __future__ import annotations

from collections.abc import Callable
from typing import Protocol


class Progress(Protocol):
    """A running count of work done (bytes), shown somewhere or nowhere."""

    def update(self, done: int) -> None: ...

    def advance(self, n: int) -> None: ...

    def close(self) -> None: ...


#: Makes a :class:`Progress` for a label and a total.
ProgressFactory = Callable[[str, int], Progress]
