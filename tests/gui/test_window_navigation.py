"""Back / forward through the nodes shown (pytest-qt, offscreen), on the bundled sample:
the shell's Edit ▸ Back / Forward (Alt+Left / Alt+Right) over the application state."""
from __future__ import annotations

import os

os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")

from PySide6.QtCore import Qt  # noqa: E402

from tests.support.gui_helpers import open_window  # noqa: E402
from tests.support.paths import SAMPLES  # noqa: E402
from tests.support.waits import WAIT_MS


def _action(win, text):
    for a in win.menuBar().actions():
        m = a.menu()
        if m is not None:
            for x in m.actions():
                if x.text() == text:
                    return x
    raise AssertionError(text)


def test_back_and_forward_keys(qtbot, tmp_path):
    win = open_window(qtbot, tmp_path)
    assert win.open_path(os.path.join(SAMPLES, "tiledb_dense"), sync=True)
    first = win.current_node
    root = win.session.document.root
    a = root.find("__schema")
    frag = next(root.find("__fragments").iter_children())
    b, c = frag.find("a0.tdb"), frag.find("a1.tdb")
    for n in (a, b, c):
        win.tree.select_node(n, emit=True)        # as a click in the tree does
    assert win.current_node is c
    win.activateWindow()
    qtbot.waitUntil(win.isActiveWindow, timeout=WAIT_MS)
    qtbot.keyClick(win.focusWidget() or win, Qt.Key.Key_Left, Qt.KeyboardModifier.AltModifier)
    assert win.current_node is b
    assert win.tree.current_node() is b           # the tree follows
    _action(win, "&Back").trigger()
    assert win.current_node is a
    _action(win, "&Back").trigger()
    assert win.current_node is first
    qtbot.keyClick(win.focusWidget() or win, Qt.Key.Key_Right, Qt.KeyboardModifier.AltModifier)
    assert win.current_node is a


def test_go_to_offset_is_a_step_of_the_history(qtbot, tmp_path):
    """Go to Offset is one step: Back returns to the node selected before it (a tile, not
    the field under the hex cursor) and Forward goes to it again, the hex view's focus
    notwithstanding (issue 28 item 7)."""
    win = open_window(qtbot, tmp_path)
    assert win.open_path(os.path.join(SAMPLES, "tiledb_dense"), sync=True)
    root = win.session.document.root
    frag = next(root.find("__fragments").iter_children())
    tile = frag.find("a1.tdb").child(0)
    assert tile.kind == "tile" and tile.child_count() > 1
    win.tree.select_node(tile, emit=True)
    assert win.current_node is tile
    target = tile.offset + 20
    win.goto(target)                         # what Edit ▸ Go to Offset… does on OK
    went = win.current_node
    assert went is not tile and went.offset <= target < went.end
    _action(win, "&Back").trigger()
    qtbot.wait(400)                          # past the hex cursor's sync delay
    assert win.current_node is tile
    _action(win, "&Forward").trigger()
    qtbot.wait(400)
    assert win.current_node is went
    _action(win, "&Back").trigger()
    qtbot.wait(400)
    assert win.current_node is tile
