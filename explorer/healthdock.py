"""Array health in the window: a dock with the Fragments panel, the extent plot and the space
chart, and the version verdict in the status bar (details on click). Everything comes from
`formats.health` (plain data); the window knows no format.

`install(window)` is the whole registration: it adds the dock and the status-bar button and
follows the window's document. A fragment clicked in any of the three selects its directory
node everywhere (`window.select_node`) and in the other two. On a group (a SOMA experiment)
a member box picks the member array shown; selecting a node inside a member array in the
tree picks that member.

Every computation (the fragments at "now" and at the slider's T, the extents, the space
report: each reads every fragment's metadata) runs in a worker thread (`PanelRunner`) on a
detached view of the document (`_Detached`: its path, format, key and file system, never
its nodes, which the window builds meanwhile); the result is shown when it arrives, and a
result for a document or a slider position no longer shown is dropped."""
from __future__ import annotations

import threading
from typing import Callable, Dict, List, Optional, Tuple

from PySide6.QtCore import QEvent, QObject, Qt, QThreadPool, QTimer, Signal
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

from arrayscope.formats import health as H
from arrayscope.formats.context import Context

from .background import BackgroundJob
from .extentplot import ExtentPlot
from .fragmentspanel import FragmentsPanel
from .spacechart import SpaceChart
from .state import AppState, DocumentChanged, Event, FindingsAdded, SelectionChanged
from .windowfit import SHORT_WINDOW

# After a document is shown: its first paint comes first (the worker shares the interpreter
# lock with the window; a 10 000-fragment array's health reads 10 000 metadata files)
START_DELAY_MS = 1500


class _Signals(QObject):
    finished = Signal(int, object)   # job id, result


class _PanelJob(BackgroundJob):
    def __init__(self, work: Callable[[], object]):
        super().__init__(_Signals())
        self.work = work

    def run(self) -> None:
        self.report("finished", _safe(self.work))


class PanelRunner(QObject):
    """Runs panel computations in one worker thread; per `slot`, only the latest job's
    result is delivered (`done(result)`, on the GUI thread). `threads` records the thread
    of each job (tests check it is not the GUI's)."""

    def __init__(self, parent=None):
        super().__init__(parent)
        self.pool = QThreadPool(self)
        self.pool.setMaxThreadCount(1)
        self._current: Dict[str, int] = {}
        self._jobs: Dict[int, Tuple[QObject, Callable, str]] = {}
        self.threads: list = []

    def __call__(self, slot: str, work: Callable[[], object], done: Callable,
                 delay_ms: int = 0) -> None:
        """Run `work` (after `delay_ms`: the window's first paint comes first, as the worker
        shares the interpreter lock with it), then `done(result)` here."""
        def traced():
            self.threads.append(threading.current_thread())
            return work()
        job = _PanelJob(traced)
        signals = job.signals
        assert isinstance(signals, _Signals)
        signals.finished.connect(self._finished)
        self._jobs[job.job_id] = (job.signals, done, slot)
        self._current[slot] = job.job_id
        if delay_ms > 0:
            timer = QTimer(self)   # a child: gone with the runner, never fires after it
            timer.setSingleShot(True)

            def fire() -> None:
                self._start(job, slot)
                timer.deleteLater()
            timer.timeout.connect(fire)
            timer.start(delay_ms)
        else:
            self.pool.start(job)

    def _start(self, job: _PanelJob, slot: str) -> None:
        if self._current.get(slot) == job.job_id:   # not superseded while it waited
            self.pool.start(job)
        else:
            self._jobs.pop(job.job_id, None)

    def _finished(self, job_id: int, result) -> None:
        _signals, done, slot = self._jobs.pop(job_id, (None, None, ""))
        if done is not None and self._current.get(slot) == job_id:
            del self._current[slot]
            done(result)

    def cancel(self) -> None:
        """Drop every pending result (a new document)."""
        self._current.clear()

    @property
    def busy(self) -> bool:
        return bool(self._current)

    def wait(self, msecs: int = -1) -> bool:
        return self.pool.waitForDone(msecs)


class _Detached:
    """What the health computations read of a document, without its nodes or model: they
    run in a worker thread while the window builds (lazily) the real document's nodes."""

    def __init__(self, doc):
        self.path = doc.path
        self.is_dir = getattr(doc, "is_dir", False)
        self.format = getattr(doc, "format", None)
        self.fs = getattr(doc, "fs", None)
        self.ctx = Context(key=getattr(getattr(doc, "ctx", None), "key", None))
        self.model = None


class HealthView(QTabWidget):
    healthReady = Signal(object)   # the ArrayHealth at "now" of the document shown (or None)

    def __init__(self, parent=None):
        super().__init__(parent)
        self.runner = PanelRunner(self)
        self.document = None
        self.fragments = FragmentsPanel(self)
        self.extents = ExtentPlot(self)
        self.space = SpaceChart(self)
        self.addTab(self.fragments, "Fragments")
        self.addTab(self.extents, "Extents")
        self.addTab(self.space, "Space")
        self._space_done = False
        self.on_select = None   # callable(name) set by install()
        for w in (self.fragments, self.extents, self.space):
            w.fragmentSelected.connect(self.select)
        self.fragments.run = lambda work, done: self.runner("fragments", work, done)
        self.currentChanged.connect(self._tab)

    @property
    def busy(self) -> bool:
        """A computation for the document shown is still running."""
        return self.runner.busy

    def set_document(self, doc) -> None:
        """Show `doc`'s health when it is computed (`healthReady` then says what it is)."""
        self.runner.cancel()
        self.document = doc
        self._space_done = False
        self.fragments.set_health(None, None)
        self.extents.set_data(None, {}, [])
        self.space.set_report(None)
        if doc is None or not getattr(doc, "is_dir", False):
            self.healthReady.emit(None)
            return
        det = _Detached(doc)

        def compute(at):
            return _safe(lambda: H.health(det, at))

        def opened(result) -> None:
            h, ext = result if result is not None else (None, None)
            self.fragments.set_health(compute, h)
            states = {f.name: f.state for f in h.fragments} if h else {}
            order = [f.name for f in h.fragments] if h else []
            self.extents.set_data(ext, states, order)
            self.healthReady.emit(h)
        self.runner("open", lambda: (compute(None), _safe(lambda: H.extents(det))), opened,
                    delay_ms=START_DELAY_MS)
        if self.currentWidget() is self.space:
            self._tab(self.currentIndex())

    def _tab(self, _i: int) -> None:
        if self.currentWidget() is self.space and not self._space_done and self.document:
            det = _Detached(self.document)
            self.runner("space", lambda: _safe(lambda: H.space(det)), self.space.set_report)
            self._space_done = True

    def select(self, name: Optional[str]) -> None:
        self.fragments.select(name)
        self.extents.select(name)
        self.space.select(name)
        if name and self.on_select is not None:
            self.on_select(name)


class GroupHealthView(QWidget):
    """The health view with, on a group, a box of its member arrays above it: the view shows
    the member picked (a light document of its own, closed when another is picked)."""

    def __init__(self, parent=None):
        super().__init__(parent)
        self.view = HealthView(self)
        self.members: List[Tuple[str, str]] = []    # (member path, folder or URL)
        self.group = None
        self._member_doc = None
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

    def set_document(self, doc) -> bool:
        """Show `doc` (its health arrives through `view.healthReady`); True when it is a
        group with member arrays (the view then shows the first member)."""
        self._close_member()
        self.group, self.members = None, []
        if doc is not None and getattr(doc, "is_dir", False):
            # the member list is the group's own small files: cheap enough for this thread
            self.members = _safe(lambda: H.group_arrays(doc)) or []
        self.bar.setVisible(bool(self.members))
        if not self.members:
            self.view.set_document(doc)
            return False
        self.group = doc
        self.box.blockSignals(True)
        self.box.clear()
        self.box.addItems([m for m, _p in self.members])
        self.box.blockSignals(False)
        self._picked(0)
        return True

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
        if not 0 <= i < len(self.members) or self.group is None:
            return
        self._close_member()
        group = self.group
        self._member_doc = _safe(lambda: H.member_document(group, self.members[i][1]))
        self.view.set_document(self._member_doc)

    def _close_member(self) -> None:
        if self._member_doc is not None:
            self._member_doc.close()
            self._member_doc = None


def _safe(fn):
    """The panels never take the window down: a failure shows as no data."""
    try:
        return fn()
    except Exception:
        return None


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
    """Tells when the user closes the dock (its close button), not when it is hidden."""

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
            shown["pending"] = False
            outer.set_document(None)
            button.setVisible(False)
            dock.hide()
            return
        doc = app.session.document
        shown["doc"], shown["pending"] = doc, True
        if getattr(doc, "is_dir", False) and not shown["closed"]:
            dock.show()   # as a tab: computed once it is in front (`compute_if_shown`)
        compute_if_shown()

    # Health reads every fragment's metadata (a thread that shares the interpreter lock with
    # the window): it is computed only while the dock is shown; hidden (closed, or a tab
    # behind another) nothing new starts, and a result still to come is dropped.
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

    window.state.subscribe(_Follower(state_changed))
    window.health_view, window.d_health, window.health_button = view, dock, button
    window.group_health_view = outer
    return view
