"""A verify finding inside a group member, in the window (pytest-qt, offscreen; a group of
groups and an array written by tiledb-py, one zstd chunk damaged): every ancestor from the
group's root down carries the mark before the member is opened, and a Diagnostics click
opens the member off the GUI thread, expands the tree to the chunk and selects its bytes."""
from __future__ import annotations

import os

os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")

from PySide6.QtCore import Qt  # noqa: E402

from arrayscope.explorer import theme  # noqa: E402
from arrayscope.formats.core.findings import CHUNK_DECODE  # noqa: E402
from tests.support.groups import group_with_damaged_member  # noqa: E402
from tests.support.gui_helpers import open_window  # noqa: E402
from tests.support.waits import WAIT_MS  # noqa: E402


def _row_of(diag, finding):
    for r in range(diag.proxy.rowCount()):
        idx = diag.proxy.index(r, 1)
        row = diag.proxy.data(idx, Qt.ItemDataRole.UserRole)
        if row.finding is finding:
            return idx
    raise AssertionError("no row for the finding")


def test_member_finding_marked_from_the_root_and_reached_from_diagnostics(qtbot, tmp_path):
    win = open_window(qtbot, tmp_path)
    g = group_with_damaged_member(tmp_path, "zstd")
    with qtbot.waitSignal(win.verifier.done, timeout=WAIT_MS):
        assert win.open_path(g, sync=True)
    fip = win.findings_in_place
    [f] = [m.finding for m in fip.marks.marks if m.finding.code == CHUNK_DECODE]
    frag = os.listdir(os.path.join(g, "ms", "X", "__fragments"))[0]
    assert f.node == f"g/ms/X/__fragments/{frag}/a0.tdb/Tile 1/Chunk 1/Chunk filtered data"
    root = win.session.document.root
    ms = root.find("ms")
    assert ms.pending   # the member is not opened by the findings arriving
    err = theme.status_icon("error").cacheKey()
    model = win.tree.model
    for n in (root, ms):
        assert fip.marks.status_of(n) == "error"
        idx = model.index_for_node(n)
        assert model.data(idx, Qt.ItemDataRole.DecorationRole).cacheKey() == err
    # the Diagnostics row names the node and leads to it
    idx = _row_of(win.diag, f)
    assert win.diag.proxy.index(idx.row(), 4).data().endswith("Chunk 1/Chunk filtered data")
    win.diag.view.clicked.emit(idx)
    assert model.building == 1 or not ms.pending   # opened on the worker thread
    qtbot.waitUntil(lambda: win.current_node is not None and
                    win.current_node.path() == f.node, timeout=WAIT_MS)
    node = win.current_node
    assert node.kind == "payload" and node.offset <= f.offset < node.end
    assert win.tree.current_node() is node   # the tree expanded down to it
    view = win.tabs.current_view()
    assert view.source is node.source
    assert view.selection() == (node.offset, node.end)
    assert view.marks == [(node.offset, node.end, "error")]
    assert win.pipeline.state is not None   # the chunk's pipeline is shown beside
    assert "ZSTD" in win.pipeline.tree.topLevelItem(0).text(0) + win.pipeline.title.text()
    # now built: every node on the way carries the mark
    n = node
    while n is not None:
        assert fip.marks.status_of(n) == "error", n.name
        n = n.parent


def test_tile_sum_finding_drawn_on_the_tile_not_its_first_field(qtbot, tmp_path):
    """A tile's cells that do not sum to the fragment metadata's sum (one float changed,
    which tiledb-py reads back silently): the mark is on the tile and its bytes, not on
    `Num chunks`, the first field at the tile's offset (issue 28 item 5)."""
    from arrayscope.formats.core.findings import TILE_STAT

    win = open_window(qtbot, tmp_path)
    g = group_with_damaged_member(tmp_path, "value")
    with qtbot.waitSignal(win.verifier.done, timeout=WAIT_MS):
        assert win.open_path(os.path.join(g, "ms", "X"), sync=True)
    marks = win.findings_in_place.marks
    [m] = [m for m in marks.marks if m.finding.code == TILE_STAT]
    assert m.node is not None and m.node.kind == "tile" and m.node.name == "Tile 1"
    assert (m.start, m.end) == (m.node.offset, m.node.end)
    first = m.node.find("Num chunks")
    assert first is not None and marks.status_of(first) is None
    assert marks.findings_on(m.node) == [m.finding]
