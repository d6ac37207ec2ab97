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
    uri = _fragments(tmp_path, 200)
    win = open_window(qtbot, tmp_path)
    win.d_health.show()
    win.d_health.raise_()                           # Health computes when shown
    seen = {}

    def started() -> bool:
        """The health worker runs; the verify worker's pid noted whenever it is seen (on a
        fast verify it may be done before the health worker has started)."""
        proc = win.verifier._proc
        if win.verifier.busy and proc is not None and int(proc.processId()):
            seen.setdefault("verify", int(proc.processId()))
        return win.health_view.runner.worker.pid != 0
    win.open_path(uri)
    qtbot.waitUntil(started, timeout=WAIT_MS)
    health_pid = win.health_view.runner.worker.pid
    running = [p for p in (seen.get("verify", 0), health_pid) if p and _alive(p)]
    assert health_pid in running and "verify" in seen
    began = time.thread_time()
    win.close()
    assert time.thread_time() - began < QUIT_CPU_S
    qtbot.waitUntil(lambda: not any(_alive(p) for p in running), timeout=WAIT_MS)
