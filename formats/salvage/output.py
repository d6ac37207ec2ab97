"""The new dataset a salvage writes: a folder that did not exist, and files created in it
one by one (never over an existing file, never through a link), copied from the opened
dataset through its confined opens (never from outside it)."""
from __future__ import annotations

import os
from typing import Iterable

from ..core.confined import O_CLOEXEC, O_NOFOLLOW
from ..core.dataset_fs import realpath
from ..core.source import open_regular

_CHUNK = 1 << 22   # bytes copied per read: a large data file never sits in memory whole
_CREATE = os.O_WRONLY | os.O_CREAT | os.O_EXCL | O_NOFOLLOW | O_CLOEXEC


class OutputError(OSError):
    """OUT cannot be written (exists, lies inside the dataset, a bad name)."""


def _within(path: str, root: str) -> bool:
    return path == root or path.startswith(root.rstrip(os.sep) + os.sep)


class Output:
    """Folder `out`, created now; `source_root`: the dataset read (nothing is written in it).
    `dry`: the same checks, nothing created or written (a report before writing)."""

    def __init__(self, out: str, source_root: str, dry: bool = False):
        self.root = os.path.abspath(out)
        if os.path.lexists(self.root):
            raise OutputError(f"{out}: already exists (salvage writes a new dataset only)")
        parent = realpath(os.path.dirname(self.root))
        if _within(os.path.join(parent, os.path.basename(self.root)), realpath(source_root)):
            raise OutputError(f"{out}: inside the dataset being salvaged (it is only read)")
        self.dry = dry
        self.files = 0
        self.nbytes = 0
        if dry:
            if not os.path.isdir(parent):
                raise OutputError(f"{out}: cannot be created: its folder does not exist")
            return
        try:
            os.mkdir(self.root)
        except OSError as e:
            raise OutputError(f"{out}: cannot be created: {e.strerror or e}") from e

    def _folder(self, parts) -> str:
        """Folder `parts` under OUT, made where missing (a name a file or a link already
        takes fails: nothing is written through a link)."""
        if any(p in ("", ".", "..") or os.sep in p for p in parts):
            raise OutputError(f"{'/'.join(parts)!r}: not a plain relative path")
        folder = self.root
        for p in parts:
            folder = os.path.join(folder, p)
            if os.path.islink(folder) or not os.path.isdir(folder):
                os.mkdir(folder)
        return folder

    def _target(self, rel: str) -> str:
        parts = rel.split("/")
        if parts[-1] in ("", ".", "..") or os.sep in parts[-1]:
            raise OutputError(f"{rel!r}: not a plain relative path")
        return os.path.join(self._folder(parts[:-1]), parts[-1])

    def mkdir(self, rel: str) -> None:
        """An empty folder (libtiledb lists `__commits`, `__fragments`, ...)."""
        if not self.dry:
            self._folder(rel.split("/"))

    def write(self, rel: str, data: bytes) -> None:
        self.write_blocks(rel, (data,))

    def write_blocks(self, rel: str, blocks: Iterable[bytes]) -> None:
        """File `rel` made of `blocks`, written as they come (a large file never sits in
        memory whole). When producing a block raises, the part written is removed and the
        error goes on: OUT never holds a file cut short."""
        if self.dry:
            self.files += 1
            self.nbytes += sum(len(b) for b in blocks)
            return
        target = self._target(rel)
        fd = os.open(target, _CREATE, 0o644)
        n = 0
        try:
            for block in blocks:
                view = memoryview(block)
                n += len(view)
                while view:
                    view = view[os.write(fd, view):]
        except BaseException:
            os.close(fd)
            os.unlink(target)
            raise
        os.close(fd)
        self.files += 1
        self.nbytes += n

    def copy(self, real: str, real_root: str, rel: str) -> int:
        """Copy regular file `real` (a resolved path inside `real_root`, as DatasetFS entries
        give it) to `rel`, byte for byte; the bytes copied."""
        src = open_regular(real, real_root)
        if self.dry:
            try:
                n = os.fstat(src).st_size
            finally:
                os.close(src)
            self.files += 1
            self.nbytes += n
            return n
        try:
            fd = os.open(self._target(rel), _CREATE, 0o644)
            try:
                n, pos = 0, 0
                while True:
                    block = os.pread(src, _CHUNK, pos)
                    if not block:
                        break
                    pos += len(block)
                    view = memoryview(block)
                    while view:
                        view = view[os.write(fd, view):]
                    n += len(block)
            finally:
                os.close(fd)
        finally:
            os.close(src)
        self.files += 1
        self.nbytes += n
        return n
