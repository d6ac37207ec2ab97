"""Bookmarks (pytest-qt, offscreen): added from the hex selection, listed, painted in the hex
view, renamed, saved per dataset in the user's settings and restored on reopen; never
written beside the opened file."""
from __future__ import annotations

import os
import shutil

os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")

from PySide6.QtCore import QSettings  # noqa: E402

from tests.support.gui_helpers import open_window  # noqa: E402
from tests.support.paths import SAMPLES  # noqa: E402


def _listing(path: str):
    return sorted(os.path.relpath(os.path.join(d, f), path)
                  for d, _ds, fs in os.walk(path) for f in fs)


def test_bookmarks_saved_and_restored(qtbot, tmp_path):
    path = str(tmp_path / "dense")
    shutil.copytree(os.path.join(SAMPLES, "tiledb_dense"), path)
    before = _listing(path)
    win = open_window(qtbot, tmp_path)
    assert win.open_path(path, sync=True)
    panel = win.bookmarks
    view = win.tabs.current_view()
    src = view.source
    view.select_range(8, 24)
    bm = panel.add_current(name="header words")
    assert bm is not None and (bm.source, bm.start, bm.end) == (src.name, 8, 24)
    assert panel.table.rowCount() == 1 and panel.table.item(0, 0).text() == "header words"
    assert view.bookmarks == [(8, 24, bm.colour)]
    assert win.d_bookmarks.isVisibleTo(win)
    # a second one on another file, then a rename in the list
    frag = next(win.session.document.root.find("__fragments").iter_children())
    a1 = frag.find("a1.tdb")
    win.select_node(a1)
    v2 = win.tabs.current_view()
    v2.select_range(100, 164)
    bm2 = panel.add_current(name="tile 1")
    assert bm2.colour != bm.colour
    panel.table.item(1, 0).setText("first tile")
    assert panel.store.items[1].name == "first tile"
    # going to a bookmark selects its bytes in its file's tab
    panel.go(0)
    assert win.tabs.current_view() is view and view.selection() == (8, 24)
    win.close()
    # the settings hold them; the dataset folder is untouched
    assert _listing(path) == before
    win.settings.sync()
    saved = QSettings(str(tmp_path / "settings.ini"), QSettings.Format.IniFormat)
    assert any(k.startswith("bookmarks/") for k in saved.allKeys())
    win2 = open_window(qtbot, tmp_path)       # a new window on the same settings file
    assert win2.open_path(path, sync=True)
    items = win2.bookmarks.store.items
    assert [(b.name, b.source, b.start, b.end) for b in items] == [
        ("header words", src.name, 8, 24), ("first tile", a1.source.name, 100, 164)]
    assert win2.d_bookmarks.isVisibleTo(win2)
    win2.bookmarks.table.selectRow(0)
    win2.bookmarks.remove_selected()
    assert [b.name for b in win2.bookmarks.store.items] == ["first tile"]
    # another dataset has its own (none)
    assert win2.open_path(os.path.join(SAMPLES, "tiledb_sparse"), sync=True)
    assert win2.bookmarks.store.items == []
    assert win2.bookmarks.table.rowCount() == 0
