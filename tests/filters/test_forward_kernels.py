"""The compiled forward stages (`formats/filters/forward_kernels.py`: SCALE_FLOAT, XOR) make
the bytes the numpy forwards make: every float type and byte width, values around the
rounding halves, out of range, infinities and NaN; every XOR width with tail bytes. The
forward check compares these bytes with the stored stage, so they must be equal exactly."""
from __future__ import annotations

import numpy as np
import pytest

from arrayscope.formats import compiled
from arrayscope.formats.filters import FilterSpec, RunContext, Stage, get
from arrayscope.formats.filters.base import DataInfo
from arrayscope.formats.filters.forward_kernels import scale_forward, xor_forward
from arrayscope.formats.tiledb.enums import Datatype as D
from arrayscope.formats.tiledb.enums import FilterType


def _both(monkeypatch, fn):
    """fn() with the kernels (numba loaded) and with numpy only."""
    monkeypatch.delenv("ARRAYSCOPE_NO_JIT", raising=False)
    assert compiled._load() is not None
    fast = fn()
    monkeypatch.setenv("ARRAYSCOPE_NO_JIT", "1")
    slow = fn()
    monkeypatch.delenv("ARRAYSCOPE_NO_JIT", raising=False)
    return fast, slow


def _floats(t, n, rng):
    x = rng.standard_normal(n) * rng.choice([1e-3, 1.0, 1e3, 1e12, 1e20], n)
    halves = np.round(rng.standard_normal(n) * 100) + 0.5      # exact halves: C round
    x = np.where(rng.random(n) < 0.3, halves, x)
    x[:6] = [np.nan, np.inf, -np.inf, -0.0, 2.0 ** 31, -2.0 ** 63]
    return x.astype(t)


@pytest.mark.parametrize("ftype,dtype", [(np.float32, D.FLOAT32), (np.float64, D.FLOAT64)])
@pytest.mark.parametrize("width", [1, 2, 4, 8])
@pytest.mark.parametrize("scale,offset", [(1.0, 0.0), (0.1, -3.0), (1e-6, 12.5)])
def test_scale_forward_same_bytes(monkeypatch, ftype, dtype, width, scale, offset):
    rng = np.random.default_rng(width)
    x = _floats(ftype, 5000, rng).tobytes()
    spec = FilterSpec(FilterType.SCALE_FLOAT, {"scale": scale, "offset": offset,
                                               "byte_width": width})
    f = get(FilterType.SCALE_FLOAT)

    def run():
        st = f.forward(spec, Stage([], [x, x[:400]]), DataInfo(dtype), RunContext())
        return st.metadata_bytes, st.data_bytes
    assert scale_forward.get(1) is not None
    fast, slow = _both(monkeypatch, run)
    assert fast == slow


@pytest.mark.parametrize("dtype", [D.INT8, D.INT16, D.INT32, D.INT64])
def test_xor_forward_same_bytes(monkeypatch, dtype):
    rng = np.random.default_rng(3)
    raw = rng.integers(0, 256, 4099, dtype=np.uint8).tobytes()   # tail bytes for most sizes
    f = get(FilterType.XOR)

    def run():
        st = f.forward(FilterSpec(FilterType.XOR), Stage([], [raw, raw[:1], b""]),
                       DataInfo(dtype), RunContext())
        return st.metadata_bytes, st.data_bytes
    assert xor_forward.get(1) is not None
    fast, slow = _both(monkeypatch, run)
    assert fast == slow
