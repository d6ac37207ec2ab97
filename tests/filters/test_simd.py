"""The vector byte unshuffle (`formats/accel/simd.py`): every element size it takes, every
length around its 16-element steps, outputs at every alignment, with regular and with
streaming stores, against the transpose of the byte planes; and the fused decode with
streaming stores bit-exact with tiledb-py."""
from __future__ import annotations

import numba
import numpy as np
import pytest

from arrayscope.formats import open as open_document
from arrayscope.formats.accel import simd  # numba is a runtime dependency
from arrayscope.formats.core import compiled
from arrayscope.formats.tiledb.values import field_values as V
from tests.support.filter_arrays import read_back, tiledb, write_dense


@numba.njit
def _fence() -> None:
    simd.store_fence()


@pytest.mark.parametrize("streaming", [False, True])
@pytest.mark.parametrize("esize", [2, 4, 8])
@pytest.mark.parametrize("n", [0, 1, 15, 16, 17, 31, 33, 100, 8192 + 7])
@pytest.mark.parametrize("at", [0, 1, 2, 4, 8, 12])
def test_unshuffle_into(esize, n, at, streaming):
    rng = np.random.default_rng(esize * 100_003 + n * 17 + at)
    src = rng.integers(0, 256, n * esize, dtype=np.uint8)
    wide = np.full(n * esize + 48, 0xA5, np.uint8)
    out = wide[at:at + n * esize]              # outputs at every alignment
    assert simd.unshuffle_into(src, n, esize, out, streaming)
    _fence()
    assert out.tobytes() == src.reshape(esize, n).T.tobytes()
    assert (wide[:at] == 0xA5).all() and (wide[at + n * esize:] == 0xA5).all()


@pytest.mark.parametrize("esize", [1, 3, 5, 16])
def test_other_element_sizes_declined(esize):
    src = np.arange(4 * esize, dtype=np.uint8)
    out = np.zeros_like(src)
    assert not simd.unshuffle_into(src, 4, esize, out, False)
    assert not out.any()


def test_strided_arrays_declined():
    """The blocks address memory directly: a strided input or output is left to the loop."""
    src = np.arange(64, dtype=np.uint8)
    out = np.zeros(128, np.uint8)
    assert not simd.unshuffle_into(src, 8, 8, out[::2], False)
    assert not simd.unshuffle_into(np.arange(128, dtype=np.uint8)[::2], 8, 8, out[:64], False)
    assert not out.any()


@pytest.mark.parametrize("shuffle", ["ByteShuffleFilter", "BitShuffleFilter"])
@pytest.mark.parametrize("dtype", ["int16", "int32", "float64"])
def test_streaming_decode_matches_tiledb(tmp_path, monkeypatch, dtype, shuffle):
    """Every output streamed (the threshold at 0): the fused [ByteShuffle or BitShuffle,
    Zstd] decode still gives tiledb-py's bytes, on two threads, the last chunk of each tile
    short."""
    monkeypatch.delenv("ARRAYSCOPE_NO_JIT", raising=False)
    monkeypatch.setattr(compiled, "TUNING", compiled.tuned(workers=2, stream_bytes=0))
    dt = np.dtype(dtype)
    tile = 5 * 65536 // dt.itemsize + 37
    data = np.cumsum(np.random.default_rng(1).integers(-5, 90, 6 * tile)).astype(dt)
    uri = str(tmp_path / "a")
    write_dense(uri, data, [getattr(tiledb, shuffle)(), tiledb.ZstdFilter(level=-1)], tile=tile)
    doc = open_document(uri, tree=False)
    (entry,) = V.values(doc, "a", with_values=False)
    assert "error" not in entry
    assert bytes(entry["raw"]) == read_back(uri).tobytes() == data.tobytes()
