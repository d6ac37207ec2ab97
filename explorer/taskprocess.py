"""A worker process driven from the GUI thread: tasks in, results out, nothing waits.

The process is `formats/core/taskworker.py` (started isolated, `formats/core/childproc.py`; it ends
itself when the window's process is gone). Tasks are written to its stdin and answers read
as they arrive (QProcess's signals on this thread): the window's process never runs the
work, never blocks on it and never shares its interpreter lock with it. The worker answers
in the order it was asked, so each answer goes to the oldest waiting callback. `kill` drops
every pending task at once (the process dies; the next `submit` starts a fresh one).
"""
from __future__ import annotations

import pickle
import struct
from collections import deque
from typing import Any, Callable, Deque, Optional

import shiboken6
from PySide6.QtCore import QObject, QProcess, QProcessEnvironment, Signal

from arrayscope.formats.core.childproc import SAFE_CWD, child_env, python_module_command

_LEN = struct.Struct("<Q")   # formats/core/taskworker.py: each message behind its length

Done = Callable[[bool, Any], None]   # (ok, result or the exception)


class TaskProcess(QObject):
    """`submit(fn, item, done)`: `fn(item)` in the worker, then `done(ok, value)` here;
    `died` says a worker ended with tasks still pending (they got `done(False, error)`)."""

    died = Signal(str)

    def __init__(self, parent=None):
        super().__init__(parent)
        self._proc: Optional[QProcess] = None
        self._buf = bytearray()
        self._waiting: Deque[Optional[Done]] = deque()
        self._key: Optional[bytes] = None
        self.pid = 0          # the running worker's process id (0: none)
        self.started = 0      # how many worker processes were started

    @property
    def pending(self) -> int:
        return len(self._waiting)

    def share_key(self, key: Optional[bytes]) -> None:
        """Hand `key` to the worker (once, through its stdin) before the next task."""
        if key is not None and key != self._key:
            self._key = key
            if self._proc is not None:
                self._hand_key()

    def submit(self, fn: Callable[[Any], Any], item: Any, done: Done) -> None:
        if self._proc is None:
            self._start()
        if self._proc is None:   # it could not start (told at once)
            done(False, RuntimeError("the worker process did not start"))
            return
        self._send((fn, item), done)

    def kill(self) -> None:
        """End the worker now; pending tasks are dropped (no callback)."""
        proc, self._proc = self._proc, None
        self._waiting.clear()
        self._buf.clear()
        self.pid = 0
        if proc is not None:
            for signal in (proc.readyReadStandardOutput, proc.finished, proc.errorOccurred):
                signal.disconnect()
            proc.kill()
            proc.waitForFinished(2000)   # reap it: a kill ends it at once
            proc.deleteLater()

    # ---- the process -------------------------------------------------------------------
    def _start(self) -> None:
        proc = QProcess(self)
        cmd = python_module_command("arrayscope.formats.core.taskworker")
        proc.setProgram(cmd[0])
        proc.setArguments(cmd[1:])
        proc.setWorkingDirectory(SAFE_CWD)
        env = QProcessEnvironment()
        for k, v in child_env().items():
            env.insert(k, v)
        proc.setProcessEnvironment(env)
        proc.setProcessChannelMode(QProcess.ProcessChannelMode.ForwardedErrorChannel)
        proc.readyReadStandardOutput.connect(self._read)
        proc.finished.connect(lambda code, _status, p=proc: self._ended(p, code))
        proc.errorOccurred.connect(lambda err, p=proc: self._start_failed(p, err))
        self._proc = proc
        proc.start()
        self.pid = int(proc.processId())   # known once forked; writes wait for the start
        self.started += 1
        if self._key is not None and self._proc is not None:
            self._hand_key()

    def _hand_key(self) -> None:
        from arrayscope.formats.core.context import remember_key

        self._send((remember_key, self._key), None)

    def _send(self, task: Any, done: Optional[Done]) -> None:
        assert self._proc is not None
        data = pickle.dumps(task, protocol=pickle.HIGHEST_PROTOCOL)
        self._waiting.append(done)
        self._proc.write(_LEN.pack(len(data)) + data)

    def _read(self) -> None:
        proc = self._proc
        if proc is None:
            return
        self._buf += bytes(proc.readAllStandardOutput().data())
        while len(self._buf) >= _LEN.size:
            (n,) = _LEN.unpack_from(self._buf)
            if len(self._buf) < _LEN.size + n:
                return
            # our own child's answer (never bytes of a dataset)
            ok, value = pickle.loads(bytes(self._buf[_LEN.size:_LEN.size + n]))
            del self._buf[:_LEN.size + n]
            done = self._waiting.popleft() if self._waiting else None
            if done is not None:
                done(ok, value)

    def _start_failed(self, proc: QProcess, err: QProcess.ProcessError) -> None:
        if err == QProcess.ProcessError.FailedToStart:   # no `finished` will come
            self._ended(proc, -1)

    def _ended(self, proc: QProcess, code: int) -> None:
        if proc is not self._proc or not shiboken6.isValid(proc):
            return   # not ours any more, or being destroyed with this object (the window's)
        self._proc = None
        self.pid = 0
        self._buf.clear()
        waiting, self._waiting = self._waiting, deque()
        proc.deleteLater()
        why = f"the worker process ended (status {code})"
        for done in waiting:
            if done is not None:
                done(False, RuntimeError(why))
        if waiting:
            self.died.emit(why)
