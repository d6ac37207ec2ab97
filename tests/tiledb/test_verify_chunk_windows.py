"""verify decodes the chunks of multi-chunk tiles in windows (`verify_chunks._FastChunks`,
`decode.Planned` on a clean run: `filters.batch.reverse_into` a slice per thread) for
[shuffle, codec], [codec] and [shuffle] pipelines, and gives exactly what the per-chunk
checks give: on arrays tiledb-py 0.36.1 writes (64 KiB chunks, tiles of 4 and 8 chunks),
clean and with planted damage, on one thread and on two, with the compiled kernels and
with numpy only. The cells it keeps for the cell checks are the cells tiledb-py reads."""
from __future__ import annotations

import glob
import os
import shutil
import struct

import numpy as np
import pytest
import tiledb

from arrayscope import formats
from arrayscope.formats.core import compiled
from arrayscope.formats.core.findings import TILE_STAT
from arrayscope.formats.core.verify import open_for_verify, verify_report
from arrayscope.formats.tiledb.parse.decode import Planned
from arrayscope.formats.tiledb.verify import tile_cache, verify_chunks

N = 4 * 65536     # cells: int64 tiles of 32768 cells = 4 chunks of 64 KiB
TILE = 32768


def _walk(n):
    return np.cumsum(np.random.default_rng(5).integers(-50, 50, n)).astype(np.int64)


ATTRS = {   # name -> (dtype, filters, data)
    "a": (np.int64, [tiledb.ByteShuffleFilter(), tiledb.ZstdFilter()], lambda: _walk(N)),
    "b": (np.float64, [tiledb.ZstdFilter()],
          lambda: np.random.default_rng(6).standard_normal(N)),
    "c": (np.int32, [tiledb.BitShuffleFilter(), tiledb.LZ4Filter()],
          lambda: _walk(N).astype(np.int32)),
    "e": (np.int16, [tiledb.ByteShuffleFilter()], lambda: (_walk(N) % 3000).astype(np.int16)),
}


def create_dense(uri: str, attrs: dict) -> str:
    """A dense array of N int64-indexed cells in tiles of TILE, one attribute per entry of
    `attrs` (name -> (dtype, filters, data maker))."""
    dom = tiledb.Domain(tiledb.Dim("d", domain=(0, N - 1), tile=TILE, dtype=np.int64))
    tiledb.Array.create(uri, tiledb.ArraySchema(domain=dom, sparse=False, attrs=[
        tiledb.Attr(k, dtype=dt, filters=f) for k, (dt, f, _d) in attrs.items()]))
    return uri


@pytest.fixture(scope="module")
def dense(tmp_path_factory):
    uri = create_dense(str(tmp_path_factory.mktemp("windows") / "dense"), ATTRS)
    data = {k: d() for k, (_dt, _f, d) in ATTRS.items()}
    half = N // 2
    for k, (lo, hi) in enumerate([(0, half), (half, N)]):   # two fragments
        with tiledb.open(uri, "w", timestamp=k + 1) as A:
            A[lo:hi] = {name: v[lo:hi] for name, v in data.items()}
    return uri


def _run(uri):
    r = verify_report(open_for_verify(uri))
    return [f.to_json() for f in r.findings], r.tally.tiles, r.tally.nbytes


def _both(uri, monkeypatch):
    """(findings, tiles, bytes) with the chunk windows, and by the per-chunk checks only."""
    fast = _run(uri)
    with monkeypatch.context() as m:
        m.setattr(compiled, "TUNING", compiled.tuned(planned=False))
        ref = _run(uri)
    return fast, ref


def test_windows_taken_and_same_as_per_chunk(dense, jit, threads, monkeypatch):
    calls = {"windows": 0, "full": 0}
    real_decode, real_one = Planned.decode, verify_chunks.check_one

    def decode(self, run, out):
        if [s.name for s in run.specs] != ["GZIP"]:   # not the fragment metadata's tiles
            calls["windows"] += 1
        return real_decode(self, run, out)

    def one(ci, *a, **k):
        if os.path.basename(ci.source.name).startswith("a"):   # the data files' chunks
            calls["full"] += 1
        return real_one(ci, *a, **k)
    monkeypatch.setattr(Planned, "decode", decode)
    monkeypatch.setattr(verify_chunks, "check_one", one)
    fast = _run(dense)
    # 2 fragments x 4 files of 4 tiles (4, 4, 2 and 1 chunks): the first chunk of each
    # file checked in full (the probe), the rest in one window a file
    assert calls["full"] == 8
    assert calls["windows"] == 8
    monkeypatch.setattr(compiled, "TUNING", compiled.tuned(planned=False))
    ref = _run(dense)
    assert fast == ref
    assert fast[0] == []
    # every chunk checked (2 fragments x 4 tiles x 4 + 4 + 2 + 1 chunks), the cells too
    assert calls["full"] == 8 + 2 * 4 * (4 + 4 + 2 + 1)


def test_cells_kept_are_what_tiledb_reads(dense, jit, threads, monkeypatch):
    """Every tile the windows decoded, put into the tile cache for the cell checks, holds
    the cells tiledb-py reads for it."""
    kept = {}
    real_put = tile_cache.TileCache.put

    def put(self, key, decoded):
        kept[(key[0], key[1])] = bytes(decoded[0])
        return real_put(self, key, decoded)
    monkeypatch.setattr(tile_cache.TileCache, "put", put)
    _run(dense)
    with tiledb.open(dense) as A:
        theirs = {k: A[:][k] for k in ATTRS}
    frags = sorted(glob.glob(os.path.join(dense, "__fragments", "*")))
    assert len(frags) == 2
    for k, name in enumerate(ATTRS):
        stem = f"a{k}.tdb"
        for f, frag in enumerate(frags):
            src = os.path.relpath(os.path.join(frag, stem), dense)
            tiles = [v for (s, _o), v in sorted(kept.items()) if s == src]
            assert len(tiles) == 4, (src, len(tiles))   # every tile of the file, kept whole
            lo = f * (N // 2)
            want = theirs[name][lo:lo + N // 2].tobytes()
            assert b"".join(tiles) == want, src


def _chunk_at(path, tile_offset, k):
    """(metadata offset, data offset) of chunk k of the tile at `tile_offset`."""
    raw = open(path, "rb").read()
    at = tile_offset + 8
    for i in range(k + 1):
        orig, filt, mdl = struct.unpack_from("<III", raw, at)
        if i == k:
            return at + 12, at + 12 + mdl
        at += 12 + mdl + filt
    raise AssertionError


@pytest.mark.parametrize("case", ["a-zstd-byte", "a-part-table", "b-orig-length",
                                  "c-lz4-byte", "e-shuffle-table", "b-first-chunk"])
def test_planted_damage_same_findings(dense, tmp_path, jit, threads, monkeypatch, case):
    uri = str(tmp_path / "d")
    shutil.copytree(dense, uri)
    frag = sorted(glob.glob(os.path.join(uri, "__fragments", "*")))[1]
    name = {"a": "a0.tdb", "b": "a1.tdb", "c": "a2.tdb", "e": "a3.tdb"}[case[0]]
    path = os.path.join(frag, name)
    doc = formats.open(uri)
    offsets = [n.offset for n in doc.root.walk(expand_lazy=True)
               if n.kind == "tile" and getattr(n.source, "name", "").endswith(
                   os.path.relpath(path, uri))]
    doc.close()
    assert len(offsets) == 4
    if case == "b-first-chunk":   # the probe fails: the file's chunks all checked in full
        md, data = _chunk_at(path, offsets[0], 0)
    else:
        md, data = _chunk_at(path, offsets[1], {"a": 2, "b": 2, "c": 1, "e": 0}[case[0]])
    with open(path, "r+b") as fh:
        if case in ("a-zstd-byte", "c-lz4-byte"):
            fh.seek(data + 40)
            fh.write(b"\xff\xff\xff")
        elif case in ("a-part-table", "b-first-chunk"):
            fh.seek(md)                       # the compressor's part counts: 1, 1 -> 2, 1
            fh.write(struct.pack("<I", 2))
        elif case == "b-orig-length":
            fh.seek(md - 12)                  # the chunk header's original length
            fh.write(struct.pack("<I", 65535))
        elif case == "e-shuffle-table":
            fh.seek(md + 4)                   # the shuffle's one part: its size
            fh.write(struct.pack("<I", 65528))
    fast, ref = _both(uri, monkeypatch)
    assert fast == ref
    errors = [f for f in fast[0] if f["status"] == "error"]
    assert errors, fast[0]
    assert any(f["source"].endswith(name) for f in errors), errors


def test_whole_tile_domain_masks_nothing(dense, tmp_path, monkeypatch):
    """A dense fragment whose non-empty domain is whole tiles: every stored cell is inside,
    so the statistics take every cell without a mask (cell_checks._tiles_inside) — the same
    findings as the per-cell masks, clean and with a cell changed under its tile's sum."""
    from arrayscope.formats.tiledb.verify import cell_checks

    uri = str(tmp_path / "d")
    shutil.copytree(dense, uri)
    frag = sorted(glob.glob(os.path.join(uri, "__fragments", "*")))[0]
    path = os.path.join(frag, "a3.tdb")   # [ByteShuffle] alone: a stored int16 cell
    md, data = _chunk_at(path, 0, 0)
    with open(path, "r+b") as fh:
        fh.seek(data + 5000)              # one byte of the shuffled cells: a changed value
        old = fh.read(1)
        fh.seek(data + 5000)
        fh.write(bytes([old[0] ^ 0x10]))
    seen = []
    real = cell_checks._tiles_inside
    monkeypatch.setattr(cell_checks, "_tiles_inside",
                        lambda s, fm, n: seen.append(real(s, fm, n)) or seen[-1])
    got = _run(uri)
    assert seen and all(seen)             # both fragments: whole tiles
    monkeypatch.setattr(cell_checks, "_tiles_inside", lambda s, fm, n: False)
    assert _run(uri) == got
    assert any(f["code"] == TILE_STAT for f in got[0]), got[0]


def test_windows_bounded_by_stored_bytes(dense, monkeypatch):
    """Windows of at most WINDOW stored bytes, each as full as that allows wherever in the
    file it starts: the float64 [ZSTD] file's 64 KiB chunks (stored about as big) two a
    window."""
    sizes = []
    real = Planned.decode

    def decode(self, run, out):
        if [s.name for s in run.specs] == ["ZSTD"]:
            assert sum(p.chunk.filtered + p.chunk.md_length for p in run.pieces) <= 140_000
            sizes.append(len(run.pieces))
        return real(self, run, out)
    monkeypatch.setattr(compiled, "TUNING", compiled.tuned(window=140_000))
    monkeypatch.setattr(Planned, "decode", decode)
    got = _run(dense)
    # a fragment's file: its last tile first (the walk's order; chunk 0 the probe), then the
    # others in pairs
    assert sizes == ([2, 1] + [2] * 6) * 2
    monkeypatch.setattr(compiled, "TUNING", compiled.tuned(planned=False))
    assert _run(dense) == got


@pytest.fixture(scope="module")
def typed(tmp_path_factory):
    """Pipelines checked chunk by chunk whose last filter is a lone compressor."""
    uri = str(tmp_path_factory.mktemp("typed") / "dense")
    dom = tiledb.Domain(tiledb.Dim("d", domain=(0, N - 1), tile=TILE, dtype=np.int64))
    tiledb.Array.create(uri, tiledb.ArraySchema(domain=dom, sparse=False, attrs=[
        tiledb.Attr("dd", dtype=np.int64, filters=[tiledb.DoubleDeltaFilter(),
                                                   tiledb.ZstdFilter()]),
        tiledb.Attr("bw", dtype=np.int32, filters=[tiledb.BitWidthReductionFilter(),
                                                   tiledb.LZ4Filter()])]))
    with tiledb.open(uri, "w", timestamp=1) as A:
        A[:] = {"dd": _walk(N), "bw": _walk(N).astype(np.int32)}
    return uri


@pytest.mark.parametrize("case", ["clean", "dd-zstd-byte", "bw-lz4-byte", "dd-first-chunk"])
def test_last_codec_forward_left_out(typed, tmp_path, threads, monkeypatch, case):
    """After a file's first chunk, the last compressor's forward (a re-compress that can
    only say 're-encoded') is left out: the same findings as every check, fewer
    compressions."""
    from arrayscope.formats.filters.compression import CompressionFilter

    uri = str(tmp_path / "d")
    shutil.copytree(typed, uri)
    if case != "clean":
        (frag,) = glob.glob(os.path.join(uri, "__fragments", "*"))
        path = os.path.join(frag, "a0.tdb" if case.startswith("dd") else "a1.tdb")
        doc = formats.open(uri)
        offsets = [n.offset for n in doc.root.walk(expand_lazy=True)
                   if n.kind == "tile" and getattr(n.source, "name", "").endswith(
                       os.path.relpath(path, uri))]
        doc.close()
        tile, k = (offsets[-1], 0) if case == "dd-first-chunk" else (offsets[2], 1)
        md, data = _chunk_at(path, tile, k)
        with open(path, "r+b") as fh:
            fh.seek(data + 30)
            fh.write(b"\xff\xff\xff")
    calls = {"n": 0}
    real = CompressionFilter.forward

    def forward(self, *a, **k):
        calls["n"] += 1
        return real(self, *a, **k)
    monkeypatch.setattr(CompressionFilter, "forward", forward)
    fast = _run(uri)
    fewer = calls["n"]
    calls["n"] = 0
    with monkeypatch.context() as m:
        m.setattr(compiled, "TUNING", compiled.tuned(planned=False))
        ref = _run(uri)
    assert fast == ref
    assert fewer < calls["n"] - 20   # 32 + 16 chunks: most compressors' forwards left out
    if case == "clean":
        assert fast[0] == []
    else:
        assert [f for f in fast[0] if f["status"] == "error"], fast[0]


def test_encrypted_forwards_left_out(tmp_path, threads, monkeypatch):
    """[Zstd, AES-256-GCM]: after each file's first chunk neither forward (a re-compress, a
    re-encryption with a fresh IV) is made; the same findings as every check, clean and
    with a changed byte (its tag fails)."""
    from arrayscope.formats.filters.encryption import Aes256Gcm

    key = "0123456789abcdeF0123456789abcdeF"
    ctx = tiledb.Ctx({"sm.encryption_type": "AES_256_GCM", "sm.encryption_key": key})
    uri = str(tmp_path / "enc")
    dom = tiledb.Domain(tiledb.Dim("d", domain=(0, N - 1), tile=TILE, dtype=np.int64), ctx=ctx)
    tiledb.Array.create(uri, tiledb.ArraySchema(domain=dom, sparse=False, ctx=ctx, attrs=[
        tiledb.Attr("a", dtype=np.int64, ctx=ctx,
                    filters=tiledb.FilterList([tiledb.ZstdFilter()], ctx=ctx))]), ctx=ctx)
    with tiledb.open(uri, "w", ctx=ctx) as A:
        A[:] = {"a": _walk(N)}
    calls = {"n": 0}
    real = Aes256Gcm.forward

    def forward(self, *a, **k):
        calls["n"] += 1
        return real(self, *a, **k)
    monkeypatch.setattr(Aes256Gcm, "forward", forward)

    def run():
        r = verify_report(open_for_verify(uri, key.encode()))
        return [f.to_json() for f in r.findings], r.tally.tiles, r.tally.nbytes
    for damaged in (False, True):
        if damaged:
            (frag,) = glob.glob(os.path.join(uri, "__fragments", "*"))
            path = os.path.join(frag, "a0.tdb")
            with open(path, "r+b") as fh:
                fh.seek(os.path.getsize(path) // 2)
                b = fh.read(1)
                fh.seek(-1, 1)
                fh.write(bytes([b[0] ^ 1]))
        calls["n"] = 0
        fast, fewer = run(), calls["n"]
        calls["n"] = 0
        with monkeypatch.context() as m:
            m.setattr(compiled, "TUNING", compiled.tuned(planned=False))
            ref = run()
        assert fast == ref
        assert fewer < calls["n"] - 20   # 32 chunks of a0.tdb
        errors = [f for f in fast[0] if f["status"] == "error"]
        assert bool(errors) == damaged, fast[0]
