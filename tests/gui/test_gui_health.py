"""The Health dock on arrays tiledb-py put into bookkeeping states (pytest-qt, offscreen):
the timeline shows every fragment with its state, the slider moves the reader's T and the
caption follows what the model says, a click selects the fragment's directory node, and the
status bar carries the version verdict."""
from __future__ import annotations

import os

os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")

import pytest  # noqa: E402
from PySide6.QtCore import QPoint, Qt  # noqa: E402

from arrayscope.explorer.healthdock import COMPUTING  # noqa: E402
from tests.support import health_arrays as HA  # noqa: E402
from tests.support.gui_helpers import open_window  # noqa: E402
from tests.support.waits import WAIT_MS


@pytest.fixture(scope="module")
def built(tmp_path_factory):
    root = tmp_path_factory.mktemp("gui_health")
    return lambda name: HA.build(name, str(root))


def _settled(qtbot, view):
    """The Health dock computes in a worker thread: wait for its results."""
    qtbot.waitUntil(lambda: not view.busy, timeout=WAIT_MS)


def test_health_dock_follows_document(qtbot, tmp_path, built):
    win = open_window(qtbot, tmp_path)
    uri = built("consolidated_partly")
    assert win.open_path(uri, sync=True)
    view = win.health_view
    _settled(qtbot, view)
    assert win.d_health.isVisibleTo(win)
    assert win.health_button.text() == "needs libtiledb ≥ 2.25"
    panel = view.fragments
    rows = panel.timeline.rows
    assert sorted(r.state for r in rows) == ["committed"] * 2 + ["vacuumable"] * 3
    assert panel.ticks == [1, 2, 3, 4]
    assert "sees 2 of 5" in panel.caption.text()          # now: 1_3 and 4_4
    panel.set_at(2)
    _settled(qtbot, view)
    assert "T = 2 sees 1 of 5" in panel.caption.text()    # only 1_3 (its cells up to 2)
    assert [r.name[:4] for r in panel.timeline.rows if r.visible] == ["__1_"]
    panel.set_at(None)
    _settled(qtbot, view)
    # a click on a bar selects that fragment's directory node in the window
    view.setCurrentWidget(panel)
    panel.timeline.resize(900, 300)
    target = panel.timeline.rows[1]
    rect = panel.timeline._bar(1, target)
    qtbot.mouseClick(panel.timeline, Qt.MouseButton.LeftButton,
                     pos=QPoint(int(rect.center().x()), int(rect.center().y())))
    assert win.current_node is not None and win.current_node.name == target.name
    assert view.extents.area.selected == target.name
    # the extent plot (computed when its tab is first shown) has one box list per
    # fragment; the space tab is built when shown
    assert view.extents.area.order == [] and not view.busy
    view.setCurrentWidget(view.extents)
    _settled(qtbot, view)
    assert set(view.extents.area.order) == {r.name for r in rows}
    view.setCurrentWidget(view.space)
    _settled(qtbot, view)
    assert view.space.bars.report is not None and len(view.space.bars.report.fragments) == 5
    win.close_document()
    assert not win.health_button.isVisible()


def test_health_dock_on_damaged_array(qtbot, tmp_path, built):
    win = open_window(qtbot, tmp_path)
    assert win.open_path(built("lost_metadata_file"), sync=True)
    # the verify errors bring Diagnostics in front of Health; Health computes once shown
    qtbot.waitUntil(lambda: "error" in win.d_diag.windowTitle(), timeout=WAIT_MS)
    win.d_health.raise_()
    qtbot.waitUntil(lambda: "Opening fails" in win.health_view.fragments.caption.text(),
                    timeout=WAIT_MS)
    _settled(qtbot, win.health_view)
    panel = win.health_view.fragments
    assert "Opening fails: IO Error: Cannot get file size" in panel.caption.text()
    panel.set_at(1)
    _settled(qtbot, win.health_view)
    assert "Opening fails" not in panel.caption.text()


def test_health_is_computed_in_a_worker_process(qtbot, tmp_path, built):
    win = open_window(qtbot, tmp_path)
    view = win.health_view
    view.runner.ran.clear()
    assert win.open_path(built("consolidated_partly"), sync=True)
    assert view.busy                      # the open returned before the health was computed
    assert view.fragments.caption.text() == COMPUTING   # the empty panel says what it waits for
    _settled(qtbot, view)
    view.fragments.set_at(2)
    view.setCurrentWidget(view.space)
    _settled(qtbot, view)
    # the member list, now + extents, the slider's T, the space tab: all in one process
    # that is not the window's (its interpreter lock is the window's painting)
    assert [slot for slot, _pid in view.runner.ran] == ["members", "open", "fragments", "space"]
    pids = {pid for _slot, pid in view.runner.ran}
    assert len(pids) == 1 and os.getpid() not in pids and 0 not in pids
    assert "T = 2 sees 1 of 5" in view.fragments.caption.text()
