"""The window against real arrays written by tiledb-py (pytest-qt, offscreen)."""
from __future__ import annotations

import os

os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")

import numpy as np
import pytest
import tiledb
from PySide6.QtCore import QPoint, Qt  # noqa: E402
from PySide6.QtGui import QImage  # noqa: E402

from tests.support.gui_helpers import open_window  # noqa: E402
from tests.support.waits import WAIT_MS

N, TILE = 2000, 1000


@pytest.fixture(scope="module")
def array_dir(tmp_path_factory):
    path = str(tmp_path_factory.mktemp("gui") / "arr")
    dom = tiledb.Domain(tiledb.Dim("x", domain=(0, N - 1), tile=TILE, dtype=np.int64))
    attrs = [
        tiledb.Attr("a", dtype=np.int64,
                    filters=tiledb.FilterList([tiledb.ByteShuffleFilter(), tiledb.ZstdFilter(level=3)])),
        tiledb.Attr("b", dtype=np.float32, filters=tiledb.FilterList([tiledb.GzipFilter()])),
    ]
    tiledb.Array.create(path, tiledb.ArraySchema(domain=dom, attrs=attrs, sparse=False))
    rng = np.random.default_rng(3)
    a = np.cumsum(rng.integers(-5, 50, N)).astype(np.int64)
    b = rng.normal(size=N).astype(np.float32)
    with tiledb.open(path, "w", timestamp=1_700_000_000_000) as A:
        A[:] = {"a": a, "b": b}
    return path


@pytest.fixture
def win(qtbot, tmp_path):
    return open_window(qtbot, tmp_path)


def _open(qtbot, win, path):
    """Open through the background loader and wait for it (and for the first selection,
    made on the next turn of the event loop)."""
    with qtbot.waitSignal(win.loader.loaded, timeout=WAIT_MS):
        win.open_path(path)
    assert win.session is not None
    qtbot.waitUntil(lambda: win.current_node is not None, timeout=WAIT_MS)
    return win.session.document


def _data_file(doc, attr_index=0):
    frags = doc.root["__fragments"]
    frag = next(frags.iter_children())
    return frag[f"a{attr_index}.tdb"]


def _expected(path, lo, hi, name="a"):
    with tiledb.open(path) as A:
        return A[lo:hi][name]


def test_open_array_in_background(qtbot, win, array_dir):
    doc = _open(qtbot, win, array_dir)
    assert doc.format == "tiledb"
    assert win.tree.model.root_node is doc.root
    assert win.stack.currentIndex() == 1
    assert win.browser.topLevelItemCount() == 1
    assert win.recent()[0] == os.path.abspath(array_dir)


def test_tree_selection_selects_bytes(qtbot, win, array_dir):
    doc = _open(qtbot, win, array_dir)
    chunk = _data_file(doc)["Tile 1"]["Chunk 1"]
    field = chunk["Filtered chunk length"]
    assert win.tree.select_node(field, emit=True)
    view = win.tabs.current_view()
    assert view.source is field.source
    assert view.selection() == (field.offset, field.end)
    assert win.tree.current_node() is field
    # the tree says which node it shows; the inspector names it
    assert "Filtered chunk length" in win.inspector.info.toPlainText()


def test_click_byte_selects_tree_node(qtbot, win, array_dir):
    doc = _open(qtbot, win, array_dir)
    tile = _data_file(doc)["Tile 1"]
    win.select_node(tile)
    view = win.tabs.current_view()
    target = tile["Chunk 1"]["Chunk metadata length"]
    off = target.offset + 2
    lay = view.table_layout
    x = int(lay.hex_x(off % lay.bpr) + lay.cw)
    y = int(lay.row_y(off // lay.bpr) + lay.lh / 2)
    from PySide6.QtTest import QTest

    QTest.mouseClick(view.viewport(), Qt.LeftButton, Qt.NoModifier, QPoint(x, y))
    assert view.cursor_offset == off
    node = win.tree.current_node()
    assert node is not None and node.name == "Chunk metadata length"
    assert (node.offset, node.size) == (target.offset, target.size)
    assert win.current_node is node


def test_pipeline_byteshuffle_zstd_against_tiledb(qtbot, win, array_dir):
    doc = _open(qtbot, win, array_dir)
    chunk = _data_file(doc)["Tile 1"]["Chunk 1"]
    win.select_node(chunk)
    panel = win.pipeline
    assert panel.state is not None and [s.name for s in panel.state.ci.specs] == ["BYTESHUFFLE", "ZSTD"]
    expected = _expected(array_dir, 0, TILE)
    # step 1: undo Zstd -> the byte-shuffled cells, in their own tab
    panel.reverse_next()
    view = win.tabs.current_view()
    src = view.source
    assert src in doc.derived and src.origin_node is chunk
    shuffled = expected.astype("<i8").view(np.uint8).reshape(-1, 8).T.tobytes()
    md_len = len(panel.state.run.stages[1].metadata_bytes)
    assert src.read(md_len, src.size - md_len) == shuffled
    # step 2: undo ByteShuffle -> the cells, the table shows what tiledb-py reads
    panel.reverse_next()
    cells_src = win.tabs.current_view().source
    assert cells_src.read(0, cells_src.size) == expected.astype("<i8").tobytes()
    model = panel.cells
    assert model.rowCount() == TILE
    for r in (0, 1, 517, TILE - 1):   # coordinate (dense: implied), value, offset
        assert model.data(model.index(r, 0)) == str(r)
        assert model.data(model.index(r, 1)) == str(int(expected[r]))
        assert model.data(model.index(r, 2)) == f"0x{8 * r:X}"
    # the stage nodes hang under the chunk and selecting one switches tabs (Wireshark style)
    stage1 = panel.state.nodes[1]
    assert stage1.parent is chunk
    win.select_node(chunk)
    assert win.tabs.current_view().source is chunk.source
    win.select_node(stage1)
    assert win.tabs.current_view().source is stage1.source
    # clicking a cell byte in the cells tab finds the cell node arithmetically
    cell = win.session.node_at(cells_src, 8 * 517 + 3)
    assert cell.name == "Cell 517" and cell.value == int(expected[517])
    # forward: ByteShuffle reproduces exactly; Zstd is identical or re-encoded (never an error)
    panel.apply_forward()
    checks = {c.k: c.status for c in panel.state.checks}
    assert checks[0] == "identical"
    assert checks[1] in ("identical", "re-encoded")


def test_pipeline_editor_experiment(qtbot, win, array_dir):
    doc = _open(qtbot, win, array_dir)
    win.select_node(_data_file(doc)["Tile 1"]["Chunk 1"])
    panel = win.pipeline
    panel.reverse_all()
    ed = panel.editor
    lz4 = dict(ed.lab.available())["LZ4"]
    ed.steps = [ed.lab.new_step(lz4)]  # LZ4 alone
    ex = ed.apply()
    assert ex.error is None and ex.round_trip
    assert ed.results.rowCount() == 2 and ex.labels == ["cells", "LZ4(-1)"]
    assert ex.sizes[0] == TILE * 8


def test_tree_model_is_consistent(qtbot, qtmodeltester, array_dir):
    from arrayscope import formats
    from arrayscope.explorer.treemodel import NodeTreeModel

    doc = formats.open(array_dir)
    model = NodeTreeModel(doc.root)
    qtmodeltester.check(model, force_py=True)
    # fetch a few levels and check again
    idx = model.index(0, 0)
    for _ in range(3):
        model.fetchMore(idx)
        if not model.rowCount(idx):
            break
        idx = model.index(model.rowCount(idx) - 1, 0, idx)
    qtmodeltester.check(model, force_py=True)


def _lazy_tree(count):
    from arrayscope.formats.core.node import LazyChildren, Node
    from arrayscope.formats.core.source import BytesSource

    src = BytesSource(bytes(8 * count), "zeros")
    root = Node("root", "struct", src, 0, src.size)
    arr = Node("offsets", "array", src, 0, src.size)
    arr.set_lazy(LazyChildren(count, lambda i: Node(f"{i + 1}", "field", src, i * 8, 8, value=0)))
    root.add(arr)
    return root, arr


def test_bucketed_model_is_consistent(qtbot, qtmodeltester):
    from arrayscope.explorer.treemodel import NodeTreeModel

    root, _arr = _lazy_tree(2500)  # three buckets: [0..999] [1000..1999] [2000..2499]
    qtmodeltester.check(NodeTreeModel(root), force_py=True)


def test_million_children_are_bucketed(qtbot):
    from arrayscope.explorer.treemodel import PAGE, NodeTreeModel

    root, arr = _lazy_tree(1_000_000)
    model = NodeTreeModel(root)
    r = model.index(0, 0)
    model.fetchMore(r)
    a = model.index(0, 0, r)
    model.fetchMore(a)
    assert model.rowCount(a) == PAGE
    assert model.data(model.index(3, 0, a)) == "[3000..3999]"
    idx = model.index_for_node(arr.child(654_321))
    assert model.data(idx) == "654322"
    assert model.data(idx.parent()) == "[654000..654999]"


def test_sparse_gigabyte_file_paints(qtbot, win, tmp_path):
    p = tmp_path / "big.bin"
    with open(p, "wb") as f:
        f.write(b"HEAD")
        f.truncate(1 << 30)
    _open(qtbot, win, str(p))
    view = win.tabs.current_view()
    assert view.size_bytes == 1 << 30
    img = QImage(view.viewport().size(), QImage.Format_ARGB32)
    view.viewport().render(img)
    assert not img.isNull()
    view.set_cursor((1 << 30) - 1)
    assert view.top_row + view.visible_rows >= view.table_layout.total_rows
    view.viewport().render(img)
    win.goto(0x1234_5678)
    assert view.cursor_offset == 0x1234_5678


def test_find_and_goto(qtbot, win, array_dir):
    doc = _open(qtbot, win, array_dir)
    win.select_node(_data_file(doc))
    view = win.tabs.current_view()
    win.findbar.mode.setCurrentText("Hex")
    win.findbar.edit.setText("28 b5 2f fd")  # the Zstandard frame magic
    win.findbar.trigger(False)
    assert win.finder.busy                  # searching in a worker thread
    qtbot.waitUntil(lambda: not win.finder.busy, timeout=WAIT_MS)
    a, b = view.selection()
    assert view.source.read(a, 4) == bytes.fromhex("28b52ffd")
    assert win.current_node is not None


def test_screenshot_cli(tmp_path, array_dir, capsys, qapp):
    from arrayscope.explorer.cli import main

    out = tmp_path / "shot.png"
    frag = sorted(os.listdir(os.path.join(array_dir, "__fragments")))[0]
    sel = f"__fragments/{frag}/a0.tdb/Tile 1/Chunk 1"
    assert main([array_dir, "--screenshot", str(out), "--select", sel]) == 0
    img = QImage(str(out))
    assert img.width() >= 1000 and img.height() >= 600
    assert main([array_dir, "--screenshot", str(out), "--select", f"__fragments/{frag}/nope"]) == 2
    err = capsys.readouterr().err
    assert "a0.tdb" in err and "nope" in err
