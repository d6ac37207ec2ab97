"""The Zarr differential generator (tests/support/zarr_gen.py): stores zarr-python 3.1 writes
in both formats, read by arrayscope as zarr reads them. The default run is ~100 derandomized
examples; `-m slow` runs AS_ZARR_EXAMPLES (default 2000) with seed AS_GEN_SEED (printed)."""
from __future__ import annotations

import os
import random
import shutil
import tempfile

import numcodecs
import numpy as np
import pytest
from hypothesis import HealthCheck, given, seed, settings

from tests.support import zarr_gen as G

# zarr warns that numcodecs codecs in v3 are no part of the spec: that is what is tested
pytestmark = pytest.mark.filterwarnings("ignore::UserWarning")
_SETTINGS = dict(deadline=None, suppress_health_check=list(HealthCheck), database=None)


def _run(spec) -> None:
    root_fmt, arrays = spec
    d = tempfile.mkdtemp(prefix="zgen")
    try:
        path = os.path.join(d, "store.zarr")
        truth = G.write_store(path, root_fmt, arrays)
        try:
            G.check_store(path, truth)
        except AssertionError as e:
            lines = "\n".join(a.script() for a in arrays)
            raise AssertionError(f"root v{root_fmt}:\n{lines}\n{e}") from None
    finally:
        shutil.rmtree(d, ignore_errors=True)


@settings(max_examples=100, derandomize=True, **_SETTINGS)
@given(G.store_spec())
def test_generated_stores_read_as_zarr_reads_them(spec):
    _run(spec)


_SEED = int(os.environ.get("AS_GEN_SEED", random.randrange(2**32)))
_printed = False


@pytest.mark.slow
@seed(_SEED)
@settings(max_examples=int(os.environ.get("AS_ZARR_EXAMPLES", "2000")), **_SETTINGS)
@given(G.store_spec())
def test_generated_stores_many(spec):
    global _printed
    if not _printed:   # the seed, so a failure replays with AS_GEN_SEED (pytest -s shows it)
        print(f"zarr generator: AS_GEN_SEED={_SEED}", flush=True)
        _printed = True
    _run(spec)


# ---- every numcodecs filter and compressor once, and the failures the generator found -----
F8, I2 = np.dtype("<f8"), np.dtype(">i2")
ONE_EACH = {
    "fixedscaleoffset": (F8, [numcodecs.FixedScaleOffset(offset=10, scale=100, dtype="<f8",
                                                         astype="<i4")], None),
    "fixedscaleoffset_u2": (F8, [numcodecs.FixedScaleOffset(offset=-2.5, scale=10,
                                                            dtype="<f8", astype="<u2")], None),
    "quantize": (np.dtype("<f4"), [numcodecs.Quantize(digits=2, dtype="<f4")], None),
    "astype": (I2, [numcodecs.AsType(encode_dtype=">i2", decode_dtype=">i2")], None),
    "bitround": (F8, [numcodecs.BitRound(keepbits=3)], numcodecs.Zstd(level=1)),
    "packbits": (np.dtype("|b1"), [numcodecs.PackBits()], None),
    "delta_shuffle": (I2, [numcodecs.Delta(dtype=">i2"), numcodecs.Shuffle(elementsize=2)],
                      numcodecs.Blosc("zstd", 5, 2)),
    "bz2": (F8, [], numcodecs.BZ2(level=3)),
    "lzma": (F8, [], numcodecs.LZMA()),
    "lz4": (F8, [], numcodecs.LZ4()),
    "categorize": (np.dtype("<U4"), [numcodecs.Categorize(labels=["a", "zé", "日本"],
                                                          dtype="<U4")], None),
    "fletcher32": (I2, [numcodecs.Fletcher32()], numcodecs.Zlib(level=1)),
    "jenkins_lookup3": (F8, [numcodecs.JenkinsLookup3(initval=5)], None),
    "crc32_adler32": (F8, [numcodecs.CRC32(), numcodecs.Adler32()], None),
}


@pytest.mark.parametrize("name", sorted(ONE_EACH))
def test_each_numcodecs_filter(tmp_path, name):
    dt, filters, comp = ONE_EACH[name]
    spec = G.ArraySpec("a", 2, dt, (7, 5), (3, 2), "default", filters=filters,
                       compressor=comp, seed=1)
    path = str(tmp_path / "s.zarr")
    G.check_store(path, G.write_store(path, 2, [spec]))


def test_short_bytes_fill_is_nul_padded(tmp_path):
    # zarr 3.1 writes the default fill of a v3 `S5` as "" (and of b"ab" as "YWI="): zarr
    # reads it NUL-padded to 5 bytes; arrayscope said the fill decodes to 0 bytes (an error)
    specs = [G.ArraySpec("a", 3, np.dtype("|S5"), (6,), (4,), "default", seed=3),
             G.ArraySpec("b", 3, np.dtype("|S5"), (6,), (4,), b"ab", seed=3)]
    path = str(tmp_path / "s.zarr")
    truth = G.write_store(path, 3, specs)
    assert truth["a"][-1] == b"" and truth["b"][-1] == b"ab"   # absent: the fill value
    G.check_store(path, truth)


@pytest.mark.parametrize("fmt", [2, 3])
def test_blosc_after_a_filter_that_changes_the_element_size(tmp_path, fmt):
    # numcodecs' Blosc takes its typesize from the elements it is given: 4 after a
    # FixedScaleOffset to '<i4' of '<f8' records. arrayscope warned "typesize 4 is neither
    # the record size 8 nor 1" (found by the slow run, seed 2026)
    if fmt == 2:
        filters = [numcodecs.FixedScaleOffset(scale=100, offset=0, dtype="<f8", astype="<i4")]
        comp = numcodecs.Blosc("zstd", 2, numcodecs.Blosc.SHUFFLE, blocksize=256)
    else:
        from zarr.codecs import BloscCodec
        from zarr.codecs import numcodecs as N
        filters = [N.FixedScaleOffset(scale=100, offset=0, dtype="<f8", astype="<i4")]
        comp = [BloscCodec(cname="zstd", clevel=2, shuffle="shuffle")]
    spec = G.ArraySpec("a", fmt, np.dtype("<f8"), (40,), (40,), "default", filters=filters,
                       compressor=comp, seed=1)
    path = str(tmp_path / "s.zarr")
    G.check_store(path, G.write_store(path, fmt, [spec]))
