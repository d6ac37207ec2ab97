"""Arrays that libtiledb itself writes wrongly: arrayscope must explain them, not crash.

RLE on var-length strings (libtiledb 2.30): the byte size of the string lengths is computed
from every run but the last, so a last string longer than that size allows is written with
a truncated length. libtiledb writes the tile without complaint and then crashes (SIGSEGV)
reading it; arrayscope reports the broken chunk at its offset."""
import glob
import os

import numpy as np
import tiledb

from arrayscope import formats
from arrayscope.formats.core.verify import verify
from arrayscope.formats.tiledb import PLUGIN


def _rle_last_string_too_long(uri):
    dom = tiledb.Domain(tiledb.Dim("d", domain=(0, 2), tile=3, dtype=np.int32))
    tiledb.Array.create(uri, tiledb.ArraySchema(domain=dom, sparse=False, attrs=[
        tiledb.Attr("s", dtype=str, var=True, filters=[tiledb.RleFilter()])]))
    with tiledb.open(uri, "w") as A:  # writing works; reading it back crashes libtiledb
        A[:] = np.array(["a" * 109, "a" * 109, "b" * 269], dtype=object)


def test_rle_string_tile_libtiledb_cannot_read_is_reported(tmp_path):
    uri = str(tmp_path / "rle_bug")
    _rle_last_string_too_long(uri)
    doc = formats.open(uri)
    found = [f for f in verify(doc) if f.status == "error"]
    var_file = os.path.relpath(glob.glob(os.path.join(uri, "__fragments", "*", "a0_var.tdb"))[0],
                               uri)
    assert [f.source for f in found] == [var_file]
    assert "RLE" in found[0].message and "do not end with the data" in found[0].message
    entry = PLUGIN.values(doc, "s")[0]
    assert entry["values"] == [] and "RLE" in entry["error"]
