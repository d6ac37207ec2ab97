"""Search across a dataset (issue 28 item 9), in the window (pytest-qt, offscreen), on a
TileDB group written by tiledb-py whose member array the tree has not opened: the search
runs in a worker process, finds a string in the member's stored bytes and the member's
node names, lists the hits as they come, and a click opens the member (off the GUI
thread) and selects the node holding the match."""
from __future__ import annotations

import os

os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")

import numpy as np  # noqa: E402
import tiledb  # noqa: E402

from arrayscope.explorer import datasetsearch as DS  # noqa: E402
from tests.support.gui_helpers import open_window  # noqa: E402
from tests.support.waits import WAIT_MS  # noqa: E402

NEEDLE = "needle-4217"


def _group(dest) -> str:
    """Group `g` with member array `labels`: 8 strings, unfiltered (stored as written)."""
    root = os.path.join(str(dest), "g")
    tiledb.Group.create(root)
    arr = os.path.join(root, "labels")
    dom = tiledb.Domain(tiledb.Dim("i", domain=(0, 7), tile=8, dtype=np.int64))
    tiledb.Array.create(arr, tiledb.ArraySchema(domain=dom, attrs=[
        tiledb.Attr("label", dtype=str, var=True)]))
    words = np.array([f"w{i}" for i in range(8)], dtype=object)
    words[5] = NEEDLE
    with tiledb.open(arr, "w", timestamp=1) as A:
        A[:] = {"label": words}
    with tiledb.Group(root, "w") as g:
        g.add("labels", name="labels", relative=True)
    with tiledb.open(arr) as A:   # what the library reads there
        assert A[5]["label"] == NEEDLE
    return root


def test_search_finds_bytes_in_an_unopened_member_and_leads_there(qtbot, tmp_path):
    g = _group(tmp_path)
    win = open_window(qtbot, tmp_path)
    assert win.open_path(g, sync=True)
    member = win.session.document.root.find("labels")
    assert member is not None and member.pending   # not opened by the window
    panel = win.dataset_search
    panel.edit.setText(NEEDLE)
    assert panel.start()
    qtbot.waitUntil(lambda: not panel.running, timeout=WAIT_MS)
    assert panel.worker.pid not in (0, os.getpid())        # searched in another process
    assert member.pending                                   # the window opened nothing
    hits = panel.model.hits
    found = [h for h in hits if h.what == DS.BYTES]
    assert len(found) == 1, hits
    [h] = found
    frag = os.listdir(os.path.join(g, "labels", "__fragments"))[0]
    assert h.node.startswith(f"g/labels/__fragments/{frag}/a0_var.tdb")
    assert h.source == f"labels/__fragments/{frag}/a0_var.tdb"
    with open(os.path.join(g, h.source), "rb") as f:
        assert f.read()[h.offset:h.offset + len(NEEDLE)] == NEEDLE.encode()
    # a name inside the member: its attribute's var data file is listed by name too
    assert any(h.what == DS.NAME and h.node.endswith("a0_var.tdb") for h in
               _search(qtbot, panel, "a0_var"))
    # a click opens the member and selects the node holding the match
    panel.edit.setText(NEEDLE)
    panel.start()
    qtbot.waitUntil(lambda: not panel.running, timeout=WAIT_MS)
    row = next(i for i, x in enumerate(panel.model.hits) if x.what == DS.BYTES)
    panel.view.clicked.emit(panel.model.index(row, 0))
    qtbot.waitUntil(lambda: win.current_node is not None and
                    win.current_node.path() == h.node, timeout=WAIT_MS)
    node = win.current_node
    assert not member.pending
    assert node.source.name == h.source and node.offset <= h.offset < node.end
    assert win.tree.current_node() is node


def _search(qtbot, panel, text):
    panel.edit.setText(text)
    assert panel.start()
    qtbot.waitUntil(lambda: not panel.running, timeout=WAIT_MS)
    return list(panel.model.hits)


def test_a_new_search_or_cancel_drops_the_answers_of_the_old_one(qtbot, tmp_path):
    g = _group(tmp_path)
    win = open_window(qtbot, tmp_path)
    assert win.open_path(g, sync=True)
    panel = win.dataset_search
    panel.edit.setText(NEEDLE)
    assert panel.start()
    panel.cancel()
    assert not panel.running and panel.worker.pid == 0   # the worker is gone with its work
    qtbot.wait(200)
    assert panel.model.hits == []
    assert [h.what for h in _search(qtbot, panel, NEEDLE)].count(DS.BYTES) == 1
    assert panel.worker.pid != 0
    win.close()     # the window's close ends the search's worker (quit waits for none)
    assert panel.worker.pid == 0


def test_values_of_files_parsed_on_the_way_are_searched():
    """A tiledbsoma-written experiment: its X member's dimension file is found by the
    dimension's name (its value once parsed; the fragment's files are listed unparsed)."""
    from tests.support.paths import DATA

    exp = os.path.join(DATA, "soma", "pbmc68k")
    with tiledb.open(os.path.join(exp, "ms", "RNA", "X", "data")) as A:
        dim = A.schema.domain.dim(1).name
    assert dim == "soma_dim_1"
    units = DS.run(DS.SearchTask(exp, None, None, dim))
    hits = units.hits + [h for u in units.units for h in DS.run(DS.SearchTask(exp, None, None, dim, u))]
    found = [h for h in hits if h.what == DS.VALUE and h.node.endswith("/d1.tdb")]
    x = [h for h in found if h.node.startswith("pbmc68k/ms/RNA/X/data/__fragments/")]
    assert len(x) == 1 and all(h.shown.startswith(f"{dim} ") for h in found)
