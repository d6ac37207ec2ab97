"""The window's garbage-collector policy (issue 28 item 2, `explorer/gcpolicy.py`; pytest-qt
offscreen, an array tiledb-py writes): after a full collection the survivors (the
document's nodes) are frozen, so the next full collection does not walk them again (it took
410-530 ms of the GUI thread on a 1 000-fragment array: DESIGN.md has the figures). No
collection in a turn of the user's walks everything again: a closed document's frozen
garbage, and every RECLAIM_EVERY frozen collections', is reclaimed (unfrozen and
collected) once the user has paused; a key press meanwhile puts it off."""
from __future__ import annotations

import gc
import os
import weakref

os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")

import numpy as np  # noqa: E402
import pytest  # noqa: E402
import tiledb  # noqa: E402

import arrayscope.explorer.qtfix  # noqa: E402,F401  (before any Qt call)
from arrayscope.explorer.gcpolicy import RECLAIM_EVERY  # noqa: E402
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
    w.gc_idle.timer.setInterval(IDLE_MS)
    others = [cb for cb in gc.callbacks
              if isinstance(getattr(cb, "__self__", None), GcPolicy) and cb.__self__ is not w.gc_policy]
    for cb in others:
        gc.callbacks.remove(cb)
    yield w
    gc.callbacks.extend(others)


IDLE_MS = 300   # the user's pause, short for the test


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


def test_document_frozen_after_a_full_collection_and_reclaimed_once_closed(qtbot, win, array):
    assert win.open_path(array, sync=True)
    root = win.session.document.root
    for frag in root["__fragments"].iter_children():
        frag.ensure_built()
    nodes = _nodes(root)
    assert len(nodes) > 50
    cycle = _Cycle()                                # garbage-to-be, alive at the freeze
    policy, idle = win.gc_policy, win.gc_idle
    before = policy.frozen
    gc.collect()
    assert policy.frozen == before + 1
    assert gc.get_freeze_count() >= len(nodes)     # the document's nodes: not walked again
    # a full collection now walks far fewer objects than are alive
    assert len(gc.get_objects(generation=2)) < gc.get_freeze_count()
    gone = weakref.ref(cycle)
    doc = weakref.ref(win.session.document)
    del cycle, nodes, root, frag
    gc.collect()
    assert gone() is not None                       # frozen: not walked, not freed yet
    reclaims = policy.reclaims
    win.close_document()
    assert idle.pending and gc.get_freeze_count() > 0   # not in the closing turn
    gc.collect()
    assert gone() is not None and doc() is not None
    qtbot.waitUntil(lambda: policy.reclaims == reclaims + 1, timeout=10 * IDLE_MS + 5000)
    assert gone() is None and doc() is None         # the frozen garbage is collected
    assert not idle.pending and gc.get_freeze_count() > 0   # the survivors frozen again


def test_a_key_press_puts_the_reclaim_off(qtbot, win, array):
    from PySide6.QtCore import Qt

    assert win.open_path(array, sync=True)
    policy, idle = win.gc_policy, win.gc_idle
    reclaims = policy.reclaims
    win.close_document()
    assert idle.pending
    for _ in range(3):
        idle.timer.stop()                            # (as if the pause were nearly over)
        qtbot.keyClick(win, Qt.Key.Key_Shift)        # the user types: the wait starts again
        assert idle.pending and idle.timer.remainingTime() > IDLE_MS // 2
        assert policy.reclaims == reclaims
    qtbot.waitUntil(lambda: policy.reclaims == reclaims + 1, timeout=10 * IDLE_MS + 5000)


def test_collections_never_walk_everything_while_the_user_works(qtbot, win):
    """The old policy unfroze at every eighth full collection: the next walked the whole
    heap (450 ms in a user's turn on 1 000 fragments). Now the survivors stay frozen and a
    reclaim waits for the user's pause."""
    policy, idle = win.gc_policy, win.gc_idle
    reclaims = policy.reclaims
    for _ in range(2 * RECLAIM_EVERY + 1):
        gc.collect()
        assert gc.get_freeze_count() > 0            # never unfrozen by a collection
    assert policy.reclaims == reclaims
    idle.check()                                     # (its timer's call)
    assert idle.pending
    qtbot.waitUntil(lambda: policy.reclaims == reclaims + 1, timeout=10 * IDLE_MS + 5000)
    assert policy.since_reclaim == 0 and gc.get_freeze_count() > 0


def test_a_window_destroyed_inside_a_collection_unfreezes_at_its_stop():
    """A window's C++ object can be destroyed by a collection (its wrapper was garbage):
    unfreezing there would splice lists the collector walks (the suite's workers crashed at
    exit). The policy waits for the collection's stop, then unfreezes and leaves."""
    from arrayscope.explorer.gcpolicy import GcPolicy

    policy = GcPolicy()
    gc.callbacks.append(policy.collected)
    try:
        gc.freeze()
        policy.collected("start", {"generation": 2})
        policy.retire()                            # destroyed mid-collection
        assert policy.retired and gc.get_freeze_count() > 0
        assert policy.collected in gc.callbacks
        policy.collected("stop", {"generation": 2})
        assert gc.get_freeze_count() == 0
        assert policy.collected not in gc.callbacks
        assert policy.collections == 0             # nothing frozen again by that stop
    finally:
        if policy.collected in gc.callbacks:
            gc.callbacks.remove(policy.collected)
        gc.unfreeze()
