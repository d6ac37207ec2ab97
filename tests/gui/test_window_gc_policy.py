"""The window's garbage-collector policy (issue 28 item 2, `explorer/gcpolicy.py`; pytest-qt
offscreen, an array tiledb-py writes): after a full collection the survivors (the
document's nodes) are frozen, so the next full collection does not walk them again (it took
up to ~93 ms of the GUI thread on a 1 000-fragment array: DESIGN.md has the figures); a
closed document is unfrozen and its garbage collected; every FULL_WALK_EVERY-th
full collection walks everything."""
from __future__ import annotations

import gc
import os
import weakref

os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")

import numpy as np  # noqa: E402
import pytest  # noqa: E402
import tiledb  # noqa: E402

import arrayscope.explorer.qtfix  # noqa: E402,F401  (before any Qt call)
from arrayscope.explorer.gcpolicy import FULL_WALK_EVERY  # noqa: E402
from tests.support.gui_helpers import open_window  # noqa: E402


@pytest.fixture(scope="module")
def array(tmp_path_factory):
    path = str(tmp_path_factory.mktemp("gcpolicy") / "arr")
    dom = tiledb.Domain(tiledb.Dim("d", domain=(0, 99), tile=10, dtype=np.int64))
    tiledb.Array.create(path, tiledb.ArraySchema(domain=dom, sparse=False,
                                                 attrs=[tiledb.Attr("a", dtype=np.int64)]))
    for i in range(10):
        with tiledb.open(path, "w", timestamp=i + 1) as A:
            A[i * 10:(i + 1) * 10] = np.arange(10, dtype=np.int64) + i
    return path


@pytest.fixture
def win(qtbot, tmp_path):
    """A window whose policy is the only one in the process during the test (windows of
    earlier tests may not be deleted yet: their callbacks would freeze too)."""
    from arrayscope.explorer.gcpolicy import GcPolicy

    w = open_window(qtbot, tmp_path)
    others = [cb for cb in gc.callbacks
              if isinstance(getattr(cb, "__self__", None), GcPolicy) and cb.__self__ is not w.gc_policy]
    for cb in others:
        gc.callbacks.remove(cb)
    yield w
    gc.callbacks.extend(others)


def _nodes(root):
    out, todo = [], [root]
    while todo:
        n = todo.pop()
        out.append(n)
        todo.extend(n.iter_children())
    return out


class _Cycle:
    def __init__(self) -> None:
        self.me = self


def test_document_frozen_after_a_full_collection_and_unfrozen_when_closed(win, array):
    assert win.open_path(array, sync=True)
    root = win.session.document.root
    for frag in root["__fragments"].iter_children():
        frag.ensure_built()
    nodes = _nodes(root)
    assert len(nodes) > 50
    cycle = _Cycle()                                # garbage-to-be, alive at the freeze
    policy = win.gc_policy
    before = policy.frozen
    gc.collect()
    assert policy.frozen == before + 1
    assert gc.get_freeze_count() >= len(nodes)     # the document's nodes: not walked again
    # a full collection now walks far fewer objects than are alive
    assert len(gc.get_objects(generation=2)) < gc.get_freeze_count()
    gone = weakref.ref(cycle)
    del cycle, nodes, root, frag
    gc.collect()
    assert gone() is not None                       # frozen: not walked, not freed yet
    win.close_document()
    assert gc.get_freeze_count() == 0               # unfrozen with the document
    gc.collect()
    assert gone() is None                           # the frozen garbage is collected


def test_every_eighth_full_collection_walks_everything(win):
    policy = win.gc_policy
    walks = policy.full_walks
    for _ in range(FULL_WALK_EVERY):
        gc.collect()
    assert policy.full_walks == walks + 1
    assert policy.collections % FULL_WALK_EVERY == 0 and gc.get_freeze_count() == 0
    gc.collect()                                     # and the one after freezes again
    assert gc.get_freeze_count() > 0
