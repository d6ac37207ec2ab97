"""verify on a Dask cluster (on demand):

    python -m pytest tests/benchmarks/test_bench_verify_dask.py --benchmark-only \\
        -p no:cacheprovider -o addopts="" -s

A dense array of 8M int64 + 8M int32 cells in 1 024 tiles ([ByteShuffle, Zstd] and
[Delta, Zstd]) written by tiledb-py. Printed, all measured in one run (every time includes
opening the array): verify in one process (the reference), then with a `LocalCluster` of 1,
2 and 4 worker processes (one thread each): the first run on a fresh cluster ("cold":
every worker opens the array) and a second one ("warm": workers keep it), each as a
speed-up over the reference; and the per-task overhead: the time a round of empty tasks
takes on the cluster, per task. The findings are checked equal to the reference every
time. Speed-up is bounded by the cores the machine really has (`os.cpu_count()` and the
load average are printed)."""
from __future__ import annotations

import os
import time

import numpy as np
import pytest
import tiledb

from arrayscope import formats
from arrayscope.formats import verify_tasks
from arrayscope.formats.executors import DaskCluster
from arrayscope.formats.verify import verify

N_CELLS = 8 * 1024 * 1024
TILES = 1024


@pytest.fixture(scope="module")
def big_dense(tmp_path_factory):
    uri = str(tmp_path_factory.mktemp("bench_dask") / "dense")
    dom = tiledb.Domain(tiledb.Dim("d", domain=(0, N_CELLS - 1), tile=N_CELLS // TILES,
                                   dtype=np.int64))
    tiledb.Array.create(uri, tiledb.ArraySchema(domain=dom, sparse=False, attrs=[
        tiledb.Attr("a", dtype=np.int64, filters=[tiledb.ByteShuffleFilter(), tiledb.ZstdFilter()]),
        tiledb.Attr("b", dtype=np.int32, filters=[tiledb.DeltaFilter(), tiledb.ZstdFilter()])]))
    rng = np.random.default_rng(11)
    with tiledb.open(uri, "w", timestamp=1) as A:
        a = np.cumsum(rng.integers(-50, 50, N_CELLS)).astype(np.int64)
        A[:] = {"a": a, "b": (a // 7).astype(np.int32)}
    return uri


def _timed(fn):
    t0 = time.perf_counter()
    out = fn()
    return time.perf_counter() - t0, out


def test_verify_dask_speedup(benchmark, big_dense):
    from distributed import LocalCluster

    doc = formats.open(big_dense)
    verify(doc)                                          # page cache warm for everyone
    t_ref, ref = _timed(lambda: verify(formats.open(big_dense)))
    print(f"\ncpu_count={os.cpu_count()}  load average={os.getloadavg()[0]:.1f}  "
          f"tiles={TILES * 2}  reference (open + verify, one process): {t_ref:.2f} s")
    # Where the time goes, in this process: the part that stays serial (open, the tree's
    # diagnostics, listing the units, the bookkeeping) and the part the tasks share.
    from arrayscope.formats.executors import InProcess
    from arrayscope.formats.remote import build_read_deferred

    def coordinator():
        d = formats.open(big_dense)
        build_read_deferred(d.root)
        d.diagnostics()
        return verify_tasks.plan(d, 4)[1]
    t_coord, tasks = _timed(coordinator)
    verify_tasks.run_task(tasks[0])                       # this process's document cache
    t_tasks, _ = _timed(lambda: InProcess().map(verify_tasks.run_task, tasks))
    print(f"  serial part {t_coord:.2f} s, task part {t_tasks:.2f} s in {len(tasks)} tasks: "
          f"with n free cores the speed-up is at most {t_ref:.2f} / ({t_coord:.2f} + "
          f"{t_tasks:.2f}/n): " + ", ".join(f"{n}: {t_ref / (t_coord + t_tasks / n):.2f}x"
                                             for n in (1, 2, 4)))
    rows = {}
    for n in (1, 2, 4):
        with LocalCluster(n_workers=n, threads_per_worker=1, processes=True, host="127.0.0.1",
                          dashboard_address=None) as cluster:
            ex = DaskCluster(cluster.scheduler_address)
            cold, got = _timed(lambda: verify(formats.open(big_dense), ex))
            assert got == ref
            warm, got = _timed(lambda: verify(formats.open(big_dense), ex))
            assert got == ref
            empty = [verify_tasks.Task(big_dense, verify_tasks.TILEDB_TILES, (), None, "tiledb",
                                       verify_tasks.fingerprint(doc)) for _ in range(200)]
            ex.map(verify_tasks.run_task, empty)                     # warm the workers
            t_empty, _ = _timed(lambda: ex.map(verify_tasks.run_task, empty))
            ex.close()
        rows[n] = (cold, warm, t_empty / len(empty))
        print(f"  {n} worker(s): cold {cold:.2f} s ({t_ref / cold:.2f}x), warm {warm:.2f} s "
              f"({t_ref / warm:.2f}x), per-task overhead {1000 * t_empty / len(empty):.2f} ms")
    benchmark.extra_info.update({f"speedup_warm_{n}": t_ref / r[1] for n, r in rows.items()})
    benchmark.extra_info.update({f"task_overhead_ms_{n}": 1000 * r[2] for n, r in rows.items()})
    benchmark.pedantic(lambda: None, rounds=1, iterations=1)
