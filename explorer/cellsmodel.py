"""A numpy-backed table of typed cells (only the rows on screen are formatted)."""
from __future__ import annotations

from typing import Optional

import numpy as np
from PySide6.QtCore import QAbstractTableModel, QModelIndex, Qt

from formats.cursor import format_scalar
from formats.tiledb.enums import BYTE_STRING_TYPES, DATATYPE_NAMES, DATETIME_UNITS, TIME_UNITS

from . import theme

_DISPLAYROLE = int(Qt.DisplayRole.value)
_FONTROLE = int(Qt.FontRole.value)
_TEXTALIGNMENTROLE = int(Qt.TextAlignmentRole.value)



class CellsModel(QAbstractTableModel):
    def __init__(self, parent=None):
        super().__init__(parent)
        self.arr: np.ndarray = np.zeros(0, dtype="u1")
        self.datatype = 6
        self.offset = 0   # byte offset of cell 0 in its source (for the Offset column)
        self._mono = theme.mono_font()

    def set_cells(self, arr: Optional[np.ndarray], datatype: int, offset: int = 0) -> None:
        self.beginResetModel()
        self.arr = arr if arr is not None else np.zeros(0, dtype="u1")
        self.datatype = datatype
        self.offset = offset
        self.endResetModel()

    @property
    def per_row(self) -> int:
        return 1 if self.arr.ndim == 1 else self.arr.shape[1]

    def rowCount(self, parent=QModelIndex()):
        return 0 if parent.isValid() else int(self.arr.shape[0])

    def columnCount(self, parent=QModelIndex()):
        return 0 if parent.isValid() else 2 + self.per_row

    def headerData(self, s, o, role=Qt.DisplayRole):
        if role != _DISPLAYROLE:
            return None
        if o == Qt.Vertical:
            return str(s)
        if s == 0:
            return "Offset"
        if s == self.columnCount() - 1:
            return "Bytes"
        name = DATATYPE_NAMES.get(self.datatype, "value")
        return name if self.per_row == 1 else f"{name} [{s - 1}]"

    def value_text(self, v) -> str:
        dt = self.datatype
        if dt in DATETIME_UNITS:
            iv = int(v)
            if iv == -(2 ** 63):
                return "NaT"
            return f"{np.datetime64(iv, DATETIME_UNITS[dt])}  ({iv})"
        if dt in TIME_UNITS:
            return f"{int(v)} {TIME_UNITS[dt]}"
        if dt in BYTE_STRING_TYPES:
            c = int(v)
            return repr(chr(c)) if 32 <= c < 127 else f"\\x{c:02x}"
        if dt == 41:
            return "true" if v else "false"
        return format_scalar(v.item() if hasattr(v, "item") else v)

    def data(self, index, role=Qt.DisplayRole):
        if not index.isValid():
            return None
        r, c = index.row(), index.column()
        row = self.arr[r]
        if role == _DISPLAYROLE:
            if c == 0:
                return f"0x{self.offset + r * self.arr.itemsize * self.per_row:X}"
            if c == self.columnCount() - 1:
                return np.ascontiguousarray(row).tobytes().hex(" ")
            v = row if self.arr.ndim == 1 else row[c - 1]
            return self.value_text(v)
        if role == _FONTROLE and c in (0, self.columnCount() - 1):
            return self._mono
        if role == _TEXTALIGNMENTROLE and 0 < c < self.columnCount() - 1:
            return int(Qt.AlignRight | Qt.AlignVCenter)
        return None
