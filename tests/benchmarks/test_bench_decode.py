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
frames alone (python-zstandard), on one core and on every core (target ≥ 0.8× throughput):
`values --raw`'s whole decode of the file (locate the chunks, a fresh output, decode), and
the reversal alone (the fused kernel over located chunks into an output kept in memory).
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
from arrayscope.formats.core import compiled
from arrayscope.formats.tiledb.parse.data_files import file_role, tile_bounds, tile_offsets_for
from arrayscope.formats.tiledb.parse.rawtile import chunk_table
from arrayscope.formats.tiledb.values import field_values as V

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
    cores = compiled.TUNING.workers
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

    # the reversal alone, into an output already in memory (verify and a viewer re-decode
    # into buffers they keep): the fused kernel over the located chunks
    from arrayscope.formats.filters import fused
    job = V._locate(doc, frag, fm, role, "a0.tdb")
    kernel, fplan = fused.decoder(1 << 30), fused.fused_plan(role.specs, role.info)
    assert kernel is not None and fplan is not None
    located = [pc.chunk for pc in job.chunks]
    positions = [pc.at for pc in job.chunks]
    whole = job.src.view(0, job.src.size)
    kept = np.ones(total, np.uint8)

    def reverse_one():
        fused.decode_chunks(kernel, fplan, whole, located, positions, kept)

    def reverse_all():
        step = -(-len(located) // cores)
        with ThreadPoolExecutor(cores) as ex:
            list(ex.map(lambda a: fused.decode_chunks(kernel, fplan, whole, located[a:a + step],
                                                      positions[a:a + step], kept),
                        range(0, len(located), step)))

    def one_core(fn):
        saved = compiled.TUNING
        compiled.TUNING = compiled.tuned(workers=1)
        try:
            return fn()
        finally:
            compiled.TUNING = saved

    def timed(fn, cpu=None):
        t, c = time.perf_counter(), time.process_time()
        fn()
        if cpu is not None:
            cpu.append(time.process_time() - c)
        return time.perf_counter() - t

    def measure():
        t: dict = {k: [] for k in ("ours1", "zstd1", "out1", "oursN", "zstdN", "outN", "rev1",
                                   "revN")}
        t.update({k + "cpu": [] for k in list(t)})
        for _ in range(ROUNDS):
            for k, fn in (("ours1", lambda: one_core(ours)), ("zstd1", zstd_one),
                          ("out1", zstd_out_one), ("oursN", ours), ("zstdN", zstd_all),
                          ("outN", zstd_out_all), ("rev1", reverse_one), ("revN", reverse_all)):
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
    r1, rn = m["zstd1"] / m["rev1"], m["zstdN"] / m["revN"]
    benchmark.extra_info.update(reverse_one_core=round(r1, 3), reverse_all_cores=round(rn, 3))
    print(f"  the reversal alone into a kept output (fused kernel, chunks located): one core "
          f"{mb / m['rev1']:.0f} MB/s = {r1:.2f}x zstd alone (CPU "
          f"{m['zstd1cpu'] / m['rev1cpu']:.2f}x); {cores} cores {mb / m['revN']:.0f} MB/s = "
          f"{rn:.2f}x (CPU {m['zstdNcpu'] / m['revNcpu']:.2f}x)")


def _stage_cases():
    """(name, reverse of one 64 KiB chunk of int64/float64 values, output bytes) per
    numeric stage, on the bytes the forward filters make."""
    import numpy as np

    from arrayscope.formats.filters import FilterSpec, RunContext
    from arrayscope.formats.filters.base import DataInfo, Stage
    from arrayscope.formats.filters.bits import bitshuffle, bitunshuffle_rows, byteshuffle, byteunshuffle_rows
    from arrayscope.formats.filters.deltas import Delta, DoubleDelta
    from arrayscope.formats.filters.scale import FloatScale
    from arrayscope.formats.filters.xor import Xor

    n = 8192
    rng = np.random.default_rng(14)
    ints = np.cumsum(rng.integers(0, 1000, n)).astype(np.int64)
    floats = np.cumsum(rng.normal(0, 3, n))
    i64, f64 = DataInfo(1, 1, "a", False), DataInfo(3, 1, "a", False)
    run = RunContext(None, 8 * n)
    raw = ints.view(np.uint8)
    rows = np.tile(raw, (32, 1))   # 32 chunks, as reverse_into groups them on the numpy path
    out = np.empty_like(rows)
    bys, bis = np.tile(byteshuffle(raw, 8), (32, 1)), np.tile(bitshuffle(raw, 8), (32, 1))
    dd, dds = DoubleDelta(), FilterSpec(6, {"level": -1, "reinterpret": 17})
    dde = dd.compress_part(ints.tobytes(), dds, i64)
    de, des = Delta(), FilterSpec(19, {"level": -1, "reinterpret": 17})
    dee = de.compress_part(ints.tobytes(), des, i64)
    x, xs = Xor(), FilterSpec(16)
    xst = x.forward(xs, Stage([], [ints.tobytes()]), i64, run)
    fs, fss = FloatScale(), FilterSpec(15, {"scale": 0.01, "offset": 0.5, "byte_width": 8})
    fst = fs.forward(fss, Stage([], [floats.tobytes()]), f64, run)
    return [("byteshuffle x32", lambda: byteunshuffle_rows(bys, 8, out), rows.nbytes),
            ("bitshuffle x32", lambda: bitunshuffle_rows(bis, 8, out), rows.nbytes),
            ("doubledelta", lambda: dd.decompress_part(dde, 8 * n, dds, i64), 8 * n),
            ("delta", lambda: de.decompress_part(dee, 8 * n, des, i64), 8 * n),
            ("xor", lambda: x.reverse(xs, xst, i64, run), 8 * n),
            ("floatscale", lambda: fs.reverse(fss, fst, f64, run), 8 * n)]


def _kernel_cases():
    """(name, the compiled loop the fused decode runs for one 64 KiB chunk, output bytes):
    each stage without its Python call, as `filters.fused` runs it between codec calls."""
    import numpy as np

    from arrayscope.formats.accel import kernels as K
    from arrayscope.formats.accel.nativekernels import _bitunshuffle
    from arrayscope.formats.accel.simd import unshuffle_into
    from arrayscope.formats.filters.base import DataInfo, FilterSpec
    from arrayscope.formats.filters.bits import bitshuffle, byteshuffle
    from arrayscope.formats.filters.deltas import DoubleDelta

    n = 8192
    rng = np.random.default_rng(14)
    ints = np.cumsum(rng.integers(0, 1000, n)).astype(np.int64)
    raw = ints.view(np.uint8)
    out = np.empty(8 * n, np.uint8)
    bys, bis = byteshuffle(raw, 8), bitshuffle(raw, 8)
    dde = DoubleDelta().compress_part(ints.tobytes(), FilterSpec(6, {"level": -1, "reinterpret": 17}),
                                      DataInfo(1, 1, "a", False))
    bitsize = dde[0]
    nwords = -(-((n - 2) * (bitsize + 1)) // 64)
    words = np.frombuffer(dde, "<u8", nwords, 25).copy()
    deltas = np.diff(ints, prepend=0).view(np.uint64)
    scaled = (ints // 7).astype(np.int64)
    unsh, dd, ps, px, us = (K.unshuffle.get(), K.double_delta_decode.get(), K.prefix_sum.get(),
                            K.prefix_xor.get(), K.unscale.get())
    unsh(bys, n, 8, out)
    plain = out.copy()
    assert unshuffle_into(bys, n, 8, out, False) and (out == plain).all()
    o64, of = out.view(np.uint64), out.view(np.float64)
    return [("unshuffle", lambda: unshuffle_into(bys, n, 8, out, False), 8 * n),
            ("unshuffle loop", lambda: unsh(bys, n, 8, out), 8 * n),
            ("bitunshuffle", lambda: _bitunshuffle(bis, 8, out), 8 * n),
            ("double delta", lambda: dd(words, n, int(bitsize), int(ints[0]), int(ints[1]),
                                        out.view(np.int64)), 8 * n),
            ("prefix sum", lambda: ps(deltas, o64), 8 * n),
            ("prefix xor", lambda: px(deltas, o64), 8 * n),
            ("unscale", lambda: us(scaled, 0.01, 0.5, False, of), 8 * n)]


def test_stages_vs_copy(benchmark, monkeypatch):
    """Each numeric stage's reverse against `out.copy()` of an output of the same size
    (target: no slower than the copy where the algorithm allows), on the compiled path and
    on the numpy path (ARRAYSCOPE_NO_JIT=1) in the same run; best of several CPU times."""
    import numpy as np

    from arrayscope.formats.core import compiled
    compiled._load()
    cases = _stage_cases()

    def best(fn, reps=20):
        fn()
        ts = []
        for _ in range(7):
            c = time.process_time()
            for _ in range(reps):
                fn()
            ts.append((time.process_time() - c) / reps)
        return min(ts)

    def measure():
        res = {}
        for name, fn, nbytes in cases:
            copy = best(np.empty(nbytes, np.uint8).copy)
            monkeypatch.delenv("ARRAYSCOPE_NO_JIT", raising=False)
            jit = best(fn)
            monkeypatch.setenv("ARRAYSCOPE_NO_JIT", "1")
            nump = best(fn)
            monkeypatch.delenv("ARRAYSCOPE_NO_JIT")
            res[name] = (nbytes, copy, jit, nump)
        return res
    res = benchmark.pedantic(measure, rounds=1, iterations=1)
    print(f"\n{'stage':16s} {'bytes':>8s} {'copy us':>8s} {'jit us':>8s} {'numpy us':>9s} "
          f"{'jit/copy':>9s} {'numpy/copy':>11s}")
    for name, (nbytes, copy, jit, nump) in res.items():
        benchmark.extra_info[name] = round(jit / copy, 2)
        print(f"{name:16s} {nbytes:8d} {copy * 1e6:8.1f} {jit * 1e6:8.1f} {nump * 1e6:9.1f} "
              f"{jit / copy:9.1f} {nump / copy:11.1f}")
    # the loops alone, as the fused decode runs them (no Stage, no Python call per chunk)
    print(f"\n{'compiled loop':16s} {'bytes':>8s} {'copy us':>8s} {'loop us':>8s} {'loop/copy':>10s}")
    for name, fn, nbytes in _kernel_cases():
        copy, loop = best(np.empty(nbytes, np.uint8).copy, 200), best(fn, 200)
        benchmark.extra_info["loop " + name] = round(loop / copy, 2)
        print(f"{name:16s} {nbytes:8d} {copy * 1e6:8.1f} {loop * 1e6:8.1f} {loop / copy:10.1f}")
