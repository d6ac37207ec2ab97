"""The Zarr chunk view: found from the chunk's typed data, rows in the same stage model as
TileDB's, records as a table (values compared with zarr-python's)."""
from __future__ import annotations

import os

import zarr

from arrayscope import formats
from arrayscope.formats.core import registry
from tests.support.paths import SAMPLES

STRUCT = os.path.join(SAMPLES, "zarr_struct")


def test_chunk_view_rows_and_records():
    doc = formats.open(STRUCT)
    chunk = doc.root.resolve("c/0/0")
    rec = chunk["Records"].child(3)
    v = registry.chunk_view(doc, rec["pos"])
    assert v is not None and v.node is chunk and not v.keeps_state
    rows = v.rows()
    assert [(r.label, r.status) for r in rows] == [
        ("Stored chunk", "stored"), ("⟲ Codec 1: zstd", "reversed"), ("Records", "decoded")]
    assert rows[0].node is chunk and rows[1].details
    table = v.cell_table(None)
    assert table.row_of_node(rec["pos"]) == 3 and table.node_of_row(3) is rec
    names = [c.name for c in table.columns]
    assert names[0] == "Array index" and "pos.x" in names
    arr = zarr.open_array(STRUCT, mode="r")
    first = arr[0, 0]
    col = names.index("pos.x")
    assert table.text(0, col) == str(first["pos"]["x"])
    assert table.text(0, 0) == "[0, 0]"


def test_no_view_outside_a_chunk():
    doc = formats.open(STRUCT)
    assert registry.chunk_view(doc, doc.root) is None
    assert registry.chunk_view(doc, doc.root["zarr.json"]) is None
