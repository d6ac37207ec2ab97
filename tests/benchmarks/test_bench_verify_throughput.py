"""verify's decode throughput in MB/s of stored data per core, beside `values --raw` (on demand):

    ARRAYSCOPE_BENCH_DIR=/tmp/perfbench python -m pytest \\
        tests/benchmarks/test_bench_verify_throughput.py --benchmark-only -s -o addopts="" \\
        -p no:cacheprovider
    ARRAYSCOPE_BENCH_BASE=/some/folder ...   # A/B: the same figures from another checkout

Per stack of stacks.py (8M cells, built once in ARRAYSCOPE_BENCH_DIR), on one thread and on
every core (`compiled.TUNING.workers`): `verify` as the command runs it (open for verify, every
check) and `values --raw` of the stack's field (open, decode every fragment) as the
reference, rounds interleaved in this one process (verify_rate.measure). Printed: stored
MB (verify: the chunk bytes it checked; values: the field's data files), median wall and
CPU seconds, MB/s per core (stored MB / CPU s: steadier on a shared machine) and wall MB/s.

With ARRAYSCOPE_BENCH_BASE (a folder holding `arrayscope/formats`, ... — say a checkout of
main laid out as installed), the same measurement runs right after in a subprocess
importing that code, and its MB/s are printed beside ours with the ratio ours / base."""
from __future__ import annotations

import json
import os
import subprocess
import sys

import pytest

from . import verify_rate
from .stacks import STACKS, build

CELLS = int(os.environ.get("ARRAYSCOPE_BENCH_CELLS", 8 * 1024 * 1024))
ROUNDS = int(os.environ.get("ARRAYSCOPE_BENCH_ROUNDS", 3))
BASE = os.environ.get("ARRAYSCOPE_BENCH_BASE", "")


def _cores() -> int:
    from arrayscope.formats.core import compiled

    return compiled.TUNING.workers


def _base(uri: str, field: str, counts) -> dict:
    env = dict(os.environ, PYTHONPATH=BASE)
    script = os.path.join(os.path.dirname(__file__), "verify_rate.py")
    out = subprocess.run([sys.executable, script, uri, field, str(ROUNDS)] +
                         [str(n) for n in counts], env=env, capture_output=True, text=True,
                         check=True)
    return json.loads(out.stdout.strip().splitlines()[-1])


HEADER = (f"{'stack':30s} {'side':6s} {'thr':>3s} {'MB':>7s} {'wall s':>7s} {'CPU s':>7s} "
          f"{'MB/s/core':>9s} {'wall MB/s':>9s}")


def _row(stack: str, name: str, m: dict, base: dict) -> str:
    side, n = name.split()
    mb = m["stored"] / 1e6
    text = (f"{stack:30s} {side:6s} {n:>3s} {mb:7.1f} {m['wall']:7.3f} {m['cpu']:7.3f} "
            f"{mb / m['cpu']:9.0f} {mb / m['wall']:9.0f}")
    b = base.get(name)
    if b is not None:
        bmb = b["stored"] / 1e6
        text += (f"   base {bmb / b['cpu']:6.0f} {bmb / b['wall']:6.0f}  ours/base "
                 f"per core {b['cpu'] / m['cpu']:.2f}x wall {b['wall'] / m['wall']:.2f}x")
    return text


@pytest.mark.parametrize("name", list(STACKS))
def test_verify_throughput(benchmark, bench_dir, name):
    uri, field = build(name, bench_dir, CELLS)
    counts = sorted({1, _cores()})
    m = benchmark.pedantic(verify_rate.measure, args=(uri, field, ROUNDS, counts), rounds=1,
                           iterations=1)
    base = _base(uri, field, counts) if BASE else {}
    for k, v in m.items():
        benchmark.extra_info[k] = round(v["stored"] / 1e6 / v["cpu"], 1)
    assert m[f"verify {counts[0]}"]["stored"] > 0   # verify decoded something
    print(f"\n{HEADER}   [load {os.getloadavg()[0]:.1f}, {_cores()} cores]")
    for k in sorted(m, key=lambda k: (k.split()[0] != "verify", int(k.split()[1]))):
        print(_row(name, k, m[k], base))
