"""Replacing a file so that a crash at any moment leaves either the old or the new content, creating one that
never clobbers an existing name, and telling whether a broker holds a log directory.

:func:`replace_file` writes the new content to a temporary file in the same directory, flushes it to disk
(``fsync``), keeps the old file as a backup (a hard link, so the old name never stops pointing at a whole file),
renames the temporary file over the old name (``rename`` is atomic within a file system) and flushes the
directory, so the rename itself is durable.

:func:`lock_holder` asks the kernel whether another process holds the POSIX lock a Kafka broker takes on
``<log dir>/.lock`` (``FileChannel.tryLock``, which is ``fcntl(F_SETLK)`` on Linux), without taking it.
"""

from __future__ import annotations

import errno
import fcntl
import os
import struct
import sys
from collections.abc import Callable, Iterable

__all__ = [
    "BACKUP_SUFFIX",
    "TEMP_SUFFIX",
    "LOCK_FILE",
    "backup_path_for",
    "create_new",
    "fsync_directory",
    "lock_holder",
    "replace_file",
    "write_all",
]

#: The old file is kept as ``<name>.bak`` (``<name>.bak.1``, ``.bak.2``, ... when that exists).
BACKUP_SUFFIX = ".bak"
#: The new content is written to ``<name>.kdump-tmp`` first (a broker ignores files with this suffix).
TEMP_SUFFIX = ".kdump-tmp"
#: The file a broker locks in each log directory while it runs.
LOCK_FILE = ".lock"

#: Called with a step name before each step of :func:`replace_file` (tests use it to simulate crashes).
StepHook = Callable[[str], None]


def backup_path_for(path: str) -> str:
    """The first free name among ``<path>.bak``, ``<path>.bak.1``, ``<path>.bak.2``, ..."""
    candidate = path + BACKUP_SUFFIX
    n = 0
    while os.path.lexists(candidate):
        n += 1
        candidate = f"{path}{BACKUP_SUFFIX}.{n}"
    return candidate


def fsync_directory(directory: str) -> None:
    """Flush a directory's entries (creations, renames) to disk."""
    fd = os.open(directory or ".", os.O_RDONLY | getattr(os, "O_DIRECTORY", 0))
    try:
        os.fsync(fd)
    finally:
        os.close(fd)


def replace_file(path: str, data: bytes, *, backup: bool = True, step: StepHook | None = None) -> str | None:
    """Atomically make ``path`` hold ``data``; return the backup's path (None when there was no old file or
    ``backup`` is False).

    Steps: write ``<path>.kdump-tmp`` (same permissions as the old file), ``fsync`` it, hard-link the old file
    to the backup name (copied when the file system has no hard links), ``fsync`` the directory, rename the
    temporary file over ``path``, ``fsync`` the directory.  A crash before the rename leaves the old file (and
    maybe a stale temporary file, overwritten by the next run); after it, the new one.  OSError propagates, with
    the temporary file removed.
    """
    directory = os.path.dirname(path) or "."
    temp = path + TEMP_SUFFIX
    try:
        old_stat: os.stat_result | None = os.stat(path)
    except FileNotFoundError:
        old_stat = None
    mode = (old_stat.st_mode & 0o7777) if old_stat is not None else 0o644
    _step(step, "write-temp")
    fd = os.open(temp, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    try:
        try:
            write_all(fd, data)
            os.fchmod(fd, mode)
            if old_stat is not None and hasattr(os, "fchown"):
                try:
                    os.fchown(fd, old_stat.st_uid, old_stat.st_gid)
                except OSError:
                    pass  # not ours to give away; keep the caller's ownership
            _step(step, "fsync-temp")
            os.fsync(fd)
        finally:
            os.close(fd)
        backup_path = None
        if backup and old_stat is not None:
            backup_path = backup_path_for(path)
            _step(step, "backup")
            _link_or_copy(path, backup_path)
            _step(step, "fsync-dir-backup")
            fsync_directory(directory)
        _step(step, "rename")
        os.replace(temp, path)
    except BaseException:
        try:
            os.unlink(temp)
        except OSError:
            pass
        raise
    _step(step, "fsync-dir")
    fsync_directory(directory)
    return backup_path


def write_all(fd: int, data: bytes | memoryview) -> None:
    """``os.write`` until all of ``data`` is written (a write may take only part of it)."""
    view = memoryview(data)
    while view:
        written = os.write(fd, view)
        view = view[written:]


def create_new(path: str, chunks: Iterable[bytes | memoryview]) -> None:
    """Write ``chunks`` to a new file ``path``, via ``<path>.kdump-tmp`` and ``fsync``, and move it into place
    only if ``path`` still does not exist (``link`` fails on an existing name; FileExistsError then).  A crash
    leaves no partial file under ``path``."""
    temp = path + TEMP_SUFFIX
    fd = os.open(temp, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o644)
    try:
        for chunk in chunks:
            write_all(fd, chunk)
        os.fsync(fd)
    except BaseException:
        os.close(fd)
        os.unlink(temp)
        raise
    os.close(fd)
    try:
        os.link(temp, path)
    except FileExistsError:
        os.unlink(temp)
        raise
    except OSError:  # no hard links on this file system
        if os.path.lexists(path):
            os.unlink(temp)
            raise FileExistsError(path) from None
        os.rename(temp, path)
        return
    os.unlink(temp)


def _step(step: StepHook | None, name: str) -> None:
    if step is not None:
        step(name)


def _link_or_copy(source: str, target: str) -> None:
    try:
        os.link(source, target)
        return
    except OSError as e:
        if e.errno not in (
            errno.EPERM,
            errno.EXDEV,
            errno.ENOTSUP,
            errno.EOPNOTSUPP,
            errno.EMLINK,
            errno.ENOSYS,
        ):
            raise
    with open(source, "rb") as f:
        content = f.read()
    temp = target + TEMP_SUFFIX
    fd = os.open(temp, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    try:
        os.write(fd, content)
        os.fchmod(fd, os.stat(source).st_mode & 0o7777)
        os.fsync(fd)
    finally:
        os.close(fd)
    os.replace(temp, target)


# -- the broker's lock --------------------------------------------------------------------------------------

# struct flock on Linux: short l_type, short l_whence, off_t l_start, off_t l_len, pid_t l_pid (+ padding).
_FLOCK_LINUX = struct.Struct("hhqqi4x")


def lock_holder(log_dir: str) -> int | None:
    """Who holds ``<log_dir>/.lock``: the process id of the holder (0 when the system cannot say which
    process), or None when nobody does or there is no lock file.

    The lock is only tested (``F_GETLK`` on Linux), never taken, so a broker starting at the same moment is not
    disturbed.  Elsewhere a shared lock is taken and released at once.  The lock file is opened read-only.
    """
    path = os.path.join(log_dir, LOCK_FILE)
    try:
        fd = os.open(path, os.O_RDONLY)
    except FileNotFoundError:
        return None
    except OSError:
        return None
    try:
        if sys.platform.startswith("linux"):
            query = _FLOCK_LINUX.pack(fcntl.F_WRLCK, os.SEEK_SET, 0, 0, 0)
            try:
                answer = fcntl.fcntl(fd, fcntl.F_GETLK, query)
            except OSError:
                answer = None
            if answer is not None:
                l_type, _whence, _start, _len, pid = _FLOCK_LINUX.unpack(answer)
                return None if l_type == fcntl.F_UNLCK else pid
        try:
            fcntl.lockf(fd, fcntl.LOCK_SH | fcntl.LOCK_NB)
        except OSError as e:
            if e.errno in (errno.EACCES, errno.EAGAIN):
                return 0
            return None
        fcntl.lockf(fd, fcntl.LOCK_UN)
        return None
    finally:
        os.close(fd)
