"""The right column (Inspector over Pipeline) at 1024×700 and 2560×1440 (issue 28 item 4):
one rule shares it (`windowfit.share_right_column`): on a short window the inspector gets
its least height (the node's name and Data at cursor's header and three rows), the pipeline
panel all the rest. Both are measured on screen together: Data at cursor shows >= 3 whole
rows AND the Cells pane >= 8 whole rows with a cell's coordinates and value side by side
(three quarters of the column for the pipeline gave the inspector its rows but the cells
7; four fifths gave the cells 9 and the inspector one). On a large screen both grow.
pytest-qt offscreen, an array tiledb-py writes."""
from __future__ import annotations

import os

os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")

import numpy as np  # noqa: E402
import pytest  # noqa: E402
import tiledb  # noqa: E402

import arrayscope.explorer.qtfix  # noqa: E402,F401  (before any Qt call)
from arrayscope.explorer.windowfit import share_docks  # noqa: E402
from tests.support.gui_helpers import open_window  # noqa: E402
from tests.support.waits import WAIT_MS  # noqa: E402

VALUES = (np.arange(400, dtype=np.int64).reshape(20, 20) * 3) - 5
WORDS = np.array([f"w{i % 7}" * (1 + i % 3) for i in range(400)], dtype=object).reshape(20, 20)


@pytest.fixture(scope="module")
def grid(tmp_path_factory):
    """Dense 20×20 in tiles of 10×10: int64 `v` (ZSTD) and var string `s` (ZSTD)."""
    path = str(tmp_path_factory.mktemp("right_column") / "grid")
    dom = tiledb.Domain(tiledb.Dim("row", domain=(0, 19), tile=10, dtype=np.int64),
                        tiledb.Dim("col", domain=(0, 19), tile=10, dtype=np.int64))
    zstd = tiledb.FilterList([tiledb.ZstdFilter(level=3)])
    tiledb.Array.create(path, tiledb.ArraySchema(domain=dom, sparse=False, attrs=[
        tiledb.Attr("v", dtype=np.int64, filters=zstd),
        tiledb.Attr("s", dtype=str, var=True, filters=zstd)]))
    with tiledb.open(path, "w", timestamp=1) as A:
        A[:] = {"v": VALUES, "s": WORDS}
    return path


def _whole_rows(view) -> int:
    """Rows of a table wholly on screen: inside its viewport's visible region, which a dock
    too short for its scroll area's content clips."""
    seen = view.viewport().visibleRegion().boundingRect()
    rows = view.model().rowCount()
    return sum(1 for r in range(rows)
               if seen.contains(view.visualRect(view.model().index(r, 0))))


def _open_at(qtbot, tmp_path, path, size):
    win = open_window(qtbot, tmp_path)
    win.resize(*size)
    qtbot.waitUntil(lambda: (win.width(), win.height()) == size, timeout=WAIT_MS)
    with qtbot.waitSignal(win.loader.loaded, timeout=WAIT_MS):
        win.open_path(path)
    share_docks(win)
    return win


def _show_chunk(qtbot, win, attr_file: str):
    frag = next(win.session.document.root["__fragments"].iter_children())
    win.select_node(frag[attr_file]["Tile 1"]["Chunk 1"])
    win.tabs.current_view().set_cursor(0)             # Data at cursor fills its rows
    cells = win.pipeline.cells_view
    qtbot.waitUntil(lambda: cells.model().rowCount() == 100, timeout=WAIT_MS)
    qtbot.waitUntil(lambda: win.inspector.table.rowCount() >= 8, timeout=WAIT_MS)
    return cells


def _coords_and_value_on_screen(cells) -> None:
    table = cells.model().table
    assert table.coords.names == ["row", "col"]
    assert [c.name for c in table.columns[:2]] == ["row", "col"]
    value = 2
    right = cells.horizontalHeader().sectionViewportPosition(value) + cells.columnWidth(value)
    assert cells.horizontalHeader().sectionViewportPosition(0) >= 0
    assert right <= cells.viewport().width()
    shown = cells.model().data(cells.model().index(0, value))
    assert cells.fontMetrics().horizontalAdvance(str(shown)) < cells.columnWidth(value)


@pytest.mark.parametrize("attr_file, first", [("a0.tdb", str(VALUES[0, 0])),
                                              ("a1.tdb", repr(WORDS[0, 0]))])
def test_inspector_rows_and_cell_rows_together_at_1024_by_700(qtbot, tmp_path, grid,
                                                              attr_file, first):
    win = _open_at(qtbot, tmp_path, grid, (1024, 700))
    cells = _show_chunk(qtbot, win, attr_file)
    assert str(cells.model().data(cells.model().index(0, 2))) == first   # tiledb-py's cell
    qtbot.waitUntil(lambda: _whole_rows(win.inspector.table) >= 3, timeout=WAIT_MS)
    qtbot.waitUntil(lambda: _whole_rows(cells) >= 8, timeout=WAIT_MS)
    assert _whole_rows(win.inspector.table) >= 3 and _whole_rows(cells) >= 8   # both at once
    assert win.d_inspector.isVisible() and win.d_pipeline.isVisible()
    assert not win.d_inspector.isFloating() and win.tabifiedDockWidgets(win.d_inspector) == []
    _coords_and_value_on_screen(cells)
    # the inspector's text keeps the node's name on screen above the table
    info = win.inspector.info
    assert info.viewport().visibleRegion().boundingRect().height() >= info.fontMetrics().height()


def test_docks_scale_with_a_2560_by_1440_screen(qtbot, tmp_path, grid):
    win = _open_at(qtbot, tmp_path, grid, (2560, 1440))
    cells = _show_chunk(qtbot, win, "a0.tdb")
    qtbot.waitUntil(lambda: win.d_inspector.width() >= int(2560 * 0.19), timeout=WAIT_MS)
    assert win.d_tree.width() >= int(2560 * 0.19)
    qtbot.waitUntil(lambda: _whole_rows(win.inspector.table) >= 8, timeout=WAIT_MS)
    assert _whole_rows(cells) >= 20
    # the tree takes three quarters of the left column (the Array dock kept 812 px of 1 400)
    left = win.d_browser.height() + win.d_tree.height()
    assert win.d_tree.height() >= 0.7 * left
    # the column is shared two fifths / three fifths, as on any tall window
    column = win.d_inspector.height() + win.d_pipeline.height()
    assert abs(win.d_inspector.height() - column * 2 / 5) <= 0.05 * column
    _coords_and_value_on_screen(cells)
