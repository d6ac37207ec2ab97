"""The Search Dataset dock (Edit ▸ Search Dataset…, Ctrl+Alt+F): node names, values and
the stored bytes of the whole dataset, group members the tree has not opened included.
The search runs in a worker process (`datasetsearch`: first the units, then one task per
unit, sent one at a time so a new search or Cancel waits for one unit at most); hits are
listed as each unit answers. A click opens the hit's member (off the GUI thread, as a
Diagnostics click does) and selects its node."""
from __future__ import annotations

from dataclasses import dataclass
from typing import List, Optional

from PySide6.QtCore import QEvent, QModelIndex, QObject, QPersistentModelIndex, Qt
from PySide6.QtGui import QAction, QKeySequence
from PySide6.QtWidgets import (
    QAbstractItemView,
    QDockWidget,
    QHBoxLayout,
    QHeaderView,
    QLabel,
    QLineEdit,
    QPushButton,
    QTableView,
    QVBoxLayout,
    QWidget,
)

from arrayscope.formats.core.context import key_name

from . import datasetsearch as DS
from .docks import bottom_dock
from .hitsmodel import AppendingHitsModel
from .state import on_document
from .taskprocess import TaskProcess
from .windowmenus import menu

COLS = ("Node", "Found in", "Text")
Index = QModelIndex | QPersistentModelIndex


@dataclass(frozen=True)
class _Target:
    """A hit as the window's go-to-finding takes it (a node path, a source and offset)."""
    node: str
    source: str
    offset: Optional[int]
    status: str
    message: str


class HitsModel(AppendingHitsModel):
    columns = COLS

    def reset(self) -> None:
        self.clear_hits()

    def data(self, index: Index, role: int = 0):
        if not index.isValid():
            return None
        h = self.hits[index.row()]
        if role in (Qt.ItemDataRole.DisplayRole, Qt.ItemDataRole.ToolTipRole):
            c = index.column()
            if c == 0:
                return h.node
            if c == 1:
                return h.what if h.offset is None else f"bytes @0x{h.offset:X}"
            return h.shown
        return None


class DatasetSearchPanel(QWidget):
    def __init__(self, window):
        super().__init__(window)
        self.win = window
        self.worker = TaskProcess(self)
        self._search = 0            # the current search (answers of older ones are dropped)
        self._todo: List[str] = []  # its units not sent yet
        self._total = 0
        self._task: Optional[DS.SearchTask] = None
        self.running = False
        self.edit = QLineEdit(self)
        self.edit.setClearButtonEnabled(True)
        self.edit.setPlaceholderText("a name, a value or text in the bytes, anywhere in the dataset")
        self.edit.returnPressed.connect(self.start)
        self.go_btn = QPushButton("Search", self)
        self.go_btn.clicked.connect(self.start)
        self.cancel_btn = QPushButton("Cancel", self)
        self.cancel_btn.clicked.connect(self.cancel)
        self.cancel_btn.setEnabled(False)
        self.status = QLabel("", self)
        self.model = HitsModel(self)
        self.view = QTableView(self)
        self.view.setModel(self.model)
        self.view.verticalHeader().setVisible(False)
        self.view.verticalHeader().setDefaultSectionSize(self.fontMetrics().height() + 4)
        self.view.setSelectionBehavior(QAbstractItemView.SelectionBehavior.SelectRows)
        self.view.setSelectionMode(QAbstractItemView.SelectionMode.SingleSelection)
        self.view.setWordWrap(False)
        self.view.setTextElideMode(Qt.TextElideMode.ElideMiddle)   # a path keeps its end
        h = self.view.horizontalHeader()
        h.setSectionResizeMode(0, QHeaderView.ResizeMode.Stretch)
        h.setSectionResizeMode(1, QHeaderView.ResizeMode.ResizeToContents)
        h.setSectionResizeMode(2, QHeaderView.ResizeMode.Interactive)
        self.view.setColumnWidth(2, 280)
        self.view.clicked.connect(self.go)
        self.view.activated.connect(self.go)
        row = QHBoxLayout()
        row.setContentsMargins(0, 0, 0, 0)
        row.addWidget(self.edit, 1)
        row.addWidget(self.go_btn)
        row.addWidget(self.cancel_btn)
        lay = QVBoxLayout(self)
        lay.setContentsMargins(2, 2, 2, 2)
        lay.setSpacing(2)
        lay.addLayout(row)
        lay.addWidget(self.status)
        lay.addWidget(self.view, 1)

    # ---- the search ----------------------------------------------------------------------
    def start(self) -> bool:
        text = self.edit.text().strip()
        s = self.win.session
        if not text or s is None:
            self.status.setText("Open a dataset and type what to find." if s is None else "")
            return False
        doc = s.document
        key = getattr(getattr(doc, "ctx", None), "key", None)
        self.worker.share_key(key)
        self._search += 1
        self._task = DS.SearchTask(doc.path, getattr(doc, "format", None),
                                   key_name(key) if key else None, text)
        self._todo = []
        self.model.reset()
        self._set_running(True)
        self.status.setText(f"Searching {doc.path} for {text!r} …")
        self._send(None)
        return True

    def _send(self, unit: Optional[str]) -> None:
        task, search = self._task, self._search
        assert task is not None
        self.worker.submit(DS.run, DS.SearchTask(task.path, task.format, task.key_id, task.text, unit),
                           lambda ok, value: self._answered(search, ok, value))

    def _answered(self, search: int, ok: bool, value) -> None:
        if search != self._search:
            return     # a search replaced or cancelled meanwhile
        if not ok:
            self._set_running(False)
            self.status.setText(f"The search failed: {value}")
            return
        if isinstance(value, DS.Units):
            self._todo = list(value.units)
            self._total = len(self._todo)
            self.model.append(value.hits)
        else:
            self.model.append(value)
        if self._todo:
            self._send(self._todo.pop(0))
            self.status.setText(f"{len(self.model.hits):,} found — {self._total - len(self._todo)} "
                                f"of {self._total} parts searched …")
            return
        self._set_running(False)
        n = len(self.model.hits)
        self.status.setText(f"{n:,} found for {self._task.text!r}" if self._task else "")

    def cancel(self) -> None:
        """Stop now: the unit running ends with the worker (the next search opens the
        dataset again)."""
        if self.running:
            self._search += 1
            self._todo = []
            self.worker.kill()
            self._set_running(False)
            self.status.setText(f"Cancelled — {len(self.model.hits):,} found so far")

    def _set_running(self, on: bool) -> None:
        self.running = on
        self.cancel_btn.setEnabled(on)

    def reset(self) -> None:
        self.cancel()
        self.worker.kill()    # its open dataset is the old one
        self._task = None
        self.model.reset()
        self.status.setText("")

    # ---- a hit -------------------------------------------------------------------------
    def go(self, index: QModelIndex) -> None:
        if not index.isValid() or self.win.session is None:
            return
        h = self.model.hits[index.row()]
        self.win.goto_finding(_Target(h.node, h.source, h.offset, "found",
                                      f"{h.what}: {h.shown}"))

    def focus(self, dock: QDockWidget) -> None:
        dock.show()
        dock.raise_()
        self.edit.setFocus()
        self.edit.selectAll()


class _EndOnClose(QObject):
    """The window closed: its search's worker ends now (quitting waits for no search)."""

    def __init__(self, window, panel: DatasetSearchPanel):
        super().__init__(panel)
        self.panel = panel
        window.installEventFilter(self)

    def eventFilter(self, obj, event) -> bool:
        if event.type() == QEvent.Type.Close:
            self.panel.reset()
        return False


def install(window) -> DatasetSearchPanel:
    panel = DatasetSearchPanel(window)
    _EndOnClose(window, panel)   # a child of the panel: lives as long as it
    dock = bottom_dock(window, "Search Dataset", "dock_dataset_search", panel)
    window.d_dataset_search, window.dataset_search = dock, panel
    on_document(window.state, lambda _doc: panel.reset())
    a = QAction("Search &Dataset…", window)
    a.setShortcut(QKeySequence("Ctrl+Alt+F"))
    a.setStatusTip("Find a name, a value or text in the bytes anywhere in the dataset, "
                   "group members not opened yet included")
    a.triggered.connect(lambda: panel.focus(dock))
    menu(window, "&Edit").addAction(a)
    return panel
