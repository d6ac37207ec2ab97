"""Read-only byte sources: memory-mapped files and the outputs of filter stages.

A source is never read whole: callers ask for a window (`read`, `view`, `array`) and
reads past the end are clamped, so a parser always sees how many bytes were really there.
"""
from __future__ import annotations

import mmap
import os
import stat
import threading
import weakref
from collections import OrderedDict
from typing import Any, Callable, Optional

import numpy as np


class SpecialFileError(OSError):
    """A FIFO, socket or device where a regular file was expected: never read (a FIFO
    would block forever, /dev/zero never ends)."""


def open_regular(path: str, root: Optional[str] = None) -> int:
    """A read-only descriptor of the regular file `path`. Opened non-blocking (opening a
    FIFO with no writer must not wait) and checked with fstat before any read. With the
    dataset's `root` (its real path), opened beneath it, following no link on the way
    (formats/core/confined.py)."""
    from .confined import O_NONBLOCK, open_beneath

    fd = open_beneath(root, path, os.O_RDONLY | O_NONBLOCK)
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
    last_error: Optional[str] = None   # why the last read came back short (a remote source)

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
        count = min(count, len(mv) // max(dt.itemsize, 1))  # a file that shrank reads short
        return np.frombuffer(mv, dtype=dt, count=count)

    def close(self) -> None:
        pass

    def __repr__(self) -> str:
        return f"<{type(self).__name__} {self.name!r} {self.size} B>"


def _forgetter(key: int) -> Callable[[Any], None]:
    """A weak reference's callback: the LRU's entry `key` dropped as its source goes."""
    def forget(_ref: Any) -> None:
        FileSource._mapped.pop(key, None)
    return forget


class FileSource(ByteSource):
    """A regular file opened read-only: nothing is read until asked.

    Small windows (what parsers and the hex view ask for) are read with `pread`, through a
    few cached 64 KiB blocks: a file that shrinks while open then gives a short read, never
    a SIGBUS that kills the process. Large windows (whole tiles, lazy arrays) are
    memory-mapped (ACCESS_READ), after checking with fstat that the file still holds them;
    if it shrank, they are read with pread instead. (A large mapped view kept past a later
    truncation can still fault; nothing in the engine keeps one across user actions.)

    At most MAX_MAPPED files are open at once (least recently read first out; a view
    handed out keeps its mapping alive): a Zarr array of thousands of chunk files must not
    hold thousands of descriptors (the usual soft limit is 1 024) nor keep every page it
    once touched resident. A closed-out file is opened again on its next read."""

    MAX_MAPPED = 128
    BLOCK_BITS = 16
    BLOCK = 1 << BLOCK_BITS  # pread block of the small-window cache
    CACHED_BLOCKS = 4
    PREAD_MAX = 1 << 20      # windows up to this size are read, larger ones mapped
    # id -> a weak reference: the LRU bounds open descriptors, it never keeps a source alive
    # (a source nobody holds closes its descriptor as it goes, `__del__`)
    _mapped: "OrderedDict[int, weakref.ReferenceType[FileSource]]" = OrderedDict()
    _lock = threading.Lock()

    def __init__(self, path: str, name: Optional[str] = None, root: Optional[str] = None):
        self.path = os.fspath(path)
        self.name = name if name is not None else os.path.basename(self.path)
        self.root = root   # the dataset's real root: every (re)open stays beneath it
        self._fd: Optional[int] = None
        self._mm: Optional[mmap.mmap] = None
        self._mv: Optional[memoryview] = None
        self._blocks: "OrderedDict[int, memoryview]" = OrderedDict()
        self._closed = False
        fd = open_regular(self.path, root)  # unreadable and special files fail here, at open
        try:
            self._size = os.fstat(fd).st_size
        except BaseException:
            os.close(fd)
            raise
        self._adopt(fd)   # kept for the first read (an open beneath the root is not free)

    @property
    def size(self) -> int:
        return self._size

    def _descriptor(self) -> int:
        """The open descriptor (opened again after being closed out of the LRU)."""
        if self._closed:
            raise ValueError(f"{self.name}: the source is closed")
        fd = self._fd
        if fd is not None:
            try:   # recently read: last out (one C call, atomic under the GIL)
                FileSource._mapped.move_to_end(id(self))
            except KeyError:
                pass
            return fd
        fd = open_regular(self.path, self.root)
        self._adopt(fd)
        return fd

    def _adopt(self, fd: int) -> None:
        """`fd` as this source's descriptor, in the LRU of open files (the oldest closed)."""
        self._fd = fd
        key = id(self)
        with FileSource._lock:
            lru = FileSource._mapped
            # (the callback runs inside a collection, maybe on a thread holding the lock:
            # one atomic pop, no lock; the id is not reused before it runs)
            lru[key] = weakref.ref(self, _forgetter(key))
            while len(lru) > FileSource.MAX_MAPPED:
                try:
                    _k, ref = lru.popitem(last=False)
                except KeyError:
                    break
                old = ref()
                if old is not None:
                    old._unmap()

    def __del__(self) -> None:
        fd = getattr(self, "_fd", None)
        if fd is not None:
            try:
                os.close(fd)
            except OSError:
                pass

    def _unmap(self) -> None:
        # Views handed out keep the mapping alive; only drop our references.
        self._mv = None
        self._mm = None
        self._blocks = OrderedDict()
        fd, self._fd = self._fd, None
        if fd is not None:
            os.close(fd)

    def _block(self, fd: int, index: int) -> memoryview:
        blocks = self._blocks
        b = blocks.get(index)
        if b is None:
            b = memoryview(os.pread(fd, self.BLOCK, index * self.BLOCK))
            blocks[index] = b
            while len(blocks) > self.CACHED_BLOCKS:
                try:
                    blocks.popitem(last=False)
                except KeyError:  # another thread emptied it meanwhile
                    break
        return b

    def _mapped_view(self, fd: int, offset: int, n: int) -> Optional[memoryview]:
        """A mapped window, or None when the file no longer holds it (it shrank)."""
        if os.fstat(fd).st_size < offset + n:
            return None
        mv = self._mv
        if mv is None or len(mv) < offset + n:
            try:
                mm = mmap.mmap(fd, 0, access=mmap.ACCESS_READ)
            except (ValueError, OSError):
                return None
            self._mm, self._mv = mm, memoryview(mm)
            mv = self._mv
        return mv[offset:offset + n]

    def view(self, offset: int, length: int) -> memoryview:
        size = self._size
        if offset < 0 or length <= 0 or offset >= size:
            return memoryview(b"")
        n = length if length < size - offset else size - offset
        first = offset >> self.BLOCK_BITS
        if (offset + n - 1) >> self.BLOCK_BITS == first:
            cached = self._blocks.get(first)   # the hot path: a parser's next field
            if cached is not None:
                start = offset - (first << self.BLOCK_BITS)
                return cached[start:start + n]
        try:
            fd = self._descriptor()
            if (offset + n - 1) >> self.BLOCK_BITS == first:
                start = offset - (first << self.BLOCK_BITS)
                return self._block(fd, first)[start:start + n]
            if n > self.PREAD_MAX:
                mv = self._mapped_view(fd, offset, n)
                if mv is not None:
                    return mv
            return memoryview(os.pread(fd, n, offset))
        except OSError:
            # The file went away (or became unreadable) since it was opened: a short
            # read, which parsers report as a located error, never an exception.
            return memoryview(b"")

    def release(self, offset: int, length: int) -> None:
        """Drop the mapped pages wholly inside [offset, offset + length) from this process's
        resident memory, for a decoder that reads a large file once: the bytes stay
        readable (touched again, they come back from the page cache)."""
        mm = self._mm
        if mm is None or not hasattr(mm, "madvise") or not hasattr(mmap, "MADV_DONTNEED"):
            return
        page = mmap.PAGESIZE
        a = -(-max(0, offset) // page) * page
        b = min((offset + length) // page * page, len(mm) // page * page)
        if b > a:
            try:
                mm.madvise(mmap.MADV_DONTNEED, a, b - a)
            except (OSError, ValueError):   # closed meanwhile, or not supported here
                pass

    def close(self) -> None:
        self._closed = True
        with FileSource._lock:
            ref = FileSource._mapped.get(id(self))
            if ref is not None and ref() is self:
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
