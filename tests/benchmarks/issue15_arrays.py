"""The two arrays of issue 15's speed report, written with tiledb-py (0.36.1, libtiledb 2.30)
in the shape their real writers give them; `build(name, dest)` writes one once and returns
`(uri, field)`. Run as a script to write both: `python -m tests.benchmarks.issue15_arrays DIR`.

- `vector_search`: what tiledb-vector-search stores its vectors in (an IVF_FLAT index's
  `shuffled_vectors`): dense 2-D float32, rows = the 64 vector dimensions, cols = 500 000
  vectors, one tile = 64 x 10 000 = 640 000 cells, col-major, one attribute under Zstd;
  32 000 000 cells in 50 tiles.
- `soma_x_data`: a SOMA experiment's `ms/RNA/X/data` as tiledbsoma 2.3 creates it (its
  schema copied from tests/data/soma/pbmc68k/ms/RNA/X/data, written by tiledbsoma):
  sparse 2-D, soma_dim_0 / soma_dim_1 int64 on [0, 2**63 - 2050], space tile 2048, each
  under Zstd level 3; soma_data float32 under Zstd level -1; capacity 100 000, row-major;
  535 000 cells (a 5 000 x 2 000 count matrix at ~5% density, one write)."""
from __future__ import annotations

import os
import sys
from typing import Callable, Dict, Tuple

import numpy as np
import tiledb

BUILDERS: Dict[str, Callable[[str], str]] = {}
VECTOR_DIMS, VECTORS, VECTORS_PER_TILE = 64, 500_000, 10_000
SOMA_CELLS, SOMA_ROWS, SOMA_COLS = 535_000, 5_000, 2_000
SOMA_DOMAIN_MAX = 2 ** 63 - 2050   # tiledbsoma's max domain for int64 dims (tile 2048)


def builder(fn: Callable[[str], str]) -> Callable[[str], str]:
    BUILDERS[fn.__name__] = fn
    return fn


def build(name: str, dest: str) -> Tuple[str, str]:
    uri = os.path.join(dest, name)
    marker = uri + ".field"
    if not os.path.exists(marker):
        field = BUILDERS[name](uri)
        with open(marker, "w") as fh:
            fh.write(field)
    with open(marker) as fh:
        return uri, fh.read()


@builder
def vector_search(uri: str) -> str:
    dom = tiledb.Domain(
        tiledb.Dim("rows", domain=(0, VECTOR_DIMS - 1), tile=VECTOR_DIMS, dtype=np.int32),
        tiledb.Dim("cols", domain=(0, VECTORS - 1), tile=VECTORS_PER_TILE, dtype=np.int32))
    attr = tiledb.Attr("values", dtype=np.float32, filters=[tiledb.ZstdFilter()])
    tiledb.Array.create(uri, tiledb.ArraySchema(domain=dom, sparse=False, attrs=[attr],
                                                cell_order="col-major", tile_order="col-major"))
    rng = np.random.default_rng(15)
    with tiledb.open(uri, "w", timestamp=1) as A:   # one write: one fragment
        A[:, :] = rng.standard_normal((VECTOR_DIMS, VECTORS), dtype=np.float32)
    return "values"


@builder
def soma_x_data(uri: str) -> str:
    zstd3 = tiledb.FilterList([tiledb.ZstdFilter(level=3)])
    dom = tiledb.Domain(
        tiledb.Dim("soma_dim_0", domain=(0, SOMA_DOMAIN_MAX), tile=2048, dtype=np.int64,
                   filters=zstd3),
        tiledb.Dim("soma_dim_1", domain=(0, SOMA_DOMAIN_MAX), tile=2048, dtype=np.int64,
                   filters=zstd3))
    attr = tiledb.Attr("soma_data", dtype=np.float32,
                       filters=[tiledb.ZstdFilter(level=-1)])
    tiledb.Array.create(uri, tiledb.ArraySchema(
        domain=dom, sparse=True, attrs=[attr], capacity=100_000, cell_order="row-major",
        tile_order="row-major", allows_duplicates=False))
    rng = np.random.default_rng(15)
    flat = np.sort(rng.choice(SOMA_ROWS * SOMA_COLS, SOMA_CELLS, replace=False))
    rows, cols = (flat // SOMA_COLS).astype(np.int64), (flat % SOMA_COLS).astype(np.int64)
    data = rng.poisson(2.0, SOMA_CELLS).astype(np.float32) + 1
    with tiledb.open(uri, "w", timestamp=1) as A:
        A[rows, cols] = {"soma_data": data}
    return "soma_data"


if __name__ == "__main__":
    for n in BUILDERS:
        print(n, build(n, sys.argv[1]))
