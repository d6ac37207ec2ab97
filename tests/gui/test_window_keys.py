"""One binding per key (pytest-qt, offscreen): every QAction and window-wide QShortcut of
the main window, its features installed, has a key sequence no other has (Qt fires neither
of two: "Ambiguous shortcut overload"), and Help ▸ Keyboard Shortcuts lists every one."""
from __future__ import annotations

import os
from collections import defaultdict

os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")

from arrayscope.explorer.menus import bindings, shortcuts_text  # noqa: E402
from tests.support.gui_helpers import open_window  # noqa: E402


def test_no_key_is_bound_twice_and_f1_lists_every_key(qtbot, tmp_path):
    from tests.support.paths import SAMPLES

    win = open_window(qtbot, tmp_path)
    assert win.open_path(os.path.join(SAMPLES, "tiledb_dense"), sync=True)
    bound = bindings(win)
    keys = [k for k, _what, _scope in bound]
    # the keys the issue named are there: the pipeline's stage keys and Find Node
    for k in ("Ctrl+[", "Ctrl+]", "Ctrl+Shift+P", "Ctrl+Shift+F", "Ctrl+G", "Ctrl+K"):
        assert k in keys, (k, keys)
    by_key = defaultdict(list)
    for k, what, scope in bound:
        by_key[(scope, k)].append(what)
    twice = {k: whats for k, whats in by_key.items() if len(whats) > 1}
    assert twice == {}
    text = shortcuts_text(win)
    for k, what, _scope in bound:
        assert f"{k}  {what}" in text
    assert "(no description)" not in text

