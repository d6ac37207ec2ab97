"""Var-sized ASCII/UTF-8 string tiles as RLE and DICTIONARY encode them.

From format 12 (ASCII, RLE) / 13 (ASCII, DICTIONARY) / 17 (UTF-8) the writer filters such
a tile whole (no chunking) and the encoding carries the cell boundaries: the offsets tile is
written with 0 chunks, and the reader rebuilds the offsets while decoding. The first filter's
metadata is then (compression_filter.cc, `compress_var_string_coords`):
`u32 0 (metadata parts), u32 1 (data parts), u32 uncompressed size, u32 compressed size,
u32 uncompressed offsets size (8 × cells)`, then the encoding's own fields. Every
multi-byte integer inside the encoded data and the dictionary is big-endian."""
from __future__ import annotations

from typing import Tuple

import numpy as np

from ..core.cursor import Cursor
from ..core.fielddoc import doc
from ..core.record import Field, Record
from .base import DataInfo, FilterError, RunContext, Stage
from .bits import chain
from .util import MetaReader, check_size, ints_be, read_be, segment_index, u8

D_NMD = doc("Number of metadata parts (always 0: earlier metadata is not kept, as RLE / "
            "DICTIONARY must be the first filter of a string pipeline)",
            spec="compression_filter.cc: compress_var_string_coords")
D_NDATA = doc("Number of data parts (always 1)")
D_USIZE = doc("Uncompressed size: bytes of the string data (the var tile)")
D_CSIZE = doc("Compressed size: bytes of the encoded data that follow in the chunk data")
D_OSIZE = doc("Uncompressed offsets size: bytes of the tile's u64 cell offsets (8 per "
              "cell), which decoding rebuilds; the offsets tile itself is written empty")
HEADER = Record(Field("Number of metadata parts", "u32", D_NMD),
                Field("Number of data parts", "u32", D_NDATA),
                Field("Uncompressed size", "u32", D_USIZE),
                Field("Compressed size", "u32", D_CSIZE),
                Field("Uncompressed offsets size", "u32", D_OSIZE))
STRING_VERSIONS = {"rle": {11: 12, 12: 17}, "dictionary": {11: 13, 12: 17}}


def applies(kind: str, info: DataInfo, run: RunContext) -> bool:
    """The string path is taken for var ASCII/UTF-8 data in a new enough format: the format
    of the fragment that wrote the tile (`DataInfo.format_version`, carried into `run`).
    Before it, RLE is the plain byte RLE over the var data and the offsets tile is a normal
    one (format 16 / libtiledb 2.13 bytes, UTF-8 + RLE: tests/data/tiledb_versions)."""
    if not info.var_strings:
        return False
    return run.format_version >= STRING_VERSIONS[kind].get(info.base_datatype, 10 ** 6)


def compute_bytesize(n: int) -> int:
    """The smallest of 1, 2, 4, 8 bytes that holds n."""
    return 1 if n <= 0xFF else 2 if n <= 0xFFFF else 4 if n <= 0xFFFFFFFF else 8


def parse_header(cur: Cursor) -> None:
    HEADER.annotate(cur)


def read_header(stage: Stage, name: str, run: RunContext) -> Tuple[MetaReader, int, int, int]:
    r = MetaReader(stage.metadata_bytes, name)
    _nmd, _ndata, usize, csize, osize = r.record(HEADER, "string encoding header")
    check_size(usize, run, f"{name} uncompressed size", 8)
    check_size(osize, run, f"{name} offsets size", 16)
    if osize % 8:
        raise FilterError(f"{name}: offsets size {osize} is not a multiple of 8", 16)
    return r, usize, csize, osize


def header(usize: int, csize: int, ncells: int) -> bytes:
    return HEADER.pack(0, 1, usize, csize, 8 * ncells)


def cells(data: bytes, offsets) -> Tuple[np.ndarray, np.ndarray]:
    """(starts, lengths) of the cells of a var tile from its u64 offsets."""
    off = np.frombuffer(offsets, dtype="<u8") if isinstance(offsets, (bytes, bytearray, memoryview)) \
        else np.asarray(offsets, dtype=np.uint64)
    off = off.astype(np.int64)
    if len(off) == 0:
        raise FilterError("RLE/DICTIONARY string encoding needs at least one cell")
    ends = np.append(off[1:], len(data))
    if off[0] != 0 or (ends < off).any() or ends[-1] > len(data):
        raise FilterError("the cell offsets do not describe the var data")
    return off, ends - off


def padded(buf: np.ndarray, starts: np.ndarray, lens: np.ndarray) -> np.ndarray:
    """Each cell as a zero-padded row, its length appended (8 bytes): equal rows are equal
    cells."""
    width = int(lens.max()) if len(lens) else 0
    rows = np.zeros((len(lens), width + 8), dtype=np.uint8)
    if width:
        col = np.arange(width)
        mask = col[None, :] < lens[:, None]
        rows[:, :width][mask] = buf[(starts[:, None] + col[None, :])[mask]]
    rows[:, width:] = lens.astype("<u8").view(np.uint8).reshape(-1, 8)
    return rows


def gather_words(src: np.ndarray, starts: np.ndarray, lens: np.ndarray,
                 index: np.ndarray) -> Tuple[bytes, bytes]:
    """(cell bytes, u64 offsets) of the cells `words[index]` where word k is
    `src[starts[k]:starts[k] + lens[k]]` (a dictionary, or RLE's one string per run). The
    words are padded into one row each and the rows copied cell by cell (whole rows when
    the words are equally long): a pass over the output instead of an 8-byte index per
    output byte. Very uneven words fall back to that index."""
    lens = np.asarray(lens, dtype=np.int64)
    cl = lens[index]
    offsets = (np.cumsum(cl) - cl).astype("<u8").tobytes()
    width = int(lens.max()) if len(lens) else 0
    if width == 0 or len(index) == 0:
        return b"", offsets
    if width > 4 * max(1.0, float(cl.mean())) + 16:
        return src[segment_index(starts[index], cl)].tobytes(), offsets
    rows = np.zeros((len(lens), width), dtype=np.uint8)
    col = np.arange(width)
    mask = col[None, :] < lens[:, None]
    rows[mask] = src[segment_index(starts, lens)]
    picked = np.take(rows.view(np.dtype((np.void, width))).ravel(), index)  # a row copy each
    if int(lens.min()) == width:
        return picked.tobytes(), offsets
    return picked.view(np.uint8).reshape(-1, width)[col[None, :] < cl[:, None]].tobytes(), \
        offsets


def _strided(buf: np.ndarray, head: int, len_size: int, len_at: int, limit: int):
    """`walk` for records that are mostly as long as their neighbours: from each position,
    guess that the next records repeat the current length and check every guess at once;
    the first wrong guess starts the next step. None when the lengths vary too much for that
    to pay (the caller chains by pointer doubling) or a record runs past the end."""
    n = len(buf)
    pad = np.concatenate([buf, np.zeros(head + 8, np.uint8)])
    out_at, out_len = [], []
    pos, count, steps = 0, 0, 0
    guess = 64
    while pos < n and count < limit:
        steps += 1
        if steps > 64 and count < 16 * steps:
            return None
        first = int(read_be(pad, np.array([pos + len_at]), len_size)[0])
        rec = head + first
        k = max(1, min(guess, (n - pos) // rec, limit - count))
        at = pos + rec * np.arange(k, dtype=np.int64)
        ln = read_be(pad, at + len_at, len_size).astype(np.int64)
        bad = np.flatnonzero(ln != first)
        m = int(bad[0]) if len(bad) else k
        if m == 0:  # the first record alone (longer than what remains, or the last one)
            m = 1
            if pos + rec > n:
                return None
        out_at.append(at[:m])
        out_len.append(ln[:m] if m <= len(ln) else np.full(m, first, np.int64))
        pos += m * rec
        count += m
        guess = min(1 << 20, guess * 4) if m == k else 64
    if pos != n:
        return None
    return np.concatenate(out_at), np.concatenate(out_len)


def walk(buf: np.ndarray, head: int, len_size: int, len_at: int, name: str, limit: int):
    """Records `[head bytes, of which a big-endian length of len_size bytes at len_at]
    [length bytes]` filling `buf` exactly: (record positions, string lengths)."""
    n = len(buf)
    if n == 0:
        return np.zeros(0, np.int64), np.zeros(0, np.int64)
    fast = _strided(buf, head, len_size, len_at, limit)
    if fast is not None:
        return fast
    pad = np.concatenate([buf, np.zeros(head, np.uint8)])
    pos = np.arange(n, dtype=np.int64)
    lens = read_be(pad, pos + len_at, len_size)
    big = lens > np.uint64(n)
    nxt = pos + head + np.where(big, np.uint64(n), lens).astype(np.int64)
    at, final = chain(nxt, n, limit)
    if final != n:
        raise FilterError(f"{name}: the encoded records do not end with the data "
                          f"(a record runs past byte {n})")
    return at, lens[at].astype(np.int64)


def rle_encode(data: bytes, offsets) -> Tuple[bytes, int, int, int]:
    """(encoded runs, run-length byte size, string-length byte size, cells)."""
    from ..accel.forward_kernels import same_as_previous

    buf = u8(data)
    starts, lens = cells(data, offsets)
    compiled = same_as_previous.get(len(buf))
    if compiled is not None:   # one pass (forward_kernels.py), no padded rows
        same = np.empty(len(lens), np.bool_)
        compiled(buf, starts, lens, same)
    else:
        rows = padded(buf, starts, lens)
        same = np.concatenate([[False], (rows[1:] == rows[:-1]).all(axis=1)])
    run_start = np.flatnonzero(~same)
    run_len = np.diff(np.append(run_start, len(lens)))
    s_start, s_len = starts[run_start], lens[run_start]
    # calculate_compression_params: the last run's string is left out of the maximum
    max_str = int(s_len[:-1].max()) if len(s_len) > 1 else int(s_len[0])
    a, b = compute_bytesize(int(run_len.max())), compute_bytesize(max_str)
    rec = a + b + s_len
    pos = np.cumsum(rec) - rec
    out = np.empty(int(rec.sum()), dtype=np.uint8)
    out[segment_index(pos, np.full(len(pos), a))] = ints_be(run_len.astype(np.uint64), a).ravel()
    out[segment_index(pos + a, np.full(len(pos), b))] = ints_be(s_len.astype(np.uint64), b).ravel()
    out[segment_index(pos + a + b, s_len)] = buf[segment_index(s_start, s_len)]
    return out.tobytes(), a, b, len(lens)


def rle_decode(enc: bytes, a: int, b: int, name: str, usize: int, ncells: int,
               run: RunContext) -> Tuple[bytes, bytes]:
    buf = u8(enc)
    at, s_len = walk(buf, a + b, b, a, name, ncells + 1)
    run_len = read_be(np.concatenate([buf, np.zeros(8, np.uint8)]), at, a).astype(np.int64)
    if int(run_len.sum()) != ncells:
        raise FilterError(f"{name}: runs give {int(run_len.sum())} cells, the offsets size says "
                          f"{ncells}")
    total = int((run_len * s_len).sum())
    if total != usize:
        raise FilterError(f"{name}: runs give {total} bytes, the metadata says {usize}")
    return gather_words(buf, at + a + b, s_len, np.repeat(np.arange(len(at)), run_len))
