"""Find-all in a worker thread: hits come back in batches with progress; cancel stops it
between blocks; a search superseded by a newer one is dropped. The worker reads its own
mapping of a file (FileSource), so the hex view's reads are never shared across threads."""
from __future__ import annotations

from typing import List, Optional

from PySide6.QtCore import QObject, QThreadPool, Signal

from arrayscope.formats.core.source import FileSource

from .background import BackgroundJob
from .findall import Compiled, Hit, find_all

MAX_HITS = 100_000
BATCH = 500


class _Signals(QObject):
    hits = Signal(int, object)        # job id, list of Hit
    progress = Signal(int, object, object)   # job id, done, total (Python ints: > 2 GiB)
    finished = Signal(int, bool, bool)  # job id, cancelled, truncated at MAX_HITS


class _Job(BackgroundJob):
    def __init__(self, source, pat: Compiled, signals: _Signals):
        super().__init__(signals)
        self.source, self.pat = source, pat

    def run(self) -> None:
        src = self.source
        own = None
        if isinstance(src, FileSource):
            try:
                own = src = FileSource(src.path, src.name, src.root)
            except OSError:
                src = self.source
        batch: List[Hit] = []
        count = 0
        truncated = False
        try:
            for h in find_all(src, self.pat, self.stop.is_set,
                              lambda d, t: self.report("progress", d, t)):
                batch.append(h)
                count += 1
                if len(batch) >= BATCH:
                    self.report("hits", batch)
                    batch = []
                if count >= MAX_HITS:
                    truncated = True
                    break
        except Exception:  # noqa: BLE001 - a failing read ends the search, never the window
            truncated = False
        finally:
            if own is not None:
                own.close()
        if batch:
            self.report("hits", batch)
        self.report("finished", self.stop.is_set(), truncated)


class FindAllRunner(QObject):
    """One find-all at a time."""

    hits = Signal(object)              # list of Hit
    progress = Signal(object, object)  # done, total
    finished = Signal(bool, bool)      # cancelled, truncated

    def __init__(self, parent=None):
        super().__init__(parent)
        self.pool = QThreadPool(self)
        self.pool.setMaxThreadCount(1)
        self.signals = _Signals(self)
        self.signals.hits.connect(self._hits)
        self.signals.progress.connect(self._progress)
        self.signals.finished.connect(self._finished)
        self._job: Optional[_Job] = None

    @property
    def busy(self) -> bool:
        return self._job is not None

    def start(self, source, pat: Compiled) -> None:
        self.cancel()
        job = _Job(source, pat, self.signals)
        self._job = job
        self.pool.start(job)

    def cancel(self) -> None:
        if self._job is not None:
            self._job.stop.set()

    def wait(self, msecs: int = -1) -> bool:
        return self.pool.waitForDone(msecs)

    def _current(self, job_id: int) -> bool:
        return self._job is not None and self._job.job_id == job_id

    def _hits(self, job_id: int, hits) -> None:
        if self._current(job_id):
            self.hits.emit(hits)

    def _progress(self, job_id: int, done, total) -> None:
        if self._current(job_id):
            self.progress.emit(done, total)

    def _finished(self, job_id: int, cancelled: bool, truncated: bool) -> None:
        if self._current(job_id):
            self._job = None
            self.finished.emit(cancelled, truncated)
