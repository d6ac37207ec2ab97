"""A numpy-backed table of typed cells (only the rows on screen are formatted)."""
from __future__ import annotations

from typing import Optional

import numpy as np
from PySide6.QtCore import QAbstractTableModel, QModelIndex, Qt

from arrayscope.formats.cursor import format_scalar
from arrayscope.formats.tiledb.enums import BYTE_STRING_TYPES, DATATYPE_NAMES, DATETIME_UNITS, TIME_UNITS
from arrayscope.formats.tiledb.tile_cells import scalar_text

from . import theme

_DISPLAYROLE = int(Qt.DisplayRole.value)
_FONTROLE = int(Qt.FontRole.value)
_FOREGROUNDROLE = int(Qt.ForegroundRole.value)
_TEXTALIGNMENTROLE = int(Qt.TextAlignmentRole.value)
_TOOLTIPROLE = int(Qt.ToolTipRole.value)



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
        if dt in DATETIME_UNITS or dt in TIME_UNITS:
            return scalar_text(dt, v)
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


class TileCellsModel(QAbstractTableModel):
    """The cells of one tile with its sibling tiles paired (`formats.tiledb.tile_cells`):
    strings as text, var numerics as lists, nulls greyed. Backed by the TileCells' numpy
    arrays; a row is formatted only when it is painted."""

    COLS = ("Value", "Offset", "Size", "Bytes")

    def __init__(self, parent=None):
        super().__init__(parent)
        self.tc = None
        self._mono = theme.mono_font()
        self._italic = theme.mono_font()
        self._italic.setItalic(True)

    def set_tile(self, tc) -> None:
        self.beginResetModel()
        self.tc = tc
        self.endResetModel()

    def rowCount(self, parent=QModelIndex()):
        return 0 if parent.isValid() or self.tc is None else int(self.tc.count)

    def columnCount(self, parent=QModelIndex()):
        return 0 if parent.isValid() else len(self.COLS)

    def headerData(self, s, o, role=Qt.DisplayRole):
        if role != _DISPLAYROLE:
            return None
        if o == Qt.Vertical:
            return str(s)
        if s == 0 and self.tc is not None:
            name = DATATYPE_NAMES.get(self.tc.datatype, "value")
            return f"{self.tc.where.field_name} ({name}{', var' if self.tc.var is not None else ''})"
        if s == 1 and self.tc is not None and self.tc.var is not None:
            return "Offset (var tile)"
        return self.COLS[s]

    def data(self, index, role=Qt.DisplayRole):
        if not index.isValid() or self.tc is None:
            return None
        r, c = index.row(), index.column()
        tc = self.tc
        if role == _DISPLAYROLE:
            if c == 0:
                return tc.text(r)
            if c == 1:
                return f"0x{tc.location(r):X}"
            if c == 2:
                return f"{len(tc.raw(r)):,}"
            raw = tc.raw(r)
            return raw[:16].hex(" ") + (" …" if len(raw) > 16 else "")
        if role == _FOREGROUNDROLE and c == 0 and tc.is_null(r):
            return theme.muted_color()
        if role == _FONTROLE:
            if c == 0 and tc.is_null(r):
                return self._italic
            if c in (1, 3):
                return self._mono
        if role == _TOOLTIPROLE and c == 0:
            if tc.is_null(r):
                return f"cell {r}: null (validity byte 0 in {tc.sources.get('validity', '')})"
            return tc.text(r, limit=2000)
        if role == _TEXTALIGNMENTROLE and c in (1, 2):
            return int(Qt.AlignRight | Qt.AlignVCenter)
        return None
