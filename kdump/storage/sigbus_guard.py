"""Surviving a segment that is truncated while it is memory-mapped.

Reading a page of a memory map that lies past the end of a file truncated after it was mapped raises
``SIGBUS``, which kills the process (Python cannot turn it into an exception: its own signal handlers run
later, between bytecodes, and the faulting read would fault again forever).  A forensic tool is run on live
log directories, where a broker may truncate a segment (log recovery, a follower truncating to the leader) at
any moment, so kdump must not die of it.

On Linux (x86-64 and ARM64, where the layout of ``sigaction`` and ``siginfo_t`` is fixed) this module installs,
the first time a mapping is registered, a ``SIGBUS`` handler that looks at the faulting address.  Inside a
mapping registered here it maps a zero-filled page over the vanished one and counts the event, so the read
completes (seeing zeros) and the reader, which checks :func:`fault_count` and the file size, reports the
truncation instead of dying (see :meth:`kdump.storage.file_records.FileRecords.check_unchanged`).  A fault
anywhere else gets the previous disposition back, so it ends the process as it would have without this module.

Where the handler cannot be installed, :func:`register` returns None and readers fall back to checking the
file size before each batch, which narrows the window but cannot close it.
"""

from __future__ import annotations

import ctypes
import errno
import itertools
import mmap
import os
import signal
import sys
import threading
import weakref
from typing import TYPE_CHECKING, TypedDict

from kdump.storage.regular_file import open_regular

if TYPE_CHECKING:
    from _ctypes import CFuncPtr

__all__ = ["available", "fault_count", "map_file", "register", "unregister"]

_SA_SIGINFO = 4
_PROT_READ = 1
_MAP_PRIVATE = 0x02
_MAP_FIXED = 0x10
_MAP_ANONYMOUS = 0x20
_PAGE = mmap.PAGESIZE

_faults = 0
#: (start, end) address ranges of the registered mappings, replaced as a whole (the handler reads it).
_spans: dict[int, tuple[int, int]] = {}
_spans_view: tuple[tuple[int, int], ...] = ()
#: Bumped by every rebuild of ``_spans_view`` (a re-entrant rebuild tells the outer one to read again).
_version = 0
# Re-entrant: a map's finalizer (unregister) can run inside register, when building the spans' tuple collects it.
_lock = threading.RLock()
#: Tokens are a counter, not addresses: a new map at the address of a collected one whose finalizer has not run
#: yet must not lose its protection when that finalizer unregisters the old token.
_tokens = itertools.count(1)


class _State(TypedDict, total=False):
    """What :func:`_install` found and made (absent until it has run; ``installed`` is set first)."""

    installed: bool
    libc: ctypes.CDLL
    handler: CFuncPtr  # kept alive here: libc calls it
    previous: _SigAction  # the disposition before ours
    get_buffer: ctypes._NamedFuncPointer
    release_buffer: ctypes._NamedFuncPointer


_state: _State = {}


class _SigInfo(ctypes.Structure):
    # siginfo_t on 64-bit Linux: si_signo, si_errno, si_code, padding, then the union (si_addr for SIGBUS).
    _fields_ = [
        ("si_signo", ctypes.c_int),
        ("si_errno", ctypes.c_int),
        ("si_code", ctypes.c_int),
        ("_pad", ctypes.c_int),
        ("si_addr", ctypes.c_void_p),
    ]
    # ctypes makes the fields from _fields_; these annotations (no values, so no class attributes) type them
    si_addr: int | None


_HANDLER = ctypes.CFUNCTYPE(None, ctypes.c_int, ctypes.POINTER(_SigInfo), ctypes.c_void_p)


class _SigAction(ctypes.Structure):
    # glibc's struct sigaction on x86-64 and aarch64.
    _fields_ = [
        ("sa_sigaction", ctypes.c_void_p),
        ("sa_mask", ctypes.c_ulong * 16),
        ("sa_flags", ctypes.c_int),
        ("sa_restorer", ctypes.c_void_p),
    ]
    sa_sigaction: int | None
    sa_flags: int


class _PyBuffer(ctypes.Structure):
    _fields_ = [
        ("buf", ctypes.c_void_p),
        ("obj", ctypes.c_void_p),
        ("len", ctypes.c_ssize_t),
        ("itemsize", ctypes.c_ssize_t),
        ("readonly", ctypes.c_int),
        ("ndim", ctypes.c_int),
        ("format", ctypes.c_char_p),
        ("shape", ctypes.c_void_p),
        ("strides", ctypes.c_void_p),
        ("suboffsets", ctypes.c_void_p),
        ("internal", ctypes.c_void_p),
    ]
    buf: int | None


def fault_count() -> int:
    """How many vanished pages have been replaced by zeros so far in this process."""
    return _faults


def _on_sigbus(signum: int, info: ctypes._Pointer[_SigInfo], context: int) -> None:
    global _faults
    try:
        address = info.contents.si_addr or 0
        for start, end in _spans_view:
            if start <= address < end:
                page = address & ~(_PAGE - 1)
                libc = _state["libc"]
                mapped = libc.mmap(page, _PAGE, _PROT_READ, _MAP_PRIVATE | _MAP_ANONYMOUS | _MAP_FIXED, -1, 0)
                if mapped == page:
                    _faults += 1
                    return
                break
        # Not one of ours (or the page could not be replaced): restore the previous disposition; the access is
        # retried on return and faults again, now with the behaviour it would have had without this module.
        _state["libc"].sigaction(signal.SIGBUS, ctypes.byref(_state["previous"]), None)
    except BaseException:  # noqa: BLE001 - nothing may propagate out of a signal handler
        loaded = _state.get("libc")
        if loaded is not None:
            loaded.signal(signal.SIGBUS, 0)  # SIG_DFL


def _install() -> bool:
    if "installed" in _state:
        if _state["installed"]:
            _reinstall_if_replaced()
        return bool(_state["installed"])
    _state["installed"] = False
    if not sys.platform.startswith("linux") or os.uname().machine not in ("x86_64", "aarch64", "arm64"):
        return False
    if ctypes.sizeof(ctypes.c_void_p) != 8:
        return False
    try:
        libc = ctypes.CDLL(None, use_errno=True)
        libc.mmap.restype = ctypes.c_void_p
        libc.mmap.argtypes = [
            ctypes.c_void_p,
            ctypes.c_size_t,
            ctypes.c_int,
            ctypes.c_int,
            ctypes.c_int,
            ctypes.c_long,
        ]
        libc.sigaction.argtypes = [ctypes.c_int, ctypes.POINTER(_SigAction), ctypes.POINTER(_SigAction)]
        libc.signal.argtypes = [ctypes.c_int, ctypes.c_void_p]
        libc.signal.restype = ctypes.c_void_p
        get_buffer = ctypes.pythonapi.PyObject_GetBuffer
        get_buffer.argtypes = [ctypes.py_object, ctypes.POINTER(_PyBuffer), ctypes.c_int]
        release_buffer = ctypes.pythonapi.PyBuffer_Release
        release_buffer.argtypes = [ctypes.POINTER(_PyBuffer)]
        handler = _HANDLER(_on_sigbus)
        action = _SigAction()
        action.sa_sigaction = ctypes.cast(handler, ctypes.c_void_p).value
        action.sa_flags = _SA_SIGINFO
        previous = _SigAction()
        if libc.sigaction(signal.SIGBUS, ctypes.byref(action), ctypes.byref(previous)) != 0:
            return False
    except (OSError, AttributeError, TypeError, ValueError):
        return False
    _state.update(
        {
            "libc": libc,
            "handler": handler,
            "previous": previous,
            "get_buffer": get_buffer,
            "release_buffer": release_buffer,
        }
    )
    _state["installed"] = True
    return True


def _reinstall_if_replaced() -> None:
    """Someone (``faulthandler.enable()``, say) may have set another SIGBUS handler since: put ours back in
    front of it."""
    libc = _state["libc"]
    current = _SigAction()
    if libc.sigaction(signal.SIGBUS, None, ctypes.byref(current)) != 0:
        return
    ours = ctypes.cast(_state["handler"], ctypes.c_void_p).value
    if current.sa_sigaction != ours:
        action = _SigAction()
        action.sa_sigaction = ours
        action.sa_flags = _SA_SIGINFO
        previous = _SigAction()
        if libc.sigaction(signal.SIGBUS, ctypes.byref(action), ctypes.byref(previous)) == 0:
            _state["previous"] = previous


def available() -> bool:
    """Whether the handler is (or can be) installed in this process."""
    return _install()


def _address_of(mapping: mmap.mmap) -> int | None:
    view = _PyBuffer()
    if _state["get_buffer"](mapping, ctypes.byref(view), 0) != 0:
        return None
    try:
        return view.buf
    finally:
        _state["release_buffer"](ctypes.byref(view))


def register(mapping: mmap.mmap) -> int | None:
    """Protect reads of ``mapping``; returns a token for :func:`unregister`, or None when this process cannot
    be protected (then the caller has to check the file size itself)."""
    if len(mapping) == 0 or not _install():
        return None
    try:
        start = _address_of(mapping)
    except (OSError, TypeError, ValueError):
        return None
    if not start:
        return None
    with _lock:
        token = next(_tokens)
        _spans[token] = (start, start + len(mapping))
        _refresh_view()
    return token


def unregister(token: int | None) -> None:
    """Stop protecting a mapping (call before closing it)."""
    if token is None:
        return
    with _lock:
        _spans.pop(token, None)
        _refresh_view()


def _refresh_view() -> None:
    """Rebuild the spans the handler reads (the lock held).  Building the tuple allocates, an allocation may run
    the collector, and the collector a mapping's finalizer: :func:`unregister`, re-entering this thread's lock
    and changing ``_spans`` while it was being read ("dictionary changed size during iteration", seen in the
    suite).  So a copy is read, and read again if a re-entrant call changed the spans meanwhile."""
    global _spans_view, _version
    while True:
        _version += 1
        mine = _version
        view = tuple(_spans.copy().values())
        if _version == mine:
            _spans_view = view
            return


def map_file(path: str, *, dir_fd: int | None = None) -> tuple[mmap.mmap | bytes, int]:
    """``(content, size)``: a read-only memory map of the regular file at ``path``, registered with the guard for
    as long as the map lives (``b""`` for an empty file).  Pages are read only when touched, so a 1 GiB index
    costs what its lookups read.  OSError for a missing, unreadable or non-regular file or a failed map."""
    fd = open_regular(path, dir_fd=dir_fd)
    try:
        size = os.fstat(fd).st_size
        if size == 0:
            return b"", 0
        try:
            mapping = mmap.mmap(fd, 0, access=mmap.ACCESS_READ)
        except ValueError as e:
            raise OSError(errno.EINVAL, f"cannot map the file: {e}", path) from None
    finally:
        os.close(fd)
    token = register(mapping)
    if token is not None:
        weakref.finalize(mapping, unregister, token)
    return mapping, size
