"""The window on SCDL and Zarr samples, verify findings in the diagnostics panel, paired
var / nullable cells in the pipeline panel, closing stage tabs (pytest-qt, offscreen)."""
from __future__ import annotations

import os

os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")

import numpy as np  # noqa: E402
import pytest  # noqa: E402
from PySide6.QtCore import QPoint, Qt  # noqa: E402
from PySide6.QtTest import QTest  # noqa: E402

import arrayscope.explorer.qtfix  # noqa: E402,F401  (before any Qt call)
from tests.support.gui_helpers import open_window  # noqa: E402
from tests.support.paths import SAMPLES  # noqa: E402
from tests.support.waits import WAIT_MS


@pytest.fixture
def win(qtbot, tmp_path):
    return open_window(qtbot, tmp_path)


def _open(qtbot, win, path, verified=True):
    """Open through the background loader; wait for it (and for verify)."""
    if verified:
        with qtbot.waitSignal(win.verifier.done, timeout=WAIT_MS):
            with qtbot.waitSignal(win.loader.loaded, timeout=WAIT_MS):
                win.open_path(path)
    else:
        with qtbot.waitSignal(win.loader.loaded, timeout=WAIT_MS):
            win.open_path(path)
    return win.session.document


def _click_byte(view, off):
    view.scroll_to(off)
    lay = view.table_layout
    x = int(lay.hex_x(off % lay.bpr) + lay.cw)
    y = int(lay.row_y(off // lay.bpr) + lay.lh / 2)
    QTest.mouseClick(view.viewport(), Qt.LeftButton, Qt.NoModifier, QPoint(x, y))
    assert view.cursor_offset == off


def _select(win, node):
    assert win.tree.select_node(node, emit=True)
    view = win.tabs.current_view()
    assert view.source is node.source
    assert view.selection() == (node.offset, node.end)
    return view


# ---- SCDL --------------------------------------------------------------------------------
def test_scdl_sample_tree_hex_inspector_browser(qtbot, win):
    doc = _open(qtbot, win, os.path.join(SAMPLES, "scdl"))
    assert doc.format == "scdl"
    assert win.d_browser.windowTitle() == "Archive" and win.browser.topLevelItemCount() == 1
    field = doc.root["header.sch"]["array_count"]
    _select(win, field)
    assert "Number of array descriptors" in win.inspector.info.toPlainText()   # its FieldDoc
    # a byte of data.npy -> the node owning it
    data = doc.root["data.npy"]
    win.select_node(data)
    view = win.tabs.current_view()
    _click_byte(view, 13)
    node = win.tree.current_node()
    assert node is not None and node.source is data.source and node.offset <= 13 < node.end
    assert win.current_node is node
    # the browser follows, diagnostics have run verify
    assert win.browser.currentItem().text(0) == "data.npy"
    assert "verify found nothing more" in win.diag.summary.text()
    assert "stored raw" in win.pipeline.title.text()


# ---- Zarr --------------------------------------------------------------------------------
def test_zarr_v3_sample_stages_records_and_bytes(qtbot, win):
    doc = _open(qtbot, win, os.path.join(SAMPLES, "zarr_struct"))
    assert doc.format == "zarr"
    chunk = doc.root.resolve("c/0/0")
    magic = chunk["Codec 1: zstd"]["Zstandard frame"]["Magic_Number"]
    _select(win, magic)
    assert "Codec 1: zstd" not in win.tabs.tabText(win.tabs.currentIndex())
    # a record lives on the decoded (derived) source: its own tab
    rec = chunk["Records"].child(5)
    view = _select(win, rec)
    assert view.source in doc.derived and win.tabs.tabText(win.tabs.currentIndex()).startswith("⤷")
    # clicking a byte of the record selects the field owning it
    off = rec.offset + 5   # inside pos.x (bytes 4..7)
    _click_byte(view, off)
    node = win.tree.current_node()
    assert node.name == "x" and node.parent.name == "pos" and node.parent.parent is rec
    # the pipeline panel shows the codec chain and the records table (numpy-backed)
    panel = win.pipeline
    assert panel.state is not None and panel.state.node is chunk
    assert panel.cells_view.model() is panel.cells
    assert panel.cells.rowCount() == 16
    assert panel.cells_view.currentIndex().row() == 5      # the table follows the selection
    assert panel.cells.headerData(3, Qt.Horizontal) == "pos.y"
    x = np.frombuffer(view.source.read(rec.offset + 4, 4), "<f4")[0]
    assert panel.cells.data(panel.cells.index(5, 2)) == str(x)
    stages = [panel.tree.topLevelItem(i).text(0) for i in range(panel.tree.topLevelItemCount())]
    assert stages == ["Stored chunk", "⟲ Codec 1: zstd", "Records"]


def test_zarr_v2_blosc_sample(qtbot, win):
    doc = _open(qtbot, win, os.path.join(SAMPLES, "zarr_v2_blosc"))
    chunk = doc.root["1"]
    assert win.d_browser.windowTitle() == "Hierarchy"
    win.select_node(chunk)
    view = win.tabs.current_view()
    _click_byte(view, 1)     # the blosc header's version byte area
    node = win.tree.current_node()
    assert node.source is chunk.source and node.offset <= 1 < node.end
    rec = chunk["Records"].child(0)
    _select(win, rec)
    assert rec["id"].value == 116
    assert win.pipeline.cells.data(win.pipeline.cells.index(0, 1)) == "116"


# ---- verify findings -----------------------------------------------------------------------
def test_diagnostics_show_verify_findings_of_a_damaged_array(qtbot, win, tmp_path):
    import tiledb
    path = str(tmp_path / "damaged")
    dom = tiledb.Domain(tiledb.Dim("x", domain=(0, 99), tile=100, dtype=np.int64))
    tiledb.Array.create(path, tiledb.ArraySchema(domain=dom, sparse=False, attrs=[
        tiledb.Attr("a", dtype=np.int32, filters=tiledb.FilterList([tiledb.ChecksumSHA256Filter()]))]))
    with tiledb.open(path, "w", timestamp=1) as A:
        A[:] = np.arange(100, dtype=np.int32)
    from arrayscope import formats
    frag = os.listdir(os.path.join(path, "__fragments"))[0]
    data_file = os.path.join(path, "__fragments", frag, "a0.tdb")
    d0 = formats.open(path)
    cd = d0.root["__fragments"][frag]["a0.tdb"]["Tile 1"]["Chunk 1"]["Chunk filtered data"]
    where = cd.offset + 40
    d0.close()
    with open(data_file, "r+b") as fh:
        fh.seek(where)
        b = fh.read(1)
        fh.seek(where)
        fh.write(bytes([b[0] ^ 0xFF]))
    doc = _open(qtbot, win, path)
    rows = win.diag.model.rows
    found = [r for r in rows if r.node is None and r.status == "error"]
    assert found, [(r.status, r.message) for r in rows]
    f = found[0]
    assert "SHA" in f.message.upper() or "checksum" in f.message.lower()
    assert f.source.endswith("a0.tdb")
    assert "verify:" in win.diag.summary.text()
    assert "error" in win.d_diag.windowTitle()
    # the same findings as `arrayscope verify`
    from arrayscope.formats.core.verify import verify

    assert {(x.source, x.offset, x.message) for x in verify(doc)} == \
        {r.key for r in rows}
    # clicking the finding goes to source:offset
    proxy = win.diag.proxy
    idx = next(proxy.index(i, 1) for i in range(proxy.rowCount())
               if proxy.data(proxy.index(i, 0), Qt.UserRole) is f)
    win.diag.view.clicked.emit(idx)
    view = win.tabs.current_view()
    assert view.source.name == f.source
    assert view.cursor_offset == f.offset
    assert win.current_node is not None and win.current_node.source is view.source
    assert win.current_node.offset <= f.offset < max(win.current_node.end, f.offset + 1)


# ---- paired cells --------------------------------------------------------------------------
@pytest.fixture(scope="module")
def var_array(tmp_path_factory):
    import tiledb
    path = str(tmp_path_factory.mktemp("gui_var") / "arr")
    dom = tiledb.Domain(tiledb.Dim("x", domain=(0, 11), tile=6, dtype=np.int64))
    tiledb.Array.create(path, tiledb.ArraySchema(domain=dom, sparse=False, attrs=[
        tiledb.Attr("sn", dtype=str, var=True, nullable=True,
                    filters=tiledb.FilterList([tiledb.ZstdFilter()])),
        tiledb.Attr("lst", dtype=np.int32, var=True),
        tiledb.Attr("when", dtype="datetime64[ms]", nullable=True),
        tiledb.Attr("rle", dtype=str, var=True, filters=tiledb.FilterList([tiledb.RleFilter()]))]))
    sn = np.array(["x", None, "yy", "", None, "zzz", "w", "vv", None, "u", "tt", "s"], dtype=object)
    lst = np.array([np.arange(i % 4, dtype=np.int32) * 10 for i in range(12)], dtype=object)
    when = np.ma.masked_array(np.datetime64("2024-05-01T00:00:00", "ms") + np.arange(12) * 1500,
                              mask=[i % 5 == 2 for i in range(12)])
    rle = np.array(["aa", "aa", "b", "b", "b", "c"] * 2, dtype=object)
    with tiledb.open(path, "w", timestamp=1) as A:
        A[:] = {"sn": sn, "lst": lst, "when": when, "rle": rle}
    return path


def _frag(doc):
    return next(doc.root["__fragments"].iter_children())


def test_pipeline_pairs_var_and_validity_tiles(qtbot, win, var_array):
    doc = _open(qtbot, win, var_array, verified=False)
    panel = win.pipeline
    # the var tile of tile 2 of 'sn': strings as text, nulls greyed
    chunk = _frag(doc)["a0_var.tdb"]["Tile 2"]["Chunk 1"]
    win.select_node(chunk)
    assert "attribute 'sn'" in panel.title.text() and "var data, tile 2 of 2" in panel.title.text()
    panel.reverse_all()
    m = panel.cells
    assert panel.cells_view.model() is m and m.rowCount() == 6
    texts = [m.data(m.index(r, 1)) for r in range(6)]
    assert texts == ["'w'", "'vv'", "null", "'u'", "'tt'", "'s'"]
    assert [m.data(m.index(r, 0)) for r in range(6)] == [str(x) for x in range(6, 12)]
    from arrayscope.explorer import theme

    assert m.data(m.index(2, 1), Qt.ForegroundRole) == theme.muted_color()
    assert m.data(m.index(1, 1), Qt.ForegroundRole) is None
    assert "a0.tdb" in panel.cells_label.text() and "a0_validity.tdb" in panel.cells_label.text()
    # the offsets tile of a var int32 list: lists
    win.select_node(_frag(doc)["a1.tdb"]["Tile 1"]["Chunk 1"])
    assert "offsets" in panel.title.text() and "'lst'" in panel.title.text()
    panel.reverse_all()
    assert [m.data(m.index(r, 1)) for r in range(4)] == ["[]", "[0]", "[0, 10]", "[0, 10, 20]"]
    # a nullable datetime: its unit, and null
    win.select_node(_frag(doc)["a2_validity.tdb"]["Tile 1"]["Chunk 1"])
    panel.reverse_all()
    assert m.data(m.index(0, 1)) == "2024-05-01T00:00:00.000 (1714521600000 ms)"
    assert m.data(m.index(2, 1)) == "null"
    # RLE strings: the offsets live in the var tile
    win.select_node(_frag(doc)["a3_var.tdb"]["Tile 1"]["Chunk 1"])
    panel.reverse_all()
    assert [m.data(m.index(r, 1)) for r in range(6)] == ["'aa'", "'aa'", "'b'", "'b'", "'b'", "'c'"]
    assert "rebuilt from the var tile" in panel.cells_label.text()


def test_closing_a_stage_tab_removes_the_derived_source(qtbot, win, var_array):
    doc = _open(qtbot, win, var_array, verified=False)
    panel = win.pipeline
    chunk = _frag(doc)["a0_var.tdb"]["Tile 1"]["Chunk 1"]
    win.select_node(chunk)
    panel.reverse_next()
    src = win.tabs.current_view().source
    stage = panel.state.nodes[0]
    assert src in doc.derived and stage.parent is chunk
    rows_before = win.tree.model.rowCount(win.tree.model.index_for_node(chunk))
    win.tabs.tabCloseRequested.emit(win.tabs.currentIndex())
    assert src not in doc.derived and doc.source_by_name(src.name) is None
    assert stage not in list(chunk.iter_children()) and 0 not in panel.state.nodes
    assert win.tree.model.rowCount(win.tree.model.index_for_node(chunk)) == rows_before - 1
    assert win.current_node is chunk
    assert win.session.node_at(src, 0) is None
    # double-clicking the stage row makes it again (a new source with the same name)
    item = next(panel.tree.topLevelItem(i) for i in range(panel.tree.topLevelItemCount())
                if panel.tree.topLevelItem(i).data(0, Qt.UserRole) == ("stage", 0))
    panel._row_activated(item, 0)
    again = panel.state.sources[0]
    assert again in doc.derived and again.name == src.name
    assert win.tabs.current_view().source is again
    # closing a file's tab keeps its source
    win.select_node(chunk)
    win.tabs.tabCloseRequested.emit(win.tabs.currentIndex())
    assert chunk.source in doc.sources
