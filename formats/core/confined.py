"""Opening a file of a local dataset so that nothing changed on disk can lead the open out of it.

`LocalFS.stat` judges a path before it is opened (a link leaving the dataset is a finding);
between that look and the open, a folder of the path may be swapped for a link to another
place (a race, or a hostile writer). So each open starts from the dataset root's descriptor
and opens one component at a time with O_NOFOLLOW (`openat`): a component that has become a
link fails the open (ELOOP/ENOTDIR), whatever it points to, and the caller reports the path
as it does any unreadable file. Links inside the dataset (which `stat` resolved to their
real path) are never walked: the path opened is the real one.

Where the system lacks `dir_fd` opens or O_NOFOLLOW (Windows), the path is opened as before:
checked by `stat`, then opened by name."""
from __future__ import annotations

import os
import threading
from collections import OrderedDict
from typing import Optional

O_CLOEXEC = getattr(os, "O_CLOEXEC", 0)
O_NOFOLLOW = getattr(os, "O_NOFOLLOW", 0)
O_DIRECTORY = getattr(os, "O_DIRECTORY", 0)
O_NONBLOCK = getattr(os, "O_NONBLOCK", 0)
AVAILABLE = bool(O_NOFOLLOW and O_DIRECTORY) and os.open in os.supports_dir_fd
_DIR_FLAGS = os.O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC


class EscapeError(OSError):
    """A path that is not under the dataset root, or that leads out of it on the way."""


def relative_to(path: str, root: str) -> str:
    """`os.path.relpath(path, root)` of absolute, normalized paths (what `os.path.abspath`
    gives), by a prefix where `path` lies under `root`: relpath normalizes both again and
    splits them into components, a cost every node name of a 10 000-fragment verify paid."""
    if path == root:
        return "."
    pre = root if root.endswith(os.sep) else root + os.sep
    if path.startswith(pre) and len(path) > len(pre):
        return path[len(pre):]
    return os.path.relpath(path, root)


def relative_parts(root: str, path: str) -> list:
    """The components of `path` under `root` (both real, absolute paths); EscapeError when
    `path` is not under `root`."""
    rel = relative_to(path, root)
    if rel == ".":
        return []
    parts = rel.split(os.sep)
    if parts[0] == ".." or os.path.isabs(rel):
        raise EscapeError(f"{path}: not inside the dataset ({root})")
    return parts


class Walker:
    """Descriptors of the dataset's folders, opened beneath the root one component at a time
    and kept (by relative path) until `close`: a thousand fragment folders of one
    `__fragments` open it once."""

    def __init__(self, root: str, keep: Optional[int] = None):
        self.root = root
        self.keep = keep   # at most this many descriptors, least recently used closed first
        self._dirs: "OrderedDict[tuple, int]" = OrderedDict()

    def _kept(self, parts: tuple) -> Optional[int]:
        """The kept descriptor of `parts`, if any. One kept from an earlier open (`keep`) is
        used only while its path still names that folder (a folder removed or renamed is
        opened afresh): a descriptor opened beneath the root is the real folder it was."""
        fd = self._dirs.get(parts)
        if fd is None or self.keep is None:
            return fd
        try:
            now, was = os.lstat(os.sep.join((self.root, *parts))), os.fstat(fd)
            current = (now.st_dev, now.st_ino) == (was.st_dev, was.st_ino)
        except OSError:
            current = False
        if not current:
            del self._dirs[parts]
            os.close(fd)
            return None
        self._dirs.move_to_end(parts)
        return fd

    def _keep(self, parts: tuple, fd: int) -> None:
        self._dirs[parts] = fd
        while self.keep is not None and len(self._dirs) > self.keep:
            os.close(self._dirs.popitem(last=False)[1])

    def folder(self, parts: tuple) -> int:
        """The descriptor of the folder at `parts` (components under the root): from the
        nearest folder above it already open, one component at a time (a loop, not a call a
        level: a dataset sets the depth). The folders passed on the way are closed again, so
        a path 1 500 folders deep holds no 1 500 descriptors (the usual limit is 1 024)."""
        fd = self._kept(parts)
        if fd is not None:
            return fd
        k = max(len(parts) - 1, 0)
        while k > 0 and (parts[:k] not in self._dirs or self._kept(parts[:k]) is None):
            k -= 1
        base = self._kept(parts[:k])
        if base is None:   # nothing open yet: the root
            base = os.open(self.root, os.O_RDONLY | O_DIRECTORY | O_CLOEXEC)
            self._keep((), base)
        fd = base
        for i in range(k, len(parts)):
            try:
                below = os.open(parts[i], _DIR_FLAGS, dir_fd=fd)
            except OSError as e:   # named by its whole path, as an open by name would say it
                raise type(e)(e.errno, e.strerror, os.path.join(self.root, *parts[:i + 1])) from None
            finally:
                if fd != base:
                    os.close(fd)
            fd = below
        self._keep(parts, fd)
        return fd

    def open(self, path: str, flags: int) -> int:
        """A descriptor of `path` (real, absolute, under the root), its last component opened
        with `flags` | O_NOFOLLOW."""
        parts = tuple(relative_parts(self.root, path))
        if not parts:   # a dataset that is one file (a .npy; a file probed by `fs_of(None, it)`)
            return os.open(self.root, flags | O_NOFOLLOW | O_CLOEXEC)
        try:
            return os.open(parts[-1], flags | O_NOFOLLOW | O_CLOEXEC, dir_fd=self.folder(parts[:-1]))
        except OSError as e:   # named by its whole path, as an open by name would say it
            raise type(e)(e.errno, e.strerror, path) from None

    def close(self) -> None:
        dirs, self._dirs = self._dirs, OrderedDict()
        for fd in dirs.values():
            os.close(fd)

    def __enter__(self) -> "Walker":
        return self

    def __exit__(self, *exc) -> None:
        self.close()


# Folder descriptors kept from one open to the next, for one dataset root at a time: a file
# opens from its folder's descriptor, not by a walk from the root each time (400 nested
# groups walked 575 000 folders; 1 500 took minutes). Held under the lock for the whole open:
# no other thread closes a descriptor while it is used.
RECENT_FOLDERS = 32
_recent_lock = threading.Lock()
_recent: Optional[Walker] = None


def _recent_walker(root: str) -> Walker:
    global _recent
    if _recent is None or _recent.root != root:
        if _recent is not None:
            _recent.close()
        _recent = Walker(root, keep=RECENT_FOLDERS)
    return _recent


def open_beneath(root: Optional[str], path: str, flags: int) -> int:
    """A descriptor of `path`, opened beneath `root` without following any link on the way
    (see the module doc); with no root, or where the system cannot, opened by name."""
    if root is None or not AVAILABLE:
        return os.open(path, flags | O_CLOEXEC)
    with _recent_lock:
        return _recent_walker(root).open(path, flags)


def open_dir_beneath(root: Optional[str], path: str) -> int:
    """A descriptor of folder `path` (the root itself or a folder beneath it), opened as
    `open_beneath` opens a file."""
    if root is None or not AVAILABLE:
        return os.open(path, os.O_RDONLY | O_DIRECTORY | O_CLOEXEC)
    parts = tuple(relative_parts(root, path))
    with _recent_lock:
        return os.dup(_recent_walker(root).folder(parts))
