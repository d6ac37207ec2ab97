"""A table of search hits that grows as a background search reports them (Find All, Search
Dataset): rows appended in batches, one header row of column names. Subclasses say what a
hit shows in each column (`data`)."""
from __future__ import annotations

from typing import Any, List, Sequence

from PySide6.QtCore import QAbstractTableModel, QModelIndex, QPersistentModelIndex, Qt

Index = QModelIndex | QPersistentModelIndex


class AppendingHitsModel(QAbstractTableModel):
    columns: Sequence[str] = ()

    def __init__(self, parent=None):
        super().__init__(parent)
        self.hits: List[Any] = []

    def clear_hits(self) -> None:
        self.beginResetModel()
        self.hits = []
        self.endResetModel()

    def append(self, hits: List[Any]) -> None:
        if not hits:
            return
        first = len(self.hits)
        self.beginInsertRows(QModelIndex(), first, first + len(hits) - 1)
        self.hits.extend(hits)
        self.endInsertRows()

    def rowCount(self, parent: Index = QModelIndex()) -> int:
        return 0 if parent.isValid() else len(self.hits)

    def columnCount(self, parent: Index = QModelIndex()) -> int:
        return len(self.columns)

    def headerData(self, section: int, orientation: Qt.Orientation, role: int = 0):
        if orientation == Qt.Orientation.Horizontal and role == Qt.ItemDataRole.DisplayRole:
            return self.columns[section]
        return None
