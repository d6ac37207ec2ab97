"""`verify` on a lazily opened array builds one fragment at a time (array_verify.verify_streamed)
and gives exactly what the whole tree gives: the same findings in the same order, the same
tiles and bytes, on arrays tiledb-py 0.36.1 wrote, clean and with planted damage; and it
lets each fragment's nodes go once checked."""
from __future__ import annotations

import glob
import os
import shutil

import numpy as np
import pytest
import tiledb

from arrayscope import formats
from arrayscope.formats.core.verify import open_for_verify, verify_report

FRAGMENTS = 6


@pytest.fixture(scope="module")
def array(tmp_path_factory):
    uri = str(tmp_path_factory.mktemp("streamed") / "a")
    dom = tiledb.Domain(tiledb.Dim("d", domain=(0, 100 * FRAGMENTS - 1), tile=50, dtype=np.int64))
    tiledb.Array.create(uri, tiledb.ArraySchema(domain=dom, attrs=[
        tiledb.Attr("a", dtype=np.int64, filters=[tiledb.ZstdFilter()]),
        tiledb.Attr("b", dtype=np.float64, filters=tiledb.FilterList([]))]))
    for i in range(FRAGMENTS):
        with tiledb.open(uri, "w", timestamp=i + 1) as A:
            A[i * 100:(i + 1) * 100] = {"a": np.arange(100) + i, "b": np.arange(100) / 3.0}
    return uri


def _frags(uri):
    return sorted(glob.glob(os.path.join(uri, "__fragments", "*")),
                  key=lambda p: int(os.path.basename(p).split("_")[2]))


def _report(doc):
    r = verify_report(doc)
    return [f.to_json() for f in r.findings], r.tally.tiles, r.tally.nbytes, len(r.tally.files), \
        r.exit_code()


def _poke(path, offset, value: bytes):
    with open(path, "r+b") as f:
        f.seek(offset)
        f.write(value)


def _damage(uri, case):
    frags = _frags(uri)
    if case == "metadata-byte":
        p = os.path.join(frags[1], "__fragment_metadata.tdb")
        _poke(p, 4, b"\xff\xff\xff\x7f")   # the first section's persisted size
    elif case == "cell-value":
        p = os.path.join(frags[3], "a1.tdb")   # b: no filters, 50 cells per tile
        _poke(p, 8 + 12 + 8 * 7 + 7, b"\x7f")
    elif case == "zstd-byte":
        _poke(os.path.join(frags[4], "a0.tdb"), 8 + 12 + 16 + 3, b"\xff\xff\xff")
    elif case == "uncommitted":
        os.remove(glob.glob(os.path.join(uri, "__commits", "*" +
                                         os.path.basename(frags[2]) + ".wrt"))[0])
    elif case == "file-size":
        with open(os.path.join(frags[5], "a0.tdb"), "ab") as f:
            f.write(b"\0" * 5)


@pytest.mark.parametrize("case", ["clean", "metadata-byte", "cell-value", "zstd-byte",
                                  "uncommitted", "file-size"])
def test_streamed_equals_whole_tree(array, tmp_path, case):
    uri = str(tmp_path / "a")
    shutil.copytree(array, uri)
    _damage(uri, case)
    whole = _report(formats.open(uri))
    doc = open_for_verify(uri)
    assert doc.lazy   # the streamed path is the one taken
    streamed = _report(doc)
    assert streamed == whole
    if case == "clean":
        assert whole[0] == [] and whole[4] == 0
    else:
        assert whole[0], case
    # every fragment folder was let go once checked (its nodes rebuilt on the next access)
    frag_nodes = [n for n in doc.root.find("__fragments").iter_children()]
    assert len(frag_nodes) == FRAGMENTS and all(n.pending for n in frag_nodes)


def test_groups_open_whole(tmp_path):
    """A group verifies its members through the whole-tree path: opened eagerly."""
    g = str(tmp_path / "g")
    tiledb.Group.create(g)
    uri = os.path.join(g, "m")
    dom = tiledb.Domain(tiledb.Dim("d", domain=(0, 9), tile=10, dtype=np.int64))
    tiledb.Array.create(uri, tiledb.ArraySchema(domain=dom, attrs=[tiledb.Attr("a", np.int32)]))
    with tiledb.open(uri, "w") as A:
        A[:] = np.arange(10, dtype=np.int32)
    with tiledb.Group(g, "w") as G:
        G.add("m", relative=True)
    doc = open_for_verify(g)
    assert not doc.lazy
    assert _report(doc) == _report(formats.open(g))
