"""The 1 000-fragment benchmark array (tests/benchmarks/test_bench_scale.py's shape) with one
fragment damaged: salvage keeps 999 fragments and loses that one's cells. Slow (tiledb-py
writes 1 000 fragments); the time is printed for the issue's closing note."""
from __future__ import annotations

import glob
import os
import time

import numpy as np
import pytest

tiledb = pytest.importorskip("tiledb")

from tests.salvage.support import break_zstd_frame, lost_parts, salvage_cli, verify_exit  # noqa: E402

K, M = 1000, 1000


@pytest.mark.slow
def test_thousand_fragments_one_damaged(tmp_path, capsys):
    src, out = str(tmp_path / "a"), str(tmp_path / "out")
    dom = tiledb.Domain(tiledb.Dim("d", domain=(0, M * K - 1), tile=M, dtype=np.int64))
    tiledb.Array.create(src, tiledb.ArraySchema(domain=dom, sparse=False, attrs=[
        tiledb.Attr("a", dtype=np.int64, filters=[tiledb.ZstdFilter()])]))
    for i in range(K):
        with tiledb.open(src, "w", timestamp=i + 1) as A:
            A[i * M:(i + 1) * M] = np.arange(i * M, (i + 1) * M, dtype=np.int64)
    (frag,) = glob.glob(os.path.join(src, "__fragments", "__500_500_*"))
    break_zstd_frame(os.path.join(frag, "a0.tdb"))
    t, cpu = time.perf_counter(), _cpu()
    code, rep = salvage_cli(src, out, capsys=capsys)
    took, cpu = time.perf_counter() - t, _cpu() - cpu
    # its one tile is the damaged one: the fragment is not written, its cells lost
    assert code == 3 and [(p["kind"], p["cells"]) for p in lost_parts(rep)] == [("tile", M)]
    assert rep["totals"]["."]["a"] == {"kept": (K - 1) * M, "lost": M}
    with tiledb.open(out) as A:
        got = A[:]["a"]
    want = np.arange(M * K, dtype=np.int64)
    hole = np.zeros(M * K, bool)
    hole[499 * M:500 * M] = True
    assert np.array_equal(got[~hole], want[~hole])
    assert (got[hole] == np.iinfo(np.int64).min).all()
    assert verify_exit(out)[0] == 0
    with capsys.disabled():
        print(f"\nsalvage of {K} fragments, one damaged: {took:.1f} s wall, {cpu:.1f} CPU-s "
              f"(this process and its workers)")


def _cpu() -> float:
    """CPU seconds of this process and its waited-for children (verify's workers)."""
    import resource

    return sum(resource.getrusage(who).ru_utime + resource.getrusage(who).ru_stime
               for who in (resource.RUSAGE_SELF, resource.RUSAGE_CHILDREN))
