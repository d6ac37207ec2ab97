"""DELTA and DOUBLE_DELTA have two decoders of a part: the reference (`reference_part`, what
the stage-by-stage reversal `filters.reverse_chunk` runs: plain numpy, every check) and the
planned one (`decompress_part`, what `filters.batch` and verify's chunk windows run: the
compiled kernel of `accel/kernels.py` when numba is loaded). On parts tiledb-py 0.36.1 wrote
— every value width, record widths from 1 bit to the whole type, tiles of several chunks
with a short last one — both give tiledb-py's values; and the reference never reaches a
compiled kernel."""
from __future__ import annotations

import numpy as np
import pytest

from arrayscope.formats.accel import kernels
from arrayscope.formats.core import compiled
from arrayscope.formats.filters import deltas as deltas_mod
from arrayscope.formats.filters import reverse_chunk
from arrayscope.formats.filters.base import DataInfo, RunContext
from arrayscope.formats.filters.deltas import Delta, DoubleDelta
from tests.support.filter_arrays import DATATYPE, attr_info, read_back, spec_of, tiledb, walk, write_dense

CODECS = {"double_delta": (tiledb.DoubleDeltaFilter, DoubleDelta),
          "delta": (tiledb.DeltaFilter, Delta)}


def _series(dtype: np.dtype, n: int, seed: int) -> np.ndarray:
    """Values of `dtype` with deltas of many sizes: a slow walk, a run of equal values, then
    jumps across an eighth of the type's range both ways (records of few bits, then of
    nearly the whole type; deltas of deltas stay inside int64, which the writer needs).
    Centred on the first quarter of the range: the same series centred on the middle of
    uint64 (jumps of 2**60 across 2**63) crashed tiledb-py 0.36.1's DOUBLE_DELTA write with
    a segmentation fault (libtiledb 2.30; not investigated further)."""
    rng = np.random.default_rng(seed)
    info = np.iinfo(dtype)
    lo, hi = int(info.min), int(info.max)
    middle = lo + (hi - lo) // 4
    walk_ = [middle + int(x) for x in np.cumsum(rng.integers(-3, 4, n // 3))]
    flat = [lo + (hi - lo) // 3] * (n // 3)
    rest = n - len(walk_) - len(flat)
    eighth = (hi - lo) // 16
    jumps = [middle + int(x) for x in rng.integers(-eighth, eighth, rest, endpoint=True)]
    return np.array([min(hi, max(lo, v)) for v in walk_ + flat + jumps], dtype=object).astype(dtype)


@pytest.fixture
def jit(monkeypatch):
    """numba loaded: the planned decoder takes its kernel on every part."""
    monkeypatch.delenv("ARRAYSCOPE_NO_JIT", raising=False)
    assert compiled._load() is not None, "numba is a runtime dependency"


def _no_kernel(monkeypatch):
    """Every compiled kernel the delta codecs could reach raises when asked for."""
    class Refused:
        def get(self, *_a, **_k):
            raise AssertionError("the reference reached a compiled kernel")
    monkeypatch.setattr(deltas_mod, "double_delta_decode", Refused())
    monkeypatch.setattr(deltas_mod, "prefix_sum", Refused())


@pytest.mark.parametrize("codec", sorted(CODECS))
@pytest.mark.parametrize("dtype", ["int64", "uint64", "int32", "int16", "uint8"])
def test_reference_and_planned_parts_equal_on_tiledb_bytes(tmp_path, jit, monkeypatch,
                                                           codec, dtype):
    make, cls = CODECS[codec]
    dt = np.dtype(dtype)
    data = _series(dt, 3 * 5000 + 17, seed=len(dtype) * 7 + len(codec))
    uri = str(tmp_path / "a")
    files = write_dense(uri, data, [make()], tile=5000)
    spec = spec_of(make())
    info = attr_info(DATATYPE[dt])
    f = cls()
    planned, reference, kernel_parts = [], [], 0
    for tile in walk(files["a0.tdb"]):
        for orig, md, enc in tile:
            _nmd, sizes = f.read_table(md, spec.name)
            pos = 0
            for part_orig, comp in sizes:
                part = enc[pos:pos + comp]
                pos += comp
                kernel = (deltas_mod.double_delta_decode if codec == "double_delta"
                          else deltas_mod.prefix_sum).get(part_orig)
                kernel_parts += kernel is not None
                planned.append(f.decompress_part(part, part_orig, spec, info))
                with monkeypatch.context() as m:
                    _no_kernel(m)
                    reference.append(f.reference_part(part, part_orig, spec, info))
    want = read_back(uri).tobytes()   # the last tile's cells past the domain are fill
    got = b"".join(reference)
    assert len(got) == 4 * 5000 * dt.itemsize and got[:len(want)] == want
    assert planned == reference
    assert kernel_parts >= 3   # the planned side did run the kernel


@pytest.mark.parametrize("codec", sorted(CODECS))
def test_the_stage_by_stage_reversal_runs_no_kernel(tmp_path, jit, monkeypatch, codec):
    """`reverse_chunk` (the reference route: what the window shows, what verify checks)
    decodes a [codec, ZSTD] pipeline with every compiled kernel of the codec refused."""
    make, _cls = CODECS[codec]
    data = _series(np.dtype("int64"), 9000, seed=5)
    uri = str(tmp_path / "a")
    files = write_dense(uri, data, [make(), tiledb.ZstdFilter(level=1)], tile=9000)
    specs = [spec_of(make()), spec_of(tiledb.ZstdFilter(level=1))]
    info = attr_info(DATATYPE[np.dtype("int64")])
    assert kernels.double_delta_decode.get(1 << 30) is not None   # loaded: a kernel was there
    _no_kernel(monkeypatch)
    cells = []
    for tile in walk(files["a0.tdb"]):
        for orig, md, enc in tile:
            res = reverse_chunk(specs, md, enc, info, RunContext(None, orig))
            assert res.error is None, res.error
            cells.append(res.stages[0].data_bytes)
    want = read_back(uri).tobytes()
    assert b"".join(cells)[:len(want)] == want and len(b"".join(cells)) == len(want)


def test_reference_refuses_what_the_planned_refuses():
    """A damaged header or a short part: both decoders raise the same error."""
    spec, info = spec_of(tiledb.DoubleDeltaFilter()), DataInfo(1, 1, "a", False)
    f = DoubleDelta()
    good = f.compress_part(np.arange(100, dtype="<i8").tobytes(), spec, info)
    for bad, orig in ((good[:5], 800), (good, 808), (good[:20], 800)):
        errors = []
        for decode in (f.reference_part, f.decompress_part):
            with pytest.raises(Exception) as e:
                decode(bad, orig, spec, info)
            errors.append(str(e.value))
        assert errors[0] == errors[1]
