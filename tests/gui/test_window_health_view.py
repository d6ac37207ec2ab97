"""The Health dock tells what verify found, and every dock comes back from View (pytest-qt,
offscreen): a fragment with a damaged chunk (the bundled dense sample, one byte of its
first fragment's LZ4 chunk flipped) is drawn as damaged with its error count, not as a
green "committed"; each dock closed is reopened from the View menu."""
from __future__ import annotations

import os

os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")

from PySide6.QtWidgets import QDockWidget  # noqa: E402

from arrayscope.explorer.fragmentspanel import DAMAGED  # noqa: E402
from arrayscope.explorer.windowmenus import menu  # noqa: E402
from tests.support.gui_helpers import corrupted_dense_sample, open_window  # noqa: E402
from tests.support.waits import WAIT_MS  # noqa: E402


def test_damaged_fragment_is_not_green(qtbot, tmp_path):
    win = open_window(qtbot, tmp_path)
    path = corrupted_dense_sample(tmp_path)
    with qtbot.waitSignal(win.verifier.done, timeout=WAIT_MS):
        assert win.open_path(path, sync=True)
    view = win.health_view
    win.d_health.raise_()   # verify's error brought Diagnostics in front; Health computes shown
    qtbot.waitUntil(lambda: not view.busy and bool(view.fragments.timeline.rows), timeout=WAIT_MS)
    first = sorted(os.listdir(os.path.join(path, "__fragments")))[0]
    timeline = view.fragments.timeline
    by_name = {r.name: r for r in timeline.rows}
    assert by_name[first].state == "committed"   # the bookkeeping's state, unchanged
    assert timeline.problems[first] == (1, 0)    # verify's one error, in its fragment
    others = [n for n in by_name if n != first]
    assert others and all(n not in timeline.problems for n in others)
    assert DAMAGED in view.fragments.legend.text()
    timeline.grab()   # paints the damaged bar (its label says the count)


def test_every_dock_reopens_from_the_view_menu(qtbot, tmp_path):
    from tests.support.paths import SAMPLES

    win = open_window(qtbot, tmp_path)
    assert win.open_path(os.path.join(SAMPLES, "tiledb_dense"), sync=True)
    view_menu = menu(win, "&View")
    docks = win.findChildren(QDockWidget)
    names = {d.objectName() for d in docks}
    assert {"dock_tree", "dock_diag", "dock_health", "dock_legend"} <= names
    for d in docks:
        d.show()
        d.close()
        assert not d.isVisible()
        [a] = [a for a in view_menu.actions() if a is d.toggleViewAction()]
        a.trigger()
        assert d.isVisible(), d.objectName()


def test_health_is_not_computed_while_its_dock_is_closed(qtbot, tmp_path):
    """Background work that is not shown does not run (issue 28 item 2): the Health dock
    closed by the user, opening an array starts no health job; reopening it computes."""
    from tests.support.paths import SAMPLES

    win = open_window(qtbot, tmp_path)
    sample = os.path.join(SAMPLES, "tiledb_dense")
    assert win.open_path(sample, sync=True)
    view = win.health_view
    qtbot.waitUntil(lambda: not view.busy and bool(view.fragments.timeline.rows), timeout=WAIT_MS)
    ran = len(view.runner.ran)
    win.d_health.close()                     # the user closes it
    assert win.open_path(sample, sync=True)  # again: a new document
    qtbot.wait(2 * 1500 + 200)               # past the health job's start delay
    assert len(view.runner.ran) == ran and not view.busy
    assert not win.d_health.isVisible()
    win.d_health.toggleViewAction().trigger()   # View ▸ Health
    assert win.d_health.isVisible()
    qtbot.waitUntil(lambda: len(view.runner.ran) > ran and not view.busy, timeout=WAIT_MS)
    assert view.fragments.timeline.rows


def test_space_chart_paints_the_fragments_on_screen(qtbot, tmp_path):
    """The Space tab's chart on 60 fragments (tiledb-py, one write each) paints the blocks
    exposed, not all 60 (on 1 000 fragments painting every block held the GUI thread
    170-190 ms in one turn, the driven test's worst); a click on a heading scrolled into
    view still names its fragment."""
    from PySide6.QtCore import QPointF, Qt

    from arrayscope.explorer.spacechart import SpaceChart
    from arrayscope.formats.core import health as H
    from arrayscope.formats.core.document import Document
    from tests.gui.test_window_latency import _fragments

    n = 60
    report = H.space(Document(_fragments(tmp_path, n)))
    assert len(report.fragments) == n
    chart = SpaceChart()
    qtbot.addWidget(chart)
    chart.resize(600, 400)
    chart.show()
    qtbot.waitExposed(chart)
    chart.set_report(report)
    bars = chart.bars
    qtbot.waitUntil(lambda: bars.height() >= bars._bottoms[-1] > 10 * 400, timeout=10000)
    bars.grab(bars.visibleRegion().boundingRect())   # a paint of what is on screen
    on_screen = chart.viewport().height() // (bars.LINE * 4) + 2
    assert 0 < bars.painted_blocks <= on_screen < n
    chart.verticalScrollBar().setValue(chart.verticalScrollBar().maximum())
    bars.grab(bars.visibleRegion().boundingRect())
    assert 0 < bars.painted_blocks <= on_screen
    bars.grab()                                      # the whole chart: every block
    assert bars.painted_blocks == n
    last = report.fragments[-1].fragment
    with qtbot.waitSignal(chart.fragmentSelected, timeout=WAIT_MS) as got:
        y = bars._tops[-1] + bars.LINE / 2
        qtbot.mouseClick(bars, Qt.MouseButton.LeftButton, pos=QPointF(20, y).toPoint())
    assert got.args == [last] and bars.selected == last
