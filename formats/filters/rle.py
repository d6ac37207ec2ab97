"""RLE (4).

Fixed-size data (rle_compressor.cc), in the compression framing: runs of
`[cell bytes][u16 big-endian run length]`, the cell being TileDB's tile cell size
(`cell_val_num` values; 8 for offsets, 1 for validity); runs stop at 65535.

Var-sized ASCII/UTF-8 strings (`strings.py`): runs of
`[run length][string length][string]`, both lengths big-endian with the byte sizes the
metadata gives (the smallest of 1/2/4/8 holding the longest run and the longest string)."""
from __future__ import annotations

from typing import Optional

import numpy as np

from ..core.cursor import Cursor
from ..core.fielddoc import doc
from .base import DataInfo, FilterError, FilterSpec, RunContext, Stage
from .compression import CompressionFilter, compressor_options
from .enums import Compressor, FilterType
from .strings import applies, header, parse_header, read_header, rle_decode, rle_encode
from .util import data_of, u8

D_RLE_BYTES = doc("Run length byte size: bytes of each run length in the encoded data "
                  "(1, 2, 4 or 8, big-endian)", spec="compression_filter.cc (RLE strings)")
D_STRLEN_BYTES = doc("String length byte size: bytes of each string length in the encoded "
                     "data (1, 2, 4 or 8, big-endian)", spec="compression_filter.cc (RLE strings)")
MAX_RUN = 65535


class Rle(CompressionFilter):
    type = FilterType.RLE
    options = compressor_options(Compressor.RLE)
    deterministic = True

    # ---- fixed-size cells -----------------------------------------------------------------
    def compress_part(self, data: bytes, spec: FilterSpec, info: DataInfo,
                      run: Optional[RunContext] = None) -> bytes:
        vs = info.cell_size
        if len(data) % vs:
            raise FilterError(f"RLE: {len(data)} bytes are not whole cells of {vs} bytes; the "
                              f"writer refuses them ('invalid input buffer format')")
        n = len(data) // vs
        if n == 0:
            return b""
        rows = u8(data).reshape(n, vs)
        same = np.concatenate([[False], (rows[1:] == rows[:-1]).all(axis=1)])
        start = np.flatnonzero(~same)
        length = np.diff(np.append(start, n))
        pieces = -(-length // MAX_RUN)
        plen = np.full(int(pieces.sum()), MAX_RUN, dtype=np.int64)
        plen[np.cumsum(pieces) - 1] = length - MAX_RUN * (pieces - 1)
        out = np.empty((len(plen), vs + 2), dtype=np.uint8)
        out[:, :vs] = np.repeat(rows[start], pieces, axis=0)
        out[:, vs] = plen >> 8
        out[:, vs + 1] = plen & 0xFF
        return out.tobytes()

    def decompress_part(self, data: bytes | memoryview, original: int, spec: FilterSpec,
                        info: DataInfo) -> bytes:
        vs = info.cell_size
        if len(data) % (vs + 2):
            raise FilterError(f"RLE: {len(data)} bytes are not whole runs of {vs}+2 bytes")
        runs = u8(data).reshape(-1, vs + 2)
        length = runs[:, vs].astype(np.int64) * 256 + runs[:, vs + 1]
        total = int(length.sum()) * vs
        if total != original:
            raise FilterError(f"RLE: runs expand to {total} bytes, the part is {original}")
        return np.repeat(runs[:, :vs], length, axis=0).tobytes()

    # ---- var-sized strings ----------------------------------------------------------------
    def parse_metadata(self, spec: FilterSpec, cur: Cursor, info: DataInfo) -> None:
        run = RunContext() if info.format_version is None else \
            RunContext(format_version=info.format_version)
        if not applies("rle", info, run):
            return super().parse_metadata(spec, cur, info)
        parse_header(cur)
        cur.u8("Run length byte size", D_RLE_BYTES)
        cur.u8("String length byte size", D_STRLEN_BYTES)

    def reverse(self, spec, stage: Stage, info: DataInfo, run: RunContext) -> Stage:
        if not applies("rle", info, run):
            return super().reverse(spec, stage, info, run)
        r, usize, csize, osize = read_header(stage, spec.name, run)
        a, b = r.u8("Run length byte size"), r.u8("String length byte size")
        if a not in (1, 2, 4, 8) or b not in (1, 2, 4, 8):
            raise FilterError(f"RLE: byte sizes {a}/{b} must each be 1, 2, 4 or 8", 20)
        data = data_of(stage)
        if csize != len(data):
            raise FilterError(f"RLE: compressed size {csize}, the data has {len(data)} bytes", 12)
        cells, offsets = rle_decode(data, a, b, spec.name, usize, osize // 8, run)
        return Stage([r.rest()] if r.remaining else [], [cells], offsets)

    def forward(self, spec, stage: Stage, info: DataInfo, run: RunContext) -> Stage:
        if not applies("rle", info, run):
            return super().forward(spec, stage, info, run)
        if run.offsets is None:
            raise FilterError("RLE on var-sized strings encodes the cell offsets: pass them "
                              "(RunContext.offsets)")
        data = data_of(stage)
        enc, a, b, n = rle_encode(data, run.offsets)
        return Stage([header(len(data), len(enc), n) + bytes([a, b])], [enc])
