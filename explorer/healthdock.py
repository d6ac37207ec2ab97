"""Array health in the window: a dock with the Fragments panel, the extent plot and the space
chart, and the version verdict in the status bar (details on click). Everything comes from
`formats.health` (plain data); the window knows no format.

`install(window)` is the whole registration: it adds the dock and the status-bar button and
follows the window's document. A fragment clicked in any of the three selects its directory
node everywhere (`window.select_node`) and in the other two."""
from __future__ import annotations

from typing import Callable, Dict, Optional

from PySide6.QtCore import Qt
from PySide6.QtWidgets import QDockWidget, QMessageBox, QPushButton, QTabWidget

from arrayscope.formats import health as H

from .extentplot import ExtentPlot
from .fragmentspanel import FragmentsPanel
from .spacechart import SpaceChart
from .state import AppState, DocumentChanged, Event


class HealthView(QTabWidget):
    def __init__(self, parent=None):
        super().__init__(parent)
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
        self.currentChanged.connect(self._tab)

    def set_document(self, doc) -> Optional[H.ArrayHealth]:
        self.document = doc
        self._space_done = False
        if doc is None or not getattr(doc, "is_dir", False):
            self.fragments.set_compute(None)
            self.extents.set_data(None, {}, [])
            self.space.set_report(None)
            return None
        self.fragments.set_compute(lambda at: _safe(lambda: H.health(doc, at)))
        h = self.fragments.health
        ext = _safe(lambda: H.extents(doc))
        states = {f.name: f.state for f in h.fragments} if h else {}
        order = [f.name for f in h.fragments] if h else []
        self.extents.set_data(ext, states, order)
        if self.currentWidget() is self.space:
            self._tab(self.currentIndex())
        return h

    def _tab(self, _i: int) -> None:
        if self.currentWidget() is self.space and not self._space_done and self.document:
            doc = self.document
            self.space.set_report(_safe(lambda: H.space(doc)))
            self._space_done = True

    def select(self, name: Optional[str]) -> None:
        self.fragments.select(name)
        self.extents.select(name)
        self.space.select(name)
        if name and self.on_select is not None:
            self.on_select(name)


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


def install(window) -> HealthView:
    """Add the health dock and the status-bar verdict to `window` and follow its document."""
    view = HealthView(window)
    dock = QDockWidget("Health", window)
    dock.setObjectName("dock_health")
    dock.setWidget(view)
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
        doc = view.document
        root = getattr(doc, "root", None)
        if root is None:
            return
        for n in root.walk():
            if n.kind == "dir" and n.name == name:
                window.select_node(n, origin="health")
                return

    view.on_select = select
    def state_changed(app: AppState, event: Event) -> None:
        if not isinstance(event, DocumentChanged):
            return
        if app.session is None:
            view.set_document(None)
            button.setVisible(False)
            dock.hide()
            return
        h = view.set_document(app.session.document)
        state["health"] = h
        button.setText(verdict_text(h))
        button.setVisible(bool(button.text()))
        dock.setVisible(h is not None)

    window.state.subscribe(_Follower(state_changed))
    window.health_view, window.d_health, window.health_button = view, dock, button
    return view
