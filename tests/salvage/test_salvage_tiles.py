"""Tile-level salvage of TileDB fragments tiledb-py wrote: one tile damaged, the fragment
rewritten without it. libtiledb refuses the damaged array and reads the copy; every kept
cell equals the original's, exactly the damaged tile's cells are lost, verify is clean."""
from __future__ import annotations

import glob
import os

import numpy as np
import pytest

tiledb = pytest.importorskip("tiledb")

from tests.salvage.support import (  # noqa: E402
    break_zstd_frame,
    lost_parts,
    salvage_cli,
    tree_hash,
    verify_exit,
)

ZSTD = [tiledb.ZstdFilter()]


def _frag(path: str, t: int) -> str:
    (d,) = glob.glob(os.path.join(path, "__fragments", f"__{t}_{t}_*"))
    return d


def _nulled(values) -> list:
    """Cells as a list, None where null (tiledb-py reads a nullable field masked)."""
    mask = np.ma.getmaskarray(values)
    return [None if m else v for v, m in zip(np.ma.getdata(values), mask)]


def _refused(path: str) -> None:
    with pytest.raises(tiledb.TileDBError):
        with tiledb.open(path) as A:
            A.query(return_arrow=False)[:]


def test_dense_2d_middle_tile_over_an_older_fragment(tmp_path, capsys):
    """Fragment 2 covers 4 × 4 tiles (col-major cells, a var string attribute);
    its middle tile is damaged: the copy holds it as 4 boxes around that tile, and the
    tile's cells read as fragment 1's beneath it."""
    src, out = str(tmp_path / "d"), str(tmp_path / "out")
    dom = tiledb.Domain(tiledb.Dim("r", domain=(0, 39), tile=10, dtype=np.int32),
                        tiledb.Dim("c", domain=(0, 39), tile=10, dtype=np.int32))
    tiledb.Array.create(src, tiledb.ArraySchema(domain=dom, cell_order="col-major", attrs=[
        tiledb.Attr("a", dtype=np.float64, filters=ZSTD),
        tiledb.Attr("s", dtype=str, var=True, filters=ZSTD)]))
    whole = np.arange(1600, dtype=np.float64).reshape(40, 40)
    with tiledb.open(src, "w", timestamp=1) as A:
        A[:, :] = {"a": whole, "s": np.full((40, 40), "old", dtype=object)}
    part = -np.arange(900, dtype=np.float64).reshape(30, 30)
    text = np.array([[f"v{i}-{j}" * (j % 3) for j in range(30)]
                     for i in range(30)], dtype=object)
    with tiledb.open(src, "w", timestamp=2) as A:
        A[5:35, 5:35] = {"a": part, "s": text}
    with tiledb.open(src) as A:
        before = A[:, :]
    # tiles of fragment 2 (rows/cols 0-9, 10-19, 20-29, 30-39 expanded): 4 × 4, the data
    # of tile (1, 1) (r, c 10..19) is the 6th zstd frame of a0.tdb (row-major tile order)
    break_zstd_frame(os.path.join(_frag(src, 2), "a0.tdb"), nth=5)
    _refused(src)
    h = tree_hash(src)
    code, rep = salvage_cli(src, out, capsys=capsys)
    assert code == 3
    (lost,) = lost_parts(rep)
    assert lost["kind"] == "tiles" and lost["cells"] == 100 and lost["fields"] == ["a", "s"]
    assert rep["totals"]["."]["a"] == {"kept": 1600 + 800, "lost": 100}
    with tiledb.open(out) as A:
        got = A[:, :]
    hole = np.zeros((40, 40), bool)
    hole[10:20, 10:20] = True
    assert np.array_equal(got["a"][~hole], before["a"][~hole])
    assert np.array_equal(got["a"][hole], whole[hole])              # fragment 1 beneath
    s_got, s_before = np.asarray(got["s"], dtype=object), np.asarray(before["s"], dtype=object)
    assert (s_got[~hole] == s_before[~hole]).all() and (s_got[hole] == "old").all()
    frags = sorted(os.listdir(os.path.join(out, "__fragments")))
    assert len(frags) == 1 + 4 and all(f.startswith("__2_2_") for f in frags[1:])
    assert verify_exit(out) == (0, [])
    assert tree_hash(src) == h


def test_sparse_var_nullable_one_tile(tmp_path, capsys):
    """A sparse fragment of 7 tiles (capacity 6): the var bytes of its tile 4 damaged; the
    other 6 tiles' cells (strings, nulls, var int lists) come back."""
    src, out = str(tmp_path / "s"), str(tmp_path / "out")
    dom = tiledb.Domain(tiledb.Dim("k", domain=(0, 999), tile=100, dtype=np.int64))
    tiledb.Array.create(src, tiledb.ArraySchema(domain=dom, sparse=True, capacity=6, attrs=[
        tiledb.Attr("s", dtype=str, var=True, nullable=True, filters=ZSTD),
        tiledb.Attr("v", dtype=np.int32, var=True, filters=ZSTD),
        tiledb.Attr("n", dtype=np.float32, nullable=True, filters=ZSTD)]))
    k = np.arange(0, 40 * 7, 7, dtype=np.int64)
    with tiledb.open(src, "w", timestamp=3) as A:
        A[k] = {"s": np.array([None if i % 5 == 0 else f"s{i}" * (i % 4) for i in range(40)],
                              dtype=object),
                "v": np.array([np.arange(i % 5, dtype=np.int32) for i in range(40)], dtype=object),
                "n": np.where(np.arange(40) % 3 == 0, np.nan, np.arange(40)).astype(np.float32)}
    with tiledb.open(src) as A:
        before = A.query(return_arrow=False)[:]
    break_zstd_frame(os.path.join(_frag(src, 3), "a0_var.tdb"), nth=3)
    _refused(src)
    code, rep = salvage_cli(src, out, capsys=capsys)
    assert code == 3
    (lost,) = lost_parts(rep)
    assert lost["cells"] == 6 and lost["name"].endswith("tile(s) 4")
    assert lost["why"][0]["source"].endswith("a0_var.tdb")
    assert rep["totals"]["."]["k"] == {"kept": 34, "lost": 6}
    with tiledb.open(out) as A:
        got = A.query(return_arrow=False)[:]
    keep = np.ones(40, bool)
    keep[18:24] = False                  # tile 4 in global order: cells 18..23
    assert list(got["k"]) == list(before["k"][keep])
    assert _nulled(got["s"]) == [v for v, k in zip(_nulled(before["s"]), keep) if k]
    assert _nulled(got["s"]).count(None) == 7       # 8 nulls, one in the lost tile
    assert [list(x) for x in got["v"]] == [list(x) for x in before["v"][keep]]
    n_got, n_before = got["n"], before["n"]
    assert np.array_equal(np.ma.getmaskarray(n_got), np.ma.getmaskarray(n_before)[keep])
    assert np.array_equal(np.ma.filled(n_got, 0), np.ma.filled(n_before, 0)[keep])
    assert verify_exit(out) == (0, [])


def test_without_tiledb_py_the_fragment_is_left_out_whole(tmp_path, capsys, monkeypatch):
    from arrayscope.formats.salvage import tiledb_fragment

    monkeypatch.setattr(tiledb_fragment, "unavailable", lambda: "tiledb-py is not installed")
    src, out = str(tmp_path / "d"), str(tmp_path / "out")
    dom = tiledb.Domain(tiledb.Dim("x", domain=(0, 29), tile=10, dtype=np.int32))
    tiledb.Array.create(src, tiledb.ArraySchema(domain=dom, attrs=[
        tiledb.Attr("a", dtype=np.int64, filters=ZSTD)]))
    with tiledb.open(src, "w", timestamp=1) as A:
        A[:] = np.arange(30, dtype=np.int64)
    break_zstd_frame(os.path.join(_frag(src, 1), "a0.tdb"), nth=1)
    code, rep = salvage_cli(src, out, capsys=capsys)
    assert code == 3
    (lost,) = lost_parts(rep)
    assert lost["kind"] == "fragment" and lost["cells"] == 30
    assert any("left out whole: tiledb-py is not installed" in n for n in rep["notes"])
    with tiledb.open(out) as A:
        assert A.nonempty_domain() is None
    assert verify_exit(out) == (0, [])


def test_a_refused_write_leaves_the_fragment_out_whole(tmp_path, capsys, monkeypatch):
    """libtiledb refusing the second box's write: nothing of the fragment reaches OUT (no
    half-rewritten fragment), the fragment is reported lost whole with the library's word."""
    from arrayscope.formats.salvage import libtiledb_write

    real = libtiledb_write.ScratchArray.write
    calls = []

    def second_fails(self, timestamp, cells, rect=None):
        calls.append(rect)
        if len(calls) == 2:
            raise tiledb.TileDBError("refused for the test")
        return real(self, timestamp, cells, rect)

    monkeypatch.setattr(libtiledb_write.ScratchArray, "write", second_fails)
    src, out = str(tmp_path / "d"), str(tmp_path / "out")
    dom = tiledb.Domain(tiledb.Dim("x", domain=(0, 29), tile=10, dtype=np.int32))
    tiledb.Array.create(src, tiledb.ArraySchema(domain=dom, attrs=[
        tiledb.Attr("a", dtype=np.int64, filters=ZSTD)]))
    with tiledb.open(src, "w", timestamp=1) as A:
        A[:] = np.arange(30, dtype=np.int64)
    break_zstd_frame(os.path.join(_frag(src, 1), "a0.tdb"), nth=1)   # the middle tile
    code, rep = salvage_cli(src, out, capsys=capsys)
    assert code == 3 and len(calls) == 2                # boxes x 0..9 and x 20..29
    (lost,) = lost_parts(rep)
    assert lost["kind"] == "fragment" and lost["cells"] == 30
    assert any("TileDBError: refused for the test" in n for n in rep["notes"])
    assert os.listdir(os.path.join(out, "__fragments")) == []
    assert os.listdir(os.path.join(out, "__commits")) == []
    assert verify_exit(out) == (0, [])


def test_consolidated_dense_fragment_keeps_its_timestamp_range(tmp_path, capsys):
    """A consolidated (and vacuumed) dense fragment __1_3 with its 5th tile damaged: the
    pieces written back are named __1_3_<uuid>, __1_3_<uuid + 1> (so a reader at any time
    sees them when it saw the original); 80 of 90 cells kept."""
    src, out = str(tmp_path / "c"), str(tmp_path / "out")
    dom = tiledb.Domain(tiledb.Dim("x", domain=(0, 89), tile=10, dtype=np.int32))
    tiledb.Array.create(src, tiledb.ArraySchema(domain=dom, attrs=[
        tiledb.Attr("a", dtype=np.int64, filters=ZSTD)]))
    for k in range(3):
        with tiledb.open(src, "w", timestamp=k + 1) as A:
            A[k * 30:k * 30 + 30] = np.arange(30) + 100 * k
    tiledb.consolidate(src)
    tiledb.vacuum(src)
    with tiledb.open(src) as A:
        before = A[:]["a"]
    (cons,) = glob.glob(os.path.join(src, "__fragments", "__1_3_*"))
    break_zstd_frame(os.path.join(cons, "a0.tdb"), nth=4)        # x 40..49
    _refused(src)
    code, rep = salvage_cli(src, out, capsys=capsys)
    assert code == 3 and rep["totals"]["."]["a"] == {"kept": 80, "lost": 10}
    name = os.path.basename(cons)
    uuid = name.split("_")[4]
    bumped = f"{int(uuid, 16) + 1:032x}"
    assert sorted(os.listdir(os.path.join(out, "__fragments"))) == \
        [name, name.replace(uuid, bumped)]
    with tiledb.open(out) as A:
        got = A[:]["a"]
    hole = np.zeros(90, bool)
    hole[40:50] = True
    assert np.array_equal(got[~hole], before[~hole])
    assert (got[hole] == np.iinfo(np.int64).min).all()
    assert verify_exit(out) == (0, [])


def test_consolidated_sparse_fragment_with_cell_timestamps(tmp_path, capsys):
    """A consolidated, vacuumed sparse fragment __1_3 (per-cell write times, 120 cells of
    three overlapping writes) with its 4th tile damaged: written back as one fragment per
    write time (__1_1, __2_2, __3_3), so a reader at every T reads what it read before,
    less the tile's cells: global order holds x 0..19 once, then x 20..59 twice, so tile
    4 (capacity 10: cells 30..39) is x 25..29 of writes 1 and 2."""
    src, out = str(tmp_path / "c"), str(tmp_path / "out")
    dom = tiledb.Domain(tiledb.Dim("x", domain=(0, 89), tile=10, dtype=np.int32))
    tiledb.Array.create(src, tiledb.ArraySchema(domain=dom, sparse=True, capacity=10, attrs=[
        tiledb.Attr("a", dtype=np.int64, filters=ZSTD)]))
    for k in range(3):
        with tiledb.open(src, "w", timestamp=k + 1) as A:
            A[np.arange(k * 20, k * 20 + 40, dtype=np.int32)] = np.arange(40) + 100 * k
    tiledb.consolidate(src)
    tiledb.vacuum(src)
    before = {}
    for t in (1, 2, 3):
        with tiledb.open(src, timestamp=t) as A:
            before[t] = A[:]
    (cons,) = glob.glob(os.path.join(src, "__fragments", "__1_3_*"))
    assert "t.tdb" in os.listdir(cons)
    break_zstd_frame(os.path.join(cons, "a0.tdb"), nth=3)
    _refused(src)
    code, rep = salvage_cli(src, out, capsys=capsys)
    assert code == 3 and rep["totals"]["."]["a"] == {"kept": 110, "lost": 10}
    assert [f[:5] for f in sorted(os.listdir(os.path.join(out, "__fragments")))] == \
        ["__1_1", "__2_2", "__3_3"]
    for t in (1, 2, 3):
        with tiledb.open(out, timestamp=t) as A:
            got = A[:]
        keep = ~np.isin(before[t]["x"], np.arange(25, 30))
        assert np.array_equal(got["x"], before[t]["x"][keep])
        assert np.array_equal(got["a"], before[t]["a"][keep])
    assert verify_exit(out) == (0, [])


def test_string_and_datetime_dimensions_hilbert_complex(tmp_path, capsys):
    """A sparse fragment keyed by an ASCII string and a datetime, Hilbert order, duplicates,
    a complex64 attribute (2 values per cell): tile 3 of 5 damaged, the other 18 cells
    written back exactly (a buffer counts values of the datatype, not cells)."""
    src, out = str(tmp_path / "m"), str(tmp_path / "out")
    dom = tiledb.Domain(
        tiledb.Dim("name", domain=(None, None), tile=None, dtype="ascii"),
        tiledb.Dim("t", domain=(np.datetime64("2020-01-01"), np.datetime64("2030-01-01")),
                   tile=np.timedelta64(100, "D"), dtype="datetime64[D]"))
    tiledb.Array.create(src, tiledb.ArraySchema(
        domain=dom, sparse=True, capacity=5, allows_duplicates=True, cell_order="hilbert",
        attrs=[tiledb.Attr("p", dtype=np.complex64, filters=ZSTD),
               tiledb.Attr("c", dtype=np.int16, filters=ZSTD)]))
    n = 23
    with tiledb.open(src, "w", timestamp=4) as A:
        A[np.array([f"key{i % 7}" for i in range(n)], dtype="S"),
          np.datetime64("2021-01-01") + np.arange(n).astype("timedelta64[D]") * 9] = {
            "p": (np.arange(n) - 1j * np.arange(n)).astype(np.complex64),
            "c": np.arange(n, dtype=np.int16)}
    with tiledb.open(src) as A:
        before = A.query(order="G")[:]
    break_zstd_frame(os.path.join(_frag(src, 4), "a1.tdb"), nth=2)
    _refused(src)
    code, rep = salvage_cli(src, out, capsys=capsys)
    assert code == 3 and rep["totals"]["."]["p"] == {"kept": 18, "lost": 5}
    with tiledb.open(out) as A:
        got = A.query(order="G")[:]
    keep = np.ones(n, bool)
    keep[10:15] = False                      # tile 3 in global (Hilbert) order
    for f in ("name", "t", "p", "c"):
        assert np.array_equal(got[f], before[f][keep]), f
    assert verify_exit(out) == (0, [])
