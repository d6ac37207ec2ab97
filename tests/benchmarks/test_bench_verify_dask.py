"""verify on a Dask cluster (on demand):

    ARRAYSCOPE_BENCH_DIR=/some/dir python -m pytest tests/benchmarks/test_bench_verify_dask.py \\
        --benchmark-only -p no:cacheprovider -o addopts="" -s

A dense array big enough that decoding dominates: 12 fragments of 2M cells each, an int64
attribute ([ByteShuffle, Zstd]) and a float64 one ([Zstd]: noise, stored ~8 B a cell), about
250 MB stored, written by tiledb-py (once, in the bench dir). Printed, all measured in one
run (every time includes opening the array in the calling process): verify in one process
(the reference), then with a `LocalCluster` of 1, 2 and 4 worker processes (one thread
each): the first run on a fresh cluster ("cold": every worker opens the array's model) and
a second one ("warm": workers keep it), each as a wall-clock speed-up over the reference
and as CPU seconds summed over the caller and the workers against the reference's (the
overhead of splitting, steadier than wall time on a loaded machine); and the per-task
overhead: the time a round of empty tasks takes on the cluster, per task. The findings
are checked equal to the reference every time. Speed-up is bounded by the cores the machine
really has and how busy they are (`os.cpu_count()` and the load average are printed)."""
from __future__ import annotations

import os
import time

import numpy as np
import pytest
import tiledb

from arrayscope import formats
from arrayscope.formats.core import verify_tasks
from arrayscope.formats.core.executors import DaskCluster
from arrayscope.formats.core.verify import verify

FRAGMENTS = 12
CELLS = 2 * 1024 * 1024       # per fragment
TILE = 64 * 1024


@pytest.fixture(scope="module")
def big_dense(bench_dir):
    uri = os.path.join(bench_dir, f"verify_dask_{FRAGMENTS}x{CELLS}")
    if os.path.isdir(uri):
        return uri
    n = FRAGMENTS * CELLS
    dom = tiledb.Domain(tiledb.Dim("d", domain=(0, n - 1), tile=TILE, dtype=np.int64))
    tiledb.Array.create(uri, tiledb.ArraySchema(domain=dom, sparse=False, attrs=[
        tiledb.Attr("a", dtype=np.int64, filters=[tiledb.ByteShuffleFilter(), tiledb.ZstdFilter()]),
        tiledb.Attr("b", dtype=np.float64, filters=[tiledb.ZstdFilter()])]))
    rng = np.random.default_rng(11)
    for k in range(FRAGMENTS):
        with tiledb.open(uri, "w", timestamp=k + 1) as A:
            a = np.cumsum(rng.integers(-50, 50, CELLS)).astype(np.int64)
            A[k * CELLS:(k + 1) * CELLS] = {"a": a, "b": rng.standard_normal(CELLS)}
    return uri


def _stored(uri: str) -> int:
    return sum(os.path.getsize(os.path.join(d, f)) for d, _s, fs in os.walk(uri) for f in fs)


def _cpu_of_workers(client) -> float:
    return sum(client.run(time.process_time).values())


def _timed(fn, client=None):
    """(wall, CPU of this process and the workers, result)."""
    w0 = _cpu_of_workers(client) if client is not None else 0.0
    c0, t0 = time.process_time(), time.perf_counter()
    out = fn()
    wall, cpu = time.perf_counter() - t0, time.process_time() - c0
    if client is not None:
        cpu += _cpu_of_workers(client) - w0
    return wall, cpu, out


def test_verify_dask_speedup(benchmark, big_dense):
    from distributed import Client, LocalCluster

    from arrayscope.formats.core import compiled

    verify(formats.open(big_dense))                      # page cache warm for everyone
    t_ref, c_ref, ref = _timed(lambda: verify(formats.open(big_dense)))
    saved = compiled.TUNING
    compiled.TUNING = compiled.tuned(workers=1)          # the same on one thread
    try:
        t_one, c_one, got = _timed(lambda: verify(formats.open(big_dense)))
    finally:
        compiled.TUNING = saved
    assert got == ref
    doc = formats.open(big_dense)
    tasks = verify_tasks.plan(doc, 2)
    print(f"\ncpu_count={os.cpu_count()}  load average={os.getloadavg()[0]:.1f}  "
          f"{FRAGMENTS} fragments, {_stored(big_dense) / 1e6:.0f} MB stored, "
          f"{len(tasks)} tasks for 2 workers\n"
          f"  reference (open + verify, one process, {saved.workers} decoding threads): {t_ref:.2f} s "
          f"wall, {c_ref:.2f} s CPU; on one thread {t_one:.2f} s wall, {c_one:.2f} s CPU")
    rows = {}
    for n in (1, 2, 4):
        with LocalCluster(n_workers=n, threads_per_worker=1, processes=True, host="127.0.0.1",
                          dashboard_address=None) as cluster, \
                Client(cluster, set_as_default=False) as client:
            ex = DaskCluster(client)
            cold, c_cold, got = _timed(lambda: verify(formats.open(big_dense), ex), client)
            assert got == ref
            warm, c_warm, got = _timed(lambda: verify(formats.open(big_dense), ex), client)
            assert got == ref
            empty = [verify_tasks.Task(big_dense, "tiledb", (), None, "tiledb",
                                       verify_tasks.fingerprint(doc))
                     for _ in range(200)]
            ex.map(verify_tasks.run_task, empty)                     # warm the workers
            t_empty, _c, _ = _timed(lambda: ex.map(verify_tasks.run_task, empty))
        rows[n] = (cold, warm, t_empty / len(empty))
        print(f"  {n} worker(s): cold {cold:.2f} s ({t_ref / cold:.2f}x, CPU {c_cold:.2f} s = "
              f"{c_cold / c_ref:.2f}x the reference's), warm {warm:.2f} s ({t_ref / warm:.2f}x, "
              f"CPU {c_warm:.2f} s = {c_warm / c_ref:.2f}x), per-task overhead "
              f"{1000 * t_empty / len(empty):.2f} ms; warm over one thread {t_one / warm:.2f}x   "
              f"[load {os.getloadavg()[0]:.1f}]")
    benchmark.extra_info.update({f"speedup_warm_{n}": t_ref / r[1] for n, r in rows.items()})
    benchmark.extra_info.update({f"task_overhead_ms_{n}": 1000 * r[2] for n, r in rows.items()})
    benchmark.pedantic(lambda: None, rounds=1, iterations=1)
