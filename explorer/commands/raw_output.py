"""Where `values --raw OUT` puts the decoded cells: decoded straight into the file.

Writing a field's cells after decoding them cost as much as the decode (one thread copying
half a gigabyte into the page cache; one `write` of it all is the slowest way: measured
4x the CPU of 16 MiB writes). Instead the decoder asks `OutputFile.buffer` for each buffer
of cells it is about to fill: a writable shared mapping of the next bytes of a new file
beside OUT, so the decode threads fill the page cache themselves, in parallel, and no
second buffer of the cells exists.

The file is made whole before it is OUT: it is named `.OUT.<random>.partial` until
`finish`, which renames it over OUT when the cells, in the order `values` gives them, are
exactly the buffers it handed out, in order (every fragment decoded, the common case).
Otherwise (a fragment failed, a route that made its own buffer) OUT is written from the
cells as before and the partial file is removed; so OUT holds the same bytes either way,
and a run that stops early leaves no OUT that looks complete.

Only for a new or regular OUT whose folder we may write in (not a link, a device or a
hard-linked file: replacing those would not write where the user pointed), on a system
with `posix_fallocate` (Linux; elsewhere a mapped write to a full disk could only fail as
a SIGBUS); `create` gives None otherwise, and OUT is written as before.
"""
from __future__ import annotations

import mmap
import os
import stat
import threading
from typing import Any, List, Optional, Sequence, Tuple

import numpy as np

# the cells are written to OUT in pieces of this size at most: one `write` of half a
# gigabyte cost four times the CPU of these (measured, ext4)
WRITE_PIECE = 16 << 20


def write_parts(path: str, parts: Sequence[Any]) -> None:
    """Write `parts` (bytes-like) one after the other into `path`."""
    with open(path, "wb") as fh:
        for part in parts:
            mv = memoryview(part).cast("B")
            for a in range(0, len(mv), WRITE_PIECE):
                fh.write(mv[a:a + WRITE_PIECE])


class OutputFile:
    """A new file beside `path` that the decoder fills through `buffer`; `finish` makes it
    `path` (module doc). `discard` removes it (any error on the way)."""

    def __init__(self, path: str, fd: int, partial: str, mode: Optional[int]):
        self.path, self._fd, self.partial, self._mode = path, fd, partial, mode
        self._size = 0
        self._lock = threading.Lock()   # (a batch may be decoded on a thread of its own)
        self._regions: List[Tuple[int, int]] = []   # (address, length) of each buffer

    @classmethod
    def create(cls, path: str) -> Optional["OutputFile"]:
        if not hasattr(os, "posix_fallocate"):   # (macOS, Windows: OUT written as before)
            return None
        try:
            st: Optional[os.stat_result] = os.lstat(path)
        except FileNotFoundError:
            st = None
        except OSError:
            return None
        if st is not None and (not stat.S_ISREG(st.st_mode) or st.st_nlink != 1
                               or not os.access(path, os.W_OK)):
            return None   # (a read-only OUT: refused by `open` as before, not replaced)
        folder, name = os.path.split(os.path.abspath(path))
        partial = os.path.join(folder, f".{name}.{os.urandom(4).hex()}.partial")
        try:
            # (mode 0o666 less the umask, as `open` makes OUT)
            fd = os.open(partial, os.O_RDWR | os.O_CREAT | os.O_EXCL | getattr(os, "O_CLOEXEC", 0),
                         0o666)
        except OSError:
            return None
        return cls(path, fd, partial, stat.S_IMODE(st.st_mode) if st is not None else None)

    def buffer(self, nbytes: int) -> np.ndarray:
        """A writable uint8 array of `nbytes`: the next `nbytes` of the file. The blocks are
        reserved first, so a full disk is an OSError here rather than a SIGBUS in a decode
        thread."""
        if nbytes <= 0:
            return np.empty(0, np.uint8)
        with self._lock:
            start = self._size
            os.posix_fallocate(self._fd, start, nbytes)
            self._size = start + nbytes
            lead = start % mmap.ALLOCATIONGRANULARITY
            m = mmap.mmap(self._fd, lead + nbytes, offset=start - lead)
            arr = np.frombuffer(m, np.uint8)[lead:]
            self._regions.append((arr.ctypes.data, nbytes))
        return arr

    def holds(self, parts: Sequence[Any]) -> bool:
        """Whether `parts`, one after the other, are exactly the buffers handed out, in
        order (then the file is their bytes)."""
        k, at = 0, 0
        for part in parts:
            n = len(memoryview(part).cast("B"))
            if not n:
                continue
            if k >= len(self._regions):
                return False
            addr, size = self._regions[k]
            if np.frombuffer(part, np.uint8).ctypes.data != addr + at or at + n > size:
                return False
            at += n
            if at == size:
                k, at = k + 1, 0
        return k == len(self._regions) and at == 0

    def finish(self, parts: Sequence[Any]) -> None:
        """Make OUT the bytes of `parts`: the file renamed over it when it holds them, else
        OUT written from them (and the file removed)."""
        if not self.holds(parts):
            self.discard()
            write_parts(self.path, parts)
            return
        if self._mode is not None:   # an OUT that was there keeps its permissions
            os.fchmod(self._fd, self._mode)
        os.close(self._fd)
        self._fd = -1
        os.replace(self.partial, self.path)

    def discard(self) -> None:
        if self._fd >= 0:
            os.close(self._fd)
            self._fd = -1
        try:
            os.unlink(self.partial)
        except FileNotFoundError:
            pass
