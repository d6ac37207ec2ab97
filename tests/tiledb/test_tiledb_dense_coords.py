"""`values` of a dimension of a dense fragment: the coordinates the tile grid implies.

Checked three ways:
- against tiledb-py: the coordinates it returns (`A.query(dims=[d], attrs=[]).multi_index`)
  over the fragment's non-empty domain expanded to whole tiles, clipped to the array domain
  (TileDB refuses to read past it), placed in the expanded grid and permuted into stored order
  like `tiledb_oracle.fragment_cells` does; cells of edge tiles past the domain get the
  grid's arithmetic (`np.indices`), which tiledb-py cannot confirm;
- against the cells themselves: every fragment stores `len(coords)` cells per attribute
  (tile offsets × cells per tile), and attribute values written as a function of the
  coordinates pair up with the coordinates cell by cell;
- against a per-cell pure-Python walk of the tile grid, on synthetic schemas (all orders,
  1-3 dimensions, negative domains, edge tiles, every integer width, wrap-around).
"""
from __future__ import annotations

import itertools
import json
import os
import random

import numpy as np
import pytest
import tiledb

from arrayscope import formats
from arrayscope.formats.filters.enums import numpy_dtype
from arrayscope.formats.tiledb.model.array_model import ArraySchema, Attribute, Dimension
from arrayscope.formats.tiledb.values import field_values as V
from arrayscope.formats.tiledb.values.dense_coords import cell_count, dense_coords, tile_grid
from tests.support import tiledb_arrays
from tests.support.tiledb_oracle import _ORDER, _int, ctx_for, global_perm

DENSE = ["dense_1d", "dense_2d_row_row", "dense_2d_row_col", "dense_2d_col_row",
         "dense_2d_col_col", "dense_partial", "datetimes", "multi_fragment", "dtypes",
         "var_nullable", "fill_values", "consolidated", "encrypted", "enumerations",
         "filters", "string_filters", "chunked_large_tile"]


def _key(name):
    return tiledb_arrays.KEY if name == "encrypted" else None


# ---- the tiledb-py oracle ------------------------------------------------------------------
def tiledb_coords(uri, frag, name, key=None):
    """(coordinates of dimension `name` of every cell the dense fragment stores, in stored
    order, as the dimension's integer dtype; mask of the cells tiledb-py gave, i.e. inside the
    array domain — the others are past an edge tile's domain bound, from the grid)."""
    with tiledb.open(uri, timestamp=frag.timestamp_range, ctx=ctx_for(key)) as A:
        dom = A.schema.domain
        k = [dom.dim(i).name for i in range(dom.ndim)].index(name)
        dim = dom.dim(k)
        vdt = np.dtype("int64") if dim.dtype.kind in "mM" else dim.dtype
        exts, tiles, starts, ranges, region = [], [], [], [], []
        for i in range(dom.ndim):
            di = dom.dim(i)
            lo, hi = (_int(v) for v in frag.nonempty_domain[i])
            dlo, dhi = _int(di.domain[0]), _int(di.domain[1])
            ext = _int(di.tile)
            t0, t1 = (lo - dlo) // ext, (hi - dlo) // ext
            start = dlo + t0 * ext
            end = min(start + (t1 - t0 + 1) * ext - 1, dhi)    # clipped to the domain
            exts.append(ext)
            tiles.append(t1 - t0 + 1)
            starts.append(start)
            if di.dtype.kind == "M":
                ranges.append(slice(np.array(start, "int64").astype(di.dtype),
                                    np.array(end, "int64").astype(di.dtype)))
            else:
                ranges.append(slice(di.dtype.type(start), di.dtype.type(end)))
            region.append(slice(0, end - start + 1))
        got = A.query(dims=[name], attrs=[]).multi_index[tuple(ranges)][name]
        shape = tuple(t * e for t, e in zip(tiles, exts))
        full = np.indices(shape)[k].astype(vdt) + vdt.type(starts[k])   # the grid past the domain
        inside = np.zeros(shape, bool)
        inside[tuple(region)] = True
        full[tuple(region)] = got.view("int64") if got.dtype.kind in "mM" else got
        perm = global_perm(tiles, exts, _ORDER[A.schema.tile_order], _ORDER[A.schema.cell_order])
        return full.reshape(-1)[perm], inside.reshape(-1)[perm]


def _dense_frags(uri, key=None):
    frags = sorted(tiledb.array_fragments(uri, ctx=ctx_for(key)),
                   key=lambda f: os.path.basename(f.uri))
    return [f for f in frags if not f.sparse]


def _entry(doc, field, frag, key=None, with_values=True):
    entries = V.values(doc, field, key, with_values)
    e = {x["name"]: x for x in entries}[os.path.basename(frag.uri)]
    assert not e.get("error"), e.get("error")
    return e


def _check_array(uri, key=None):
    """Every dimension of every dense fragment against tiledb-py; returns, per fragment
    name, {field: numpy values in stored order} for the pairing checks."""
    kb = key.encode() if key else None
    doc = formats.open(uri, key=kb)
    schema = tiledb.ArraySchema.load(uri, ctx=ctx_for(key))
    dims = [schema.domain.dim(i) for i in range(schema.domain.ndim)]
    frags = _dense_frags(uri, key)
    assert frags
    out = {}
    for f in frags:
        fname = os.path.basename(f.uri)
        got = {}
        for dim in dims:
            e = _entry(doc, dim.name, f, kb)
            expected, inside = tiledb_coords(uri, f, dim.name, key)
            vdt = np.dtype("<i8") if dim.dtype.kind in "mM" else dim.dtype.newbyteorder("<")
            raw = np.frombuffer(e["raw"], vdt)
            label = f"{os.path.basename(uri)}/{fname}/{dim.name}"
            assert len(raw) == len(expected), f"{label}: {len(raw)} cells, expected {len(expected)}"
            bad = np.flatnonzero(raw != expected)
            assert not len(bad), f"{label}: cells {bad[:10]} are {raw[bad[:10]]}, " \
                                 f"expected {expected[bad[:10]]} (inside: {inside[bad[:10]]})"
            assert e["values"] == raw.tolist(), f"{label}: values differ from raw"
            assert all(type(v) is int for v in e["values"][:5])
            # --raw path: same bytes without building Python values
            r = _entry(doc, dim.name, f, kb, with_values=False)
            assert r["values"] == [] and bytes(r["raw"]) == bytes(e["raw"])
            got[dim.name] = raw
        # the attribute files hold exactly that many cells (tiles × cells per tile)
        for i in range(schema.nattr):
            a = schema.attr(i)
            if a.isvar:
                continue
            ea = _entry(doc, a.name, f, kb)
            n = len(np.frombuffer(ea["raw"], np.uint8)) // a.dtype.itemsize
            assert n == len(raw), f"{fname}/{a.name}: {n} stored cells, {len(raw)} coordinates"
            got[a.name] = np.frombuffer(ea["raw"], a.dtype)
        fm = {fr.name: fr for fr in doc.model.fragments}[fname].metadata
        ts = fm.schema or doc.model.schema_for(fm.schema_name)
        grid = tile_grid(ts, fm.non_empty_domain)
        ntiles = int(np.prod([t for _s, t, _e in grid]))
        assert len(fm.tile_offsets[0]) == ntiles
        assert cell_count(ts, fm.non_empty_domain) == ntiles * int(np.prod([e for *_x, e in grid]))
        assert cell_count(ts, fm.non_empty_domain) == len(raw)
        out[fname] = got
    return out


@pytest.mark.parametrize("name", DENSE)
def test_dense_coords_match_tiledb(tiledb_array, name):
    _check_array(tiledb_array(name), _key(name))


# ---- coordinates pair with the values written at them -----------------------------------
@pytest.mark.parametrize("name", ["dense_2d_row_row", "dense_2d_row_col", "dense_2d_col_row",
                                  "dense_2d_col_col"])
def test_2d_orders_pair_with_cells(tiledb_array, name):
    (cells,) = _check_array(tiledb_array(name)).values()
    r, c, a = cells["rows"], cells["cols"], cells["a"]
    assert np.array_equal(a, (r - 1) * 4 + c)          # written as arange(1, 17).reshape(4, 4)
    tile_order, cell_order = name.split("_")[2:]
    # first tile: rows 1-2 × cols 1-2, in the cell order; then the tile order
    first = list(zip(r[:4].tolist(), c[:4].tolist()))
    assert first == ([(1, 1), (1, 2), (2, 1), (2, 2)] if cell_order == "row" else
                     [(1, 1), (2, 1), (1, 2), (2, 2)])
    second_tile = (int(r[4]) // 3, int(c[4]) // 3)
    assert second_tile == ((0, 1) if tile_order == "row" else (1, 0))


def test_dense_1d_pairs(tiledb_array):
    (cells,) = _check_array(tiledb_array("dense_1d")).values()
    assert np.array_equal(cells["d"], np.arange(100))
    assert np.array_equal(cells["a"], cells["d"] * 3 - 50)


def test_multi_fragment_partial_fragments(tiledb_array):
    by = _check_array(tiledb_array("multi_fragment"))
    writes = [(0, 20), (10, 30), (25, 40)]
    assert len(by) == 3
    for t, (fname, cells) in enumerate(sorted(by.items()), start=1):
        lo, hi = writes[t - 1]
        d, a = cells["d"], cells["a"]
        assert np.array_equal(d, np.arange(lo // 10 * 10, -(-hi // 10) * 10))
        cov = (d >= lo) & (d < hi)
        assert np.array_equal(a[cov], d[cov] * t) and not a[~cov].any()


def test_dense_partial(tiledb_array):
    (cells,) = _check_array(tiledb_array("dense_partial")).values()
    d, a = cells["d"], cells["a"]
    assert np.array_equal(d, np.arange(0, 20))        # [3, 16] expanded to tiles [0, 9], [10, 19]
    cov = (d >= 3) & (d <= 16)
    assert np.array_equal(a[cov], d[cov] - 3) and not a[~cov].any()


def test_datetime_dimension(tiledb_array):
    (cells,) = _check_array(tiledb_array("datetimes")).values()
    day = cells["day"]
    first = int(np.datetime64("2024-01-01", "D").astype("int64"))
    assert np.array_equal(day, first + np.arange(30))
    base = int(np.datetime64("2024-01-01T00:00:00", "s").astype("int64"))
    assert np.array_equal(cells["ts"].astype("int64"), base + (day - first) * 3600)


def test_edge_tiles_continue_past_the_domain(tiledb_array):
    """dtypes: domain [0, 19], extent 8: three tiles, 24 stored cells; 20-23 past the domain,
    where TileDB stores zeros and refuses to read."""
    uri = tiledb_array("dtypes")
    (cells,) = _check_array(uri).values()
    assert cells["d"].tolist() == list(range(24))
    assert not cells["a_int32"][20:].any()
    with tiledb.open(uri) as A, pytest.raises(tiledb.TileDBError, match="out of domain"):
        A.query(dims=["d"], attrs=[]).multi_index[0:23]


# ---- arrays with more shapes: negative domains, edge tiles in 2-D/3-D, other widths ------
@pytest.fixture(scope="module")
def made(tmp_path_factory):
    root = tmp_path_factory.mktemp("dense_coords")

    def make(name, dims, tile_order, cell_order, writes):
        uri = str(root / name)
        if not os.path.exists(uri):
            tiledb.Array.create(uri, tiledb.ArraySchema(
                domain=tiledb.Domain(*dims), sparse=False, tile_order=tile_order,
                cell_order=cell_order, attrs=[tiledb.Attr("a", dtype=np.int64)]))
            for t, ranges in enumerate(writes, start=1):
                with tiledb.open(uri, "w", timestamp=t) as A:
                    sub = tiledb.Subarray(A)
                    sub.add_ranges([[r] for r in ranges])
                    shape = tuple(int(hi) - int(lo) + 1 for lo, hi in ranges)
                    A[sub] = np.arange(int(np.prod(shape)), dtype=np.int64).reshape(shape) + 1
        return uri
    return make


ORDERS = [("row-major", "row-major"), ("row-major", "col-major"), ("col-major", "row-major"),
          ("col-major", "col-major")]


@pytest.mark.parametrize("tile_order,cell_order", ORDERS)
def test_2d_edge_tiles_negative_domain(made, tile_order, cell_order):
    dims = [tiledb.Dim("x", domain=(-5, 6), tile=5, dtype=np.int32),     # tiles to 9
            tiledb.Dim("y", domain=(1, 10), tile=4, dtype=np.int32)]      # tiles to 12
    uri = made(f"edge2d_{tile_order[0]}{cell_order[0]}", dims, tile_order, cell_order,
               [[(-5, 6), (1, 10)], [(-2, 5), (3, 9)], [(6, 6), (10, 10)]])
    by = _check_array(uri)
    (full, part, corner) = [by[k] for k in sorted(by)]
    assert len(full["x"]) == 15 * 12 and len(part["x"]) == 15 * 12 and len(corner["x"]) == 20
    # the written block is arange + 1 in C order over the write's box: pair it back
    for cells, (xlo, xhi), (ylo, yhi) in [(full, (-5, 6), (1, 10)), (part, (-2, 5), (3, 9))]:
        x, y, a = cells["x"], cells["y"], cells["a"]
        cov = (x >= xlo) & (x <= xhi) & (y >= ylo) & (y <= yhi)
        assert np.array_equal(a[cov], (x[cov] - xlo) * (yhi - ylo + 1) + (y[cov] - ylo) + 1)
        assert not a[~cov].any()
    assert sorted(set(corner["x"].tolist())) == [5, 6, 7, 8, 9]
    assert sorted(set(corner["y"].tolist())) == [9, 10, 11, 12]


def test_3d_mixed_orders(made):
    dims = [tiledb.Dim("i", domain=(-7, 8), tile=3, dtype=np.int16),
            tiledb.Dim("j", domain=(0, 4), tile=2, dtype=np.int16),
            tiledb.Dim("k", domain=(10, 20), tile=4, dtype=np.int16)]
    uri = made("d3", dims, "col-major", "row-major", [[(-7, 8), (0, 4), (10, 20)],
                                                      [(-1, 4), (1, 3), (13, 19)]])
    by = _check_array(uri)
    for cells in by.values():
        i, j, k = cells["i"], cells["j"], cells["k"]
        assert len(set(zip(i.tolist(), j.tolist(), k.tolist()))) == len(i)   # all distinct


@pytest.mark.parametrize("dtype,domain,tile,write", [
    (np.uint64, (2 ** 64 - 1000, 2 ** 64 - 11), 10, (2 ** 64 - 995, 2 ** 64 - 980)),
    (np.int64, (-2 ** 62, 2 ** 62), 2 ** 20, (-5, 3)),
    (np.int8, (-128, 119), 8, (-100, -90)),
    (np.uint8, (3, 220), 16, (200, 220)),     # last tile 211-226 (TileDB cannot go past 255)
    (np.uint16, (0, 65000), 1000, (1999, 2001)),
    (np.uint32, (7, 1000), 33, (7, 7)),
])
def test_integer_widths(made, dtype, domain, tile, write):
    dt = np.dtype(dtype)
    dims = [tiledb.Dim("x", domain=tuple(dt.type(v) for v in domain), tile=dt.type(tile),
                       dtype=dtype),
            tiledb.Dim("y", domain=(dt.type(domain[0]), dt.type(domain[0] + 2)), tile=dt.type(2),
                       dtype=dtype)]
    uri = made(f"w_{dt.name}", dims, "row-major", "col-major",
               [[tuple(dt.type(v) for v in write), (dt.type(domain[0]), dt.type(domain[0] + 1))]])
    (cells,) = _check_array(uri).values()
    assert cells["x"].dtype == dt


def test_datetime_edge_tile(made):
    dims = [tiledb.Dim("t", domain=(np.datetime64(0, "ms"), np.datetime64(999, "ms")),
                       tile=np.timedelta64(300, "ms"), dtype="datetime64[ms]")]
    uri = made("dt_ms", dims, "row-major", "row-major", [])
    with tiledb.open(uri, "w", timestamp=1) as A:
        A[np.datetime64(250, "ms"):np.datetime64(950, "ms")] = np.arange(701, dtype=np.int64)
    (cells,) = _check_array(uri).values()
    assert cells["t"].tolist() == list(range(0, 1200))     # 4 tiles of 300: 1000-1199 past


# ---- CLI -----------------------------------------------------------------------------------
def test_cli_json_and_raw(capsys, tiledb_array, tmp_path):
    from arrayscope.explorer.cli import main

    uri = tiledb_array("dense_2d_col_row")
    assert main(["values", uri, "--field", "cols", "--json"]) == 0
    payload = json.loads(capsys.readouterr().out)
    (frag,) = payload["fragments"]
    assert frag["values"] == [1, 2, 1, 2, 1, 2, 1, 2, 3, 4, 3, 4, 3, 4, 3, 4]
    out = tmp_path / "rows.bin"
    assert main(["values", uri, "--field", "rows", "--raw", str(out)]) == 0
    assert np.fromfile(out, "<i4").tolist() == [1, 1, 2, 2, 3, 3, 4, 4, 1, 1, 2, 2, 3, 3, 4, 4]
    out = tmp_path / "d.bin"
    assert main(["values", tiledb_array("multi_fragment"), "--field", "d", "--raw", str(out)]) == 0
    assert np.fromfile(out, "<i4").tolist() == \
        list(range(0, 20)) + list(range(10, 30)) + list(range(20, 40))
    assert main(["values", tiledb_array("datetimes"), "--field", "day"]) == 0
    assert "30 values" in capsys.readouterr().out


# ---- against a per-cell walk of the grid, on synthetic schemas ---------------------------
INT_TYPES = {0: "int32", 1: "int64", 5: "int8", 6: "uint8", 7: "int16", 8: "uint16",
             9: "uint32", 10: "uint64", 21: "int64", 36: "int64"}


def _walk(sizes, order):
    """Index tuples of a grid of `sizes` in row- (0) or col-major (1) order."""
    if order == 0:
        return list(itertools.product(*[range(n) for n in sizes]))
    return [t[::-1] for t in itertools.product(*[range(n) for n in sizes[::-1]])]


def reference(schema, ned):
    """Per-cell loop: stored cells' coordinate tuples (modulo the type's width)."""
    tiles, exts, starts = [], [], []
    for d, (lo, hi) in zip(schema.dimensions, ned):
        dlo = d.domain[0]
        ext = d.tile_extent if d.tile_extent is not None else d.domain[1] - dlo + 1
        t0, t1 = (lo - dlo) // ext, (hi - dlo) // ext
        tiles.append(t1 - t0 + 1)
        exts.append(ext)
        starts.append(dlo + t0 * ext)
    bits = np.dtype(INT_TYPES[schema.dimensions[0].datatype]).itemsize * 8
    out = []
    for T in _walk(tiles, schema.tile_order):
        for C in _walk(exts, schema.cell_order):
            out.append(tuple((s + t * e + c) % (1 << bits)
                             for s, t, e, c in zip(starts, T, exts, C)))
    return out


def _schema(dtype_code, doms, exts, tile_order, cell_order):
    return ArraySchema(version=22, array_type=0, tile_order=tile_order, cell_order=cell_order,
                       dimensions=[Dimension(f"d{i}", dtype_code, 1, [], dom, ext)
                                   for i, (dom, ext) in enumerate(zip(doms, exts))],
                       attributes=[Attribute("a", 0)])


def _ours(schema, ned):
    cols = []
    for k, d in enumerate(schema.dimensions):
        c = dense_coords(schema, ned, k)
        assert c.dtype == numpy_dtype(d.datatype) and c.dtype.byteorder in "<=|"
        unsigned = c.view(f"<u{c.dtype.itemsize}")
        cols.append(unsigned.tolist())
    return list(zip(*cols))


def test_against_per_cell_walk():
    rng = random.Random(1234)
    for trial in range(300):
        code = rng.choice(list(INT_TYPES))
        dt = np.dtype(INT_TYPES[code])
        info = np.iinfo(dt)
        nd = rng.randint(1, 3)
        doms, exts, ned = [], [], []
        for _ in range(nd):
            ext = rng.randint(1, 6)
            ntile = rng.randint(1, 5)
            span = ext * ntile - rng.randint(0, ext - 1)        # edge tiles sometimes
            lo = rng.randint(max(int(info.min), -1000), min(int(info.max) - span - ext, 1000)) \
                if rng.random() < 0.7 else int(info.max) - ext * ntile + 1
            hi = lo + span - 1
            a = rng.randint(lo, hi)
            b = rng.randint(a, hi)
            doms.append((lo, hi))
            exts.append(ext if rng.random() < 0.9 else None)
            ned.append((a, b))
        s = _schema(code, doms, exts, rng.randint(0, 1), rng.randint(0, 1))
        assert _ours(s, ned) == reference(s, ned), (trial, code, doms, exts, ned)


def test_tiledb_cannot_write_a_tile_past_the_type(tmp_path):
    """uint8 domain [0, 250], extent 100: the last tile would reach 299. TileDB creates the
    array, writes the first tiles, and refuses the last one — no fragment has such a tile."""
    uri = str(tmp_path / "u8")
    tiledb.Array.create(uri, tiledb.ArraySchema(domain=tiledb.Domain(tiledb.Dim(
        "x", domain=(np.uint8(0), np.uint8(250)), tile=np.uint8(100), dtype=np.uint8)),
        attrs=[tiledb.Attr("a", dtype=np.int64)], sparse=False))
    for lo, hi, ok in [(0, 5, True), (210, 250, False)]:
        with tiledb.open(uri, "w") as A:
            sub = tiledb.Subarray(A)
            sub.add_ranges([[(np.uint8(lo), np.uint8(hi))]])
            if ok:
                A[sub] = np.arange(hi - lo + 1)
            else:
                with pytest.raises(tiledb.TileDBError, match="overflow"):
                    A[sub] = np.arange(hi - lo + 1)


def test_wraps_like_the_type():
    """A tile past the type's range (which TileDB does not write): modular arithmetic."""
    s = _schema(6, [(0, 250)], [100], 0, 0)
    c = dense_coords(s, [(210, 250)], 0)
    assert c.dtype == np.uint8 and len(c) == 100
    assert c.tolist() == [v % 256 for v in range(200, 300)]


def test_refuses_what_dense_arrays_cannot_have():
    s = _schema(3, [(0.0, 10.0)], [2.0], 0, 0)         # FLOAT64
    with pytest.raises(ValueError, match="integer or datetime"):
        dense_coords(s, [(0.0, 1.0)], 0)
    s = _schema(0, [(0, 9)], [5], 0, 0)
    with pytest.raises(ValueError, match="non-empty domain"):
        dense_coords(s, [(0, 1), (0, 1)], 0)
    with pytest.raises(ValueError, match="is empty"):
        dense_coords(s, [(5, 1)], 0)
    with pytest.raises(ValueError, match="not positive"):
        dense_coords(_schema(0, [(0, 9)], [0], 0, 0), [(0, 1)], 0)
    with pytest.raises(ValueError, match="row- or col-major"):
        dense_coords(_schema(0, [(0, 9)] * 2, [5, 5], 0, 4), [(0, 1)] * 2, 0)
    with pytest.raises(ValueError, match="plausible"):
        dense_coords(_schema(1, [(0, 2 ** 40)] * 2, [2 ** 20] * 2, 0, 0), [(0, 1)] * 2, 0)


def test_values_reports_a_bad_grid_as_an_error(tiledb_array, monkeypatch):
    doc = formats.open(tiledb_array("dense_1d"))
    (frag,) = doc.model.fragments
    V._metadata(doc, doc.model, frag).non_empty_domain = None
    (e,) = V.values(doc, "d")
    assert "non-empty domain" in e["error"] and e["values"] == []


@pytest.mark.parametrize("tile_order,cell_order", [(0, 0), (0, 1), (1, 0), (1, 1)])
def test_one_tile_coords_equal_the_fragment_slice(tile_order, cell_order):
    """`cell_coords.dense_tile_coords` (one tile, for the pipeline panel) is the slice of the
    fragment's `dense_coords` for that tile, for every tile of a 3-D grid with edge tiles."""
    from arrayscope.formats.tiledb.window.cell_coords import dense_tile_coords

    schema = _schema(1, [(-5, 9), (0, 6), (10, 12)], [4, 3, 2], tile_order, cell_order)
    ned = [(-3, 9), (0, 6), (10, 12)]
    full = [dense_coords(schema, ned, k) for k in range(3)]
    per = 4 * 3 * 2
    n_tiles = len(full[0]) // per
    assert n_tiles == 4 * 3 * 2
    for t in range(n_tiles):
        mine = dense_tile_coords(schema, ned, t)
        for k in range(3):
            assert mine[k].tolist() == full[k][t * per:(t + 1) * per].tolist()
