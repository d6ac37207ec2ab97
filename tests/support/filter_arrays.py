"""Helpers for the filter tests (no tests here): write small TileDB arrays with tiledb-py,
walk their data files tile by tile, and check arrayscope's filters against them."""
from __future__ import annotations

import glob
import os
from typing import Dict, Iterable, List, Optional, Tuple

import numpy as np
import tiledb

from arrayscope.formats.core.source import BytesSource
from arrayscope.formats.filters import DataInfo, FilterSpec, RunContext, reverse_chunk
from arrayscope.formats.tiledb.parse.rawtile import chunk_table
from arrayscope.formats.tiledb.parse.tile_layout import CHUNK_HEADER, NUM_CHUNKS
from arrayscope.formats.tiledb.verify.forward_check import RE_ENCODED, check_forward

KEY = b"0123456789abcdeF0123456789abcdeF"  # 32 bytes: AES-256
VAR_NUM = 0xFFFFFFFF

DATATYPE = {
    np.dtype("int8"): 5, np.dtype("uint8"): 6, np.dtype("int16"): 7, np.dtype("uint16"): 8,
    np.dtype("int32"): 0, np.dtype("uint32"): 9, np.dtype("int64"): 1, np.dtype("uint64"): 10,
    np.dtype("float32"): 2, np.dtype("float64"): 3, np.dtype("bool"): 41,
    np.dtype("M8[D]"): 21, np.dtype("M8[s]"): 24, np.dtype("M8[ns]"): 27,
    np.dtype("m8[ms]"): 34, np.dtype("S1"): 4,
}
FILTER_TYPE = {
    "GzipFilter": 1, "ZstdFilter": 2, "LZ4Filter": 3, "RleFilter": 4, "Bzip2Filter": 5,
    "DoubleDeltaFilter": 6, "BitWidthReductionFilter": 7, "BitShuffleFilter": 8,
    "ByteShuffleFilter": 9, "PositiveDeltaFilter": 10, "ChecksumMD5Filter": 12,
    "ChecksumSHA256Filter": 13, "DictionaryFilter": 14, "FloatScaleFilter": 15,
    "XORFilter": 16, "DeltaFilter": 19,
}
COMPRESSORS = {1, 2, 3, 5}  # library codecs: re-encoding may differ by library version
REPRODUCIBLE_CODECS = {1, 2, 5}  # zlib, zstd and bzip2 of this environment match libtiledb's


def spec_of(f) -> FilterSpec:
    """The FilterSpec of a tiledb-py filter object, as arrayscope reads it from a schema."""
    t = FILTER_TYPE[type(f).__name__]
    o: Dict[str, object] = {}
    if hasattr(f, "level"):
        o["level"] = f.level
    if t in (7, 10):
        o["max_window"] = f.window
    if t == 15:
        o.update(scale=f.factor, offset=f.offset, byte_width=f.bytewidth)
    if t in (6, 19):
        r = f.reinterp_dtype
        o["reinterpret"] = 17 if r is None else DATATYPE[np.dtype(r)]
    return FilterSpec(t, o)


def walk(path: str) -> List[List[Tuple[int, bytes, bytes]]]:
    """The tiles of a data file: per tile, its chunks as (original length, md, data)."""
    with open(path, "rb") as fh:
        b = fh.read()
    return [chunks for _start, _end, chunks in tiles(b)]


def tiles(b: bytes) -> List[Tuple[int, int, List[Tuple[int, bytes, bytes]]]]:
    """(start, end, chunks) of each tile of a data file's bytes, read by `rawtile.chunk_table`
    (tiles back to back: each ends with its last chunk's data)."""
    src = BytesSource(b, "data file")
    pos, out = 0, []
    while pos < len(b):
        table = chunk_table(src, pos, len(b))
        end = table[-1][4] + table[-1][1] if table else pos + NUM_CHUNKS.size
        out.append((pos, end, [(o, b[mo:mo + ml], b[d:d + f]) for o, f, mo, ml, d in table]))
        pos = end
    return out


def encode_tile(chunks: Iterable[Tuple[int, bytes, bytes]]) -> bytes:
    """The bytes of a tile of `(original length, chunk metadata, filtered data)` chunks,
    written from the same records `tile.py` annotates and `rawtile.py` decodes."""
    chunks = list(chunks)
    out = [NUM_CHUNKS.pack(len(chunks))]
    for orig, md, data in chunks:
        out += [CHUNK_HEADER.pack(orig, len(data), len(md)), md, data]
    return b"".join(out)


def fragment_files(uri: str) -> Dict[str, str]:
    (frag,) = glob.glob(os.path.join(uri, "__fragments", "*"))
    return {os.path.basename(p): p for p in glob.glob(os.path.join(frag, "*.tdb"))}


def ctx_for(key: Optional[bytes]):
    if key is None:
        return None
    return tiledb.Ctx({"sm.encryption_type": "AES_256_GCM",
                       "sm.encryption_key": key.decode()})


def write_dense(uri: str, data, filters, dtype=None, tile: Optional[int] = None,
                var: bool = False, nullable: bool = False, offsets_filters=None,
                validity_filters=None, key: Optional[bytes] = None) -> Dict[str, str]:
    """A 1-d dense array with one attribute `a`, written whole; its fragment's files."""
    ctx = ctx_for(key)
    n = len(data)
    dom = tiledb.Domain(tiledb.Dim("d", domain=(0, n - 1), tile=tile or n, dtype=np.uint64),
                        ctx=ctx)
    attr = tiledb.Attr("a", dtype=dtype if dtype is not None else data.dtype, var=var,
                       nullable=nullable, filters=tiledb.FilterList(filters), ctx=ctx)
    kw = {}
    if offsets_filters is not None:
        kw["offsets_filters"] = tiledb.FilterList(offsets_filters)
    if validity_filters is not None:
        kw["validity_filters"] = tiledb.FilterList(validity_filters)
    schema = tiledb.ArraySchema(domain=dom, attrs=[attr], sparse=False, ctx=ctx, **kw)
    tiledb.Array.create(uri, schema, ctx=ctx)
    with tiledb.open(uri, "w", ctx=ctx) as arr:
        arr[:] = data
    return fragment_files(uri)


def read_back(uri: str, key: Optional[bytes] = None):
    with tiledb.open(uri, ctx=ctx_for(key)) as arr:
        return arr[:]["a"]


class Result:
    """What checking one data file found."""

    def __init__(self):
        self.cells: List[bytes] = []
        self.offsets: List[bytes] = []
        self.chunks = 0
        self.forward_checked = 0
        self.forward_mismatch: List[str] = []


def check_file(path: str, specs: List[FilterSpec], info: DataInfo,
               key: Optional[bytes] = None, forward: bool = True,
               strict_forward: bool = True) -> Result:
    """Reverse every chunk (must succeed and give the declared length), then apply the
    filters forward from the cells: every deterministic stage must reproduce the stored
    stage bytes (uninitialised writer bytes aside); library codecs must at least decode."""
    res = Result()
    pipeline = specs + ([FilterSpec(11)] if key else [])
    for tile in walk(path):
        for orig, md, data in tile:
            res.chunks += 1
            run = RunContext(key, orig)
            r = reverse_chunk(pipeline, md, data, info, run)
            assert r.error is None, f"{path}: chunk {res.chunks}: {r.error}"
            assert len(r.cells) == orig
            res.cells.append(r.cells)
            if r.offsets is not None:
                res.offsets.append(r.offsets)
            if not forward:
                continue
            checks = check_forward(pipeline, r.stages, info,
                                   RunContext(key, orig, offsets=r.offsets))
            for c in checks:
                t = pipeline[c.k].type
                reproducible = t in REPRODUCIBLE_CODECS and c.status == RE_ENCODED
                if not c.ok or reproducible:
                    res.forward_mismatch.append(f"chunk {res.chunks}: {c.message}")
                elif c.status != RE_ENCODED:
                    res.forward_checked += 1
    if strict_forward:
        assert not res.forward_mismatch, res.forward_mismatch
    return res


def attr_info(dtype_code: int, cell_val_num: int = 1, var: bool = False) -> DataInfo:
    return DataInfo(dtype_code, VAR_NUM if var else cell_val_num, "attribute", var)


OFFSETS_INFO = DataInfo(10, 1, "offsets", False)
VALIDITY_INFO = DataInfo(6, 1, "validity", False)


def split_cells(data: bytes, offsets: bytes) -> List[bytes]:
    off = np.frombuffer(offsets, dtype="<u8").astype(np.int64).tolist() + [len(data)]
    return [data[a:b] for a, b in zip(off[:-1], off[1:])]
