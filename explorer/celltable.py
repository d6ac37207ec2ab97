"""A Qt table model over a `formats.core.plugin.CellTable`: a chunk's cells or records, whatever
the format. Only the rows on screen are formatted (the table's `text` is asked per cell)."""
from __future__ import annotations

from typing import Any, Optional

from PySide6.QtCore import QAbstractTableModel, QModelIndex, QPersistentModelIndex, Qt

from arrayscope.formats.core.plugin import CellTable

from . import theme

Index = QModelIndex | QPersistentModelIndex
_ALIGN_RIGHT = int(Qt.AlignmentFlag.AlignRight | Qt.AlignmentFlag.AlignVCenter)


class CellTableModel(QAbstractTableModel):
    def __init__(self, parent=None) -> None:
        super().__init__(parent)
        self.table: Optional[CellTable] = None
        self._mono = theme.mono_font()

    def set_table(self, table: Optional[CellTable]) -> None:
        self.beginResetModel()
        self.table = table
        self.endResetModel()

    def rowCount(self, parent: Index = QModelIndex()) -> int:
        return 0 if parent.isValid() or self.table is None else self.table.row_count()

    def columnCount(self, parent: Index = QModelIndex()) -> int:
        return 0 if parent.isValid() or self.table is None else len(self.table.columns)

    def headerData(self, section: int, orientation: Qt.Orientation,
                   role: int = Qt.ItemDataRole.DisplayRole) -> Any:
        if orientation == Qt.Orientation.Vertical:
            return str(section) if role == Qt.ItemDataRole.DisplayRole else None
        if self.table is None or not 0 <= section < len(self.table.columns):
            return None
        col = self.table.columns[section]
        if role == Qt.ItemDataRole.DisplayRole:
            return col.name
        if role == Qt.ItemDataRole.ToolTipRole and col.tooltip:
            return col.tooltip
        return None

    def data(self, index: Index, role: int = Qt.ItemDataRole.DisplayRole) -> Any:
        t = self.table
        if not index.isValid() or t is None:
            return None
        r, c = index.row(), index.column()
        if role == Qt.ItemDataRole.DisplayRole:
            return t.text(r, c)
        if role == Qt.ItemDataRole.ForegroundRole and t.muted(r, c):
            return theme.muted_color()
        if role == Qt.ItemDataRole.ToolTipRole:
            return t.tooltip(r, c)
        col = t.columns[c]
        if role == Qt.ItemDataRole.FontRole and col.mono:
            return self._mono
        if role == Qt.ItemDataRole.TextAlignmentRole and col.numeric:
            return _ALIGN_RIGHT
        return None
