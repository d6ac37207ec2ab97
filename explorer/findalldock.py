"""The Find All dock: every match of a hex pattern (`??` = any byte), a regular
expression, text or a typed value in the current tab's source, listed as they are found
(in a worker thread, with progress and Cancel); click a result to select its bytes and
node. Ctrl+Shift+A opens it."""
from __future__ import annotations

from typing import List

from PySide6.QtCore import QModelIndex, QPersistentModelIndex, Qt
from PySide6.QtGui import QAction, QKeySequence
from PySide6.QtWidgets import (
    QAbstractItemView,
    QCheckBox,
    QComboBox,
    QDockWidget,
    QHBoxLayout,
    QHeaderView,
    QLabel,
    QLineEdit,
    QProgressBar,
    QPushButton,
    QTableView,
    QVBoxLayout,
    QWidget,
)

from . import findall, search, theme
from .docks import bottom_dock
from .findall import Hit
from .findallworker import MAX_HITS, FindAllRunner
from .hitsmodel import AppendingHitsModel
from .state import on_document
from .windowmenus import menu

COLS = ("Offset", "Length", "Node", "Bytes")
PREVIEW = 16
Index = QModelIndex | QPersistentModelIndex


class HitsModel(AppendingHitsModel):
    columns = COLS

    def __init__(self, parent=None):
        super().__init__(parent)
        self.source = None
        self.node_at = None

    def reset(self, source=None, node_at=None) -> None:
        self.source, self.node_at = source, node_at
        self.clear_hits()

    def data(self, index: Index, role: int = 0):
        if not index.isValid():
            return None
        h = self.hits[index.row()]
        c = index.column()
        if role == Qt.ItemDataRole.DisplayRole:
            if c == 0:
                return f"0x{h.offset:X}"
            if c == 1:
                return f"{h.length:,}"
            if c == 2:
                node = self.node_at(self.source, h.offset) if self.node_at is not None else None
                return node.path() if node is not None else ""
            if c == 3 and self.source is not None:
                raw = self.source.read(h.offset, min(h.length, PREVIEW))
                return raw.hex(" ") + (" …" if h.length > PREVIEW else "")
        if role == Qt.ItemDataRole.FontRole and c in (0, 3):
            return theme.mono_font()
        if role == Qt.ItemDataRole.TextAlignmentRole and c in (0, 1):
            return int(Qt.AlignmentFlag.AlignRight | Qt.AlignmentFlag.AlignVCenter)
        return None


class FindAllPanel(QWidget):
    def __init__(self, window):
        super().__init__(window)
        self.win = window
        self.runner = FindAllRunner(self)
        self.runner.hits.connect(self._hits)
        self.runner.progress.connect(self._progress)
        self.runner.finished.connect(self._finished)
        self.mode = QComboBox(self)
        self.mode.addItems(findall.MODES)
        self.edit = QLineEdit(self)
        self.edit.setClearButtonEnabled(True)
        self.edit.setPlaceholderText("e.g. 28 b5 ?? fd   ·   regex: TILEDB.{4}   ·   text")
        self.edit.returnPressed.connect(self.start)
        self.be = QCheckBox("Big endian", self)
        self.go_btn = QPushButton("Find All", self)
        self.go_btn.clicked.connect(self.start)
        self.cancel_btn = QPushButton("Cancel", self)
        self.cancel_btn.clicked.connect(self.runner.cancel)
        self.cancel_btn.setEnabled(False)
        self.bar = QProgressBar(self)
        self.bar.setMaximumWidth(160)
        self.bar.setVisible(False)
        self.status = QLabel("", self)
        self.status.setWordWrap(True)
        self.model = HitsModel(self)
        self.view = QTableView(self)
        self.view.setModel(self.model)
        self.view.verticalHeader().setVisible(False)
        self.view.verticalHeader().setDefaultSectionSize(self.fontMetrics().height() + 4)
        self.view.setSelectionBehavior(QAbstractItemView.SelectionBehavior.SelectRows)
        self.view.setSelectionMode(QAbstractItemView.SelectionMode.SingleSelection)
        self.view.setWordWrap(False)
        self.view.setTextElideMode(Qt.TextElideMode.ElideMiddle)
        h = self.view.horizontalHeader()
        h.setSectionResizeMode(0, QHeaderView.ResizeMode.ResizeToContents)
        h.setSectionResizeMode(1, QHeaderView.ResizeMode.ResizeToContents)
        h.setSectionResizeMode(2, QHeaderView.ResizeMode.Stretch)
        h.setSectionResizeMode(3, QHeaderView.ResizeMode.Interactive)
        self.view.setColumnWidth(3, 300)
        self.view.clicked.connect(self.go)
        self.view.activated.connect(self.go)
        self.mode.currentTextChanged.connect(lambda m: self.be.setVisible(m in search.TYPED))
        self.be.setVisible(False)
        row = QHBoxLayout()
        row.setContentsMargins(0, 0, 0, 0)
        row.addWidget(self.mode)
        row.addWidget(self.edit, 1)
        row.addWidget(self.be)
        row.addWidget(self.go_btn)
        row.addWidget(self.cancel_btn)
        row.addWidget(self.bar)
        lay = QVBoxLayout(self)
        lay.setContentsMargins(2, 2, 2, 2)
        lay.setSpacing(2)
        lay.addLayout(row)
        lay.addWidget(self.status)
        lay.addWidget(self.view, 1)

    def start(self) -> bool:
        v = self.win.tabs.current_view()
        if v is None or v.source is None:
            self.status.setText("Open a file first: the search runs in the current tab's bytes.")
            return False
        try:
            pat = findall.compile_pattern(self.mode.currentText(), self.edit.text(), self.be.isChecked())
        except search.PatternError as e:
            self.status.setText(f"<span style='color:{theme.error_color().name()}'>{e}</span>")
            return False
        s = self.win.session
        self.model.reset(v.source, s.node_at if s is not None else None)
        self.bar.setRange(0, 1000)
        self.bar.setValue(0)
        self.bar.setVisible(True)
        self.cancel_btn.setEnabled(True)
        self.status.setText(f"Searching {v.source.name} ({v.source.size:,} bytes) for {pat.text} …")
        self.runner.start(v.source, pat)
        return True

    def _hits(self, hits: List[Hit]) -> None:
        self.model.append(hits)

    def _progress(self, done: int, total: int) -> None:
        self.bar.setValue(int(1000 * done / max(total, 1)))

    def _finished(self, cancelled: bool, truncated: bool) -> None:
        self.bar.setVisible(False)
        self.cancel_btn.setEnabled(False)
        n = len(self.model.hits)
        name = getattr(self.model.source, "name", "")
        text = f"{n:,} match{'es' * (n != 1)} in {name}"
        if cancelled:
            text += " — cancelled (the matches found so far)"
        elif truncated:
            text += f" — stopped at the first {MAX_HITS:,}"
        self.status.setText(text)

    def go(self, index: QModelIndex) -> None:
        if not index.isValid() or self.win.session is None or self.model.source is None:
            return
        h = self.model.hits[index.row()]
        src = self.model.source
        if src not in self.win.session.sources():
            self.status.setText(f"{getattr(src, 'name', '')} is no longer open")
            return
        view = self.win.tabs.view_for(src)
        node = self.win.session.node_at(src, h.offset)
        if node is not None:
            self.win.select_node(node, origin="hex")
        view.select_range(h.offset, h.offset + h.length)

    def reset(self) -> None:
        self.runner.cancel()
        self.model.reset()
        self.status.setText("")

    def focus(self, dock: QDockWidget) -> None:
        dock.show()
        dock.raise_()
        v = self.win.tabs.current_view()
        if v is not None and not self.edit.text():
            a, b = v.selection()
            if 1 < b - a <= 32:
                self.edit.setText(v.source.read(a, b - a).hex(" "))
        self.edit.setFocus()
        self.edit.selectAll()


def install(window) -> FindAllPanel:
    panel = FindAllPanel(window)
    dock = bottom_dock(window, "Find All", "dock_findall", panel)
    window.d_findall, window.find_all = dock, panel
    on_document(window.state, lambda _doc: panel.reset())
    a = QAction("Find &All…", window)
    a.setShortcut(QKeySequence("Ctrl+Shift+A"))
    a.setStatusTip("List every match (hex with ?? wildcards, regex, text, values) in the current tab")
    a.triggered.connect(lambda: panel.focus(dock))
    menu(window, "&Edit").addAction(a)
    menu(window, "&View").addAction(dock.toggleViewAction())
    return panel
