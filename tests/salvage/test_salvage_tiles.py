"""`arrayscope salvage` keeps a damaged TileDB fragment's intact tiles (issue 29): arrays
tiledb-py writes, each damaged in one tile so that libtiledb refuses the read; the copy opens,
every kept cell equals the original's, only the damaged tile's cells are lost, verify is
clean and the report names the tile and the finding. And the writer itself: a fragment
rewritten with nothing dropped is the file libtiledb wrote, byte for byte."""
from __future__ import annotations

import glob
import os
import shutil

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
KEY = "0123456789abcdeF0123456789abcdeF"


def _frag(path: str, t: int) -> str:
    (d,) = glob.glob(os.path.join(path, "__fragments", f"__{t}_{t}_*"))
    return d


def _refused(path: str, ctx=None) -> None:
    with pytest.raises(tiledb.TileDBError):
        with tiledb.open(path, ctx=ctx) as A:
            A.query(return_arrow=False)[:]


def _cells(path: str, ctx=None) -> dict:
    """Every cell of sparse array `path`: coordinates -> {attribute: value}."""
    with tiledb.open(path, ctx=ctx) as A:
        got = A.query(return_arrow=False)[:]
        dims = [d.name for d in A.schema.domain]
        attrs = [A.schema.attr(i).name for i in range(A.schema.nattr)]
    out = {}
    for k in range(len(got[dims[0]])):
        key = tuple(_plain(got[d][k]) for d in dims)
        out[key] = {a: _plain(got[a][k]) for a in attrs}
    return out


def _plain(v):
    if isinstance(v, np.ndarray):
        return tuple(v.tolist())
    if isinstance(v, bytes):
        return v
    if v is np.ma.masked:
        return None
    return v.item() if hasattr(v, "item") else v


def _salvage(src: str, out: str, capsys, *extra: str):
    h = tree_hash(src)
    code, rep = salvage_cli(src, out, *extra, capsys=capsys)
    assert tree_hash(src) == h          # the damaged array is only read
    return code, rep


def _sparse_subset(before: dict, after: dict, lost: int) -> None:
    """`after` is `before` less `lost` cells, every kept cell unchanged."""
    assert len(after) == len(before) - lost
    for k, v in after.items():
        assert before[k] == v, k


# -- dense ---------------------------------------------------------------------------------
@pytest.mark.parametrize("order,hole", [("row-major", (4, 4)), ("col-major", (8, 4))])
def test_dense_2d_written_over_an_older_fragment(tmp_path, capsys, order, hole):
    """The newer fragment loses one 4x4 tile: there the older fragment's cells show through;
    the fragment is written as the rectangles around that tile. Its 3x4 tiles are stored in
    the array's tile order: the sixth is tile (1, 1) row-major, (2, 1) col-major."""
    src, out = str(tmp_path / "d"), str(tmp_path / "out")
    dom = tiledb.Domain(tiledb.Dim("r", domain=(0, 15), tile=4, dtype=np.int32),
                        tiledb.Dim("c", domain=(0, 15), tile=4, dtype=np.int32))
    tiledb.Array.create(src, tiledb.ArraySchema(domain=dom, tile_order=order, attrs=[
        tiledb.Attr("a", dtype=np.float64, filters=ZSTD)]))
    old = np.arange(256, dtype=np.float64).reshape(16, 16)
    with tiledb.open(src, "w", timestamp=1) as A:
        A[:, :] = old
    with tiledb.open(src, "w", timestamp=2) as A:
        A[0:12, 0:16] = -old[0:12]
    with tiledb.open(src) as A:
        before = A[:, :]["a"]
    break_zstd_frame(os.path.join(_frag(src, 2), "a0.tdb"), nth=5)
    _refused(src)
    code, rep = _salvage(src, out, capsys)
    assert code == 3
    (lost,) = lost_parts(rep)
    assert (lost["kind"], lost["cells"], lost["why"][0]["code"]) == ("tile", 16, "chunk-decode-failed")
    assert rep["totals"]["."]["a"] == {"kept": 256 + 192 - 16, "lost": 16}
    with tiledb.open(out) as A:
        got = A[:, :]["a"]
    want = before.copy()
    r, c = hole
    want[r:r + 4, c:c + 4] = old[r:r + 4, c:c + 4]
    assert np.array_equal(got, want)
    frags = [p for p in rep["parts"] if p["kind"] == "fragment" and "__2_2_" in p["name"]]
    # the tile rows above and below the hole, that row left and right of it
    assert len(frags) == (4 if r == 4 else 3) and sum(p["cells"] for p in frags) == 192 - 16
    assert len(os.listdir(os.path.join(out, "__commits"))) == len(frags) + 1
    assert verify_exit(out) == (0, [])


def test_dense_unaligned_first_tile(tmp_path, capsys):
    """A fragment over cells 5..47 (tiles of 10): its first tile holds 5 of its cells; that
    tile lost is 5 cells lost, and the rest of the fragment keeps its non-empty domain."""
    src, out = str(tmp_path / "u"), str(tmp_path / "out")
    dom = tiledb.Domain(tiledb.Dim("x", domain=(0, 99), tile=10, dtype=np.int64))
    tiledb.Array.create(src, tiledb.ArraySchema(domain=dom, attrs=[
        tiledb.Attr("a", dtype=np.int32, filters=ZSTD)]))
    with tiledb.open(src, "w", timestamp=1) as A:
        A[5:48] = np.arange(5, 48, dtype=np.int32)
    break_zstd_frame(os.path.join(_frag(src, 1), "a0.tdb"), nth=0)
    _refused(src)
    code, rep = _salvage(src, out, capsys)
    assert code == 3
    assert [(p["kind"], p["cells"]) for p in lost_parts(rep)] == [("tile", 5)]
    assert rep["totals"]["."]["a"] == {"kept": 38, "lost": 5}
    with tiledb.open(out) as A:
        assert A.nonempty_domain() == ((10, 47),)
        got = A[0:100]["a"]
    fill = np.iinfo(np.int32).min
    assert (got[:10] == fill).all() and list(got[10:48]) == list(range(10, 48))
    assert (got[48:] == fill).all()
    assert verify_exit(out) == (0, [])


def test_dense_consolidated_and_vacuumed(tmp_path, capsys):
    """The one consolidated fragment (nothing left of those it replaced) loses one tile."""
    src, out = str(tmp_path / "c"), str(tmp_path / "out")
    dom = tiledb.Domain(tiledb.Dim("x", domain=(0, 59), tile=10, dtype=np.int32))
    tiledb.Array.create(src, tiledb.ArraySchema(domain=dom, attrs=[
        tiledb.Attr("a", dtype=np.int64, filters=ZSTD)]))
    for k in range(3):
        with tiledb.open(src, "w", timestamp=k + 1) as A:
            A[k * 20:k * 20 + 20] = np.arange(20, dtype=np.int64) + 100 * k
    tiledb.consolidate(src)
    tiledb.vacuum(src)
    (cons,) = glob.glob(os.path.join(src, "__fragments", "*"))
    with tiledb.open(src) as A:
        before = A[:]["a"]
    break_zstd_frame(os.path.join(cons, "a0.tdb"), nth=3)
    _refused(src)
    code, rep = _salvage(src, out, capsys)
    assert code == 3
    assert [(p["kind"], p["cells"]) for p in lost_parts(rep)] == [("tile", 10)]
    with tiledb.open(out) as A:
        got = A[:]["a"]
    assert np.array_equal(got[:30], before[:30]) and np.array_equal(got[40:], before[40:])
    assert (got[30:40] == np.iinfo(np.int64).min).all()
    assert verify_exit(out) == (0, [])


def test_dense_var_and_nullable(tmp_path, capsys):
    src, out = str(tmp_path / "dv"), str(tmp_path / "out")
    dom = tiledb.Domain(tiledb.Dim("x", domain=(0, 49), tile=10, dtype=np.uint32))
    tiledb.Array.create(src, tiledb.ArraySchema(domain=dom, attrs=[
        tiledb.Attr("s", dtype=str, var=True, filters=ZSTD),
        tiledb.Attr("n", dtype=np.float32, nullable=True, filters=ZSTD)]))
    i = np.arange(50)
    with tiledb.open(src, "w", timestamp=1) as A:
        A[:] = {"s": np.array([f"v{j}" * (j % 3) for j in i], dtype=object),
                "n": np.ma.masked_array(i.astype(np.float32) / 4, mask=i % 4 == 1)}
    with tiledb.open(src) as A:
        before = A.query(return_arrow=False)[:]
    break_zstd_frame(os.path.join(_frag(src, 1), "a0_var.tdb"), nth=3)   # cells 30..39
    _refused(src)
    code, rep = _salvage(src, out, capsys)
    assert code == 3 and [(p["kind"], p["cells"]) for p in lost_parts(rep)] == [("tile", 10)]
    with tiledb.open(out) as A:
        got = A.query(return_arrow=False)[:]
    keep = (i < 30) | (i >= 40)
    assert list(np.asarray(got["s"])[keep]) == list(np.asarray(before["s"])[keep])
    assert all(v == "" for v in np.asarray(got["s"])[30:40])
    gn, bn = np.ma.getmaskarray(got["n"]), np.ma.getmaskarray(before["n"])
    assert np.array_equal(gn[keep], bn[keep]) and gn[30:40].all()   # fill validity: null
    assert np.array_equal(np.ma.getdata(got["n"])[keep & ~bn], np.ma.getdata(before["n"])[keep & ~bn])
    assert verify_exit(out) == (0, [])


# -- sparse --------------------------------------------------------------------------------
def _sparse_var(src: str, ctx=None, capacity: int = 6) -> None:
    dom = tiledb.Domain(tiledb.Dim("i", domain=(0, 999), tile=100, dtype=np.int64), ctx=ctx)
    tiledb.Array.create(src, tiledb.ArraySchema(domain=dom, sparse=True, capacity=capacity,
                                                ctx=ctx, attrs=[
        tiledb.Attr("s", dtype=str, var=True, filters=ZSTD, ctx=ctx),
        tiledb.Attr("n", dtype=np.int32, nullable=True, filters=ZSTD, ctx=ctx),
        tiledb.Attr("l", dtype=np.int32, var=True, filters=ZSTD, ctx=ctx)]), ctx=ctx)
    with tiledb.open(src, "w", timestamp=1, ctx=ctx) as A:
        i = np.arange(0, 40)
        lists = np.empty(len(i), dtype=object)
        lists[:] = [np.arange(j % 5, dtype=np.int32) + j for j in i]
        A[i] = {"s": np.array([f"cell-{j}" * (j % 4) for j in i], dtype=object),
                "n": np.ma.masked_array(i.astype(np.int32), mask=i % 3 == 0), "l": lists}


def test_sparse_var_strings_nullable_and_lists(tmp_path, capsys):
    src, out = str(tmp_path / "v"), str(tmp_path / "out")
    _sparse_var(src)
    before = _cells(src)
    # the string attribute's var data, its third tile (cells 12..17)
    break_zstd_frame(os.path.join(_frag(src, 1), "a0_var.tdb"), nth=2)
    _refused(src)
    code, rep = _salvage(src, out, capsys)
    assert code == 3
    (lost,) = lost_parts(rep)
    assert lost["cells"] == 6 and lost["fields"] == ["i", "s", "n", "l"]
    assert lost["why"][0]["source"].endswith("a0_var.tdb")
    after = _cells(out)
    _sparse_subset(before, after, 6)
    assert sorted(set(before) - set(after)) == [(j,) for j in range(12, 18)]
    assert verify_exit(out) == (0, [])


def test_sparse_damage_in_the_last_tile(tmp_path, capsys):
    """The last tile (4 of capacity 6) lost: the new last tile is a full one."""
    src, out = str(tmp_path / "v"), str(tmp_path / "out")
    _sparse_var(src)
    before = _cells(src)
    a1 = os.path.join(_frag(src, 1), "a1.tdb")
    break_zstd_frame(a1, nth=6)
    _refused(src)
    code, rep = _salvage(src, out, capsys)
    assert code == 3 and [p["cells"] for p in lost_parts(rep)] == [4]
    after = _cells(out)
    _sparse_subset(before, after, 4)
    assert max(after) == (35,)
    assert verify_exit(out) == (0, [])


def test_sparse_string_and_datetime_dimensions(tmp_path, capsys):
    src, out = str(tmp_path / "sd"), str(tmp_path / "out")
    dom = tiledb.Domain(
        tiledb.Dim("name", domain=(None, None), tile=None, dtype="ascii"),
        tiledb.Dim("when", domain=(np.datetime64("2020-01-01"), np.datetime64("2030-01-01")),
                   tile=np.timedelta64(30, "D"), dtype="datetime64[D]"))
    tiledb.Array.create(src, tiledb.ArraySchema(domain=dom, sparse=True, capacity=5, attrs=[
        tiledb.Attr("v", dtype=np.float32, filters=ZSTD)]))
    n = 30
    names = np.array([f"k{j:03d}" for j in range(n)], dtype=object)
    when = np.datetime64("2021-01-01") + np.arange(n).astype("timedelta64[D]") * 7
    with tiledb.open(src, "w", timestamp=1) as A:
        A[names, when] = {"v": np.arange(n, dtype=np.float32) / 2}
    before = _cells(src)
    break_zstd_frame(os.path.join(_frag(src, 1), "a0.tdb"), nth=1)
    _refused(src)
    code, rep = _salvage(src, out, capsys)
    assert code == 3 and [p["cells"] for p in lost_parts(rep)] == [5]
    after = _cells(out)
    _sparse_subset(before, after, 5)
    with tiledb.open(out) as A:
        ned = A.nonempty_domain()
    assert ned[0] == (b"k000", b"k029")
    assert verify_exit(out) == (0, [])


def test_sparse_encrypted_stays_encrypted(tmp_path, capsys):
    ctx = tiledb.Ctx({"sm.encryption_type": "AES_256_GCM", "sm.encryption_key": KEY})
    src, out = str(tmp_path / "e"), str(tmp_path / "out")
    _sparse_var(src, ctx=ctx)
    before = _cells(src, ctx)
    n1 = os.path.join(_frag(src, 1), "a1.tdb")
    flip(n1, os.path.getsize(n1) - 8)   # inside the last tile's ciphertext
    _refused(src, ctx)
    kf = tmp_path / "key"
    kf.write_bytes(KEY.encode())
    code, rep = _salvage(src, out, capsys, "--key-file", str(kf))
    assert code == 3
    (lost,) = lost_parts(rep)
    assert lost["cells"] == 4 and lost["why"][0]["code"] == "aes-tag-mismatch"
    _sparse_subset(before, _cells(out, ctx), 4)
    with pytest.raises(tiledb.TileDBError):
        tiledb.open(out)
    assert verify_exit(out, KEY.encode()) == (0, [])


def test_truncated_data_file_is_a_loss_not_a_crash(tmp_path, capsys):
    """A data file shorter than its footer says: the tiles past its end are lost."""
    src, out = str(tmp_path / "t"), str(tmp_path / "out")
    _sparse_var(src)
    before = _cells(src)
    a1 = os.path.join(_frag(src, 1), "a1.tdb")
    data = open(a1, "rb").read()
    with open(a1, "wb") as f:
        f.write(data[:-10])
    code, rep = _salvage(src, out, capsys)
    (lost,) = lost_parts(rep)
    assert lost["cells"] == 4 and "fragment-file-size" in {w["code"] for w in lost["why"]}
    _sparse_subset(before, _cells(out), 4)
    assert verify_exit(out) == (0, [])


def test_damaged_fragment_metadata_leaves_the_fragment_out_whole(tmp_path, capsys):
    src, out = str(tmp_path / "m"), str(tmp_path / "out")
    _sparse_var(src)
    fm = os.path.join(_frag(src, 1), "__fragment_metadata.tdb")
    flip(fm, 60, 2)    # inside the R-tree's generic tile
    code, rep = _salvage(src, out, capsys)
    assert code == 3
    (lost,) = lost_parts(rep)
    assert lost["kind"] == "fragment" and lost["cells"] in (40, None)
    assert any("left out whole" in n and "__fragment_metadata.tdb" in n for n in rep["notes"])


def test_text_report_names_tile_and_code(tmp_path, capsys):
    from arrayscope.explorer.cli import main

    src, out = str(tmp_path / "v"), str(tmp_path / "out")
    _sparse_var(src)
    break_zstd_frame(os.path.join(_frag(src, 1), "a0_var.tdb"), nth=2)
    assert main(["salvage", src, out]) == 3
    text = capsys.readouterr().out
    assert "left out: tile __fragments/__1_1_" in text and " tile 2 (6 cells of i, s, n, l lost)" in text
    assert "chunk-decode-failed" in text and ".: s: 34 cells kept, 6 lost" in text


# -- the writer alone --------------------------------------------------------------------------
def _rewrite_unchanged(path: str, out: str, key=None):
    """Each fragment of `path` rewritten with no tile dropped: (original, new) metadata
    file bytes per fragment."""
    from arrayscope.formats.core.context import Context
    from arrayscope.formats.core.dataset_fs import LocalFS
    from arrayscope.formats.core.document import Document
    from arrayscope.formats.salvage.damage import Damage
    from arrayscope.formats.salvage.job import Job
    from arrayscope.formats.salvage.output import Output
    from arrayscope.formats.salvage.report import SalvageReport
    from arrayscope.formats.salvage.tiledb_fragment import Fragment, rewrite
    from arrayscope.formats.tiledb.health.snapshot import take

    job = Job(LocalFS(path), key, 0, Damage([]), Output(out, path), SalvageReport(path, out))
    pairs = []
    doc = Document(path, Context(key=key))
    try:
        with take(doc) as snap:
            for fd in snap.listing.fragments.values():
                frag = Fragment(job, fd.path, fd.rel, snap.metadata[fd.name])
                rewrite(job, frag, "")
                name = "__fragment_metadata.tdb"
                pairs.append((open(os.path.join(fd.path, name), "rb").read(),
                              open(os.path.join(out, fd.rel, name), "rb").read(), frag))
    finally:
        doc.close()
    return pairs


def test_kept_tiles_are_streamed_not_held(tmp_path):
    """A 32 MiB data file of four 8 MiB tiles rewritten: its bytes come out equal while the
    rewrite holds at most a block of a tile (it held every kept tile, then their join)."""
    import tracemalloc

    src = str(tmp_path / "big")
    dom = tiledb.Domain(tiledb.Dim("x", domain=(0, 4 * 2**20 - 1), tile=2**20, dtype=np.int64))
    tiledb.Array.create(src, tiledb.ArraySchema(domain=dom, attrs=[tiledb.Attr("a", dtype=np.int64)]))
    with tiledb.open(src, "w", timestamp=1) as A:
        A[:] = np.arange(4 * 2**20, dtype=np.int64)
    tracemalloc.start()
    try:
        ((orig, new, frag),) = _rewrite_unchanged(src, str(tmp_path / "out"))
        _now, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert new == orig
    (data,) = [f for f in frag.files if f.name == "a0.tdb"]
    assert data.actual > 32 * 2**20   # the cells and their chunk headers
    with open(data.path, "rb") as a, open(os.path.join(tmp_path, "out", frag.rel_in_array, "a0.tdb"), "rb") as b:
        assert a.read() == b.read()
    assert peak < 12 * 2**20, peak


def test_a_file_whose_blocks_fail_is_not_left_cut_short(tmp_path):
    from arrayscope.formats.salvage.output import Output

    out = Output(str(tmp_path / "out"), str(tmp_path / "src"))

    def blocks():
        yield b"x" * 10
        raise OSError("the file changed during the salvage")

    with pytest.raises(OSError, match="changed"):
        out.write_blocks("f", blocks())
    assert os.listdir(tmp_path / "out") == [] and out.files == 0
    out.write_blocks("g", iter([b"ab", b"cd"]))
    assert (tmp_path / "out" / "g").read_bytes() == b"abcd" and (out.files, out.nbytes) == (1, 4)


@pytest.mark.parametrize("cells,capacity", [(200, 2), (1000, 1), (37, 4)])
def test_unchanged_sparse_fragment_is_rewritten_byte_for_byte(tmp_path, cells, capacity):
    """100 and 1 000 leaves (the R-tree's height at exact powers of its fanout), and a
    partial last tile: footer, R-tree, offsets, statistics all as libtiledb wrote them."""
    src = str(tmp_path / "s")
    dom = tiledb.Domain(tiledb.Dim("x", domain=(-5000, 5000), tile=100, dtype=np.int32),
                        tiledb.Dim("y", domain=(0, 1e6), tile=1000.0, dtype=np.float64))
    tiledb.Array.create(src, tiledb.ArraySchema(domain=dom, sparse=True, capacity=capacity,
                                                attrs=[tiledb.Attr("v", dtype=np.int16),
                                                       tiledb.Attr("u", dtype=np.uint64)]))
    x = (np.arange(cells) * 7919 % 9000 - 4500).astype(np.int32)
    with tiledb.open(src, "w", timestamp=1) as A:
        A[x, np.arange(cells) * 3.5] = {"v": (x % 3000).astype(np.int16),
                                        "u": np.arange(cells, dtype=np.uint64) * 2**40}
    ((orig, new, _frag_),) = _rewrite_unchanged(src, str(tmp_path / "out"))
    assert new == orig


def test_unchanged_var_string_dense_fragments_are_rewritten_byte_for_byte(tmp_path):
    src = str(tmp_path / "v")
    _sparse_var(src)
    with tiledb.open(src, "w", timestamp=2) as A:
        A[np.array([500, 501])] = {"s": np.array(["x", ""], dtype=object),
                                   "n": np.ma.masked_array(np.int32([1, 2]), mask=[1, 1]),
                                   "l": np.array([np.int32([1]), np.int32([2, 3])], dtype=object)}
    pairs = _rewrite_unchanged(src, str(tmp_path / "out"))
    assert len(pairs) == 2 and all(a == b for a, b, _f in pairs)
    d = str(tmp_path / "d")
    dom = tiledb.Domain(tiledb.Dim("r", domain=(0, 15), tile=4, dtype=np.int32),
                        tiledb.Dim("c", domain=(0, 15), tile=4, dtype=np.int32))
    tiledb.Array.create(d, tiledb.ArraySchema(domain=dom, tile_order="col-major", attrs=[
        tiledb.Attr("a", dtype=np.float64, filters=ZSTD)]))
    with tiledb.open(d, "w", timestamp=1) as A:
        A[1:11, 2:15] = np.arange(130, dtype=np.float64).reshape(10, 13)
    ((orig, new, frag),) = _rewrite_unchanged(d, str(tmp_path / "dout"))
    assert new == orig and frag.dense


def test_encrypted_rewrite_reads_back_the_same(tmp_path):
    """A fresh IV per part: the bytes differ, what they decrypt to does not."""
    from arrayscope.formats.core.source import FileSource
    from arrayscope.formats.tiledb.model.footer_reader import read_footer
    from arrayscope.formats.tiledb.write import fragment_metadata as W

    ctx = tiledb.Ctx({"sm.encryption_type": "AES_256_GCM", "sm.encryption_key": KEY})
    src = str(tmp_path / "e")
    _sparse_var(src, ctx=ctx)
    ((orig, new, frag),) = _rewrite_unchanged(src, str(tmp_path / "out"), KEY.encode())
    assert new != orig and len(new) == len(orig)
    path = str(tmp_path / "new.tdb")
    with open(path, "wb") as f:
        f.write(new)
    s = FileSource(path, "new.tdb", str(tmp_path))
    n = int.from_bytes(new[-8:], "little")
    ft = read_footer(s, len(new) - 8 - n, n, frag.schema)
    m = W.read_metadata_file(s, ft, [False], [8], KEY.encode())
    assert m.payloads == frag.meta.payloads


def test_rectangles_cover_everything_but_the_holes():
    from arrayscope.formats.salvage.tiledb_fragment import rectangles

    box = [(0, 3), (2, 5), (0, 2)]
    holes = {(1, 3, 0), (1, 3, 2), (3, 5, 1), (0, 2, 2)}
    rects = rectangles(box, holes)
    covered = [(a, b, c) for r in rects for a in range(r[0][0], r[0][1] + 1)
               for b in range(r[1][0], r[1][1] + 1) for c in range(r[2][0], r[2][1] + 1)]
    every = {(a, b, c) for a in range(4) for b in range(2, 6) for c in range(3)}
    assert len(covered) == len(set(covered)) and set(covered) == every - holes
    assert rectangles([(0, 9)], {(4,)}) == [[(0, 3)], [(5, 9)]]
    assert rectangles([(0, 0)], {(0,)}) == []


VERSIONS = os.path.join(os.path.dirname(__file__), "..", "data", "tiledb_versions")


def test_every_committed_format_from_12_is_rewritten_byte_for_byte(tmp_path):
    """The arrays libtiledb 1.4 … 2.25 wrote (tests/data/tiledb_versions): every fragment of
    format 12 on comes back as the very bytes its writer made; older ones are refused with
    the reason (salvage then leaves them out whole)."""
    from arrayscope.formats.salvage.tiledb_fragment import Unwritable

    seen = set()
    for k, d in enumerate(sorted(glob.glob(os.path.join(VERSIONS, "*", "*")))):
        if not os.path.isdir(d):
            continue
        version = int(os.path.basename(os.path.dirname(d)).split("_")[0])
        out = str(tmp_path / f"o{k}")
        if version >= 12:
            pairs = _rewrite_unchanged(d, out)
            assert pairs and all(a == b for a, b, _f in pairs), d
            seen.add(version)
        else:
            with pytest.raises(Unwritable, match=f"format {version}: "):
                _rewrite_unchanged(d, out)
    assert seen == set(range(12, 23))


def test_old_format_fragment_is_left_out_whole_with_the_reason(tmp_path, capsys):
    src, out = str(tmp_path / "old"), str(tmp_path / "out")
    shutil.copytree(os.path.join(VERSIONS, "11_2.7.2", "dense"), src)
    (frag,) = glob.glob(os.path.join(src, "__3_3_*[0-9]"))   # (not its .ok)
    break_zstd_frame(os.path.join(frag, "a0.tdb"), nth=1)
    code, rep = _salvage(src, out, capsys)
    assert code == 3
    (lost,) = lost_parts(rep)
    assert lost["kind"] == "fragment" and lost["name"] == os.path.basename(frag)
    assert any("left out whole" in n and "format 11" in n for n in rep["notes"])
    assert verify_exit(out) == (0, [])


def test_damaged_consolidated_fragment_metadata_leaves_damaged_fragments_whole(tmp_path, capsys):
    src = str(tmp_path / "cm")
    dom = tiledb.Domain(tiledb.Dim("x", domain=(0, 99), tile=10, dtype=np.int32))
    tiledb.Array.create(src, tiledb.ArraySchema(domain=dom, sparse=True, capacity=5, attrs=[
        tiledb.Attr("a", dtype=np.int64, filters=ZSTD)]))
    for k in range(2):
        with tiledb.open(src, "w", timestamp=k + 1) as A:
            A[np.arange(k * 20, k * 20 + 20, dtype=np.int32)] = np.arange(20) + 100 * k
    tiledb.consolidate(src, config=tiledb.Config({"sm.consolidation.mode": "fragment_meta"}))
    (meta,) = glob.glob(os.path.join(src, "__fragment_meta", "*.meta"))
    before = _cells(src)
    break_zstd_frame(os.path.join(_frag(src, 1), "a0.tdb"), nth=1)
    # the consolidated metadata intact: the damaged tile alone is lost
    code, rep = _salvage(src, str(tmp_path / "o1"), capsys)
    assert code == 3 and [(p["kind"], p["cells"]) for p in lost_parts(rep)] == [("tile", 5)]
    _sparse_subset(before, _cells(str(tmp_path / "o1")), 5)
    # ... damaged too: the damaged fragment is left out whole, and the note says why
    flip(meta, os.path.getsize(meta) - 200, 4)
    code, rep = _salvage(src, str(tmp_path / "o2"), capsys)
    assert code == 3 and [(p["kind"], p["cells"]) for p in lost_parts(rep)] == [("fragment", 20)]
    assert any("consolidated fragment metadata" in n and "left out whole" in n
               for n in rep["notes"])
    assert verify_exit(str(tmp_path / "o2")) == (0, [])


def test_fragment_stats_as_libtiledb_computes_them():
    """All-null tiles count for neither min/max nor (nullable) sum; an integer sum that
    overflows stops at its bound; floats compare as floats, strings as bytes."""
    from arrayscope.formats.salvage.tiledb_fragment import fragment_stats
    from arrayscope.formats.tiledb.write.fragment_metadata import SlotStats

    i64 = lambda v: np.int64(v).tobytes()  # noqa: E731
    old = SlotStats(i64(0), i64(0), i64(0), 0)
    words = [int(np.int64(v).view(np.uint64)) for v in (2**62, 2**62, 2**62, -5)]
    s = fragment_stats(old, [i64(-3), i64(7), i64(1), i64(-100)],
                       [i64(9), i64(8), i64(2), i64(100)], words, [0, 1, 0, 4], [4, 4, 4, 4],
                       1, True)   # INT64, nullable; the last tile all null
    assert s.min == i64(-3) and s.max == i64(9) and s.null_count == 5
    assert s.sum == i64(2**63 - 1)          # 3 × 2**62 overflows: the bound
    f64 = lambda v: np.float64(v).tobytes()  # noqa: E731
    fw = [int(np.frombuffer(f64(v), "<u8")[0]) for v in (1.5, -0.25)]
    s = fragment_stats(SlotStats(f64(0), f64(0), f64(0), 0), [f64(-1.0), f64(0.5)],
                       [f64(2.0), f64(3.0)], fw, None, [2, 2], 3, False)   # FLOAT64
    assert (s.min, s.max, s.sum) == (f64(-1.0), f64(3.0), f64(1.25))
    s = fragment_stats(SlotStats(b"a", b"z", b"\0" * 8, 0), [b"bb", b"ab"], [b"c", b"zz"],
                       None, None, [1, 1], 4, False)   # CHAR: bytewise
    assert (s.min, s.max) == (b"ab", b"zz")
