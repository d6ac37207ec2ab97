"""Layout (pytest-qt, offscreen): the window fits 1024×700 with a document open, long
texts do not widen it, the Name column follows its content, Data at cursor reads every
integer and float width both ways, Diagnostics elides its paths by width, tab titles are
elided in the middle and do not pile up, the start page's lists fill the page."""
from __future__ import annotations

import os

os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")

from PySide6.QtCore import Qt  # noqa: E402
from PySide6.QtWidgets import QHeaderView, QScrollArea  # noqa: E402

from tests.support.gui_helpers import open_window  # noqa: E402
from tests.support.paths import SAMPLES  # noqa: E402
from tests.support.waits import WAIT_MS


def test_fits_1024_by_700(qtbot, tmp_path):
    win = open_window(qtbot, tmp_path)
    assert win.open_path(os.path.join(SAMPLES, "tiledb_sparse"), sync=True)
    win.st_value.setText("x" * 3000)                       # an unbreakable status text
    hint = win.minimumSizeHint()
    assert hint.width() <= 1024 and hint.height() <= 700
    win.resize(1024, 700)
    qtbot.waitUntil(lambda: win.size().width() == 1024, timeout=WAIT_MS)
    assert (win.width(), win.height()) == (1024, 700)
    assert isinstance(win.d_pipeline.widget(), QScrollArea)
    assert win.d_pipeline.widget().widget() is win.pipeline


def test_name_column_sizes_to_content(qtbot, tmp_path):
    win = open_window(qtbot, tmp_path)
    assert win.open_path(os.path.join(SAMPLES, "tiledb_dense"), sync=True)
    view = win.tree.view
    assert view.header().sectionResizeMode(0) == QHeaderView.ResizeMode.Interactive
    frag = next(win.session.document.root.find("__fragments").iter_children())
    win.select_node(frag)                                   # expands down to the fragment
    view.expand(win.tree.model.index_for_node(frag))
    idx = win.tree.model.index_for_node(frag)
    need = view.sizeHintForColumn(0)
    assert view.columnWidth(0) >= min(need, int(view.viewport().width() * 0.6)) - 1
    assert view.columnWidth(0) != 210
    assert idx.isValid()


def test_data_at_cursor_every_width_both_ways(qtbot, tmp_path):
    win = open_window(qtbot, tmp_path)
    assert win.open_path(os.path.join(SAMPLES, "tiledb_dense"), sync=True)
    win.tabs.current_view().set_cursor(0)
    t = win.inspector.table
    names = [t.item(r, 0).text() for r in range(t.rowCount())]
    for n in ("u8", "i8", "u16", "i16", "u32", "i32", "u64", "i64", "f16", "f32", "f64"):
        r = names.index(n)
        assert t.item(r, 1).text() and t.item(r, 2).text()      # little and big endian


def test_diagnostics_rows_name_their_file(qtbot, tmp_path):
    from tests.support.gui_helpers import corrupted_dense_sample

    win = open_window(qtbot, tmp_path)
    with qtbot.waitSignal(win.verifier.done, timeout=WAIT_MS):
        assert win.open_path(corrupted_dense_sample(tmp_path), sync=True)
    m = win.diag.model
    assert m.rows
    for r in range(m.rowCount()):
        row = m.rows[r]
        shown = m.data(m.index(r, 2), Qt.ItemDataRole.DisplayRole)
        assert shown == row.source                         # elided when painted, by width
        tip = m.data(m.index(r, 2), Qt.ItemDataRole.ToolTipRole)
        assert row.source in tip                           # the full name stays in the tooltip


def test_tabs_elided_closable_and_bounded(qtbot, tmp_path):
    from arrayscope.explorer.hextabs import MAX_FILE_TABS

    win = open_window(qtbot, tmp_path)
    assert win.open_path(os.path.join(SAMPLES, "tiledb_sparse"), sync=True)
    tabs = win.tabs
    assert tabs.elideMode() == Qt.TextElideMode.ElideMiddle and tabs.tabsClosable()
    files = [n for n in win.session.document.root.walk() if n.kind == "file" and n.size > 0]
    assert len(files) > MAX_FILE_TABS
    for n in files:
        win.select_node(n)
    assert tabs.count() == MAX_FILE_TABS
    assert tabs.current_view().source is files[-1].source
    shown = {id(v.source) for v in tabs.views()}
    assert shown == {id(n.source) for n in files[-MAX_FILE_TABS:]}   # the most recent ones


def test_start_page_lists_fill_the_page(qtbot, tmp_path):
    win = open_window(qtbot, tmp_path)
    win.resize(1024, 700)
    qtbot.waitUntil(lambda: win.start.height() > 400, timeout=WAIT_MS)
    assert win.start.samples.height() > win.start.height() * 0.55


def test_about_names_the_version(qtbot, tmp_path, monkeypatch):
    from PySide6.QtWidgets import QMessageBox

    from arrayscope.explorer.version import installed_version

    shown = []
    monkeypatch.setattr(QMessageBox, "about", lambda parent, title, text: shown.append(text))
    win = open_window(qtbot, tmp_path)
    win.about()
    assert shown and f"arrayscope {installed_version()}" in shown[0]


def test_names_and_values_share_the_tree_at_1024_by_700(qtbot, tmp_path):
    """A 1024×700 screen: the Structure tree's Name column gets most of the tree (it read
    "a0.…" before) and the Value column the rest (it showed 1-5 characters: issue 28 item
    4), so a row's name and value are read together; levels indent less; the pipeline panel
    does not widen its dock."""
    from arrayscope.explorer.windowfit import NARROW_INDENT, NARROW_NAME_SHARE, share_docks

    win = open_window(qtbot, tmp_path)
    win.resize(1024, 700)
    qtbot.waitUntil(lambda: win.size().width() == 1024, timeout=WAIT_MS)
    assert win.open_path(os.path.join(SAMPLES, "tiledb_dense"), sync=True)
    share_docks(win)
    frag = next(win.session.document.root.find("__fragments").iter_children())
    win.select_node(frag["a0.tdb"]["Tile 1"]["Chunk 1"])
    view = win.tree.view
    qtbot.waitUntil(lambda: view.indentation() == NARROW_INDENT, timeout=WAIT_MS)
    vw = view.viewport().width()
    assert vw < 420
    assert view.columnWidth(0) >= min(view.sizeHintForColumn(0), int(vw * NARROW_NAME_SHARE)) - 1
    assert int(vw * 0.5) < view.columnWidth(0) <= int(vw * NARROW_NAME_SHARE)
    # the Value column ends at the tree's right edge: its text is on screen, not scrolled
    assert view.columnWidth(0) + view.columnWidth(1) >= vw - 1 and view.columnWidth(1) >= vw * 0.25
    assert view.header().sectionViewportPosition(1) + view.columnWidth(1) <= vw + 1
    area = win.d_pipeline.widget()
    assert area.widget().width() <= area.viewport().width()


def test_diagnostics_source_keeps_the_member(qtbot):
    """The Source column is painted with the member's path and the file (issue 28 item 4:
    `…/a0.tdb` alone did not say which member): `elide_path`, tests/gui/test_window_elide.py."""
    from arrayscope.explorer.diagnostics import DiagnosticsPanel
    from arrayscope.explorer.elide import elide_path

    panel = DiagnosticsPanel()
    qtbot.addWidget(panel)
    for col in (2, 4):
        delegate = panel.view.itemDelegateForColumn(col)
        assert delegate is panel.path_delegate and delegate.elider is elide_path


def _open_damaged(qtbot, tmp_path, size):
    from tests.support.gui_helpers import corrupted_dense_sample

    win = open_window(qtbot, tmp_path)
    win.resize(*size)
    qtbot.waitUntil(lambda: (win.width(), win.height()) == size, timeout=WAIT_MS)
    with qtbot.waitSignal(win.verifier.done, timeout=WAIT_MS):
        assert win.open_path(corrupted_dense_sample(tmp_path), sync=True)
    from arrayscope.explorer.windowfit import share_docks

    share_docks(win)
    win.d_diag.raise_()   # its tab in front of Health's
    qtbot.wait(50)
    return win


def test_diagnostics_messages_readable_at_1024_by_700(qtbot, tmp_path):
    """Issue 28 item 4: the Diagnostics dock spans the window's width in a narrow window
    and its message column gets at least half of the table (it was ~8 characters: the
    other columns kept fixed widths between the side docks); the other columns elide in
    the middle and the tooltip holds the whole text; fragment names elide in the middle."""
    win = _open_damaged(qtbot, tmp_path, (1024, 700))
    view = win.diag.view
    assert win.diag.model.rows, "verify found the flipped byte"
    assert win.d_diag.width() >= win.width() - win.d_inspector.width() - 12   # below the tree
    vw = view.viewport().width()
    widths = [view.columnWidth(c) for c in range(5)]
    assert widths[1] >= vw // 2 and widths[1] >= 60 * view.fontMetrics().averageCharWidth()
    assert sum(widths) <= vw + 2              # no column pushed out of sight
    assert view.textElideMode() == Qt.TextElideMode.ElideMiddle
    idx = win.diag.proxy.index(0, 1)
    row = win.diag.model.rows[win.diag.proxy.mapToSource(idx).row()]
    assert row.message in idx.data(Qt.ItemDataRole.ToolTipRole)
    # the current row's whole message, wrapped under the table (the row elides it)
    view.setCurrentIndex(idx)
    detail = win.diag.detail
    qtbot.waitUntil(detail.isVisible, timeout=WAIT_MS)
    assert detail.text() == f"{row.message}\n{row.source} @ 0x{row.offset:X}"
    assert detail.wordWrap()
    assert detail.width() <= view.width() + 8
    assert detail.height() >= detail.heightForWidth(detail.width()) - 2   # no line cut
    from arrayscope.explorer.elide import elide_words

    assert win.tree.view.itemDelegateForColumn(0).elider is elide_words   # names: words
    assert win.browser.itemDelegateForColumn(0).elider is elide_words
    # the right column keeps the full height: the pipeline's Cells pane shows >= 8 rows
    frag = next(win.session.document.root.find("__fragments").iter_children())
    win.select_node(frag["a0.tdb"]["Tile 1"]["Chunk 1"])
    cells = win.pipeline.cells_pane.view
    qtbot.waitUntil(lambda: cells.model() is not None and cells.model().rowCount() >= 8,
                    timeout=WAIT_MS)
    qtbot.wait(50)
    assert cells.viewport().height() // cells.rowHeight(0) >= 8
    # the inspector is not squeezed: its Data at cursor shows rows too (it showed one; on
    # screen, both together: tests/gui/test_window_right_column.py)
    table = win.inspector.table
    assert table.rowCount() >= 4
    assert table.viewport().height() >= 3 * table.rowHeight(0)
    # a row leads with the cell's coordinates (a column per dimension) and its value, and
    # both are on screen in the narrow dock (it showed one or the other)
    table = cells.model().table
    dims = len(table.coords.names)
    assert [c.name for c in table.columns[:dims]] == table.coords.names
    value = dims   # the value column after the coordinates
    right = cells.horizontalHeader().sectionViewportPosition(value) + cells.columnWidth(value)
    assert right <= cells.viewport().width()
    shown = cells.model().data(cells.model().index(0, value))
    assert cells.fontMetrics().horizontalAdvance(shown) < cells.columnWidth(value)


def test_docks_scale_at_2560_by_1440(qtbot, tmp_path):
    """Issue 28 item 4: on a large screen the side docks take their share of the width
    (the Structure dock stayed ~480 px at 2560) and the bottom docks leave the side docks
    their full height."""
    win = _open_damaged(qtbot, tmp_path, (2560, 1440))
    assert win.d_tree.width() >= int(2560 * 0.19)
    assert win.d_inspector.width() >= int(2560 * 0.19)
    assert win.corner(Qt.Corner.BottomLeftCorner) == Qt.DockWidgetArea.LeftDockWidgetArea
    view = win.diag.view
    assert view.columnWidth(1) >= view.viewport().width() // 2


def test_float32_cells_read_as_float32(qtbot, tmp_path):
    """Issue 28: float32 cells show as float32 prints them (0.57), not as the float64 their
    widening gives (0.5699999928474426), in the cells table and the tree's Value column."""
    import numpy as np
    import tiledb

    uri = str(tmp_path / "f32")
    dom = tiledb.Domain(tiledb.Dim("d", domain=(0, 9), tile=10, dtype=np.int64))
    tiledb.Array.create(uri, tiledb.ArraySchema(domain=dom, attrs=[
        tiledb.Attr("a", dtype=np.float32, filters=[tiledb.ZstdFilter()])]))
    written = np.array([0.57, -1.2, 3.3, 0.1, 1, 2, 3, 4, 5, 6], dtype=np.float32)
    with tiledb.open(uri, "w") as a:
        a[:] = written
    win = open_window(qtbot, tmp_path)
    assert win.open_path(uri, sync=True)
    frag = next(win.session.document.root.find("__fragments").iter_children())
    chunk = frag["a0.tdb"]["Tile 1"]["Chunk 1"]
    win.select_node(chunk)
    cells = win.pipeline.cells_pane.view
    qtbot.waitUntil(lambda: cells.model() is not None and cells.model().rowCount() >= 10,
                    timeout=WAIT_MS)
    model = cells.model()
    value = len(model.table.coords.names)
    shown = [model.data(model.index(r, value)) for r in range(4)]
    assert shown == ["0.57", "-1.2", "3.3", "0.1"]
    # the decoded cells in the tree: their Value column
    texts = []
    stack = [chunk]
    while stack and len(texts) < 200:
        n = stack.pop()
        if isinstance(n.value, float):
            texts.append(n.display_text())
        stack.extend(n.iter_children())
    assert "0.57" in texts and not any("0.5699999" in t for t in texts), texts[:12]
