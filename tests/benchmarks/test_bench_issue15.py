"""Issue 15's speed report, re-measured (on demand, never a timed assertion):

    python -m pytest tests/benchmarks/test_bench_issue15.py --benchmark-only -s -o addopts=""

`values --raw` against tiledb-py reading the same field in the array's global order (the
order `values` gives), on the two arrays of tests/benchmarks/issue15_arrays.py: a
tiledb-vector-search-shaped dense float32 array (32 M cells, 640 000-cell tiles, Zstd) and a
SOMA `X/data`-shaped sparse array (535 000 cells). Each side is measured twice:

- whole process: `arrayscope values --raw OUT` and a python that reads with tiledb-py and
  writes the same bytes, each a fresh process (interpreter start and imports included, as a
  user sees it, bytecode cached as installed); wall time and peak RSS by GNU time,
  after one warm-up run each, interleaved rounds, median;
- in process (tests/benchmarks/sidebyside.py): median time and peak RSS above the start.

The bytes both sides give are compared first. Issue 15 reported, before: (a) 181 s and
1.4 GB against tiledb-py's 0.3 s; (b) 14.8 s against 0.5 s.
`ARRAYSCOPE_BENCH_DIR` keeps the arrays between runs (they take a few seconds to write)."""
from __future__ import annotations

import os
import statistics
import subprocess
import sys
import tempfile
from typing import List, Tuple

import numpy as np
import pytest
import tiledb

from . import sidebyside as S
from .issue15_arrays import BUILDERS, build

TIME = "/usr/bin/time"   # GNU time: wall time and the peak RSS of exactly its child
ROUNDS = int(os.environ.get("ARRAYSCOPE_BENCH_ROUNDS", "3"))

THEIRS = """import sys, numpy as np, tiledb
uri, field, out = sys.argv[1:4]
with tiledb.open(uri) as A:
    v = A.query(attrs=[field], dims=[], order="G")[:][field]
with open(out, "wb") as fh:
    fh.write(np.ascontiguousarray(v).tobytes())
"""


def theirs_global(uri: str, field: str) -> np.ndarray:
    """tiledb-py's cells of `field` in global order (what `values` decodes), in process."""
    with tiledb.open(uri) as A:
        return A.query(attrs=[field], dims=[], order="G")[:][field]


def _env(dest: str) -> dict:
    """Bytecode cached (in `dest`, never in the tree), as an installed package has it: with
    PYTHONDONTWRITEBYTECODE every start compiles arrayscope's ~100 modules again (~0.4 s)."""
    env = dict(os.environ, PYTHONPYCACHEPREFIX=os.path.join(dest, "pycache"))
    env.pop("PYTHONDONTWRITEBYTECODE", None)
    return env


def _process(argv: List[str], env: dict) -> Tuple[float, int]:
    """(wall seconds, peak RSS bytes) of one child process, by GNU time: a child forked from
    this (big) process would count the parent's pages in its own ru_maxrss."""
    with tempfile.NamedTemporaryFile("r", suffix=".time") as tf:
        p = subprocess.run([TIME, "-f", "%e %M", "-o", tf.name] + argv, env=env,
                           stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
        if p.returncode:
            raise AssertionError(f"{argv}: exit {p.returncode}: {p.stderr.decode()[-2000:]}")
        secs, kib = tf.read().split()[-2:]
    return float(secs), int(kib) * 1024


def whole_process(uri: str, field: str, dest: str, rounds: int = ROUNDS) -> dict:
    ours_out, theirs_out = os.path.join(dest, "ours.bin"), os.path.join(dest, "theirs.bin")
    ours = [sys.executable, "-m", "arrayscope.explorer", "values", "--field", field,
            "--raw", ours_out, uri]
    theirs = [sys.executable, "-c", THEIRS, uri, field, theirs_out]
    env = _env(dest)
    _process(ours, env)   # warm-up: bytecode written, files in the page cache
    _process(theirs, env)
    t_o, t_t, m_o, m_t = [], [], [], []
    for _ in range(rounds):
        dt, mem = _process(ours, env)
        t_o.append(dt)
        m_o.append(mem)
        dt, mem = _process(theirs, env)
        t_t.append(dt)
        m_t.append(mem)
    with open(ours_out, "rb") as a, open(theirs_out, "rb") as b:
        if a.read() != b.read():
            raise AssertionError(f"{uri}: `values --raw` bytes differ from tiledb-py's")
    o, t = statistics.median(t_o), statistics.median(t_t)
    return {"ours_s": o, "tiledb_s": t, "ratio": o / t, "ours_peak_mib": max(m_o) / 2 ** 20,
            "tiledb_peak_mib": max(m_t) / 2 ** 20}


def in_process(uri: str, field: str, rounds: int = ROUNDS) -> dict:
    mine = b"".join(S.ours_raw(uri, field))
    if mine != theirs_global(uri, field).tobytes():
        raise AssertionError(f"{uri}: decoded bytes differ from tiledb-py's")
    del mine
    t_o, t_t, m_o, m_t = [], [], [], []
    for _ in range(rounds):
        dt, mem, r = S.peak_of(lambda: S.ours_raw(uri, field))
        del r
        t_o.append(dt)
        m_o.append(mem)
        dt, mem, r = S.peak_of(lambda: theirs_global(uri, field))
        del r
        t_t.append(dt)
        m_t.append(mem)
    o, t = statistics.median(t_o), statistics.median(t_t)
    return {"ours_s": o, "tiledb_s": t, "ratio": o / t, "ours_peak_mib": max(m_o) / 2 ** 20,
            "tiledb_peak_mib": max(m_t) / 2 ** 20}



@pytest.mark.parametrize("name", sorted(BUILDERS))
def test_issue15_values_raw(benchmark, bench_dir, name):
    if not os.path.exists(TIME):
        pytest.skip("GNU time is needed for a child's own peak RSS")
    uri, field = build(name, bench_dir)
    cells = len(theirs_global(uri, field))
    rows = [("whole process", whole_process(uri, field, bench_dir)),
            ("in process", in_process(uri, field))]
    print(f"\n{name} ({cells} cells), `values --raw` against tiledb-py, median of {ROUNDS}")
    print(S.HEADER)
    for label, r in rows:
        print(S.row(f"{name} {label}", cells, r))
    benchmark.pedantic(lambda: S.ours_raw(uri, field), rounds=1, iterations=1)
