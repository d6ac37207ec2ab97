"""Per-file progress of `formats.open` (no Qt).

`formats.open(path, progress=fn)` sets `document.progress` to a `Progress`; a plugin plans
how many files it will parse (`plan`) and reports each one once parsed (`step`). Without a
callback `document.progress` is None and `plan`/`step` return at once.

`fn(done, total, name)` may raise `formats.Cancelled` (a BaseException, like
asyncio.CancelledError, so that `except Exception` in parsers and `engine.guarded` never turn
it into an error node); `formats.open` then closes the document and re-raises it.
"""
from __future__ import annotations

import os
from typing import Callable, Hashable, Set

ProgressFn = Callable[[int, int, str], None]


class Progress:
    """Counts files: `done` only grows; `total` grows as plugins plan (never below done)."""

    __slots__ = ("callback", "done", "total", "_planned")

    def __init__(self, callback: ProgressFn):
        self.callback = callback
        self.done = 0
        self.total = 0
        self._planned: Set[Hashable] = set()

    def plan(self, key: Hashable, count: int) -> None:
        """Add `count` files to the total, once per `key` (a nested array planned by its
        parent is not counted again when it is parsed)."""
        if key in self._planned:
            return
        self._planned.add(key)
        self.total += count

    def step(self, name: str) -> None:
        self.done += 1
        if self.total < self.done:
            self.total = self.done
        self.callback(self.done, self.total, name)

    def finish(self, name: str) -> None:
        """The last report: done == total (a single file, or files planned but skipped)."""
        if self.done and self.done >= self.total:
            return
        self.done = self.total = max(self.total, 1)
        self.callback(self.done, self.total, name)

def plan(document, key: Hashable, count: int) -> None:
    p = getattr(document, "progress", None)
    if p is not None:
        p.plan(key, count)


def plan_tree(document, path: str) -> None:
    """Plan every file under directory `path` (symlinked folders are not followed: a
    miscount only moves the total, `step` and `finish` keep done <= total)."""
    p = getattr(document, "progress", None)
    if p is not None:
        p.plan(os.path.abspath(path), count_files(path))


def step(document, path: str) -> None:
    """Report file `path` parsed (named relative to the opened path)."""
    p = getattr(document, "progress", None)
    if p is not None:
        p.step(document.relname(path))


def count_files(path: str) -> int:
    n = 0
    for _dirpath, _dirnames, filenames in os.walk(path):
        n += len(filenames)
    return n
