"""Decode speed and peak memory side by side with tiledb-py, one stack per case (on demand):

    python -m pytest tests/benchmarks/test_bench_decode.py --benchmark-only -s -o addopts=""
    ARRAYSCOPE_BENCH_CELLS=67108864 python -m pytest ...      # the 64M-cell figures

Each case builds its array once (in ARRAYSCOPE_BENCH_DIR, default a temporary folder), checks
arrayscope decodes the same bytes tiledb-py reads, then times both sides in interleaved rounds
in this one process and prints `stack cells ours tiledb ratio ours-MiB tiledb-MiB`: the ratio
is the median of arrayscope's `values --raw` path (open the model, decode every fragment)
over the median of tiledb-py reading the field of the whole array (target ≤ 1.0, DESIGN.md).
Peak memory is resident memory above the level before each call.

`test_zstd_limit` compares reversing [ByteShuffle, Zstd] with decompressing the same zstd
frames alone (python-zstandard), on one core and on every core (target ≥ 0.8× throughput).
It also prints the same frames decompressed into one fresh output array of the whole size
(`stream_reader(...).readinto`): the physical limit of producing the decoded array, which
pays what zstd alone into reused 64 KiB buffers does not — the kernel zeroing every fresh
page of the output and writing it all to memory."""
from __future__ import annotations

import os
import statistics
import time
from concurrent.futures import ThreadPoolExecutor

import pytest

from arrayscope import formats
from arrayscope.formats.tiledb import values as V
from arrayscope.formats.tiledb.data_files import file_role, tile_bounds, tile_offsets_for
from arrayscope.formats.tiledb.rawtile import chunk_table

from . import sidebyside as S
from .stacks import STACKS, build

CELLS = int(os.environ.get("ARRAYSCOPE_BENCH_CELLS", 8 * 1024 * 1024))
ROUNDS = int(os.environ.get("ARRAYSCOPE_BENCH_ROUNDS", 5))



@pytest.mark.parametrize("name", list(STACKS))
def test_decode_vs_tiledb(benchmark, bench_dir, name):
    uri, field = build(name, bench_dir, CELLS)
    r = benchmark.pedantic(S.compare, args=(uri, field, ROUNDS), rounds=1, iterations=1)
    benchmark.extra_info.update({k: round(v, 4) for k, v in r.items()})
    print(f"\n{S.HEADER}\n{S.row(name, CELLS, r)}")


def _frames(uri: str):
    """The zstd frames of every chunk of a [ByteShuffle, Zstd] attribute, and the model."""
    doc = formats.open(uri, tree=False)
    frag = doc.model.fragments[0]
    fm = V._metadata(doc, doc.model, frag)
    role = file_role(fm.schema, fm, "a0.tdb")
    offs, _ = tile_offsets_for(fm, role)
    src = doc.open_source(os.path.join(frag.path, "a0.tdb"))
    ends = tile_bounds(offs, src.size)
    frames, sizes = [], []
    for a, b in zip(offs, ends):
        for orig, filt, md, mdl, data in chunk_table(src, int(a), int(b)):
            c1 = int.from_bytes(src.read(md + 12, 4), "little")  # the shuffle table's frame
            frames.append(src.read(data + c1, filt - c1))
            sizes.append(orig)
    return doc, frag, fm, role, frames, sizes


def test_zstd_limit(benchmark, bench_dir):
    import zstandard

    uri, _ = build("int64_byteshuffle_zstd", bench_dir, CELLS)
    doc, frag, fm, role, frames, sizes = _frames(uri)
    cores = V._WORKERS
    dctx = zstandard.ZstdDecompressor()

    def zstd_one():
        for f, n in zip(frames, sizes):
            dctx.decompress(f, max_output_size=n)

    def zstd_all():
        step = -(-len(frames) // cores)

        def part(a):
            d = zstandard.ZstdDecompressor()
            for f, n in zip(frames[a:a + step], sizes[a:a + step]):
                d.decompress(f, max_output_size=n)
        with ThreadPoolExecutor(cores) as ex:
            list(ex.map(part, range(0, len(frames), step)))

    import numpy as np
    total = sum(sizes)

    def into(out, fs, ss, at, d):
        for f, n in zip(fs, ss):
            with d.stream_reader(f) as r:
                r.readinto(out[at:at + n])
            at += n

    def zstd_out_one():   # into one fresh array of the whole output
        into(np.empty(total, np.uint8), frames, sizes, 0, dctx)

    def zstd_out_all():
        out = np.empty(total, np.uint8)
        step = -(-len(frames) // cores)
        with ThreadPoolExecutor(cores) as ex:
            list(ex.map(lambda a: into(out, frames[a:a + step], sizes[a:a + step],
                                       sum(sizes[:a]), zstandard.ZstdDecompressor()),
                        range(0, len(frames), step)))

    def ours():
        V._decode_file_buffer(doc, frag, fm, role, "a0.tdb", None)

    def one_core(fn):
        saved, V._WORKERS = V._WORKERS, 1
        try:
            return fn()
        finally:
            V._WORKERS = saved

    def timed(fn, cpu=None):
        t, c = time.perf_counter(), time.process_time()
        fn()
        if cpu is not None:
            cpu.append(time.process_time() - c)
        return time.perf_counter() - t

    def measure():
        t: dict = {k: [] for k in ("ours1", "zstd1", "out1", "oursN", "zstdN", "outN")}
        t.update({k + "cpu": [] for k in list(t)})
        for _ in range(ROUNDS):
            for k, fn in (("ours1", lambda: one_core(ours)), ("zstd1", zstd_one),
                          ("out1", zstd_out_one), ("oursN", ours), ("zstdN", zstd_all),
                          ("outN", zstd_out_all)):
                t[k].append(timed(fn, t[k + "cpu"]))
        return {k: statistics.median(v) for k, v in t.items()}
    m = benchmark.pedantic(measure, rounds=1, iterations=1)
    mb = sum(sizes) / 1e6
    one, alln = m["zstd1"] / m["ours1"], m["zstdN"] / m["oursN"]
    # by CPU time: steadier on a busy machine
    one_cpu, all_cpu = m["zstd1cpu"] / m["ours1cpu"], m["zstdNcpu"] / m["oursNcpu"]
    benchmark.extra_info.update(one_core=round(one, 3), all_cores=round(alln, 3), cores=cores,
                                one_core_cpu=round(one_cpu, 3), all_cores_cpu=round(all_cpu, 3))
    print(f"\n[ByteShuffle, Zstd] {CELLS} cells, {len(frames)} chunks: one core {mb / m['ours1']:.0f}"
          f" MB/s vs zstd alone {mb / m['zstd1']:.0f} MB/s = {one:.2f}x (by CPU time "
          f"{one_cpu:.2f}x); {cores} cores {mb / m['oursN']:.0f} vs {mb / m['zstdN']:.0f} MB/s "
          f"= {alln:.2f}x (CPU {all_cpu:.2f}x) (target >= 0.8)")
    print(f"  vs zstd into one fresh output array: one core {mb / m['out1']:.0f} MB/s = "
          f"{m['out1'] / m['ours1']:.2f}x (CPU {m['out1cpu'] / m['ours1cpu']:.2f}x); {cores} cores "
          f"{mb / m['outN']:.0f} MB/s = {m['outN'] / m['oursN']:.2f}x "
          f"(CPU {m['outNcpu'] / m['oursNcpu']:.2f}x)")
