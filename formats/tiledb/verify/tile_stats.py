"""Per-tile minimum, maximum and sum of a fixed-size numeric field, every tile of a data file
in one vectorised pass (`np.*.reduceat` over the cells of all tiles laid end to end), for
`cell_checks`: a million one-cell tiles cost a Python loop of numpy calls per tile before.

`tile_stats` gives, per tile, exactly what `cell_checks` computed tile by tile: the minimum
and maximum of the cells counted (validity and dense written-region masks applied), the
same of the stored cells (padding included), the integer sum wrapped to 64 bits, whether
a float tile holds a non-finite value, whether an integer sum may have saturated (then it
is not compared), and the float sum added in cell order, as the writer adds
(`seq_sums`: a compiled kernel; without one a row-wise cumsum per cell count, or for many
distinct counts a loop of `np.cumsum` per tile)."""
from __future__ import annotations

from dataclasses import dataclass
from typing import Any, List, Optional, Sequence, Tuple

import numpy as np

from ...core.compiled import kernel

SATURATE = 2.0 ** 62   # an integer tile whose running sum may reach this: not compared
ROWS_AT_ONCE = 8       # distinct cell counts summed as matrices (else the kernel or a loop)


@dataclass
class Stats:
    index: np.ndarray        # tile indices (into the file's tiles) described
    count: np.ndarray        # cells counted per tile (after the mask)
    mins: np.ndarray         # of the counted cells (valid where count > 0)
    maxs: np.ndarray
    stored_mins: np.ndarray  # of every stored cell (padding included)
    stored_maxs: np.ndarray
    nonfinite: np.ndarray    # bool: a float tile holding NaN or an infinity
    sums: np.ndarray         # int: wrapped to 64 bits; float: in cell order
    saturates: np.ndarray    # bool: an integer sum that may pass 2**62 on the way


def _segments(counts: np.ndarray) -> np.ndarray:
    return np.concatenate([[0], np.cumsum(counts)[:-1]]).astype(np.int64) if len(counts) \
        else np.zeros(0, np.int64)


def _reduce(ufunc, vals: np.ndarray, counts: np.ndarray, empty) -> np.ndarray:
    """`ufunc` over each segment of `vals` (`counts` cells each); `empty` where none."""
    out = np.full(len(counts), empty, dtype=vals.dtype)
    nz = counts > 0
    if nz.any():
        out[nz] = ufunc.reduceat(vals, _segments(counts)[nz])
    return out


@kernel
def _seq_sums_kernel(vals, starts, counts, out):  # pragma: no cover - compiled
    for k in range(len(starts)):
        s = 0.0
        a = starts[k]
        for j in range(a, a + counts[k]):
            s += vals[j]
        out[k] = s


def seq_sums(vals: np.ndarray, counts: np.ndarray) -> np.ndarray:
    """Each segment's float64 sum added in order (bit-exact with a sequential loop)."""
    v = np.ascontiguousarray(vals, dtype=np.float64)
    starts = _segments(counts)
    out = np.zeros(len(counts), np.float64)
    if len(counts) and int(counts.max(initial=0)) <= 1:
        one = counts == 1
        out[one] = v[starts[one]]
        return out
    fn = _seq_sums_kernel.get(v.nbytes)
    if fn is not None:   # one pass in order, no temporaries (the rows below copy twice)
        fn(v, starts, counts.astype(np.int64), out)
        return out
    s = np.sort(counts)   # the distinct sizes (np.unique would import numpy.ma, ~0.03 s)
    sizes = s[np.concatenate(([True], s[1:] != s[:-1]))] if len(s) else s
    if len(sizes) <= ROWS_AT_ONCE:
        # tiles of one cell count as the rows of a matrix: a cumsum along each row adds in
        # order (accumulate is sequential, unlike a pairwise sum): numpy alone, bit-exact
        for c in sizes.tolist():
            if c == 0:
                continue
            rows = np.flatnonzero(counts == c)
            idx = starts[rows][:, None] + np.arange(c)[None, :]
            out[rows] = np.cumsum(v[idx], axis=1)[:, -1]
        return out
    for k in np.flatnonzero(counts).tolist():
        a = int(starts[k])
        out[k] = float(np.cumsum(v[a:a + int(counts[k])])[-1])
    return out


def tile_stats(datas: Sequence[bytes], index: List[int], masks: Sequence[Optional[np.ndarray]],
               dt: np.dtype) -> Stats:
    """The statistics of tiles `index` whose cell bytes are `datas` (whole cells only: a
    partial cell at the end is not counted) under `masks` (None: every cell counts)."""
    isz = dt.itemsize
    stored_n = np.array([len(d) // isz for d in datas], dtype=np.int64)
    joined = b"".join(d if len(d) % isz == 0 else d[:len(d) - len(d) % isz] for d in datas)
    allv = np.frombuffer(joined, dt)
    if any(m is not None for m in masks):
        keep = np.concatenate([np.ones(int(n), bool) if m is None else np.asarray(m, bool)
                               for n, m in zip(stored_n.tolist(), masks)]) if len(datas) \
            else np.zeros(0, bool)
        vals = allv[keep]
        count = np.add.reduceat(keep.astype(np.int64), _segments(stored_n)) if len(datas) \
            else np.zeros(0, np.int64)
        count = np.where(stored_n > 0, count, 0)
    else:
        vals, count = allv, stored_n
    lo = np.iinfo(dt).min if dt.kind in "iu" else -np.inf
    hi = np.iinfo(dt).max if dt.kind in "iu" else np.inf
    mins = _reduce(np.minimum, vals, count, hi)
    maxs = _reduce(np.maximum, vals, count, lo)
    if vals is allv:   # no mask: the stored cells are the cells counted
        smins, smaxs = mins, maxs
    else:
        smins = _reduce(np.minimum, allv, stored_n, hi)
        smaxs = _reduce(np.maximum, allv, stored_n, lo)
    n = len(datas)
    if dt.kind == "f":
        # np.minimum / np.maximum propagate NaN and an infinity is a minimum or a maximum:
        # a tile holds a non-finite cell exactly when its minimum or maximum is one
        nonfinite = (count > 0) & ~(np.isfinite(mins) & np.isfinite(maxs))
        sums = seq_sums(vals, count)
        saturates = np.zeros(n, bool)
    else:
        nonfinite = np.zeros(n, bool)
        wide = vals.astype(np.uint64 if dt.kind == "u" else np.int64, copy=False)
        sums = np.zeros(n, wide.dtype)
        nz = count > 0
        if nz.any():
            with np.errstate(over="ignore"):
                sums[nz] = np.add.reduceat(wide, _segments(count)[nz])
        # |every running sum| <= cells × the largest |cell|: under 2**61 it cannot reach
        # 2**62 however float64 rounds; the few tiles over it are summed as before
        big = np.maximum(np.abs(mins.astype(np.float64)), np.abs(maxs.astype(np.float64)))
        saturates = np.zeros(n, bool)
        maybe = np.flatnonzero(nz & (count.astype(np.float64) * big >= 2.0 ** 61))
        starts = _segments(count)
        for k in maybe.tolist():
            a = int(starts[k])
            v = vals[a:a + int(count[k])]
            saturates[k] = float(np.abs(np.cumsum(v, dtype=np.float64)).max()) >= SATURATE
    return Stats(np.asarray(index, dtype=np.int64), count, mins, maxs, smins, smaxs, nonfinite,
                 sums, saturates)


# The byte matrix `var_extremes` lays the strings out in, at most this many bytes (beyond,
# or for strings holding a NUL byte, the caller compares them as bytes one by one).
VAR_MATRIX_MAX = 64 << 20


@kernel
def string_extremes(data: Any, starts: Any, ends: Any, rows: Any, out: Any) -> None:
    """out = (index of the smallest, of the largest) of the strings
    `data[starts[r]:ends[r]]` for r in `rows`, compared as Python compares bytes (unsigned
    bytes, a prefix first); the first one of equal strings."""
    lo = rows[0]
    hi = rows[0]
    for q in range(1, len(rows)):
        r = rows[q]
        a, b = starts[r], ends[r]
        c, d = starts[lo], ends[lo]
        m = min(b - a, d - c)
        i = 0
        while i < m and data[a + i] == data[c + i]:
            i += 1
        if (data[a + i] < data[c + i]) if i < m else (b - a < d - c):
            lo = r
        c, d = starts[hi], ends[hi]
        m = min(b - a, d - c)
        i = 0
        while i < m and data[a + i] == data[c + i]:
            i += 1
        if (data[a + i] > data[c + i]) if i < m else (b - a > d - c):
            hi = r
    out[0] = lo
    out[1] = hi


def var_extremes(data: np.ndarray, offs: np.ndarray,
                 keep: Optional[np.ndarray] = None) -> Optional[Tuple[bytes, bytes]]:
    """(smallest, largest) of the strings `data[offs[k]:offs[k + 1]]` (the last one to the
    end of `data`) kept by `keep`, compared as Python compares bytes; None when there is
    none, or when the caller should compare them one by one: without the compiled kernel
    (`string_extremes`), a string holding a NUL byte (the zero padding below must sort
    before every real byte) or a matrix over VAR_MATRIX_MAX.

    Why: a Python bytes object per cell, then min() and max(), cost 0.7 s on 2M strings.
    Here each string is a row of a zero-padded byte matrix, and the rows still tied are
    narrowed column by column (a prefix sorts first, as its padding is 0)."""
    n = len(offs)
    if not n:
        return None
    starts = offs.astype(np.int64)
    ends = np.append(starts[1:], len(data))
    lens = ends - starts
    rows = np.flatnonzero(keep) if keep is not None else np.arange(n)
    if not len(rows):
        return None
    compiled = string_extremes.get(len(data))
    if compiled is not None:   # one pass, no matrix; NUL bytes compare as any byte
        got = np.empty(2, np.int64)
        compiled(data, starts, ends, rows.astype(np.int64), got)
        lo, hi = int(got[0]), int(got[1])
        return (bytes(data[int(starts[lo]):int(ends[lo])]),
                bytes(data[int(starts[hi]):int(ends[hi])]))
    width = int(lens.max(initial=0))
    body = data[int(starts[0]):]
    if n * width > VAR_MATRIX_MAX or (len(body) and not body.all()):
        return None
    mat = np.zeros((n, width), np.uint8)
    if len(body):
        row = np.repeat(np.arange(n), lens)
        col = np.arange(len(body)) - np.repeat(starts - starts[0], lens)
        mat[row, col] = body

    def pick(best) -> bytes:
        cand = rows
        for j in range(width):
            if len(cand) == 1:
                break
            c = mat[cand, j]
            cand = cand[c == best(c)]
        k = int(cand[0])
        return bytes(data[int(starts[k]):int(ends[k])])
    return pick(np.min), pick(np.max)
