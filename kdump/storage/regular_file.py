"""Opening the files kdump reads: regular files only, never blocking.

A FIFO named like a ``.log`` would block ``open`` (and every read) forever, ``/dev/zero`` named like an index
never ends, a directory cannot be read: every reader opens through :func:`open_regular` (non-blocking, then
``fstat``), so such a path is one clear error naming it.
"""

from __future__ import annotations

import errno
import os
import stat

_KINDS = (
    (stat.S_ISFIFO, "a named pipe (FIFO)"),
    (stat.S_ISCHR, "a character device"),
    (stat.S_ISBLK, "a block device"),
    (stat.S_ISSOCK, "a socket"),
    (stat.S_ISDIR, "a directory"),
)


def not_regular(mode: int) -> str | None:
    """Why a file of this ``st_mode`` cannot be read as a Kafka file (a FIFO would block, ``/dev/zero`` never
    ends, ...), or None for a regular file."""
    if stat.S_ISREG(mode):
        return None
    for test, name in _KINDS:
        if test(mode):
            return f"not a regular file: it is {name}"
    return "not a regular file"


def open_regular(path: str, *, dir_fd: int | None = None) -> int:
    """A read-only descriptor of the regular file at ``path``, opened without blocking (a FIFO named like a
    Kafka file must not hang the reader); OSError (EINVAL, a clear reason) for anything but a regular file."""
    flags = os.O_RDONLY | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_NOCTTY", 0)
    fd = os.open(path, flags) if dir_fd is None else os.open(path, flags, dir_fd=dir_fd)
    try:
        why = not_regular(os.fstat(fd).st_mode)
        if why is not None:
            raise OSError(errno.EINVAL, why, path)
        if flags & getattr(os, "O_NONBLOCK", 0):
            os.set_blocking(fd, True)
    except BaseException:
        os.close(fd)
        raise
    return fd


def walk_error(error: OSError) -> str:
    """Why a file or directory found by a walk could not be read: a vanished one is said to have vanished (a live
    broker deletes partitions and segments at any moment)."""
    reason = error.strerror or str(error)
    if isinstance(error, FileNotFoundError):
        return f"{reason}: it vanished while kdump was walking the directory (deleted by a running broker?)"
    return reason


def read_regular(path: str, *, limit: int | None = None) -> bytes:
    """The content of the regular file at ``path`` (at most ``limit`` bytes when given); OSError otherwise."""
    fd = open_regular(path)
    try:
        size = os.fstat(fd).st_size
        want = size if limit is None else min(size, limit)
        parts = []
        got = 0
        while got < want:
            piece = os.read(fd, min(want - got, 1 << 20))
            if not piece:
                break
            parts.append(piece)
            got += len(piece)
        return b"".join(parts)
    finally:
        os.close(fd)
