"""Opening a path in a background thread (formats.open), with progress and cancel.

The job passes `formats.open` a progress callback: after each parsed file it sends the
window (done, total, [(name, size), ...]) through a queued signal, batched so that an
array of thousands of chunk files does not flood the event loop. Only names and sizes
cross threads, never a Node still being built. Cancel sets the job's flag; the next
callback raises `formats.Cancelled`, so the worker stops within one file and `formats.open`
closes what it had opened. A result that still arrives (the last file was being parsed)
is closed and dropped.

The job also builds what the window shows first (`first_file`: a fragment's folder listed,
its first file parsed), so that the GUI thread finds it built: on an array of 1 000
fragments that was the longest part of the open on the window's thread.
"""
from __future__ import annotations

import os
import threading
import time
from typing import Dict, Optional

from PySide6.QtCore import QObject, Signal

from .background import JobRunner, PathJob

BATCH_SECONDS = 0.05   # at most ~20 progress signals a second (the first one at once)


class _Signals(QObject):
    finished = Signal(int, object, float)   # job id, document, seconds
    failed = Signal(int, str)
    progress = Signal(int, int, int, object)   # job id, done, total, [(name, size)]


class _Job(PathJob):
    def __init__(self, path: str, key: Optional[bytes], as_format: Optional[str]):
        super().__init__(path, key, as_format, _Signals())
        self.cancel_flag = threading.Event()

    def run(self) -> None:
        from arrayscope import formats
        base = self.path if os.path.isdir(self.path) else os.path.dirname(self.path)
        flag, signals, job_id = self.cancel_flag, self.signals, self.job_id
        batch = []
        last = [0.0]

        def progress(done: int, total: int, name: str) -> None:
            if flag.is_set():
                raise formats.Cancelled()
            try:
                size = os.path.getsize(os.path.join(base, name))
            except OSError:
                size = -1
            batch.append((name, size))
            now = time.monotonic()
            if done >= total or now - last[0] >= BATCH_SECONDS:
                last[0] = now
                try:
                    signals.progress.emit(job_id, done, total, list(batch))
                except RuntimeError:  # the window closed: nobody waits for this parse
                    raise formats.Cancelled() from None
                batch.clear()

        t0 = time.perf_counter()
        try:
            doc = formats.open(self.path, key=self.key, as_format=self.as_format,
                               progress=progress, lazy=True)   # the rest when shown
        except formats.Cancelled:
            self.emit("failed", self.job_id, "cancelled")   # only frees the job's slot
            return
        except formats.OpenError as e:
            self.emit("failed", self.job_id, str(e))
            return
        except Exception as e:  # the engine promises not to raise; stay safe anyway
            self.emit("failed", self.job_id, f"{type(e).__name__}: {e}")
            return
        if doc.is_dir and doc.root is not None and not flag.is_set():
            first = first_file(doc.root)   # built here, not on the GUI thread
            if first is not None:
                first.child_count()        # its fields (deferred children) too
                warm_first_screen(doc, first)
        self.emit("finished", self.job_id, doc, time.perf_counter() - t0)


def first_file(root):
    """The file the window shows first: the first file with bytes, depth first; a folder
    listed on expansion (a lazily opened fragment) is listed on the way, no further than
    that file."""
    stack = [root]
    while stack:
        n = stack.pop()
        if n.kind == "file" and n.size > 0:
            return n
        if n.kind == "dir" and n.pending and getattr(n.children, "owner_fields", False):
            if not getattr(n.children, "first_screen", True):
                continue   # listed when expanded (a folder of 10 000 empty files)
            n.ensure_built()
        if not n.is_lazy:
            stack.extend(reversed(list(n.iter_children())))
    return None


def warm_first_screen(doc, first) -> None:
    """What the first selection's panels compute for `first` (the pipeline's chunk view:
    its modules imported, its tile found), done once here so the GUI thread's first
    selection finds it warm. Only a cost moved: the result is dropped, an error ignored
    (the panel meets and shows it)."""
    from arrayscope.formats.core import registry
    try:
        registry.chunk_view(doc, first)
    except Exception:  # noqa: BLE001 - the panel reports what goes wrong with it
        pass


class Loader(JobRunner):
    """Runs one open at a time; `started`, `progress`, `loaded`, `failed`, `cancelled` tell
    the window. `progress(done, total, files)`: `files` is the list of (name relative to the
    opened path, size in bytes) parsed since the previous signal."""

    started = Signal(str)
    progress = Signal(int, int, object)
    loaded = Signal(object, float)
    failed = Signal(str, str)
    cancelled = Signal(str)

    def __init__(self, parent=None):
        super().__init__(parent, threads=2)
        self._path = ""
        self._flags: Dict[int, threading.Event] = {}

    @property
    def path(self) -> str:
        """The path of the current (or last) open."""
        return self._path

    def open(self, path: str, key: Optional[bytes] = None, as_format: Optional[str] = None) -> None:
        if self._current is not None:
            self.cancel()
        job = _Job(path, key, as_format)
        job.signals.progress.connect(self._progress)
        self._submit(job)
        self._flags[job.job_id] = job.cancel_flag
        self._path = path
        self.started.emit(path)
        self.pool.start(job)

    def cancel(self) -> None:
        if self._current is not None:
            flag = self._flags.get(self._current)
            if flag is not None:
                flag.set()   # the worker raises formats.Cancelled at its next file
            self._current = None
            self.cancelled.emit(self._path)

    def _progress(self, job_id: int, done: int, total: int, files) -> None:
        if job_id == self._current:
            self.progress.emit(done, total, files)

    def _done(self, job_id: int, doc, secs: float) -> None:
        self._flags.pop(job_id, None)
        if not self._claim(job_id):
            doc.close()  # cancelled or superseded
            return
        self.loaded.emit(doc, secs)

    def _fail(self, job_id: int, msg: str) -> None:
        self._flags.pop(job_id, None)
        if self._claim(job_id):
            self.failed.emit(self._path, msg)
