"""Quit at any time (issue 28 item 2: Ctrl+Q took 474 s, the process waiting for the
Health job): the window closed while its verify worker and its health worker run returns
at once (a CPU-time bound on the GUI thread: the bound is the point) and both worker
processes end with it. pytest-qt offscreen, an array of many fragments tiledb-py writes.
(The window's process killed: tests/gui/test_window_latency.py::
test_killed_window_leaves_no_verify_worker.)"""
from __future__ import annotations

import os
import time

os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")

from tests.gui.test_window_latency import _alive, _fragments  # noqa: E402
from tests.support.gui_helpers import open_window  # noqa: E402
from tests.support.waits import WAIT_MS  # noqa: E402

QUIT_CPU_S = 1.0


def test_close_while_verify_and_health_run_returns_at_once_and_ends_the_workers(qtbot,
                                                                              tmp_path):
    uri = _fragments(tmp_path, 120)
    win = open_window(qtbot, tmp_path)
    win.d_health.show()
    win.d_health.raise_()                           # Health computes when shown
    win.open_path(uri)
    health = win.health_view.runner.worker
    qtbot.waitUntil(lambda: win.verifier.busy and health.pid != 0, timeout=WAIT_MS)
    proc = win.verifier._proc
    verify_pid = int(proc.processId()) if proc is not None else 0
    health_pid = health.pid
    assert verify_pid and health_pid and _alive(verify_pid) and _alive(health_pid)
    began = time.thread_time()
    win.close()
    assert time.thread_time() - began < QUIT_CPU_S
    qtbot.waitUntil(lambda: not _alive(verify_pid) and not _alive(health_pid), timeout=WAIT_MS)
