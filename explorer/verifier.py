"""`arrayscope verify` in the background after a document is opened.

The checks (`formats.core.verify.verify`) reverse every chunk, compare checksums and re-apply
filters; they run in a process of their own (explorer/verifyworker.py) on a private
Document opened from the same path: the window's nodes are never touched, the checks never
hold the window's interpreter lock (a repaint stays a repaint), the process runs at low
priority with a memory ceiling, and cancelling kills it at once, so closing the window or
`--screenshot` never waits for a verify. The run starts a moment after it is asked for
(START_DELAY_MS: the first screen is painted first). The findings come back as `Finding`s.
"""
from __future__ import annotations

import json
from typing import List, Optional

from PySide6.QtCore import QObject, QProcess, QProcessEnvironment, QTimer, Signal

from arrayscope.formats.core.childproc import SAFE_CWD, child_env, python_module_command
from arrayscope.formats.core.findings import Finding
from arrayscope.formats.core.remote import absolute

START_DELAY_MS = 400   # after the document is shown: its first paint comes first


class Verifier(QObject):
    """One verify run at a time; a new `start` (or `cancel`) kills the previous one and drops
    its result. `cancelled` counts the runs killed before they finished."""

    started = Signal()
    done = Signal(object)      # list of Finding
    failed = Signal(str)

    def __init__(self, parent=None):
        super().__init__(parent)
        self._proc: Optional[QProcess] = None
        self._args: Optional[tuple] = None
        self._timer = QTimer(self)
        self._timer.setSingleShot(True)
        self._timer.timeout.connect(self._launch)
        self.cancelled = 0

    @property
    def busy(self) -> bool:
        return self._proc is not None or self._timer.isActive()

    def start(self, path: str, key: Optional[bytes] = None, as_format: Optional[str] = None,
              delay_ms: int = START_DELAY_MS) -> None:
        self.cancel()
        self._args = (path, key, as_format)
        self.started.emit()
        self._timer.start(delay_ms)

    def _launch(self) -> None:
        if self._args is None:
            return
        path, key, as_format = self._args
        proc = QProcess(self)
        # isolated from the dataset: `python -I`, our working directory, no PYTHON* variables
        cmd = python_module_command("arrayscope.explorer.verifyworker",
                                    [absolute(path), as_format or ""])
        proc.setProgram(cmd[0])
        proc.setArguments(cmd[1:])
        proc.setWorkingDirectory(SAFE_CWD)
        env = QProcessEnvironment()
        for k, v in child_env().items():
            env.insert(k, v)
        proc.setProcessEnvironment(env)
        proc.finished.connect(lambda code, _status, p=proc: self._finished(p, code))
        self._proc = proc
        proc.start()
        proc.write(((key.hex() if key else "") + "\n").encode())
        proc.closeWriteChannel()

    def _finished(self, proc: QProcess, code: int) -> None:
        if proc is not self._proc:
            return   # killed (cancelled or superseded): nobody waits for it
        self._proc = None
        out = bytes(proc.readAllStandardOutput().data())
        err = bytes(proc.readAllStandardError().data()).decode("utf-8", "replace").strip()
        proc.deleteLater()
        if code != 0 or proc.exitStatus() != QProcess.ExitStatus.NormalExit:
            why = err.splitlines()[-1] if err else f"the verify process ended with status {code}"
            self.failed.emit(why)   # over its memory ceiling: the worker said so on stderr
            return
        try:
            found: List[Finding] = [Finding(**d) for d in json.loads(out.decode("utf-8"))]
        except (ValueError, TypeError) as e:
            self.failed.emit(f"cannot read the verify results: {e}")
            return
        self.done.emit(found)

    def cancel(self) -> None:
        """Stop the run now (killed, its result dropped); nothing to wait for afterwards."""
        self._args = None
        if self._timer.isActive():
            self._timer.stop()
            self.cancelled += 1
        proc, self._proc = self._proc, None
        if proc is not None:
            self.cancelled += 1
            proc.kill()
            proc.waitForFinished(2000)   # reap it: a kill ends it at once
            proc.deleteLater()

    def wait(self, msecs: int = -1) -> bool:
        """Wait for the current run to finish (tests); True when none is left running."""
        if self._timer.isActive():
            self._timer.stop()
            self._launch()
        proc = self._proc
        if proc is None:
            return True
        proc.waitForFinished(msecs)
        if proc.state() != QProcess.ProcessState.NotRunning:
            return False
        self._finished(proc, proc.exitCode())
        return True
