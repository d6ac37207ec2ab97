"""The window's worker process (explorer/taskprocess.py): answers come back on the GUI
thread in the order asked, a failure is an answer (not a hang), and `kill` drops what is
pending at once, the next task starting a fresh process."""
from __future__ import annotations

import os

os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")

from tests.support.waits import WAIT_MS  # noqa: E402


def test_answers_in_order_failures_and_kill(qtbot):
    from arrayscope.explorer.taskprocess import TaskProcess

    tp = TaskProcess()
    got = []
    tp.submit(abs, -3, lambda ok, v: got.append((ok, v)))
    tp.submit(abs, -4, lambda ok, v: got.append((ok, v)))
    tp.submit(int, "not a number", lambda ok, v: got.append((ok, type(v).__name__)))
    first = tp.pid
    assert first and first != os.getpid()
    qtbot.waitUntil(lambda: len(got) == 3, timeout=WAIT_MS)
    assert got == [(True, 3), (True, 4), (False, "ValueError")]
    assert tp.pending == 0 and tp.pid == first          # one process answered all three
    tp.submit(abs, -5, lambda ok, v: got.append((ok, v)))
    tp.kill()                                           # dropped: no answer comes
    assert tp.pending == 0 and tp.pid == 0
    tp.submit(abs, -6, lambda ok, v: got.append((ok, v)))
    qtbot.waitUntil(lambda: len(got) == 4, timeout=WAIT_MS)
    assert got[3] == (True, 6) and tp.started == 2 and tp.pid not in (0, first)
    qtbot.wait(300)
    assert len(got) == 4
    tp.kill()
