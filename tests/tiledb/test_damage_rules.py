"""The verify rules the damage differential (test_damage_differential.py) found missing, each
on bytes tiledb-py wrote, with tiledb-py's read of the damaged copy beside the finding: the
damage matters to libtiledb 2.30 (the read fails or loses cells) and verify says so, in the
damaged file; the undamaged array is clean."""
from __future__ import annotations

import glob
import os
import struct

import numpy as np
import pytest
import tiledb

from arrayscope import formats
from arrayscope.formats.core.verify import open_for_verify, verify_report


def _errors(uri: str, lazy: bool = True):
    doc = open_for_verify(uri) if lazy else formats.open(uri)
    return [f for f in verify_report(doc).findings if f.status == "error"]


def _rel(uri: str, path: str) -> str:
    return os.path.relpath(path, uri).replace(os.sep, "/")


def _read(uri: str):
    with tiledb.open(uri, ctx=tiledb.Ctx()) as A:
        return A[:], dict(A.meta)


def _zero_block(path: str, block: int = 512) -> None:
    with open(path, "r+b") as fh:
        size = os.path.getsize(path)
        fh.write(bytes(min(block, size)))


@pytest.fixture
def sparse_array(tmp_path):
    uri = str(tmp_path / "s")
    dom = tiledb.Domain(tiledb.Dim(name="d", domain=(0, 99), tile=10, dtype="int32"))
    tiledb.Array.create(uri, tiledb.ArraySchema(domain=dom, sparse=True, capacity=4, attrs=[
        tiledb.Attr("a", dtype="int32", filters=[tiledb.ZstdFilter()])]))
    with tiledb.open(uri, "w", timestamp=1) as A:
        A[np.arange(10)] = {"a": np.arange(10, dtype="int32")}
        A.meta["k"] = 5
    with tiledb.open(uri, "w", timestamp=2) as A:
        A[np.arange(20, 25)] = {"a": np.arange(5, dtype="int32")}
    assert not _errors(uri)
    return uri


@pytest.mark.parametrize("which", ["__schema/__*", "__meta/__*",
                                   "__fragments/__1_1_*/__fragment_metadata.tdb"])
@pytest.mark.parametrize("delta", [1, -1])
def test_generic_tile_size(sparse_array, which, delta):
    """A generic tile's Tile size (header bytes 12-19) off by one: libtiledb allocates that
    many bytes and refuses the tile ("Incorrect unfiltered tile size allocated")."""
    path = [p for p in glob.glob(os.path.join(sparse_array, which)) if os.path.isfile(p)][0]
    with open(path, "r+b") as fh:
        size = struct.unpack("<Q", fh.read(20)[12:20])[0]
        fh.seek(12)
        fh.write(struct.pack("<Q", size + delta))
    with pytest.raises(tiledb.TileDBError, match="Incorrect unfiltered tile size"):
        _read(sparse_array)
    errs = _errors(sparse_array)
    assert any(f.code == "generic-tile-size" and f.source == _rel(sparse_array, path)
               and f.offset == 12 and f"Tile size {size + delta}" in f.message for f in errs), errs


def test_commit_lost(sparse_array):
    """A complete fragment whose `.wrt` is gone: readers drop its cells; an error there."""
    wrt = sorted(glob.glob(os.path.join(sparse_array, "__commits", "__2_2_*.wrt")))[0]
    before = len(_read(sparse_array)[0]["a"])
    os.remove(wrt)
    assert len(_read(sparse_array)[0]["a"]) == before - 5
    frag = glob.glob(os.path.join(sparse_array, "__fragments", "__2_2_*"))[0]
    errs = _errors(sparse_array)
    assert [f.code for f in errs] == ["fragment-commit-lost"], errs
    assert errs[0].source == _rel(sparse_array, os.path.join(frag, "__fragment_metadata.tdb"))


def test_commit_landing_during_verify_is_no_lost_commit(sparse_array):
    """A live writer: the commits were listed before the fragment's `.wrt` landed (its
    metadata is written first). Asked again before the finding, the fragment is committed."""
    from arrayscope.formats import open as open_document
    from arrayscope.formats.tiledb.verify.bookkeeping import _commits_of, check_fragments_one

    wrt = sorted(glob.glob(os.path.join(sparse_array, "__commits", "__2_2_*.wrt")))[0]
    doc = open_document(sparse_array)
    try:
        array = doc.model
        frag = [f for f in array.fragments if f.name.startswith("__2_2_")][0]
        os.rename(wrt, wrt + ".aside")
        known = _commits_of(doc, array)           # listed while the commit is not there
        assert [n.code for n in check_fragments_one(doc, array, frag, known)] == \
            ["fragment-commit-lost"]
        os.rename(wrt + ".aside", wrt)             # the writer's commit lands
        assert check_fragments_one(doc, array, frag, known) == []
    finally:
        doc.close()


def test_uncommitted_without_metadata_is_a_warning(sparse_array):
    """A fragment folder without metadata nor commit (a write cut short): a warning only."""
    frag = glob.glob(os.path.join(sparse_array, "__fragments", "__2_2_*"))[0]
    os.remove(glob.glob(os.path.join(sparse_array, "__commits", "__2_2_*.wrt"))[0])
    os.remove(os.path.join(frag, "__fragment_metadata.tdb"))
    report = verify_report(open_for_verify(sparse_array))
    assert [f.code for f in report.findings] == ["fragment-uncommitted"]
    assert report.exit_code() == 0


def test_interrupted_vacuum_is_no_lost_commit(sparse_array):
    """A vacuum removes the commits of the fragments a `.vac` lists, then their folders: cut
    between the two, the folders stay uncommitted and listed, which is no lost commit."""
    tiledb.consolidate(sparse_array, config=tiledb.Config({"sm.consolidation.mode": "fragments"}))
    for t in (1, 2):   # the two fragments consolidated into __1_2_...
        os.remove(glob.glob(os.path.join(sparse_array, "__commits", f"__{t}_{t}_*.wrt"))[0])
    assert len(_read(sparse_array)[0]["a"]) == 15
    report = verify_report(open_for_verify(sparse_array))
    assert not report.problems, [f.line() for f in report.findings]


@pytest.mark.parametrize("in_group", [False, True], ids=["array", "group-member"])
def test_label_array_checked(tmp_path, in_group):
    """A dimension label's data tile with its block lost: the label query fails; the label
    array's cells are checked as the array's own, also when the array is a group's member
    and the group is what was opened."""
    root = str(tmp_path / "g")
    uri = os.path.join(root, "m") if in_group else str(tmp_path / "l")
    if in_group:
        tiledb.Group.create(root)
    dim = tiledb.Dim(name="d0", domain=(0, 9), tile=5, dtype="int32")
    schema = tiledb.ArraySchema(domain=tiledb.Domain(dim), attrs=[tiledb.Attr("a0", dtype="int32")],
                                dim_labels={0: {"l0": dim.create_label_schema("increasing", np.int64)}})
    tiledb.Array.create(uri, schema)
    with tiledb.open(uri, "w", timestamp=2) as A:
        A[0:10] = {"a0": np.arange(10, dtype="int32"), "l0": np.arange(10, dtype="int64") * 3}
    opened = root if in_group else uri
    if in_group:
        with tiledb.Group(root, "w") as G:
            G.add("m", name="m", relative=True)
    assert not _errors(opened) and not _errors(opened, lazy=False)
    data = glob.glob(os.path.join(uri, "__labels", "l0", "__fragments", "*", "a0.tdb"))[0]
    _zero_block(data)
    with pytest.raises(tiledb.TileDBError):
        with tiledb.open(uri) as A:
            A.label_index(["l0"])[0:27]
    for lazy in (True, False):
        errs = _errors(opened, lazy)
        assert any(f.code == "cell-count-mismatch" and f.source == _rel(opened, data)
                   and "'label' decodes to 0 cells" in f.message for f in errs), errs


@pytest.mark.parametrize("stem", ["t", "dt", "dci"])
def test_consolidated_per_cell_files(tmp_path, stem):
    """The timestamps and delete metadata of a consolidated fragment: their cells are counted
    against the metadata as the fields' are. A lost block of `t` or `dt` fails the read;
    libtiledb 2.30 reads no `dci` tile to read the array (the deletes are applied by `dt`):
    damage it does not notice, reported all the same."""
    uri = str(tmp_path / "c")
    dom = tiledb.Domain(tiledb.Dim(name="d0", domain=(0, 99), tile=10, dtype="int32"))
    tiledb.Array.create(uri, tiledb.ArraySchema(domain=dom, sparse=True, capacity=4,
                                                attrs=[tiledb.Attr("a0", dtype="int32")]))
    with tiledb.open(uri, "w", timestamp=1) as A:
        A[np.arange(10)] = {"a0": np.arange(10, dtype="int32")}
    with tiledb.open(uri, "d", timestamp=2) as A:
        A.query(cond="a0 < 3").submit()
    with tiledb.open(uri, "w", timestamp=3) as A:
        A[np.arange(5, 15)] = {"a0": np.arange(10, dtype="int32")}
    tiledb.consolidate(uri, config=tiledb.Config({"sm.consolidation.mode": "fragments"}))
    tiledb.vacuum(uri, config=tiledb.Config({"sm.vacuum.mode": "fragments"}))
    assert not _errors(uri)
    path = glob.glob(os.path.join(uri, "__fragments", "__1_3_*", stem + ".tdb"))[0]
    clean = _read(uri)[0]["a0"].tolist()
    _zero_block(path)
    if stem == "dci":
        assert _read(uri)[0]["a0"].tolist() == clean
    else:
        with pytest.raises(tiledb.TileDBError):
            _read(uri)
    errs = _errors(uri)
    assert any(f.code == "cell-count-mismatch" and f.source == _rel(uri, path) for f in errs), errs


@pytest.mark.parametrize("which,says", [
    ("__schema/__*", "the schema's Array version is 22"),
    ("__fragments/__1_1_*/__fragment_metadata.tdb", "the fragment's footer says format 22")])
def test_generic_tile_version(sparse_array, which, says):
    """A flipped byte of a generic tile's version: libtiledb 2.30 reads the tile whatever the
    number (damage it does not notice); the file's own format version says it is wrong."""
    path = [p for p in glob.glob(os.path.join(sparse_array, which)) if os.path.isfile(p)][0]
    clean = _read(sparse_array)[0]["a"].tolist()
    with open(path, "r+b") as fh:
        fh.write(bytes([22 ^ 0xFF]))
    assert _read(sparse_array)[0]["a"].tolist() == clean
    for lazy in (True, False):
        errs = _errors(sparse_array, lazy)
        assert any(f.code == "generic-tile-version" and f.source == _rel(sparse_array, path)
                   and f.offset == 0 and "generic tile version 233" in f.message
                   and says in f.message for f in errs), errs


def test_var_string_minmax_in_the_var_file(tmp_path):
    """A flipped byte of a string cell (no checksum) that changes its tile's maximum: the
    read gives the other string; the finding is in the var file, where the cell is."""
    uri = str(tmp_path / "v")
    dom = tiledb.Domain(tiledb.Dim(name="d0", domain=(0, 99), tile=10, dtype="int32"))
    tiledb.Array.create(uri, tiledb.ArraySchema(domain=dom, sparse=True, capacity=8, attrs=[
        tiledb.Attr("a0", dtype="ascii", var=True, filters=[tiledb.RleFilter()])]))
    with tiledb.open(uri, "w", timestamp=1) as A:
        A[np.arange(12)] = {"a0": np.array(["aa", "aa", "b", "ccc", "ccc", "ccc", "", "d", "aa",
                                            "b", "b", "x"], dtype=object)}
    assert not _errors(uri)
    var = glob.glob(os.path.join(uri, "__fragments", "*", "a0_var.tdb"))[0]
    with open(var, "r+b") as fh:   # the last byte: the run of 'x', tile 2's maximum
        fh.seek(-1, os.SEEK_END)
        fh.write(b"y")
    assert _read(uri)[0]["a0"].tolist()[-1] == b"y"
    errs = _errors(uri)
    assert any(f.code == "tile-stat-mismatch" and f.source == _rel(uri, var)
               and "the cells' maximum is b'y'" in f.message for f in errs), errs


def test_generic_tile_chunk_length_over_the_budget(sparse_array):
    """A flipped high byte of a generic tile's chunk length (4 GB declared in a 52-byte
    `__meta` tile): libtiledb refuses it; not a tile over the decode budget (a warning) but
    a Tile size its chunks do not give."""
    path = glob.glob(os.path.join(sparse_array, "__meta", "__*"))[0]
    with open(path, "r+b") as fh:
        head = fh.read(34)
        chunk = 34 + struct.unpack("<I", head[30:34])[0] + 8   # after the chunk count
        fh.seek(chunk + 3)
        fh.write(b"\xff")
    with pytest.raises(tiledb.TileDBError):
        _read(sparse_array)
    errs = _errors(sparse_array)
    assert any(f.code == "generic-tile-size" and f.source == _rel(sparse_array, path)
               for f in errs), errs
