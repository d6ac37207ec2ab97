"""The window on a SOMA experiment (tests/data/soma, written by tiledbsoma 2.3): the browser
shows the experiment as one (obs, measurements, matrix layers), members are opened only when
expanded, and verify (which walks every member) finds nothing (pytest-qt, offscreen)."""
from __future__ import annotations

import os

os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")

import pytest  # noqa: E402
from PySide6.QtCore import Qt  # noqa: E402
from PySide6.QtWidgets import QTreeWidgetItem  # noqa: E402

import arrayscope.explorer.qtfix  # noqa: E402,F401  (before any Qt call)
from tests.support.gui_helpers import open_window  # noqa: E402
from tests.support.paths import DATA  # noqa: E402
from tests.support.waits import WAIT_MS

SOMA = os.path.join(DATA, "soma", "pbmc68k")


@pytest.fixture
def win(qtbot, tmp_path):
    return open_window(qtbot, tmp_path)


def _rows(item):
    return {item.child(i).text(0): item.child(i) for i in range(item.childCount())}


def _expand(qtbot, item):
    item.setExpanded(True)
    qtbot.waitUntil(lambda: item.childCount() > 0, timeout=WAIT_MS)


def test_soma_experiment_members_open_when_expanded(qtbot, win):
    with qtbot.waitSignal(win.verifier.done, timeout=WAIT_MS):
        with qtbot.waitSignal(win.loader.loaded, timeout=WAIT_MS):
            win.open_path(SOMA)
    doc = win.session.document
    opened = {s.name for s in doc.sources}
    assert opened == {n for n in opened if n.startswith(("__group/", "__meta/"))} | \
        {"__tiledb_group.tdb"}   # the experiment's own files only
    top = win.browser.topLevelItem(0)
    assert top.text(1).startswith("SOMAExperiment · TileDB group, 2 members")
    rows = _rows(top)
    assert rows["obs"].text(1).startswith("SOMADataFrame · cell (observation) annotations")
    assert rows["__meta"].text(1) == "Group metadata"
    assert rows["__group"].text(1) == "Group members (one list per write)"
    assert rows["ms"].text(1).startswith("SOMACollection · measurements")
    assert rows["ms"].childCount() == 0 and rows["obs"].childCount() == 0
    assert rows["ms"].childIndicatorPolicy() == QTreeWidgetItem.ChildIndicatorPolicy.ShowIndicator
    # expanding a member opens it with its own context
    _expand(qtbot, rows["ms"])   # opened on a worker thread: its rows come when built
    rna = _rows(rows["ms"])["RNA"]
    assert rna.text(1).startswith("SOMAMeasurement · measurement")
    _expand(qtbot, rna)
    x = _rows(rna)["X"]
    assert x.text(1).startswith("SOMACollection · matrix layers (cells × features)")
    _expand(qtbot, x)
    data = _rows(x)["data"]
    assert data.text(1).startswith("SOMASparseNDArray · matrix layer")
    _expand(qtbot, data)
    assert "TileDB array, sparse, 1 fragment" in data.text(1)
    assert {"__fragments", "__schema", "__commits"} <= set(_rows(data))
    names = {s.name for s in doc.sources}
    assert any(n.startswith("ms/RNA/X/data/__schema/") for n in names)
    assert not any(n.startswith("ms/RNA/X/data/__fragments/") for n in names)  # on expansion
    assert not any(n.startswith(("obs/", "ms/RNA/var/")) for n in names)  # not opened
    # the data file of the member is described with its own schema
    frag = _rows(_rows(data)["__fragments"])
    first = next(iter(frag.values()))
    first.setExpanded(True)   # a fragment's files are listed when it is expanded
    files = _rows(first)
    assert files["a0.tdb"].text(1) == "attribute 'soma_data' data"
    assert win.diag.model.rowCount() == 0  # verify walked every member: nothing found
    node = data.data(0, Qt.UserRole)
    assert node.path() == "pbmc68k/ms/RNA/X/data"


def test_soma_sparse_chunk_shows_its_coordinates_in_the_cells_pane(qtbot, win):
    """The chunk of a member array (ms/RNA/X/data, sparse) shows each cell's coordinates
    (soma_dim_0, soma_dim_1) beside its value, as a sparse array opened alone does (the
    chunk was located in the experiment's model, a group's: no field, no coordinates);
    each (coordinates, value) is tiledb-py's."""
    import numpy as np
    import tiledb

    with qtbot.waitSignal(win.loader.loaded, timeout=WAIT_MS):
        win.open_path(SOMA)
    node = win.session.document.root
    for part in ("ms", "RNA", "X", "data", "__fragments"):
        node.ensure_built()
        node = node[part]
    frag = sorted(c.name for c in node.iter_children())[0]
    chunk = node[frag]["a0.tdb"]["Tile 1"]["Chunk 1"]
    win.select_node(chunk)
    panel = win.pipeline
    qtbot.waitUntil(lambda: panel.cells.table is not None, timeout=WAIT_MS)
    table = panel.cells.table
    assert [c.name for c in table.columns[:3]] == ["soma_dim_0", "soma_dim_1", "FLOAT32"]
    with tiledb.open(os.path.join(SOMA, "ms", "RNA", "X", "data")) as A:
        q = A.query(coords=True)[:]
    want = {(int(i), int(j)): v for i, j, v in zip(q["soma_dim_0"], q["soma_dim_1"],
                                                  q["soma_data"])}
    got = {(table.coords.value(r, 0), table.coords.value(r, 1)): table.arr[r]
           for r in range(table.row_count())}
    assert table.row_count() == len(q["soma_data"]) == len(got) > 100   # one tile: all cells
    assert all(np.float32(want[ij]) == np.float32(v) for ij, v in got.items())
    first = [panel.cells.data(panel.cells.index(0, k)) for k in range(2)]
    assert first == [str(table.coords.value(0, 0)), str(table.coords.value(0, 1))]
