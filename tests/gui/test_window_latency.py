"""The window stays responsive and leaves nothing behind (issue 28 item 2).

- The window's process killed while its verify worker runs: the worker ends itself (no
  orphan), in a real `arrayscope PATH` process (offscreen).
- Event-loop turns on a many-fragment array (tiledb-py, one write per fragment) while the
  window opens it, verifies it and computes its health: the GUI thread's CPU time in each
  turn of the event loop (between the ticks of a 10 ms QTimer) stays bounded. Without a
  wall clock: the figure against DESIGN.md's 100 ms, on 1 000 fragments, is the
  benchmark's (tests/benchmarks/test_bench_window_latency.py). What keeps it there is
  asserted too: the health work runs in a process that is not the window's, and the GUI
  thread's jobs whose size the fragment count sets (the timeline's paint, the tree's
  name-column fit) touch only the rows on screen."""
from __future__ import annotations

import os
import signal
import subprocess
import sys
import time

os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")

import pytest  # noqa: E402

from tests.support.eventloop import LoopProbe  # noqa: E402
from tests.support.gui_helpers import open_window  # noqa: E402
from tests.support.tiledb_arrays import one_write_fragments  # noqa: E402
from tests.support.waits import WAIT_MS  # noqa: E402


def _fragments(dest, n: int) -> str:
    return one_write_fragments(os.path.join(str(dest), f"frags{n}"), n)


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
        deadline = time.monotonic() + WAIT_MS / 1000   # polled: a loaded machine is slow to reap
        while _alive(worker) and time.monotonic() < deadline:
            time.sleep(0.05)
        assert not _alive(worker), "the verify worker outlived its window"
    finally:
        if gui.poll() is None:
            gui.kill()


def probed_open(qtbot, tmp_path, uri) -> LoopProbe:
    """The event loop's turns while a window opens `uri`, verifies it and computes its
    health (`tests.support.eventloop.LoopProbe`)."""
    win = open_window(qtbot, tmp_path)
    probe = LoopProbe(win)
    qtbot.wait(50)
    probe.start()
    _settled(qtbot, win, uri)
    probe.stop()
    return probe


def _settled(qtbot, win, uri) -> None:
    with qtbot.waitSignal(win.verifier.done, timeout=600000):
        win.open_path(uri)
    view = win.health_view
    qtbot.waitUntil(lambda: not view.busy and bool(view.fragments.timeline.rows),
                    timeout=600000)


def test_many_fragments_keep_the_gui_thread_to_the_rows_on_screen(qtbot, tmp_path):
    n = 60
    uri = _fragments(tmp_path, n)
    win = open_window(qtbot, tmp_path)
    _settled(qtbot, win, uri)
    view = win.health_view
    # every health computation ran in the worker process, none in the window's
    pids = {pid for _slot, pid in view.runner.ran}
    assert view.runner.ran and len(pids) == 1 and os.getpid() not in pids and 0 not in pids
    timeline = view.fragments.timeline
    assert len(timeline.rows) == n
    # the timeline (n rows, 22 px each) paints the rows exposed, not all n
    view.setCurrentWidget(view.fragments)
    timeline.repaint()
    shown = timeline.visibleRegion().boundingRect().height() // timeline.ROW + 2
    assert timeline.height() >= n * timeline.ROW and 0 < timeline.painted_rows <= shown < n
    # the Name column's fit asks the model about the rows on screen, not about the n
    # fragment folders of the expanded __fragments
    from arrayscope.explorer.windowfit import fit_name_column

    tree = win.tree.view
    frags = win.session.root.find("__fragments")
    win.tree.select_node(frags)
    tree.expand(tree.currentIndex())
    qtbot.wait(50)
    from PySide6.QtWidgets import QStyledItemDelegate

    assert tree.model().rowCount(tree.currentIndex()) == n
    asked = set()

    class Counting(QStyledItemDelegate):   # the fit measures each row through its delegate
        def sizeHint(self, option, index):
            asked.add(index.internalId())
            return super().sizeHint(option, index)
    counting = Counting(tree)
    tree.setItemDelegateForColumn(0, counting)
    fit_name_column(win)
    on_screen = tree.viewport().height() // max(1, tree.sizeHintForRow(0)) + 4
    assert 0 < len(asked) <= on_screen < n


def test_open_verify_and_health_take_short_turns_of_the_gui_thread(qtbot, tmp_path):
    """No turn of the event loop does the open's, verify's or health's work at once: the
    GUI thread's CPU time per turn (not the wall clock, which the machine's load sets) stays
    under a bound far below what a fragment-sized job on the GUI thread costs (seconds on
    1 000 fragments; the ~100 ms target and the wall clock: tests/benchmarks/
    test_bench_window_latency.py)."""
    probe = probed_open(qtbot, tmp_path, _fragments(tmp_path, 60))
    cpu = probe.longest_turn_cpu_ms()
    print(f"\n60 fragments: longest turn {cpu:.0f} ms of GUI-thread CPU, "
          f"longest gap {probe.longest_gap_ms():.0f} ms")
    assert 0 < cpu <= 400


def driven(qtbot, tmp_path, uri) -> LoopProbe:
    """The event loop's turns while a user opens `uri` (verify runs in the background),
    expands `__fragments`, scrolls it to the end, selects fragments, and opens the Health
    dock's tabs (`tests.support.eventloop.LoopProbe`, each step a phase)."""
    from PySide6.QtCore import Qt

    win = open_window(qtbot, tmp_path)
    probe = LoopProbe(win)
    qtbot.wait(50)
    probe.start()
    probe.phase("open")
    win.open_path(uri)
    qtbot.waitUntil(lambda: win.session is not None and win.tree.current_node() is not None,
                    timeout=600000)
    tree = win.tree.view
    probe.phase("expand __fragments")
    frags = win.session.root.find("__fragments")
    win.tree.select_node(frags)
    tree.expand(tree.currentIndex())
    qtbot.wait(100)
    probe.phase("scroll")
    bar = tree.verticalScrollBar()
    while bar.value() < bar.maximum():   # a page at a time, as PageDown does
        bar.setValue(bar.value() + bar.pageStep())
        qtbot.wait(20)
    probe.phase("select")
    for _ in range(6):
        qtbot.keyClick(tree, Qt.Key.Key_Up)
        qtbot.wait(30)
    qtbot.keyClick(tree, Qt.Key.Key_Right)     # into a fragment
    qtbot.wait(30)
    qtbot.keyClick(tree, Qt.Key.Key_Down)
    qtbot.wait(100)
    probe.phase("Health dock")
    view = win.health_view
    win.d_health.show()
    win.d_health.raise_()
    qtbot.waitUntil(lambda: not view.busy and bool(view.fragments.timeline.rows),
                    timeout=600000)
    for i in range(view.count()):
        view.setCurrentIndex(i)
        qtbot.wait(100)
    probe.phase("verify")
    qtbot.waitUntil(lambda: not win.verifier.busy, timeout=600000)
    qtbot.wait(100)
    probe.stop()
    return probe


def report(probe: LoopProbe, n: int) -> str:
    worst = ", ".join(f"{w:.0f}/{c:.0f} ms {p}" for w, c, p, _g in probe.worst(4))
    cpu = ", ".join(f"{c:.0f} ms {p} (gc {g:.0f})" for _w, c, p, g in probe.worst_cpu(4))
    return (f"{n} fragments, driven: worst stalls wall/GUI-CPU {worst}; most GUI CPU {cpu} "
            f"(cores {os.cpu_count()}, load {os.getloadavg()[0]:.1f})")


@pytest.mark.parametrize("n", [200, pytest.param(1000, marks=pytest.mark.slow)])
def test_driven_window_takes_no_long_turn_of_the_gui_thread(qtbot, tmp_path, n):
    """Open, expand `__fragments`, scroll, select, Health dock, verify: no turn of the event
    loop takes the GUI thread over 100 ms of CPU (CPU, not the wall clock: on a loaded
    machine the wall clock counts the wait for a core)."""
    uri = _fragments(tmp_path, n)
    load = os.getloadavg()[0]
    probe = driven(qtbot, tmp_path, uri)
    print("\n" + report(probe, n))
    worst_cpu = probe.worst_cpu(1)[0]
    assert 0 < worst_cpu[1] <= cpu_bound_ms(100, max(load, os.getloadavg()[0])), worst_cpu


def cpu_bound_ms(target: float, load: float) -> float:
    """`target` on a machine with a core to spare; more where more threads than cores want
    to run. A thread's CPU time for the same work grows with contention (shared caches,
    the kernel's time for its faults): at load 14 on 2 cores the open's worst turn measured
    132 ms, 41-50 ms at load 1.5. The square root of the load per core keeps the bound
    tight where CI runs and off a busy machine's noise (issue 31 item 6)."""
    return target * max(1.0, (load / (os.cpu_count() or 1)) ** 0.5)


def test_the_cpu_bound_is_the_target_on_an_idle_machine():
    cores = os.cpu_count() or 1
    assert cpu_bound_ms(100, 0.5) == 100 and cpu_bound_ms(100, cores) == 100
    assert cpu_bound_ms(100, 4 * cores) == 200
