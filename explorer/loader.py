"""Opening a path in a background thread (formats.open), with cancel.

Parsing cannot be interrupted inside `formats.open`, so cancel abandons the job: the window
is free at once and the late result is closed and dropped when it arrives.
"""
from __future__ import annotations

import itertools
import time
from typing import Optional

from PySide6.QtCore import QObject, QRunnable, QThreadPool, Signal

_ids = itertools.count(1)


class _Signals(QObject):
    finished = Signal(int, object, float)   # job id, document, seconds
    failed = Signal(int, str)


class _Job(QRunnable):
    def __init__(self, job_id: int, path: str, key: Optional[bytes], as_format: Optional[str]):
        super().__init__()
        self.job_id, self.path, self.key, self.as_format = job_id, path, key, as_format
        self.signals = _Signals()
        self.setAutoDelete(True)

    def run(self) -> None:
        import formats

        t0 = time.perf_counter()
        try:
            doc = formats.open(self.path, key=self.key, as_format=self.as_format)
        except formats.OpenError as e:
            self.signals.failed.emit(self.job_id, str(e))
            return
        except Exception as e:  # the engine promises not to raise; stay safe anyway
            self.signals.failed.emit(self.job_id, f"{type(e).__name__}: {e}")
            return
        self.signals.finished.emit(self.job_id, doc, time.perf_counter() - t0)


class Loader(QObject):
    """Runs one open at a time; `started`, `loaded`, `failed`, `cancelled` tell the window."""

    started = Signal(str)
    loaded = Signal(object, float)
    failed = Signal(str, str)
    cancelled = Signal(str)

    def __init__(self, parent=None):
        super().__init__(parent)
        self.pool = QThreadPool(self)
        self.pool.setMaxThreadCount(2)
        self._current: Optional[int] = None
        self._path = ""
        self._jobs = {}

    @property
    def busy(self) -> bool:
        return self._current is not None

    def open(self, path: str, key: Optional[bytes] = None, as_format: Optional[str] = None) -> None:
        if self._current is not None:
            self.cancel()
        job = _Job(next(_ids), path, key, as_format)
        job.signals.finished.connect(self._done)
        job.signals.failed.connect(self._fail)
        self._jobs[job.job_id] = job.signals  # keep the signal object alive
        self._current = job.job_id
        self._path = path
        self.started.emit(path)
        self.pool.start(job)

    def cancel(self) -> None:
        if self._current is not None:
            self._current = None
            self.cancelled.emit(self._path)

    def _done(self, job_id: int, doc, secs: float) -> None:
        self._jobs.pop(job_id, None)
        if job_id != self._current:
            doc.close()  # cancelled or superseded
            return
        self._current = None
        self.loaded.emit(doc, secs)

    def _fail(self, job_id: int, msg: str) -> None:
        self._jobs.pop(job_id, None)
        if job_id != self._current:
            return
        self._current = None
        self.failed.emit(self._path, msg)

    def wait(self, msecs: int = -1) -> bool:
        return self.pool.waitForDone(msecs)
