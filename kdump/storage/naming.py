"""File and directory naming of a Kafka log directory (Kafka's ``LogFileUtils``, ``UnifiedLog`` suffixes and
KRaft's ``Snapshots``).

Segment files are ``<20-digit base offset><suffix>``; partition directories are ``<topic>-<partition>``, with
``.<uuid>-delete``, ``-future`` and ``-stray`` variants; KRaft snapshots are
``<20-digit end offset>-<10-digit epoch>.checkpoint``.
"""

from __future__ import annotations

import os
import re
import unicodedata
from dataclasses import dataclass

from kdump.errors import KdumpError
from kdump.storage.object_store import is_url

LOG_FILE_SUFFIX = ".log"
INDEX_FILE_SUFFIX = ".index"
TIME_INDEX_FILE_SUFFIX = ".timeindex"
TXN_INDEX_FILE_SUFFIX = ".txnindex"
PRODUCER_SNAPSHOT_FILE_SUFFIX = ".snapshot"
SNAPSHOT_SUFFIX = ".checkpoint"
DELETED_FILE_SUFFIX = ".deleted"
CLEANED_FILE_SUFFIX = ".cleaned"
SWAP_FILE_SUFFIX = ".swap"
PARTIAL_SNAPSHOT_SUFFIX = ".checkpoint.part"
BOOTSTRAP_CHECKPOINT = "bootstrap.checkpoint"

OFFSET_WIDTH = 20
EPOCH_WIDTH = 10

_PARTITION_DIR = re.compile(
    r"^(?P<topic>.+)-(?P<partition>[0-9]+)(?:\.(?P<uuid>[0-9a-f]{32})-(?P<kind>delete|future|stray))?$"
)
_LONG_MIN, _LONG_MAX = -(2**63), 2**63 - 1
_INT_MIN, _INT_MAX = -(2**31), 2**31 - 1


class NumberFormatError(KdumpError, ValueError):
    """Java's ``NumberFormatException``: the text is not a number in range."""


def parse_java_long(text: str, *, bits: int = 64) -> int:
    """Parse like Java's ``Long.parseLong``/``Integer.parseInt`` in radix 10: an optional sign, then decimal
    digits (any Unicode decimal digit, as ``Character.digit`` accepts); no blanks or underscores; range checked."""
    lo, hi = (_LONG_MIN, _LONG_MAX) if bits == 64 else (_INT_MIN, _INT_MAX)
    body = text[1:] if text[:1] in ("+", "-") else text
    if body and all(unicodedata.decimal(ch, None) is not None for ch in body):
        digits = "".join(str(unicodedata.decimal(ch)) for ch in body).lstrip("0") or "0"
        if len(digits) <= 20:  # longer cannot fit; also keeps int() away from huge strings
            value = -int(digits) if text.startswith("-") else int(digits)
            if lo <= value <= hi:
                return value
    raise NumberFormatError(f'For input string: "{text}"')


def offset_from_file(path: str | os.PathLike[str]) -> int:
    """The offset in a segment file name: the name up to its first dot, as a Java long (Kafka's
    ``LogFileUtils.offsetFromFile``).  Raises :class:`NumberFormatError` naming the file."""
    text = os.fspath(path)
    try:
        return parse_java_long(os.path.basename(text).split(".", 1)[0])
    except NumberFormatError as e:
        raise NumberFormatError(
            f"the file name does not start with an offset ({e.message})", path=text
        ) from None


def java_absolute_path(path: str | os.PathLike[str]) -> str:
    """Java's ``File.getAbsolutePath``: the working directory prefixed to a relative path, nothing resolved."""
    text = os.fspath(path)
    if is_url(text):  # an object in a store: a URL is absolute
        return text
    return text if os.path.isabs(text) else os.path.join(os.getcwd(), text)


def offset_to_filename(offset: int, suffix: str = LOG_FILE_SUFFIX) -> str:
    """``00000000000000001234.log`` for offset 1234."""
    return f"{offset:020d}{suffix}"


def suffix_of(name: str) -> str | None:
    """The suffix Kafka's tool dispatches on: from the last dot of the file name; None when there is no dot."""
    i = name.rfind(".")
    return None if i < 0 else name[i:]


@dataclass(frozen=True)
class SnapshotId:
    end_offset: int
    epoch: int


def parse_snapshot_name(name: str) -> SnapshotId:
    """The end offset and epoch of a KRaft snapshot ``<20 digits>-<10 digits>.checkpoint`` (Kafka's
    ``Snapshots.parse``, which reads fixed-width fields)."""
    if len(name) < OFFSET_WIDTH:
        raise NumberFormatError(f"begin 0, end {OFFSET_WIDTH}, length {len(name)}")
    end_offset = parse_java_long(name[:OFFSET_WIDTH])
    epoch_end = OFFSET_WIDTH + EPOCH_WIDTH + 1
    if len(name) < epoch_end:
        raise NumberFormatError(f"begin {OFFSET_WIDTH + 1}, end {epoch_end}, length {len(name)}")
    epoch = parse_java_long(name[OFFSET_WIDTH + 1 : epoch_end], bits=32)
    return SnapshotId(end_offset, epoch)


@dataclass(frozen=True)
class PartitionDir:
    """A parsed partition directory name."""

    topic: str
    partition: int
    uuid: str | None = None
    kind: str | None = None  # "delete", "future", "stray" or None


def parse_partition_dir(name: str) -> PartitionDir | None:
    """Parse ``<topic>-<partition>`` (and the ``.<uuid>-delete|future|stray`` forms); None if it is not one."""
    m = _PARTITION_DIR.match(name)
    if not m:
        return None
    return PartitionDir(m["topic"], int(m["partition"]), m["uuid"], m["kind"])


def partition_dir_name(topic: str, partition: int) -> str:
    return f"{topic}-{partition}"
