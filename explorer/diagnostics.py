"""Expert info (Wireshark style): every warning and error with its source and offset."""
from __future__ import annotations

from typing import List

from PySide6.QtCore import QAbstractTableModel, QModelIndex, QSortFilterProxyModel, Qt, Signal
from PySide6.QtWidgets import (QAbstractItemView, QComboBox, QHBoxLayout, QHeaderView, QLabel,
                               QTableView, QVBoxLayout, QWidget)

from . import theme

COLS = ("Severity", "Message", "Source", "Offset", "Node")

_DECORATIONROLE = int(Qt.DecorationRole.value)
_DISPLAYROLE = int(Qt.DisplayRole.value)
_TOOLTIPROLE = int(Qt.ToolTipRole.value)
_USERROLE = int(Qt.UserRole.value)



class DiagnosticsModel(QAbstractTableModel):
    def __init__(self, parent=None):
        super().__init__(parent)
        self.nodes: List[object] = []

    def set_nodes(self, nodes) -> None:
        self.beginResetModel()
        self.nodes = list(nodes)
        self.endResetModel()

    def rowCount(self, parent=QModelIndex()):
        return 0 if parent.isValid() else len(self.nodes)

    def columnCount(self, parent=QModelIndex()):
        return len(COLS)

    def headerData(self, s, o, role=Qt.DisplayRole):
        if o == Qt.Horizontal and role == _DISPLAYROLE:
            return COLS[s]
        return None

    def data(self, index, role=Qt.DisplayRole):
        if not index.isValid():
            return None
        n = self.nodes[index.row()]
        c = index.column()
        if role == _DISPLAYROLE:
            if c == 0:
                return n.status
            if c == 1:
                return n.message or ""
            if c == 2:
                return n.source if isinstance(n.source, str) else getattr(n.source, "name", "")
            if c == 3:
                return "" if isinstance(n.source, str) else f"0x{n.offset:X}"
            if c == 4:
                return n.path()
        if role == _DECORATIONROLE and c == 0:
            return theme.status_icon(n.status)
        if role == _TOOLTIPROLE:
            return f"{n.message}\n{n.path()}"
        if role == _USERROLE:
            return n
        if role == _USERROLE + 1:  # sort keys
            return (0 if n.status == "error" else 1) if c == 0 else n.offset if c == 3 else \
                self.data(index, Qt.DisplayRole)
        return None


class DiagnosticsPanel(QWidget):
    nodeActivated = Signal(object)
    countsChanged = Signal(int, int)

    def __init__(self, parent=None):
        super().__init__(parent)
        self.model = DiagnosticsModel(self)
        self.proxy = QSortFilterProxyModel(self)
        self.proxy.setSourceModel(self.model)
        self.proxy.setSortRole(_USERROLE + 1)
        self.proxy.setFilterKeyColumn(0)
        self.view = QTableView(self)
        self.view.setModel(self.proxy)
        self.view.setSortingEnabled(True)
        self.view.setSelectionBehavior(QAbstractItemView.SelectRows)
        self.view.setSelectionMode(QAbstractItemView.SingleSelection)
        self.view.setEditTriggers(QAbstractItemView.NoEditTriggers)
        self.view.verticalHeader().setVisible(False)
        self.view.verticalHeader().setDefaultSectionSize(self.fontMetrics().height() + 4)
        self.view.setWordWrap(False)
        self.view.setAlternatingRowColors(True)
        h = self.view.horizontalHeader()
        h.setStretchLastSection(False)
        h.setMinimumSectionSize(40)
        h.setSectionResizeMode(0, QHeaderView.Fixed)
        h.setSectionResizeMode(1, QHeaderView.Stretch)
        self.view.setColumnWidth(0, 80)
        self.view.setColumnWidth(2, 170)
        self.view.setColumnWidth(3, 70)
        self.view.setColumnWidth(4, 150)
        self.show_combo = QComboBox(self)
        self.show_combo.addItems(["Errors and warnings", "Errors only", "Warnings only"])
        self.show_combo.currentIndexChanged.connect(self._filter)
        self.summary = QLabel("", self)
        top = QHBoxLayout()
        top.setContentsMargins(0, 0, 0, 0)
        top.addWidget(self.summary)
        top.addStretch(1)
        top.addWidget(self.show_combo)
        lay = QVBoxLayout(self)
        lay.setContentsMargins(2, 2, 2, 2)
        lay.setSpacing(2)
        lay.addLayout(top)
        lay.addWidget(self.view, 1)
        self.view.clicked.connect(self._activate)
        self.view.activated.connect(self._activate)

    def set_nodes(self, nodes) -> None:
        self.model.set_nodes(nodes)
        self.view.sortByColumn(0, Qt.AscendingOrder)
        errors = sum(1 for n in self.model.nodes if n.status == "error")
        warns = len(self.model.nodes) - errors
        self.summary.setText(f"{errors} error{'s' * (errors != 1)}, {warns} warning{'s' * (warns != 1)}"
                             if self.model.nodes else "No problems found.")
        self.countsChanged.emit(errors, warns)

    def _filter(self, i: int) -> None:
        self.proxy.setFilterFixedString(["", "error", "warning"][i])

    def _activate(self, index) -> None:
        n = self.proxy.data(index, Qt.UserRole)
        if n is not None:
            self.nodeActivated.emit(n)
