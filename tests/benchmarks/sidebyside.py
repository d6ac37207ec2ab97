"""Measuring arrayscope and tiledb-py side by side in one process: interleaved rounds (both
sides see the same machine load), median times, and peak resident memory above the level
before each call (sampled from /proc every millisecond, so libtiledb's allocations count).
Besides wall time, the process CPU time of each call (every thread's): on a shared machine
the CPU ratio moves less with other work than the wall ratio does."""
from __future__ import annotations

import gc
import os
import statistics
import threading
import time
from typing import Callable, List, Optional, Tuple

import numpy as np

from arrayscope import formats
from arrayscope.formats.core import registry

from .stacks import KEY, read_theirs


def _rss() -> int:
    with open("/proc/self/statm") as fh:
        return int(fh.read().split()[1]) * os.sysconf("SC_PAGE_SIZE")


def peak_of(fn: Callable[[], object], cpu: Optional[List[float]] = None
            ) -> Tuple[float, int, object]:
    """(seconds, peak resident bytes above the start, result) of one call; its process CPU
    seconds appended to `cpu` when given."""
    gc.collect()
    base = _rss()
    peak = [base]
    stop = threading.Event()

    def sample():
        while not stop.is_set():
            peak[0] = max(peak[0], _rss())
            time.sleep(0.001)
    t = threading.Thread(target=sample, daemon=True)
    t.start()
    c0 = time.process_time()
    t0 = time.perf_counter()
    result = fn()
    dt = time.perf_counter() - t0
    if cpu is not None:
        cpu.append(time.process_time() - c0)   # (the sampler's share is tiny: it sleeps)
    stop.set()
    t.join()
    peak[0] = max(peak[0], _rss())
    return dt, peak[0] - base, result


def ours_raw(uri: str, field: str) -> list:
    """What `values --raw` writes: open the path, decode every fragment; the raw bytes of
    each fragment (written one after the other, never joined)."""
    key = KEY.encode() if "aes" in os.path.basename(uri) else None
    doc = formats.open(uri, key=key, tree=False)  # as `values` opens it
    plugin = registry.plugin_named(doc.format)
    entries = plugin.values(doc, field, with_values=False)
    errs = [e["error"] for e in entries if e.get("error")]
    if errs:
        raise AssertionError(errs[0])
    parts = [e["raw"] for e in entries]
    doc.close()
    return parts


def theirs_raw(uri: str, field: str) -> np.ndarray:
    return read_theirs(uri, field)


def theirs_bytes(arr: np.ndarray) -> bytes:
    if arr.dtype == object:  # var strings: the var data bytes, cell after cell
        return b"".join(s.encode() if isinstance(s, str) else bytes(s) for s in arr)
    return arr.tobytes()


def compare(uri: str, field: str, rounds: int = 5) -> dict:
    """Interleaved rounds of both sides; medians and peaks. Checks the bytes are equal."""
    mine = b"".join(ours_raw(uri, field))
    ref = theirs_raw(uri, field)
    if mine != theirs_bytes(ref):
        raise AssertionError(f"{uri}: decoded bytes differ from tiledb-py's")
    del mine, ref
    t_o: List[float] = []
    t_t: List[float] = []
    c_o: List[float] = []
    c_t: List[float] = []
    m_o: List[int] = []
    m_t: List[int] = []
    def ours() -> None:
        dt, mem, r = peak_of(lambda: ours_raw(uri, field), c_o)
        del r
        t_o.append(dt)
        m_o.append(mem)

    def theirs() -> None:
        dt, mem, r = peak_of(lambda: theirs_raw(uri, field), c_t)
        del r
        t_t.append(dt)
        m_t.append(mem)

    # The order alternates: the call right after the other side's pays for what that left
    # behind (a gigabyte just freed, huge pages to compact), so neither side always does.
    for k in range(rounds):
        for side in ((ours, theirs) if k % 2 == 0 else (theirs, ours)):
            side()
    o, t = statistics.median(t_o), statistics.median(t_t)
    co, ct = statistics.median(c_o), statistics.median(c_t)
    return {"ours_s": o, "tiledb_s": t, "ratio": o / t, "ours_peak_mib": max(m_o) / 2 ** 20,
            "tiledb_peak_mib": max(m_t) / 2 ** 20, "ours_cpu_s": co, "tiledb_cpu_s": ct,
            "cpu_ratio": co / max(ct, 1e-9)}


def row(name: str, cells: int, r: dict) -> str:
    return (f"{name:30s} {cells:>10d} {r['ours_s'] * 1000:8.0f} {r['tiledb_s'] * 1000:8.0f} "
            f"{r['ratio']:6.2f} {r['ours_peak_mib']:8.0f} {r['tiledb_peak_mib']:8.0f} "
            f"{r['cpu_ratio']:7.2f}")


HEADER = (f"{'stack':30s} {'cells':>10s} {'ours ms':>8s} {'tdb ms':>8s} {'ratio':>6s} "
          f"{'ours MiB':>8s} {'tdb MiB':>8s} {'cpu ratio':>7s}")
