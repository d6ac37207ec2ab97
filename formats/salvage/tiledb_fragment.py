"""A damaged TileDB fragment rewritten without its damaged tiles.

Every finding in the fragment must lie in a data tile (its metadata, footer and files
otherwise whole); the tiles no finding lies in are decoded by the engine (`tile_cells`)
and written back through libtiledb (`libtiledb_write`) under the fragment's timestamps:
- sparse: one fragment of every kept cell (libtiledb sorts them, recomputes tiles, MBRs,
  R-tree, offsets and statistics);
- dense: one fragment per box of intact tiles (a dense write covers a box), the boxes
  clipped to the fragment's non-empty domain, so the damaged tiles' cells read as what
  lies beneath them (an older fragment's cells, or the fill value).
- a consolidated sparse fragment with per-cell write times: one fragment per time.
Anything else (a finding outside the tiles, an old format, delete metadata, a write the
library refuses, no tiledb-py) leaves the fragment out whole, with the reason."""
from __future__ import annotations

import math
import os
from dataclasses import dataclass, field
from typing import Dict, List, Optional, Tuple

import numpy as np

from ..tiledb.model import layout
from ..tiledb.model.array_model import ArraySchema, FragmentMetadata
from ..tiledb.values.dense_coords import fragment_dense_coords, tile_grid
from .job import Job
from .libtiledb_write import ScratchArray, fragment_name, rectangles, unavailable
from .report import Loss
from .tile_cells import TIMESTAMPS, FieldCells, FragmentTiles, NotTileLevel

# one write: the box it covers (dense; None for sparse), its cells, and the time its cells
# were written when the fragment says so per cell (None: the fragment's own timestamps)
Piece = Tuple[Optional[List[Tuple[int, int]]], Dict[str, FieldCells], Optional[int]]


@dataclass
class Rewrite:
    """What a rewrite kept: the fragments written (relative to the array), cells kept and
    lost, and the findings of each tile left out."""

    fragments: List[str] = field(default_factory=list)
    kept: int = 0
    lost: int = 0
    tiles: Dict[int, List[Loss]] = field(default_factory=dict)


def rewrite(job: Job, document, schema: ArraySchema, fm: FragmentMetadata, frag_path: str,
            frag_rel: str, array_rel: str, out_rel: str, why: List[Loss]) -> Rewrite:
    """Write fragment `frag_rel` (of the array at `array_rel` in the dataset) to `out_rel`
    of OUT without its damaged tiles. Raises NotTileLevel (the reason) when it cannot."""
    reason = unavailable()
    if reason:
        raise NotTileLevel(reason)
    name = frag_rel.rsplit("/", 1)[-1]
    parts = name.split("_")   # __t1_t2_uuid_v
    if len(parts) != 6 or not (parts[2].isdigit() and parts[3].isdigit()):
        raise NotTileLevel(f"{name}: not a timestamped fragment name")
    t1, t2, uuid = int(parts[2]), int(parts[3]), parts[4]
    if job.key is not None and not all(0 < b < 0x80 for b in job.key):
        raise NotTileLevel("libtiledb takes the key as configuration text, which cannot "
                           "carry this key's bytes")
    scratch: Optional[ScratchArray] = None
    try:
        tiles = FragmentTiles(document, schema, fm, frag_path, name, job.key)
        full = _join(array_rel, frag_rel)   # as findings name it: from the dataset root
        lost = tiles.damaged(why, full)
        cells, kept_tiles = tiles.kept(lost, full)
        if not kept_tiles:
            raise NotTileLevel("every tile of it is damaged")
        array_path = os.path.dirname(frag_path)
        if frag_rel.startswith(layout.FRAGMENTS_DIR + "/"):
            array_path = os.path.dirname(array_path)
        pieces: List[Piece]
        if fm.dense:
            pieces = _dense_pieces(schema, fm, tiles.tile_num, cells, kept_tiles, lost)
            total = math.prod(int(hi) - int(lo) + 1 for lo, hi in fm.non_empty_domain or [])
        else:
            pieces = _sparse_pieces(cells)
            total = fm.cell_num or 0
        scratch = ScratchArray(_schema_files(job, array_path, fm), job.key)
        # every piece written before anything reaches OUT: a failed write leaves no trace
        made = [scratch.write(at or t2, piece, rect) for rect, piece, at in pieces]
    except NotTileLevel:
        if scratch is not None:
            scratch.close()
        raise
    except Exception as e:  # noqa: BLE001 - the library refused a write: the fragment is lost
        if scratch is not None:
            scratch.close()
        raise NotTileLevel(f"it could not be rewritten: {type(e).__name__}: {e}") from e
    out = Rewrite(tiles=lost)
    try:
        root = os.path.realpath(scratch.root)
        for nth, ((_rect, piece, at), folder) in enumerate(zip(pieces, made)):
            a, b = (at, at) if at else (t1, t2)
            new = fragment_name(a, b, uuid, os.path.basename(folder), nth)
            new_rel = f"{layout.FRAGMENTS_DIR}/{new}"
            for f in sorted(os.listdir(folder)):
                job.out.copy(os.path.realpath(os.path.join(folder, f)), root,
                             _join(out_rel, new_rel, f))
            job.out.write(_join(out_rel, layout.COMMITS_DIR, f"{new}.wrt"), b"")
            out.fragments.append(new_rel)
            out.kept += len(next(iter(piece.values())))
    finally:
        scratch.close()
    out.lost = max(0, total - out.kept)
    return out


def _join(*parts: str) -> str:
    return "/".join(p for p in parts if p and p != ".")


def _schema_files(job: Job, array_path: str, fm: FragmentMetadata) -> Dict[str, bytes]:
    """The schema the fragment was written with and the enumerations: rel -> bytes."""
    out: Dict[str, bytes] = {}
    folder = os.path.join(array_path, layout.SCHEMA_DIR)
    if fm.schema_name and job.fs.stat(os.path.join(folder, fm.schema_name)).is_file:
        out[f"{layout.SCHEMA_DIR}/{fm.schema_name}"] = _read(job, os.path.join(folder, fm.schema_name))
        enums = os.path.join(folder, "__enumerations")
        if job.fs.stat(enums).is_dir:
            for e in job.fs.list(enums):
                if e.is_file:
                    out[f"{layout.SCHEMA_DIR}/__enumerations/{e.name}"] = _read(job, e.path)
    elif job.fs.stat(os.path.join(array_path, layout.LEGACY_SCHEMA_FILE)).is_file:
        out[layout.LEGACY_SCHEMA_FILE] = _read(job, os.path.join(array_path,
                                                                layout.LEGACY_SCHEMA_FILE))
    else:
        raise NotTileLevel(f"the schema it names ({fm.schema_name!r}) is not in the array")
    return out


def _read(job: Job, path: str) -> bytes:
    data, cut = job.fs.read_bytes(path, 1 << 26)
    if cut:
        raise NotTileLevel(f"{job.rel(path)}: too large for a schema file")
    return data


def _sparse_pieces(cells: Dict[str, FieldCells]) -> List[Piece]:
    """One write of every kept cell; for a fragment with per-cell write times (consolidated
    sparse), one write per time, made at that time: a reader at any T then reads exactly
    the cells it read in the consolidated fragment (libtiledb's writer cannot be handed
    per-cell times)."""
    stamps = cells.pop(TIMESTAMPS, None)
    if stamps is None or stamps.fixed is None:
        return [(None, cells, None)]
    times = stamps.fixed.reshape(-1).view("<u8")
    out: List[Piece] = []
    for at in np.unique(times):
        idx = np.flatnonzero(times == at)
        out.append((None, {n: c.take(idx) for n, c in cells.items()}, int(at)))
    return out


def _dense_pieces(schema: ArraySchema, fm: FragmentMetadata, tile_num: int,
                  cells: Dict[str, FieldCells], kept_tiles: List[int],
                  lost: Dict[int, List[Loss]]
                  ) -> List[Piece]:
    """The boxes of intact tiles (cell coordinates, clipped to the non-empty domain) and
    each box's cells in row-major order."""
    ned = [(int(lo), int(hi)) for lo, hi in fm.non_empty_domain or []]
    grid = tile_grid(schema, ned)
    ndim = len(grid)
    coords = np.stack([fragment_dense_coords(schema, fm, d).astype(np.int64)
                       for d in range(ndim)], axis=1)
    per_tile = len(coords) // tile_num
    first = coords[::per_tile]                               # each tile's first cell
    tile_pos = (first - np.array([s for s, _n, _e in grid])) // np.array([e for _s, _n, e in grid])
    kept_idx = np.concatenate([np.arange(t * per_tile, (t + 1) * per_tile) for t in kept_tiles])
    kc = coords[kept_idx]
    inside = np.all((kc >= [lo for lo, _ in ned]) & (kc <= [hi for _, hi in ned]), axis=1)
    out: List[Piece] = []
    for box in rectangles([n for _s, n, _e in grid], [tuple(int(x) for x in tile_pos[t])
                                                       for t in lost]):
        rect = []
        for d, (lo, hi) in enumerate(box):
            start, _n, ext = grid[d]
            rect.append((max(ned[d][0], start + lo * ext), min(ned[d][1], start + (hi + 1) * ext - 1)))
        if any(lo > hi for lo, hi in rect):
            continue
        sel = inside & np.all((kc >= [lo for lo, _ in rect]) & (kc <= [hi for _, hi in rect]),
                              axis=1)
        idx = np.flatnonzero(sel)
        order = idx[np.lexsort(tuple(kc[idx, d] for d in reversed(range(ndim))))]
        if len(order) != math.prod(hi - lo + 1 for lo, hi in rect):
            raise NotTileLevel(f"box {rect}: its intact tiles do not cover it")
        out.append((rect, {n: c.take(order) for n, c in cells.items()}, None))
    return out
