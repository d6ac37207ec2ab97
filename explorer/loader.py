"""Opening a path in a background thread (formats.open), with cancel.

Parsing cannot be interrupted inside `formats.open`, so cancel abandons the job: the window
is free at once and the late result is closed and dropped when it arrives.
"""
from __future__ import annotations

import time
from typing import Optional

from PySide6.QtCore import QObject, Signal

from .background import JobRunner, PathJob


class _Signals(QObject):
    finished = Signal(int, object, float)   # job id, document, seconds
    failed = Signal(int, str)


class _Job(PathJob):
    def __init__(self, path: str, key: Optional[bytes], as_format: Optional[str]):
        super().__init__(path, key, as_format, _Signals())

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


class Loader(JobRunner):
    """Runs one open at a time; `started`, `loaded`, `failed`, `cancelled` tell the window."""

    started = Signal(str)
    loaded = Signal(object, float)
    failed = Signal(str, str)
    cancelled = Signal(str)

    def __init__(self, parent=None):
        super().__init__(parent, threads=2)
        self._path = ""

    def open(self, path: str, key: Optional[bytes] = None, as_format: Optional[str] = None) -> None:
        if self._current is not None:
            self.cancel()
        job = _Job(path, key, as_format)
        self._submit(job)
        self._path = path
        self.started.emit(path)
        self.pool.start(job)

    def cancel(self) -> None:
        if self._current is not None:
            self._current = None
            self.cancelled.emit(self._path)

    def _done(self, job_id: int, doc, secs: float) -> None:
        if not self._claim(job_id):
            doc.close()  # cancelled or superseded
            return
        self.loaded.emit(doc, secs)

    def _fail(self, job_id: int, msg: str) -> None:
        if self._claim(job_id):
            self.failed.emit(self._path, msg)
