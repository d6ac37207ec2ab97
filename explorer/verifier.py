"""`arrayscope verify` in the background after a document is opened.

The checks (`formats.verify.verify`) reverse every chunk, compare checksums and re-apply
filters; they run on a second, private Document opened from the same path in a worker
thread, so the window's own nodes are never touched from two threads. The findings come
back as dicts (source name, offset, status, message, node path) for the diagnostics panel.
"""
from __future__ import annotations

import itertools
from typing import List, Optional

from PySide6.QtCore import QObject, QRunnable, QThreadPool, Signal

_ids = itertools.count(1)


class _Signals(QObject):
    finished = Signal(int, object)   # job id, findings
    failed = Signal(int, str)


class _Job(QRunnable):
    def __init__(self, job_id: int, path: str, key: Optional[bytes], as_format: Optional[str]):
        super().__init__()
        self.job_id, self.path, self.key, self.as_format = job_id, path, key, as_format
        self.signals = _Signals()
        self.setAutoDelete(True)

    def run(self) -> None:
        import formats
        from formats.verify import verify

        try:
            doc = formats.open(self.path, key=self.key, as_format=self.as_format)
        except Exception as e:  # noqa: BLE001 - the window reports it, never crashes
            self.signals.failed.emit(self.job_id, f"{type(e).__name__}: {e}")
            return
        try:
            found: List[dict] = verify(doc)
        except Exception as e:  # noqa: BLE001
            self.signals.failed.emit(self.job_id, f"{type(e).__name__}: {e}")
            return
        finally:
            doc.close()
        self.signals.finished.emit(self.job_id, found)


class Verifier(QObject):
    """One verify run at a time; a new `start` (or `cancel`) drops the previous result."""

    started = Signal()
    done = Signal(object)      # list of finding dicts
    failed = Signal(str)

    def __init__(self, parent=None):
        super().__init__(parent)
        self.pool = QThreadPool(self)
        self.pool.setMaxThreadCount(1)
        self._current: Optional[int] = None
        self._jobs = {}

    @property
    def busy(self) -> bool:
        return self._current is not None

    def start(self, path: str, key: Optional[bytes] = None, as_format: Optional[str] = None) -> None:
        job = _Job(next(_ids), path, key, as_format)
        job.signals.finished.connect(self._done)
        job.signals.failed.connect(self._fail)
        self._jobs[job.job_id] = job.signals
        self._current = job.job_id
        self.started.emit()
        self.pool.start(job)

    def cancel(self) -> None:
        self._current = None

    def _done(self, job_id: int, found) -> None:
        self._jobs.pop(job_id, None)
        if job_id != self._current:
            return
        self._current = None
        self.done.emit(found)

    def _fail(self, job_id: int, msg: str) -> None:
        self._jobs.pop(job_id, None)
        if job_id != self._current:
            return
        self._current = None
        self.failed.emit(msg)

    def wait(self, msecs: int = -1) -> bool:
        return self.pool.waitForDone(msecs)
