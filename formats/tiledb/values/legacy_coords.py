"""The coordinates of formats 1–4 sparse fragments: one `__coords.tdb` holding every
dimension (all dimensions of those formats share one datatype).

Format 1 (TileDB 1.4) stores each cell's coordinates together ("zipped": x0 y0 x1 y1 ...).
From format 2 (TileDB 1.5) each tile is split before filtering: the tile's values of the first
dimension, then those of the second... (`Tile::split_coordinates`); readers zip them back."""
from __future__ import annotations

from typing import List, Sequence, Tuple

import numpy as np

SPLIT_FROM = 2  # the first format version whose coordinate tiles are split by dimension


def dimension_values(buf, bounds: Sequence[Tuple[int, int]], ndims: int, dim: int,
                     cell_size: int, version: int) -> bytes:
    """The bytes of dimension `dim`'s coordinates, in cell order, from the decoded tiles of
    `__coords.tdb` (`bounds`: each tile's [start, end) in `buf`). Raises ValueError when a
    tile is not a whole number of cells."""
    data = np.frombuffer(buf, np.uint8)
    per_cell = ndims * cell_size
    out: List[np.ndarray] = []
    for i, (a, b) in enumerate(bounds):
        size = b - a
        if size % per_cell:
            raise ValueError(f"coordinate tile {i + 1}: {size} bytes is not a whole number of "
                             f"{ndims}-dimensional cells of {cell_size} B")
        n = size // per_cell
        tile = data[a:b]
        if version >= SPLIT_FROM:
            out.append(tile[dim * n * cell_size:(dim + 1) * n * cell_size])
        else:
            out.append(tile.reshape(n, ndims, cell_size)[:, dim, :].reshape(-1))
    return np.concatenate(out).tobytes() if out else b""
