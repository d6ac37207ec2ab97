"""A TileDB chunk's cells as a `plugin.CellTable`: the typed cells of one reversed chunk, or
a tile's cells paired with its sibling tiles (offsets, var data, validity). Rows are
numpy-backed and formatted only when asked for."""
from __future__ import annotations

from typing import List, Optional

import numpy as np

from ..cursor import format_scalar
from ..node import Node
from ..plugin import Column
from .enums import BYTE_STRING_TYPES, DATATYPE_NAMES, DATETIME_UNITS, TIME_UNITS, Datatype
from .tile_cells import FieldTile, TileCells, scalar_text


class TypedCells:
    """The cells of one chunk: an Offset column, one column per value of a cell, the bytes."""

    def __init__(self, arr: np.ndarray, datatype: int, caption: str, cells_node: Optional[Node]):
        self.arr = arr
        self.datatype = datatype
        self.caption = caption
        self.cells_node = cells_node
        name = DATATYPE_NAMES.get(datatype, "value")
        values = [Column(name, numeric=True)] if self.per_row == 1 else \
            [Column(f"{name} [{i}]", numeric=True) for i in range(self.per_row)]
        self.columns: List[Column] = [Column("Offset", mono=True), *values, Column("Bytes", mono=True)]

    @property
    def per_row(self) -> int:
        return 1 if self.arr.ndim == 1 else int(self.arr.shape[1])

    def row_count(self) -> int:
        return int(self.arr.shape[0])

    def value_text(self, v) -> str:
        dt = self.datatype
        if dt in DATETIME_UNITS or dt in TIME_UNITS:
            return scalar_text(dt, v)
        if dt in BYTE_STRING_TYPES:
            c = int(v)
            return repr(chr(c)) if 32 <= c < 127 else f"\\x{c:02x}"
        if dt == Datatype.BOOL:
            return "true" if v else "false"
        return format_scalar(v.item() if hasattr(v, "item") else v)

    def text(self, row: int, col: int) -> str:
        r = self.arr[row]
        if col == 0:
            return f"0x{row * self.arr.itemsize * self.per_row:X}"
        if col == len(self.columns) - 1:
            return np.ascontiguousarray(r).tobytes().hex(" ")
        return self.value_text(r if self.arr.ndim == 1 else r[col - 1])

    def muted(self, row: int, col: int) -> bool:
        return False

    def tooltip(self, row: int, col: int) -> Optional[str]:
        return None

    def node_of_row(self, row: int) -> Optional[Node]:
        c = self.cells_node
        return c.child(row) if c is not None and row < c.child_count() else None

    def row_of_node(self, node: Node) -> Optional[int]:
        return None


class PairedCells:
    """The cells of one tile with its sibling tiles paired (`tile_cells`): strings as text,
    var numerics as lists, nulls greyed."""

    def __init__(self, tc: TileCells, where: FieldTile):
        self.tc = tc
        name = DATATYPE_NAMES.get(tc.datatype, "value")
        var = tc.var is not None
        self.columns: List[Column] = [
            Column(f"{where.field_name} ({name}{', var' if var else ''})"),
            Column("Offset (var tile)" if var else "Offset", numeric=True, mono=True),
            Column("Size", numeric=True), Column("Bytes", mono=True)]
        files = " + ".join(f"{n} ({'offsets' if p == 'fixed' and where.var else p if p != 'fixed' else 'data'})"
                           for p, n in tc.sources.items())
        text = (f"Tile {(where.tile_index or 0) + 1} of {where.field_kind} '{where.field_name}': "
                f"{tc.summary()} — paired from {files}")
        for note in tc.notes:
            text += f"; {note}"
        if tc.error:
            text += f"; error: {tc.error}"
        self.caption = text

    def row_count(self) -> int:
        return int(self.tc.count)

    def text(self, row: int, col: int) -> str:
        tc = self.tc
        if col == 0:
            return tc.text(row)
        if col == 1:
            return f"0x{tc.location(row):X}"
        raw = tc.raw(row)
        if col == 2:
            return f"{len(raw):,}"
        return raw[:16].hex(" ") + (" …" if len(raw) > 16 else "")

    def muted(self, row: int, col: int) -> bool:
        return col == 0 and self.tc.is_null(row)

    def tooltip(self, row: int, col: int) -> Optional[str]:
        if col != 0:
            return None
        if self.tc.is_null(row):
            return f"cell {row}: null (validity byte 0 in {self.tc.sources.get('validity', '')})"
        return self.tc.text(row, limit=2000)

    def node_of_row(self, row: int) -> Optional[Node]:
        return None

    def row_of_node(self, node: Node) -> Optional[int]:
        return None
