"""BIT_WIDTH_REDUCTION after DOUBLE_DELTA on var-size offsets (what tiledbsoma 2.3 writes for
string columns): the DOUBLE_DELTA output is not a whole number of 64-bit values, so its last
window holds no whole value. libtiledb 2.30 stores that window unreduced (bit width 64) with
its offset unset; applying the pipeline forward must reproduce that, not flag it."""
from __future__ import annotations

import struct

import numpy as np
import tiledb

from arrayscope import formats
from arrayscope.formats.core.verify import verify
from arrayscope.formats.tiledb.verify.chunk_walk import iter_chunks


def test_offsets_double_delta_then_bit_width_reduction_verify_clean(tmp_path):
    uri = str(tmp_path / "strings")
    dom = tiledb.Domain(tiledb.Dim("d", domain=(0, 59), tile=60, dtype=np.int64))
    offsets = tiledb.FilterList([tiledb.DoubleDeltaFilter(), tiledb.BitWidthReductionFilter(),
                                 tiledb.ZstdFilter()])
    tiledb.Array.create(uri, tiledb.ArraySchema(
        domain=dom, sparse=True, attrs=[tiledb.Attr("s", dtype=str, var=True)],
        offsets_filters=offsets))
    with tiledb.open(uri, "w") as A:
        A[np.arange(60)] = np.array([f"cell{i:04d}" for i in range(60)], dtype=object)
    doc = formats.open(uri)
    chunk = next(ci for ci in iter_chunks(doc.root) if ci.source.name.endswith("/a0.tdb"))
    run = chunk.reverse(None)
    assert run.error is None
    bwr_md = run.stages[2].metadata_bytes
    orig, nwin = struct.unpack_from("<II", bwr_md, 0)
    assert orig % 8 != 0 and nwin == 2
    _offset, bits, length = struct.unpack_from("<qBI", bwr_md, 8 + 13)
    assert (bits, length) == (64, orig % 8)  # the writer's choice for the empty window
    assert verify(doc) == []
