"""Read-only byte sources: memory-mapped files and the outputs of filter stages.

A source is never read whole: callers ask for a window (`read`, `view`, `array`) and
reads past the end are clamped, so a parser always sees how many bytes were really there.
"""
from __future__ import annotations

import mmap
import os
import stat
import threading
from collections import OrderedDict
from typing import Optional

import numpy as np


class SpecialFileError(OSError):
    """A FIFO, socket or device where a regular file was expected: never read (a FIFO
    would block forever, /dev/zero never ends)."""


def open_regular(path: str) -> int:
    """A read-only descriptor of the regular file `path`. Opened non-blocking (opening a
    FIFO with no writer must not wait) and checked with fstat before any read."""
    fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK | getattr(os, "O_CLOEXEC", 0))
    try:
        mode = os.fstat(fd).st_mode
        if not stat.S_ISREG(mode):
            raise SpecialFileError(f"{path}: not a regular file")
    except BaseException:
        os.close(fd)
        raise
    return fd


class ByteSource:
    """Random-access read-only bytes with a name.

    `origin` is set on derived sources (the output of a filter stage): a short text naming
    the stage, and `origin_node` the node it was derived from.
    """

    name: str
    origin: Optional[str] = None
    origin_node = None
    parent: Optional["ByteSource"] = None

    @property
    def size(self) -> int:  # pragma: no cover - abstract
        raise NotImplementedError

    def view(self, offset: int, length: int) -> memoryview:  # pragma: no cover - abstract
        raise NotImplementedError

    def __len__(self) -> int:
        return self.size

    def available(self, offset: int, length: int) -> int:
        """How many of `length` bytes from `offset` really exist."""
        if offset < 0 or offset >= self.size or length <= 0:
            return 0
        return min(length, self.size - offset)

    def read(self, offset: int, length: int) -> bytes:
        """Up to `length` bytes from `offset` (fewer at the end of the source)."""
        return bytes(self.view(offset, length))

    def array(self, offset: int, count: int, dtype) -> np.ndarray:
        """`count` items of `dtype` from `offset`, clamped to whole items present (zero-copy)."""
        dt = np.dtype(dtype)
        count = max(0, min(count, self.available(offset, count * dt.itemsize) // max(dt.itemsize, 1)))
        mv = self.view(offset, count * dt.itemsize)
        return np.frombuffer(mv, dtype=dt, count=count)

    def close(self) -> None:
        pass

    def __repr__(self) -> str:
        return f"<{type(self).__name__} {self.name!r} {self.size} B>"


class FileSource(ByteSource):
    """A file opened read-only and memory-mapped (ACCESS_READ): nothing is read until asked.

    The mapping is made on the first read, and at most MAX_MAPPED files are mapped at once
    (least recently read first out; a view handed out keeps its mapping alive): a Zarr array
    of thousands of chunk files must not hold thousands of descriptors (the usual soft limit
    is 1 024) nor keep every page it once touched resident. An unmapped file is mapped again
    on its next read."""

    MAX_MAPPED = 128
    _mapped: "OrderedDict[int, FileSource]" = OrderedDict()
    _lock = threading.Lock()

    def __init__(self, path: str, name: Optional[str] = None):
        self.path = os.fspath(path)
        self.name = name if name is not None else os.path.basename(self.path)
        self._mm: Optional[mmap.mmap] = None
        self._fh = None
        self._mv: Optional[memoryview] = None
        self._closed = False
        fd = open_regular(self.path)  # unreadable and special files fail here, at open
        try:
            self._size = os.fstat(fd).st_size
        finally:
            os.close(fd)

    @property
    def size(self) -> int:
        return self._size

    def _map(self) -> Optional[memoryview]:
        """Map the file (or, for special files, open it for seek+read); None in the fallback."""
        if self._closed:
            raise ValueError(f"{self.name}: the source is closed")
        fh = os.fdopen(open_regular(self.path), "rb")
        try:
            mm = mmap.mmap(fh.fileno(), 0, access=mmap.ACCESS_READ)
        except (ValueError, OSError):
            mm = None  # an empty or unmappable file: fall back to seek+read windows
        if mm is not None:
            fh.close()   # the mapping holds its own descriptor
            fh = None
        mv = memoryview(mm) if mm is not None else None
        self._mm, self._mv, self._fh = mm, mv, fh
        with FileSource._lock:
            lru = FileSource._mapped
            lru[id(self)] = self
            while len(lru) > FileSource.MAX_MAPPED:
                _k, old = lru.popitem(last=False)
                old._unmap()
        return mv

    def _unmap(self) -> None:
        # Views handed out keep the mapping alive; only drop our references.
        self._mv = None
        self._mm = None
        fh, self._fh = self._fh, None
        if fh is not None:
            fh.close()

    def view(self, offset: int, length: int) -> memoryview:
        n = self.available(offset, length)
        if n == 0:
            return memoryview(b"")
        mv, fh = self._mv, self._fh
        if mv is None and fh is None:
            try:
                mv = self._map()
            except OSError:
                # The file went away (or became unreadable) since it was opened: a short
                # read, which parsers report as a located error, never an exception.
                return memoryview(b"")
            fh = self._fh
        else:
            try:   # recently read: last out (one C call, atomic under the GIL)
                FileSource._mapped.move_to_end(id(self))
            except KeyError:
                pass
        if mv is not None:
            return mv[offset:offset + n]
        fh.seek(offset)
        return memoryview(fh.read(n))

    def close(self) -> None:
        self._closed = True
        with FileSource._lock:
            if FileSource._mapped.get(id(self)) is self:
                del FileSource._mapped[id(self)]
        self._unmap()


class BytesSource(ByteSource):
    """Bytes held in memory: a filter stage's output, a decompressed payload, a test buffer."""

    def __init__(self, data, name: str, origin: Optional[str] = None, origin_node=None,
                 parent: Optional[ByteSource] = None):
        self._data = data if isinstance(data, (bytes, bytearray)) else bytes(data)
        self._mv = memoryview(self._data)
        self.name = name
        self.origin = origin
        self.origin_node = origin_node
        self.parent = parent

    @property
    def size(self) -> int:
        return len(self._data)

    @property
    def data(self) -> bytes:
        return bytes(self._data)

    def view(self, offset: int, length: int) -> memoryview:
        n = self.available(offset, length)
        if n == 0:
            return memoryview(b"")
        return self._mv[offset:offset + n]
