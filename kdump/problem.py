"""A problem met in the data that does not stop the run, as a fact: its kind, the file and byte position it is
at, and the kind's data.  Analyses and commands make them; only the sinks put them into words
(:mod:`kdump.render.problem_text`) or JSON.  It sits beside :mod:`kdump.errors` because every layer from the
analyses up carries problems, and the fatal form of a problem is a :class:`~kdump.errors.KdumpError`
(:func:`problem_of` turns one into the other)."""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any

from kdump.errors import KdumpError, UnreadableFileError

# A file or directory that could not be read (the one rule of every command: named, and status 1).
UNREADABLE = "unreadable"  # reason
UNREADABLE_DIRECTORY = "unreadable-directory"  # reason
# An error of the storage core met on the way; the kind is the error's (``corrupt-record``, ``decompression``,
# ``corrupt-snapshot`` ...; ``error`` for the base class).  Data: message.
ERROR = "error"
# A batch whose stored CRC is not its bytes' (``diff``).  Data: base_offset, last_offset, stored, computed.
CORRUPT_BATCH = "corrupt-batch"
# Bytes at the end of a segment that are not a whole batch.  Data: bytes.
PARTIAL_BATCH = "partial-batch"
# A segment larger than Kafka's int-sized FileRecords view reads.  Data: size, read.
OVERSIZED_SEGMENT = "oversized-segment"
# A segment whose first batch starts below the segment's name.  Data: segment, offset.
SEGMENT_STARTS_BELOW_NAME = "segment-starts-below-name"
# A batch whose base offset does not follow the last offset before it.  Data: segment, offset, previous.
OFFSET_OUT_OF_ORDER = "offset-out-of-order"
# A partition directory marked for deletion, a future replica, a stray one.  Data: marker, name.
MARKED_DIRECTORY = "marked-directory"
# A directory whose name is not ``<topic>-<partition>``.
NOT_A_PARTITION_NAME = "not-a-partition-name"
# A ``.deleted``, ``.cleaned`` or ``.swap`` file left by a deletion or cleaning.  Data: name.
LEFT_OVER_FILE = "left-over-file"
# Index files of a segment without a ``.log``.  Data: segment, suffixes.
ORPHANED_INDEXES = "orphaned-indexes"
# A segment without its offset or time index.  Data: segment, missing.
MISSING_INDEX = "missing-index"
# No high watermark in ``replication-offset-checkpoint``: the log end offset is used.
NO_HIGH_WATERMARK = "no-high-watermark"
# A cleaner checkpoint outside the log: the log start offset is used.  Data: offset.
CLEANER_CHECKPOINT_OUT_OF_RANGE = "cleaner-checkpoint-out-of-range"
# A configuration value that is not a number.  Data: name, value, used.
NOT_A_NUMBER = "not-a-number"

_UNREADABLE_KINDS = frozenset({UNREADABLE, UNREADABLE_DIRECTORY})


@dataclass(frozen=True, slots=True)
class Problem:
    """One problem: ``kind`` (the constants above, or an error's kind), ``file`` (as the command names it;
    None when the problem is the unit's own), ``position`` (a byte position in ``file``), ``data`` (the
    kind's values, as ``(name, value)`` pairs: hashable, so a problem met twice is named once)."""

    kind: str
    file: str | None = None
    position: int | None = None
    data: tuple[tuple[str, Any], ...] = ()

    def __getitem__(self, name: str) -> Any:
        for key, value in self.data:
            if key == name:
                return value
        raise KeyError(name)

    def get(self, name: str, default: Any = None) -> Any:
        try:
            return self[name]
        except KeyError:
            return default

    @property
    def unreadable(self) -> bool:
        """Whether a file or directory could not be read (the problems that make a command's status 1)."""
        return self.kind in _UNREADABLE_KINDS


def problem(kind: str, file: str | None = None, position: int | None = None, **data: Any) -> Problem:
    return Problem(kind, file, position, tuple(data.items()))


def error_kind(error: KdumpError) -> str:
    """``CorruptRecordError`` -> ``corrupt-record``; the base class -> ``error``."""
    name = type(error).__name__.removesuffix("Error")
    if name in ("Kdump", ""):
        return ERROR
    return re.sub(r"(?<!^)(?=[A-Z])", "-", name).lower()


def problem_of(error: KdumpError | OSError, path: str | None = None) -> Problem:
    """An error met on the way as a problem: a file that cannot be read is ``unreadable`` (its reason),
    another error keeps its kind, file, byte position and message.  ``path``: the file when the error does
    not name one."""
    if isinstance(error, UnreadableFileError):
        return problem(UNREADABLE, error.path or path, reason=error.message)
    if isinstance(error, OSError):
        return problem(UNREADABLE, error.filename or path, reason=error.strerror or str(error))
    return problem(error_kind(error), error.path or path, error.position, message=error.message)
