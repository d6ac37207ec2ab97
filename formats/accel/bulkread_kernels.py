"""The compiled loops of `bulkread.py`: libc's statx, open, pread and close called by
address (`nativekernels._c_function`), a whole batch of files per call with no GIL held.
Imported only once numba is known to load."""
from __future__ import annotations

from typing import Any

import numba
import numpy as np

from .nativekernels import _c_function

# <fcntl.h> / <linux/stat.h>: the same on every Linux architecture
AT_FDCWD = -100
AT_SYMLINK_NOFOLLOW = 0x100
AT_EMPTY_PATH = 0x1000
STATX_TYPE = 0x1
STATX_SIZE = 0x200
STATX_BYTES = 256                # sizeof(struct statx): the scratch `bulkread` hands in
STATX_MODE_AT, STATX_SIZE_AT = 28, 40   # stx_mode (u16), stx_size (u64)

_statx = _c_function((32, 64, 32, 32, 64), 32)      # statx(dirfd, path, flags, mask, buf)
_open = _c_function((64, 32), 32, variadic=True)    # open(path, flags, ...)
_pread = _c_function((32, 64, 64, 64), 64)          # pread(fd, buf, count, offset)
_close = _c_function((32,), 32)                     # close(fd)

_U = np.uint64
_WANTED = STATX_TYPE | STATX_SIZE


@numba.njit(nogil=True, cache=True, inline="always")
def _regular_size(scratch: Any, ifmt: int, ifreg: int) -> Any:
    """The size statx put in `scratch` when it describes a regular file, else -1."""
    mask = np.int64(scratch[0]) | (np.int64(scratch[1]) << 8) | (np.int64(scratch[2]) << 16) \
        | (np.int64(scratch[3]) << 24)
    mode = np.int64(scratch[STATX_MODE_AT]) | (np.int64(scratch[STATX_MODE_AT + 1]) << 8)
    if (mask & _WANTED) != _WANTED or (mode & ifmt) != ifreg:
        return -1
    size = np.int64(0)
    for k in range(8):
        size |= np.int64(scratch[STATX_SIZE_AT + k]) << (8 * k)
    return size


@numba.njit(nogil=True, cache=True)
def stat_sizes(fns: Any, names: Any, name_at: Any, limit: int, ifmt: int, ifreg: int,
               scratch: Any, sizes: Any) -> None:
    """sizes[i]: the size of regular file `names[name_at[i]:]` (NUL-terminated) of at most
    `limit` bytes, looked at without following a final link; left -1 otherwise."""
    base = names.ctypes.data
    buf = scratch.ctypes.data
    for i in range(len(name_at)):
        r = _statx(fns[0], (_U(AT_FDCWD & 0xFFFFFFFF), _U(base + name_at[i]),
                            _U(AT_SYMLINK_NOFOLLOW), _U(_WANTED), _U(buf)))
        if r != 0:
            continue
        size = _regular_size(scratch, ifmt, ifreg)
        if 0 <= size <= limit:
            sizes[i] = size


@numba.njit(nogil=True, cache=True)
def read_sized(fns: Any, names: Any, name_at: Any, flags: int, ifmt: int, ifreg: int,
               scratch: Any, sizes: Any, starts: Any, blob: Any) -> None:
    """Read each file with sizes[i] >= 0 whole into `blob[starts[i]:]`: opened with
    `flags`, looked at again through the descriptor (still a regular file of that size),
    read to its end; sizes[i] set to -1 when any of that fails."""
    base = names.ctypes.data
    buf = scratch.ctypes.data
    out = blob.ctypes.data
    for i in range(len(name_at)):
        want = sizes[i]
        if want < 0:
            continue
        sizes[i] = -1
        fd = _open(fns[1], (_U(base + name_at[i]), _U(flags)))
        if fd < 0:
            continue
        # the descriptor itself (AT_EMPTY_PATH with "": the NUL ending `names`)
        ok = _statx(fns[0], (_U(fd), _U(base + len(names) - 1), _U(AT_EMPTY_PATH),
                             _U(_WANTED), _U(buf))) == 0 \
            and _regular_size(scratch, ifmt, ifreg) == want
        done = 0
        while ok and done < want:
            got = _pread(fns[2], (_U(fd), _U(out + starts[i] + done), _U(want - done),
                                  _U(done)))
            if got <= 0:
                ok = False
            else:
                done += got
        _close(fns[3], (_U(fd),))
        if ok and done == want:
            sizes[i] = want
