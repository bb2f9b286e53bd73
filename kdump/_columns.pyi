"""Types of the optional C column builder built from ``kdump/_columns.c`` (see ``kdump.spark.reader``)."""

import builtins
from collections.abc import Callable, Sequence
from typing import Any

#: Bumped with every change of the builder's behaviour; kdump ignores a build whose REVISION differs.
REVISION: int
MAX_OBJECT_HEADERS: int

class Builder:
    """Arrow column buffers of the kafka-log source, filled from v2 record batches."""

    rows: int
    bytes: int
    def __init__(
        self, include_headers: bool, decode_key: Callable[[builtins.bytes], str], header_cost: int = 0
    ) -> None: ...
    def append(self, *args: Any) -> tuple[int, int, int] | None:
        """Append the records of a v2 batch's bytes; (pos, done, rows), or None when the storage core must
        decide."""
    def append_records(
        self, records: Sequence[Any], batch_no: int, position: int, base_offset: int, base_sequence: int
    ) -> None:
        """Append Record objects decoded by the storage core."""
    def finish(self) -> tuple[Any, ...]:
        """Hand out the column buffers and start empty ones."""
