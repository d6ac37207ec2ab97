"""The chunk table is declared once (`tile_layout.NUM_CHUNKS`, `CHUNK_HEADER`) and read by
`rawtile.chunk_table`; the compiled locate keeps its own loop (`locate_kernels._chunk_rows`,
no GIL held), which must give the same rows on every tile libtiledb wrote and refuse every
table the reference refuses."""
import glob
import os
import random

import numpy as np
import pytest

from arrayscope.formats.accel import locate_kernels  # (numba is a dependency)
from arrayscope.formats.core.source import BytesSource
from arrayscope.formats.tiledb.parse.rawtile import TileError, chunk_table
from arrayscope.formats.tiledb.parse.tile_layout import CHUNK_HEADER, NUM_CHUNKS
from tests.support.filter_arrays import tiles


def _kernel(b: bytes, start: int, end: int):
    rows = np.zeros((len(b) // 12 + 1, 5), np.int64)
    got = locate_kernels._chunk_rows(np.frombuffer(b, np.uint8), start, end, rows, 0)
    return None if got < 0 else [tuple(int(x) for x in r) for r in rows[:got]]


def _reference(b: bytes, start: int, end: int):
    try:
        return [tuple(c) for c in chunk_table(BytesSource(b, "t"), start, end)]
    except TileError:
        return None


@pytest.fixture(scope="module")
def data_files(tmp_path_factory):
    import tiledb

    uri = str(tmp_path_factory.mktemp("chunks") / "a")
    dom = tiledb.Domain(tiledb.Dim("d", domain=(0, 199_999), tile=100_000, dtype=np.int64))
    attrs = [tiledb.Attr("z", dtype=np.int64, filters=tiledb.FilterList([tiledb.ZstdFilter()])),
             tiledb.Attr("p", dtype=np.float64),
             tiledb.Attr("s", dtype=str, var=True)]
    tiledb.Array.create(uri, tiledb.ArraySchema(domain=dom, attrs=attrs, sparse=False))
    n = 200_000
    with tiledb.open(uri, "w") as A:
        A[:] = {"z": np.arange(n) % 97, "p": np.linspace(0, 1, n),
                "s": np.array([str(i % 13) * (i % 5) for i in range(n)], dtype=object)}
    files = sorted(glob.glob(os.path.join(uri, "__fragments", "*", "*.tdb")))
    return [open(p, "rb").read() for p in files if not p.endswith("__fragment_metadata.tdb")]


def test_kernel_layout_is_the_declared_one():
    assert locate_kernels._HEAD == NUM_CHUNKS.size
    assert locate_kernels._ENTRY == CHUNK_HEADER.size
    assert (locate_kernels._ORIG, locate_kernels._FILT, locate_kernels._MDLEN) == tuple(
        CHUNK_HEADER.offset_of(f.label) for f in CHUNK_HEADER.fields)


def test_kernel_rows_equal_the_reference_on_written_tiles(data_files):
    seen = 0
    for b in data_files:
        for start, end, chunks in tiles(b):
            want = _reference(b, start, end)
            assert want is not None and len(want) == len(chunks)
            assert _kernel(b, start, end) == want
            seen += len(want)
    assert seen > 2 * len(data_files)   # tiles of more than one chunk are among them


def test_kernel_refuses_what_the_reference_refuses(data_files):
    rng = random.Random(25)
    b = max(data_files, key=len)
    start, end, _ = tiles(b)[0]
    head = bytes(b[start:start + 64])
    refused = 0
    for _ in range(400):
        m = bytearray(b[start:end])
        for _k in range(rng.randint(1, 3)):
            m[rng.randrange(len(head))] = rng.randrange(256)
        cut = len(m) if rng.random() < 0.5 else rng.randrange(len(m))
        m = bytes(m[:cut])
        want = _reference(m, 0, len(m))
        assert _kernel(m, 0, len(m)) == want
        refused += want is None
    assert 50 < refused < 400
