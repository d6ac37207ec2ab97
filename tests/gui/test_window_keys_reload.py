"""Keys and reload (pytest-qt, offscreen): an encrypted array opened without its key says
so once (one Diagnostics row, one bar with Set Key…), setting the key reloads and decodes;
F5 keeps the selected node, the tabs with their selections and the expanded nodes."""
from __future__ import annotations

import os
import shutil

os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")

from PySide6.QtGui import QKeySequence  # noqa: E402

from arrayscope.explorer.keyflow import GROUP_PATH  # noqa: E402
from arrayscope.formats.core.context import KEY_HINT, load_key  # noqa: E402
from tests.support.gui_helpers import open_window  # noqa: E402
from tests.support.paths import SAMPLES  # noqa: E402
from tests.support.waits import WAIT_MS


def _reload_done(qtbot, win):
    qtbot.waitUntil(lambda: win.view_keeper.pending is None and not win.loader.busy, timeout=WAIT_MS)


def test_no_key_one_message_then_set_key(qtbot, tmp_path):
    path = str(tmp_path / "enc")
    shutil.copytree(os.path.join(SAMPLES, "tiledb_encrypted"), path)   # without its .key
    win = open_window(qtbot, tmp_path)
    with qtbot.waitSignal(win.verifier.done, timeout=WAIT_MS):
        assert win.open_path(path, sync=True)
    rows = win.diag.model.rows
    keyed = [r for r in rows if r.path == GROUP_PATH]
    assert len(keyed) == 1 and "Set Key" in keyed[0].message
    assert not [r for r in rows if KEY_HINT in r.message]      # no per-chunk flood
    assert win.key_flow.bar.isVisibleTo(win)
    assert "cannot be decoded" in win.key_flow.bar.text.text()
    labels = [a.text() for a in win.menuBar().actions()[0].menu().actions()]
    assert "Set &Key…" in labels and "Encryption &Key File…" not in labels
    key = load_key(os.path.join(SAMPLES, "tiledb_encrypted.key"))
    with qtbot.waitSignal(win.verifier.done, timeout=WAIT_MS):
        win.key_flow.set_key(key)
        _reload_done(qtbot, win)
    assert win.key == key
    assert not win.key_flow.bar.isVisibleTo(win)
    assert not [r for r in win.diag.model.rows if r.path == GROUP_PATH or KEY_HINT in r.message]
    assert not [n for n in win.session.document.diagnostics() if KEY_HINT in (n.message or "")]


def test_reload_keeps_selection_tabs_and_expanded(qtbot, tmp_path):
    win = open_window(qtbot, tmp_path)
    assert win.open_path(os.path.join(SAMPLES, "tiledb_dense"), sync=True)
    root = win.session.document.root
    frags = list(root.find("__fragments").iter_children())
    a1 = frags[1].find("a1.tdb")
    win.select_node(frags[0].find("a0.tdb"))
    win.tabs.current_view().select_range(10, 30)
    deep = win.session.node_at(a1.source, 40)
    win.select_node(deep)
    win.tree.view.expand(win.tree.model.index_for_node(frags[0]))
    before = win.view_keeper.capture()
    assert frags[0].path() in before.expanded
    old_doc = win.session.document
    reload_action = next(a for a in win.menuBar().actions()[0].menu().actions()
                         if a.shortcut() == QKeySequence(QKeySequence.StandardKey.Refresh))
    reload_action.trigger()
    _reload_done(qtbot, win)
    assert win.session.document is not old_doc                     # really reopened
    after = win.view_keeper.capture()
    assert win.current_node.path() == deep.path()
    assert [t.source for t in after.tabs] == [t.source for t in before.tabs]
    assert after.current_tab == before.current_tab == a1.source.name
    sel = {t.source: t.selection for t in after.tabs}
    assert sel[frags[0].find("a0.tdb").source.name] == (10, 30)
    assert set(before.expanded) <= set(after.expanded)
