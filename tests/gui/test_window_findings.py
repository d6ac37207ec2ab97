"""Findings in place (pytest-qt, offscreen): a verify finding on a damaged chunk marks its
node and every ancestor in the tree, paints its bytes red in the hex view, lights the status
bar and shows in the inspector."""
from __future__ import annotations

import os

os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")

from PySide6.QtCore import Qt  # noqa: E402

from arrayscope.explorer import theme  # noqa: E402
from tests.support.gui_helpers import corrupted_dense_sample, open_window  # noqa: E402
from tests.support.waits import WAIT_MS


def _icon_key(model, node) -> int:
    idx = model.index_for_node(node)
    assert idx.isValid()
    return model.data(idx, Qt.ItemDataRole.DecorationRole).cacheKey()


def test_verify_finding_marked_on_node_ancestors_hex_and_light(qtbot, tmp_path):
    win = open_window(qtbot, tmp_path)
    path = corrupted_dense_sample(tmp_path)
    with qtbot.waitSignal(win.verifier.done, timeout=WAIT_MS):
        assert win.open_path(path, sync=True)
    fip = win.findings_in_place
    errors = [m for m in fip.marks.marks if m.finding.status == "error"]
    assert len(errors) == 1
    mark = errors[0]
    assert mark.finding.source.endswith("/a1.tdb")
    node = mark.node
    assert node is not None and node.kind == "payload"       # the chunk's filtered data
    assert (mark.start, mark.end) == (node.offset, node.end)
    # the node and every ancestor up to the root carry the error icon
    err_key = theme.status_icon("error").cacheKey()
    chain = []
    n = node
    while n is not None:
        chain.append(n)
        n = n.parent
    assert [c.kind for c in chain[:4]] == ["payload", "chunk", "tile", "file"]
    model = win.tree.model
    for c in chain:
        assert fip.marks.status_of(c) == "error"
        assert _icon_key(model, c) == err_key, c.name
    # a sibling file without problems keeps its kind icon
    sibling = chain[3].parent.find("a0.tdb")
    assert fip.marks.status_of(sibling) is None
    assert _icon_key(model, sibling) != err_key
    # the hex view of the damaged file paints the range red
    win.select_node(node)
    view = win.tabs.current_view()
    assert view.source is node.source
    assert view.marks == [(node.offset, node.end, "error")]
    # the status light and the inspector
    assert fip.light.isVisibleTo(win)
    assert fip.light.status == "error" and fip.light.text() == "1 error"
    assert "LZ4" in win.inspector.info.toPlainText()
    fip.light.click()
    assert win.d_diag.isVisibleTo(win)


def test_clean_sample_light_is_green(qtbot, tmp_path):
    from tests.support.paths import SAMPLES

    win = open_window(qtbot, tmp_path)
    with qtbot.waitSignal(win.verifier.done, timeout=WAIT_MS):
        assert win.open_path(os.path.join(SAMPLES, "tiledb_dense"), sync=True)
    fip = win.findings_in_place
    assert fip.marks.counts() == (0, 0)
    assert fip.light.status == "ok" and fip.light.text() == "no problems"
    for v in win.tabs.views():
        assert v.marks == []
    win.close_document()
    assert not fip.light.isVisibleTo(win)


def test_hex_view_paints_marked_bytes_red(qtbot):
    from arrayscope.explorer.hexview import HexView
    from arrayscope.formats.core.source import BytesSource

    view = HexView(BytesSource(bytes(range(256)) * 4, "plain.bin"))
    qtbot.addWidget(view)
    view.resize(900, 400)
    view.show()
    view.set_cursor(200)                       # the cursor box away from both probes
    view.set_marks([(16, 32, "error")])        # the whole second row
    img = view.viewport().grab().toImage()
    lay = view.table_layout
    y = lay.header_h + lay.lh + lay.lh // 2             # second row
    y_clean = lay.header_h + 3 * lay.lh + lay.lh // 2
    x = int(lay.hex_x(4) - lay.cw * 0.3)                # between two hex cells: background
    marked, clean = img.pixelColor(x, y), img.pixelColor(x, y_clean)
    assert marked.red() > marked.green() + 20 and marked.red() > marked.blue() + 20
    assert abs(clean.red() - clean.green()) < 10
