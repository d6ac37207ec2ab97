"""How fast `verify` and `values --raw` decode one array, as plain numbers (no pytest).

Imported by test_bench_verify_throughput.py, and run as a script for an A/B against another
checkout in the same run (`PYTHONPATH=<a folder holding arrayscope/> python verify_rate.py
URI FIELD ROUNDS THREADS...` prints JSON): so it uses only the public API both sides have.

`measure` gives, per thread count, the median wall and CPU seconds of each side (rounds
interleaved, both sides under the same load) and the stored bytes each decodes: `verify`
the chunk bytes it checked (its tally), `values` the on-disk bytes of the field's data
files."""
from __future__ import annotations

import contextlib
import json
import os
import statistics
import sys
import time
from typing import Dict, Iterator, List, Tuple

KEY = "0123456789abcdeF0123456789abcdeF"   # stacks.KEY (not imported: the script runs alone)


def _key(uri: str):
    return KEY.encode() if "aes" in os.path.basename(uri) else None


@contextlib.contextmanager
def threads(n: int) -> Iterator[None]:
    """Decoding on `n` threads (verify and values share `compiled.TUNING.workers`)."""
    from arrayscope.formats.core import compiled

    saved = compiled.TUNING
    compiled.TUNING = compiled.tuned(workers=n)
    try:
        yield
    finally:
        compiled.TUNING = saved


def run_verify(uri: str) -> Tuple[int, int]:
    """What `arrayscope verify` does: (stored bytes checked, findings)."""
    from arrayscope.formats.core.verify import open_for_verify, verify_report

    doc = open_for_verify(uri, _key(uri))
    try:
        r = verify_report(doc)
    finally:
        doc.close()
    return r.tally.nbytes, len(r.findings)


def run_values(uri: str, field: str) -> int:
    """What `values --raw` does (open, decode every fragment of the field): cell bytes."""
    from arrayscope import formats
    from arrayscope.formats.core import registry

    doc = formats.open(uri, key=_key(uri), tree=False)
    try:
        entries = registry.plugin_named(doc.format).values(doc, field, with_values=False)
    finally:
        doc.close()
    errs = [e["error"] for e in entries if e.get("error")]
    if errs:
        raise AssertionError(errs[0])
    return sum(len(e["raw"]) for e in entries)


def field_stored(uri: str, field: str) -> int:
    """On-disk bytes of the data files holding `field` (values file, offsets, validity)."""
    from arrayscope import formats
    from arrayscope.formats.tiledb.parse.data_files import file_role
    from arrayscope.formats.tiledb.values import field_values as V

    doc = formats.open(uri, key=_key(uri), tree=False)
    total = 0
    try:
        for frag in doc.model.fragments:
            fm = V._metadata(doc, doc.model, frag)   # as test_bench_decode locates a file
            for name in os.listdir(frag.path):
                role = file_role(fm.schema, fm, name)
                if role is not None and role.obj.name == field:
                    total += os.path.getsize(os.path.join(frag.path, name))
    finally:
        doc.close()
    return total


def _timed(fn) -> Tuple[float, float]:
    c, t = time.process_time(), time.perf_counter()
    fn()
    return time.perf_counter() - t, time.process_time() - c


def measure(uri: str, field: str, rounds: int, counts: List[int]) -> Dict[str, dict]:
    """{"<side> <threads>": {"wall", "cpu", "stored"}} for side verify / values."""
    stored_v = run_verify(uri)[0]       # also warms the page cache and the compiled kernels
    run_values(uri, field)
    stored_r = field_stored(uri, field)
    times: Dict[str, List[Tuple[float, float]]] = {}
    for k in range(rounds):
        for n in counts:
            with threads(n):
                sides = [("verify", lambda: run_verify(uri)),
                         ("values", lambda: run_values(uri, field))]
                for side, fn in sides if k % 2 == 0 else sides[::-1]:
                    times.setdefault(f"{side} {n}", []).append(_timed(fn))
    out: Dict[str, dict] = {}
    for name, ts in times.items():
        out[name] = {"wall": statistics.median(t[0] for t in ts),
                     "cpu": statistics.median(t[1] for t in ts),
                     "stored": stored_v if name.startswith("verify") else stored_r}
    return out


if __name__ == "__main__":
    uri, field, rounds = sys.argv[1], sys.argv[2], int(sys.argv[3])
    print(json.dumps(measure(uri, field, rounds, [int(a) for a in sys.argv[4:]])))
