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
from typing import Dict, Optional

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

    def __init__(self, root: str):
        self.root = root
        self._dirs: Dict[tuple, int] = {}

    def folder(self, parts: tuple) -> int:
        """The descriptor of the folder at `parts` (components under the root)."""
        fd = self._dirs.get(parts)
        if fd is not None:
            return fd
        if not parts:
            fd = os.open(self.root, os.O_RDONLY | O_DIRECTORY | O_CLOEXEC)
        else:
            try:
                fd = os.open(parts[-1], _DIR_FLAGS, dir_fd=self.folder(parts[:-1]))
            except OSError as e:   # named by its whole path, as an open by name would say it
                raise type(e)(e.errno, e.strerror, os.path.join(self.root, *parts)) from None
        self._dirs[parts] = fd
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
        dirs, self._dirs = self._dirs, {}
        for fd in dirs.values():
            os.close(fd)

    def __enter__(self) -> "Walker":
        return self

    def __exit__(self, *exc) -> None:
        self.close()


def open_beneath(root: Optional[str], path: str, flags: int) -> int:
    """A descriptor of `path`, opened beneath `root` without following any link on the way
    (see the module doc); with no root, or where the system cannot, opened by name."""
    if root is None or not AVAILABLE:
        return os.open(path, flags | O_CLOEXEC)
    with Walker(root) as w:
        return w.open(path, flags)


def open_dir_beneath(root: Optional[str], path: str) -> int:
    """A descriptor of folder `path` (the root itself or a folder beneath it), opened as
    `open_beneath` opens a file."""
    if root is None or not AVAILABLE:
        return os.open(path, os.O_RDONLY | O_DIRECTORY | O_CLOEXEC)
    parts = tuple(relative_parts(root, path))
    with Walker(root) as w:
        return os.dup(w.folder(parts))
