"""A damaged chunk table in a data file of more tiles than the tree lists at once (its tiles
are a lazy list): verify reports it — whole tree, streamed (the CLI's path) and split into
tasks — where libtiledb itself fails to read the array. Before, the tile's node was built
after the tree's diagnostics were taken and its error was lost."""
from __future__ import annotations

import os

import numpy as np
import pytest
import tiledb

from arrayscope import formats
from arrayscope.formats.core.executors import LocalProcesses
from arrayscope.formats.core.verify import open_for_verify, verify

TILES = 300


@pytest.fixture(scope="module")
def damaged(tmp_path_factory):
    uri = str(tmp_path_factory.mktemp("lazy_tiles") / "a")
    n = TILES * 4
    dom = tiledb.Domain(tiledb.Dim("d", domain=(0, n - 1), tile=4, dtype=np.int64))
    tiledb.Array.create(uri, tiledb.ArraySchema(domain=dom, sparse=False, attrs=[
        tiledb.Attr("b", dtype=np.float64, filters=tiledb.FilterList([tiledb.ChecksumMD5Filter()]))]))
    with tiledb.open(uri, "w") as A:
        A[:] = {"b": np.linspace(0, 1, n)}
    fd = os.path.join(uri, "__fragments")
    [frag] = os.listdir(fd)
    path = os.path.join(fd, frag, "a0.tdb")
    raw = bytearray(open(path, "rb").read())
    per = len(raw) // TILES
    at = 150 * per                      # tile 151's "Num chunks" (1 -> 91)
    raw[at] ^= 0x5A
    with open(path, "wb") as fh:
        fh.write(bytes(raw))
    with pytest.raises(tiledb.TileDBError, match="past end"):
        with tiledb.open(uri) as A:
            A[:]["b"]
    return uri, frag, at


def _errors(found):
    return [(f.source.rsplit("/", 1)[-1], f.offset, f.message) for f in found
            if f.status == "error"]


def test_whole_tree_reports_the_lazy_tile(damaged):
    uri, frag, at = damaged
    errs = _errors(verify(formats.open(uri)))
    assert ("a0.tdb", at, "Num chunks: 91 chunks × 12 B = 1092 B, but only 76 bytes remain") \
        in errs


def test_streamed_and_tasks_report_the_same(damaged):
    uri, _, _ = damaged
    whole = verify(formats.open(uri))
    assert _errors(whole)
    assert verify(open_for_verify(uri)) == whole
    ex = LocalProcesses(2)
    try:
        assert verify(formats.open(uri), executor=ex) == whole
    finally:
        ex.close()
