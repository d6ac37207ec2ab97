"""The coordinates of one tile's cells, for the pipeline panel's cell table (no Qt).

A dense fragment stores no coordinates: tile `t` of the fragment (in the schema's tile
order over the grid of its non-empty domain expanded to whole tiles) holds `Π extent` cells
in the schema's cell order, so cell `i` of the tile has the coordinates `dense_coords`'
arithmetic gives, computed here for that one tile only. A sparse fragment stores them: tile
`t` of dimension `dN.tdb` holds the `N`-th coordinate of the same cells as tile `t` of every
attribute (`format_spec/fragment.md`), decoded like any field (`tile_cells`)."""
from __future__ import annotations

import dataclasses
from typing import List, Optional, Sequence

import numpy as np

from ...filters.enums import numpy_dtype
from ..model.array_model import ArraySchema, Dimension
from ..parse.data_files import file_role
from ..values.dense_coords import COL_MAJOR, ROW_MAJOR, _pattern_index, tile_grid
from .tile_cells import FieldTile, TileCells, scalar_text, tile_cells

MAX_TILE_CELLS = 1 << 28   # a tile with more cells than this is not a real dense tile


class TileCoords:
    """Per dimension, the coordinate of each cell of one tile (cell index in the tile)."""

    def __init__(self, names: List[str], datatypes: List[int], columns: Sequence[object],
                 error: Optional[str] = None):
        self.names = names
        self.datatypes = datatypes
        self.columns: Sequence = columns    # np.ndarray (dense, fixed sparse) or TileCells (var sparse)
        self.error = error

    @property
    def header(self) -> str:
        return "(" + ", ".join(self.names) + ")"

    def count(self) -> int:
        return min((_len(c) for c in self.columns), default=0)

    def value(self, i: int, d: int):
        c = self.columns[d]
        if isinstance(c, TileCells):
            return c.value(i)
        return c[i].item()

    def text(self, i: int) -> str:
        if not 0 <= i < self.count():
            return ""
        return "(" + ", ".join(self.part_text(i, d) for d in range(len(self.columns))) + ")"

    def part_text(self, i: int, d: int) -> str:
        """Cell i's coordinate on dimension d, as the cells table shows it."""
        if not 0 <= i < self.count():
            return ""
        c = self.columns[d]
        if isinstance(c, TileCells):
            return c.text(i, limit=40)
        return _short(scalar_text(self.datatypes[d], c[i]))


def _len(c) -> int:
    return int(c.count) if isinstance(c, TileCells) else len(c)


def _short(text: str) -> str:
    # datetimes read "2024-05-01T00:00 (…)": the table shows the date part only
    return text.split(" (", 1)[0]


def dense_tile_coords(schema, non_empty_domain, tile: int) -> List[np.ndarray]:
    """Coordinates (one array per dimension, little-endian of its datatype) of the cells of
    tile `tile` of a dense fragment, in stored order."""
    grid = tile_grid(schema, non_empty_domain)
    tiles = [t for _s, t, _e in grid]
    exts = [e for _s, _t, e in grid]
    per_tile = int(np.prod(exts, dtype=object))
    if per_tile > MAX_TILE_CELLS:
        raise ValueError(f"a tile of {per_tile} cells is not a plausible dense tile")
    n_tiles = int(np.prod(tiles, dtype=object))
    if not 0 <= tile < n_tiles:
        raise ValueError(f"tile {tile + 1} is outside the fragment's {n_tiles} tiles")
    order = schema.tile_order
    if order not in (ROW_MAJOR, COL_MAJOR):
        raise ValueError(f"tile order {order} is not row- or col-major")
    pos = np.unravel_index(tile, tiles, order="C" if order == ROW_MAJOR else "F")
    out = []
    for k, d in enumerate(schema.dimensions):
        start, _t, ext = grid[k]
        dt = numpy_dtype(d.datatype).newbyteorder("<")
        udt = np.dtype(f"<u{dt.itemsize}")
        base = np.uint64((start + int(pos[k]) * ext) % (1 << 64)).astype(udt)
        cells = _pattern_index(exts, k, schema.cell_order).astype(udt)
        out.append((cells + base).astype(udt).view(dt))
    return out


def _dim_tile(where: FieldTile, i: int, dim: Dimension) -> Optional[FieldTile]:
    for name in (f"d{i}.tdb", f"{dim.name}.tdb"):
        role = file_role(where.schema, where.fm, name)
        if role is not None and getattr(role.obj, "name", None) == dim.name:
            return dataclasses.replace(where, field_name=dim.name, field_kind="dimension",
                                       obj=role.obj, stem=name[:-4], part="fixed", role=role)
    return None


def tile_coords(document, where: FieldTile, key: Optional[bytes] = None) -> Optional[TileCoords]:
    """The coordinates of the cells of tile `where.tile_index` of `where`'s fragment; None
    when the fragment gives none (a tile of no field, legacy zipped coordinates)."""
    if where.tile_index is None:
        return None
    schema: ArraySchema = where.schema
    fm = where.fm
    dims = list(schema.dimensions)
    names = [d.name for d in dims]
    types = [d.datatype for d in dims]
    if not dims:
        return None
    if fm.dense:
        try:
            return TileCoords(names, types, dense_tile_coords(schema, fm.non_empty_domain,
                                                              where.tile_index))
        except ValueError as e:
            return TileCoords(names, types, [], error=str(e))
    cols: List[object] = []
    for i, d in enumerate(dims):
        ft = _dim_tile(where, i, d)
        if ft is None:
            return None
        tc = tile_cells(document, ft, key)
        if tc.error is not None:
            return TileCoords(names, types, [], error=f"{d.name}: {tc.error}")
        if tc.var is None and tc.fixed is not None and tc.fixed.ndim == 1 and \
                tc.fixed.dtype.kind in "iuf":
            cols.append(tc.fixed)
        else:
            cols.append(tc)
    return TileCoords(names, types, cols)
