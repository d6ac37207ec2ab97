"""Hex views in tabs, one per source: files, and derived sources (decompressed payloads,
filter-stage outputs) like Wireshark's extra byte panes."""
from __future__ import annotations

from typing import Dict, List, Optional

from PySide6.QtCore import Qt, Signal
from PySide6.QtWidgets import QTabWidget

from arrayscope.formats.core import registry

from .hexview import HexView
from .state import AppState, DocumentChanged, Event, SelectionChanged

MAX_FILE_TABS = 8   # more file tabs close the least recently used (stage outputs stay)


def tab_title(source, document=None) -> str:
    """A short title (the format's, where a base name says too little); the tab bar elides
    it in the middle when space runs out."""
    name = getattr(source, "name", str(source))
    if getattr(source, "origin", None) is not None or getattr(source, "parent", None) is not None:
        return "⤷ " + name
    return registry.source_title(document, name) or name.split("/")[-1]


class HexTabs(QTabWidget):
    currentSourceChanged = Signal(object)
    sourceClosed = Signal(object)   # the user closed a source's tab
    viewCreated = Signal(object)    # a new HexView (extensions decorate it: marks, overview)

    def __init__(self, parent=None):
        super().__init__(parent)
        self.setDocumentMode(True)
        self.setTabsClosable(True)
        self.setMovable(True)
        self.setUsesScrollButtons(True)
        self.setElideMode(Qt.TextElideMode.ElideMiddle)
        self.tabBar().setExpanding(False)
        self._views: Dict[int, HexView] = {}
        self._used: List[int] = []     # id(source) of file tabs, least recently shown first
        self.tabCloseRequested.connect(self._close)
        self.currentChanged.connect(self._changed)
        self.on_new_view = None  # callback(view) to connect signals
        self.document = None     # the open document (its format titles the tabs)

    def view_for(self, source, create: bool = True, activate: bool = True) -> Optional[HexView]:
        v = self._views.get(id(source))
        if v is None:
            if not create:
                return None
            v = HexView(source, self)
            self._views[id(source)] = v
            if self.on_new_view is not None:
                self.on_new_view(v)
            self.viewCreated.emit(v)
            self._evict()
            i = self.addTab(v, tab_title(source, self.document))
            tip = getattr(source, "name", "")
            origin = getattr(source, "origin", None)
            if origin:
                tip += f"\n{origin}"
            tip += f"\n{source.size:,} bytes"
            self.setTabToolTip(i, tip)
        if activate and self.currentWidget() is not v:
            self.setCurrentWidget(v)
        return v

    def state_changed(self, state: AppState, event: Event) -> None:
        if isinstance(event, DocumentChanged):
            self.document = state.session.document if state.session is not None else None
        if isinstance(event, SelectionChanged):
            self.show_node(event.node, event.origin)

    def show_node(self, node, origin: Optional[str] = None) -> Optional[HexView]:
        """The node's source in front, its byte range and its ancestors' marked, the cursor on
        it (unless the click came from the hex view itself). None for a node with no bytes."""
        src = node.source
        if src is None or isinstance(src, str):
            return None
        view = self.view_for(src)
        if view is None:
            return None
        anc = []
        p = node.parent
        while p is not None:
            if p.source is src and p.size > 0 and p.kind not in ("file", "dir"):
                anc.append((p.offset, p.end, p.kind))
            p = p.parent
        anc.reverse()
        kind = "error" if node.status == "error" else node.kind
        whole = node.kind == "file" or (node.offset == 0 and node.size >= src.size)
        primary = (node.offset, node.end, kind) if node.size > 0 and not whole else None
        view.set_node_ranges(primary, anc)
        if origin != "hex" and src.size:
            if whole:
                view.set_cursor(0)
                view.set_top_row(0)
            elif node.size > 0:
                view.select_range(node.offset, node.end)
            else:
                view.set_cursor(node.offset)
        return view

    def _evict(self) -> None:
        """Keep at most MAX_FILE_TABS file tabs: close the one shown longest ago (a
        derived source's tab is the user's work and stays until closed)."""
        files = [k for k in self._used if k in self._views and not _derived(self._views[k].source)]
        cur = self.current_view()
        while len(files) >= MAX_FILE_TABS:
            k = files.pop(0)
            v = self._views.get(k)
            if v is not None and v is not cur:
                self._close(self.indexOf(v))

    def current_view(self) -> Optional[HexView]:
        w = self.currentWidget()
        return w if isinstance(w, HexView) else None

    def views(self):
        return list(self._views.values())

    def clear_all(self) -> None:
        self.blockSignals(True)   # no currentChanged for views about to go
        try:
            while self.count():
                w = self.widget(0)
                self.removeTab(0)
                if w is not None:
                    w.deleteLater()
        finally:
            self.blockSignals(False)
        self._views.clear()
        self._used.clear()
        self.currentSourceChanged.emit(None)

    def _close(self, i: int) -> None:
        w = self.widget(i)
        src = None
        if isinstance(w, HexView):
            self._views.pop(id(w.source), None)
            if id(w.source) in self._used:
                self._used.remove(id(w.source))
            src = w.source
        self.removeTab(i)
        if w is not None:
            w.deleteLater()
        if src is not None:
            self.sourceClosed.emit(src)

    def close_source(self, source) -> None:
        v = self._views.get(id(source))
        if v is not None:
            self._close(self.indexOf(v))

    def _changed(self, i: int) -> None:
        v = self.current_view()
        if v is not None:
            k = id(v.source)
            if k in self._used:
                self._used.remove(k)
            self._used.append(k)
        self.currentSourceChanged.emit(v.source if v is not None else None)


def _derived(source) -> bool:
    return getattr(source, "origin", None) is not None or getattr(source, "parent", None) is not None
