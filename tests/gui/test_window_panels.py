"""The window's panels follow the application state through one protocol (issue 9 item 6):
a throwaway panel registered by one line in `habits.FEATURES` receives the document, the
selection (with who asked, and history steps), the findings of verify and the close; the
window has no signals of its own for features to hook (pytest-qt, offscreen)."""
from __future__ import annotations

import os
import types

os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")

import arrayscope.explorer.qtfix  # noqa: E402,F401  (before any Qt call)
from arrayscope.explorer import habits  # noqa: E402
from arrayscope.explorer.state import DocumentChanged, FindingsAdded, SelectionChanged  # noqa: E402
from tests.support.gui_helpers import open_window  # noqa: E402
from tests.support.paths import SAMPLES  # noqa: E402
from tests.support.waits import WAIT_MS


class Throwaway:
    """A panel as a feature module would write one: it subscribes and records."""

    def __init__(self, window):
        self.events = []
        window.state.subscribe(self)

    def state_changed(self, state, event):
        doc = state.session.document if state.session is not None else None
        self.events.append((event, doc, state.current))


def test_a_panel_registered_by_one_line_receives_every_event(qtbot, tmp_path, monkeypatch):
    made = []
    feature = types.SimpleNamespace(install=lambda w: made.append(Throwaway(w)))
    monkeypatch.setattr(habits, "FEATURES", habits.FEATURES + (feature,))
    win = open_window(qtbot, tmp_path)
    (panel,) = made
    assert panel.events == []
    with qtbot.waitSignal(win.verifier.done, timeout=WAIT_MS):
        assert win.open_path(os.path.join(SAMPLES, "tiledb_dense"), sync=True)
    doc = win.session.document
    kinds = [type(e).__name__ for e, _d, _c in panel.events]
    assert kinds[0] == "DocumentChanged" and panel.events[0][1] is doc
    # the window's first selection, then verify's findings (a clean array: none)
    first = next(e for e, _d, _c in panel.events if isinstance(e, SelectionChanged))
    assert first.node is win.current_node
    found = [e for e, _d, _c in panel.events if isinstance(e, FindingsAdded)]
    assert len(found) == 1 and list(found[0].findings) == list(win.state.findings)
    # a selection from the tree, and a step back in the history
    frag = next(doc.root.find("__fragments").iter_children())
    start = win.current_node
    win.tree.nodeSelected.emit(frag)
    ev, _d, cur = panel.events[-1]
    assert isinstance(ev, SelectionChanged) and ev.node is frag and ev.origin == "tree"
    assert cur is frag
    win.go_back()
    ev, _d, cur = panel.events[-1]
    assert ev.origin == "history" and ev.node is start and cur is start
    win.close_document()
    ev, d, cur = panel.events[-1]
    assert isinstance(ev, DocumentChanged) and d is None and cur is None


def test_features_follow_the_state_not_window_signals():
    from arrayscope.explorer.mainwindow import MainWindow

    assert not hasattr(MainWindow, "documentChanged") and not hasattr(MainWindow, "nodeShown")
    here = os.path.dirname(habits.__file__)
    hooks = [f for f in os.listdir(here) if f.endswith(".py")
             and ("documentChanged" in open(os.path.join(here, f)).read()
                  or "nodeShown" in open(os.path.join(here, f)).read())]
    assert hooks == []
    # every feature module is registered in the one list, each with its install
    assert all(callable(getattr(m, "install", None)) for m in habits.FEATURES)
    assert len(set(habits.FEATURES)) == len(habits.FEATURES)
