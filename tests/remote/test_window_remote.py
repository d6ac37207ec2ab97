"""The window opens a dataset at a URL like a local path; its status bar shows the
requests and bytes that dataset cost (what `--stats` prints)."""
from __future__ import annotations

import fsspec

from tests.support import tiledb_arrays
from tests.support.gui_helpers import open_window
from tests.support.waits import WAIT_MS


def test_window_opens_a_url_and_shows_transfer(qtbot, tmp_path, tiledb_array):
    fs = fsspec.filesystem("memory")
    url = f"memory://window-{tmp_path.name}/dense_1d"
    fs.put(tiledb_array("dense_1d"), url[len("memory://"):], recursive=True)
    w = open_window(qtbot, tmp_path)
    assert w.open_path(url, sync=True)
    doc = w.session.document
    assert doc.path == url and doc.format == "tiledb"
    w.st_transfer.refresh()
    assert w.st_transfer.text() == doc.fs.stats.line()
    requests = doc.fs.stats.requests
    assert requests == 3            # the listing, the schema, the fragment metadata
    # showing a tile reads it: the count grows
    [data] = [n for n in doc.root.walk() if n.name == "a0.tdb"]
    w.select_node(data.child(0))
    w.st_transfer.refresh()
    assert doc.fs.stats.requests > requests and w.st_transfer.text() == doc.fs.stats.line()
    fs.rm(url[len("memory://"):], recursive=True)


def test_local_dataset_shows_no_transfer(qtbot, tmp_path):
    w = open_window(qtbot, tmp_path)
    assert w.open_path(tiledb_arrays.build("dense_1d", str(tmp_path)), sync=True)
    w.st_transfer.refresh()
    assert w.st_transfer.text() == "" and not w.st_transfer.isVisible()


def test_window_loads_a_url_in_the_background(qtbot, tmp_path, tiledb_array):
    fs = fsspec.filesystem("memory")
    url = f"memory://bg-{tmp_path.name}/multi_fragment"
    fs.put(tiledb_array("multi_fragment"), url[len("memory://"):], recursive=True)
    w = open_window(qtbot, tmp_path)
    with qtbot.waitSignal(w.loader.loaded, timeout=WAIT_MS):
        w.open_path(url)
    qtbot.waitUntil(lambda: w.session is not None and w.session.document.path == url, timeout=WAIT_MS)
    assert w.session.document.format == "tiledb" and len(w.session.document.model.fragments) > 1
    fs.rm(url[len("memory://"):], recursive=True)
