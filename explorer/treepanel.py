"""The structure tree: a lazy tree view with a find box (name or value)."""
from __future__ import annotations

from typing import List, Optional

from PySide6.QtCore import QItemSelectionModel, QModelIndex, Qt, Signal
from PySide6.QtGui import QKeySequence, QShortcut
from PySide6.QtWidgets import (
    QAbstractItemView,
    QHBoxLayout,
    QHeaderView,
    QLabel,
    QLineEdit,
    QToolButton,
    QTreeView,
    QVBoxLayout,
    QWidget,
)

from .elide import ElidingDelegate, elide_words
from .state import AppState, DocumentChanged, Event, SelectionChanged
from .treemodel import NodeTreeModel

MAX_MATCHES = 10000


class NodeTreeView(QTreeView):
    def __init__(self, parent=None):
        super().__init__(parent)
        self.setUniformRowHeights(True)
        self.setAlternatingRowColors(True)
        self.setSelectionMode(QAbstractItemView.SelectionMode.SingleSelection)
        self.setSelectionBehavior(QAbstractItemView.SelectionBehavior.SelectRows)
        self.setAllColumnsShowFocus(True)
        self.setExpandsOnDoubleClick(True)
        self.setAnimated(False)


class TreePanel(QWidget):
    nodeSelected = Signal(object)

    def __init__(self, parent=None):
        super().__init__(parent)
        self.model = NodeTreeModel(None, self)
        self.view = NodeTreeView(self)
        self.view.setModel(self.model)
        # a long name loses its longest words' middles first: fragments (`__t1_t2_uuid_v`)
        # keep their time whole and the ends of their uuid, and stay told apart in a
        # narrow tree; a value keeps its start
        self.name_delegate = ElidingDelegate(elide_words, self.view)
        self.view.setItemDelegateForColumn(0, self.name_delegate)
        self.view.setTextElideMode(Qt.TextElideMode.ElideRight)
        hdr = self.view.header()
        hdr.setStretchLastSection(False)
        hdr.setSectionResizeMode(0, QHeaderView.ResizeMode.Interactive)
        hdr.setSectionResizeMode(1, QHeaderView.ResizeMode.Stretch)
        for c, w in ((0, 210), (2, 78), (3, 56), (4, 56)):
            self.view.setColumnWidth(c, w)
        hdr.setContextMenuPolicy(Qt.ContextMenuPolicy.CustomContextMenu)
        hdr.customContextMenuRequested.connect(self._header_menu)
        self.view.setColumnHidden(2, True)
        self.find = QLineEdit(self)
        self.find.setPlaceholderText("Find node by name or value…  (Enter: next)")
        self.find.setClearButtonEnabled(True)
        self.find.returnPressed.connect(lambda: self.find_next(False))
        self.find.textChanged.connect(self._text_changed)
        self.prev_btn = QToolButton(self, text="▲", toolTip="Previous match (Shift+Enter)")
        self.next_btn = QToolButton(self, text="▼", toolTip="Next match (Enter)")
        self.prev_btn.clicked.connect(lambda: self.find_next(True))
        self.next_btn.clicked.connect(lambda: self.find_next(False))
        self.count = QLabel("", self)
        prev = QShortcut(QKeySequence("Shift+Return"), self.find, lambda: self.find_next(True))
        prev.setContext(Qt.ShortcutContext.WidgetShortcut)   # in the find field only
        prev.setWhatsThis("Structure find field: previous match")
        row = QHBoxLayout()
        row.setContentsMargins(0, 0, 0, 0)
        row.setSpacing(2)
        row.addWidget(self.find, 1)
        row.addWidget(self.count)
        row.addWidget(self.prev_btn)
        row.addWidget(self.next_btn)
        lay = QVBoxLayout(self)
        lay.setContentsMargins(2, 2, 2, 2)
        lay.setSpacing(3)
        lay.addLayout(row)
        lay.addWidget(self.view, 1)
        self._quiet = False
        self._matches: Optional[List[object]] = None
        self._pos = -1
        self.view.selectionModel().currentRowChanged.connect(self._current_changed)

    def _header_menu(self, pos) -> None:
        from PySide6.QtWidgets import QMenu

        from .treemodel import COLUMNS

        m = QMenu(self)
        for c in range(1, len(COLUMNS)):
            a = m.addAction(COLUMNS[c])
            a.setCheckable(True)
            a.setChecked(not self.view.isColumnHidden(c))
            a.toggled.connect(lambda on, c=c: self.view.setColumnHidden(c, not on))
        m.exec(self.view.header().mapToGlobal(pos))

    def state_changed(self, state: AppState, event: Event) -> None:
        if isinstance(event, DocumentChanged):
            self.set_root(state.session.root if state.session is not None else None)
        elif isinstance(event, SelectionChanged) and event.origin != "tree":
            self.select_node(event.node)

    def set_root(self, root) -> None:
        self.model.set_root(root)
        self.view.selectionModel().currentRowChanged.connect(self._current_changed)
        self._matches = None
        if root is not None:
            top = self.model.index(0, 0)
            self.model.ensure_fetched(top)
            self.view.expand(top)
            # open a single child chain a little, so the first screen shows structure
            idx, depth = top, 0
            while depth < 2 and self.model.rowCount(idx) == 1:
                idx = self.model.index(0, 0, idx)
                self.model.ensure_fetched(idx)
                self.view.expand(idx)
                depth += 1

    def current_node(self):
        return self.model.node(self.view.currentIndex())

    def _current_changed(self, cur: QModelIndex, prev: QModelIndex) -> None:
        if self._quiet:
            return
        node = self.model.node(cur)
        if node is not None:
            self.nodeSelected.emit(node)

    def reveal(self, node) -> bool:
        """Expand the tree down to `node` (its row shown, not selected); False when it is
        not in the tree."""
        idx = self.model.index_for_node(node)
        if not idx.isValid():
            return False
        self._reveal(idx)
        return True

    def _reveal(self, idx: QModelIndex) -> None:
        p = idx.parent()
        chain = []
        while p.isValid():
            chain.append(p)
            p = p.parent()
        for a in reversed(chain):
            self.view.expand(a)
        self.view.scrollTo(idx, QAbstractItemView.ScrollHint.EnsureVisible)

    def select_node(self, node, emit: bool = False) -> bool:
        idx = self.model.index_for_node(node)
        if not idx.isValid():
            return False
        self._quiet = not emit
        try:
            self._reveal(idx)
            self.view.selectionModel().setCurrentIndex(
                idx, QItemSelectionModel.SelectionFlag.ClearAndSelect | QItemSelectionModel.SelectionFlag.Rows)
        finally:
            self._quiet = False
        return True

    # ---- find ------------------------------------------------------------------------
    def _text_changed(self, _t: str) -> None:
        self._matches = None
        self.count.setText("")

    def _collect(self, text: str) -> List[object]:
        t = text.lower()
        out = []
        root = self.model.root_node
        if root is None:
            return out
        for n in root.walk():
            if t in n.name.lower() or t in n.display_text().lower():
                out.append(n)
                if len(out) >= MAX_MATCHES:
                    break
        return out

    def find_next(self, backward: bool = False) -> Optional[object]:
        text = self.find.text().strip()
        if not text:
            return None
        if self._matches is None:
            self._matches = self._collect(text)
            self._pos = -1
        if not self._matches:
            self.count.setText("no match")
            return None
        n = len(self._matches)
        self._pos = (self._pos + (-1 if backward else 1)) % n
        node = self._matches[self._pos]
        self.count.setText(f"{self._pos + 1} of {n}{'+' if n >= MAX_MATCHES else ''}")
        self.select_node(node, emit=True)
        return node
