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
from arrayscope.formats.core.verify import verify

from . import sidebyside as S

FRAGMENTS = [int(x) for x in os.environ.get("ARRAYSCOPE_BENCH_FRAGMENTS", "10,100,1000").split(",")]
TILES = [int(x) for x in os.environ.get("ARRAYSCOPE_BENCH_TILES", "10000,100000").split(",")]



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


# ---- the window and the command line at scale (each measurement in a fresh process) -------
WINDOW_FRAGMENTS = [int(x) for x in
                    os.environ.get("ARRAYSCOPE_BENCH_WINDOW_FRAGMENTS", "1,100,1000,10000").split(",")]
WINDOW_TILES = [int(x) for x in
                os.environ.get("ARRAYSCOPE_BENCH_WINDOW_TILES", "1000,100000,1000000").split(",")]
# generated arrays are kept here between runs (10 000 fragments take a minute to write)
CACHE = os.environ.get("ARRAYSCOPE_BENCH_CACHE", "/tmp/arrayscope_scale")
TIMEOUT = float(os.environ.get("ARRAYSCOPE_BENCH_TIMEOUT", "300"))
ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


def _run(argv) -> dict:
    """Run `argv` in a fresh process: wall seconds, its peak RSS (MiB, from wait4), its JSON
    line if any; killed (seconds None) after TIMEOUT. Its output is small (one line)."""
    import json
    import subprocess
    import sys
    import threading

    t0 = time.perf_counter()
    p = subprocess.Popen([sys.executable, *argv], cwd=ROOT, stdout=subprocess.PIPE,
                         stderr=subprocess.DEVNULL, env=dict(os.environ, QT_QPA_PLATFORM="offscreen"))
    killer = threading.Timer(TIMEOUT, p.kill)
    killer.start()
    _pid, status, usage = os.wait4(p.pid, 0)
    wall = time.perf_counter() - t0
    killer.cancel()
    out = p.stdout.read() if p.stdout is not None else b""
    p.returncode = os.waitstatus_to_exitcode(status)
    if wall >= TIMEOUT:
        return {"seconds": None, "wall": None, "peak_mib": usage.ru_maxrss / 1024}
    lines = [ln for ln in out.decode(errors="replace").splitlines() if ln.startswith("{")]
    got = json.loads(lines[-1]) if lines else {}
    got.setdefault("seconds", wall)
    got["wall"] = wall
    got.setdefault("peak_mib", usage.ru_maxrss / 1024)
    return got


def _fmt(r: dict, key: str = "seconds") -> str:
    v = r.get(key)
    if v is None:
        return f">{TIMEOUT:.0f}s" if key in ("seconds", "wall") else "-"
    return f"{v:.2f}s" if key in ("seconds", "wall") else f"{v:.0f}"


def _cli(argv) -> dict:
    return _run(["-m", "tests.benchmarks.scale_probe", "cli", *argv])


def test_window_and_cli_scale(benchmark):
    """Window open to first paint (tree and hex view), the nodes built by then and the peak
    RSS; `dump --max-depth 2` and `verify` on the command line; `--screenshot` to exit."""
    os.makedirs(CACHE, exist_ok=True)
    cases = [(f"{k} fragments", _fragments(CACHE, k)) for k in WINDOW_FRAGMENTS]
    cases += [(f"{n} tiles", _tiles(CACHE, n)) for n in WINDOW_TILES]

    def measure():
        rows = []
        for label, uri in cases:
            w = _run(["-m", "tests.benchmarks.scale_probe", "window", uri])
            d = _cli(["dump", "--max-depth", "2", uri])
            v = _cli(["verify", uri])
            png = os.path.join(CACHE, "shot.png")
            s = _run(["-m", "arrayscope.explorer", uri, "--screenshot", png])
            rows.append((label, w, d, v, s))
        return rows
    rows = benchmark.pedantic(measure, rounds=1, iterations=1)
    print("\n| array | window first paint | window peak MiB | nodes built | dump -d2 | "
          "dump MiB | verify | verify MiB | --screenshot exit | screenshot MiB |")
    print("|---|---|---|---|---|---|---|---|---|---|")
    for label, w, d, v, s in rows:
        print(f"| {label} | {_fmt(w)} | {_fmt(w, 'peak_mib')} | {w.get('nodes', '-')} | "
              f"{_fmt(d)} | {_fmt(d, 'peak_mib')} | {_fmt(v)} | {_fmt(v, 'peak_mib')} | "
              f"{_fmt(s, 'wall')} | {_fmt(s, 'peak_mib')} |")
