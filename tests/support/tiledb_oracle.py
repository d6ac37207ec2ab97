"""Test helper: what tiledb-py reads for one fragment, in the order the cells are stored.

Sparse fragments: a global-order query of that fragment alone (`timestamp=(t1, t2)`).
Dense fragments: the fragment's non-empty domain, placed in its domain expanded to whole
tiles, then permuted into tile order and cell order (`covered` marks the written cells;
the others are stored as zeros / one NUL byte and tiledb-py would give the fill value)."""
from __future__ import annotations

import numpy as np
import tiledb

_ORDER = {"row-major": 0, "col-major": 1}


def ctx_for(key):
    if key is None:
        return None
    return tiledb.Ctx({"sm.encryption_type": "AES_256_GCM", "sm.encryption_key": key})


def global_perm(tiles, extents, tile_order, cell_order):
    """Flat indices (into the expanded C-order array) of its cells in global order."""
    nd = len(extents)
    full = tuple(t * e for t, e in zip(tiles, extents))
    idx = np.arange(int(np.prod(full))).reshape(sum(([t, e] for t, e in zip(tiles, extents)), []))
    tile_axes = [2 * d for d in range(nd)]
    cell_axes = [2 * d + 1 for d in range(nd)]
    if tile_order == 1:
        tile_axes = tile_axes[::-1]
    if cell_order == 1:
        cell_axes = cell_axes[::-1]
    del full
    return idx.transpose(tile_axes + cell_axes).reshape(-1)


def _int(v) -> int:
    a = np.asarray(v)
    if a.dtype.kind in "mM":
        return int(a.astype("int64"))
    return int(a)


def as_tiledb_py(cell):
    """A text cell (utf-8, ascii, char) as tiledb-py's read gives it: its var-cell unpacking
    (core.cc) turns a cell of one NUL byte into the empty string, so the stored b'\\x00' (the
    fill libtiledb writes in a dense cell nobody wrote, also inside a consolidated fragment's
    non-empty domain) and an empty cell read alike."""
    if isinstance(cell, (str, bytes)) and cell in ("\x00", b"\x00"):
        return cell[:0]
    return cell


def fragment_cells(uri: str, frag, name: str, key=None, times=()):
    """(cells in stored order, covered mask or None). Nullable fields come masked.
    `times`: the array's write timestamps (a consolidated sparse fragment may store a cell
    once per version written in its range)."""
    ctx = ctx_for(key)
    with tiledb.open(uri, timestamp=frag.timestamp_range, ctx=ctx) as A:
        schema = A.schema
        is_attr = schema.has_attr(name)
        if frag.sparse:
            q = A.query(order="G", attrs=[name] if is_attr else [],
                        dims=None if is_attr else [name])
            cells = q[:][name]
            if frag.cell_num > len(cells):
                return _versions(uri, frag, name, schema, times, ctx), None
            return cells, None
        dom = schema.domain
        exts, tiles, lows, sel, region = [], [], [], [], []
        for d in range(dom.ndim):
            dim = dom.dim(d)
            lo_v, hi_v = frag.nonempty_domain[d]
            lo, hi = _int(lo_v), _int(hi_v)
            dlo, ext = _int(dim.domain[0]), _int(dim.tile)
            t0, t1 = (lo - dlo) // ext, (hi - dlo) // ext
            exts.append(ext)
            tiles.append(t1 - t0 + 1)
            lows.append(dlo + t0 * ext)
            sel.append(slice(lo_v, hi_v) if np.asarray(lo_v).dtype.kind == "M" else slice(lo, hi + 1))
            region.append(slice(lo - lows[-1], hi - lows[-1] + 1))
        sub = A.query(attrs=[name])[tuple(sel)][name]
        full_shape = tuple(t * e for t, e in zip(tiles, exts))
        attr = schema.attr(name)
        if attr.isvar:
            full = np.empty(full_shape, dtype=object)
            full[...] = b"\x00" if attr.dtype == np.bytes_ else "\x00"
        else:
            full = np.zeros(full_shape, dtype=sub.dtype)
        mask = np.zeros(full_shape, dtype=bool)
        covered = np.zeros(full_shape, dtype=bool)
        full[tuple(region)] = np.ma.getdata(sub)
        if np.ma.isMaskedArray(sub):
            mask[tuple(region)] = np.ma.getmaskarray(sub)
        covered[tuple(region)] = True
        perm = global_perm(tiles, exts, _ORDER.get(schema.tile_order, 0),
                           _ORDER.get(schema.cell_order, 0))
        flat = full.reshape(-1)[perm]
        m = mask.reshape(-1)[perm]
        out = np.ma.masked_array(flat, mask=m) if m.any() else flat
        return out, covered.reshape(-1)[perm]


def _versions(uri: str, frag, name: str, schema, times, ctx):
    """Every version a consolidated sparse fragment of an array without duplicates stores
    (libtiledb consolidates with per-cell timestamps, `sm.consolidation.with_timestamps`,
    so time travel inside its range still works): a read of the range gives the latest
    version of each cell only; a read at one write timestamp gives the versions written
    then. Stored order: the cells' global order, a cell's versions newest first."""
    dims = [schema.domain.dim(i).name for i in range(schema.domain.ndim)]
    is_attr = schema.has_attr(name)
    t1, t2 = frag.timestamp_range

    def read(ts):
        with tiledb.open(uri, timestamp=ts, ctx=ctx) as A:
            if is_attr and not A.schema.has_attr(name):
                # written before a schema evolution added the attribute: the consolidator
                # stores what its reader gives for those cells, the attribute's fill
                r = A.query(order="G", attrs=[], dims=dims)[:]
                return {**r, name: _fill_cells(schema.attr(name), len(r[dims[0]]))}
            return A.query(order="G", attrs=[name] if is_attr else [], dims=dims)[:]

    def keys(r):
        return [tuple(_key(r[d][i]) for d in dims) for i in range(len(r[dims[0]]))]

    order = {k: i for i, k in enumerate(keys(read(frag.timestamp_range)))}
    parts, picks = [], []
    for t in sorted({t for t in times if t1 <= t <= t2}):
        r = read((t, t))
        parts.append(r[name])
        picks += [(order[k], -t, len(parts) - 1, i) for i, k in enumerate(keys(r))]
    picks.sort()
    flat = np.ma.concatenate(parts) if any(np.ma.isMaskedArray(p) for p in parts) else \
        np.concatenate(parts)
    starts = np.cumsum([0] + [len(p) for p in parts])
    return flat[[int(starts[p] + i) for _o, _t, p, i in picks]]


def _fill_cells(attr, n: int):
    """`n` cells as a read of a fragment without `attr` gives them: null where the attribute
    is nullable, else its fill value."""
    if attr.isvar:   # as tiledb-py reads the stored fill (one NUL: '')
        cells = np.array([as_tiledb_py(attr.fill)] * n, dtype=object)
    else:
        cells = np.full(n, attr.fill, dtype=attr.dtype)
    return np.ma.masked_all(n, dtype=cells.dtype) if attr.isnullable else cells


def _key(v):
    v = v.item() if isinstance(v, np.generic) else v
    return v.encode() if isinstance(v, str) else v
