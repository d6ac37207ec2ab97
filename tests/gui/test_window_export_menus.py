"""Export and context menus (pytest-qt, offscreen): the exported file holds exactly the
selected bytes / the node's bytes / a derived source's bytes; an opened file is never
overwritten; Ctrl+C in the tree copies the row; node and tab menus offer their actions."""
from __future__ import annotations

import os
import shutil

os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")

from PySide6.QtCore import Qt  # noqa: E402
from PySide6.QtGui import QGuiApplication  # noqa: E402

from tests.support.gui_helpers import open_window  # noqa: E402
from tests.support.paths import SAMPLES  # noqa: E402
from tests.support.waits import WAIT_MS


def _open_dense(qtbot, tmp_path):
    path = str(tmp_path / "dense")
    shutil.copytree(os.path.join(SAMPLES, "tiledb_dense"), path)
    win = open_window(qtbot, tmp_path)
    assert win.open_path(path, sync=True)
    return win, path


def test_export_selection_node_and_protection(qtbot, tmp_path):
    win, path = _open_dense(qtbot, tmp_path)
    cm = win.context_menus
    view = win.tabs.current_view()
    view.select_range(3, 40)
    out = tmp_path / "sel.bin"
    assert cm.export_selection(str(out)) == 37
    assert out.read_bytes() == view.source.read(3, 37)
    # a node's bytes
    frag = next(win.session.document.root.find("__fragments").iter_children())
    a1 = frag.find("a1.tdb")
    node = win.session.node_at(a1.source, a1.size - 20)
    while node.kind != "chunk":
        node = node.parent
    out2 = tmp_path / "chunk.bin"
    assert cm.export(node.source, node.offset, node.end, node.name, str(out2)) == node.size
    with open(node.source.path, "rb") as f:
        f.seek(node.offset)
        assert out2.read_bytes() == f.read(node.size)
    # never onto a file of the open dataset
    victim = node.source.path
    before = open(victim, "rb").read()
    assert cm.export(node.source, 0, 10, "x", victim) == 0
    assert open(victim, "rb").read() == before
    assert "does not write" in win.st_value.text()


def test_ctrl_c_in_tree_and_menus(qtbot, tmp_path):
    win, _path = _open_dense(qtbot, tmp_path)
    frag = next(win.session.document.root.find("__fragments").iter_children())
    node = frag.find("a0.tdb")
    win.select_node(node)
    win.tree.view.setFocus()
    win.activateWindow()
    qtbot.waitUntil(win.isActiveWindow, timeout=WAIT_MS)
    QGuiApplication.clipboard().clear()
    qtbot.keyClick(win.tree.view, Qt.Key.Key_C, Qt.KeyboardModifier.ControlModifier)
    text = QGuiApplication.clipboard().text()
    assert text.split("\t")[0] == "a0.tdb" and text.split("\t")[3] == "0x0"
    assert text.split("\t")[4] == str(node.size)
    # the node menu and the tab menu
    labels = [a.text() for a in win.context_menus.node_menu(node).actions() if a.text()]
    assert {"Copy row", "Copy path", "Bookmark node…", "Export node bytes…", "Select parent"} <= set(labels)
    win.select_node(frag.find("a1.tdb"))
    assert win.tabs.count() >= 2
    i = win.tabs.indexOf(win.tabs.current_view())
    tab_labels = [a.text() for a in win.context_menus.tab_actions(i).actions() if a.text()]
    assert {"Close", "Close other tabs", "Export all bytes…"} <= set(tab_labels)
    keep = win.tabs.current_view()
    win.context_menus.close_others(keep)
    assert win.tabs.views() == [keep]
    # a menu entry does what it says
    action = next(a for a in win.context_menus.node_menu(node).actions() if a.text() == "Copy path")
    action.trigger()
    assert QGuiApplication.clipboard().text() == node.path()
