"""`arrayscope salvage` on TileDB arrays tiledb-py wrote, each damaged in one zstd frame (or
one encrypted tile) so that libtiledb refuses the read: the copy opens, every kept cell
equals the original's, the lost ones are those of the damaged fragment, verify is clean
and the damaged array is unchanged."""
from __future__ import annotations

import glob
import os

import numpy as np
import pytest

tiledb = pytest.importorskip("tiledb")

from tests.salvage.support import (  # noqa: E402
    break_zstd_frame,
    flip,
    lost_parts,
    salvage_cli,
    tree_hash,
    verify_exit,
)

ZSTD = [tiledb.ZstdFilter()]


def _frag(path: str, t: int) -> str:
    (d,) = glob.glob(os.path.join(path, "__fragments", f"__{t}_{t}_*"))
    return d


def _dense(path: str) -> None:
    dom = tiledb.Domain(tiledb.Dim("x", domain=(0, 89), tile=10, dtype=np.int32))
    tiledb.Array.create(path, tiledb.ArraySchema(domain=dom, attrs=[
        tiledb.Attr("a", dtype=np.int64, filters=ZSTD)]))
    for k in range(3):
        with tiledb.open(path, "w", timestamp=k + 1) as A:
            A[k * 30:k * 30 + 30] = np.arange(30, dtype=np.int64) + 100 * k
            A.meta[f"k{k}"] = k


def test_dense_multi_fragment(tmp_path, capsys):
    src, out = str(tmp_path / "a"), str(tmp_path / "out")
    _dense(src)
    with tiledb.open(src) as A:
        before = A[:]["a"]
    break_zstd_frame(os.path.join(_frag(src, 2), "a0.tdb"))
    with pytest.raises(tiledb.TileDBError):   # libtiledb refuses the whole read
        with tiledb.open(src) as A:
            A[:]
    h = tree_hash(src)
    code, rep = salvage_cli(src, out, capsys=capsys)
    assert code == 3
    (lost,) = lost_parts(rep)   # the first tile of the fragment at 2 (cells 30..39)
    assert lost["kind"] == "tile" and lost["cells"] == 10 and lost["name"].endswith(" tile 0")
    assert lost["why"][0]["code"] == "chunk-decode-failed" and lost["why"][0]["source"].endswith("a0.tdb")
    assert rep["totals"]["."]["a"] == {"kept": 80, "lost": 10}
    with tiledb.open(out) as A:
        got = A[:]["a"]
        meta = dict(A.meta.items())
    fill = np.iinfo(np.int64).min
    assert np.array_equal(got[:30], before[:30]) and np.array_equal(got[40:], before[40:])
    assert (got[30:40] == fill).all()
    assert meta == {"k0": 0, "k1": 1, "k2": 2}
    assert verify_exit(out) == (0, [])
    assert tree_hash(src) == h
    assert sorted(os.listdir(os.path.join(out, "__commits"))) == \
        sorted(os.path.basename(_frag(src, t)) + ".wrt" for t in (1, 2, 3))


def test_clean_array_is_copied_whole(tmp_path, capsys):
    src, out = str(tmp_path / "a"), str(tmp_path / "out")
    _dense(src)
    code, rep = salvage_cli(src, out, capsys=capsys)
    assert code == 0 and not lost_parts(rep)
    with tiledb.open(src) as A, tiledb.open(out) as B:
        assert np.array_equal(A[:]["a"], B[:]["a"])
    for t in (1, 2, 3):
        f = os.path.basename(_frag(src, t))
        for name in os.listdir(_frag(src, t)):
            a = open(os.path.join(src, "__fragments", f, name), "rb").read()
            assert open(os.path.join(out, "__fragments", f, name), "rb").read() == a


def test_at_leaves_out_later_fragments(tmp_path, capsys):
    src, out = str(tmp_path / "a"), str(tmp_path / "out")
    _dense(src)
    code, rep = salvage_cli(src, out, "--at", "2", capsys=capsys)
    assert code == 0 and [p["name"].split("/")[1][:5] for p in rep["parts"]
                          if p["kind"] == "fragment"] == ["__1_1", "__2_2"]
    with tiledb.open(src, timestamp=2) as A, tiledb.open(out) as B:
        assert np.array_equal(A[:]["a"], B[:]["a"])
        assert dict(B.meta.items()) == {"k0": 0, "k1": 1}


def test_sparse_2d(tmp_path, capsys):
    src, out = str(tmp_path / "s"), str(tmp_path / "out")
    dom = tiledb.Domain(tiledb.Dim("x", domain=(0, 99), tile=10, dtype=np.int32),
                        tiledb.Dim("y", domain=(0, 99), tile=10, dtype=np.int32))
    tiledb.Array.create(src, tiledb.ArraySchema(domain=dom, sparse=True, capacity=8, attrs=[
        tiledb.Attr("v", dtype=np.float64, filters=ZSTD)]))
    for k in range(2):
        with tiledb.open(src, "w", timestamp=k + 1) as A:
            x = np.arange(40, dtype=np.int32)
            A[x, (x * 3 + k) % 100] = {"v": x * 1.5 + k}
    with tiledb.open(src, timestamp=1) as A:
        first = A[:]
    break_zstd_frame(os.path.join(_frag(src, 2), "a0.tdb"), nth=2)
    with pytest.raises(tiledb.TileDBError):
        with tiledb.open(src) as A:
            A[:]
    h = tree_hash(src)
    code, rep = salvage_cli(src, out, capsys=capsys)
    assert code == 3
    (lost,) = lost_parts(rep)   # the fragment at 2's third tile (capacity 8: cells 16..23)
    assert lost["cells"] == 8 and lost["fields"] == ["x", "y", "v"]
    assert rep["totals"]["."]["v"] == {"kept": 72, "lost": 8}
    with tiledb.open(out) as A:
        got = A[:]
    second = {f: got[f][(got["y"] - got["x"] * 3) % 100 == 1] for f in ("x", "y", "v")}
    firsts = {f: got[f][(got["y"] - got["x"] * 3) % 100 == 0] for f in ("x", "y", "v")}
    for f in ("x", "y", "v"):
        assert np.array_equal(firsts[f], first[f])
    x = np.arange(40)
    kept = np.r_[x[:16], x[24:]]
    order = np.argsort(second["x"])
    assert np.array_equal(second["x"][order], kept)
    assert np.array_equal(second["v"][order], kept * 1.5 + 1)
    assert verify_exit(out) == (0, [])
    assert tree_hash(src) == h


def test_var_strings_and_nullable(tmp_path, capsys):
    src, out = str(tmp_path / "v"), str(tmp_path / "out")
    dom = tiledb.Domain(tiledb.Dim("i", domain=(0, 59), tile=10, dtype=np.int64))
    tiledb.Array.create(src, tiledb.ArraySchema(domain=dom, sparse=True, attrs=[
        tiledb.Attr("s", dtype=str, var=True, filters=ZSTD),
        tiledb.Attr("n", dtype=np.int32, nullable=True, filters=ZSTD)]))
    for k in range(2):
        with tiledb.open(src, "w", timestamp=k + 1) as A:
            i = np.arange(k * 30, k * 30 + 30)
            A[i] = {"s": np.array([f"cell-{j}" * (j % 4) for j in i], dtype=object),
                    "n": np.ma.masked_array(i.astype(np.int32), mask=i % 3 == 0)}
    with tiledb.open(src) as A:
        before = A.query(return_arrow=False)[:]
    # the var-size data of the first fragment's string attribute
    break_zstd_frame(os.path.join(_frag(src, 1), "a0_var.tdb"))
    with pytest.raises(tiledb.TileDBError):
        with tiledb.open(src) as A:
            A[:]
    code, rep = salvage_cli(src, out, capsys=capsys)
    assert code == 3 and [p["cells"] for p in lost_parts(rep)] == [30]
    with tiledb.open(out) as A:
        got = A[:]
    keep = before["i"] >= 30
    assert list(got["i"]) == list(before["i"][keep])
    assert list(got["s"]) == list(np.asarray(before["s"])[keep])
    assert np.array_equal(np.ma.getmaskarray(got["n"]), np.ma.getmaskarray(before["n"])[keep])
    assert verify_exit(out) == (0, [])


def test_encrypted_stays_encrypted(tmp_path, capsys):
    key = "0123456789abcdeF0123456789abcdeF"
    ctx = tiledb.Ctx({"sm.encryption_type": "AES_256_GCM", "sm.encryption_key": key})
    src, out = str(tmp_path / "e"), str(tmp_path / "out")
    dom = tiledb.Domain(tiledb.Dim("x", domain=(0, 39), tile=10, dtype=np.int32), ctx=ctx)
    tiledb.Array.create(src, tiledb.ArraySchema(domain=dom, ctx=ctx, attrs=[
        tiledb.Attr("a", dtype=np.float32, ctx=ctx)]), ctx=ctx)
    for k in range(2):
        with tiledb.open(src, "w", timestamp=k + 1, ctx=ctx) as A:
            A[k * 20:k * 20 + 20] = np.arange(20, dtype=np.float32) + k
    with tiledb.open(src, ctx=ctx) as A:
        before = A[:]["a"]
    a0 = os.path.join(_frag(src, 1), "a0.tdb")
    flip(a0, os.path.getsize(a0) - 8)   # inside the last tile's encrypted bytes
    with pytest.raises(tiledb.TileDBError):
        with tiledb.open(src, ctx=ctx) as A:
            A[:]
    kf = tmp_path / "key"
    kf.write_bytes(key.encode())
    code, rep = salvage_cli(src, out, "--key-file", str(kf), capsys=capsys)
    assert code == 3
    (lost,) = lost_parts(rep)   # the first fragment's second tile
    assert lost["cells"] == 10 and lost["why"][0]["code"] == "aes-tag-mismatch"
    with tiledb.open(out, ctx=ctx) as A:
        got = A[:]["a"]
    assert np.array_equal(got[20:], before[20:]) and np.array_equal(got[:10], before[:10])
    assert np.isnan(got[10:20]).all()
    with pytest.raises(tiledb.TileDBError):   # still encrypted: no key, no schema
        tiledb.open(out)
    assert verify_exit(out, key.encode()) == (0, [])


def test_group_members_one_by_one(tmp_path, capsys):
    src, out = str(tmp_path / "g"), str(tmp_path / "out")
    tiledb.group_create(src)
    _dense(os.path.join(src, "d"))
    _dense(os.path.join(src, "e"))
    with tiledb.Group(src, "w") as g:
        g.add("d", name="d", relative=True)
        g.add("e", name="e", relative=True)
        g.meta["title"] = "two"
    break_zstd_frame(os.path.join(_frag(os.path.join(src, "e"), 3), "a0.tdb"))
    h = tree_hash(src)
    code, rep = salvage_cli(src, out, capsys=capsys)
    assert code == 3
    assert [(p["array"], p["cells"]) for p in lost_parts(rep)] == [("e", 10)]
    with tiledb.Group(out) as g:
        assert sorted(m.name for m in g) == ["d", "e"] and g.meta["title"] == "two"
    with tiledb.open(os.path.join(src, "d")) as A, tiledb.open(os.path.join(out, "d")) as B:
        assert np.array_equal(A[:]["a"], B[:]["a"])
    with tiledb.open(os.path.join(out, "e")) as B:
        assert (B[60:70]["a"] == np.iinfo(np.int64).min).all()
        assert list(B[70:73]["a"]) == [210, 211, 212]
    assert verify_exit(out) == (0, [])
    assert tree_hash(src) == h


def test_out_must_be_new_and_outside(tmp_path, capsys):
    src = str(tmp_path / "a")
    _dense(src)
    h = tree_hash(src)
    existing = tmp_path / "there"
    existing.mkdir()
    assert salvage_cli(src, str(existing), capsys=capsys)[0] == 2
    assert os.listdir(existing) == []
    assert salvage_cli(src, os.path.join(src, "copy"), capsys=capsys)[0] == 2
    assert salvage_cli(str(tmp_path / "nothing"), str(tmp_path / "o"), capsys=capsys)[0] == 2
    assert not os.path.exists(tmp_path / "o")
    assert tree_hash(src) == h


def test_damaged_consolidated_fragment_read_from_those_it_replaced(tmp_path, capsys):
    src, out = str(tmp_path / "c"), str(tmp_path / "out")
    dom = tiledb.Domain(tiledb.Dim("x", domain=(0, 89), tile=10, dtype=np.int32))
    tiledb.Array.create(src, tiledb.ArraySchema(domain=dom, sparse=True, attrs=[
        tiledb.Attr("a", dtype=np.int64, filters=ZSTD)]))
    for k in range(3):
        with tiledb.open(src, "w", timestamp=k + 1) as A:
            A[np.arange(k * 30, k * 30 + 30, dtype=np.int32)] = np.arange(30) + 100 * k
    tiledb.consolidate(src)          # __1_3 and its .vac; the three it replaced stay
    with tiledb.open(src) as A:
        before = A[:]
    (cons,) = glob.glob(os.path.join(src, "__fragments", "__1_3_*"))
    break_zstd_frame(os.path.join(cons, "a0.tdb"))
    with pytest.raises(tiledb.TileDBError):
        with tiledb.open(src) as A:
            A[:]
    code, rep = salvage_cli(src, out, capsys=capsys)
    assert code == 0          # every cell came back from the replaced fragments
    (left,) = lost_parts(rep)
    assert left["name"].startswith("__fragments/__1_3_") and left["cells"] == 0
    assert rep["totals"]["."]["a"] == {"kept": 90, "lost": 0}
    assert not [n for n in os.listdir(os.path.join(out, "__commits")) if n.endswith(".vac")]
    with tiledb.open(out) as A:
        got = A[:]
    assert np.array_equal(got["x"], before["x"]) and np.array_equal(got["a"], before["a"])
    assert verify_exit(out) == (0, [])


def test_damaged_array_metadata_left_out(tmp_path, capsys):
    src, out = str(tmp_path / "a"), str(tmp_path / "out")
    _dense(src)
    (m,) = glob.glob(os.path.join(src, "__meta", "__2_2_*"))
    flip(m, os.path.getsize(m) - 3, 2)      # inside the generic tile's zstd frame
    assert verify_exit(src)[0] == 1
    code, rep = salvage_cli(src, out, capsys=capsys)
    assert code == 3
    (lost,) = lost_parts(rep)
    assert lost["kind"] == "array-metadata" and lost["cells"] is None and lost["why"]
    with tiledb.open(out) as A:
        assert dict(A.meta.items()) == {"k0": 0, "k2": 2}
        assert A[:]["a"][75] == 215
    assert verify_exit(out) == (0, [])


SOMA = os.path.join(os.path.dirname(__file__), "..", "data", "soma", "pbmc68k")


def _arrays(root: str):
    """Every array folder under `root` (relative), found by its schema folder."""
    return sorted(os.path.relpath(d, root) for d, dirs, _ in os.walk(root) if "__schema" in dirs)


def test_soma_experiment_member_damaged(tmp_path, capsys):
    """tiledbsoma 2.3's experiment (tests/data/soma): one fragment of X/data damaged; every
    other member array copied whole, X/data's other cells kept."""
    import shutil

    src, out = str(tmp_path / "exp"), str(tmp_path / "out")
    shutil.copytree(SOMA, src)
    x = os.path.join(src, "ms", "RNA", "X", "data")
    (frag,) = glob.glob(os.path.join(x, "__fragments", "*"))
    flip(os.path.join(frag, "a0.tdb"), os.path.getsize(os.path.join(frag, "a0.tdb")) - 6)
    with pytest.raises(tiledb.TileDBError):
        with tiledb.open(x) as A:
            A[:]
    h = tree_hash(src)
    code, rep = salvage_cli(src, out, capsys=capsys)
    assert code == 3
    # X/data's one fragment holds one tile (2 400 cells, capacity 100 000): that tile is lost
    assert [(p["array"], p["kind"], p["cells"]) for p in lost_parts(rep)] == \
        [("ms/RNA/X/data", "tile", 2400)]
    assert _arrays(out) == _arrays(src)
    for rel in _arrays(src):
        if rel == "ms/RNA/X/data":
            continue
        with tiledb.open(os.path.join(src, rel)) as A, tiledb.open(os.path.join(out, rel)) as B:
            a, b = A.query(return_arrow=False)[:], B.query(return_arrow=False)[:]
            assert sorted(a) == sorted(b)
            for k in a:
                va, vb = np.asarray(a[k]), np.asarray(b[k])
                assert np.array_equal(va, vb, equal_nan=va.dtype.kind in "fc"), (rel, k)
    with tiledb.Group(os.path.join(out, "ms", "RNA")) as g:
        assert sorted(m.name for m in g) == sorted(m.name for m in tiledb.Group(
            os.path.join(src, "ms", "RNA")))
    with tiledb.open(os.path.join(out, "ms", "RNA", "X", "data")) as B:
        assert B.nonempty_domain() is None     # its one tile was the damaged one
    assert verify_exit(out) == (0, [])
    assert tree_hash(src) == h


def test_fragment_with_a_link_out_is_left_out(tmp_path, capsys):
    """A data file that is a link out of the array is never followed: its fragment cannot be
    copied whole, so it is left out (and the file outside is never read)."""
    src, out = str(tmp_path / "a"), str(tmp_path / "out")
    _dense(src)
    a0 = os.path.join(_frag(src, 1), "a0.tdb")
    os.rename(a0, str(tmp_path / "elsewhere.tdb"))
    os.symlink(str(tmp_path / "elsewhere.tdb"), a0)
    code, rep = salvage_cli(src, out, capsys=capsys)
    assert code == 3
    (lost,) = lost_parts(rep)
    assert lost["name"].startswith("__fragments/__1_1_")
    assert lost["why"][0]["code"] == "fragment-file-missing"   # verify: a0.tdb is not there
    assert not any(os.path.islink(os.path.join(d, f)) for d, _, fs in os.walk(out) for f in fs)
    with tiledb.open(out) as A:
        assert list(A[30:33]["a"]) == [100, 101, 102]


def test_dry_run_reports_the_same_and_writes_nothing(tmp_path, capsys):
    src, out = str(tmp_path / "a"), str(tmp_path / "out")
    _dense(src)
    break_zstd_frame(os.path.join(_frag(src, 2), "a0.tdb"))
    code, dry = salvage_cli(src, out, "--dry-run", capsys=capsys)
    assert code == 3 and not os.path.exists(out)
    code, real = salvage_cli(src, out, capsys=capsys)
    assert code == 3 and dry["parts"] == real["parts"] and dry["totals"] == real["totals"]


def test_encrypted_without_key_writes_nothing(tmp_path, capsys):
    key = "0123456789abcdeF0123456789abcdeF"
    ctx = tiledb.Ctx({"sm.encryption_type": "AES_256_GCM", "sm.encryption_key": key})
    src, out = str(tmp_path / "e"), str(tmp_path / "out")
    dom = tiledb.Domain(tiledb.Dim("x", domain=(0, 9), tile=10, dtype=np.int32), ctx=ctx)
    tiledb.Array.create(src, tiledb.ArraySchema(domain=dom, ctx=ctx, attrs=[
        tiledb.Attr("a", dtype=np.float32, ctx=ctx)]), ctx=ctx)
    from arrayscope.explorer.cli import main

    assert main(["salvage", src, out]) == 2
    assert "no key" in capsys.readouterr().err and not os.path.exists(out)


def test_delete_commit_carried_over(tmp_path, capsys):
    src, out = str(tmp_path / "d"), str(tmp_path / "out")
    dom = tiledb.Domain(tiledb.Dim("x", domain=(0, 99), tile=10, dtype=np.int32))
    tiledb.Array.create(src, tiledb.ArraySchema(domain=dom, sparse=True, attrs=[
        tiledb.Attr("a", dtype=np.int64)]))
    with tiledb.open(src, "w", timestamp=1) as A:
        A[np.arange(20, dtype=np.int32)] = np.arange(20)
    with tiledb.open(src, "d", timestamp=2) as A:
        A.query(cond="a < 5").submit()
    code, rep = salvage_cli(src, out, capsys=capsys)
    assert code == 0
    assert [n[-4:] for n in sorted(os.listdir(os.path.join(out, "__commits")))] == [".wrt", ".del"]
    with tiledb.open(out) as B:
        assert list(B[:]["a"]) == list(range(5, 20))
    assert verify_exit(out) == (0, [])


def test_delete_commit_inside_consolidated_commits_carried_over(tmp_path, capsys):
    """Commits consolidated and vacuumed: the delete lives only inside the `.con`. OUT gets
    it back as its own `.del` (byte for byte the embedded file), so the deleted cells stay
    deleted while a damaged tile of a later fragment is dropped."""
    src, out = str(tmp_path / "d"), str(tmp_path / "out")
    dom = tiledb.Domain(tiledb.Dim("x", domain=(0, 99), tile=10, dtype=np.int32))
    tiledb.Array.create(src, tiledb.ArraySchema(domain=dom, sparse=True, capacity=10, attrs=[
        tiledb.Attr("a", dtype=np.int64, filters=ZSTD)]))
    with tiledb.open(src, "w", timestamp=1) as A:
        A[np.arange(20, dtype=np.int32)] = np.arange(20)
    with tiledb.open(src, "d", timestamp=2) as A:
        A.query(cond="a < 5").submit()
    with tiledb.open(src, "w", timestamp=3) as A:
        A[np.arange(20, 40, dtype=np.int32)] = np.arange(20, 40)
    tiledb.consolidate(src, config=tiledb.Config({"sm.consolidation.mode": "commits"}))
    tiledb.vacuum(src, config=tiledb.Config({"sm.vacuum.mode": "commits"}))
    (con,) = os.listdir(os.path.join(src, "__commits"))
    assert con.endswith(".con")
    break_zstd_frame(os.path.join(_frag(src, 3), "a0.tdb"))   # cells 20..29 of the fragment at 3
    code, rep = salvage_cli(src, out, capsys=capsys)
    assert code == 3 and not any("not carried over" in n for n in rep["notes"])
    dels = [n for n in os.listdir(os.path.join(out, "__commits")) if n.endswith(".del")]
    assert len(dels) == 1 and dels[0].startswith("__2_2_")
    with tiledb.open(out) as B:
        assert list(B[:]["a"]) == list(range(5, 20)) + list(range(30, 40))
    assert verify_exit(out) == (0, [])


def test_at_inside_a_consolidated_sparse_fragment_is_noted(tmp_path, capsys):
    """A sparse fragment of format >= 15 spanning T is read in part by a reader at T: it is
    kept whole, and the report says to open OUT at T (then it reads what PATH reads)."""
    src, out = str(tmp_path / "c"), str(tmp_path / "out")
    dom = tiledb.Domain(tiledb.Dim("x", domain=(0, 89), tile=10, dtype=np.int32))
    tiledb.Array.create(src, tiledb.ArraySchema(domain=dom, sparse=True, attrs=[
        tiledb.Attr("a", dtype=np.int64)]))
    for k in range(3):
        with tiledb.open(src, "w", timestamp=k + 1) as A:
            A[np.arange(k * 30, k * 30 + 30, dtype=np.int32)] = np.arange(30) + 100 * k
    tiledb.consolidate(src, config=tiledb.Config({"sm.consolidation.with_timestamps": "true"}))
    tiledb.vacuum(src)
    code, rep = salvage_cli(src, out, "--at", "2", capsys=capsys)
    assert code == 0 and any("open OUT at 2" in n for n in rep["notes"])
    with tiledb.open(src, timestamp=2) as A, tiledb.open(out, timestamp=2) as B:
        a, b = A[:], B[:]
    assert len(b["x"]) == 60 and np.array_equal(a["x"], b["x"]) and np.array_equal(a["a"], b["a"])
