"""`values` through the fused zstd kernel (`filters.fused`): [ZSTD] and [BYTESHUFFLE, ZSTD]
chunks decoded by one GIL-free call per run of chunks, bit for bit with tiledb-py; every
chunk the kernel does not take exactly as the Python path would is left to that path, which
reports what is wrong as before."""
from __future__ import annotations

import os
import struct

import lz4.block
import numpy as np
import pytest
import tiledb
import zstandard

from arrayscope import formats
from arrayscope.formats.accel import native
from arrayscope.formats.core import compiled
from arrayscope.formats.core.source import BytesSource
from arrayscope.formats.filters import fused
from arrayscope.formats.filters import get as get_filter
from arrayscope.formats.tiledb.parse.data_files import file_role, tile_bounds, tile_offsets_for
from arrayscope.formats.tiledb.parse.decode import decode_chunk
from arrayscope.formats.tiledb.parse.rawtile import TileError, chunk_table
from arrayscope.formats.tiledb.values import field_values as V
from tests.tiledb.test_values_direct import KEY, _theirs, _write_encrypted


@pytest.fixture(params=["fused", "python"])
def path(request, monkeypatch):
    """Which decoder runs: the fused kernel (numba loaded first, so small arrays take it
    too) or the Python path (`fused.decoder` gives None). Yields (name, per kernel call the
    number of chunks it was given and the number it left)."""
    calls: list = []
    if request.param == "python":
        monkeypatch.setattr(fused, "decoder", lambda nbytes, specs=None: None)
    else:
        monkeypatch.delenv("ARRAYSCOPE_NO_JIT", raising=False)
        assert compiled._load() is not None, "numba is a runtime dependency"
        assert fused.decoder(1) is not None, "numba loads"
        real = fused.decode_chunks

        def spy(kernel, plan, src, chunks, positions, out):
            left = real(kernel, plan, src, chunks, positions, out)
            calls.append((len(chunks), len(left)))
            return left
        monkeypatch.setattr(fused, "decode_chunks", spy)
    return request.param, calls


DTYPES = ["int64", "int32", "float64", "uint16", "int8", "datetime64[ns]"]


def _write(uri: str, dtype: str, filters, n: int = 300_000, frags: int = 1,
           tile: int = 0) -> np.ndarray:
    dom = tiledb.Domain(tiledb.Dim("d", domain=(0, n - 1), tile=tile or n // 4, dtype=np.int64))
    tiledb.Array.create(uri, tiledb.ArraySchema(
        domain=dom, attrs=[tiledb.Attr("a", dtype=np.dtype(dtype), filters=filters)]))
    rng = np.random.default_rng(7)
    step = n // frags
    for f in range(frags):
        part = np.cumsum(rng.integers(-3, 9, step)).astype(np.int64)
        vals = part.astype(dtype) if "datetime" not in dtype else part.view(dtype)
        with tiledb.open(uri, "w", timestamp=f + 1) as A:
            A[f * step:(f + 1) * step] = vals
    with tiledb.open(uri) as A:
        return A[:]["a"]


STACKS = {"zstd": lambda: [tiledb.ZstdFilter()],
          "byteshuffle_zstd": lambda: [tiledb.ByteShuffleFilter(), tiledb.ZstdFilter(level=3)],
          "lz4": lambda: [tiledb.LZ4Filter()],
          "byteshuffle_lz4": lambda: [tiledb.ByteShuffleFilter(), tiledb.LZ4Filter()],
          "gzip": lambda: [tiledb.GzipFilter()],
          "byteshuffle_gzip": lambda: [tiledb.ByteShuffleFilter(), tiledb.GzipFilter(level=9)],
          "bzip2": lambda: [tiledb.Bzip2Filter()],
          "byteshuffle_bzip2": lambda: [tiledb.ByteShuffleFilter(), tiledb.Bzip2Filter()],
          "bitshuffle_zstd": lambda: [tiledb.BitShuffleFilter(), tiledb.ZstdFilter()],
          "bitshuffle_lz4": lambda: [tiledb.BitShuffleFilter(), tiledb.LZ4Filter()],
          "delta_zstd": lambda: [tiledb.DeltaFilter(), tiledb.ZstdFilter()],
          "doubledelta_zstd": lambda: [tiledb.DoubleDeltaFilter(), tiledb.ZstdFilter()],
          "doubledelta_lz4": lambda: [tiledb.DoubleDeltaFilter(), tiledb.LZ4Filter()],
          "bwr_lz4": lambda: [tiledb.BitWidthReductionFilter(), tiledb.LZ4Filter()],
          "bwr_w64_zstd": lambda: [tiledb.BitWidthReductionFilter(window=64),
                                   tiledb.ZstdFilter()]}
# stacks the kernel takes for every dtype of DTYPES but some (the typed codecs: 8-byte values
# only; BIT_WIDTH_REDUCTION passes 1-byte integers through untouched: the Python path)
_TYPED_STACKS = ("delta_zstd", "doubledelta_zstd", "doubledelta_lz4", "bwr_lz4",
                 "bwr_w64_zstd")

# [SCALE_FLOAT?, XOR?, codec]: floats only (SCALE_FLOAT), any width for XOR
SCALED = {
    "floatscale_xor_zstd": lambda: [tiledb.FloatScaleFilter(0.5, 0.0, 4), tiledb.XORFilter(),
                                    tiledb.ZstdFilter()],
    "floatscale_w2_xor_lz4": lambda: [tiledb.FloatScaleFilter(0.25, -3.0, 2),
                                      tiledb.XORFilter(), tiledb.LZ4Filter()],
    "floatscale_w8_gzip": lambda: [tiledb.FloatScaleFilter(2.0, 1.5, 8), tiledb.GzipFilter()],
    "floatscale_w1_zstd": lambda: [tiledb.FloatScaleFilter(1.0, 0.0, 1), tiledb.ZstdFilter()],
    "xor_zstd": lambda: [tiledb.XORFilter(), tiledb.ZstdFilter()],
}


@pytest.mark.parametrize("stack,dtype", [(s, d) for s in SCALED
                                         for d in ("float32", "float64", "int16", "int64")
                                         if "float" in d or "floatscale" not in s])
def test_scaled_and_xor_match_tiledb(tmp_path, path, stack, dtype):
    """(SCALE_FLOAT takes floats only: tiledb refuses it on integers.)"""
    name, calls = path
    uri = str(tmp_path / f"{stack}_{dtype}")
    theirs = _write(uri, dtype, SCALED[stack]())
    raw = V.values(formats.open(uri), "a", with_values=False)[0]["raw"]
    assert bytes(raw) == theirs.tobytes()
    if name == "fused" and "gzip" not in stack:   # GZIP: no kernel (accel/native.py)
        assert sum(n for n, _ in calls) >= 4 and all(left == 0 for _, left in calls), calls


@pytest.mark.parametrize("stack,dtype", [(s, d) for s in STACKS for d in DTYPES
                                         if s not in _TYPED_STACKS or "float" not in d])
def test_matches_tiledb(tmp_path, path, stack, dtype):
    name, calls = path
    uri = str(tmp_path / f"{stack}_{dtype.replace('[', '_').replace(']', '')}")
    theirs = _write(uri, dtype, STACKS[stack]())
    raw = V.values(formats.open(uri), "a", with_values=False)[0]["raw"]
    assert bytes(raw) == theirs.tobytes()
    taken = np.dtype(dtype).itemsize == 8 if "delta" in stack else np.dtype(dtype).itemsize > 1
    if name == "fused" and "gzip" not in stack and (stack not in _TYPED_STACKS or taken):
        # every chunk decoded by the kernel, none left
        assert sum(n for n, _ in calls) >= 4 and all(left == 0 for _, left in calls), calls


def test_many_runs_over_threads(tmp_path, path, monkeypatch):
    """Several fragments, runs of 8 chunks, two threads: the runs land where they belong."""
    name, calls = path
    monkeypatch.setattr(compiled, "TUNING", compiled.tuned(workers=2, release_every=8))
    uri = str(tmp_path / "frags")
    theirs = _write(uri, "int64", STACKS["byteshuffle_zstd"](), n=1_200_000, frags=4)
    entries = V.values(formats.open(uri), "a", with_values=False)   # one per fragment
    assert len(entries) == 4
    assert b"".join(bytes(e["raw"]) for e in entries) == theirs.tobytes()
    if name == "fused":
        assert len(calls) >= 6 and all(left == 0 for _, left in calls), calls


def _data_file(uri: str) -> str:
    doc = formats.open(uri)
    return os.path.join(doc.model.fragments[0].path, "a0.tdb")


def test_damaged_frame_reported_as_before(tmp_path, path):
    """A compressed length in a chunk's part table made one shorter: the kernel leaves the
    chunk, the Python path reports it — the same error on both paths."""
    name, calls = path
    uri = str(tmp_path / "bad")
    _write(uri, "int64", STACKS["byteshuffle_zstd"]())
    p = _data_file(uri)
    raw = bytearray(open(p, "rb").read())
    # tile 1, chunk 1: u64 chunk count, 12-byte chunk header, then the zstd part table
    # (u32 counts 1 and 1, then (8, c1) of the shuffle table and (orig, c2) of the data)
    c2 = struct.unpack_from("<I", raw, 8 + 12 + 20)[0]
    struct.pack_into("<I", raw, 8 + 12 + 20, c2 - 1)
    with open(p, "wb") as fh:
        fh.write(raw)
    e = V.values(formats.open(uri), "a")[0]
    assert e.get("error") and e["error"].startswith("a0.tdb: tile 1: chunk 1:"), e
    assert "compressed" in e["error"] or "ZSTD" in e["error"], e
    if name == "fused":
        assert any(left for _, left in calls), calls


# ---- the kernel's contract, chunk by chunk ----------------------------------------------
ZSTD8 = fused.FusedPlan(native.Codec.ZSTD, 1, 8)


def _first_chunk(tmp_path, name: str, dtype: str, filters):
    """An array tiledb-py wrote (40 000 cells of `dtype` through `filters`): the pipeline
    role of its `a0.tdb` and that file's first chunk as (metadata, data, original length)."""
    uri = str(tmp_path / name)
    _write(uri, dtype, filters, n=40_000)
    return first_chunk_of(uri)


def first_chunk_of(uri: str, key=None):
    """The pipeline role of an array's `a0.tdb` and that file's first chunk as (metadata,
    data, original length)."""
    doc = formats.open(uri, key=key, tree=False)
    frag = doc.model.fragments[0]
    fm = V._metadata(doc, doc.model, frag)
    role = file_role(fm.schema, fm, "a0.tdb")
    src = doc.open_source(os.path.join(frag.path, "a0.tdb"))
    offs, _ = tile_offsets_for(fm, role)
    orig, filt, md, mdl, data = chunk_table(src, int(offs[0]), int(tile_bounds(offs, src.size)[0]))[0]
    return role, bytes(src.read(md, mdl)), bytes(src.read(data, filt)), orig


def _role_and_chunk(tmp_path, stack: str = "byteshuffle_zstd"):
    """A [BYTESHUFFLE, codec] int64 array tiledb-py wrote: its pipeline role and its first
    chunk as (metadata, shuffle-table part, data part, original length)."""
    role, md, body, orig = _first_chunk(tmp_path, stack, "int64", STACKS[stack]())
    c1 = struct.unpack_from("<I", md, 12)[0]
    return role, md, body[:c1], body[c1:], orig


def _chunk(table: bytes, frame: bytes, orig: int, nmd: int = 1):
    """Metadata and data of a [BYTESHUFFLE, ZSTD] chunk around these two frames."""
    md = struct.pack("<IIIIII", nmd, 1, 8, len(table), orig, len(frame))
    return md, table + frame


def _variants(table: bytes, frame: bytes, orig: int):
    plain = zstandard.ZstdDecompressor().decompress(frame)
    z = zstandard.ZstdCompressor
    half = len(plain) // 2
    return {
        "as written": (_chunk(table, frame, orig), True),
        "no content size": (_chunk(table, z(write_content_size=False).compress(plain), orig), True),
        "with checksum": (_chunk(table, z(write_checksum=True).compress(plain), orig), True),
        "trailing byte": (_chunk(table, frame + b"\0", orig), False),
        "8 zero bytes after": (_chunk(table, frame + bytes(8), orig), False),
        "8 bytes of garbage after": (_chunk(table, frame + b"garbage!", orig), False),
        "a frame of 8 bytes after": (_chunk(table, frame + z().compress(b"x" * 8), orig), False),
        # libtiledb's ZSTD_decompressDCtx reads frames in turn: these read alike
        "an empty frame after": (_chunk(table, frame + z().compress(b""), orig), True),
        "a skippable frame after": (_chunk(table, frame + struct.pack("<II", 0x184D2A50, 3)
                                           + b"abc", orig), True),
        "two frames": (_chunk(table, z().compress(plain[:half]) + z().compress(plain[half:]),
                              orig), True),
        "two unsized frames": (_chunk(table, z(write_content_size=False).compress(plain[:half])
                                      + z(write_content_size=False).compress(plain[half:]),
                                      orig), True),
        "declared too short": (_chunk(table, z().compress(plain[:-8]), orig), False),
        "unsized too long": (_chunk(table, z(write_content_size=False).compress(plain + b"x" * 8),
                                    orig), False),
        "not a frame": (_chunk(table, b"\x01" * len(frame), orig), False),
        "cut frame": (_chunk(table, frame[:-3], orig), False),
        "two metadata parts": (_chunk(table, frame, orig, nmd=2), False),
        "shuffle table says more": (_chunk(z().compress(struct.pack("<II", 1, orig + 8)), frame,
                                           orig), False),
    }


def test_kernel_takes_only_what_the_python_path_decodes_alike(tmp_path):
    """Per variant of one chunk: the kernel decodes it (the same bytes the Python path gives)
    or leaves it, and the Python path refuses what it leaves; it never decodes what the
    Python path would not decode to these bytes."""
    assert compiled._load() is not None
    role, md0, table, frame, orig = _role_and_chunk(tmp_path)
    assert _chunk(table, frame, orig)[0] == md0   # the layout the variants are built on
    kernel = fused.decoder(1)
    for label, ((md, data), taken) in _variants(table, frame, orig).items():
        blob = md + data
        c = (orig, len(data), 0, len(md), len(md))
        out = np.zeros(orig + 16, np.uint8)
        left = fused.decode_chunks(kernel, ZSTD8, blob, [c], [8], out)
        try:
            theirs = decode_chunk(BytesSource(blob, "t"), c, role.specs, role.info, None, 0)[0]
        except TileError:
            theirs = None
        assert (left == []) is taken, label
        assert (theirs is not None) is taken, label
        if taken:
            assert theirs is not None and out[8:8 + orig].tobytes() == bytes(theirs), label
            assert not out[:8].any() and not out[8 + orig:].any(), label   # nothing outside


def test_kernel_refuses_ranges_outside_the_file(tmp_path):
    assert compiled._load() is not None
    _role, _md, table, frame, orig = _role_and_chunk(tmp_path)
    md, data = _chunk(table, frame, orig)
    blob = md + data
    kernel = fused.decoder(1)
    out = np.zeros(orig, np.uint8)
    for c, at in [((orig, len(data), 0, len(md), len(md) + 1), 0),     # data past the end
                  ((orig, len(data), len(blob) - 4, 24, len(md)), 0),   # metadata past it
                  ((orig, len(data), 0, len(md), len(md)), 1)]:         # output past `out`
        assert fused.decode_chunks(kernel, ZSTD8, blob, [c], [at], out) == [0]
    assert not out.any()


CODECS = {"byteshuffle_zstd": native.Codec.ZSTD, "byteshuffle_lz4": native.Codec.LZ4,
          "byteshuffle_bzip2": native.Codec.BZIP2}   # GZIP: no kernel (accel/native.py)


@pytest.mark.parametrize("stack", list(CODECS))
def test_every_codec_takes_only_what_the_python_path_decodes_alike(tmp_path, stack):
    """Per codec, the chunk as written and damaged copies of it: the kernel takes the chunk
    as written, and takes a damaged one only where the Python binding gives the same bytes
    (zlib and bzip2 ignore what follows a complete stream, as their Python decompressors
    do); everything the Python path refuses, the kernel leaves."""
    assert compiled._load() is not None
    role, _md, table, part, orig = _role_and_chunk(tmp_path, stack)
    plan = fused.FusedPlan(CODECS[stack], 1, 8)
    kernel = fused.decoder(1)
    mid = len(part) // 2
    variants = {"as written": (part, orig), "cut": (part[:-1], orig),
                "trailing byte": (part + b"\0", orig), "one byte flipped":
                (part[:mid] + bytes([part[mid] ^ 0x5A]) + part[mid + 1:], orig),
                "says 8 more": (part, orig + 8), "says 8 fewer": (part, orig - 8)}
    taken = {}
    codec = get_filter(role.specs[-1].type)
    for label, (data_part, n) in variants.items():
        # the shuffle's table says n too (compressed by the same codec): only the data part's
        # length disagrees
        md, data = _chunk(table if n == orig else codec.compress(struct.pack("<II", 1, n), 1,
                                                                  role.info), data_part, n)
        blob = md + data
        c = (n, len(data), 0, len(md), len(md))
        out = np.zeros(n + 16, np.uint8)
        left = fused.decode_chunks(kernel, plan, blob, [c], [8], out)
        try:
            theirs = decode_chunk(BytesSource(blob, "t"), c, role.specs, role.info, None, 0)[0]
        except TileError:
            theirs = None
        taken[label] = left == []
        if taken[label]:
            assert theirs is not None and out[8:8 + n].tobytes() == bytes(theirs), label
    assert taken["as written"] and not taken["cut"] and not taken["says 8 more"], taken
    assert not taken["says 8 fewer"], taken


def test_bitshuffle_chunk_of_odd_length_left_to_python(tmp_path, path):
    """BITSHUFFLE chunks that are not a multiple of 8 bytes (tiles of 1 001 int8 cells) are
    left to the Python path, as `batch.reverse_into` leaves them; the bytes still match."""
    name, calls = path
    uri = str(tmp_path / "odd")
    dom = tiledb.Domain(tiledb.Dim("d", domain=(0, 4003), tile=1001, dtype=np.int64))
    tiledb.Array.create(uri, tiledb.ArraySchema(domain=dom, attrs=[tiledb.Attr(
        "a", dtype=np.int8, filters=[tiledb.BitShuffleFilter(), tiledb.ZstdFilter()])]))
    data = (np.arange(4004) % 97).astype(np.int8)
    with tiledb.open(uri, "w") as A:
        A[:] = data
    raw = V.values(formats.open(uri), "a", with_values=False)[0]["raw"]
    assert bytes(raw) == data.tobytes()
    if name == "fused":
        assert sum(left for _, left in calls) == 4, calls   # every tile's one chunk


def _typed_chunk(enc: bytes, orig: int):
    """Metadata and data of a [typed codec, ZSTD] chunk around this encoded part."""
    z = zstandard.ZstdCompressor()
    table = z.compress(struct.pack("<IIII", 0, 1, orig, len(enc)))
    frame = z.compress(enc)
    md = struct.pack("<IIIIII", 1, 1, 16, len(table), len(enc), len(frame))
    return md, table + frame


@pytest.mark.parametrize("stack,typed", [("delta_zstd", 1), ("doubledelta_zstd", 2)])
def test_typed_kernel_takes_only_what_the_python_path_decodes_alike(tmp_path, stack, typed):
    """The encoded part of a tiledb-py chunk and edited copies of it: the kernel takes the
    chunk as written (and the edits the typed codec reads alike: bytes after what it needs),
    and leaves every one the Python path refuses."""
    assert compiled._load() is not None
    role, md, body, orig = _first_chunk(tmp_path, stack, "int64", STACKS[stack]())
    c1 = struct.unpack_from("<I", md, 12)[0]
    enc = zstandard.ZstdDecompressor().decompress(body[c1:])
    head = 8 if typed == 1 else 9
    count = struct.unpack_from("<Q", enc, head - 8)[0]
    variants = {"as written": enc, "8 bytes after": enc + b"\x07" * 8,
                "cut by 8": enc[:-8], "one value more said":
                enc[:head - 8] + struct.pack("<Q", count + 1) + enc[head:],
                "header only": enc[:head]}
    if typed == 2:
        variants["stored raw, bit size 63"] = b"\x3f" + enc[1:9] + bytes(orig)
        variants["stored raw, one byte short"] = b"\x3f" + enc[1:9] + bytes(orig - 1)
    plan = fused.FusedPlan(native.Codec.ZSTD, 0, 8, typed)
    kernel = fused.decoder(1)
    taken = {}
    for label, e in variants.items():
        md_b, data_b = _typed_chunk(e, orig)
        blob = md_b + data_b
        c = (orig, len(data_b), 0, len(md_b), len(md_b))
        out = np.zeros(orig + 16, np.uint8)
        left = fused.decode_chunks(kernel, plan, blob, [c], [8], out)
        try:
            theirs = decode_chunk(BytesSource(blob, "t"), c, role.specs, role.info, None, 0)[0]
        except TileError:
            theirs = None
        taken[label] = left == []
        assert taken[label] == (theirs is not None), (label, taken)
        if theirs is not None:
            assert out[8:8 + orig].tobytes() == bytes(theirs), label
    assert taken["as written"] and taken["8 bytes after"] and not taken["cut by 8"], taken


def test_scaled_kernel_takes_only_what_the_python_path_decodes_alike(tmp_path):
    """[SCALE_FLOAT, XOR, ZSTD] chunks rebuilt around a tiledb-py chunk's data: taken as
    written, left (and refused by the Python path) when a table or the data disagrees."""
    assert compiled._load() is not None
    role, md, body, orig = _first_chunk(tmp_path, "fs", "float32", SCALED["floatscale_xor_zstd"]())
    plan = fused.fused_plan(role.specs, role.info)
    assert plan == fused.FusedPlan(native.Codec.ZSTD, 0, 4, 0, True, (0.5, 0.0, 4))
    c1, c2 = struct.unpack_from("<I", md, 12)[0], struct.unpack_from("<I", md, 20)[0]
    ints = zstandard.ZstdDecompressor().decompress(body[c1 + c2:])
    z = zstandard.ZstdCompressor()

    def chunk(tables, part, size):
        ts = [z.compress(struct.pack("<II", *t)) for t in tables]
        frame = z.compress(part)
        md_b = struct.pack("<II", len(ts), 1) + b"".join(struct.pack("<II", 8, len(t)) for t in ts) \
            + struct.pack("<II", size, len(frame))
        return md_b, b"".join(ts) + frame
    size = len(ints)
    variants = {"as written": chunk([(1, size), (1, size)], ints, size),
                "one table": chunk([(1, size)], ints, size),
                "a table says more": chunk([(1, size), (1, size + 4)], ints, size),
                "two parts in a table": chunk([(2, size), (1, size)], ints, size),
                "data one value short": chunk([(1, size - 4), (1, size - 4)], ints[:-4], size - 4)}
    kernel = fused.decoder(1)
    taken = {}
    for label, (md_b, data_b) in variants.items():
        blob = md_b + data_b
        c = (orig, len(data_b), 0, len(md_b), len(md_b))
        out = np.zeros(orig + 16, np.uint8)
        left = fused.decode_chunks(kernel, plan, blob, [c], [8], out)
        try:
            theirs = decode_chunk(BytesSource(blob, "t"), c, role.specs, role.info, None, 0)[0]
            theirs = theirs if len(theirs) == orig else None   # values checks the length
        except TileError:
            theirs = None
        taken[label] = left == []
        assert taken[label] == (theirs is not None), (label, taken)
        if theirs is not None:
            assert out[8:8 + orig].tobytes() == bytes(theirs), label
    assert taken == {"as written": True, "one table": False, "a table says more": False,
                     "two parts in a table": False, "data one value short": False}


@pytest.mark.parametrize("at", [8, 9])
def test_reduced_kernel_takes_only_what_the_python_path_decodes_alike(tmp_path, at):
    """[BIT_WIDTH_REDUCTION, LZ4] chunks rebuilt from a tiledb-py chunk's window table and
    data, edited: taken exactly where the Python path decodes them, and then alike, into
    whole values (`at` 8); an output whose values are not aligned in memory (`at` 9) is
    left to the Python path whole (a byte loop for it cost every first run more compile
    than it could save: `values` and verify decode into aligned buffers)."""
    assert compiled._load() is not None
    role, md, body, orig = _first_chunk(tmp_path, "bwr", "int32", STACKS["bwr_lz4"]())
    plan = fused.fused_plan(role.specs, role.info)
    assert plan == fused.FusedPlan(native.Codec.LZ4, 0, 4, reduced=True)
    o1, c1, o2, c2 = struct.unpack_from("<IIII", md, 8)
    table = bytearray(lz4.block.decompress(body[:c1], uncompressed_size=o1))
    part = lz4.block.decompress(body[c1:], uncompressed_size=o2)
    nw = struct.unpack_from("<I", table, 4)[0]
    assert nw > 2 and o1 == 8 + nw * 9

    def chunk(t: bytes, d: bytes):
        ct, cd = lz4.block.compress(bytes(t), store_size=False), lz4.block.compress(d, store_size=False)
        return struct.pack("<IIIIII", 1, 1, len(t), len(ct), len(d), len(cd)), ct + cd

    def edit(at: int, value: bytes) -> bytearray:
        t = bytearray(table)
        t[at:at + len(value)] = value
        return t
    w1 = 8 + 9   # the second window's record: offset (4), bit width (1), length (4)
    variants = {"as written": chunk(table, part),
                "bit width 7": chunk(edit(w1 + 4, b"\x07"), part),
                "bit width 64 (stored as it is)": chunk(edit(w1 + 4, b"\x40"), part),
                "offset changed": chunk(edit(w1, b"\x05\x00\x00\x80"), part),
                "length of input off": chunk(edit(0, struct.pack("<I", orig - 4)), part),
                "one window fewer": chunk(edit(4, struct.pack("<I", nw - 1))[:-9], part),
                "data short": chunk(table, part[:-1]),
                "every value negative (sign-extended)": chunk(table, b"\xff" * len(part)),
                "table with bytes after": chunk(table + b"\0" * 4, part)}
    kernel = fused.decoder(1)
    taken = {}
    for label, (md_b, data_b) in variants.items():
        blob = md_b + data_b
        c = (orig, len(data_b), 0, len(md_b), len(md_b))
        out = np.zeros(orig + 16, np.uint8)
        left = fused.decode_chunks(kernel, plan, blob, [c], [at], out)
        try:
            theirs = decode_chunk(BytesSource(blob, "t"), c, role.specs, role.info, None, 0)[0]
            theirs = theirs if len(theirs) == orig else None   # values checks the length
        except TileError:
            theirs = None
        taken[label] = left == []
        if at % 4:   # not aligned: every chunk left to the Python path
            assert not taken[label], label
            continue
        if label != "table with bytes after":   # left to the Python path whatever it says
            assert taken[label] == (theirs is not None), (label, taken)
        if taken[label]:
            assert out[at:at + orig].tobytes() == bytes(theirs), label
    if at % 4:
        return
    assert taken["as written"] and taken["offset changed"] and not taken["bit width 7"], taken
    assert taken["every value negative (sign-extended)"], taken
    assert not taken["table with bytes after"], taken


@pytest.mark.parametrize("stack", ["zstd", "byteshuffle_lz4", "doubledelta_zstd"])
def test_encrypted_chunks_decompressed_by_the_kernel(tmp_path, path, stack):
    """Encrypted arrays: each group of decrypted chunks goes through the kernel in one call
    (`direct._fused`), bit for bit with tiledb-py."""
    name, calls = path
    uri = str(tmp_path / stack)
    data = _write_encrypted(uri, STACKS[stack]())
    e = V.values(formats.open(uri, key=KEY.encode()), "a", KEY.encode(), with_values=False)[0]
    assert not e.get("error"), e.get("error")
    assert bytes(e["raw"]) == data.tobytes() == _theirs(uri, KEY)["a"].tobytes()
    if name == "fused":
        assert sum(n for n, _ in calls) >= 3 and all(left == 0 for _, left in calls), calls


@pytest.mark.parametrize("stack", ["byteshuffle_zstd", "bitshuffle_lz4", "doubledelta_zstd",
                                   "bwr_lz4", "gzip", "bzip2"])
def test_flipped_bytes_give_the_same_result_on_both_paths(tmp_path, monkeypatch, stack):
    """Bytes of the data file flipped one at a time (seeded): the fused kernel and the
    Python path give the same cells or the same error, every time."""
    assert compiled._load() is not None
    uri = str(tmp_path / stack)
    _write(uri, "int32", STACKS[stack](), n=60_000)
    p = _data_file(uri)
    clean = open(p, "rb").read()
    clean_cells = bytes(V.values(formats.open(uri), "a", with_values=False)[0]["raw"])
    rng = np.random.default_rng(len(stack))
    real = fused.decoder
    differing = 0
    for at in rng.integers(0, len(clean), 30):
        raw = bytearray(clean)
        raw[int(at)] ^= 1 << int(rng.integers(0, 8))
        with open(p, "wb") as fh:
            fh.write(raw)
        got = []
        for on in (True, False):
            monkeypatch.setattr(fused, "decoder", real if on else (lambda nbytes, specs=None: None))
            e = V.values(formats.open(uri), "a", with_values=False)[0]
            got.append((e.get("error"), bytes(e["raw"]) if not e.get("error") else None))
        assert got[0] == got[1], (int(at), got[0][0], got[1][0])
        differing += got[0][1] != clean_cells
    assert differing >= 5, differing   # most flips change what is read (or make an error)


def test_small_fragments_packed_into_one_call(tmp_path, path):
    """Twelve one-chunk fragments: their chunks decoded by one kernel call (packed end to
    end), each fragment's cells where they belong; a damaged one reported for that fragment
    alone, the same on both paths."""
    name, calls = path
    uri = str(tmp_path / "small")
    theirs = _write(uri, "int64", STACKS["byteshuffle_zstd"](), n=12_000, frags=12, tile=1000)
    entries = V.values(formats.open(uri), "a", with_values=False)
    assert b"".join(bytes(e["raw"]) for e in entries) == theirs.tobytes()
    if name == "fused":
        assert calls == [(12, 0)], calls
    frag = formats.open(uri).model.fragments[4]
    p = os.path.join(frag.path, "a0.tdb")
    raw = bytearray(open(p, "rb").read())
    c2 = struct.unpack_from("<I", raw, 8 + 12 + 20)[0]
    struct.pack_into("<I", raw, 8 + 12 + 20, c2 + 1)   # the data part said one byte longer
    with open(p, "wb") as fh:
        fh.write(raw)
    calls.clear()
    entries = V.values(formats.open(uri), "a", with_values=False)
    errors = {e["name"]: e.get("error") for e in entries}
    bad = errors.pop(os.path.basename(frag.path))
    assert bad and bad.startswith("a0.tdb: tile 1: chunk 1:"), bad
    assert list(errors.values()) == [None] * 11, errors
    if name == "fused":
        assert calls == [(12, 1)], calls
