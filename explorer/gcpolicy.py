"""The window's garbage-collector policy (the program owns its process; the engine, in
`formats/`, never sets one). A full collection walks every object alive: with a large
document's nodes (a 1 000-fragment array's tree, its verify findings) that is up to ~90 ms
of the GUI thread in one turn of the event loop, again at each full collection, though
those objects live as long as the document is shown.

So after each full collection the survivors are frozen (`gc.freeze`: later collections do
not walk them); the next full collection walks only what was made since. A frozen object
that becomes garbage (a cycle) waits for its unfreezing: when the document changes or the
window closes, and every `FULL_WALK_EVERY`-th full collection, which is let walk
everything (the frozen objects are unfrozen before it instead of frozen after it)."""
from __future__ import annotations

import gc
import weakref

from .state import on_document

FULL_WALK_EVERY = 8   # full collections between two that walk every object


class GcPolicy:
    """Installed once per window; `frozen` and `full_walks` count what it did (tests)."""

    def __init__(self) -> None:
        self.collections = 0
        self.frozen = 0
        self.full_walks = 0

    def collected(self, phase: str, info: dict) -> None:
        """A gc callback: runs after a collection, its garbage freed, on the thread that
        collected, with the interpreter lock held."""
        if phase != "stop" or info.get("generation") != 2:
            return
        self.collections += 1
        if self.collections % FULL_WALK_EVERY == 0:
            gc.unfreeze()      # the next full collection walks (and frees) everything
            self.full_walks += 1
        else:
            gc.freeze()
            self.frozen += 1

    def document_changed(self, _doc) -> None:
        gc.unfreeze()          # the closed document's cycles: collected by the next walk


def install(window) -> None:
    policy = GcPolicy()
    window.gc_policy = policy
    callback = policy.collected
    gc.callbacks.append(callback)
    on_document(window.state, policy.document_changed)

    def closed(_obj=None, cb=weakref.ref(policy)) -> None:
        p = cb()
        if p is not None and p.collected in gc.callbacks:
            gc.callbacks.remove(p.collected)
        gc.unfreeze()
    window.destroyed.connect(closed)
