"""The per-tile minimum, maximum and sum libtiledb stores, computed exactly as its writer
computes them, for the tiles whose statistics the fast pass (`tile_stats`) cannot settle.

libtiledb's TileMetadataGenerator (tile_metadata_generator.cc) is fed a tile in ranges of
cells. Per range: the minimum / maximum keep the current value unless the next cell beats it
(`cur < v ? cur : v`, so a NaN replaces it and the next number replaces the NaN); an
integer sum (int64 for signed fields, uint64 for unsigned) saturates at the type's bound and
stops that range there (the next range goes on from the bound); a float sum is added in
double, and when the next addition would pass DBL_MAX it is set to ±DBL_MAX and the range
stops. So the stored sum depends on which ranges the writer fed, and in which order:

- the global-order writer (sparse fragments, global-order dense writes, and dense
  consolidation, which writes the union of the fragments' domains expanded to whole tiles)
  feeds each tile whole, in stored order: the cells no write covered (the fill value) count;
- the ordered dense writer (row- or col-major writes; dense_tiler.cc) feeds the slabs of
  the write's subarray (the fragment's non-empty domain) inside the tile, in its copy-plan
  order, which is the subarray layout's order and not the tile's cell order when the two
  differ.

A fragment does not record which writer made it, or the layout of an ordered write, so a
dense tile agrees when one of these plans gives its stored statistics."""
from __future__ import annotations

import math
from typing import List, Optional, Sequence, Tuple

import numpy as np

Plan = List[np.ndarray]   # the ranges fed, in order: stored-cell indices of the tile
ROW_MAJOR, COL_MAJOR = 0, 1
DBL_MAX = float(np.finfo(np.float64).max)


def whole_tile(ncells: int) -> Plan:
    return [np.arange(ncells, dtype=np.int64)]


def ordered_plan(schema, ned: Sequence[Tuple[int, int]], tile_lo: Sequence[int],
                 sub_layout: int) -> Plan:
    """The slabs libtiledb's DenseTiler feeds for the tile whose first cell is at `tile_lo`
    of an ordered write of subarray `ned` in `sub_layout` (its copy plan)."""
    exts = [int(d.tile_extent) if d.tile_extent is not None
            else int(d.domain[1]) - int(d.domain[0]) + 1 for d in schema.dimensions]
    n = len(exts)
    cell_layout = schema.cell_order
    strides = [1] * n
    if cell_layout == ROW_MAJOR:
        for d in range(n - 2, -1, -1):
            strides[d] = strides[d + 1] * exts[d + 1]
    else:
        for d in range(1, n):
            strides[d] = strides[d - 1] * exts[d - 1]
    sub = [(int(a), int(b)) for a, b in ned]
    sit = [(max(s[0], lo), min(s[1], lo + e - 1)) for s, lo, e in zip(sub, tile_lo, exts)]
    lens = [b - a + 1 for a, b in sit]
    if any(x <= 0 for x in lens):
        return []
    start = sum((a - lo) * s for (a, _b), lo, s in zip(sit, tile_lo, strides))

    def full(d: int) -> bool:   # the subarray spans the whole tile along d, and ends there
        return lens[d] == exts[d] and sit[d] == sub[d]
    if n == 1:
        copy_el, ranges, first = lens[0], [1], 0
    elif sub_layout != cell_layout:
        copy_el, ranges, first = 1, lens, 0
    elif cell_layout == ROW_MAJOR:
        copy_el, last = lens[n - 1], n - 2
        while last >= 0 and full(last + 1):
            copy_el *= lens[last]
            last -= 1
        ranges, first = ([1] if last < 0 else lens[:last + 1]), 0
    else:
        copy_el, last = lens[0], 1
        while last < n and full(last - 1):
            copy_el *= lens[last]
            last += 1
        ranges, first = ([1], n - 1) if last == n else (lens[last:], last)
    # the copy loop: an odometer over `ranges`, the last one fastest
    grid = np.indices(ranges).reshape(len(ranges), -1)
    starts = start + sum(grid[k].astype(np.int64) * strides[k + first]
                         for k in range(len(ranges)))
    return [np.arange(s, s + copy_el, dtype=np.int64) for s in np.atleast_1d(starts).tolist()]


def dense_plans(schema, ned, tile_lo: Sequence[int], ncells: int) -> List[Plan]:
    """Every plan one of libtiledb's write paths feeds a dense tile (see the module)."""
    plans = [whole_tile(ncells)]
    for layout in (ROW_MAJOR, COL_MAJOR) if len(schema.dimensions) > 1 else (ROW_MAJOR,):
        plans.append(ordered_plan(schema, ned, tile_lo, layout))
    return plans


def var_keep(plan: Plan, valid: Optional[np.ndarray], ncells: int) -> np.ndarray:
    """The cells a var-sized tile's min / max take under `plan`. A nullable var tile's
    validity is read from the tile's first cell on for every range fed
    (process_cell_range_var advances a pointer set to the validity tile's start, not to the
    range's), so a range starting at cell s takes cell s + k when cell k is valid."""
    keep = np.zeros(ncells, bool)
    for r in plan:
        r = r[r < ncells]
        if valid is None:
            keep[r] = True
        else:
            k = np.arange(len(r))
            ok = k < len(valid)
            keep[r[ok]] = valid[k[ok]]
    return keep


def _extreme(seq: np.ndarray, pick) -> float:
    """`cur = cur < v ? cur : v` (or `>` for the maximum) over `seq`: a NaN takes over,
    the next value replaces it."""
    if seq.dtype.kind == "f":
        nan = np.flatnonzero(np.isnan(seq))
        if len(nan):
            seq = seq[int(nan[-1]) + 1:]
            if not len(seq):
                return float("nan")
    return pick(seq)


def _int_sum(ranges: List[np.ndarray], signed: bool) -> int:
    lo, hi = (-(1 << 63), (1 << 63) - 1) if signed else (0, (1 << 64) - 1)
    total = 0
    biggest = max((int(np.abs(r.astype(np.float64)).max(initial=0)) for r in ranges),
                  default=0)
    cells = sum(len(r) for r in ranges)
    if (biggest + 1) * cells < (1 << 62):   # no running sum can leave the type: exact, at once
        return sum(int(r.sum(dtype=np.int64 if signed else np.uint64)) for r in ranges if
                   len(r))
    for r in ranges:
        if not len(r):
            continue
        run = total + np.cumsum(r.astype(object))
        out = np.flatnonzero((run > hi) | (run < lo))
        if len(out):
            total = hi if run[int(out[0])] > hi else lo
        else:
            total = int(run[-1])
    return total


def _float_sum(ranges: List[np.ndarray]) -> float:
    seq = np.concatenate(ranges) if ranges else np.zeros(0)
    seq = seq.astype(np.float64)
    if not len(seq):
        return 0.0
    if np.all(np.isfinite(seq)) and float(np.abs(seq).max()) * len(seq) < 1e300:
        return float(np.cumsum(seq)[-1])   # no range can reach DBL_MAX: added in order
    total = 0.0
    for r in ranges:
        for v in r.astype(np.float64).tolist():
            if (total < 0.0) == (v < 0.0) and abs(total) > DBL_MAX - abs(v):
                total = -DBL_MAX if total < 0.0 else DBL_MAX
                break
            total += v
    return total


def generator_stats(vals: np.ndarray, valid: Optional[np.ndarray], plan: Plan
                    ) -> Optional[Tuple[object, object, object]]:
    """(minimum, maximum, sum) libtiledb computes feeding `plan` over the tile's stored
    cells `vals` (`valid`: the validity of each, None when not nullable); None when the plan
    feeds no valid cell (the statistics are not compared then)."""
    ranges = [r[r < len(vals)] for r in plan]
    if valid is not None:
        ranges = [r[valid[r]] for r in ranges]
    ranges = [vals[r] for r in ranges if len(r)]
    if not ranges:
        return None
    seq = np.concatenate(ranges)
    mn = _extreme(seq, np.min)
    mx = _extreme(seq, np.max)
    if vals.dtype.kind == "f":
        return mn, mx, _float_sum(ranges)
    return mn, mx, _int_sum(ranges, vals.dtype.kind == "i")


def same(a, b) -> bool:
    """Stored and computed statistics agree (NaN agrees with NaN)."""
    if isinstance(a, float) or isinstance(b, float):
        fa, fb = float(a), float(b)
        return fa == fb or (math.isnan(fa) and math.isnan(fb))
    return a == b
