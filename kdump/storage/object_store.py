"""Files in object stores and remote file systems, named by URL (``s3://``, ``gs://``, ``az://``/``abfs://``,
``hdfs://``, ``file://``...), read through fsspec: the one interface pandas, dask and pyarrow datasets speak, each
backend a package of its own (``kdump[s3]``: s3fs, ``kdump[gcs]``: gcsfs, ``kdump[azure]``: adlfs).

An object is a :class:`~kdump.storage.byte_source.RangedSource`: its size from one metadata request, then ranged
reads (an S3 ``GET`` with a ``Range``) with read-ahead, so a command fetches what it reads and no more -- never a
whole object it does not need.  Every request is counted (:data:`STATS`), so what a command fetched can be stated
(``KDUMP_STORE_STATS=1`` prints it at the end of a run).

Credentials come from each backend's usual chain (for S3: the ``AWS_*`` variables, ``~/.aws``, instance roles;
the endpoint of an S3-compatible store from ``AWS_ENDPOINT_URL``) and are never printed: a URL that carries
``user:password@`` is refused before anything is read, and what a backend's error says is reduced to one line.

Every failure of the store -- a missing object, a denied read, a dropped connection -- is a
:class:`StoreError` (an :class:`~kdump.errors.UnreadableFileError`): one line naming the URL and, for a read,
the byte position, status 1.  fsspec is imported only when a URL is read: a local run never loads it.  Nothing
here writes to a store.
"""

from __future__ import annotations

import errno
import os
import re
from dataclasses import dataclass, field
from typing import Any

from kdump.errors import KdumpUsageError, UnreadableFileError
from kdump.storage.byte_source import DEFAULT_READ_AHEAD, RangedSource

#: ``scheme://``: what makes a location a URL (RFC 3986's scheme characters).
_SCHEME = re.compile(r"^([A-Za-z][A-Za-z0-9+.-]*)://")

#: The schemes kdump reads through fsspec, and the package (the extra) each needs.  A local path that merely
#: contains ``://`` with another scheme stays a path.
BACKENDS: dict[str, str] = {
    "s3": "s3fs (pip install 'kdump[s3]')",
    "s3a": "s3fs (pip install 'kdump[s3]')",
    "gs": "gcsfs (pip install 'kdump[gcs]')",
    "gcs": "gcsfs (pip install 'kdump[gcs]')",
    "az": "adlfs (pip install 'kdump[azure]')",
    "abfs": "adlfs (pip install 'kdump[azure]')",
    "abfss": "adlfs (pip install 'kdump[azure]')",
    "adl": "adlfs (pip install 'kdump[azure]')",
    "hdfs": "pyarrow with libhdfs",
    "webhdfs": "fsspec",
    "file": "fsspec",
    "memory": "fsspec",
}

#: A URL with ``user:password@`` before its host.
_USERINFO = re.compile(r"^[A-Za-z][A-Za-z0-9+.-]*://[^/@]*:[^/@]*@")


def scheme_of(location: str) -> str | None:
    """The scheme of a URL kdump reads through fsspec (lower case), or None for a local path."""
    match = _SCHEME.match(location)
    if match is None:
        return None
    scheme = match.group(1).lower()
    return scheme if scheme in BACKENDS else None


def is_url(location: object) -> bool:
    """Whether ``location`` names an object in a store (a URL of :data:`BACKENDS`) rather than a local path."""
    return isinstance(location, str) and scheme_of(location) is not None


@dataclass
class StoreStats:
    """What was asked of the stores in this process: requests (metadata and reads) and bytes read."""

    metadata_requests: int = 0
    read_requests: int = 0
    bytes_fetched: int = 0
    #: The objects opened, with their sizes.
    objects: dict[str, int] = field(default_factory=dict)
    #: Reads answered (wholly or partly) from what this run had fetched already (:class:`FetchCache`).
    cached_reads: int = 0

    @property
    def requests(self) -> int:
        return self.metadata_requests + self.read_requests

    def line(self) -> str:
        size = sum(self.objects.values())
        return (
            f"kdump: store: {self.bytes_fetched} bytes fetched in {self.requests} requests "
            f"({self.read_requests} ranged reads, {self.metadata_requests} metadata) "
            f"from {len(self.objects)} objects of {size} bytes; {self.cached_reads} reads from what was fetched"
        )


#: This process's counts (``KDUMP_STORE_STATS=1`` prints them when a command ends).
STATS = StoreStats()


class StoreError(UnreadableFileError, OSError):
    """A store could not give what was asked: a missing object, a denied read, a dropped connection.  Also an
    :class:`OSError`, so that every reader that reports an unreadable local file (``except OSError``) reports an
    unreadable object the same way (``strerror``: what a local file's error would say, where there is one)."""

    def __init__(
        self,
        message: str,
        *,
        path: str | None = None,
        position: int | None = None,
        strerror: str | None = None,
    ) -> None:
        super().__init__(message, path=path, position=position)
        self.strerror = strerror or message


def _missing(url: str) -> StoreError:
    """A missing object, in the words of a missing local file."""
    return StoreError("No such file", path=url, strerror=os.strerror(errno.ENOENT))


def _one_line(text: str, limit: int = 300) -> str:
    """A backend's message as one printable line (it may span lines, or quote a response body)."""
    flat = " ".join("".join(c if c.isprintable() else " " for c in text).split())
    return flat if len(flat) <= limit else flat[: limit - 3] + "..."


def store_error(url: str, error: BaseException, position: int | None = None) -> StoreError:
    """The :class:`StoreError` for a backend's exception ``error`` on ``url`` (read at ``position``)."""
    if isinstance(error, StoreError):
        return error
    if isinstance(error, FileNotFoundError):
        return _missing(url)
    elif isinstance(error, PermissionError):
        message = f"access denied by the store ({_one_line(str(error) or 'no reason given')})"
    elif isinstance(error, IsADirectoryError):
        message = "is a directory (a prefix of the store), not an object"
    else:
        reason = _one_line(str(error))
        message = f"cannot read from the store: {type(error).__name__}" + (f": {reason}" if reason else "")
    return StoreError(message, path=url, position=position)


def check_url(url: str) -> None:
    """A usage error for a URL that carries a user name and password (they would be printed)."""
    if _USERINFO.match(url):
        raise KdumpUsageError(
            f"{url.split('://', 1)[0]}:// URL with a user name and password: kdump takes no credentials in "
            "URLs (they would be printed); use the store's usual credentials (environment, config files, roles)"
        )


def filesystem(url: str) -> tuple[Any, str]:
    """fsspec's file system for ``url`` and the path within it (fsspec imported here, on first use)."""
    check_url(url)
    try:
        import fsspec.core
    except ImportError:
        raise KdumpUsageError(
            f"{url}: reading URLs needs fsspec and {BACKENDS.get(scheme_of(url) or '', 'its backend')}"
        ) from None
    try:
        fs, path = fsspec.core.url_to_fs(url)
    except ImportError:
        raise KdumpUsageError(
            f"{url}: reading {scheme_of(url)}:// URLs needs {BACKENDS.get(scheme_of(url) or '', 'a backend')}"
        ) from None
    except OSError as e:
        if scheme_of(url) == "hdfs" and ("libjvm" in str(e) or "libhdfs" in str(e)):
            # pyarrow's HadoopFileSystem loads Hadoop's client library (and a JVM) when it is made
            raise KdumpUsageError(
                f"{url}: reading hdfs:// URLs needs pyarrow with libhdfs: a Hadoop client (JAVA_HOME, "
                "HADOOP_HOME, CLASSPATH from `hadoop classpath --glob`), not found here"
            ) from None
        raise store_error(url, e) from None
    except Exception as e:  # noqa: BLE001 - a backend's configuration error, one line naming the URL
        raise store_error(url, e) from None
    return fs, path


#: What the store said of each URL asked about in this run (one metadata request per object, not one per look).
_INFO: dict[str, dict[str, Any] | None] = {}


def info(url: str) -> dict[str, Any] | None:
    """What the store says of ``url`` (``size``, ``type``: ``file`` or ``directory``), None when there is no
    such object or prefix; a :class:`StoreError` when the store cannot answer.  Asked once per URL."""
    if url in _INFO:
        return _INFO[url]
    fs, path = filesystem(url)
    STATS.metadata_requests += 1
    try:
        found: dict[str, Any] | None = fs.info(path)
    except FileNotFoundError:
        found = None
    except Exception as e:  # noqa: BLE001 - any failure of the backend is one line naming the URL
        raise store_error(url, e) from None
    _INFO[url] = found
    return found


def forget() -> None:
    """Forget what the stores said and what was fetched (the next look asks again) and reset :data:`STATS`."""
    end_of_run()
    STATS.__init__()  # type: ignore[misc]


def end_of_run() -> None:
    """A command's run ended: what was fetched (:data:`CACHE`, which is off again until a run asks for it) and
    what the stores said are given up; the counts (:data:`STATS`) stay, to be printed."""
    _INFO.clear()
    CACHE.clear()
    CACHE.limit = 0


def exists(url: str) -> bool:
    return info(url) is not None


def is_dir(url: str) -> bool:
    found = info(url)
    return found is not None and found.get("type") == "directory"


class FetchCache:
    """What this run fetched of each object, kept on disk so that a command that reads an object twice fetches
    it once: per object, an unlinked temporary file (``TMPDIR``) holding the ranges fetched so far, at their
    positions.  Memory stays flat (the pages are the file's, the kernel's to give back); the disk holds at most
    :attr:`limit` bytes, the objects read longest ago given up first.  An object is never cached if its size
    changed (the store said another size): a range is then fetched again.

    Off (``limit`` 0) unless the run asks for it with :func:`keep_fetched`, for as many bytes as it will read
    twice: measured with ``bench/remote_bench.py``, no command reads an object of a plain partition twice any
    more (``diff`` and ``report`` fetch each copy 1.000 times without it), so a cache that every run filled, up to
    2 GiB of ``TMPDIR``, bought nothing there; ``verify --remote-root`` reads each remote segment of a tiered
    partition twice (its checks, then the remote checks' ``--deep`` pass: 2.004 times an Aiven segment without
    the cache, 1.002 with it) and asks for that partition's remote bytes."""

    def __init__(self, limit: int) -> None:
        self.limit = limit
        self._objects: dict[str, _CachedObject] = {}
        self.bytes = 0

    def get(self, url: str, size: int) -> _CachedObject | None:
        """The cache of the object ``url`` (``size`` bytes), made on first use; None when it cannot be kept."""
        if size <= 0 or size > self.limit:
            return None
        found = self._objects.pop(url, None)
        if found is not None and found.size != size:
            self._drop(found)
            found = None
        if found is None:
            import tempfile

            try:
                found = _CachedObject(tempfile.TemporaryFile(prefix="kdump-fetched-"), size)
            except OSError:
                return None
        self._objects[url] = found  # the most recently used last
        return found

    def grew(self, by: int) -> None:
        """``by`` more bytes are held: the objects used longest ago are given up until under the limit."""
        self.bytes += by
        while self.bytes > self.limit and len(self._objects) > 1:
            oldest = next(iter(self._objects))
            self._drop(self._objects.pop(oldest))

    def _drop(self, cached: _CachedObject) -> None:
        self.bytes -= cached.held
        cached.file.close()

    def clear(self) -> None:
        for cached in self._objects.values():
            cached.file.close()
        self._objects.clear()
        self.bytes = 0


class _CachedObject:
    """One object's fetched ranges (``have``: sorted, disjoint ``[start, end)``) in ``file``."""

    def __init__(self, file: Any, size: int) -> None:
        self.file = file
        self.size = size
        self.have: list[tuple[int, int]] = []

    @property
    def held(self) -> int:
        return sum(e - s for s, e in self.have)

    def missing(self, start: int, end: int) -> list[tuple[int, int]]:
        """The parts of ``[start, end)`` not fetched yet."""
        out = []
        at = start
        for s, e in self.have:
            if e <= at:
                continue
            if s >= end:
                break
            if s > at:
                out.append((at, s))
            at = max(at, e)
            if at >= end:
                break
        if at < end:
            out.append((at, end))
        return out

    def put(self, start: int, data: bytes) -> int:
        """``data`` fetched at ``start`` kept; how many bytes more are held."""
        os.pwrite(self.file.fileno(), data, start)
        before = self.held
        merged: list[tuple[int, int]] = []
        for s, e in sorted([*self.have, (start, start + len(data))]):
            if merged and s <= merged[-1][1]:
                merged[-1] = (merged[-1][0], max(merged[-1][1], e))
            else:
                merged.append((s, e))
        self.have = merged
        return self.held - before

    def read(self, start: int, end: int) -> bytes:
        return os.pread(self.file.fileno(), end - start, start)


#: The most a run's cache holds when ``KDUMP_STORE_CACHE`` (bytes; ``0``: never cache) does not say.
DEFAULT_CACHE_CAP = 2 << 30


def _cache_limit() -> int:
    """The cap of :func:`keep_fetched` (``KDUMP_STORE_CACHE``, else :data:`DEFAULT_CACHE_CAP`)."""
    text = os.environ.get("KDUMP_STORE_CACHE", "")
    return int(text) if text.isdigit() else DEFAULT_CACHE_CAP


#: This run's :class:`FetchCache` (off until :func:`keep_fetched`).
CACHE = FetchCache(0)


def keep_fetched(nbytes: int) -> None:
    """This run will read about ``nbytes`` of objects a second time: keep what is fetched, up to ``nbytes``
    (at most ``KDUMP_STORE_CACHE``, default 2 GiB), until the run ends (:func:`end_of_run`)."""
    CACHE.limit = max(CACHE.limit, min(nbytes, _cache_limit()))


def open_source(url: str, *, read_ahead: int = DEFAULT_READ_AHEAD) -> RangedSource:
    """The object at ``url`` as a ranged source: its size asked once, its bytes fetched a window at a time, each
    range fetched once per run (:data:`CACHE`).  :class:`StoreError` when it is missing, a prefix (a
    "directory"), or cannot be read."""
    found = info(url)
    if found is None:
        raise _missing(url)
    if found.get("type") == "directory":
        raise store_error(url, IsADirectoryError())
    size = int(found.get("size") or 0)
    fs, path = filesystem(url)
    STATS.objects[url] = size

    def get(start: int, end: int) -> bytes:
        STATS.read_requests += 1
        try:
            data: bytes = fs.cat_file(path, start=start, end=end)
        except Exception as e:  # noqa: BLE001 - a denied read, a dropped connection: one line naming the URL
            raise store_error(url, e, start) from None
        STATS.bytes_fetched += len(data)
        if len(data) != end - start:
            raise StoreError(
                f"the store gave {len(data)} bytes for the range {start}-{end} of a {size}-byte object "
                "(changed while kdump was reading it?)",
                path=url,
                position=start,
            )
        return data

    def fetch(start: int, end: int) -> bytes:
        cached = CACHE.get(url, size)
        if cached is None:
            return get(start, end)
        missing = cached.missing(start, end)
        if len(missing) == 1 and missing[0] == (start, end):
            data = get(start, end)
            CACHE.grew(cached.put(start, data))
            return data
        for lo, hi in missing:
            CACHE.grew(cached.put(lo, get(lo, hi)))
        STATS.cached_reads += 1
        return cached.read(start, end)

    return RangedSource(url, size, fetch, read_ahead=read_ahead)


def list_names(url: str) -> list[tuple[str, bool, int]]:
    """The entries right under the prefix ``url`` (a "directory"): ``(name, is_directory, size)`` by name."""
    fs, path = filesystem(url)
    STATS.metadata_requests += 1
    try:
        entries = fs.ls(path, detail=True)
    except FileNotFoundError:
        raise StoreError("No such prefix in the store", path=url) from None
    except Exception as e:  # noqa: BLE001 - one line naming the URL
        raise store_error(url, e) from None
    out = []
    base = path.rstrip("/")
    for entry in entries:
        name = str(entry.get("name", "")).rstrip("/")
        if name == base:
            continue
        leaf = name.rsplit("/", 1)[-1]
        directory = entry.get("type") == "directory"
        if not directory:  # what the listing says of an object is what info() would ask again: kept
            _INFO.setdefault(join(url, leaf), dict(entry))
        out.append((leaf, directory, int(entry.get("size") or 0)))
    return sorted(out)


def glob(pattern: str) -> list[str]:
    """The URLs of the objects and prefixes a glob pattern (``s3://b/logs/*/orders-*``) matches, sorted."""
    fs, path = filesystem(pattern)
    STATS.metadata_requests += 1
    try:
        found = fs.glob(path)
    except Exception as e:  # noqa: BLE001 - one line naming the URL
        raise store_error(pattern, e) from None
    scheme = pattern.split("://", 1)[0]
    return sorted(f"{scheme}://{str(p).lstrip('/')}" if scheme != "file" else f"file://{p}" for p in found)


def join(url: str, name: str) -> str:
    """``url`` + ``/`` + ``name`` (one slash between them)."""
    return url.rstrip("/") + "/" + name


def read_whole(url: str) -> bytes:
    """The whole content of a small object (an index, a snapshot, a state file): one ranged read."""
    source = open_source(url)
    return source.read(0, source.size())


def size_of(url: str) -> int:
    """The size of the object at ``url``; :class:`StoreError` when there is none."""
    found = info(url)
    if found is None or found.get("type") == "directory":
        raise _missing(url)
    return int(found.get("size") or 0)


def mtime_of(url: str) -> float:
    """When the object at ``url`` was last written, in seconds since the epoch (S3's ``LastModified``, a file
    system's ``mtime``: what the backend's ``info`` says, no request of its own); :class:`StoreError` when
    there is no such object or the store does not say."""
    found = info(url)
    if found is None or found.get("type") == "directory":
        raise _missing(url)
    from datetime import datetime

    for key in ("LastModified", "last_modified", "mtime", "updated"):
        value: Any = found.get(key)
        if isinstance(value, str):  # ISO-8601 (gcsfs's "updated")
            try:
                value = datetime.fromisoformat(value.replace("Z", "+00:00"))
            except ValueError:
                continue
        if isinstance(value, datetime):  # s3fs, adlfs
            return value.timestamp()
        if isinstance(value, int | float) and not isinstance(value, bool):  # seconds (file://)
            return float(value)
    raise StoreError("the store does not say when the object was written", path=url)


@dataclass(frozen=True)
class Entry:
    """One entry of a prefix's listing, as :func:`os.scandir` gives one (``name``, ``is_dir``)."""

    name: str
    directory: bool
    size: int

    def is_dir(self, *, follow_symlinks: bool = True) -> bool:
        return self.directory

    def is_file(self, *, follow_symlinks: bool = True) -> bool:
        return not self.directory


class Listing(list[Entry]):
    """A prefix's entries, usable where ``with os.scandir(path) as entries`` is."""

    def __enter__(self) -> Listing:
        return self

    def __exit__(self, *exc: object) -> None:
        return None


def scandir(url: str) -> Listing:
    """The entries right under the prefix ``url``, as :func:`os.scandir` lists a directory's."""
    return Listing(Entry(name, directory, size) for name, directory, size in list_names(url))
