"""Types of the optional C accelerator built from ``kdump/_speedups.c`` (see ``kdump.storage.record_batch``)."""

from typing import Any

#: Bumped with every change of the decoder's behaviour; kdump ignores a build whose REVISION differs.
REVISION: int

def read_records(*args: Any) -> list[Any] | None:
    """Decode v2 records into Record objects; None when the pure-Python decoder must decide."""
