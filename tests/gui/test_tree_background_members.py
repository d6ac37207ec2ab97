"""The structure tree builds a TileDB group member (a whole array or group to open) on a
worker thread when its row is expanded: the expansion returns at once, the rows come when
the member is built (pytest-qt, offscreen; tests/data/soma written by tiledbsoma 2.3)."""
from __future__ import annotations

import os
import threading

os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")

from PySide6.QtWidgets import QTreeView  # noqa: E402

import arrayscope.explorer.qtfix  # noqa: E402,F401  (before any Qt call)
from arrayscope import formats  # noqa: E402
from arrayscope.explorer.treemodel import NodeTreeModel  # noqa: E402
from arrayscope.formats.tiledb.parse import group as group_mod  # noqa: E402
from tests.support.paths import DATA  # noqa: E402
from tests.support.waits import WAIT_MS

SOMA = os.path.join(DATA, "soma", "pbmc68k")


def _child(model, parent, name):
    for r in range(model.rowCount(parent)):
        idx = model.index(r, 0, parent)
        if model.node(idx).name == name:
            return idx
    raise AssertionError(f"no row {name!r}")


def _names(model, parent):
    return {model.node(model.index(r, 0, parent)).name for r in range(model.rowCount(parent))}


def _tree(qtbot):
    doc = formats.open(SOMA, lazy=True)
    model = NodeTreeModel(doc.root)
    view = QTreeView()
    view.setModel(model)
    qtbot.addWidget(view)
    top = model.index(0, 0)
    model.ensure_fetched(top)
    return doc, model, view, top


def test_expanding_a_member_returns_before_it_is_built(qtbot, monkeypatch):
    doc, model, view, top = _tree(qtbot)
    ms = _child(model, top, "ms")
    assert model.node(ms).pending
    gate, started, where = threading.Event(), threading.Event(), []
    real = group_mod.open_group_dir

    def held(*a, **k):   # the member's open waits until the test lets it go
        where.append(threading.current_thread())
        started.set()
        assert gate.wait(60)
        return real(*a, **k)
    monkeypatch.setattr(group_mod, "open_group_dir", held)
    view.expand(ms)
    model.fetchMore(ms)   # what the view asks on expansion (again: starts nothing twice)
    # back on the GUI thread while the member is still being opened elsewhere
    assert started.wait(60)
    assert where[0] is not threading.main_thread()
    assert model.rowCount(ms) == 0 and model.building == 1 and model.node(ms).pending
    gate.set()
    qtbot.waitUntil(lambda: model.rowCount(ms) > 0, timeout=WAIT_MS)
    assert "RNA" in _names(model, ms)
    assert model.building == 0 and len(where) == 1 and view.isExpanded(ms)
    rna = _child(model, ms, "RNA")
    assert model.data(rna.siblingAtColumn(1)).startswith("SOMAMeasurement · measurement")
    doc.close()


def test_going_down_the_tree_by_code_builds_at_once(qtbot):
    """A selection or search (`ensure_fetched`, `index_for_node`) needs the rows now."""
    doc, model, _view, top = _tree(qtbot)
    obs = _child(model, top, "obs")
    model.ensure_fetched(obs)
    assert model.building == 0
    assert {"__schema", "__fragments"} <= _names(model, obs)
    node = model.node(obs)
    schema = next(c for c in node.children if c.name == "__schema")
    idx = model.index_for_node(schema)
    assert idx.isValid() and model.node(idx) is schema
    doc.close()


def test_a_new_tree_drops_a_build_of_the_old_one(qtbot, monkeypatch):
    doc, model, _view, top = _tree(qtbot)
    ms = _child(model, top, "ms")
    other = formats.open(SOMA, lazy=True)   # (before its group opener is held below)
    gate = threading.Event()
    real = group_mod.open_group_dir

    def held(*a, **k):
        assert gate.wait(60)
        return real(*a, **k)
    monkeypatch.setattr(group_mod, "open_group_dir", held)
    old_ms = model.node(ms)
    model.fetchMore(ms)
    assert model.building == 1
    model.set_root(other.root)
    assert model.building == 0
    gate.set()
    assert model._pool is not None and model._pool.waitForDone(60000)
    qtbot.wait(50)   # the finished build's signal is delivered, and adds nothing
    assert not old_ms.pending   # the old member was built, off the GUI thread
    top = model.index(0, 0)
    model.ensure_fetched(top)
    new_ms = _child(model, top, "ms")
    assert model.node(new_ms) is not old_ms and model.node(new_ms).pending
    assert model.rowCount(new_ms) == 0
    doc.close()
    other.close()


def test_array_dock_opens_a_member_off_the_gui_thread(qtbot, monkeypatch):
    """The Array dock lists a group's members; expanding one opens it on a worker thread
    ("opening…" meanwhile) and lists its entries when it is built."""
    from PySide6.QtCore import Qt

    from arrayscope.explorer.arraybrowser import ArrayBrowser

    doc = formats.open(SOMA, lazy=True)
    browser = ArrayBrowser()
    qtbot.addWidget(browser)
    browser.set_root(doc)
    [ms] = browser.findItems("ms", Qt.MatchFlag.MatchExactly | Qt.MatchFlag.MatchRecursive)
    gate, started, where = threading.Event(), threading.Event(), []
    real = group_mod.open_group_dir

    def held(*a, **k):
        where.append(threading.current_thread())
        started.set()
        assert gate.wait(60)
        return real(*a, **k)
    monkeypatch.setattr(group_mod, "open_group_dir", held)
    ms.setExpanded(True)
    assert started.wait(60)
    assert where[0] is not threading.main_thread()
    assert ms.childCount() == 0 and ms.text(1) == "opening…"
    gate.set()
    qtbot.waitUntil(lambda: ms.childCount() > 0, timeout=WAIT_MS)
    assert "RNA" in {ms.child(i).text(0) for i in range(ms.childCount())}
    assert not ms.text(1).startswith("opening") and len(where) == 1
    doc.close()
