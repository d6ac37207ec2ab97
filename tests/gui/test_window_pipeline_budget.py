"""The pipeline panel's bounds (issue 13): the reversed stages of chunks visited are kept
within a byte budget (least recently shown dropped: their tabs and nodes go, selecting the
chunk again reverses it again), and after clicking a cell the stage highlight follows the
tab shown (pytest-qt, offscreen, arrays written by tiledb-py)."""
from __future__ import annotations

import os

os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")

import numpy as np  # noqa: E402
import pytest  # noqa: E402
import tiledb  # noqa: E402
from PySide6.QtCore import Qt  # noqa: E402
from PySide6.QtTest import QTest  # noqa: E402

import arrayscope.explorer.qtfix  # noqa: E402,F401  (before any Qt call)
from arrayscope.explorer.pipelinepanel import REVERSED_BUDGET  # noqa: E402
from tests.support.gui_helpers import open_window  # noqa: E402
from tests.support.waits import WAIT_MS

EXPECTED = (np.arange(300, dtype=np.int64) ** 2) - 7


@pytest.fixture
def win(qtbot, tmp_path):
    return open_window(qtbot, tmp_path)


@pytest.fixture(scope="module")
def three_tiles(tmp_path_factory):
    """Dense int64, 3 tiles of 100 cells through DoubleDelta then ByteShuffle: each chunk
    reverses to two stages: its 800 B of cells and the delta-coded bytes (81, 153 and 169 B
    for tiles 1, 2, 3)."""
    path = str(tmp_path_factory.mktemp("pipeline_budget") / "arr")
    dom = tiledb.Domain(tiledb.Dim("x", domain=(0, 299), tile=100, dtype=np.int64))
    tiledb.Array.create(path, tiledb.ArraySchema(domain=dom, sparse=False, attrs=[
        tiledb.Attr("a", dtype=np.int64, filters=tiledb.FilterList(
            [tiledb.DoubleDeltaFilter(), tiledb.ByteShuffleFilter()]))]))
    with tiledb.open(path, "w", timestamp=1) as A:
        A[:] = EXPECTED
    return path


def _open(qtbot, win, path):
    with qtbot.waitSignal(win.loader.loaded, timeout=WAIT_MS):
        win.open_path(path)
    return win.session.document


def _chunk(doc, tile):
    frag = next(doc.root["__fragments"].iter_children())
    return frag["a0.tdb"][f"Tile {tile}"]["Chunk 1"]


def _cells(panel):
    m = panel.cells
    return [int(m.data(m.index(r, 1))) for r in range(m.rowCount())]   # after the coordinate


def test_default_budget_is_256_mib():
    assert REVERSED_BUDGET == 256 << 20


def test_least_recently_shown_chunk_is_dropped_over_budget(qtbot, win, three_tiles):
    doc = _open(qtbot, win, three_tiles)
    panel = win.pipeline
    panel.budget = 2000   # chunks 1 + 2 (1834 B) or 2 + 3 (1922 B) fit, not all three
    c1, c2, c3 = (_chunk(doc, t) for t in (1, 2, 3))
    win.select_node(c1)
    first = panel.state
    s1 = list(first.held_sources())
    assert [s.size for s in s1] == [800, 81] and panel.held_bytes() == 881
    panel.go_to_stage(0)                                   # chunk 1's cells get a tab
    assert win.tabs.view_for(s1[0], create=False) is not None
    win.select_node(c2)
    assert panel.held_bytes() == 881 + 953 and all(s in doc.derived for s in s1)
    win.select_node(c3)                                    # over budget: chunk 1 goes
    assert panel.held_bytes() == 953 + 969
    assert not any(s in doc.derived for s in s1)
    assert win.tabs.view_for(s1[0], create=False) is None  # its tab closed
    assert [n.name for n in c1.iter_children() if n.source in s1] == []
    assert not panel.is_stage_source(s1[0]) and first.held_sources() == []
    assert _cells(panel) == EXPECTED[200:].tolist()
    # chunk 1 again: reversed again (new sources, same cells), now chunk 2 is the oldest
    s2 = list(panel._views[next(iter(panel._views))].held_sources())
    win.select_node(c1)
    again = panel.state
    assert again is not first and again.lowest() == 0
    assert _cells(panel) == EXPECTED[:100].tolist()
    assert all(s in doc.derived for s in again.held_sources())
    assert not any(s in doc.derived for s in s2)
    assert panel.held_bytes() == 969 + 881


def test_the_chunk_shown_stays_even_over_budget(qtbot, win, three_tiles):
    doc = _open(qtbot, win, three_tiles)
    panel = win.pipeline
    panel.budget = 100           # smaller than any one chunk
    win.select_node(_chunk(doc, 1))
    win.select_node(_chunk(doc, 2))
    assert list(panel._views.values()) == [panel.state]
    assert panel.held_bytes() == 953 and _cells(panel) == EXPECTED[100:200].tolist()


def test_stage_highlight_follows_the_tab_a_cell_click_shows(qtbot, win, three_tiles):
    doc = _open(qtbot, win, three_tiles)
    panel = win.pipeline
    win.select_node(_chunk(doc, 2))
    st = panel.state
    assert panel.current == 2 and panel.tree.current_stage_row() is panel.tree.topLevelItem(0)
    view = panel.cells_view
    rect = view.visualRect(panel.cells.index(4, 0))
    QTest.mouseClick(view.viewport(), Qt.LeftButton, Qt.NoModifier, rect.center())
    # the cell's bytes are in the cells stage (stage 0), now in front: it is highlighted
    assert win.tabs.current_view().source is st.sources[0]
    assert panel.current == 0
    assert panel.tree.current_stage_row().data(0, Qt.UserRole) == ("stage", 0)
    assert panel.tree.current_stage_row().font(0).bold()
    # picking the chunk's file tab by hand: the stored row again
    win.tabs.setCurrentWidget(win.tabs.view_for(st.node.source, create=False))
    assert panel.current == 2 and panel.tree.current_stage_row() is panel.tree.topLevelItem(0)


def _visible_rows(view) -> int:
    """Whole cell rows on screen: the table's viewport as far as the dock shows it."""
    return view.viewport().visibleRegion().boundingRect().height() // view.rowHeight(0)


def test_first_screen_at_1024_by_700_shows_8_cell_rows(qtbot, tmp_path, three_tiles):
    win = open_window(qtbot, tmp_path)
    win.resize(1024, 700)
    qtbot.waitUntil(lambda: (win.width(), win.height()) == (1024, 700), timeout=WAIT_MS)
    doc = _open(qtbot, win, three_tiles)
    win.select_node(_chunk(doc, 1))
    view = win.pipeline.cells_view
    assert win.pipeline.cells.rowCount() == 100
    qtbot.waitUntil(lambda: _visible_rows(view) >= 8, timeout=WAIT_MS)
    # the bottom docks (Diagnostics / Health, tabified) leave the bytes most of the height
    bottom = max(d.height() for d in (win.d_diag, win.d_health) if d.isVisible())
    assert bottom <= 200 and win.tabs.height() >= 300
