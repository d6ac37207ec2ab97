"""Many small files of a local dataset read in two calls that hold no GIL.

Why: `values` on a thousand fragments reads two small files of each. From Python every
`open`, `fstat`, `pread` and `close` gives the GIL up and takes it back, and beside a thread
that is decoding, each take-back waits for that thread (a convoy): the reads cost more than
the parsing. A compiled loop calling libc itself (`bulkread_kernels.py`) reads a whole batch
with the GIL released, on any thread.

The rules are `LocalFS.read_in`'s: a path is looked at with `statx` without following a
final link before anything is opened, and only a regular file is opened — never through a
link, never blocking, not inherited — then looked at again through the open descriptor and
read only if it is still that regular file of that size. Anything else, and anything that
fails, is left unread (size -1) for the caller's own reading, which says what is wrong.

Linux only (`statx`: one structure layout on every architecture, glibc 2.28 or later) and
only where numba loads; elsewhere `read_files` returns None and callers read file by file.
"""
from __future__ import annotations

import ctypes
import os
import stat
import sys
import threading
from typing import Any, Optional, Sequence, Tuple

import numpy as np

from ..core import compiled, confined
from ..core.confined import O_CLOEXEC, O_NOFOLLOW, O_NONBLOCK
from .native import address

# the O_ flags differ between architectures: from `os` (the statx layout is in the kernels)
OPEN_FLAGS = os.O_RDONLY | O_NONBLOCK | O_NOFOLLOW | O_CLOEXEC
PROC_FD = "/proc/self/fd"   # /proc/self/fd/N/name: `name` in the folder open as N

_lock = threading.Lock()
_libc: Optional[Tuple[int, ...]] = None
_tried = False


def libc_functions() -> Optional[Tuple[int, ...]]:
    """The addresses of libc's statx, open, pread and close, or None (not Linux, no statx)."""
    global _libc, _tried
    if not _tried:
        with _lock:
            if not _tried:
                got: Optional[Tuple[int, ...]] = None
                if sys.platform.startswith("linux") and ctypes.sizeof(ctypes.c_void_p) == 8:
                    try:
                        from ctypes.util import find_library  # here: it imports subprocess and tempfile

                        libc = ctypes.CDLL(find_library("c") or "libc.so.6")
                        got = tuple(address(getattr(libc, n))
                                    for n in ("statx", "open", "pread", "close"))
                        if not all(got):
                            got = None
                    except (OSError, AttributeError):   # no such library or symbol
                        got = None
                _libc = got
                _tried = True
    return _libc


def _kernels() -> Any:
    # the caller chose this path (`compiled.bulk_wanted`, which loads numba): never here
    if compiled.disabled() or not compiled.loaded():
        return None
    try:
        from . import bulkread_kernels
    except Exception:   # numba present but unable to build the intrinsics
        return None
    return bulkread_kernels


def read_files(paths: Sequence[str], limit: int, root: str
               ) -> Optional[Tuple[np.ndarray, np.ndarray, np.ndarray]]:
    """(blob, starts, sizes): file i's bytes are `blob[starts[i]:starts[i] + sizes[i]]`, or
    `sizes[i]` is -1 when it was not read — missing, not a regular file, a link, more than
    `limit` bytes, changed while read, a folder on its way that is no longer a folder
    beneath `root` (the dataset's real path): the caller reads it its own way. None when
    this machine cannot read this way, or numba is not loaded — the caller's decision,
    `compiled.bulk_wanted`, loads it (then nothing was read).

    Confinement: each file's folder is opened here beneath `root`, one component at a time
    without following links (formats/core/confined.py), and the kernel opens the file in that
    open folder (`/proc/self/fd/N/name`: no path above it is looked up again)."""
    fns = libc_functions()
    kernels = _kernels() if fns is not None else None
    if fns is None or kernels is None or not confined.AVAILABLE or not os.path.isdir(PROC_FD):
        return None
    with confined.Walker(root) as walker:
        return _read(kernels, fns, [_in_open_folder(walker, p) for p in paths], limit)


def _in_open_folder(walker: "confined.Walker", path: str) -> bytes:
    """`path` as a name in its folder's open descriptor, NUL-terminated; a lone NUL (statx
    fails: not read) when the folder cannot be opened beneath the root."""
    try:
        parts = confined.relative_parts(walker.root, path)
        if not parts:
            return b"\0"
        fd = walker.folder(tuple(parts[:-1]))
    except OSError:
        return b"\0"
    b = os.fsencode(f"{PROC_FD}/{fd}/{parts[-1]}")
    return b"\0" if b"\0" in b else b + b"\0"   # a NUL inside: statx fails


def _read(kernels: Any, fns: Tuple[int, ...], encoded: Sequence[bytes], limit: int
          ) -> Tuple[np.ndarray, np.ndarray, np.ndarray]:
    names = np.frombuffer(b"".join(encoded), np.uint8)
    name_at = np.zeros(len(encoded), np.int64)
    if len(encoded) > 1:
        np.cumsum([len(b) for b in encoded[:-1]], out=name_at[1:])
    fn_array = np.array(fns, dtype=np.uint64)
    scratch = np.zeros(kernels.STATX_BYTES, np.uint8)
    sizes = np.full(len(encoded), -1, np.int64)
    kernels.stat_sizes(fn_array, names, name_at, limit, stat.S_IFMT(0o177777),
                       stat.S_IFREG, scratch, sizes)
    starts = np.zeros(len(encoded), np.int64)
    room = np.maximum(sizes, 0)
    if len(encoded) > 1:
        np.cumsum(room[:-1], out=starts[1:])
    blob = np.empty(int(room.sum()), np.uint8)
    kernels.read_sized(fn_array, names, name_at, OPEN_FLAGS, stat.S_IFMT(0o177777),
                       stat.S_IFREG, scratch, sizes, starts, blob)
    return blob, starts, sizes
