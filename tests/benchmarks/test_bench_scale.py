"""How cost grows with fragments and tiles (on demand):

    python -m pytest tests/benchmarks/test_bench_scale.py --benchmark-only -s -o addopts=""
    ARRAYSCOPE_BENCH_FRAGMENTS=100,1000,10000 ARRAYSCOPE_BENCH_TILES=100000,1000000 ...

For each fragment count: opening the whole annotated tree (what the window and `dump` do),
opening the model only (what `values` does), `values --raw` against tiledb-py reading the
whole array in the same process, and per-fragment costs, so linear growth shows as a flat
per-fragment column. For each tile count (one sparse fragment, capacity 1): open, and
`verify`'s time and peak memory (one chunk table at a time: memory independent of tiles).
Targets (DESIGN.md): 10 000 fragments open < 2 s, 1 000 000 tiles open < 1 s."""
from __future__ import annotations

import os
import time

import numpy as np
import pytest
import tiledb

from arrayscope import formats
from arrayscope.formats.verify import verify

from . import sidebyside as S

FRAGMENTS = [int(x) for x in os.environ.get("ARRAYSCOPE_BENCH_FRAGMENTS", "10,100,1000").split(",")]
TILES = [int(x) for x in os.environ.get("ARRAYSCOPE_BENCH_TILES", "10000,100000").split(",")]


@pytest.fixture(scope="module")
def bench_dir(tmp_path_factory):
    d = os.environ.get("ARRAYSCOPE_BENCH_DIR")
    if d:
        os.makedirs(d, exist_ok=True)
        return d
    return str(tmp_path_factory.mktemp("scale"))


def _fragments(dest: str, k: int, m: int = 1000) -> str:
    uri = os.path.join(dest, f"scale_frag_{k}")
    if not os.path.exists(uri):
        dom = tiledb.Domain(tiledb.Dim("d", domain=(0, m * k - 1), tile=m, dtype=np.int64))
        tiledb.Array.create(uri, tiledb.ArraySchema(domain=dom, sparse=False, attrs=[
            tiledb.Attr("a", dtype=np.int64, filters=[tiledb.ZstdFilter()])]))
        for i in range(k):
            with tiledb.open(uri, "w", timestamp=i + 1) as A:
                A[i * m:(i + 1) * m] = np.arange(i * m, (i + 1) * m, dtype=np.int64)
    return uri


def _tiles(dest: str, n: int) -> str:
    uri = os.path.join(dest, f"scale_tiles_{n}")
    if not os.path.exists(uri):
        dom = tiledb.Domain(tiledb.Dim("x", domain=(0, 10 ** 12), tile=10 ** 6, dtype=np.int64))
        tiledb.Array.create(uri, tiledb.ArraySchema(domain=dom, sparse=True, capacity=1, attrs=[
            tiledb.Attr("v", dtype=np.float64)]))
        x = np.arange(n, dtype=np.int64) * 7
        with tiledb.open(uri, "w", timestamp=1) as A:
            A[x] = {"v": x / 3.0}
    return uri


def _timed(fn):
    t = time.perf_counter()
    r = fn()
    return time.perf_counter() - t, r


@pytest.mark.parametrize("k", FRAGMENTS)
def test_fragments_scale(benchmark, bench_dir, k):
    uri = _fragments(bench_dir, k)

    def measure():
        t_tree, doc = _timed(lambda: formats.open(uri))
        doc.close()
        t_model, doc = _timed(lambda: formats.open(uri, tree=False))
        doc.close()
        return t_tree, t_model, S.compare(uri, "a", 3)
    t_tree, t_model, r = benchmark.pedantic(measure, rounds=1, iterations=1)
    benchmark.extra_info.update(tree_s=t_tree, model_s=t_model, values_ratio=r["ratio"])
    print(f"\n{k} fragments: tree open {t_tree:.2f} s ({t_tree / k * 1000:.2f} ms/fragment), "
          f"model open {t_model * 1000:.0f} ms ({t_model / k * 1e6:.0f} us/fragment); values "
          f"{r['ours_s'] * 1000:.0f} ms vs tiledb-py {r['tiledb_s'] * 1000:.0f} ms = "
          f"{r['ratio']:.2f}x, peak {r['ours_peak_mib']:.0f} vs {r['tiledb_peak_mib']:.0f} MiB")


@pytest.mark.parametrize("n", TILES)
def test_tiles_scale(benchmark, bench_dir, n):
    uri = _tiles(bench_dir, n)

    def measure():
        t_open, doc = _timed(lambda: formats.open(uri))
        t_verify, mem, found = S.peak_of(lambda: verify(doc))
        stored = sum(os.path.getsize(os.path.join(dp, f)) for dp, _d, fs in os.walk(uri)
                     for f in fs)
        return t_open, t_verify, mem, found, stored
    t_open, t_verify, mem, found, stored = benchmark.pedantic(measure, rounds=1, iterations=1)
    assert not [f for f in found if f.status == "error"]
    cores = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else 1
    benchmark.extra_info.update(open_s=t_open, verify_s=t_verify, verify_peak_mib=mem / 2 ** 20)
    print(f"\n{n} tiles: open {t_open:.2f} s; verify {t_verify:.1f} s, "
          f"{stored / 1e6 / t_verify:.2f} MB/s of stored bytes ({cores} cores available), "
          f"peak {mem / 2 ** 20:.0f} MiB above the open")
