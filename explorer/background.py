"""One background job at a time on a path, for the loader and the verifier.

A `PathJob` runs in the thread pool and reports through its `signals` (a QRunnable is not
a QObject, so it cannot emit). A `JobRunner` keeps the id of the job whose result still
matters: a result from an earlier job, superseded or cancelled, is dropped.
"""
from __future__ import annotations

import itertools
import threading
from typing import Dict, Optional

from PySide6.QtCore import QObject, QRunnable, QThreadPool

_ids = itertools.count(1)


class BackgroundJob(QRunnable):
    """A job in the thread pool: a unique id, a stop flag, and the `signals` it reports
    through; subclasses give `run`."""

    def __init__(self, signals: QObject):
        super().__init__()
        self.job_id = next(_ids)
        self.signals = signals
        self.stop = threading.Event()
        self.setAutoDelete(True)

    def emit(self, signal_name: str, *args) -> None:
        """Report to the window; a window closed meanwhile (its signal object deleted) just
        means nobody waits for this result any more."""
        try:
            getattr(self.signals, signal_name).emit(*args)
        except RuntimeError:
            pass

    def report(self, signal_name: str, *args) -> None:
        """`emit` with this job's id first (for signals that carry it)."""
        self.emit(signal_name, self.job_id, *args)


class PathJob(BackgroundJob):
    """A job on (path, key, format)."""

    def __init__(self, path: str, key: Optional[bytes], as_format: Optional[str],
                 signals: QObject):
        super().__init__(signals)
        self.path, self.key, self.as_format = path, key, as_format


class JobRunner(QObject):
    """Runs `PathJob`s whose signals have `finished(job id, ...)` and `failed(job id, message)`,
    connected to the subclass's `_done` / `_fail`; `_claim` says whether that id is current."""

    def __init__(self, parent=None, threads: int = 1):
        super().__init__(parent)
        self.pool = QThreadPool(self)
        self.pool.setMaxThreadCount(threads)
        self._current: Optional[int] = None
        self._jobs: Dict[int, QObject] = {}

    @property
    def busy(self) -> bool:
        return self._current is not None

    def _submit(self, job: PathJob) -> None:
        """Make `job` the current one; the caller then starts it (`self.pool.start(job)`)."""
        job.signals.finished.connect(self._done)
        job.signals.failed.connect(self._fail)
        self._jobs[job.job_id] = job.signals  # keep the signal object alive
        self._current = job.job_id

    def _claim(self, job_id: int) -> bool:
        """Forget job `job_id`; True when its result is the one awaited (it no longer is)."""
        self._jobs.pop(job_id, None)
        if job_id != self._current:
            return False
        self._current = None
        return True

    def wait(self, msecs: int = -1) -> bool:
        return self.pool.waitForDone(msecs)
