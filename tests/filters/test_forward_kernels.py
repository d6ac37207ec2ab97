"""The compiled forward stages (`formats/accel/forward_kernels.py`: SCALE_FLOAT, XOR) make
the bytes the numpy forwards make: every float type and byte width, values around the
rounding halves, out of range, infinities and NaN; every XOR width with tail bytes. The
forward check compares these bytes with the stored stage, so they must be equal exactly."""
from __future__ import annotations

import numpy as np
import pytest

from arrayscope.formats.accel.forward_kernels import scale_forward, xor_forward
from arrayscope.formats.core import compiled
from arrayscope.formats.filters import FilterSpec, RunContext, Stage, get
from arrayscope.formats.filters.base import DataInfo
from arrayscope.formats.filters.enums import Datatype as D
from arrayscope.formats.filters.enums import FilterType


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
    assert compiled._load() is not None   # numba loaded whatever ran before in this process
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
    assert compiled._load() is not None
    assert xor_forward.get(1) is not None
    fast, slow = _both(monkeypatch, run)
    assert fast == slow


def _ints(t, n, rng, mode):
    lim = np.iinfo(t)
    if mode == 0:   # a walk: narrow windows
        return (np.cumsum(rng.integers(-50, 50, n)) % (int(lim.max) // 2)).astype(t)
    if mode == 1:   # anything: some windows of T's whole range (the numpy path)
        return rng.integers(lim.min, lim.max, n, dtype=t, endpoint=True)
    if mode == 2:   # ranges of every width below T's
        scale = rng.choice([1, 200, 60000, 4_000_000_000], n)
        return (rng.random(n) * scale).astype(np.int64).astype(t)
    return np.full(n, lim.max, t)


@pytest.mark.parametrize("dtype", [D.INT16, D.UINT16, D.INT32, D.UINT32, D.INT64, D.UINT64])
@pytest.mark.parametrize("mode", [0, 1, 2, 3])
@pytest.mark.parametrize("window", [256, 24, 1000])
@pytest.mark.parametrize("partial", [False, True])
def test_bwr_forward_same_stage(monkeypatch, dtype, mode, window, partial):
    """BIT_WIDTH_REDUCTION forward with the newest rule: the compiled pass gives the
    numpy stage (metadata, data, uninitialised bytes, notes), with an empty part, and with
    a part ending in a partial value (a window of no whole value: the numpy path)."""
    from arrayscope.formats.filters import windows
    from arrayscope.formats.filters.util import int_dtype
    from arrayscope.formats.filters.windows import BWR_CHECKED_RANGE

    t = int_dtype(dtype)
    rng = np.random.default_rng(window + mode)
    a = _ints(t, 3000, rng, mode).tobytes()
    parts = [a, b"", a[5 * t.itemsize:]] + ([a[:window + 1]] if partial else [])   # ends in 1 byte
    taken = []
    real = windows._forward_compiled
    monkeypatch.setattr(windows, "_forward_compiled",
                        lambda *a: taken.append(real(*a) is not None) or real(*a))
    f = get(FilterType.BIT_WIDTH_REDUCTION)
    spec = FilterSpec(FilterType.BIT_WIDTH_REDUCTION, {"max_window": window})

    def run():
        st = f.forward(spec, Stage([b"md"], parts), DataInfo(dtype, format_version=22),
                       RunContext(writer_rule=BWR_CHECKED_RANGE.name))
        return (st.metadata_bytes, st.data_bytes, list(st.uninitialised), list(st.notes))
    fast, slow = _both(monkeypatch, run)
    assert fast == slow
    # compiled when every window holds values and none spans T's whole range (walks and
    # constants do not; random values may)
    if partial or mode in (0, 3):
        assert taken[0] == (not partial)


@pytest.mark.parametrize("seed", range(4))
def test_rle_strings_forward_same_runs(monkeypatch, seed):
    """RLE of var strings: runs found by the compiled comparison with the previous cell =
    those of the padded rows (prefixes, empty strings, NUL bytes, long runs)."""
    from arrayscope.formats.filters.strings import rle_encode

    rng = np.random.default_rng(seed)
    words = [b"", b"a", b"ab", b"a\x00", b"abc" * 40, b"\x00", b"b"]
    cells = [words[int(k)] for k in rng.integers(0, len(words), 3000)]
    cells = [c for c in cells for _ in range(int(rng.integers(1, 4)))]   # runs
    data = b"".join(cells)
    offsets = np.cumsum([0] + [len(c) for c in cells[:-1]]).astype(np.uint64)
    fast, slow = _both(monkeypatch, lambda: rle_encode(data, offsets))
    assert fast == slow
