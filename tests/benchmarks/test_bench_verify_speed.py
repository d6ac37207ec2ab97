"""`arrayscope verify` as whole processes beside a whole-process full read by tiledb-py, and
how `--workers N` scales (issue 27; on demand, no timed asserts):

    ARRAYSCOPE_BENCH_DIR=/tmp/perfbench python -m pytest \\
        tests/benchmarks/test_bench_verify_speed.py -s -o addopts="" -p no:cacheprovider

Arrays (stacks.py, built once in ARRAYSCOPE_BENCH_DIR): int64 [ByteShuffle, Zstd] in one
fragment (ARRAYSCOPE_BENCH_CELLS, 64 Mi cells by default) and 100, 1 000 and 10 000
fragments of 8 192 int64 cells; ARRAYSCOPE_BENCH_ALL_STACKS=1 adds the decode benchmark's
other stacks. Printed per array: the core count and load, the median wall and CPU seconds (user +
sys, children included: the workers' too) of `verify` on 1, 2, 4 ... workers up to the core
count and of tiledb-py's read of every field, with the ratios verify / read and the workers'
efficiency (wall(1) / (N × wall(N))). Every run's findings must be the same (none)."""
from __future__ import annotations

import os
import resource
import statistics
import subprocess
import sys
import time
from typing import List, Tuple

import pytest

from .stacks import STACKS, build

CELLS = int(os.environ.get("ARRAYSCOPE_BENCH_CELLS", 64 * 1024 * 1024))
ROUNDS = int(os.environ.get("ARRAYSCOPE_BENCH_ROUNDS", 3))
READ = ("import sys, tiledb\n"
        "with tiledb.open(sys.argv[1]) as A:\n"
        "    A[:]\n")


def _timed(cmd: List[str]) -> Tuple[float, float, str]:
    """(wall s, CPU s of the process and its children, stdout) of one run."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    t0 = time.perf_counter()
    out = subprocess.run(cmd, capture_output=True, text=True, check=False).stdout
    wall = time.perf_counter() - t0
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    return wall, cpu, out


def _median(cmd: List[str]) -> Tuple[float, float, str]:
    _timed(cmd)   # warm: the numba cache and the page cache
    runs = [_timed(cmd) for _ in range(ROUNDS)]
    return (statistics.median(r[0] for r in runs), statistics.median(r[1] for r in runs),
            runs[0][2])


def _cases() -> List[Tuple[str, int]]:
    """The 64 Mi-cell int64 [ByteShuffle, Zstd] array and 100 / 1 000 / 10 000 fragments of
    8 192 cells; with ARRAYSCOPE_BENCH_ALL_STACKS=1 every other stack of the decode benchmark
    too (but the encrypted one: verify and the read would need its key)."""
    cases = [("int64_byteshuffle_zstd", CELLS)] + \
        [(f"fragments_{k}", k * 8192) for k in (100, 1000, 10000)]
    if os.environ.get("ARRAYSCOPE_BENCH_ALL_STACKS") == "1":
        cases += [(name, CELLS) for name in STACKS if not name.startswith("fragments_")
                  and "aes" not in name and name != "int64_byteshuffle_zstd"]
    return cases


@pytest.mark.parametrize("stack,cells", _cases())
def test_verify_beside_a_read(bench_dir, stack, cells):
    uri, _field = build(stack, bench_dir, cells)
    cores = os.cpu_count() or 1
    verify = [sys.executable, "-m", "arrayscope.explorer.cli", "verify", uri, "--json"]
    r_wall, r_cpu, _ = _median([sys.executable, "-c", READ, uri])
    print(f"\n{stack} ({cells} cells): {cores} cores, load {os.getloadavg()[0]:.1f}; "
          f"tiledb-py read {r_wall:.2f} s wall, {r_cpu:.2f} s CPU")
    workers = [1] + [n for n in (2, 4, 8, 16) if n <= cores]
    base, first = None, None
    for n in workers:
        wall, cpu, out = _median(verify + (["--workers", str(n)] if n > 1 else []))
        first = out if first is None else first
        assert out.count('"status": "error"') == first.count('"status": "error"') == 0
        base = wall if base is None else base
        print(f"  verify --workers {n}: {wall:.2f} s wall ({wall / r_wall:.1f}× the read), "
              f"{cpu:.2f} s CPU ({cpu / r_cpu:.1f}×), efficiency {base / (n * wall):.0%}")
