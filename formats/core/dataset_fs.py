"""The files of the opened dataset, and nothing else.

Every walker lists directories and opens files through a `DatasetFS`: a listing is
confined to the dataset root, symlinks are resolved before anything is opened (one that
leaves the root, loops back to a folder above it, or is broken becomes a finding, never
followed), and special files (FIFOs, sockets, devices) are recognised with `lstat`/`stat`
before any `open`, so nothing blocks and nothing is read from outside the dataset.

`LocalFS` is the local implementation; a remote store (fsspec, `remote.py`) implements the
same protocol: `stat`, `list`, `open_source`, `read_bytes`; `filesystems.fs_of` chooses.
"""
from __future__ import annotations

import errno
import os
import stat as stat_mod
from contextlib import contextmanager, nullcontext
from dataclasses import dataclass
from typing import Dict, Iterator, List, Optional, Protocol, Tuple

from . import confined
from .confined import O_CLOEXEC, O_NOFOLLOW, O_NONBLOCK, open_beneath, open_dir_beneath
from .findings import BROKEN_LINK, OBJECT_KEY_NOT_A_PATH, OUTSIDE_DATASET, SPECIAL_FILE, SYMLINK_LOOP, UNREADABLE_ENTRY
from .node import ERROR, OK, WARNING, Node
from .source import ByteSource, FileSource, SpecialFileError, open_regular
from .status import Status

# Entry kinds.
FILE = "file"                # a regular file (possibly through a symlink inside the dataset)
DIR = "dir"                  # a real directory inside the dataset
SYMLINK_OUT = "symlink-out"  # a symlink (or a path through one) that leaves the dataset
LOOP = "loop"                # a symlink to a folder that contains it (`.`, `..`): a cycle
ALIAS = "alias"              # a symlink to another folder of the dataset: shown there, not here
SPECIAL = "special"          # FIFO, socket, character or block device: never opened
BROKEN = "broken"            # a symlink to nothing
MISSING = "missing"          # no such path
UNREADABLE = "unreadable"    # lstat itself failed (permissions)
BAD_KEY = "bad-key"          # an object key with a `.`, `..` or empty segment: no path (remote)


class OutsideDatasetError(OSError):
    """A path outside the opened dataset was asked for."""


@dataclass(frozen=True, slots=True)   # 100 000 fragment folders: no __dict__ each
class Entry:
    """One directory entry of the dataset."""

    path: str      # the path the walker knows it by (joined from the root, unresolved)
    rel: str       # relative to the dataset root, "/"-separated ("." for the root)
    kind: str
    size: int = 0  # bytes, for a regular file
    real: str = ""  # the resolved path (what is opened), or a link's target
    detail: str = ""  # what a special file is, where a link points, why lstat failed

    @property
    def name(self) -> str:
        return self.rel.rsplit("/", 1)[-1]

    @property
    def is_file(self) -> bool:
        return self.kind == FILE

    @property
    def is_dir(self) -> bool:
        return self.kind == DIR

    def problem(self) -> Optional[Tuple[Status, str, str]]:
        """(status, stable code, message) when the entry cannot be walked; None when it can.
        A link out of the dataset is a warning (a git-annex or DVC checkout links every file
        into a store elsewhere: the bytes are fine, only not part of what was opened); a
        loop, a FIFO or device where a file belongs, a dangling link are damage."""
        if self.kind == SYMLINK_OUT:
            return WARNING, OUTSIDE_DATASET, (f"{self.rel}: symbolic link to {self.detail}, "
                                              f"outside the opened dataset: not followed")
        if self.kind == LOOP:
            return ERROR, SYMLINK_LOOP, (f"{self.rel}: symbolic link to {self.detail}, a "
                                           f"folder that contains it (a loop): not followed")
        if self.kind == SPECIAL:
            return ERROR, SPECIAL_FILE, f"{self.rel}: a {self.detail}, not a regular file: skipped"
        if self.kind == BROKEN:
            return ERROR, BROKEN_LINK, f"{self.rel}: symbolic link to {self.detail}, which does not exist"
        if self.kind == UNREADABLE:
            return WARNING, UNREADABLE_ENTRY, f"{self.rel}: cannot be read: {self.detail}"
        if self.kind == BAD_KEY:
            return ERROR, OBJECT_KEY_NOT_A_PATH, (f"{self.rel!r}: {self.detail}, which names no "
                                                  f"path of the dataset: not followed")
        return None


class DatasetFS(Protocol):
    """What a walker may do with the files of the dataset (local or remote)."""

    root: str

    def stat(self, path: str) -> Entry:
        """The entry at `path` (never raises: a missing path is kind MISSING)."""
        ...

    def list(self, path: str) -> List[Entry]:
        """The entries of directory `path`, sorted by name. Raises OSError when it cannot be
        listed."""
        ...

    def open_source(self, path: str, name: str) -> ByteSource:
        """A read-only source over the regular file at `path`, named `name`. Raises
        OSError (OutsideDatasetError, SpecialFileError, FileNotFoundError) for anything else."""
        ...

    def read_bytes(self, path: str, limit: int) -> Tuple[bytes, bool]:
        """(up to `limit` bytes from the start of the file, whether it holds more)."""
        ...


_SPECIAL_NAMES = ((stat_mod.S_ISFIFO, "FIFO (named pipe)"), (stat_mod.S_ISSOCK, "socket"),
                  (stat_mod.S_ISCHR, "character device"), (stat_mod.S_ISBLK, "block device"))


def special_name(mode: int) -> str:
    for test, name in _SPECIAL_NAMES:
        if test(mode):
            return name
    return "special file"


def _real_dir(d: os.DirEntry) -> bool:
    try:
        return d.is_dir(follow_symlinks=False)
    except OSError:
        return False


def listings_kept(fs: DatasetFS):
    """`LocalFS.listings_kept` of `fs`; for another store, a scope that keeps nothing."""
    kept = getattr(fs, "listings_kept", None)
    return kept() if kept is not None else nullcontext()


def subdirs(fs: DatasetFS, path: str) -> List[Entry]:
    """The real folders in directory `path` (LocalFS: no stat per entry; OSError when it
    cannot be listed)."""
    if isinstance(fs, LocalFS):
        return fs.subdirs(path)
    return [e for e in fs.list(path) if e.is_dir]


_PROC_FD = os.path.isdir("/proc/self/fd") and hasattr(os, "O_PATH")


def realpath(path: str) -> str:
    """`os.path.realpath`, resolved by the kernel in one call where it can (Linux: an
    O_PATH descriptor read back through /proc/self/fd). Python's own walks each component
    with an lstat of its own: a walk of a hierarchy 1 200 folders deep paid that on every
    path, quadratic in the depth."""
    if _PROC_FD:
        try:
            fd = os.open(path, os.O_PATH | os.O_CLOEXEC)
        except OSError:   # broken link, loop, a name too long: Python says what it is
            return os.path.realpath(path)
        try:
            real = os.readlink(f"/proc/self/fd/{fd}")
        except OSError:
            real = ""
        finally:
            os.close(fd)
        if real.startswith("/") and not real.endswith(" (deleted)"):
            return real
    return os.path.realpath(path)


def _within(path: str, root: str) -> bool:
    return path == root or path.startswith(root.rstrip(os.sep) + os.sep)


class LocalFS:
    """The dataset under local directory `root`."""

    def __init__(self, root: str):
        self.root = os.path.abspath(root)
        self.real_root = realpath(self.root)
        # folder -> (its entries, by name) while `listings_kept`; None: every call lists
        self._kept: Optional[Dict[str, Tuple[List[Entry], Dict[str, Entry]]]] = None

    @contextmanager
    def listings_kept(self) -> Iterator[None]:
        """Within: each folder listed once — `list` of a folder listed before answers from
        that listing, and `stat` of an entry in it too. For one verify run, whose checks of
        a fragment, its bookkeeping and the health snapshot each list every fragment folder
        (what changes under the run is not seen by it: it checks what it listed). Nested:
        the outermost scope's listings."""
        if self._kept is not None:
            yield
            return
        self._kept = {}
        try:
            yield
        finally:
            self._kept = None

    def rel(self, path: str) -> str:
        rel = confined.relative_to(os.path.abspath(path), self.root)
        return "." if rel == "." else rel.replace(os.sep, "/")

    def contains(self, path: str) -> bool:
        """`path` names something under the root (by name; links are judged by `stat`)."""
        return _within(os.path.abspath(path), self.root)

    def stat(self, path: str) -> Entry:
        full = os.path.abspath(path)
        kept = self._kept
        if kept is not None:
            folder, name = os.path.split(full)
            listed = kept.get(folder)
            hit = listed[1].get(name) if listed is not None else None
            if hit is not None:
                return hit
        rel = self.rel(full)
        if not _within(full, self.root):
            return Entry(full, rel, SYMLINK_OUT, detail=full)
        try:
            lst = os.lstat(full)
        except FileNotFoundError:
            return Entry(full, rel, MISSING)
        except OSError as e:
            return Entry(full, rel, UNREADABLE, detail=e.strerror or str(e))
        real = realpath(full)
        link = stat_mod.S_ISLNK(lst.st_mode)
        if not _within(real, self.real_root):
            target = os.readlink(full) if link else real
            return Entry(full, rel, SYMLINK_OUT, real=real, detail=target)
        if not link:
            return self._entry(full, rel, lst, real)
        target = os.readlink(full)
        try:
            st = os.stat(full)
        except OSError as e:
            if e.errno == errno.ELOOP:
                return Entry(full, rel, LOOP, real=real, detail=target)
            return Entry(full, rel, BROKEN, real=real, detail=target)
        if stat_mod.S_ISDIR(st.st_mode):
            parent = realpath(os.path.dirname(full))
            if _within(parent, real):
                return Entry(full, rel, LOOP, real=real, detail=target)
            return Entry(full, rel, ALIAS, real=real, detail=target)
        return self._entry(full, rel, st, real)

    @staticmethod
    def _entry(full: str, rel: str, st: os.stat_result, real: str) -> Entry:
        if stat_mod.S_ISREG(st.st_mode):
            return Entry(full, rel, FILE, size=st.st_size, real=real)
        if stat_mod.S_ISDIR(st.st_mode):
            return Entry(full, rel, DIR, real=real)
        return Entry(full, rel, SPECIAL, real=real, detail=special_name(st.st_mode))

    def list(self, path: str) -> List[Entry]:
        kept = self._kept
        if kept is not None:
            listed = kept.get(os.path.abspath(path))
            if listed is not None:
                return list(listed[0])
        out = self._list(path)
        if kept is not None:
            kept[os.path.abspath(path)] = (out, {e.name: e for e in out})
        return list(out)

    def _list(self, path: str) -> List[Entry]:
        here = self.stat(path)
        if here.kind != DIR:
            raise NotADirectoryError(f"{here.rel}: not a directory of the dataset ({here.kind})")
        out: List[Entry] = []
        links: List[str] = []
        pre = "" if here.rel == "." else here.rel + "/"
        same = here.real == here.path   # no link on the way: one string for both paths
        with _scandir(self.real_root, here.real) as it:
            # each entry's type and stat taken while the listing is open (a listing by
            # descriptor stats its entries through it; after, every one failed and went
            # the whole `stat` way), and turned into its Entry at once: the listing's own
            # objects (a DirEntry and a stat result each) are never held for all entries
            for d in it:
                try:
                    st = None if d.is_symlink() else d.stat(follow_symlinks=False)
                except OSError:
                    st = None   # let `stat` say what is wrong with it
                if st is None:
                    links.append(d.name)
                    continue
                # not a link, in a folder already resolved inside the dataset: its real
                # path is the folder's real path and its name (what `stat` finds)
                full = _join(here.path, d.name)
                out.append(self._entry(full, pre + d.name, st,
                                       full if same else _join(here.real, d.name)))
        # a link is judged by where it leads
        out.extend(self.stat(_join(here.path, name)) for name in links)
        out.sort(key=_entry_name)
        return out

    def subdirs(self, path: str) -> List[Entry]:
        """The real folders (not links) in directory `path`, sorted by name: `list` without
        a stat per entry (the listing's file type says which are folders; a thousand
        fragment folders). Raises OSError when `path` cannot be listed."""
        here = self.stat(path)
        if here.kind != DIR:
            raise NotADirectoryError(f"{here.rel}: not a directory of the dataset ({here.kind})")
        with _scandir(self.real_root, here.real) as it:
            found = sorted((d.name for d in it if _real_dir(d)))
        pre = "" if here.rel == "." else here.rel + "/"
        if here.real == here.path:   # no link on the way: one string for both paths
            return [Entry(p, pre + n, DIR, real=p) for n in found for p in (_join(here.path, n),)]
        return [Entry(_join(here.path, n), pre + n, DIR, real=_join(here.real, n))
                for n in found]

    def read_in(self, folder: Entry, name: str, limit: int) -> Optional[Tuple[Entry, Optional[bytes]]]:
        """(entry, its bytes, or None when it holds more than `limit`) of regular file `name`
        of `folder` (an entry `list`/`subdirs` gave as a real folder inside the dataset);
        None when it is anything but a regular file (a link, a FIFO, missing: `stat` says
        what). One open (never through a link: O_NOFOLLOW; never blocking: O_NONBLOCK), one
        fstat, one read: the folder was resolved when it was listed."""
        real = _join(folder.real, name)
        try:   # beneath the root: a folder swapped for a link since it was listed fails
            fd = open_beneath(self.real_root, real, _READ_IN_FLAGS)
        except OSError:
            return None
        try:
            st = os.fstat(fd)
            if not stat_mod.S_ISREG(st.st_mode):
                return None
            data = os.pread(fd, st.st_size, 0) if st.st_size <= limit else None
        except OSError:
            return None
        finally:
            os.close(fd)
        rel = name if folder.rel == "." else f"{folder.rel}/{name}"
        return Entry(_join(folder.path, name), rel, FILE, size=st.st_size, real=real), data

    def _regular(self, path: str) -> Entry:
        e = self.stat(path)
        if e.kind == FILE:
            return e
        if e.kind in (MISSING, BROKEN):
            raise FileNotFoundError(f"{e.rel}: no such file")
        if e.kind == SPECIAL:
            raise SpecialFileError(f"{e.rel}: a {e.detail}, not a regular file")
        if e.kind in (SYMLINK_OUT, LOOP):
            raise OutsideDatasetError((e.problem() or ("", "", e.rel))[2])
        raise IsADirectoryError(f"{e.rel}: not a regular file ({e.kind})")

    def open_source(self, path: str, name: str) -> FileSource:
        e = self._regular(path)
        return FileSource(e.real, name, self.real_root)

    def read_bytes(self, path: str, limit: int) -> Tuple[bytes, bool]:
        e = self._regular(path)
        fd = open_regular(e.real, self.real_root)
        try:
            data = os.pread(fd, limit + 1, 0) if limit >= 0 else b""
        finally:
            os.close(fd)
        return data[:limit], len(data) > limit

    def is_file(self, path: str) -> bool:
        return self.stat(path).kind == FILE

    def is_dir(self, path: str) -> bool:
        return self.stat(path).kind == DIR


# read_in: never through a link, never blocking (a FIFO), not inherited by children
_READ_IN_FLAGS = os.O_RDONLY | O_NONBLOCK | O_NOFOLLOW | O_CLOEXEC


@contextmanager
def _scandir(root: str, real: str) -> Iterator[Iterator[os.DirEntry]]:
    """`os.scandir` of folder `real`, opened beneath the root (formats/core/confined.py) where
    the system lists by descriptor."""
    if not (confined.AVAILABLE and os.scandir in os.supports_fd):
        with os.scandir(real) as it:
            yield it
        return
    fd = open_dir_beneath(root, real)
    try:
        with os.scandir(fd) as it:
            yield it
    finally:
        os.close(fd)


def _entry_name(e: Entry) -> str:
    return e.name


def _join(folder: str, name: str) -> str:
    """os.path.join of a folder path and a plain name (a thousand files: no general join)."""
    if not folder or folder.endswith(os.sep):
        return folder + name
    return folder + os.sep + name


def entry_node(document, entry: Entry) -> Node:
    """The node of an entry a walker does not enter: a located finding (or, for an alias,
    a plain note)."""
    source = document.relname(entry.path) if document is not None else entry.rel
    kind = "dir" if entry.kind in (DIR, ALIAS, LOOP) else "file"
    p = entry.problem()
    if p is None:
        msg = (f"symbolic link to {entry.detail}, a folder of this dataset shown under its own "
               f"name" if entry.kind == ALIAS else None)
        return Node(entry.name, kind, source, 0, 0, status=OK, display=msg)
    status, code, message = p
    return Node(entry.name, kind, source, 0, 0, status=status, code=code, message=message,
                display=f"-> {entry.detail}" if entry.detail and entry.kind != BAD_KEY else None)


def unreadable_node(document, path: str, error: OSError) -> Node:
    """The node of a regular file the format needs that cannot be opened or read (mode 000,
    a file locked elsewhere): an error, as the reader that needs it fails too."""
    source = document.relname(path) if document is not None else os.path.basename(path)
    return Node(os.path.basename(path), "file", source, 0, 0, status=ERROR,
                code=UNREADABLE_ENTRY,
                message=f"{source}: cannot be read: {error.strerror or error}")


def mark_unlistable(node: Node, error: OSError) -> Node:
    """Mark the node of a folder that cannot be listed (mode 000, an ACL): an error with
    the code of any entry that cannot be examined, as a reader that needs it fails too."""
    node.mark(ERROR, f"cannot list directory: {error.strerror or error}")
    node.code = UNREADABLE_ENTRY
    return node


def listable(fs: DatasetFS, path: str) -> bool:
    """Whether folder `path` can be listed (asked only where a check would otherwise report
    what an unlistable folder hides: the folder's own finding says it)."""
    try:
        fs.list(path)
    except OSError:
        return False
    return True


def member_path(name: str) -> Optional[str]:
    """`name` (a file name a format's metadata gives, "/"-separated) as a path relative to
    the dataset, or None when it could leave it: absolute, `..` components, a drive, NUL."""
    if not name or "\0" in name or "\\" in name or name.startswith("/") or ":" in name.split("/")[0]:
        return None
    parts = [p for p in name.split("/") if p not in ("", ".")]
    if not parts or any(p == ".." for p in parts):
        return None
    return "/".join(parts)
