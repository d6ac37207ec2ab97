"""The pipeline panel's lower "Cells" tab: a caption and one table of a chunk's values
(typed cells, cells paired with sibling tiles, records: whatever the chunk view gives)."""
from __future__ import annotations

from PySide6.QtWidgets import QAbstractItemView, QLabel, QTableView, QVBoxLayout, QWidget

from arrayscope.formats.plugin import CellTable

from .celltable import CellTableModel

HINT = "Select a tile, a chunk or a cell to see its values."


class CellsPane(QWidget):
    def __init__(self, parent=None) -> None:
        super().__init__(parent)
        self.model = CellTableModel(self)
        self.view = QTableView(self)
        self.view.setModel(self.model)
        self.view.setWordWrap(False)
        self.view.setAlternatingRowColors(True)
        self.view.setEditTriggers(QAbstractItemView.EditTrigger.NoEditTriggers)
        self.view.verticalHeader().setDefaultSectionSize(self.fontMetrics().height() + 4)
        self.view.horizontalHeader().setStretchLastSection(True)
        self.label = QLabel(HINT, self)
        self.label.setWordWrap(True)
        cl = QVBoxLayout(self)
        cl.setContentsMargins(0, 0, 0, 0)
        cl.addWidget(self.label)
        cl.addWidget(self.view, 1)

    def clear(self) -> None:
        self.show_message(HINT)

    def show_table(self, table: CellTable) -> None:
        if self.model.table is table:
            return
        self.model.set_table(table)
        self.label.setText(table.caption)
        h = self.view.horizontalHeader()
        wide = len(table.columns) > 4
        h.setStretchLastSection(not wide)
        if wide:
            self.view.resizeColumnsToContents()
        else:
            self.view.resizeColumnToContents(0)   # coordinates / the value: read in full

    def show_message(self, text: str) -> None:
        self.model.set_table(None)
        self.label.setText(text)

    def select_row(self, row: int) -> None:
        """Follow the selection: make `row` current, without emitting `clicked`."""
        if 0 <= row < self.model.rowCount():
            idx = self.model.index(row, 0)
            self.view.blockSignals(True)
            self.view.setCurrentIndex(idx)
            self.view.scrollTo(idx)
            self.view.blockSignals(False)
