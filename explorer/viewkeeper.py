"""Reload keeping the view: the selected node, the open tabs (with their cursor, selection
and scroll position) and the expanded nodes of the tree come back after F5 or after a key
is set. Places are kept by name (node paths, source names), so they survive the reparse."""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import List, Optional, Tuple

from PySide6.QtCore import QModelIndex, QTimer
from PySide6.QtGui import QKeySequence

from .nodepath import resolve
from .state import on_document
from .windowmenus import menu


@dataclass
class TabState:
    source: str
    cursor: int
    selection: Tuple[int, int]
    top: int


@dataclass
class ViewState:
    path: str
    node: Optional[str] = None
    tabs: List[TabState] = field(default_factory=list)
    current_tab: Optional[str] = None
    expanded: List[str] = field(default_factory=list)


class ViewKeeper:
    def __init__(self, window):
        self.win = window
        self.pending: Optional[ViewState] = None
        on_document(window.state, self._document_changed)
        f = menu(window, "&File")
        for a in f.actions():
            if a.shortcut() == QKeySequence(QKeySequence.StandardKey.Refresh) or a.text() == "&Reload":
                a.triggered.disconnect()
                a.triggered.connect(lambda _c=False: self.reload())
                a.setStatusTip("Reopen from disk, keeping the selection, tabs and expanded nodes")

    # ---- capture ---------------------------------------------------------------------
    def capture(self) -> Optional[ViewState]:
        w = self.win
        if w.session is None or not w.path:
            return None
        st = ViewState(w.path)
        if w.current_node is not None:
            st.node = w.current_node.path()
        for v in w.tabs.views():
            if v.source is None:
                continue
            st.tabs.append(TabState(v.source.name, v.cursor_offset, v.selection(), v.top_row))
        cur = w.tabs.current_view()
        st.current_tab = cur.source.name if cur is not None and cur.source is not None else None
        st.expanded = self._expanded()
        return st

    def _expanded(self) -> List[str]:
        model, view = self.win.tree.model, self.win.tree.view
        out: List[str] = []

        def walk(parent: QModelIndex) -> None:
            for r in range(model.rowCount(parent)):
                idx = model.index(r, 0, parent)
                if not view.isExpanded(idx):
                    continue
                node = model.node(idx)
                if node is not None:
                    out.append(node.path())
                walk(idx)

        walk(QModelIndex())
        return out

    # ---- reload and restore ------------------------------------------------------------
    def reload(self) -> bool:
        st = self.capture()
        if st is None:
            return False
        self.pending = st
        return self.win.open_path(st.path)

    def _document_changed(self, doc) -> None:
        st = self.pending
        if st is None or doc is None:
            return
        if doc.path != st.path:
            self.pending = None
            return
        QTimer.singleShot(0, self.win, self._restore)   # after the window has shown its first node

    def _restore(self) -> None:
        st, self.pending = self.pending, None
        w = self.win
        if st is None or w.session is None:
            return
        root = w.session.document.root
        for p in st.expanded:
            node, _ = resolve(root, p)
            if node is not None:
                idx = w.tree.model.index_for_node(node)
                if idx.isValid():
                    w.tree.view.expand(idx)
        by_name = {getattr(s, "name", None): s for s in w.session.sources()}
        views = []
        for t in st.tabs:                      # the tabs first, in their order
            src = by_name.get(t.source)
            if src is not None:
                views.append((t, w.tabs.view_for(src, activate=False)))
        keep = {id(v) for _t, v in views}
        for v in w.tabs.views():               # the one the reopen showed, if it was closed
            if id(v) not in keep and views:
                w.tabs.close_source(v.source)
        if st.node:
            node, _ = resolve(root, st.node)
            if node is not None:
                w.select_node(node)
        for t, v in views:                     # then each tab's own selection and scroll
            a, b = t.selection
            if b - a > 1:
                v.select_range(a, b, scroll=False)
            else:
                v.set_cursor(t.cursor, scroll=False)
            v.set_top_row(t.top)
        cur = by_name.get(st.current_tab)
        if cur is not None:
            w.tabs.view_for(cur)
        self.restored = st


def install(window) -> ViewKeeper:
    vk = ViewKeeper(window)
    window.view_keeper = vk
    return vk
