"""Array health in the window: a dock with the Fragments panel, the extent plot and the space
chart, and the version verdict in the status bar (details on click). Everything comes from
`formats.core.health` (plain data); the window knows no format.

`install(window)` is the whole registration: it adds the dock and the status-bar button and
follows the window's document. A fragment clicked in any of the three selects its directory
node everywhere (`window.select_node`) and in the other two. On a group (a SOMA experiment)
a member box picks the member array shown; selecting a node inside a member array in the
tree picks that member.

Every computation (a group's member arrays, the fragments at "now" and at the slider's T,
the extents and the space report, each asked when its tab is first shown: each reads
every fragment's metadata, seconds of Python on 1 000 fragments) runs in a worker process
(`PanelRunner`: formats/core/health_tasks.py through `taskprocess.TaskProcess`), never in
the window's process, whose interpreter lock the window paints with. The result is shown
when it arrives; a result for a document or a slider position no longer shown is dropped,
and a new document kills the work still running for the old one."""
from __future__ import annotations

import itertools
from dataclasses import replace
from typing import Callable, Dict, List, Optional, Tuple

from PySide6.QtCore import QEvent, QObject, Qt, QTimer, Signal
from PySide6.QtWidgets import (
    QComboBox,
    QDockWidget,
    QHBoxLayout,
    QLabel,
    QMessageBox,
    QPushButton,
    QTabWidget,
    QVBoxLayout,
    QWidget,
)

from arrayscope.formats.core import health as H
from arrayscope.formats.core import health_tasks as T
from arrayscope.formats.core.context import key_name

from .extentplot import ExtentPlot
from .fragmentspanel import FragmentsPanel
from .spacechart import SpaceChart
from .state import AppState, DocumentChanged, Event, FindingsAdded, SelectionChanged
from .taskprocess import TaskProcess
from .windowfit import SHORT_WINDOW

# After a document is shown: its first paint comes first (the worker process competes for
# the cores with the window and the verify process)
START_DELAY_MS = 1500
COMPUTING = "Reading every fragment's metadata (in a process of its own)…"

_ids = itertools.count(1)


class PanelRunner(QObject):
    """Runs the panels' `HealthTask`s in one worker process, one task at a time; per
    `slot`, only the latest task is run (an older one not yet sent is replaced) and only
    its result delivered (`done(result)`, on the GUI thread; None when it failed).
    `ran` records (slot, worker process id) of each task sent (tests check the window's
    process computes nothing)."""

    def __init__(self, parent=None):
        super().__init__(parent)
        self.worker = TaskProcess(self)
        self._current: Dict[str, int] = {}                              # slot -> latest job
        self._todo: Dict[str, Tuple[int, T.HealthTask, Callable]] = {}  # not sent yet
        self._held: set = set()                                         # jobs in their delay
        self._sent: Optional[Tuple[int, str, Callable]] = None
        self.ran: List[Tuple[str, int]] = []

    def share_key(self, key: Optional[bytes]) -> None:
        self.worker.share_key(key)

    def __call__(self, slot: str, task: T.HealthTask, done: Callable,
                 delay_ms: int = 0) -> None:
        """Run `task` (after `delay_ms`: the window's first paint comes first), then
        `done(result)` here."""
        job = next(_ids)
        self._current[slot] = job
        self._todo[slot] = (job, task, done)
        if delay_ms > 0:
            self._held.add(job)
            timer = QTimer(self)   # a child: gone with the runner, never fires after it
            timer.setSingleShot(True)

            def fire() -> None:
                self._held.discard(job)
                timer.deleteLater()
                self._pump()
            timer.timeout.connect(fire)
            timer.start(delay_ms)
        else:
            self._pump()

    def _pump(self) -> None:
        if self._sent is not None:
            return
        for slot, (job, task, done) in list(self._todo.items()):
            if job in self._held:
                continue
            del self._todo[slot]
            self._sent = (job, slot, done)
            self.worker.submit(T.run, task, self._answered)
            self.ran.append((slot, self.worker.pid))
            return

    def _answered(self, ok: bool, result) -> None:
        sent, self._sent = self._sent, None
        if sent is not None:
            job, slot, done = sent
            if self._current.get(slot) == job:
                del self._current[slot]
                done(result if ok else None)   # a failure shows as no data
        self._pump()

    def cancel(self) -> None:
        """Drop every pending task and result (a new document): the work still running is
        killed with its process."""
        self._current.clear()
        self._todo.clear()
        self._held.clear()
        if self._sent is not None:
            self._sent = None
            self.worker.kill()

    @property
    def busy(self) -> bool:
        return bool(self._current)


def _task(doc, what: str, member: Optional[str] = None) -> T.HealthTask:
    """The task on `doc` (or on its member array `member`): its path, format and key name,
    never its nodes."""
    key = getattr(getattr(doc, "ctx", None), "key", None)
    return T.HealthTask(what, doc.path, getattr(doc, "format", None),
                        key_name(key) if key else None, member)


class HealthView(QTabWidget):
    healthReady = Signal(object)   # the ArrayHealth at "now" of the document shown (or None)

    def __init__(self, parent=None):
        super().__init__(parent)
        self.runner = PanelRunner(self)
        self.document = None
        self._base: Optional[T.HealthTask] = None   # the array shown, as a task
        self.fragments = FragmentsPanel(self)
        self.extents = ExtentPlot(self)
        self.space = SpaceChart(self)
        self.addTab(self.fragments, "Fragments")
        self.addTab(self.extents, "Extents")
        self.addTab(self.space, "Space")
        self._health: Optional[H.ArrayHealth] = None
        self._space_done = self._extents_done = False
        self.on_select = None   # callable(name) set by install()
        for w in (self.fragments, self.extents, self.space):
            w.fragmentSelected.connect(self.select)
        self.currentChanged.connect(self._tab)

    @property
    def busy(self) -> bool:
        """A computation for the document shown is still running."""
        return self.runner.busy

    def clear(self, doc=None) -> None:
        """Nothing shown, nothing computing (for `doc`, whose health is asked next)."""
        self.runner.cancel()
        self.document, self._base = doc, None
        self._health = None   # the health now, once computed
        self._space_done = self._extents_done = False
        self.fragments.set_health(None, None)
        self.extents.set_data(None, {}, [])
        self.space.set_report(None)

    def set_document(self, doc, member: Optional[str] = None,
                     delay_ms: int = START_DELAY_MS) -> None:
        """Show the health of `doc`'s array (or of its member array `member`, a folder or
        URL from the group's member list) when it is computed (`healthReady` then says
        what it is)."""
        self.clear(doc)
        if doc is None or not getattr(doc, "is_dir", False):
            self.healthReady.emit(None)
            return
        self.runner.share_key(getattr(getattr(doc, "ctx", None), "key", None))
        base = self._base = _task(doc, T.OPEN, member)

        def request(at, done) -> None:
            self.runner("fragments", replace(base, what=T.AT, at=at), done)

        def opened(h) -> None:
            self._health = h
            self.fragments.set_health(request, h)
            self.healthReady.emit(h)
            self._tab(self.currentIndex())
        self.runner("open", base, opened, delay_ms=delay_ms)
        # what the empty panel waits for (on 1 000 fragments: seconds of the worker's time)
        self.fragments.caption.setText(COMPUTING)
        if self.currentWidget() is self.space:
            self._tab(self.currentIndex())

    def _tab(self, _i: int) -> None:
        """A tab's computation when it is first shown (the extents of 1 000 fragments are
        as long as their health: asked with it, they kept the Fragments tab empty)."""
        if self.currentWidget() is self.space and not self._space_done and self._base:
            self.runner("space", replace(self._base, what=T.SPACE), self.space.set_report)
            self._space_done = True
        if (self.currentWidget() is self.extents and not self._extents_done and self._base
                and self._health is not None):
            h = self._health
            states = {f.name: f.state for f in h.fragments}
            order = [f.name for f in h.fragments]
            self.runner("extents", replace(self._base, what=T.EXTENTS),
                        lambda ext: self.extents.set_data(ext, states, order))
            self._extents_done = True

    def select(self, name: Optional[str]) -> None:
        self.fragments.select(name)
        self.extents.select(name)
        self.space.select(name)
        if name and self.on_select is not None:
            self.on_select(name)


class GroupHealthView(QWidget):
    """The health view with, on a group, a box of its member arrays above it: the view shows
    the member picked."""

    def __init__(self, parent=None):
        super().__init__(parent)
        self.view = HealthView(self)
        self.members: List[Tuple[str, str]] = []    # (member path, folder or URL)
        self.group = None
        self.bar = QWidget(self)
        row = QHBoxLayout(self.bar)
        row.setContentsMargins(4, 2, 4, 0)
        row.addWidget(QLabel("Member array:", self.bar))
        self.box = QComboBox(self.bar)
        self.box.setSizeAdjustPolicy(QComboBox.SizeAdjustPolicy.AdjustToContents)
        row.addWidget(self.box)
        row.addStretch(1)
        lay = QVBoxLayout(self)
        lay.setContentsMargins(0, 0, 0, 0)
        lay.setSpacing(0)
        lay.addWidget(self.bar)
        lay.addWidget(self.view, 1)
        self.bar.hide()
        self.box.currentIndexChanged.connect(self._picked)

    def set_document(self, doc) -> None:
        """Show `doc`'s health (it arrives through `view.healthReady`); on a group with
        member arrays (the worker lists them first), the first member's."""
        self.group, self.members = None, []
        self.bar.hide()
        if doc is None or not getattr(doc, "is_dir", False):
            self.view.set_document(doc)
            return
        self.view.clear(doc)
        self.view.runner.share_key(getattr(getattr(doc, "ctx", None), "key", None))
        self.view.runner("members", _task(doc, T.MEMBERS),
                         lambda members: self._listed(doc, members or []),
                         delay_ms=START_DELAY_MS)
        self.view.fragments.caption.setText(COMPUTING)

    def _listed(self, doc, members: List[Tuple[str, str]]) -> None:
        self.members = members
        self.bar.setVisible(bool(members))
        if not members:
            self.view.set_document(doc, delay_ms=0)
            return
        self.group = doc
        self.box.blockSignals(True)
        self.box.clear()
        self.box.addItems([m for m, _p in members])
        self.box.blockSignals(False)
        self._picked(0)

    def pick_member_of(self, rel: str) -> None:
        """Show the member array holding `rel` (a path relative to the group), if any."""
        if not self.members or self.group is None:
            return
        for i, (_m, path) in enumerate(self.members):
            mine = self.group.relname(path)
            if (rel == mine or rel.startswith(mine + "/")) and i != self.box.currentIndex():
                self.box.setCurrentIndex(i)
                return

    def _picked(self, i: int) -> None:
        if 0 <= i < len(self.members) and self.group is not None:
            self.view.set_document(self.group, self.members[i][1], delay_ms=0)


def verdict_text(h: Optional[H.ArrayHealth]) -> str:
    if h is None or h.versions is None:
        return ""
    v = h.versions
    return f"needs libtiledb ≥ {v.oldest_reader}" if v.newest_format is not None else ""


def verdict_details(h: H.ArrayHealth) -> str:
    v = h.versions
    if v is None:
        return ""
    lines = [v.summary, ""]
    for f in v.files:
        lines.append(f"{f.kind}: {f.path} — format {f.format_version}, written by "
                     f"{f.written_by}, read from {f.oldest_reader}")
    return "\n".join(lines)


class _Follower:
    """A panel of the application state that is a function."""

    def __init__(self, fn: Callable[[AppState, Event], None]) -> None:
        self.state_changed = fn


class _CloseWatch(QObject):
    """Calls `on_close` when the widget it watches is closed (a dock's close button, the
    window's close), not when it is only hidden."""

    def __init__(self, parent, on_close: Callable[[], None]):
        super().__init__(parent)
        self.on_close = on_close

    def eventFilter(self, obj, event) -> bool:
        if event.type() == QEvent.Type.Close:
            self.on_close()
        return False


def install(window) -> HealthView:
    """Add the health dock and the status-bar verdict to `window` and follow its document."""
    outer = GroupHealthView(window)
    view = outer.view
    dock = QDockWidget("Health", window)
    dock.setObjectName("dock_health")
    dock.setWidget(outer)
    window.addDockWidget(Qt.DockWidgetArea.BottomDockWidgetArea, dock)
    if hasattr(window, "d_diag"):
        window.tabifyDockWidget(window.d_diag, dock)
    dock.hide()
    button = QPushButton("", window)
    button.setFlat(True)
    button.setVisible(False)
    window.statusBar().addPermanentWidget(button)
    state: Dict[str, Optional[H.ArrayHealth]] = {"health": None}

    def details() -> None:
        h = state["health"]
        if h is not None:
            QMessageBox.information(window, "Version verdict", verdict_details(h))

    button.clicked.connect(details)

    def select(name: str) -> None:
        doc = outer.group or view.document
        start = getattr(doc, "root", None)
        if outer.group is not None:   # the member's node (opened: the user asked for it)
            for part in outer.box.currentText().split("/"):
                start = start.find(part) if start is not None else None
        if start is None:
            return
        if start.pending:
            start.ensure_built()
        for n in start.walk():
            if n.kind == "dir" and n.name == name:
                window.select_node(n, origin="health")
                return

    view.on_select = select

    def ready(h: Optional[H.ArrayHealth]) -> None:
        state["health"] = h
        verdict = verdict_text(h)
        if verdict and outer.group is not None:   # a group: the member array shown
            verdict = f"{outer.box.currentText()}: {verdict}"
        button.setText(verdict)
        button.setVisible(bool(button.text()))
        was = dock.isVisible()
        dock.setVisible(h is not None)
        # room for the timeline, slider and caption; not in a short window (1024×700), where
        # the bottom docks keep the short layout's height and the bytes the rest (windowfit)
        if h is not None and not was and window.height() >= SHORT_WINDOW:
            window.resizeDocks([dock], [max(400, window.height() * 2 // 5)],
                               Qt.Orientation.Vertical)

    view.healthReady.connect(ready)

    def state_changed(app: AppState, event: Event) -> None:
        if isinstance(event, FindingsAdded):   # the states say what verify found
            view.fragments.set_findings(app.findings)
            return
        if isinstance(event, SelectionChanged) and event.origin != "health":
            src = event.node.source
            rel = src if isinstance(src, str) else getattr(src, "name", "")
            outer.pick_member_of(rel or "")
            return
        if not isinstance(event, DocumentChanged):
            return
        view.fragments.set_findings([])
        if app.session is None:
            shown["doc"], shown["pending"] = None, False   # (it kept the closed document alive)
            outer.set_document(None)
            button.setVisible(False)
            dock.hide()
            return
        doc = app.session.document
        shown["doc"], shown["pending"] = doc, True
        if getattr(doc, "is_dir", False) and not shown["closed"]:
            dock.show()   # as a tab: computed once it is in front (`compute_if_shown`)
        compute_if_shown()

    # Health reads every fragment's metadata (a worker process: cores the window and verify
    # need): it is computed only while the dock is shown; hidden (closed, or a tab behind
    # another) nothing new starts, and the work still running is killed.
    shown: Dict[str, object] = {"doc": None, "pending": False, "closed": False}

    def compute_if_shown(visible: Optional[bool] = None) -> None:
        # (visibilityChanged(True) comes before isVisible() says so)
        if shown["pending"] and (dock.isVisible() if visible is None else visible):
            shown["pending"] = False
            outer.set_document(shown["doc"])   # computed in a worker: `ready` shows it

    def visibility(visible: bool) -> None:
        if visible:
            compute_if_shown(True)
        elif view.busy and window.session is not None:
            view.runner.cancel()
            shown["pending"] = True   # again when shown

    dock.visibilityChanged.connect(visibility)
    def toggled(on: bool) -> None:   # View ▸ Health
        shown["closed"] = not on
        if on:
            compute_if_shown(True)

    dock.toggleViewAction().triggered.connect(toggled)
    dock.installEventFilter(_CloseWatch(dock, lambda: shown.update(closed=True)))
    window.installEventFilter(_CloseWatch(window, view.runner.worker.kill))   # quit: no wait

    window.state.subscribe(_Follower(state_changed))
    window.health_view, window.d_health, window.health_button = view, dock, button
    window.group_health_view = outer
    return view
