"""`verify`'s one-pass paths give what the tile-by-tile paths give: the tiles of a data file
decoded in one pass (tile_batch) and the per-tile statistics, domain and MBR checks
vectorised (tile_stats, cell_checks.VECTORISED), on arrays tiledb-py 0.36.1 writes, clean and
with one planted damage each. Both with the compiled kernels and with numpy only."""
from __future__ import annotations

import glob
import os
import shutil

import numpy as np
import pytest
import tiledb

from arrayscope import formats
from arrayscope.formats.core import compiled
from arrayscope.formats.core.verify import verify_report
from arrayscope.formats.tiledb.parse.data_files import TileRun, tile_bounds
from arrayscope.formats.tiledb.parse.decode import decode_tile
from arrayscope.formats.tiledb.verify import cell_checks, tile_batch
from arrayscope.formats.tiledb.verify.tile_stats import _seq_sums_kernel, seq_sums

CELLS = 1200   # capacity 2: 600 tiles per data file, past data_files.LAZY_TILES (a TileRun)


@pytest.fixture(scope="module")
def arrays(tmp_path_factory):
    base = tmp_path_factory.mktemp("batch")
    sparse = str(base / "sparse")
    dom = tiledb.Domain(tiledb.Dim("x", domain=(0, 10 ** 9), tile=10 ** 6, dtype=np.int64,
                                   filters=tiledb.FilterList([])))
    tiledb.Array.create(sparse, tiledb.ArraySchema(domain=dom, sparse=True, capacity=2, attrs=[
        tiledb.Attr("i", dtype=np.int64, filters=[tiledb.ZstdFilter()]),
        tiledb.Attr("f", dtype=np.float64, filters=tiledb.FilterList([])),
        tiledb.Attr("g", dtype=np.int32, filters=[tiledb.GzipFilter()])]))
    x = np.arange(CELLS, dtype=np.int64) * 5
    with tiledb.open(sparse, "w", timestamp=1) as A:
        A[x] = {"i": x * 3 - 7, "f": x / 7.0, "g": (x % 1000).astype(np.int32)}
    dense = str(base / "dense")
    dom = tiledb.Domain(tiledb.Dim("d", domain=(0, 5999), tile=10, dtype=np.int64))
    tiledb.Array.create(dense, tiledb.ArraySchema(domain=dom, attrs=[
        tiledb.Attr("h", dtype=np.float32, filters=tiledb.FilterList([])),
        tiledb.Attr("k", dtype=np.uint16, filters=[tiledb.ZstdFilter()])]))
    with tiledb.open(dense, "w", timestamp=1) as A:   # 2995 cells: the last tile partial
        A[0:2995] = {"h": (np.arange(2995) * 0.1).astype(np.float32),
                     "k": (np.arange(2995) % 60000).astype(np.uint16)}
    return {"sparse": sparse, "dense": dense}


def _frag(uri):
    (d,) = glob.glob(os.path.join(uri, "__fragments", "*"))
    return d


def _both(uri, monkeypatch):
    """(findings, tiles, bytes) the one-pass paths give, and those the per-tile paths give."""
    def run():
        r = verify_report(formats.open(uri))
        return [f.to_json() for f in r.findings], r.tally.tiles, r.tally.nbytes
    fast = run()
    with monkeypatch.context() as m:
        m.setattr(compiled, "TUNING", compiled.tuned(planned=False))
        m.setattr(cell_checks, "VECTORISED", False)
        ref = run()
    return fast, ref


def _poke(path, offset, value: bytes):
    with open(path, "r+b") as f:
        f.seek(offset)
        f.write(value)


def _tile_offset(uri, name, k):
    """Where tile k of data file `name` starts (from the fragment's tile offsets)."""
    doc = formats.open(uri)
    for n in doc.root.walk(expand_lazy=True):
        if isinstance(n.data, TileRun) and n.data.source.name.endswith("/" + name):
            return int(n.data.offsets[k])
    raise AssertionError(f"no lazy tiles for {name}")


def test_clean_arrays_same_and_silent(arrays, jit, monkeypatch):
    for uri in arrays.values():
        fast, ref = _both(uri, monkeypatch)
        assert fast == ref
        assert fast[0] == [], fast[0]
        assert fast[1] > 1000   # tiles checked: chunks, then cells, of every data file


def test_batch_decode_equals_per_tile_decode(arrays):
    doc = formats.open(arrays["sparse"])
    runs = [n.data for n in doc.root.walk(expand_lazy=True) if isinstance(n.data, TileRun)]
    assert {os.path.basename(r.source.name) for r in runs} == {"a0.tdb", "a1.tdb", "a2.tdb",
                                                               "d0.tdb"}
    for r in runs:
        got = [c for w in tile_batch.decode_run(r.source, r.offsets, r.ends, r.role)
               for c in w.cells]
        assert len(got) == len(r) == CELLS // 2
        assert all(c is not None for c in got)   # every tile of these files is plain
        for i in (0, 1, 299, len(r) - 1):
            want, rle = decode_tile(r.source, int(r.offsets[i]), int(r.ends[i]),
                                       r.role.specs, r.role.info)
            assert got[i] == want and rle is None
        if os.path.basename(r.source.name) == "d0.tdb":   # the coordinates tiledb-py wrote
            assert np.array_equal(np.frombuffer(b"".join(got), np.int64),
                                  np.arange(CELLS, dtype=np.int64) * 5)


def _damaged(arrays, tmp_path, which):
    uri = str(tmp_path / which)
    shutil.copytree(arrays[which], uri)
    return uri


@pytest.mark.parametrize("case", ["f-value", "x-coordinate", "i-zstd-byte", "f-orig-length",
                                  "g-gzip-byte", "h-dense-value", "k-dense-zstd"])
def test_planted_damage_same_findings(arrays, tmp_path, jit, monkeypatch, case):
    which = "dense" if case.startswith(("h-", "k-")) else "sparse"
    uri = _damaged(arrays, tmp_path, which)
    frag = _frag(uri)
    name, k = {"f-value": ("a1.tdb", 37), "x-coordinate": ("d0.tdb", 120),
               "i-zstd-byte": ("a0.tdb", 5), "f-orig-length": ("a1.tdb", 400),
               "g-gzip-byte": ("a2.tdb", 9), "h-dense-value": ("a0.tdb", 100),
               "k-dense-zstd": ("a1.tdb", 250)}[case]
    at = _tile_offset(uri, name, k)
    path = os.path.join(frag, name)
    if case in ("f-value", "h-dense-value"):
        _poke(path, at + 20 + 6, b"\x7f")            # a high byte of the first cell
    elif case == "x-coordinate":
        _poke(path, at + 20, (10 ** 9 + 5).to_bytes(8, "little"))   # outside the domain
    elif case in ("i-zstd-byte", "k-dense-zstd", "g-gzip-byte"):
        _poke(path, at + 20 + 16 + 2, b"\xff\xff\xff")   # inside the zstd frame
    elif case == "f-orig-length":
        _poke(path, at + 8, (15).to_bytes(4, "little"))   # 15 B declared, 16 stored
    fast, ref = _both(uri, monkeypatch)
    assert fast == ref
    errors = [f for f in fast[0] if f["status"] == "error"]
    assert errors, fast[0]
    assert any(f["source"].endswith(name) for f in errors), errors


@pytest.mark.parametrize("distinct", [40, 3])   # the kernel (or loop); row-wise cumsums
def test_seq_sums_bit_exact(jit, distinct):
    rng = np.random.default_rng(5)
    counts = rng.choice([0, 7, 31] if distinct == 3 else np.arange(40), 20000)
    vals = rng.standard_normal(int(counts.sum())) * 10.0 ** rng.integers(-8, 9, int(counts.sum()))
    got = seq_sums(vals, counts)
    starts = np.concatenate([[0], np.cumsum(counts)[:-1]])
    want = np.array([float(np.cumsum(vals[a:a + n])[-1]) if n else 0.0
                     for a, n in zip(starts, counts)])
    assert got.tobytes() == want.tobytes()
    big = np.flatnonzero(counts > 20)   # a pairwise sum (np.add.reduceat) differs somewhere
    pairwise = np.array([np.add.reduce(vals[a:a + n]) for a, n in zip(starts[big], counts[big])])
    assert got[big].tobytes() != pairwise.tobytes()
    assert (_seq_sums_kernel.get(1 << 20) is not None) == (jit == "jit")


def test_tile_bounds_windows_split(arrays, monkeypatch):
    """Windows smaller than the file: the same cells, window by window."""
    doc = formats.open(arrays["sparse"])
    r = next(n.data for n in doc.root.walk(expand_lazy=True) if isinstance(n.data, TileRun)
             and n.data.source.name.endswith("a0.tdb"))
    whole = [c for w in tile_batch.decode_run(r.source, r.offsets, r.ends, r.role)
             for c in w.cells]
    monkeypatch.setattr(compiled, "TUNING", compiled.tuned(window=500, window_tiles=7))
    windows = list(tile_batch.decode_run(r.source, r.offsets, r.ends, r.role))
    assert len(windows) > 80
    assert [c for w in windows for c in w.cells] == whole
    assert len(tile_bounds(r.offsets, r.source.size)) == len(whole)
