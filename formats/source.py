"""Read-only byte sources: memory-mapped files and the outputs of filter stages.

A source is never read whole: callers ask for a window (`read`, `view`, `array`) and
reads past the end are clamped, so a parser always sees how many bytes were really there.
"""
from __future__ import annotations

import mmap
import os
from typing import Optional

import numpy as np


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
    """A file opened read-only and memory-mapped (ACCESS_READ): nothing is read until asked."""

    def __init__(self, path: str, name: Optional[str] = None):
        self.path = os.fspath(path)
        self.name = name if name is not None else os.path.basename(self.path)
        self._size = os.path.getsize(self.path)
        self._mm: Optional[mmap.mmap] = None
        self._fh = None
        if self._size:
            self._fh = open(self.path, "rb")
            try:
                self._mm = mmap.mmap(self._fh.fileno(), 0, access=mmap.ACCESS_READ)
            except (ValueError, OSError):
                self._mm = None  # special files: fall back to seek+read windows
        self._mv = memoryview(self._mm) if self._mm is not None else None

    @property
    def size(self) -> int:
        return self._size

    def view(self, offset: int, length: int) -> memoryview:
        n = self.available(offset, length)
        if n == 0:
            return memoryview(b"")
        if self._mv is not None:
            return self._mv[offset:offset + n]
        self._fh.seek(offset)
        return memoryview(self._fh.read(n))

    def close(self) -> None:
        # Views handed out keep the mapping alive; only drop our references.
        self._mv = None
        self._mm = None
        if self._fh is not None:
            self._fh.close()
            self._fh = None


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
