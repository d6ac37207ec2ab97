"""A TileDB chunk's cells as a `plugin.CellTable`: the typed cells of one reversed chunk, or
a tile's cells paired with its sibling tiles (offsets, var data, validity). Rows are
numpy-backed and formatted only when asked for. Each row has its coordinates (`cell_coords`)
and its byte ranges in the decoded buffers (`cell_ranges`)."""
from __future__ import annotations

from typing import Callable, Dict, List, Optional, Tuple

import numpy as np

from ...core.cursor import format_scalar
from ...core.node import Node
from ...core.plugin import CellRange, Column
from ...filters.enums import BYTE_STRING_TYPES, DATATYPE_NAMES, DATETIME_UNITS, TIME_UNITS, Datatype
from .cell_coords import TileCoords
from .tile_cells import FieldTile, TileCells, scalar_text

Buffer = Tuple[object, int]   # (source, offset of the tile's first decoded byte in it)


def coords_columns(coords: Optional[TileCoords]) -> List[Column]:
    """A column per dimension, first in a row: a cell's coordinates beside its value."""
    if coords is None:
        return []
    tip = "coordinate of the cell" + (f" ({coords.error})" if coords.error else
                                      " (implied by the tile's position for dense fragments)")
    return [Column(name, f"{name}: {tip}", numeric=True) for name in coords.names]


class TypedCells:
    """The cells of one chunk: coordinates (when known, a column per dimension), one column
    per value of a cell, the cell's offset in the chunk, its bytes. `first` is the chunk's
    first cell's index in its tile; `buffer` where the chunk's cells are (the stage-0
    source, or the file when unfiltered)."""

    def __init__(self, arr: np.ndarray, datatype: int, caption: str, cells_node: Optional[Node],
                 coords: Optional[TileCoords] = None, first: int = 0,
                 buffer: Optional[Buffer] = None):
        self.arr = arr
        self.datatype = datatype
        self.caption = caption
        self.cells_node = cells_node
        self.coords = coords
        self.first = first
        self.buffer = buffer
        name = DATATYPE_NAMES.get(datatype, "value")
        values = [Column(name, numeric=True)] if self.per_row == 1 else \
            [Column(f"{name} [{i}]", numeric=True) for i in range(self.per_row)]
        self.lead = coords_columns(coords)
        self.columns: List[Column] = [*self.lead, *values, Column("Offset", mono=True),
                                      Column("Bytes", mono=True)]

    @property
    def row_size(self) -> int:
        return self.arr.itemsize * self.per_row

    def cell_ranges(self, row: int) -> List[CellRange]:
        if self.buffer is None or not 0 <= row < self.row_count():
            return []
        src, base = self.buffer
        return [CellRange(src, base + row * self.row_size, self.row_size)]

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
        bits = 8 * v.dtype.itemsize if isinstance(v, np.floating) else 64   # float32 as float32
        return format_scalar(v.item() if hasattr(v, "item") else v, bits)

    def text(self, row: int, col: int) -> str:
        r = self.arr[row]
        lead = len(self.lead)
        if col < lead:
            return self.coords.part_text(self.first + row, col) if self.coords is not None else ""
        col -= lead
        if col < self.per_row:
            return self.value_text(r if self.arr.ndim == 1 else r[col])
        if col == self.per_row:
            return f"0x{row * self.arr.itemsize * self.per_row:X}"
        return np.ascontiguousarray(r).tobytes().hex(" ")

    def muted(self, row: int, col: int) -> bool:
        return False

    def tooltip(self, row: int, col: int) -> Optional[str]:
        return None

    def node_of_row(self, row: int) -> Optional[Node]:
        c = self.cells_node
        return c.child(row) if c is not None and row < c.child_count() else None

    def row_of_node(self, node: Node) -> Optional[int]:
        c = self.cells_node
        if c is None or node.parent is not c or not self.row_size:
            return None
        return (node.offset - c.offset) // self.row_size


class PairedCells:
    """The cells of one tile with its sibling tiles paired (`tile_cells`): strings as text,
    var numerics as lists, nulls greyed."""

    def __init__(self, tc: TileCells, where: FieldTile, coords: Optional[TileCoords] = None,
                 buffers: Optional[Callable[[str], Optional[Buffer]]] = None):
        self.tc = tc
        self.where = where
        self.coords = coords
        self.buffers = buffers     # part -> where its decoded tile is (made on first use)
        self._buf: Dict[str, Optional[Buffer]] = {}
        name = DATATYPE_NAMES.get(tc.datatype, "value")
        var = tc.var is not None
        self.lead = coords_columns(coords)
        self.columns: List[Column] = [
            *self.lead,
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

    def _part(self, part: str) -> Optional[Buffer]:
        if part not in self._buf:
            self._buf[part] = self.buffers(part) if self.buffers is not None else None
        return self._buf[part]

    def cell_ranges(self, row: int) -> List[CellRange]:
        """The cell's value bytes (or its offset entry and var bytes) and validity byte, the
        part of the selected chunk's file first."""
        tc = self.tc
        if not 0 <= row < tc.count:
            return []
        want: List[Tuple[str, str, int, int]] = []   # (file part, range part, offset, length)
        if tc.var is not None:
            if self.tc.sources.get("fixed") and not any("rebuilt" in n for n in tc.notes):
                want.append(("fixed", "offset", 8 * row, 8))
            assert tc.starts is not None and tc.ends is not None
            a, b = int(tc.starts[row]), int(tc.ends[row])
            want.append(("var", "var", a, b - a))
        else:
            want.append(("fixed", "value", tc.location(row), len(tc.raw(row))))
        if tc.validity is not None:
            want.append(("validity", "validity", row, 1))
        want.sort(key=lambda w: w[0] != self.where.part)
        out = []
        for part, what, off, n in want:
            buf = self._part(part)
            if buf is not None:
                out.append(CellRange(buf[0], buf[1] + off, n, what))
        return out

    def text(self, row: int, col: int) -> str:
        tc = self.tc
        lead = len(self.lead)
        if col < lead:
            return self.coords.part_text(row, col) if self.coords is not None else ""
        col -= lead
        if col == 0:
            return tc.text(row)
        if col == 1:
            return f"0x{tc.location(row):X}"
        raw = tc.raw(row)
        if col == 2:
            return f"{len(raw):,}"
        return raw[:16].hex(" ") + (" …" if len(raw) > 16 else "")

    def muted(self, row: int, col: int) -> bool:
        return col == len(self.lead) and self.tc.is_null(row)

    def tooltip(self, row: int, col: int) -> Optional[str]:
        if col != len(self.lead):
            return None
        if self.tc.is_null(row):
            return f"cell {row}: null (validity byte 0 in {self.tc.sources.get('validity', '')})"
        return self.tc.text(row, limit=2000)

    def node_of_row(self, row: int) -> Optional[Node]:
        return None

    def row_of_node(self, node: Node) -> Optional[int]:
        return None
