"""tile_stats against a per-tile reference: non-finite float tiles found from their minimum
and maximum, the stored minimum and maximum under a mask and without one, integer sums."""
from __future__ import annotations

import numpy as np
import pytest

from arrayscope.formats.tiledb.verify.tile_stats import tile_stats, var_extremes


def _tiles(dt, rng, n=300):
    counts = rng.integers(0, 40, n)
    tiles = []
    for c in counts:
        if dt.kind == "f":
            v = rng.standard_normal(int(c)).astype(dt)
            if c and rng.random() < 0.3:   # NaN, +inf or -inf somewhere in a third of them
                v[rng.integers(0, c)] = rng.choice([np.nan, np.inf, -np.inf])
        else:
            v = rng.integers(-1000, 1000, int(c)).astype(dt)
        tiles.append(v)
    return tiles


@pytest.mark.parametrize("dtype", ["<f8", "<f4", "<i8", "<u2"])
@pytest.mark.parametrize("masked", [False, True])
def test_tile_stats_per_tile(jit, dtype, masked):
    dt = np.dtype(dtype)
    rng = np.random.default_rng(3)
    tiles = _tiles(dt, rng)
    masks = [rng.random(len(t)) < 0.7 if masked else None for t in tiles]
    st = tile_stats([t.tobytes() for t in tiles], list(range(len(tiles))), masks, dt)
    for k, (t, m) in enumerate(zip(tiles, masks)):
        v = t if m is None else t[m]
        assert st.count[k] == len(v)
        if len(t):
            assert st.stored_mins[k].tobytes() == t.min().tobytes()
            assert st.stored_maxs[k].tobytes() == t.max().tobytes()
        if not len(v):
            assert not st.nonfinite[k]
            continue
        assert st.mins[k].tobytes() == v.min().tobytes()
        assert st.maxs[k].tobytes() == v.max().tobytes()
        if dt.kind == "f":
            assert st.nonfinite[k] == (not np.all(np.isfinite(v)))
            if np.all(np.isfinite(v)):
                assert st.sums[k] == float(np.cumsum(v.astype(np.float64))[-1])
        else:
            assert int(st.sums[k]) == int(v.sum(dtype=np.int64 if dt.kind == "i" else np.uint64))
    if dt.kind == "f":
        assert st.nonfinite.any() and not st.nonfinite.all()


@pytest.fixture(params=["compiled", "matrix"])
def strings_path(request, monkeypatch):
    """var_extremes by its compiled kernel (numba loaded) or by the numpy byte matrix."""
    from arrayscope.formats.core import compiled

    if request.param == "compiled":
        monkeypatch.delenv("ARRAYSCOPE_NO_JIT", raising=False)
        assert compiled._load() is not None
    else:
        monkeypatch.setenv("ARRAYSCOPE_NO_JIT", "1")
    return request.param


@pytest.mark.parametrize("seed", range(6))
def test_var_extremes_as_python_compares_bytes(seed, strings_path):
    rng = np.random.default_rng(seed)
    alphabet = [b"a", b"b", b"\xff", b"\x01", b"ab", b"gene_"]
    cells = [b"".join(rng.choice(alphabet, rng.integers(0, 5))) for _ in range(500)]
    cells += [b"ab", b"ab\x01", b"", b"\xff\xff"]   # a prefix, its extension, empty, high bytes
    order = rng.permutation(len(cells))
    cells = [cells[k] for k in order]
    data = np.frombuffer(b"".join(cells), np.uint8)
    offs = np.cumsum([0] + [len(c) for c in cells[:-1]]).astype(np.uint64)
    assert var_extremes(data, offs) == (min(cells), max(cells))
    keep = rng.random(len(cells)) < 0.3
    kept = [c for c, k in zip(cells, keep) if k]
    assert var_extremes(data, offs, keep) == (min(kept), max(kept))


def test_var_extremes_leaves_nul_and_wide_strings(strings_path):
    """The byte matrix leaves NUL bytes and wide matrices to the caller; the compiled
    kernel compares them."""
    cells = [b"a\x00", b"a", b"a\x00\x00", b"\x00"]   # a NUL byte: the padding would tie them
    data = np.frombuffer(b"".join(cells), np.uint8)
    got = var_extremes(data, np.array([0, 2, 3, 6], np.uint64))
    assert got == (None if strings_path == "matrix" else (min(cells), max(cells)))
    wide = np.frombuffer(b"x" * (1 << 20), np.uint8)   # the last cell about 1 MiB wide:
    offs = np.arange(60, dtype=np.uint64)                # 60 rows of it fit the matrix
    assert var_extremes(wide, offs) == (b"x", b"x" * ((1 << 20) - 59))
    got = var_extremes(wide, np.arange(200, dtype=np.uint64))   # 200 do not
    assert got == (None if strings_path == "matrix" else (b"x", b"x" * ((1 << 20) - 199)))


@pytest.mark.parametrize("vectorised", [True, False])
def test_var_string_minimum_changed(tmp_path, monkeypatch, vectorised):
    """A string cell changed under its tile's stored minimum: verify says so, with the
    byte matrix and string by string alike."""
    import glob
    import os

    import tiledb

    from arrayscope.formats.core.verify import open_for_verify, verify_report
    from arrayscope.formats.tiledb.verify import cell_checks

    uri = str(tmp_path / "s")
    dom = tiledb.Domain(tiledb.Dim("d", domain=(0, 999), tile=250, dtype=np.int64))
    tiledb.Array.create(uri, tiledb.ArraySchema(domain=dom, sparse=False, attrs=[
        tiledb.Attr("s", dtype="ascii", var=True, filters=tiledb.FilterList([]))]))
    with tiledb.open(uri, "w") as A:
        A[:] = {"s": np.array([f"w{(i * 37) % 1000:04d}" for i in range(1000)], dtype=object)}
    if not vectorised:
        monkeypatch.setattr(cell_checks, "var_extremes", lambda *a: None)
    assert verify_report(open_for_verify(uri)).findings == []
    (frag,) = glob.glob(os.path.join(uri, "__fragments", "*"))
    path = os.path.join(frag, "a0_var.tdb")
    raw = bytearray(open(path, "rb").read())
    raw[raw.index(b"w0000") + 1] = ord("!")   # "w!000": below every other string
    open(path, "wb").write(bytes(raw))
    found = [(f.code, f.message) for f in verify_report(open_for_verify(uri)).findings]
    assert found == [("tile-stat-mismatch", "tile 1 of 's': the cells' minimum is b'w!000', "
                                            "the fragment metadata says b'w0000'")]


def test_float32_statistic_printed_as_float32():
    """A float32 minimum in a finding reads as float32 prints it (-1.2), not as the float64
    its widening gives (-1.2000000476837158); float64 and integers as before."""
    import numpy as np

    from arrayscope.formats.tiledb.verify.cell_checks import _typed

    assert _typed(np.float32(-1.2).item(), np.dtype(np.float32)) == "-1.2"
    assert _typed(0.1, np.dtype(np.float64)) == "0.1"
    assert _typed(-5, np.dtype(np.int32)) == "-5"
