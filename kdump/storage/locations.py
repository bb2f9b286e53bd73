"""A location is a local path or the URL of an object in a store (:mod:`kdump.storage.object_store`): the few
questions the partition model asks of either (does it exist, is it a directory, its size, its entries), each
answered by ``os`` for a path and by the store for a URL.  A local path takes ``os``'s path exactly as before."""

from __future__ import annotations

import os
from collections.abc import Iterator
from contextlib import AbstractContextManager
from typing import Protocol

from kdump.storage import object_store
from kdump.storage.object_store import is_url

__all__ = [
    "abspath",
    "exists",
    "getmtime",
    "getsize",
    "is_url",
    "isdir",
    "isfile",
    "listdir",
    "realpath",
    "scandir",
]


class DirEntry(Protocol):
    """What :func:`scandir` yields: an :class:`os.DirEntry` or a store's :class:`object_store.Entry`."""

    @property
    def name(self) -> str: ...

    def is_dir(self, *, follow_symlinks: bool = True) -> bool: ...


def exists(location: str) -> bool:
    return object_store.exists(location) if is_url(location) else os.path.exists(location)


def isdir(location: str) -> bool:
    """A directory, or a prefix of a store (a "directory" of objects)."""
    return object_store.is_dir(location) if is_url(location) else os.path.isdir(location)


def isfile(location: str) -> bool:
    if is_url(location):
        found = object_store.info(location)
        return found is not None and found.get("type") != "directory"
    return os.path.isfile(location)


def getsize(location: str) -> int:
    """The size in bytes; OSError (a :class:`object_store.StoreError` for a URL) when it cannot be had."""
    return object_store.size_of(location) if is_url(location) else os.path.getsize(location)


def getmtime(location: str) -> float:
    """The time of the last modification in seconds since the epoch (for an object: when it was written to the
    store); OSError (a :class:`object_store.StoreError` for a URL) when it cannot be had."""
    return object_store.mtime_of(location) if is_url(location) else os.path.getmtime(location)


def scandir(location: str) -> AbstractContextManager[Iterator[DirEntry]]:
    """The entries of a directory or of a prefix of a store, as ``with os.scandir(path) as entries``; OSError
    when it cannot be listed."""
    if is_url(location):
        return object_store.scandir(location)  # type: ignore[return-value]
    return os.scandir(location)


def listdir(location: str) -> list[str]:
    """The names in a directory, or right under a store's prefix; OSError when it cannot be listed."""
    if is_url(location):
        return [e.name for e in object_store.scandir(location)]
    return os.listdir(location)


def abspath(location: str) -> str:
    """``os.path.abspath`` of a path; a URL is absolute already."""
    return location if is_url(location) else os.path.abspath(location)


def realpath(location: str) -> str:
    """``os.path.realpath`` of a path; a URL as it is (a store has no links)."""
    return location if is_url(location) else os.path.realpath(location)


def file_sizes(location: str) -> dict[str, int]:
    """The files (not sub-directories) right in a directory or under a store's prefix, with their sizes; OSError
    when it cannot be listed."""
    if is_url(location):
        return {e.name: e.size for e in object_store.scandir(location) if not e.directory}
    sizes = {}
    with os.scandir(location) as entries:
        for e in entries:
            if e.is_file(follow_symlinks=False):
                try:
                    sizes[e.name] = e.stat(follow_symlinks=False).st_size
                except OSError:
                    continue
    return sizes
