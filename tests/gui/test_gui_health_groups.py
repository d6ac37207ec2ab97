"""The Health dock on a group (the SOMA experiment tiledbsoma 2.3 wrote): a box of the member
arrays, the panels showing the member picked, the tree's selection picking the member, and a
click on a fragment selecting its node inside the member (pytest-qt, offscreen)."""
from __future__ import annotations

import os

os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")

from PySide6.QtCore import QPoint, Qt  # noqa: E402

from tests.support.gui_helpers import open_window  # noqa: E402
from tests.support.paths import DATA  # noqa: E402
from tests.support.waits import WAIT_MS

SOMA = os.path.join(DATA, "soma", "pbmc68k")
ARRAYS = ["ms/RNA/X/data", "ms/RNA/obsm/X_pca", "ms/RNA/obsm/X_umap",
          "ms/RNA/uns/bulk_labels_colors", "ms/RNA/uns/louvain_colors",
          "ms/RNA/uns/pca/variance_ratio", "ms/RNA/var", "ms/RNA/varm/PCs", "obs"]


def _settled(qtbot, win):
    """The Health dock computes in a worker thread: wait for its results."""
    qtbot.waitUntil(lambda: not win.health_view.busy, timeout=WAIT_MS)


def test_health_dock_on_a_soma_experiment(qtbot, tmp_path):
    win = open_window(qtbot, tmp_path)
    assert win.open_path(SOMA, sync=True)
    outer = win.group_health_view
    _settled(qtbot, win)
    assert win.d_health.isVisibleTo(win) and outer.bar.isVisibleTo(win)
    assert [outer.box.itemText(i) for i in range(outer.box.count())] == ARRAYS
    # the first member is shown: X/data, one sparse fragment of 2400 cells
    panel = win.health_view.fragments
    assert [(r.cell_num, r.state) for r in panel.timeline.rows] == [(2400, "committed")]
    # the status bar's version verdict is the member's (tiledbsoma 2.3 writes format 22)
    assert win.health_button.text() == "ms/RNA/X/data: needs libtiledb ≥ 2.25"
    assert "sees 1 of 1" in panel.caption.text()
    win.health_view.setCurrentWidget(win.health_view.extents)   # computed when shown
    _settled(qtbot, win)
    assert win.health_view.extents.area.order == [panel.timeline.rows[0].name]
    # the axis says the cells' span (60 cells x 40 genes), not the padded view
    area = win.health_view.extents.area
    assert (area._span(0), area._span(1)) == ((0, 59), (0, 39))
    # another member by the box: obs (a dataframe with two schemas, one fragment of 60)
    outer.box.setCurrentIndex(ARRAYS.index("obs"))
    _settled(qtbot, win)
    assert [r.cell_num for r in panel.timeline.rows] == [60]
    win.health_view.setCurrentWidget(win.health_view.space)
    _settled(qtbot, win)
    rep = win.health_view.space.bars.report
    assert rep is not None and rep.other.get("enumerations", 0) > 0
    # a click on the fragment selects its directory node, inside the obs member
    view = win.health_view
    view.setCurrentWidget(panel)
    panel.timeline.resize(900, 300)
    target = panel.timeline.rows[0]
    rect = panel.timeline._bar(0, target)
    qtbot.mouseClick(panel.timeline, Qt.MouseButton.LeftButton,
                     pos=QPoint(int(rect.center().x()), int(rect.center().y())))
    node = win.current_node
    assert node is not None and node.name == target.name and node.source.startswith("obs/")
    # selecting a node inside another member in the tree shows that member
    x = win.state.session.document.root.find("ms").find("RNA").find("X").find("data")
    win.select_node(x, origin="tree")
    assert outer.box.currentText() == "ms/RNA/X/data"
    _settled(qtbot, win)
    assert [r.cell_num for r in panel.timeline.rows] == [2400]
    win.close_document()
    assert not outer.bar.isVisible()


def test_timeline_labels_read_as_dates_and_uuids():
    from arrayscope.explorer.fragmentspanel import short_name, time_text

    # tiledbsoma writes at the wall clock: ms since 1970 read as a UTC date
    assert time_text(1795550412597) == "2026-11-24 20:00:12.597Z"
    assert time_text(3) == "3"      # explicit small timestamps stay numbers
    name = "__1795550412597_1795550412597_3fc1aa4d7c580b52391d710e0296056a_22"
    assert short_name(name) == "3fc1aa4d" and short_name(name, 6) == "3fc1aa"
    assert short_name("a0.tdb") == "a0.tdb"


def test_slider_stops_at_update_commits(qtbot, tmp_path):
    """The array libtiledb 2.30 wrote with two update commits (tests/data/tiledb_updates):
    the slider stops at the updates' times too, and the caption says what a reader does."""
    win = open_window(qtbot, tmp_path)
    assert win.open_path(os.path.join(DATA, "tiledb_updates", "sparse_upd"), sync=True)
    _settled(qtbot, win)
    panel = win.health_view.fragments
    assert panel.ticks == [1, 2, 3, 4]          # writes at 1 and 3, updates at 2 and 4
    panel.set_at(1)
    _settled(qtbot, win)
    assert "T = 1 sees 1 of 2" in panel.caption.text() and "update" not in panel.caption.text()
    panel.set_at(2)
    _settled(qtbot, win)
    text = panel.caption.text()
    assert "T = 2 sees 1 of 2" in text
    assert "update __2_2_" in text and "sets b = 7.25 where NOT a >= 10" in text
    assert "reads it as a delete" in text and "update __4_4_" not in text
