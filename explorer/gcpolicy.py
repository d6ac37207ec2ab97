"""The window's garbage-collector policy (the program owns its process; the engine, in
`formats/`, never sets one). A full collection walks every object alive: with a large
document's nodes (a 1 000-fragment array's tree, its verify findings: 635 000 objects) that
is 410-530 ms of the GUI thread in one turn of the event loop, though those objects live as
long as the document is shown.

So after each full collection the survivors are frozen (`gc.freeze`: later collections do
not walk them); the next full collection walks only what was made since. A frozen object
that becomes garbage (a cycle: a closed document's nodes) waits for its unfreezing, which
makes the next full collection walk everything again. That walk is never taken while the
user works: the unfreezing and that collection (a "reclaim") run together once the user
has left the window alone for `IDLE_MS` (no key, click or wheel), asked when a document is
closed or replaced and after `RECLAIM_EVERY` frozen collections (the garbage frozen while a
document stays open), and at the window's close."""
from __future__ import annotations

import gc
import time
import weakref
from typing import List

from PySide6.QtCore import QEvent, QObject, QTimer
from PySide6.QtWidgets import QApplication

from .state import on_document

IDLE_MS = 2000        # the user's pause after which a reclaim may walk everything
RECLAIM_EVERY = 8     # frozen full collections between two reclaims asked while one stays open

_INPUT = {QEvent.Type.KeyPress, QEvent.Type.MouseButtonPress, QEvent.Type.MouseButtonDblClick,
          QEvent.Type.Wheel, QEvent.Type.Shortcut}


class GcPolicy:
    """Installed once per window. `collections`, `frozen`, `reclaims` count what it did and
    `reclaim_ms` holds the GUI thread's CPU ms of each reclaim (tests, benchmarks). Plain
    Python: the gc callback may run on any thread, after the window is gone."""

    def __init__(self) -> None:
        self.collections = 0
        self.frozen = 0
        self.reclaims = 0
        self.reclaim_ms: List[float] = []
        self.since_reclaim = 0          # frozen full collections since the last reclaim
        self.had_document = False
        self.collecting = False         # between a collection's start and its stop
        self.retired = False            # the window is gone: unfreeze at the next stop

    def collected(self, phase: str, info: dict) -> None:
        """A gc callback: runs before and after a collection, on the thread that collects,
        with the interpreter lock held. Freezing and unfreezing happen only at "stop", when
        the collector's lists are whole again."""
        if phase == "start":
            self.collecting = True
            return
        self.collecting = False
        if self.retired:
            self.retire()
            return
        if info.get("generation") != 2:
            return
        self.collections += 1
        gc.freeze()
        self.frozen += 1
        self.since_reclaim += 1

    def reclaim(self) -> None:
        """Every object walked once: the frozen garbage freed, the survivors frozen again
        (by `collected`)."""
        began = time.thread_time()
        gc.unfreeze()
        gc.collect()
        self.reclaim_ms.append(1000 * (time.thread_time() - began))
        self.reclaims += 1
        self.since_reclaim = 0

    def retire(self) -> None:
        """The window is gone: nothing stays frozen, the callback leaves. A window's C++
        object can be destroyed by a collection (its wrapper was garbage): unfreezing
        inside that collection would splice lists the collector is walking, so then it
        waits for the collection's stop."""
        if self.collecting:
            self.retired = True
            return
        if self.collected in gc.callbacks:
            gc.callbacks.remove(self.collected)
        gc.unfreeze()


class IdleReclaim(QObject):
    """Runs the policy's reclaim once the user has paused `IDLE_MS`: asked when a document
    is closed or replaced, and (checked every `IDLE_MS`) after `RECLAIM_EVERY` frozen
    collections. Each key, click or wheel restarts the wait."""

    def __init__(self, policy: GcPolicy, parent: QObject) -> None:
        super().__init__(parent)
        self.policy = policy
        self.timer = QTimer(self)
        self.timer.setSingleShot(True)
        self.timer.setInterval(IDLE_MS)
        self.timer.timeout.connect(self._idle)
        self.checker = QTimer(self)    # the collections are counted off the GUI thread too
        self.checker.setInterval(IDLE_MS)
        self.checker.timeout.connect(self.check)
        self.checker.start()
        self._watching = False

    @property
    def pending(self) -> bool:
        return self.timer.isActive()

    def document_changed(self, doc) -> None:
        if self.policy.had_document:
            self.ask()             # the closed document's cycles are frozen: reclaim them
        self.policy.had_document = doc is not None

    def check(self) -> None:
        if self.policy.since_reclaim >= RECLAIM_EVERY and not self.pending:
            self.ask()

    def ask(self) -> None:
        if not self._watching:
            app = QApplication.instance()
            if app is not None:
                app.installEventFilter(self)   # (only while a reclaim waits: every event)
                self._watching = True
        self.timer.start()

    def eventFilter(self, obj, event) -> bool:
        if event.type() in _INPUT:
            self.timer.start()
        return False

    def _idle(self) -> None:
        if self._watching:
            app = QApplication.instance()
            if app is not None:
                app.removeEventFilter(self)
            self._watching = False
        self.policy.reclaim()


def install(window) -> None:
    policy = GcPolicy()
    window.gc_policy = policy
    window.gc_idle = idle = IdleReclaim(policy, window)
    callback = policy.collected
    gc.callbacks.append(callback)
    on_document(window.state, idle.document_changed)

    def closed(_obj=None, cb=weakref.ref(policy)) -> None:
        p = cb()
        if p is not None:
            p.retire()
        else:
            gc.unfreeze()
    window.destroyed.connect(closed)
