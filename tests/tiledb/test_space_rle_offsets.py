"""`stats` of var-sized strings with RLE or DICTIONARY: libtiledb keeps their offsets in
the var tile and writes the offsets file as 0-chunk tiles; the decoded offsets are the ones
its reader rebuilds, one u64 per cell (issue 30, found by the differential generator)."""
from __future__ import annotations

import numpy as np
import tiledb

from arrayscope.formats.core import health as H
from arrayscope.formats.core.document import Document


def test_rle_and_dictionary_string_offsets_count_every_cell(tmp_path):
    uri = str(tmp_path / "a")
    dom = tiledb.Domain(tiledb.Dim(name="d0", domain=(0, 8), tile=3, dtype="int16"))
    tiledb.Array.create(uri, tiledb.ArraySchema(domain=dom, attrs=[
        tiledb.Attr("rle", dtype="ascii", var=True, filters=[tiledb.RleFilter()]),
        tiledb.Attr("dic", dtype=str, var=True, filters=[tiledb.DictionaryFilter(),
                                                          tiledb.ZstdFilter()]),
        tiledb.Attr("plain", dtype=str, var=True, filters=[tiledb.ZstdFilter()])]))
    v = np.array(["a", "bb", "bb", "", "ccc", "a", "a"], dtype=object)
    with tiledb.open(uri, "w", timestamp=1) as A:
        A[1:8] = {"rle": v, "dic": v, "plain": v}
    with tiledb.open(uri) as A:
        assert [x.decode() for x in A[1:8]["rle"]] == list(v)
    report = H.space(Document(uri))
    frag = report.fragments[0]
    offsets = {f.name: f for f in frag.fields if f.part == "offsets"}
    cells = 9   # tiles [0, 3), [3, 6), [6, 9): the written cells and the padding
    assert {n: f.decoded for n, f in offsets.items()} == \
        {"rle": 8 * cells, "dic": 8 * cells, "plain": 8 * cells}
    assert offsets["rle"].stored == offsets["dic"].stored == 3 * 8   # one u64 (0 chunks) a tile
