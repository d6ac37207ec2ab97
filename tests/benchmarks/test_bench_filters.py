"""Filter throughput on 64 MiB of int64 cells, cut into 64 KiB chunks as libtiledb cuts
tiles (not run by default):

    python -m pytest tests/benchmarks/test_bench_filters.py --benchmark-only \\
        -p no:cacheprovider -o addopts=""

Targets (DESIGN.md): reverse [BYTESHUFFLE, ZSTD] >= 1 GB/s of output and >= 0.8x plain
zstd decompression of the same compressed chunks, measured in the same run; BITSHUFFLE,
BIT_WIDTH_REDUCTION, POSITIVE_DELTA, DOUBLE_DELTA and RLE reverse >= 300 MB/s.

Two ways to reverse are measured: chunk by chunk with `reverse_chunk` (every stage kept, what
the GUI shows), and in batches with `batch.reverse_into` (the cells only, written into one
output buffer: what `values` uses). The output buffer is allocated once, outside the timing,
as plain zstd's outputs are freed and reused: both sides measure decoding, not page faults."""
from __future__ import annotations

import time

import numpy as np
import pytest
import zstandard

from arrayscope.formats.filters import DataInfo, FilterSpec, RunContext, forward_chunk, reverse_chunk
from arrayscope.formats.filters.batch import reverse_into

TOTAL = 64 * 1024 * 1024
CHUNK = 64 * 1024
INFO = DataInfo(1, 1, "attribute", False)  # INT64


def _cells() -> np.ndarray:
    rng = np.random.default_rng(42)
    n = TOTAL // 8
    # sensor-like int64: a non-decreasing random walk (positive delta needs one) with a
    # constant stretch (runs for RLE)
    walk = np.cumsum(rng.integers(0, 40, n, dtype=np.int64)) + (1 << 40)
    walk[n // 2:n // 2 + n // 8] = walk[n // 2]
    walk[n // 2 + n // 8:] += walk[n // 2] - walk[n // 2 + n // 8]
    return walk


CELLS = _cells()
CHUNKS = [CELLS[i:i + CHUNK // 8].tobytes() for i in range(0, len(CELLS), CHUNK // 8)]

CASES = {
    "byteshuffle_zstd": ([FilterSpec(9), FilterSpec(2, {"compressor": 2, "level": -1})], 1000),
    "bitshuffle": ([FilterSpec(8)], 300),
    "bit_width_reduction": ([FilterSpec(7, {"max_window": 256})], 300),
    "positive_delta": ([FilterSpec(10, {"max_window": 1024})], 300),
    "double_delta": ([FilterSpec(6, {"compressor": 6, "level": -1, "reinterpret": 17})], 300),
    "rle": ([FilterSpec(4, {"compressor": 4, "level": -1})], 300),
}


def _encoded(specs):
    out = []
    for c in CHUNKS:
        st = forward_chunk(specs, c, INFO)[-1]
        out.append((len(c), st.metadata_bytes, st.data_bytes))
    return out


def _reverse_all(specs, encoded):
    n = 0
    for orig, md, data in encoded:
        r = reverse_chunk(specs, md, data, INFO, RunContext(None, orig))
        n += len(r.cells)
    return n


def _batch_input(encoded):
    chunks, pos = [], 0
    for orig, md, data in encoded:
        chunks.append((md, data, orig, pos))
        pos += orig
    out = np.empty(pos, np.uint8)
    out[:] = 0  # fault the pages in once
    return chunks, out


def _reverse_batch(specs, chunks, out):
    left = reverse_into(specs, INFO, chunks, out)
    assert not left
    return len(out)


def _best(fn, repeat=5):
    best = float("inf")
    for _ in range(repeat):
        t = time.perf_counter()
        fn()
        best = min(best, time.perf_counter() - t)
    return best


def test_reverse_throughput_batched(benchmark):
    specs, target_mb_s = CASES["byteshuffle_zstd"]
    chunks, out = _batch_input(_encoded(specs))
    _reverse_batch(specs, chunks, out)
    assert out.tobytes() == CELLS.tobytes()
    benchmark.pedantic(_reverse_batch, args=(specs, chunks, out), rounds=5, iterations=1)
    mb_s = TOTAL / benchmark.stats.stats.min / 1e6
    benchmark.extra_info["MB/s (best)"] = round(mb_s)
    benchmark.extra_info["target MB/s"] = target_mb_s
    assert mb_s >= target_mb_s, f"batched: {mb_s:.0f} MB/s < {target_mb_s} MB/s"


@pytest.mark.parametrize("case", list(CASES))
def test_reverse_throughput(benchmark, case):
    specs, target_mb_s = CASES[case]
    encoded = _encoded(specs)
    assert _reverse_all(specs, encoded) == TOTAL
    benchmark.pedantic(_reverse_all, args=(specs, encoded), rounds=5, iterations=1)
    mb_s = TOTAL / benchmark.stats.stats.min / 1e6
    benchmark.extra_info["MB/s (best)"] = round(mb_s)
    benchmark.extra_info["target MB/s"] = target_mb_s
    assert mb_s >= target_mb_s, f"{case}: {mb_s:.0f} MB/s < {target_mb_s} MB/s"


def test_byteshuffle_zstd_vs_plain_zstd(benchmark):
    """Same run, same compressed bytes, rounds interleaved (the machine's load changes):
    arrayscope's batched reverse of [BYTESHUFFLE, ZSTD] — and, for the record, the chunk by
    chunk `reverse_chunk` — against zstandard decompressing each chunk's data part alone."""
    specs = CASES["byteshuffle_zstd"][0]
    encoded = _encoded(specs)
    frames = []
    for orig, md, data in encoded:
        # zstd md: nmd=1, ndata=1, (orig, comp) of the shuffle metadata, then of the data
        meta_comp = int.from_bytes(md[12:16], "little")
        frames.append((orig, data[meta_comp:]))
    dctx = zstandard.ZstdDecompressor()
    chunks, out = _batch_input(encoded)

    def plain():
        return sum(len(dctx.decompress(f, max_output_size=o)) for o, f in frames)

    assert plain() == TOTAL
    assert _reverse_batch(specs, chunks, out) == TOTAL and out.tobytes() == CELLS.tobytes()
    t_plain = t_chunk = float("inf")
    for _ in range(5):
        t_plain = min(t_plain, _best(plain, 1))
        t_chunk = min(t_chunk, _best(lambda: _reverse_all(specs, encoded), 1))
    benchmark.pedantic(_reverse_batch, args=(specs, chunks, out), rounds=5, iterations=1)
    t_ours = benchmark.stats.stats.min
    t_plain = min(t_plain, _best(plain, 3))
    ratio = t_plain / t_ours
    benchmark.extra_info["plain zstd ms"] = round(t_plain * 1000, 1)
    benchmark.extra_info["batched ms"] = round(t_ours * 1000, 1)
    benchmark.extra_info["per-chunk ms"] = round(t_chunk * 1000, 1)
    benchmark.extra_info["plain zstd MB/s"] = round(TOTAL / t_plain / 1e6)
    benchmark.extra_info["arrayscope MB/s"] = round(TOTAL / t_ours / 1e6)
    benchmark.extra_info["speed vs plain zstd"] = round(ratio, 2)
    benchmark.extra_info["per-chunk speed vs plain zstd"] = round(t_plain / t_chunk, 2)
    print(f"\n[BYTESHUFFLE, ZSTD] 64 MiB: plain zstd {t_plain * 1000:.1f} ms, batched "
          f"{t_ours * 1000:.1f} ms ({ratio:.2f}x), per chunk {t_chunk * 1000:.1f} ms "
          f"({t_plain / t_chunk:.2f}x)")
    assert ratio >= 0.8, f"{ratio:.2f}x of plain zstd"
