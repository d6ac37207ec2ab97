"""The TileDB chunk view (no Qt): stages reversed on demand, forward checks, the cells, the
pipeline lab; values checked against what tiledb-py reads from the same bytes."""
from __future__ import annotations

import os

import tiledb

from arrayscope import formats
from arrayscope.formats.core import registry
from tests.support.paths import SAMPLES

DENSE = os.path.join(SAMPLES, "tiledb_dense")


def _view(doc):
    frag = doc.root["__fragments"].child(0)
    return registry.chunk_view(doc, frag["a0.tdb"]["Tile 1"]["Chunk 1"])


def test_stages_reverse_to_the_cells_tiledb_reads():
    doc = formats.open(DENSE)
    v = _view(doc)
    assert v.heading.startswith("attribute 'counts' (INT64) — data, tile 1 of 2")
    assert v.subtitle == "pipeline: BYTESHUFFLE → ZSTD(5)"
    assert [(r.label, r.status) for r in v.rows()] == [
        ("On disk", "stored"), ("⟲ 2. ZSTD(5)", "pending"), ("⟲ 1. BYTESHUFFLE", "pending")]
    assert v.cell_table(None) is None and "Not reversed yet" in v.cells_message()
    assert v.reverse_to(1, None) == [1] and v.lowest() == 1
    assert v.stage_source(1) in doc.derived and v.owns_source(v.stage_source(1))
    assert v.reverse_to(0, None) == [0] and v.lowest() == 0
    assert [(c.k, c.status) for c in v.checks] == [(0, "identical"), (1, "identical")]
    table = v.cell_table(None)
    with tiledb.open(DENSE, timestamp=(1700000000000, 1700000000000)) as A:
        grid = A[:]["counts"]
        lows = [int(A.schema.domain.dim(i).domain[0]) for i in range(2)]
    expected = grid.ravel()
    n = table.row_count()
    # a cell's coordinates (a column per dimension) beside its value
    assert [c.name for c in table.columns] == ["row", "col", "INT64", "Offset", "Bytes"]
    assert [table.text(r, 2) for r in range(n)] == [str(int(x)) for x in expected[:n]]
    # each cell's implied coordinates hold the value tiledb-py reads there
    for r in range(n):
        i, j = table.coords.value(r, 0) - lows[0], table.coords.value(r, 1) - lows[1]
        assert int(grid[i, j]) == int(table.arr[r])
    assert (table.text(0, 0), table.text(0, 1)) == (str(lows[0]), str(lows[1]))
    assert table.text(1, 3) == "0x8"
    assert table.node_of_row(3).value == int(expected[3])
    # a closed tab: the stage is forgotten, and can be made again
    src = v.stage_source(0)
    node = v.forget_source(src)
    assert node is not None and v.stage_node(0) is None and not v.owns_source(src)
    assert v.remake_stage(0) and v.stage_node(0) is not None


def test_the_view_of_a_stage_node_is_its_chunk():
    doc = formats.open(DENSE)
    v = _view(doc)
    v.reverse_to(0, None)
    cell = v.stage_node(0).find("Cells").child(5)
    again = registry.chunk_view(doc, cell)
    assert again is not None and again.identity == v.identity


def test_lab_round_trip_and_options():
    doc = formats.open(DENSE)
    v = _view(doc)
    v.reverse_to(0, None)
    lab = v.lab()
    names = dict(lab.available())
    assert "ZSTD" in names and "NONE" not in names and "DEPRECATED" not in names
    steps = lab.original()
    assert [lab.describe(s) for s in steps] == ["BYTESHUFFLE", "ZSTD(5)"]
    (level,) = lab.options(steps[1])
    assert (level.key, level.value, level.minimum) == ("level", 5, -1)
    lab.set_option(steps[1], "level", 1)
    ex = lab.run(steps, v.cells())
    assert ex.error is None and ex.round_trip and ex.labels == ["cells", "BYTESHUFFLE", "ZSTD(1)"]
    assert ex.sizes[0] == len(v.cells()) and ex.sizes[2] < ex.sizes[0]   # ZSTD compresses
    assert len(ex.seconds) == 2
