"""What a verify run checked, counted by whoever does the work: `tally()` is the running
report's `Tally` (a throwaway one outside a report), so a format's checks count their
tiles and bytes without knowing whether a report, a worker or nobody is listening."""
from __future__ import annotations

import contextlib
import contextvars
import os
from dataclasses import dataclass, field
from typing import Callable, Dict, Iterator, Optional, Set

ProgressFn = Callable[[int, int, str], None]   # (bytes done, bytes planned, what)


@dataclass
class Tally:
    """What a verify run checked, and what it could not."""

    files: Set[str] = field(default_factory=set)
    tiles: int = 0
    nbytes: int = 0          # stored bytes decoded and checked
    planned: int = 0         # stored bytes to check (progress total: every file's size)
    progress: Optional[ProgressFn] = None
    # Progress counts in the total's terms: the whole size of each folder checked to the
    # end (`finished`: a fragment's data files with their chunk headers, its metadata) plus
    # the chunk bytes checked since. Chunk bytes alone never reach the total (headers,
    # metadata, schema: 56 % of an array of one-cell tiles); `complete` ends it at 100 %.
    _done: int = 0
    _since: int = 0
    _shown: int = 0   # the bar never goes back (workers' chunk bytes, then their folders)
    # the folders counted whole, by what `finished` was told (each counted once: a worker's
    # folder comes back with its task, and the caller's merge names it again)
    folders: Dict[str, int] = field(default_factory=dict)

    def tile(self, source: str, nbytes: int) -> None:
        self.batch(source, 1, nbytes)

    def batch(self, source: str, count: int, nbytes: int) -> None:
        """`count` tiles of `source` checked in one batch (`nbytes` stored bytes)."""
        self.files.add(source)
        self.tiles += count
        self.nbytes += nbytes
        self._since += nbytes
        self._report(source)

    def add(self, other: "Tally", what: str) -> None:
        """What `other` counted (a part checked aside, then kept) counted here too."""
        self.files |= other.files
        self.tiles += other.tiles
        self.nbytes += other.nbytes
        self._since += other.nbytes
        self._report(what)

    def finished(self, nbytes: int, what: str) -> None:
        """Everything in `nbytes` stored bytes (a fragment's folder, `what`) is checked:
        counted whole, in place of its chunk bytes counted so far (once: a folder counted
        before is not counted again)."""
        if what not in self.folders:
            self.folders[what] = nbytes
            self._done += nbytes
        self._since = 0
        self._report(what)

    def complete(self, what: str = "") -> None:
        """The run is over: progress at the total."""
        self._done, self._since = max(self.planned, self._done), 0
        self._report(what)

    def _report(self, what: str) -> None:
        if self.progress is not None:
            done = self._shown = max(self._shown, self._done + self._since)
            self.progress(done, max(self.planned, done), what)

    def file(self, source: str) -> None:
        self.files.add(source)


_TALLY: contextvars.ContextVar[Optional[Tally]] = contextvars.ContextVar("arrayscope_tally",
                                                                          default=None)


def tally() -> Tally:
    """The running report's tally (a throwaway one outside `counting_into`)."""
    t = _TALLY.get()
    return t if t is not None else Tally()


@contextlib.contextmanager
def counting_into(tal: Tally) -> Iterator[Tally]:
    """Count what the checks run inside do into `tal`."""
    token = _TALLY.set(tal)
    try:
        yield tal
    finally:
        _TALLY.reset(token)


def folder_bytes(path: str) -> int:
    """The size of every file under local folder `path` (links not followed; 0 for a
    remote path): what the progress total counts of it."""
    if "://" in path:
        return 0
    total = 0
    stack = [path]
    while stack:   # what `os.walk` lists, each entry's lstat taken from the listing
        try:
            listing = os.scandir(stack.pop())
        except OSError:
            continue
        with listing:
            for e in listing:
                try:
                    if not e.is_dir():
                        total += e.stat(follow_symlinks=False).st_size
                    elif not e.is_symlink():   # (a link to a folder: not walked)
                        stack.append(e.path)
                except OSError:
                    pass
    return total
