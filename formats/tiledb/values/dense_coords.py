"""The coordinates of a dense fragment's cells, which the fragment does not store.

A dense fragment has no dimension data files: its coordinates are implied by the array
schema and the fragment's non-empty domain. The fragment stores every cell of every space
tile that intersects its non-empty domain, i.e. of the non-empty domain expanded outwards
to tile boundaries (tiles are counted from the dimension's domain low bound: tile `t` of
a dimension covers `[lo + t·extent, lo + (t + 1)·extent - 1]`). Tiles follow one another in
the schema's tile order (row- or col-major over the grid of those tiles); inside a tile the
`Π extent` cells follow the schema's cell order (row- or col-major). So an attribute's data
file holds `tile count × cells per tile` cells, and cell `i` of it has the coordinates
`dense_coords(...)[i]` gives. Cells a partial write did not cover are stored too (as zeros,
see `values.py`), and they get their coordinates like any other cell.

Edge tiles: when a dimension's domain is not a multiple of its tile extent, its last tile
reaches past the domain's high bound. TileDB still stores the whole tile (checked: a 20-cell
domain with extent 8 stores 3 × 8 = 24 cells per attribute, the last 4 zero), so those cells
get coordinates here too, by the same arithmetic: they continue past the domain
(`hi + 1, hi + 2, …`). TileDB itself never returns them: reading them through tiledb-py
(`A.multi_index`, `A.query(coords=True)`) fails with "Range … is out of domain bounds", so
these values are the positions the tile grid gives the stored bytes, not coordinates a
reader can query. When the domain expanded to whole tiles does not fit the dimension's
datatype (uint8 domain [0, 250], extent 100: the last tile would end at 299), TileDB 2.30
creates the array but refuses to write into that last tile ("Write tile overflow; would write
out of bounds"), so no fragment it writes has such a tile; for a file that has one anyway the
arithmetic wraps around modulo 2^bits, as C++ arithmetic on the datatype would.

Dense arrays have integer or datetime/time dimensions only (TileDB requires it, and all
dimensions of one type); anything else is a `ValueError`. A null tile extent (which TileDB
replaces by the domain's range when the array is created) is taken as the domain's range.
Everything is vectorised: no Python loop over cells or tiles.
"""
from __future__ import annotations

import math
from typing import List, Optional, Sequence, Tuple

import numpy as np

from ...filters.enums import DATATYPES, numpy_dtype
from ..model.array_model import ArraySchema

ROW_MAJOR, COL_MAJOR = 0, 1
MAX_CELLS = 1 << 36   # more cells than any fragment could store: refuse, not MemoryError

# INT32, INT64, INT8, UINT8, INT16, UINT16, UINT32, UINT64, DATETIME_*, TIME_*
DENSE_DIM_TYPES = frozenset([0, 1, 5, 6, 7, 8, 9, 10]) | frozenset(range(18, 40))


def _int_kind(datatype: int) -> bool:
    return datatype in DENSE_DIM_TYPES


def tile_grid(schema: ArraySchema, non_empty_domain: Sequence[Tuple[int, int]]
              ) -> List[Tuple[int, int, int]]:
    """Per dimension `(first coordinate of the first tile, tile count, extent)` of the
    fragment's non-empty domain expanded to whole tiles."""
    dims = schema.dimensions
    if not dims:
        raise ValueError("the schema has no dimensions")
    if non_empty_domain is None or len(non_empty_domain) != len(dims):
        raise ValueError(f"the fragment's non-empty domain has "
                         f"{0 if non_empty_domain is None else len(non_empty_domain)} ranges "
                         f"for {len(dims)} dimensions")
    out = []
    for d, rng in zip(dims, non_empty_domain):
        if d.var or not _int_kind(d.datatype) or d.domain is None:
            raise ValueError(f"dimension {d.name!r}: dense arrays have integer or datetime "
                             f"dimensions only (datatype {DATATYPES.get(d.datatype, ('?',))[0]})")
        dlo, dhi = int(d.domain[0]), int(d.domain[1])
        lo, hi = int(rng[0]), int(rng[1])
        ext = int(d.tile_extent) if d.tile_extent is not None else dhi - dlo + 1
        if ext <= 0:
            raise ValueError(f"dimension {d.name!r}: tile extent {ext} is not positive")
        if lo > hi:
            raise ValueError(f"dimension {d.name!r}: non-empty domain [{lo}, {hi}] is empty")
        t0, t1 = (lo - dlo) // ext, (hi - dlo) // ext
        out.append((dlo + t0 * ext, t1 - t0 + 1, ext))
    return out


def _axis_pattern(sizes: List[int], k: int, order: int) -> Tuple[int, int, int]:
    """(outer repeats, this axis' size, inner repeats) of axis `k` of a grid of `sizes`
    traversed in `order` (row-major: the last axis varies fastest)."""
    if order == ROW_MAJOR:
        outer, inner = sizes[:k], sizes[k + 1:]
    elif order == COL_MAJOR:
        outer, inner = sizes[k + 1:], sizes[:k]
    else:
        raise ValueError(f"layout {order} is not row- or col-major (dense arrays have no other)")
    return int(np.prod(outer, dtype=object)), sizes[k], int(np.prod(inner, dtype=object))


def _pattern_index(sizes: List[int], k: int, order: int) -> np.ndarray:
    """Index along axis `k` of every position of the grid `sizes`, in `order`."""
    outer, n, inner = _axis_pattern(sizes, k, order)
    idx = np.arange(n, dtype=np.int64)
    return np.broadcast_to(idx[None, :, None], (outer, n, inner)).reshape(-1)


def cell_count(schema: ArraySchema, non_empty_domain) -> int:
    """Cells the fragment stores per fixed-size field: tile count × cells per tile."""
    grid = tile_grid(schema, non_empty_domain)
    n = 1
    for _start, tiles, ext in grid:
        n *= tiles * ext
    return n


def dense_coords(schema: ArraySchema, non_empty_domain, dim: int) -> np.ndarray:
    """Coordinate along dimension `dim` (index into `schema.dimensions`) of every cell a dense
    fragment with `non_empty_domain` stores, in stored order: a little-endian array of the
    dimension's datatype (datetimes and times as their int64 counts)."""
    grid = tile_grid(schema, non_empty_domain)
    d = schema.dimensions[dim]
    total = cell_count(schema, non_empty_domain)
    if total > MAX_CELLS:
        raise ValueError(f"the fragment's tiles would hold {total} cells: not a plausible "
                         f"dense fragment")
    tiles = [t for _s, t, _e in grid]
    exts = [e for _s, _t, e in grid]
    start, _n, ext = grid[dim]
    # stored index i = tile position × cells per tile + cell position; the coordinate is
    # start + (tile index along dim) × extent + (cell index along dim)
    # (computed in the unsigned type of the same width: modular, as the C++ arithmetic)
    dt = numpy_dtype(d.datatype).newbyteorder("<")
    udt = np.dtype(f"<u{dt.itemsize}")
    tile_pos = _pattern_index(tiles, dim, schema.tile_order)             # one per tile
    tile_base = (tile_pos.astype(np.uint64) * np.uint64(ext % (1 << 64))
                 + np.uint64(start % (1 << 64))).astype(udt)             # wraps like the type
    cell_part = _pattern_index(exts, dim, schema.cell_order).astype(udt)  # one per tile cell
    out = np.empty((len(tile_base), len(cell_part)), udt)
    np.add(tile_base[:, None], cell_part[None, :], out=out)
    return out.reshape(-1).view(dt)


def fragment_dense_coords(schema: ArraySchema, fm, dim: int) -> np.ndarray:
    """`dense_coords` for a parsed `FragmentMetadata` (its non-empty domain)."""
    ned: Optional[list] = getattr(fm, "non_empty_domain", None)
    if not ned:
        raise ValueError("the fragment metadata gives no non-empty domain")
    # the domain is untrusted: a damaged bound must not make coordinates for more tiles
    # than the fragment's tile offsets hold (bytes present), whatever MAX_CELLS allows
    grid_tiles = math.prod(t for _s, t, _e in tile_grid(schema, ned))
    stored = _stored_tiles(fm)
    if stored is not None and grid_tiles > stored:
        raise ValueError(f"the non-empty domain spans {grid_tiles} tiles; the fragment "
                         f"stores {stored}")
    return dense_coords(schema, ned, dim)


def _stored_tiles(fm) -> Optional[int]:
    """The most tiles any field's tile offsets list (None: none is readable)."""
    offsets = getattr(fm, "tile_offsets", None)
    best: Optional[int] = None
    if offsets is None:
        return None
    try:
        for i in range(len(offsets)):
            arr = offsets[i]
            if arr is not None:
                best = max(best or 0, len(arr))
    except Exception:  # noqa: BLE001 - an unreadable section: no bound from it
        return best
    return best
