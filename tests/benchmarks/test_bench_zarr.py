"""Zarr benchmarks (on demand):

    python -m pytest tests/benchmarks/test_bench_zarr.py --benchmark-enable -s \
        -p no:cacheprovider -o addopts=""

A zarr v3 struct array of 2 000 chunks (1 024 records × 32 B = 32 KiB decoded each, zstd),
written by zarr-python. Targets: `formats.open` is proportional to the metadata, not the
data — < 1 s and < 50 MiB more resident memory (no chunk is decoded at open: each chunk
file gets only its zstd framing; decoding waits for the window, `values` or `verify`);
`values` of one field over the whole array decodes chunk by chunk into one output array.
Figures are printed (run with -s) and stored in the benchmark's extra_info."""
from __future__ import annotations

import gc
import os
import time
import warnings

import numpy as np
import pytest
import zarr
from zarr.codecs import ZstdCodec  # noqa: E402

from arrayscope import formats  # noqa: E402
from arrayscope.formats.zarr import PLUGIN  # noqa: E402

warnings.filterwarnings("ignore", module="zarr")
warnings.filterwarnings("ignore", category=UserWarning)

N_CHUNKS = 2000
PER_CHUNK = 1024
DT = np.dtype([("id", "<i8"), ("x", "<f8"), ("y", "<f4"), ("code", "<i4"), ("name", "S8")])
assert DT.itemsize == 32


def _rss() -> int:
    with open("/proc/self/statm") as fh:
        return int(fh.read().split()[1]) * os.sysconf("SC_PAGE_SIZE")


@pytest.fixture(scope="module")
def big_zarr(tmp_path_factory):
    path = str(tmp_path_factory.mktemp("bench_zarr") / "big_v3")
    n = N_CHUNKS * PER_CHUNK
    rng = np.random.default_rng(5)
    data = np.zeros(n, DT)
    data["id"] = np.arange(n)
    data["x"] = np.round(rng.normal(size=n) * 100, 2)
    data["y"] = rng.random(n).astype("<f4")
    data["code"] = rng.integers(0, 50, n)
    data["name"] = np.array([b"alpha", b"beta", b"gamma", b"delta"])[data["code"] % 4]
    z = zarr.create_array(path, shape=(n,), chunks=(PER_CHUNK,), dtype=DT, zarr_format=3,
                          compressors=[ZstdCodec(level=1)])
    z[...] = data
    return path, data


def test_open_large_zarr(benchmark, big_zarr):
    path, _data = big_zarr
    stored = sum(os.path.getsize(os.path.join(r, f)) for r, _, fs in os.walk(path) for f in fs)
    gc.collect()
    rss0 = _rss()
    t0 = time.perf_counter()
    doc = formats.open(path)
    secs = time.perf_counter() - t0
    grown = (_rss() - rss0) / 2 ** 20
    print(f"\nopen zarr v3, {N_CHUNKS} chunks ({stored / 2 ** 20:.1f} MiB stored, "
          f"{N_CHUNKS * PER_CHUNK * DT.itemsize / 2 ** 20:.0f} MiB decoded): "
          f"{secs:.3f} s, +{grown:.1f} MiB RSS, {len(doc.derived)} derived sources")
    benchmark.extra_info.update(open_s=secs, rss_mib=grown, derived=len(doc.derived))
    doc.close()
    del doc
    gc.collect()
    benchmark.pedantic(lambda: formats.open(path).close(), rounds=3, iterations=1)
    assert secs < 1.0
    assert grown < 50


def test_values_one_field_of_large_zarr(benchmark, big_zarr):
    path, data = big_zarr
    doc = formats.open(path)
    holder = {}

    def run():
        holder["entry"] = PLUGIN.values(doc, "x")[0]

    benchmark.pedantic(run, rounds=3, iterations=1)
    entry = holder["entry"]
    assert "error" not in entry
    assert entry["raw"] == data["x"].tobytes()
    mbps = data.nbytes / 2 ** 20 / benchmark.stats.stats.mean
    print(f"\nvalues x over {N_CHUNKS} chunks: {benchmark.stats.stats.mean:.3f} s "
          f"({mbps:.0f} MiB/s of records)")
    benchmark.extra_info.update(values_s=benchmark.stats.stats.mean)
    doc.close()


BLOSC_CASES = {"zstd+shuffle": ("zstd", 1), "lz4+shuffle": ("lz4", 1),
               "blosclz+shuffle": ("blosclz", 1), "zstd+bitshuffle": ("zstd", 2)}


def _ours_raw(path: str) -> list:
    """What `values --raw` does: open without a tree, decode every chunk."""
    doc = formats.open(path, tree=False)
    entries = PLUGIN.values(doc, None, with_values=False)
    doc.close()
    assert not any(e.get("error") for e in entries)
    return [e["raw"] for e in entries]


@pytest.mark.parametrize("case", list(BLOSC_CASES))
def test_blosc_values_side_by_side(tmp_path, case):
    """A 32 MiB float64 zarr v2 array (32 chunks), blosc per cname/shuffle, written by
    zarr-python: `values --raw` against zarr-python's read of the whole array, interleaved
    rounds in one process, median wall and CPU ratios printed (issue 16 item 7)."""
    from numcodecs import Blosc
    cname, shuf = BLOSC_CASES[case]
    n = 4 * 2 ** 20
    data = np.round(np.random.default_rng(1).normal(size=n) * 100, 2)
    path = str(tmp_path / case)
    z = zarr.create_array(path, shape=(n,), chunks=(n // 32,), dtype="<f8", zarr_format=2,
                          compressors=Blosc(cname, 5, shuf))
    z[...] = data
    assert b"".join(_ours_raw(path)) == data.tobytes()
    wall: dict = {"ours": [], "zarr": []}
    cpu: dict = {"ours": [], "zarr": []}
    sides = {"ours": lambda: _ours_raw(path), "zarr": lambda: zarr.open_array(path, mode="r")[...]}
    for _ in range(5):
        for side, fn in sides.items():
            gc.collect()
            c0, t0 = time.process_time(), time.perf_counter()
            fn()
            wall[side].append(time.perf_counter() - t0)
            cpu[side].append(time.process_time() - c0)
    med = {k: float(np.median(v)) for k, v in wall.items()}
    cmed = {k: float(np.median(v)) for k, v in cpu.items()}
    print(f"\n{case:16s} ours {med['ours'] * 1000:6.0f} ms  zarr {med['zarr'] * 1000:6.0f} ms  "
          f"ratio {med['ours'] / med['zarr']:5.2f}  cpu ratio {cmed['ours'] / cmed['zarr']:5.2f}  "
          f"load {os.getloadavg()[0]:.2f}")
