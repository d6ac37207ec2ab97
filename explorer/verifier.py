"""`arrayscope verify` in the background after a document is opened.

The checks (`formats.verify.verify`) reverse every chunk, compare checksums and re-apply
filters; they run on a second, private Document opened from the same path in a worker
thread, so the window's own nodes are never touched from two threads. The findings come
back as dicts (source name, offset, status, message, node path) for the diagnostics panel.
"""
from __future__ import annotations

from typing import List, Optional

from PySide6.QtCore import QObject, Signal

from arrayscope.formats.findings import Finding

from .background import JobRunner, PathJob


class _Signals(QObject):
    finished = Signal(int, object)   # job id, findings
    failed = Signal(int, str)


class _Job(PathJob):
    def __init__(self, path: str, key: Optional[bytes], as_format: Optional[str]):
        super().__init__(path, key, as_format, _Signals())

    def run(self) -> None:
        from arrayscope import formats
        from arrayscope.formats.verify import verify

        try:
            doc = formats.open(self.path, key=self.key, as_format=self.as_format)
        except Exception as e:  # noqa: BLE001 - the window reports it, never crashes
            self.emit("failed", self.job_id, f"{type(e).__name__}: {e}")
            return
        try:
            found: List[Finding] = verify(doc)
        except Exception as e:  # noqa: BLE001
            self.emit("failed", self.job_id, f"{type(e).__name__}: {e}")
            return
        finally:
            doc.close()
        self.emit("finished", self.job_id, found)


class Verifier(JobRunner):
    """One verify run at a time; a new `start` (or `cancel`) drops the previous result."""

    started = Signal()
    done = Signal(object)      # list of finding dicts
    failed = Signal(str)

    def start(self, path: str, key: Optional[bytes] = None, as_format: Optional[str] = None) -> None:
        job = _Job(path, key, as_format)
        self._submit(job)
        self.started.emit()
        self.pool.start(job)

    def cancel(self) -> None:
        self._current = None

    def _done(self, job_id: int, found) -> None:
        if self._claim(job_id):
            self.done.emit(found)

    def _fail(self, job_id: int, msg: str) -> None:
        if self._claim(job_id):
            self.failed.emit(msg)
