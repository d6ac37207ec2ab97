"""The checks that need no checksum follow libtiledb's own rules (issue 30, items 1-4), on
arrays tiledb-py 0.36.1 (libtiledb 2.30) writes: verify is clean where the writer's bytes
are right (and tiledb-py reads the values written), and the same check still finds damage.

1. consolidated dense: the consolidator writes whole tiles (the cells no write covered hold
   the fill value and count in min / sum), and an int64 sum saturates at INT64_MIN;
2. sparse, col-major tile and cell order with a float dimension: libtiledb's tile index of
   a float coordinate (`(v - low) / extent`, truncated) in the global order;
3. a dense write with more var-sized attributes than tiles: libtiledb's OrderedWriter
   stores every tile's var min / max in tile 1's slot (zeros elsewhere): named, checked;
4. nullable var strings under RLE / DICTIONARY: the cell count comes from the var tile's
   rebuilt offsets (the offsets tile is empty)."""
from __future__ import annotations

import glob
import os
import struct

import numpy as np
import pytest
import tiledb

from arrayscope import formats
from arrayscope.formats.core.findings import COORD_ORDER, TILE_STAT, VALIDITY_VALUE, WRITER_QUIRK
from arrayscope.formats.core.verify import verify_report

INT64_MIN = np.iinfo(np.int64).min


def _report(uri):
    return verify_report(formats.open(uri))


def _problems(uri):
    return [f for f in _report(uri).findings if f.status in ("error", "warning")]


def _frags(uri):
    return sorted(glob.glob(os.path.join(uri, "__fragments", "*")))


def _replace(path, old: bytes, new: bytes):
    raw = open(path, "rb").read()
    assert raw.count(old) == 1, (path, old)
    open(path, "wb").write(raw.replace(old, new))


# ---- 1. consolidated dense ----------------------------------------------------------------
def _consolidated_dense(uri, filters, vacuum):
    dom = tiledb.Domain(tiledb.Dim("d", domain=(0, 23), tile=8, dtype=np.int64))
    tiledb.Array.create(uri, tiledb.ArraySchema(domain=dom, sparse=False, attrs=[
        tiledb.Attr("a", dtype=np.int64, filters=filters)]))
    for ts, (lo, hi) in zip((1, 2, 3), [(0, 8), (8, 16), (4, 20)]):
        with tiledb.open(uri, "w", timestamp=ts) as A:
            A[lo:hi] = np.arange(lo, hi, dtype=np.int64) * 10 + ts
    tiledb.consolidate(uri)
    if vacuum:
        tiledb.vacuum(uri)


def _expected_dense():
    want = np.full(24, INT64_MIN, np.int64)
    want[0:8] = np.arange(0, 8) * 10 + 1
    want[8:16] = np.arange(8, 16) * 10 + 2
    want[4:20] = np.arange(4, 20) * 10 + 3
    return want


@pytest.mark.parametrize("vacuum", [False, True], ids=["kept", "vacuumed"])
def test_consolidated_dense_counts_the_fill_value(tmp_path, vacuum):
    uri = str(tmp_path / "c")
    _consolidated_dense(uri, [tiledb.ZstdFilter()], vacuum)
    assert _problems(uri) == []
    with tiledb.open(uri) as A:
        np.testing.assert_array_equal(A[:]["a"], _expected_dense())


def test_consolidated_dense_changed_cell_is_found(tmp_path):
    uri = str(tmp_path / "c")
    _consolidated_dense(uri, tiledb.FilterList([]), True)
    assert _problems(uri) == []
    (frag,) = _frags(uri)
    # cell 17 of tile 3 (173), beside the fill values: libtiledb would store the same
    # statistics (the minimum is INT64_MIN, the sum saturates there), so nothing to see
    path = os.path.join(frag, "a0.tdb")
    _replace(path, struct.pack("<q", 173), struct.pack("<q", 5))
    assert _problems(uri) == []
    # cell 5 of tile 1 (53): its sum changes
    _replace(path, struct.pack("<q", 53), struct.pack("<q", 5))
    with tiledb.open(uri) as A:
        assert A[5]["a"] == 5 and A[17]["a"] == 5   # libtiledb reads them without a word
    found = [(f.code, os.path.basename(f.source), f.message) for f in _problems(uri)]
    assert found == [(TILE_STAT, "a0.tdb", "tile 1 of 'a': the cells sum to 248, the "
                                           "fragment metadata says 296")]


def test_saturating_sparse_sum(tmp_path):
    """int64 cells whose running sum passes INT64_MAX: libtiledb stores INT64_MAX and stops
    there (the last cell is not added): clean; a changed cell is found."""
    uri = str(tmp_path / "s")
    dom = tiledb.Domain(tiledb.Dim("d", domain=(0, 99), tile=10, dtype=np.int64))
    tiledb.Array.create(uri, tiledb.ArraySchema(domain=dom, sparse=True, capacity=4, attrs=[
        tiledb.Attr("a", dtype=np.int64, filters=tiledb.FilterList([]))]))
    big = np.iinfo(np.int64).max // 2
    vals = np.array([big, big, big, -5, 7, 8, 9, 10], np.int64)
    with tiledb.open(uri, "w", timestamp=1) as A:
        A[np.arange(8, dtype=np.int64)] = {"a": vals}
    assert _problems(uri) == []
    with tiledb.open(uri) as A:
        np.testing.assert_array_equal(A[:]["a"], vals)
    raw = open(os.path.join(_frags(uri)[0], "a0.tdb"), "rb").read()
    path = os.path.join(_frags(uri)[0], "a0.tdb")
    i = raw.index(struct.pack("<q", big))
    open(path, "wb").write(raw[:i] + struct.pack("<q", -big) + raw[i + 8:])
    with tiledb.open(uri) as A:
        assert A[0]["a"] == -big
    # the minimum changed; a sum no plan gives is not reported where the running sum may
    # saturate (cell_checks._Settle.may_saturate)
    found = [(f.code, f.message) for f in _problems(uri)]
    assert found == [(TILE_STAT, f"tile 1 of 'a': the cells' minimum is {-big}, the fragment "
                                 f"metadata says -5")], found


def test_float_sum_added_in_the_ordered_writer_slab_order(tmp_path):
    """A row-major write into a col-major tile: the writer adds the float sum in the write's
    order, not the tile's (a partial 2-D tile, so the two orders round differently)."""
    uri = str(tmp_path / "f")
    dom = tiledb.Domain(tiledb.Dim("x", domain=(0, 9), tile=5, dtype=np.int32),
                        tiledb.Dim("y", domain=(0, 9), tile=5, dtype=np.int32))
    tiledb.Array.create(uri, tiledb.ArraySchema(domain=dom, sparse=False, cell_order="col-major",
                                                attrs=[tiledb.Attr("a", dtype=np.float64)]))
    rng = np.random.default_rng(5)
    vals = rng.standard_normal((4, 3)) * 10.0 ** rng.integers(-8, 8, (4, 3))
    # the tile's own (col-major) order and the write's (row-major) round differently here
    assert np.cumsum(vals.T.ravel())[-1] != np.cumsum(vals.ravel())[-1]
    with tiledb.open(uri, "w", timestamp=1) as A:
        A[1:5, 1:4] = vals
    assert _problems(uri) == []
    with tiledb.open(uri) as A:
        np.testing.assert_array_equal(A[1:5, 1:4]["a"], vals)


# ---- 2. sparse col-major with a float dimension ------------------------------------------
X = [5, 5, 5, 42, 42, 99, 0, 17, 17, 63, 5, 88]
Y = [0.25, 0.25, -0.75, 0.0, 0.0, 1.0, -1.0, 0.5, 0.5, -0.125, 0.25, 0.9]


def _col_major_float(uri, filters=None):
    kw = {} if filters is None else {"filters": filters}
    plain = {} if filters is None else {"coords_filters": filters}
    dom = tiledb.Domain(tiledb.Dim("x", domain=(0, 99), tile=10, dtype=np.int32, **kw),
                        tiledb.Dim("y", domain=(-1.0, 1.0), tile=0.5, dtype=np.float64, **kw))
    tiledb.Array.create(uri, tiledb.ArraySchema(
        domain=dom, sparse=True, allows_duplicates=True, tile_order="col-major",
        cell_order="col-major", capacity=5, attrs=[tiledb.Attr("v", dtype=np.int32)], **plain))
    with tiledb.open(uri, "w", timestamp=1) as A:
        A[np.array(X, np.int32), np.array(Y)] = {"v": np.arange(12, dtype=np.int32)}


def test_col_major_float_dimension_global_order(tmp_path):
    uri = str(tmp_path / "s")
    _col_major_float(uri)
    assert _problems(uri) == []
    with tiledb.open(uri) as A:
        got = A.query(order="G")[:]
    # libtiledb's global order: y's tile, x's tile, then y, then x
    key = [(int((y + 1.0) / 0.5), x // 10, y, x) for x, y in zip(X, Y)]
    assert [(int((y + 1.0) / 0.5), x // 10, y, x) for x, y in zip(got["x"], got["y"])] == \
        sorted(key)


def test_col_major_float_dimension_swapped_cells_are_found(tmp_path):
    uri = str(tmp_path / "s")
    _col_major_float(uri, tiledb.FilterList([]))
    assert _problems(uri) == []
    with tiledb.open(uri) as A:
        ys = A.query(order="G")[:]["y"]
    path = os.path.join(_frags(uri)[0], "d1.tdb")
    raw = bytearray(open(path, "rb").read())
    # the first two distinct y values of one tile, swapped
    a, b = struct.pack("<d", -1.0), struct.pack("<d", -0.75)
    assert ys[0] == -1.0 and ys[1] == -0.75
    i, j = raw.index(a), raw.index(b)
    raw[i:i + 8], raw[j:j + 8] = b, a
    open(path, "wb").write(bytes(raw))
    assert COORD_ORDER in {f.code for f in _problems(uri)}


# ---- 3. more var-sized attributes than tiles ---------------------------------------------
WORDS = ["ntya", "vy", "iw", "hvgk", "ocawtv", "vilud", "dlz", "jk", "fngatbhm", "dztz", "s",
         "oyh"]


def _many_var(uri):
    dom = tiledb.Domain(tiledb.Dim("d", domain=(0, 11), tile=4, dtype=np.int64))
    none = tiledb.FilterList([])
    tiledb.Array.create(uri, tiledb.ArraySchema(domain=dom, sparse=False, attrs=[
        tiledb.Attr("s1", dtype="ascii", var=True, filters=none),
        tiledb.Attr("s2", dtype=str, var=True),
        tiledb.Attr("l", dtype=np.int32, var=True),
        tiledb.Attr("b", dtype=bytes, var=True),
        tiledb.Attr("n", dtype=str, var=True, nullable=True)]))
    data = {
        "s1": np.array(WORDS, dtype=object),
        "s2": np.array(["é" + w for w in WORDS], dtype=object),
        "l": np.array([np.arange(i % 4 + 1, dtype=np.int32) for i in range(12)], dtype=object),
        "b": np.array([bytes([i, 255 - i]) * (i % 3 + 1) for i in range(12)], dtype=object),
        "n": np.array([None if i % 3 == 0 else "zz" + w for i, w in enumerate(WORDS)],
                      dtype=object)}
    with tiledb.open(uri, "w", timestamp=1) as A:
        A[0:12] = data


def test_more_var_attributes_than_tiles(tmp_path):
    uri = str(tmp_path / "v")
    _many_var(uri)
    report = _report(uri)
    assert [f for f in report.findings if f.status in ("error", "warning")] == []
    quirks = [f for f in report.findings if f.code == WRITER_QUIRK and "'s1'" in f.message]
    assert len(quirks) == 1 and quirks[0].status == "info"
    with tiledb.open(uri) as A:
        assert [w.decode() for w in A[:]["s1"]] == WORDS


def test_more_var_attributes_than_tiles_changed_cell_is_found(tmp_path):
    uri = str(tmp_path / "v")
    _many_var(uri)
    # the last tile's minimum, which that writer copies into tile 1's slot: now "aztz"
    _replace(os.path.join(_frags(uri)[0], "a0_var.tdb"), b"dztzsoyh", b"aztzsoyh")
    with tiledb.open(uri) as A:
        assert A[9]["s1"] == b"aztz"
    found = [(f.code, os.path.basename(f.source), f.message) for f in _problems(uri)]
    assert found == [(TILE_STAT, "a0.tdb", "tile 1 of 's1': libtiledb's ordered dense writer "
                      "(more attributes than tiles) stores the last tile's minimum here, "
                      "b'aztz'; the fragment metadata says b'dztz'")]


# ---- 4. nullable var strings under RLE / DICTIONARY --------------------------------------
STRINGS = ["foo", "bar", "foo", "", "baz", "foo", "q", "bar", "zz"]
NULLS = [False, True, False, False, True, False, False, False, True]


def _nullable_coded(uri, sparse, filt):
    dom = tiledb.Domain(tiledb.Dim("d", domain=(0, 8), tile=3, dtype=np.int64))
    tiledb.Array.create(uri, tiledb.ArraySchema(
        domain=dom, sparse=sparse, validity_filters=tiledb.FilterList([]),
        attrs=[tiledb.Attr("a", dtype="ascii", var=True, nullable=True, filters=[filt()])]))
    # tiledb-py writes a None as a null (a masked object array's mask it drops)
    vals = np.array([None if n else v for v, n in zip(STRINGS, NULLS)], dtype=object)
    with tiledb.open(uri, "w", timestamp=1) as A:
        if sparse:
            A[np.arange(9)] = {"a": vals}
        else:
            A[0:9] = {"a": vals}


@pytest.mark.parametrize("sparse", [False, True], ids=["dense", "sparse"])
@pytest.mark.parametrize("filt", [tiledb.RleFilter, tiledb.DictionaryFilter],
                         ids=["rle", "dictionary"])
def test_nullable_coded_strings(tmp_path, sparse, filt):
    uri = str(tmp_path / "n")
    _nullable_coded(uri, sparse, filt)
    assert _problems(uri) == []
    with tiledb.open(uri) as A:
        got = A[:]["a"]
    assert [None if m else v.decode() for v, m in zip(got.data, np.ma.getmaskarray(got))] == \
        [None if n else s for s, n in zip(STRINGS, NULLS)]
    # a validity byte that is neither 0 nor 1 is still found
    path = os.path.join(_frags(uri)[0], "a0_validity.tdb")
    raw = bytearray(open(path, "rb").read())
    raw[-1] = 2
    open(path, "wb").write(bytes(raw))
    assert VALIDITY_VALUE in {f.code for f in _problems(uri)}
