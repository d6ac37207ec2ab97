"""Bytes a chunk carries beyond what its filters read, on bytes tiledb-py 0.36.1 wrote and
then edited (every length libtiledb records kept: the part is re-compressed, same cells,
to make room): arrayscope reads each as libtiledb 2.30 does — tiledb-py itself is asked
here — on the fused kernel path and on the Python path (`ARRAYSCOPE_NO_JIT=1`) alike.

- chunk metadata after the compressor's table: libtiledb ignores it (the cells decode
  alike); `verify` warns (`chunk-metadata-unread`: no writer leaves any);
- ZSTD: the whole part through ZSTD_decompressDCtx: garbage, zeros or a frame of more
  cells after the frame are refused, an empty or skippable frame reads alike;
- GZIP / BZIP2: the stream must end in the part, what follows its end is ignored;
- LZ4: a block reads to the part's end, so anything after it is refused."""
from __future__ import annotations

import bz2
import glob
import os
import shutil
import struct
import zlib

import lz4.block
import numpy as np
import pytest
import tiledb
import zstandard

from arrayscope import formats
from arrayscope.formats.core import compiled
from arrayscope.formats.core.findings import CHUNK_DECODE, CHUNK_METADATA_UNREAD, TILE_STAT
from arrayscope.formats.core.verify import open_for_verify, verify_report
from arrayscope.formats.filters import fused
from arrayscope.formats.tiledb.values import field_values as V

N = 8192   # int64 cells: one tile, one chunk of 64 KiB
CELLS = np.cumsum(np.random.default_rng(3).integers(-3, 9, N)).astype(np.int64)
# where the chunk's parts are in a0.tdb: u64 chunk count, the chunk header (u32 original,
# filtered and metadata lengths), the compressor's table (counts 0 and 1, the part's two
# lengths), the part
MD_AT, DATA_AT = 8 + 12, 8 + 12 + 16

FILTERS = {"zstd": tiledb.ZstdFilter, "gzip": tiledb.GzipFilter, "lz4": tiledb.LZ4Filter,
           "bzip2": tiledb.Bzip2Filter}
# the same cells compressed smaller than tiledb-py did (room for the edits); bzip2 gives
# the same stream at every level, so its edits store other cells (every 64th changes)
SMALLER = {"zstd": lambda p: zstandard.ZstdCompressor(level=19).compress(p),
           "gzip": lambda p: zlib.compress(p, 9),
           "lz4": lambda p: lz4.block.compress(p, store_size=False, mode="high_compression",
                                               compression=12),
           "bzip2": lambda p: bz2.compress(p, 9)}
OTHER_CELLS = (np.arange(N, dtype=np.int64) // 64)


@pytest.fixture(scope="module")
def written(tmp_path_factory):
    """One array per codec as tiledb-py writes it."""
    root = tmp_path_factory.mktemp("trailing")
    out = {}
    for name, f in FILTERS.items():
        uri = str(root / name)
        dom = tiledb.Domain(tiledb.Dim("d", domain=(0, N - 1), tile=N, dtype=np.int64))
        tiledb.Array.create(uri, tiledb.ArraySchema(domain=dom, attrs=[
            tiledb.Attr("a", dtype=np.int64, filters=[f()])]))
        with tiledb.open(uri, "w") as A:
            A[:] = CELLS
        out[name] = uri
    return out


def _data_file(uri: str) -> str:
    return glob.glob(os.path.join(uri, "__fragments", "*", "a0.tdb"))[0]


def _edited(written, tmp_path, codec: str, edit) -> str:
    """A copy of the codec's array whose chunk is `edit(part, cells bytes)` -> (metadata
    bytes after the table, part); the file keeps its size, the table says the part's new
    length."""
    uri = str(tmp_path / codec)
    shutil.copytree(written[codec], uri)
    p = _data_file(uri)
    raw = bytearray(open(p, "rb").read())
    orig, filt, mdl = struct.unpack_from("<III", raw, 8)
    assert (orig, mdl) == (8 * N, 16) and len(raw) == DATA_AT + filt
    extra, part = edit(bytes(raw[DATA_AT:]))
    md = struct.pack("<IIII", 0, 1, orig, len(part)) + extra
    assert len(md) + len(part) == 16 + filt, "the edit keeps the chunk's size"
    raw[8:] = struct.pack("<III", orig, len(part), len(md)) + md + part
    open(p, "wb").write(bytes(raw))
    return uri


def _room(codec: str, part: bytes, cells: np.ndarray = CELLS) -> bytes:
    small = SMALLER[codec](cells.tobytes())
    assert len(small) < len(part), "no room for the edit"
    return small


def _theirs(uri: str):
    """What tiledb-py reads: the cells, or its error."""
    try:
        with tiledb.open(uri) as A:
            return A[:]["a"]
    except tiledb.TileDBError as e:
        return str(e)


@pytest.fixture
def both(jit, monkeypatch):
    """The `jit` fixture's path; on the compiled one, the fused kernel's calls as (chunks
    given, chunks left)."""
    calls: list = []
    if jit == "jit":
        assert compiled._load() is not None and fused.decoder(1) is not None
        real = fused.decode_chunks

        def spy(*a):
            left = real(*a)
            calls.append((len(a[3]), len(left)))
            return left
        monkeypatch.setattr(fused, "decode_chunks", spy)
    return jit, calls


def _ours(uri: str, calls: list):
    """(values entry, verify findings) of arrayscope; `calls` keeps the kernel calls of
    `values` only (verify's own are of the fragment metadata too)."""
    entry = V.values(formats.open(uri), "a", with_values=False)[0]
    mine = list(calls)
    found = verify_report(open_for_verify(uri)).findings
    calls[:] = mine
    return entry, found


def _frag_file(uri: str) -> str:
    return os.path.relpath(_data_file(uri), uri)


def _chunk_node(uri: str, part: str) -> str:
    """The node path of `part` of the data file's one chunk (a finding's `node`)."""
    return f"{os.path.basename(uri)}/{_frag_file(uri)}/Tile 1/Chunk 1/{part}"


# ---- chunk metadata after the table ----------------------------------------------------
@pytest.mark.parametrize("codec", ["zstd", "gzip", "lz4"])
def test_metadata_after_the_table_reads_alike_and_is_a_warning(written, tmp_path, both, codec):
    jit, calls = both
    extra = {}

    def edit(part):
        small = _room(codec, part)
        extra["n"] = len(part) - len(small)
        return b"\xab" * extra["n"], small
    uri = _edited(written, tmp_path, codec, edit)
    theirs = _theirs(uri)
    assert isinstance(theirs, np.ndarray) and np.array_equal(theirs, CELLS)   # libtiledb
    entry, found = _ours(uri, calls)
    assert "error" not in entry and bytes(entry["raw"]) == CELLS.tobytes()
    if jit == "jit" and _has_kernel(uri):
        assert calls == [(1, 0)], calls     # the kernel decoded the chunk, as Python does
    n = extra["n"]
    assert [(f.status, f.code, f.source, f.offset, f.node, f.message) for f in found] == [
        ("warning", CHUNK_METADATA_UNREAD, _frag_file(uri), MD_AT + 16,
         _chunk_node(uri, "Chunk metadata/unparsed"),
         f"chunk 1: {n} bytes of chunk metadata after the 16 its filters read; libtiledb "
         f"ignores them on read (the cells decode alike) and never writes any")]


# ---- ZSTD: the whole part, frame after frame --------------------------------------------
def _garbage(n: int) -> bytes:
    return bytes((i * 37 + 11) % 256 for i in range(n))


def _frame_of(n: int) -> bytes:
    """A frame of exactly `n` bytes (incompressible cells, sized to fit)."""
    for k in range(n, 0, -1):
        f = zstandard.ZstdCompressor(level=1).compress(_garbage(k))
        if len(f) == n:
            return f
    raise AssertionError(n)


ZSTD_AFTER = {   # name -> (what follows the frame in `room` bytes, libtiledb's verdict)
    "garbage": (_garbage, "Src size is incorrect"),
    "zeros": (lambda room: bytes(room), "Src size is incorrect"),
    "a frame of more cells": (_frame_of, "Destination buffer is too small"),
    "an empty frame": (lambda room: zstandard.ZstdCompressor().compress(b""), None),
    "a skippable frame": (lambda room: struct.pack("<II", 0x184D2A50, room - 8)
                          + _garbage(room - 8), None),
}


def _edit_after(codec: str, make, got: dict, cells: np.ndarray = CELLS):
    """An edit: the part re-compressed smaller, then `make(room)`; the room it leaves goes
    after the table (a warning of its own when not empty)."""
    def edit(part):
        small = _room(codec, part, cells)
        tail = make(len(part) - len(small))
        got.update(stream=len(small), tail=len(tail), part=len(small) + len(tail),
                   pad=len(part) - len(small) - len(tail))
        return bytes(got["pad"]), small + tail
    return edit


def _has_kernel(uri: str) -> bool:
    """GZIP chunks have no compiled kernel (accel/native.py): the Python path decodes them."""
    return os.path.basename(uri) != "gzip"


def _decoded_alike(uri, theirs, entry, found, jit, calls, cells=CELLS, also=()):
    """tiledb-py and arrayscope (both paths) read `cells`; verify finds only `also` (and
    the padding after the table when there is some)."""
    assert isinstance(theirs, np.ndarray) and np.array_equal(theirs, cells)
    assert "error" not in entry and bytes(entry["raw"]) == cells.tobytes()
    assert {f.code for f in found} - {CHUNK_METADATA_UNREAD} == set(also), found
    if jit == "jit" and _has_kernel(uri):
        assert calls == [(1, 0)], calls


def _refused(uri, entry, found, jit, calls, codec: str, why: str, got: dict):
    """arrayscope refuses the chunk on both paths with `why`, located at the part."""
    assert entry.get("error") == f"a0.tdb: tile 1: chunk 1: {why}", entry.get("error")
    assert [(f.status, f.code, f.source, f.offset, f.node, f.message) for f in found] == [
        ("error", CHUNK_DECODE, _frag_file(uri), DATA_AT + got["pad"],
         _chunk_node(uri, "Chunk filtered data"),
         f"chunk 1: reversing {codec} failed: {why}")]
    if jit == "jit" and _has_kernel(uri):
        assert calls == [(1, 1)], calls     # left to the Python path, which says why


@pytest.mark.parametrize("after", list(ZSTD_AFTER))
def test_zstd_bytes_after_the_frame(written, tmp_path, both, after):
    jit, calls = both
    make, refused = ZSTD_AFTER[after]
    got: dict = {}
    uri = _edited(written, tmp_path, "zstd", _edit_after("zstd", make, got))
    theirs = _theirs(uri)
    entry, found = _ours(uri, calls)
    if refused is None:
        _decoded_alike(uri, theirs, entry, found, jit, calls)
        return
    assert isinstance(theirs, str) and f"ZStd decompression failed: {refused}" in theirs
    if after == "a frame of more cells":
        more = len(zstandard.ZstdDecompressor().decompress(_frame_of(got["tail"])))
        why = f"ZSTD: the 2 frames hold {8 * N + more} bytes, the part {8 * N} (libzstd: {refused})"
    else:
        why = (f"ZSTD: {got['tail']} bytes after the frame ({got['stream']} of the part's "
               f"{got['part']} bytes) are not a zstd frame; libtiledb decompresses the whole "
               f"part and refuses it (libzstd: {refused})")
    _refused(uri, entry, found, jit, calls, "ZSTD", why, got)


# ---- GZIP and BZIP2: the stream must end; what follows its end is ignored ---------------
def _stream_of(codec: str) -> bytes:
    """A second, short, stream (the room it leaves goes after the table)."""
    return zlib.compress(b"x", 9) if codec == "gzip" else bz2.compress(b"x", 1)


STREAM_AFTER = {"garbage": _garbage, "zeros": lambda room: bytes(room),
                "a second stream": None}


@pytest.mark.parametrize("codec", ["gzip", "bzip2"])
@pytest.mark.parametrize("after", list(STREAM_AFTER))
def test_stream_codecs_ignore_what_follows_the_end(written, tmp_path, both, codec, after):
    """(bzip2 re-compresses to the same length: its edits store other cells, which the
    fragment's tile statistics then disagree with — found as such, nothing else.)"""
    jit, calls = both
    make = STREAM_AFTER[after] or (lambda room: _stream_of(codec))
    cells = OTHER_CELLS if codec == "bzip2" else CELLS
    got: dict = {}
    uri = _edited(written, tmp_path, codec, _edit_after(codec, make, got, cells))
    assert got["tail"] > 0
    entry, found = _ours(uri, calls)
    _decoded_alike(uri, _theirs(uri), entry, found, jit, calls, cells,
                   also={TILE_STAT} if codec == "bzip2" else ())


@pytest.mark.parametrize("codec", ["gzip", "bzip2"])
def test_stream_cut_before_its_end_is_refused(written, tmp_path, both, codec):
    """The stream's last 4 bytes (its checksum) cut: every cell is still in it, but libtiledb
    needs the end of the stream."""
    jit, calls = both
    cells = OTHER_CELLS if codec == "bzip2" else CELLS
    got: dict = {}

    def edit(part):
        small = _room(codec, part, cells)[:-4]
        got.update(pad=len(part) - len(small), part=len(small))
        return bytes(got["pad"]), small
    uri = _edited(written, tmp_path, codec, edit)
    theirs = _theirs(uri)
    assert isinstance(theirs, str) and {"gzip": "Cannot decompress with GZIP, Stream Error",
                                        "bzip2": "BZip decompression error"}[codec] in theirs
    entry, found = _ours(uri, calls)
    name = {"gzip": "GZIP", "bzip2": "BZIP2"}[codec]
    stream = "the zlib stream" if codec == "gzip" else "the stream"
    why = (f"{name}: {stream} does not end within the part's {got['part']} bytes "
           f"({8 * N} bytes decoded, no end of stream and checksum after them); libtiledb "
           f"refuses it")
    _refused(uri, entry, found, jit, calls, name, why, got)


# ---- LZ4: a block reads to the part's end ----------------------------------------------
@pytest.mark.parametrize("after", ["garbage", "zeros"])
def test_lz4_bytes_after_the_block_are_refused(written, tmp_path, both, after):
    jit, calls = both
    got: dict = {}
    uri = _edited(written, tmp_path, "lz4", _edit_after("lz4", STREAM_AFTER[after], got))
    theirs = _theirs(uri)
    assert isinstance(theirs, str) and "LZ4 decompression failed" in theirs
    entry, found = _ours(uri, calls)
    assert entry.get("error", "").startswith("a0.tdb: tile 1: chunk 1: LZ4 part 1: cannot "
                                             "decompress: "), entry
    assert [(f.status, f.code, f.source, f.offset) for f in found] == [
        ("error", CHUNK_DECODE, _frag_file(uri), DATA_AT + got["pad"])]
    assert found[0].message.startswith("chunk 1: reversing LZ4 failed: LZ4 part 1: ")
    if jit == "jit":
        assert calls == [(1, 1)], calls
