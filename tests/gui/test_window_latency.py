"""The window stays responsive and leaves nothing behind (issue 28 item 2).

- The window's process killed while its verify worker runs: the worker ends itself (no
  orphan), in a real `arrayscope PATH` process (offscreen).
- Event-loop latency on a many-fragment array (tiledb-py, one write per fragment): the
  longest gap between the ticks of a 10 ms QTimer while the window opens it, verifies it
  and computes its health. Printed in the default run; asserted (≤ 100 ms, DESIGN.md's
  budget) only in the slow one, with 1 000 fragments."""
from __future__ import annotations

import os
import signal
import subprocess
import sys
import time

os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")

import numpy as np  # noqa: E402
import pytest  # noqa: E402
import tiledb  # noqa: E402

from tests.support.gui_helpers import open_window  # noqa: E402


def _fragments(dest, n: int) -> str:
    uri = os.path.join(str(dest), f"frags{n}")
    dom = tiledb.Domain(tiledb.Dim("d", domain=(0, 10 * n - 1), tile=10, dtype=np.int64))
    tiledb.Array.create(uri, tiledb.ArraySchema(domain=dom, attrs=[
        tiledb.Attr("a", dtype=np.int64, filters=[tiledb.ZstdFilter()])]))
    for i in range(n):
        with tiledb.open(uri, "w", timestamp=i + 1) as a:
            a[i * 10:(i + 1) * 10] = np.arange(10) + i
    return uri


def _children(pid: int):
    """(pid, command line) of the processes whose parent is `pid`."""
    out = []
    for d in os.listdir("/proc"):
        if not d.isdigit():
            continue
        try:
            with open(f"/proc/{d}/stat") as fh:
                ppid = int(fh.read().rsplit(")", 1)[1].split()[1])
            if ppid == pid:
                with open(f"/proc/{d}/cmdline", "rb") as fh:
                    out.append((int(d), fh.read().replace(b"\0", b" ").decode()))
        except (OSError, ValueError, IndexError):
            continue
    return out


def _alive(pid: int) -> bool:
    try:
        with open(f"/proc/{pid}/stat") as fh:
            return fh.read().rsplit(")", 1)[1].split()[0] != "Z"
    except OSError:
        return False


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="reads /proc")
def test_killed_window_leaves_no_verify_worker(tmp_path):
    uri = _fragments(tmp_path, 40)
    env = dict(os.environ, QT_QPA_PLATFORM="offscreen", HOME=str(tmp_path))
    gui = subprocess.Popen([sys.executable, "-m", "arrayscope.explorer", uri], env=env,
                           stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        worker = None
        deadline = time.monotonic() + 120
        while worker is None and time.monotonic() < deadline and gui.poll() is None:
            worker = next((p for p, cmd in _children(gui.pid) if "verifyworker" in cmd), None)
            time.sleep(0.01)
        assert worker is not None, "the window started no verify worker"
        gui.send_signal(signal.SIGKILL)
        gui.wait(10)
        deadline = time.monotonic() + 5
        while _alive(worker) and time.monotonic() < deadline:
            time.sleep(0.05)
        assert not _alive(worker), "the verify worker outlived its window"
    finally:
        if gui.poll() is None:
            gui.kill()


def _max_gap_ms(qtbot, tmp_path, uri) -> float:
    from PySide6.QtCore import QTimer

    win = open_window(qtbot, tmp_path)
    ticks = []
    timer = QTimer(win)
    timer.setInterval(10)
    timer.timeout.connect(lambda: ticks.append(time.perf_counter()))
    timer.start()
    qtbot.wait(50)
    with qtbot.waitSignal(win.verifier.done, timeout=600000):
        win.open_path(uri)
    view = win.health_view
    qtbot.waitUntil(lambda: not view.busy and bool(view.fragments.timeline.rows),
                    timeout=600000)
    timer.stop()
    gaps = np.diff(np.asarray(ticks)) * 1000
    return float(gaps.max())


def test_event_loop_latency_100_fragments(qtbot, tmp_path):
    uri = _fragments(tmp_path, 100)
    gap = _max_gap_ms(qtbot, tmp_path, uri)
    print(f"\nevent loop, 100 fragments (open, verify, health): longest stall {gap:.0f} ms "
          f"(budget 100 ms; cores: {os.cpu_count()})")
    assert gap > 0


@pytest.mark.slow
def test_event_loop_latency_1000_fragments_within_budget(qtbot, tmp_path):
    uri = _fragments(tmp_path, 1000)
    gap = _max_gap_ms(qtbot, tmp_path, uri)
    print(f"\nevent loop, 1000 fragments: longest stall {gap:.0f} ms (cores: {os.cpu_count()})")
    assert gap <= 100
