"""Find next / previous (the find bar) in a worker thread: a search through a 2 GB file must
not freeze the window. One search at a time: a new one stops the previous between blocks
and its result is dropped. The worker reads its own mapping of a file (as find-all does),
so the hex view's reads are never shared across threads."""
from __future__ import annotations

from typing import Optional

from PySide6.QtCore import QObject, QThreadPool, Signal

from arrayscope.formats.core.source import FileSource

from . import search
from .background import BackgroundJob


class _Signals(QObject):
    finished = Signal(int, object)   # job id, hit offset (Python int: > 2 GiB) or None


class _Job(BackgroundJob):
    def __init__(self, source, pat: bytes, start: int, backward: bool, signals: _Signals):
        super().__init__(signals)
        self.source, self.pat, self.start, self.backward = source, pat, start, backward

    def run(self) -> None:
        src, own = self.source, None
        if isinstance(src, FileSource):
            try:
                own = src = FileSource(src.path, src.name, src.root)
            except OSError:
                src = self.source
        hit: Optional[int] = None
        try:
            hit = search.find(src, self.pat, self.start, backward=self.backward,
                              cancelled=self.stop.is_set)
        except Exception:  # noqa: BLE001 - a failing read is "not found", never a crash
            hit = None
        finally:
            if own is not None:
                own.close()
        self.report("finished", None if self.stop.is_set() else hit)


class FindNextRunner(QObject):
    """`found(view, hit or None, pattern length)` when the current search ends."""

    found = Signal(object, object, int)

    def __init__(self, parent=None):
        super().__init__(parent)
        self.pool = QThreadPool(self)
        self.pool.setMaxThreadCount(1)
        self.signals = _Signals(self)
        self.signals.finished.connect(self._finished)
        self._job: Optional[_Job] = None
        self._view = None

    @property
    def busy(self) -> bool:
        return self._job is not None

    def start(self, view, pat: bytes, start: int, backward: bool) -> None:
        self.cancel()
        self._view = view
        self._job = _Job(view.source, pat, start, backward, self.signals)
        self._job.setAutoDelete(False)   # kept (its id and pattern) until its result arrives
        self.pool.start(self._job)

    def cancel(self) -> None:
        if self._job is not None:
            self._job.stop.set()
        self._job = None

    def _finished(self, job_id: int, hit) -> None:
        job = self._job
        if job is None or job.job_id != job_id:
            return   # superseded or cancelled
        self._job = None
        self.found.emit(self._view, hit, len(job.pat))

    def wait(self, msecs: int = -1) -> bool:
        return self.pool.waitForDone(msecs)
