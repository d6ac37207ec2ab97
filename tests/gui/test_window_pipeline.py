"""The pipeline panel (issue 13): one rule for every format (a selected chunk shows its cells
at once), an empty panel outside any chunk, Apply forward's tab and verdict, one stage back /
forward with the stage shown highlighted, cell coordinates equal to tiledb-py's, and a
clicked cell's bytes selected in the hex views (pytest-qt, offscreen, arrays written by
tiledb-py)."""
from __future__ import annotations

import os

os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")

import numpy as np  # noqa: E402
import pytest  # noqa: E402
import tiledb  # noqa: E402
from PySide6.QtCore import Qt  # noqa: E402
from PySide6.QtTest import QTest  # noqa: E402

import arrayscope.explorer.qtfix  # noqa: E402,F401  (before any Qt call)
from tests.support import tiledb_arrays  # noqa: E402
from tests.support.gui_helpers import open_window  # noqa: E402
from tests.support.waits import WAIT_MS


@pytest.fixture
def win(qtbot, tmp_path):
    return open_window(qtbot, tmp_path)


@pytest.fixture(scope="module")
def arrays(tmp_path_factory):
    return str(tmp_path_factory.mktemp("pipeline_arrays"))


def _open(qtbot, win, path):
    with qtbot.waitSignal(win.loader.loaded, timeout=WAIT_MS):
        win.open_path(path)
    return win.session.document


def _frag(doc, i=0):
    return list(doc.root["__fragments"].iter_children())[i]


def _click_row(panel, row, col=0):
    view = panel.cells_view
    rect = view.visualRect(panel.cells.index(row, col))
    QTest.mouseClick(view.viewport(), Qt.LeftButton, Qt.NoModifier, rect.center())


@pytest.fixture(scope="module")
def shuffled(tmp_path_factory):
    """A dense int64 attribute through DoubleDelta then ByteShuffle (both deterministic:
    forward must give the stored bytes back exactly)."""
    path = str(tmp_path_factory.mktemp("pipeline_fwd") / "arr")
    dom = tiledb.Domain(tiledb.Dim("x", domain=(0, 199), tile=100, dtype=np.int64))
    tiledb.Array.create(path, tiledb.ArraySchema(domain=dom, sparse=False, attrs=[
        tiledb.Attr("a", dtype=np.int64, filters=tiledb.FilterList(
            [tiledb.DoubleDeltaFilter(), tiledb.ByteShuffleFilter()]))]))
    with tiledb.open(path, "w", timestamp=1) as A:
        A[:] = (np.arange(200, dtype=np.int64) ** 2) - 7
    return path


# ---- 1. an unfiltered chunk shows its cells at once ----------------------------------------
def test_unfiltered_chunk_shows_cells_without_a_click(qtbot, win, arrays):
    path = tiledb_arrays.build("dense_1d", arrays)
    doc = _open(qtbot, win, path)
    chunk = _frag(doc)["a0.tdb"]["Tile 2"]["Chunk 1"]
    win.select_node(chunk)
    panel = win.pipeline
    assert panel.state.stage_count() == 0
    m = panel.cells
    expected = np.arange(100, dtype=np.int64) * 3 - 50
    assert m.rowCount() == 10
    # a row: the cell's coordinate, then its value
    assert [m.data(m.index(r, 0)) for r in range(10)] == [str(i) for i in range(10, 20)]
    assert [m.data(m.index(r, 1)) for r in range(10)] == [str(v) for v in expected[10:20]]
    assert "unfiltered" in panel.cells_label.text()
    # its cells are the stored bytes: clicking one selects it in the file itself
    _click_row(panel, 3)
    view = win.tabs.current_view()
    ci = panel.state.ci
    assert view.source is ci.source
    assert view.selection() == (ci.data_offset + 24, ci.data_offset + 32)
    assert view.source.read(ci.data_offset + 24, 8) == expected[13].astype("<i8").tobytes()


def test_filtered_tiledb_chunk_is_reversed_at_selection_like_zarr(qtbot, win, shuffled):
    doc = _open(qtbot, win, shuffled)
    chunk = _frag(doc)["a0.tdb"]["Tile 1"]["Chunk 1"]
    win.select_node(chunk)
    panel = win.pipeline
    st = panel.state
    assert st.lowest() == 0 and st.stage_count() == 2
    expected = (np.arange(100, dtype=np.int64) ** 2) - 7
    m = panel.cells
    assert m.rowCount() == 100 and m.data(m.index(57, 1)) == str(int(expected[57]))
    # the stages hang under the chunk, but no tab was opened for them: the chunk stays in front
    assert st.nodes[0].parent is chunk and st.nodes[1].parent is chunk
    assert win.tabs.current_view().source is chunk.source
    assert win.tabs.view_for(st.sources[0], create=False) is None
    # and the forward checks of both (deterministic) filters are in the rows already
    assert {c.k: c.status for c in st.checks} == {0: "identical", 1: "identical"}
    # the stage nodes are indexed without rebuilding the document's index
    session = win.session
    assert session.node_at(chunk.source, chunk.offset) is not None   # the index is built
    built = session.index._by_source
    chunk2 = _frag(doc)["a0.tdb"]["Tile 2"]["Chunk 1"]
    win.select_node(chunk2)
    st2 = panel.state
    assert session.index._by_source is built
    cell = session.node_at(st2.sources[0], 8 * 41 + 2)
    assert cell.name == "Cell 41" and cell.value == int(((100 + 41) ** 2) - 7)


# ---- 2. a node outside any chunk clears the panel ------------------------------------------
def test_node_outside_a_chunk_clears_the_panel(qtbot, win, shuffled):
    doc = _open(qtbot, win, shuffled)
    panel = win.pipeline
    win.select_node(_frag(doc)["a0.tdb"]["Tile 1"]["Chunk 1"])
    assert panel.cells.rowCount() == 100 and panel.tree.topLevelItemCount() == 3
    win.select_node(doc.root["__schema"])
    assert panel.state is None and panel.current is None
    assert panel.cells.rowCount() == 0 and panel.tree.topLevelItemCount() == 0
    assert panel.title.text() == "Select a tile or a chunk to see its filter pipeline."
    assert not any(b.isEnabled() for b in (panel.btn_back, panel.btn_step, panel.btn_fwd,
                                           panel.btn_cells))


# ---- 3. Apply forward: the re-encoded bytes as a tab, and a verdict ------------------------
def test_apply_forward_opens_reencoded_tab_with_verdict(qtbot, win, shuffled):
    doc = _open(qtbot, win, shuffled)
    chunk = _frag(doc)["a0.tdb"]["Tile 1"]["Chunk 1"]
    win.select_node(chunk)
    panel = win.pipeline
    assert panel.btn_fwd.isEnabled()
    QTest.mouseClick(panel.btn_fwd, Qt.LeftButton)
    ci = panel.state.ci
    view = win.tabs.current_view()
    src = view.source
    assert src is panel.state.fwd_source and src in doc.derived
    stored = ci.source.read(ci.metadata_offset, ci.metadata_length + ci.filtered_length)
    assert src.read(0, src.size) == stored          # both filters reproduce the stored bytes
    assert panel.verdict.isVisible()
    assert "✓ forward reproduces the stored" in panel.verdict.text()
    assert f"{len(stored):,} B exactly" in panel.verdict.text()
    node = win.current_node
    assert node is panel.state.fwd_node and node.parent is chunk
    assert panel.current == 2   # the re-encoded bytes are stage n
    # closing its tab drops it, as any stage tab
    win.tabs.tabCloseRequested.emit(win.tabs.currentIndex())
    assert src not in doc.derived and panel.state.fwd_source is None
    assert node not in list(chunk.iter_children())


def test_forward_verdict_names_a_differing_range(qtbot, win, shuffled):
    """A core check of the verdict line: a deterministic filter whose stored output differs."""
    from arrayscope.formats.tiledb.verify.forward_check import StageCheck
    from arrayscope.formats.tiledb.window.chunkview import forward_verdict

    bad = StageCheck(k=1, filter="BYTESHUFFLE", status="different", ranges=((5, 2),),
                     metadata_size=0, made_size=800, stored_size=800)
    status, text = forward_verdict([bad], 812)
    assert status == "error"
    assert text == ("✗ differs from the stored bytes: BYTESHUFFLE forward does not reproduce the "
                    "stored stage: data bytes 5-6 differ (800 bytes made, 800 stored)")
    recoded = StageCheck(k=1, filter="ZSTD", status="re-encoded", detail="another build")
    assert forward_verdict([recoded], 10)[0] == "warning"


# ---- 4. one stage back / forward, with keys, the stage highlighted -------------------------
def test_step_back_and_forward_with_keys(qtbot, win, shuffled):
    doc = _open(qtbot, win, shuffled)
    chunk = _frag(doc)["a0.tdb"]["Tile 1"]["Chunk 1"]
    win.select_node(chunk)
    panel = win.pipeline
    st = panel.state
    assert panel.current == 2 and panel.tree.current_stage_row() is panel.tree.topLevelItem(0)
    assert not panel.btn_step.isEnabled() and panel.btn_back.isEnabled()
    win.activateWindow()
    QTest.keyClick(win, Qt.Key_BracketLeft, Qt.ControlModifier)      # reverse ByteShuffle
    assert panel.current == 1
    assert win.current_node is st.nodes[1]
    assert win.tabs.current_view().source is st.sources[1]
    assert panel.tree.current_stage_row().data(0, Qt.UserRole) == ("stage", 1)
    assert panel.tree.current_stage_row().font(0).bold()
    QTest.keyClick(win, Qt.Key_BracketLeft, Qt.ControlModifier)      # reverse DoubleDelta
    assert panel.current == 0 and win.current_node is st.nodes[0]
    assert not panel.btn_back.isEnabled()
    cells = win.tabs.current_view().source
    assert cells.read(0, 16) == ((np.arange(2, dtype=np.int64) ** 2) - 7).astype("<i8").tobytes()
    QTest.keyClick(win, Qt.Key_BracketRight, Qt.ControlModifier)     # re-apply DoubleDelta
    assert panel.current == 1 and win.current_node is st.nodes[1]
    QTest.mouseClick(panel.btn_step, Qt.LeftButton)                   # re-apply ByteShuffle
    assert panel.current == 2 and win.current_node is chunk
    assert win.tabs.current_view().source is chunk.source
    assert panel.tree.current_stage_row() is panel.tree.topLevelItem(0)


# ---- 5. coordinates equal tiledb-py's ------------------------------------------------------
@pytest.mark.parametrize("name", ["dense_2d_row_col", "dense_2d_col_row"])
def test_dense_2d_coordinates_match_tiledb(qtbot, win, arrays, name):
    path = tiledb_arrays.build(name, arrays)
    doc = _open(qtbot, win, path)
    with tiledb.open(path) as A:
        a = A[:]["a"]     # rows 1..4, cols 1..4
    panel = win.pipeline
    seen = set()
    for t in range(1, 5):
        win.select_node(_frag(doc)["a0.tdb"][f"Tile {t}"]["Chunk 1"])
        table = panel.cells.table
        assert [c.name for c in table.columns[:3]] == ["rows", "cols", "INT32"]
        assert table.row_count() == 4
        for i in range(4):
            r, c = table.coords.value(i, 0), table.coords.value(i, 1)
            assert int(table.arr[i]) == int(a[r - 1, c - 1])
            row = [panel.cells.data(panel.cells.index(i, k)) for k in range(3)]
            assert row == [str(r), str(c), str(int(a[r - 1, c - 1]))]
            seen.add((r, c))
    assert seen == {(r, c) for r in range(1, 5) for c in range(1, 5)}


def test_sparse_coordinates_come_from_the_dimension_tiles(qtbot, win, arrays):
    path = tiledb_arrays.build("sparse_2d", arrays)
    doc = _open(qtbot, win, path)
    with tiledb.open(path) as A:
        q = A.query(coords=True)[:]
    want = {(int(x), int(y)): float(v) for x, y, v in zip(q["x"], q["y"], q["v"])}
    panel = win.pipeline
    frag = _frag(doc)["a0.tdb"]
    got = {}
    for t in range(frag.child_count()):
        tile = frag.child(t)
        if not tile.name.startswith("Tile "):
            continue
        win.select_node(tile["Chunk 1"])
        table = panel.cells.table
        assert [c.name for c in table.columns[:2]] == ["x", "y"]
        for i in range(table.row_count()):
            got[(table.coords.value(i, 0), table.coords.value(i, 1))] = float(table.arr[i])
    assert got.keys() == want.keys() and len(got) == len(q["x"])
    for xy, v in want.items():
        assert got[xy] == v or (np.isnan(v) and np.isnan(got[xy]))
    x0, y0 = table.coords.value(0, 0), table.coords.value(0, 1)
    assert [panel.cells.data(panel.cells.index(0, k)) for k in range(2)] == [str(x0), str(y0)]


# ---- 6. a clicked var / nullable cell selects its bytes -----------------------------------
@pytest.fixture(scope="module")
def var_array(tmp_path_factory):
    path = str(tmp_path_factory.mktemp("pipeline_var") / "arr")
    dom = tiledb.Domain(tiledb.Dim("x", domain=(0, 11), tile=6, dtype=np.int64))
    tiledb.Array.create(path, tiledb.ArraySchema(domain=dom, sparse=False, attrs=[
        tiledb.Attr("sn", dtype=str, var=True, nullable=True,
                    filters=tiledb.FilterList([tiledb.ZstdFilter()])),
        tiledb.Attr("n", dtype=np.int32, nullable=True)]))
    sn = np.array(["x", None, "yy", "", None, "zzz", "w", "vv", None, "u", "tt", "s"], dtype=object)
    n = np.ma.masked_array(np.arange(12, dtype=np.int32) * 7, mask=[i % 4 == 1 for i in range(12)])
    with tiledb.open(path, "w", timestamp=1) as A:
        A[:] = {"sn": sn, "n": n}
    return path


def _selected(win, r):
    view = win.tabs.view_for(r.source, create=False)
    assert view is not None
    return view.selection()


def test_clicking_a_var_cell_selects_offset_and_var_bytes(qtbot, win, var_array):
    doc = _open(qtbot, win, var_array)
    panel = win.pipeline
    win.select_node(_frag(doc)["a0_var.tdb"]["Tile 2"]["Chunk 1"])
    table = panel.cells.table
    assert panel.cells.data(panel.cells.index(1, 1)) == "'vv'"
    _click_row(panel, 1, 1)
    ranges = table.cell_ranges(1)
    assert [r.part for r in ranges] == ["var", "offset", "validity"]
    var, off, val = ranges
    # the var bytes: in the var tile's decoded buffer (this chunk's cells tab), in front
    assert var.source is panel.state.sources[0] and win.tabs.current_view().source is var.source
    assert var.source.read(var.offset, var.length) == b"vv"
    assert _selected(win, var) == (var.offset, var.offset + 2)
    # the offset entry: u64 in the offsets tile, pointing at the var bytes
    assert off.length == 8 and _selected(win, off) == (off.offset, off.offset + 8)
    assert int.from_bytes(off.source.read(off.offset, 8), "little") == var.offset - \
        (var.source.size - len(panel.state.cells()))
    # the validity byte: 1 (not null)
    assert val.length == 1 and val.source.read(val.offset, 1) == b"\x01"
    assert _selected(win, val) == (val.offset, val.offset + 1)
    # the offset entry and the var bytes shown together, under the table (issue 28 item 9:
    # they were in two tabs, one behind the other)
    lines = panel.cells_pane.bytes.text().splitlines()
    assert panel.cells_pane.bytes.isVisible() and [ln.split()[0] for ln in lines] == ["var", "offset", "validity"]
    entry = int.from_bytes(off.source.read(off.offset, 8), "little")
    assert lines[0].endswith("76 76 = 'vv'")
    assert f"@0x{off.offset:X}: " in lines[1] and lines[1].endswith(f"= {entry:,}")
    # a null cell: its validity byte is 0
    nul = table.cell_ranges(2)[2]
    assert nul.part == "validity" and nul.source.read(nul.offset, 1) == b"\x00"


def test_clicking_a_nullable_cell_selects_value_and_validity_byte(qtbot, win, var_array):
    doc = _open(qtbot, win, var_array)
    panel = win.pipeline
    win.select_node(_frag(doc)["a1.tdb"]["Tile 1"]["Chunk 1"])
    assert panel.cells.data(panel.cells.index(1, 1)) == "null"
    assert panel.cells.data(panel.cells.index(3, 1)) == "21"
    assert panel.cells.data(panel.cells.index(3, 0)) == "3"
    _click_row(panel, 3, 1)
    value, validity = panel.cells.table.cell_ranges(3)
    assert (value.part, validity.part) == ("value", "validity")
    # a1.tdb is unfiltered: the cell is selected in the file itself, at 4 bytes per cell
    ci = panel.state.ci
    assert value.source is ci.source and value.offset == ci.data_offset + 12
    assert value.source.read(value.offset, 4) == (21).to_bytes(4, "little")
    assert win.tabs.current_view().source is ci.source
    assert win.tabs.current_view().selection() == (value.offset, value.offset + 4)
    assert validity.source.read(validity.offset, 1) == b"\x01"
    assert _selected(win, validity) == (validity.offset, validity.offset + 1)
    null = panel.cells.table.cell_ranges(1)[1]
    assert null.source.read(null.offset, 1) == b"\x00"


# ---- the same rule and steps for a Zarr chunk (written by zarr) ---------------------------
def test_zarr_chunk_steps_and_record_bytes(qtbot, win):
    import zarr

    from tests.support.paths import SAMPLES

    path = os.path.join(SAMPLES, "zarr_struct")
    doc = _open(qtbot, win, path)
    chunk = doc.root.resolve("c/0/0")
    win.select_node(chunk)
    panel = win.pipeline
    st = panel.state
    assert st.stage_count() == 1 and panel.current == 1
    assert panel.cells.rowCount() == 16                        # the records at once
    assert panel.tree.current_stage_row() is panel.tree.topLevelItem(0)
    QTest.keyClick(win, Qt.Key_BracketLeft, Qt.ControlModifier)   # reverse zstd
    rec = chunk["Records"]
    assert panel.current == 0 and win.current_node is rec
    assert panel.tree.current_stage_row().data(0, Qt.UserRole) == ("stage", 0)
    QTest.keyClick(win, Qt.Key_BracketRight, Qt.ControlModifier)  # back to the stored chunk
    assert panel.current == 1 and win.current_node is chunk
    # a record's bytes are selected in the decoded tab; its array index is zarr's
    _click_row(panel, 5, 1)
    (r,) = panel.cells.table.cell_ranges(5)
    size = rec.size // 16
    assert (r.source, r.offset, r.length) == (rec.source, rec.offset + 5 * size, size)
    assert win.tabs.current_view().source is rec.source
    assert win.tabs.current_view().selection() == (r.offset, r.offset + size)
    z = zarr.open_array(path, mode="r")
    idx = tuple(int(v) for v in panel.cells.data(panel.cells.index(5, 0)).strip("[]").split(","))
    assert r.source.read(r.offset, size) == z[idx].tobytes()
