"""The Array dock shows the array as a whole (issue 13: it repeated the Structure tree's file
list): schema, fields with types and filters, fragments in read order with time, cell count
and domain, on arrays written by tiledb-py (pytest-qt, offscreen)."""
from __future__ import annotations

import os

os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")

import pytest  # noqa: E402
import tiledb  # noqa: E402

from arrayscope.formats.tiledb.window.entries import ms_text  # noqa: E402
from tests.support import tiledb_arrays  # noqa: E402
from tests.support.gui_helpers import open_window  # noqa: E402
from tests.support.paths import SAMPLES  # noqa: E402


@pytest.fixture(scope="module")
def arrays(tmp_path_factory):
    return str(tmp_path_factory.mktemp("array_dock"))


def _rows(item):
    return {item.child(i).text(0): item.child(i) for i in range(item.childCount())}


def _texts(item):
    out = [item.text(0)]
    for i in range(item.childCount()):
        out += _texts(item.child(i))
    return out


def test_dense_array_summary(qtbot, tmp_path):
    path = os.path.join(SAMPLES, "tiledb_dense")
    win = open_window(qtbot, tmp_path)
    assert win.open_path(path, sync=True)
    b = win.browser
    top = b.topLevelItem(0)
    assert b.headerItem().text(0) == "Array"
    with tiledb.open(path) as A:
        schema = A.schema
        frags = tiledb.array_fragments(path)
    nattr = schema.nattr
    assert top.text(1).startswith(f"TileDB dense array: {schema.ndim}-D, {nattr} attributes, "
                                  f"{len(frags)} fragments")
    rows = _rows(top)
    attrs = _rows(_rows(rows["Schema"])["Attributes"])
    assert sorted(attrs) == sorted(schema.attr(i).name for i in range(nattr))
    assert attrs["counts"].text(1).startswith("INT64 — BYTESHUFFLE → ZSTD(5)")
    dims = _rows(_rows(rows["Schema"])["Dimensions"])
    assert sorted(dims) == sorted(schema.domain.dim(i).name for i in range(schema.ndim))
    # fragments in read order, each with its time range and its cells (tiledb-py's view)
    fr = rows["Fragments"]
    fr.setExpanded(True)   # its rows are made when expanded
    assert fr.childCount() == len(frags)
    for i, f in enumerate(sorted(frags, key=lambda f: f.timestamp_range)):
        it = fr.child(i)
        t1, t2 = f.timestamp_range
        assert it.text(0) == (ms_text(t1) if t1 == t2 else f"{ms_text(t1)} → {ms_text(t2)}")
        ned = f.nonempty_domain
        cells = 1
        for lo, hi in ned:
            cells *= int(hi) - int(lo) + 1
        assert it.text(1).startswith(f"{cells:,} cells, dense, domain ")
        assert it.data(0, 0x0100).name == os.path.basename(f.uri.rstrip("/"))
    # not the Structure tree's file list: no data file is listed
    assert not [t for t in _texts(top) if t.endswith(".tdb")]
    # a node inside a fragment selects its fragment's row
    frag_node = fr.child(1).data(0, 0x0100)
    win.select_node(frag_node["a0.tdb"])
    assert b.currentItem() is fr.child(1)


def test_sparse_fragment_cells(qtbot, tmp_path, arrays):
    path = tiledb_arrays.build("sparse_2d", arrays)
    win = open_window(qtbot, tmp_path)
    assert win.open_path(path, sync=True)
    with tiledb.open(path) as A:
        n = len(A.query(coords=True)[:]["v"])
    top = win.browser.topLevelItem(0)
    assert "sparse" in top.text(1)
    fr = _rows(top)["Fragments"]
    fr.setExpanded(True)
    frag = fr.child(0)
    assert frag.text(1).startswith(f"{n:,} cells, sparse, domain ")
    assert "capacity 4" in _rows(top)["Schema"].text(1)
