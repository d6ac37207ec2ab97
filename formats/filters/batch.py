"""Reversing many chunks of one pipeline at once, straight into an output buffer.

`reverse_chunk` builds a `Stage` per filter per chunk (what the GUI shows); decoding a whole
attribute only needs the cell bytes. For the common pipelines — an optional BYTESHUFFLE or
BITSHUFFLE followed by one compressor (ZSTD, LZ4, GZIP, BZIP2 or another
`CompressionFilter` that keeps the standard framing), or either alone — `reverse_into`
decodes chunk after chunk without Stage objects: the compressor's own `decompress_part`
(the same checks as `CompressionFilter.reverse`), then the un-shuffle of up to `TUNING.unshuffle_group`
equal-sized chunks in one vectorised call (`bits.byteunshuffle_rows` /
`bits.bitunshuffle_rows`), written where the cells belong.

A chunk is only decoded here when everything the general path checks holds and the result
is necessarily the same; anything else (another pipeline, a part table it does not expect,
a codec error, a size mismatch) is left to the caller, which runs `reverse_chunk` on it and
reports exactly what it always reported.
"""
from __future__ import annotations

import struct
from typing import Any, Dict, List, Optional, Sequence, Tuple

import numpy as np

from ..accel.kernels import bitunshuffle_blocks, unshuffler
from ..accel.unread import metadata_decodes
from ..core import compiled
from . import get, stage_infos
from .base import DataInfo, FilterSpec
from .bits import _scratch, bitunshuffle_rows, byteunshuffle_rows
from .compression import CompressionFilter, table_size
from .enums import FilterType

_UNSHUFFLE_ROWS = {FilterType.BYTESHUFFLE: byteunshuffle_rows,
                   FilterType.BITSHUFFLE: bitunshuffle_rows}

_II = struct.Struct("<II")
_IIII = struct.Struct("<IIII")


class Plan:
    """How `reverse_into` runs a pipeline: `esize` (the shuffle's element size, or 0), the
    shuffle's filter type (or None) and the compressor (or None) with its spec and
    DataInfo."""

    def __init__(self, esize: int, comp: Optional[CompressionFilter], spec: Optional[FilterSpec],
                 info: Optional[DataInfo], shuffle: Optional[int] = None,
                 typed: Optional[Tuple[CompressionFilter, FilterSpec, DataInfo]] = None):
        self.esize = esize
        self.shuffle = shuffle
        self.comp = comp
        self.spec = spec
        self.info = info
        # [DELTA or DOUBLE_DELTA, compressor]: the typed codec (its spec, the DataInfo it
        # sees) reversed after the compressor, part table by part table
        self.typed = typed


def plan(specs: List[FilterSpec], info: DataInfo) -> Optional[Plan]:
    """The fast plan for `specs`, or None when `reverse_chunk` must run every chunk."""
    if not specs or len(specs) > 2:
        return None
    if len(specs) == 2 and specs[0].type in _TYPED:
        return _typed_plan(specs, info)
    shuffle = specs[0].type if specs[0].type in _UNSHUFFLE_ROWS else None
    if len(specs) == 2 and shuffle is None:
        return None
    infos = stage_infos(specs, info)
    esize = infos[0].value_size if shuffle else 0
    if shuffle and esize <= 0:
        return None
    if len(specs) == 1 and shuffle:
        return Plan(esize, None, None, None, shuffle)
    k = len(specs) - 1
    f = get(specs[k].type)
    if not isinstance(f, CompressionFilter) or type(f).reverse is not CompressionFilter.reverse:
        return None  # a codec with its own reverse (RLE's string offsets): general path
    return Plan(esize, f, specs[k], infos[k], shuffle)


_TYPED = (FilterType.DOUBLE_DELTA, FilterType.DELTA)


def _standard(f) -> bool:
    """A codec in the standard framing whose reverse is `CompressionFilter.reverse`."""
    return isinstance(f, CompressionFilter) and type(f).reverse is CompressionFilter.reverse


def _typed_plan(specs: List[FilterSpec], info: DataInfo) -> Optional[Plan]:
    typed, comp = get(specs[0].type), get(specs[1].type)
    if not (_standard(typed) and _standard(comp)):
        return None
    infos = stage_infos(specs, info)
    assert isinstance(typed, CompressionFilter) and isinstance(comp, CompressionFilter)
    return Plan(0, comp, specs[1], infos[1], None, (typed, specs[0], infos[0]))


def reverse_into(specs: List[FilterSpec], info: DataInfo,
                 chunks: Sequence[Tuple[object, object, int, int]], out: np.ndarray,
                 the_plan: Optional[Plan] = None) -> List[int]:
    """Decode `chunks` — (metadata, filtered data, original length, output position), the
    first two bytes-like — into the uint8 array `out` at their positions. Returns the
    indices of the chunks it left alone (every chunk when the pipeline has no fast plan):
    the caller decodes those with `reverse_chunk`. No key is taken: pipelines with
    encryption have no fast plan."""
    p = the_plan if the_plan is not None else plan(specs, info)
    if p is None:
        return list(range(len(chunks)))
    left: List[int] = []
    tuning = compiled.TUNING
    comp, cspec, cinfo, esize = p.comp, p.spec, p.info, p.esize
    rows_fn = _UNSHUFFLE_ROWS[FilterType(p.shuffle)] if p.shuffle else byteunshuffle_rows
    is_bit = p.shuffle == FilterType.BITSHUFFLE
    # compiled unshuffles: each chunk straight from its decompressed bytes (still in cache)
    # into `out` — the output written once, no grouping into scratch rows
    total = sum(c[2] for c in chunks)
    direct = unshuffler(total) if p.shuffle == FilterType.BYTESHUFFLE else \
        _bit_direct if p.shuffle == FilterType.BITSHUFFLE and \
        bitunshuffle_blocks.get(total) is not None else None
    md_cache: Dict[Any, Any] = {}
    # pending groups of equal-sized chunks, one per size (at most `unshuffle_sizes`: the full chunks
    # of many small fragments alternate with their short last chunks), rows anywhere in `out`
    groups: Dict[int, Tuple[np.ndarray, List[int], int]] = {}   # size -> rows, positions, slot

    def flush(size: int) -> None:
        rows, at, _slot = groups.pop(size)
        n = len(at)
        start = at[0]
        if all(a == start + r * size for r, a in enumerate(at)):  # consecutive
            rows_fn(rows[:n], esize, out[start:start + n * size].reshape(n, size))
        else:
            dst = _scratch("batch out", (n, size), np.uint8)
            rows_fn(rows[:n], esize, dst)
            for r, a in enumerate(at):
                out[a:a + size] = dst[r]

    if p.typed is not None and comp is not None and cspec is not None and cinfo is not None:
        for i, (md, data, orig, pos) in enumerate(chunks):
            plain = _decompress_typed(comp, cspec, cinfo, p.typed, md, data, orig, md_cache)
            if plain is None:
                left.append(i)
            else:
                out[pos:pos + orig] = np.frombuffer(plain, np.uint8, orig)
        return left
    for i, (md, data, orig, pos) in enumerate(chunks):
        plain = _decompress(comp, cspec, cinfo, md, data, orig, esize, md_cache) \
            if comp is not None and cspec is not None and cinfo is not None \
            else (_unshuffle_only(md, data, orig))
        if plain is None or (is_bit and (orig % esize or orig % 8)):
            left.append(i)  # (BITSHUFFLE copies such a part unshuffled: the general path)
            continue
        if not esize:
            out[pos:pos + orig] = np.frombuffer(plain, np.uint8, orig)
            continue
        if direct is not None:
            direct(np.frombuffer(plain, np.uint8, orig), esize, out[pos:pos + orig])
            continue
        if orig < esize * 64 or orig > tuning.unshuffle_group_max:  # small or big chunk: alone
            src = np.frombuffer(plain, np.uint8, orig).reshape(1, orig)
            rows_fn(src, esize, out[pos:pos + orig].reshape(1, orig))
            continue
        g = groups.get(orig)
        if g is None:
            if len(groups) == tuning.unshuffle_sizes:
                flush(next(iter(groups)))   # the oldest size
            slot = min(set(range(tuning.unshuffle_sizes)) - {v[2] for v in groups.values()})
            g = groups[orig] = (_scratch(f"batch rows {slot}", (tuning.unshuffle_group, orig), np.uint8), [], slot)
        rows, at, _slot = g
        rows[len(at)] = np.frombuffer(plain, np.uint8, orig)
        at.append(pos)
        if len(at) == tuning.unshuffle_group:
            flush(orig)
    for size in list(groups):
        flush(size)
    return left


def _bit_direct(src: np.ndarray, esize: int, out: np.ndarray) -> None:
    bitunshuffle_rows(src.reshape(1, -1), esize, out.reshape(1, -1))


def _unshuffle_only(md, data, orig: int):
    """A shuffle alone: its one-part table, then the shuffled bytes."""
    if not metadata_decodes(len(md), 8) or len(data) != orig or \
            _II.unpack_from(md, 0) != (1, orig):
        return None
    return data


def _metadata_part(comp: CompressionFilter, spec: FilterSpec, info: DataInfo, part,
                   original: int, md_cache: dict) -> Optional[bytes]:
    """The compressor's metadata part decoded (most chunks of a file store the same bytes:
    decoded once, kept in `md_cache`); None when it does not decode."""
    key = bytes(part)
    table = md_cache.get(key)
    if table is None:
        try:
            table = bytes(comp.decompress_part(part, original, spec, info))
        except Exception:
            return None
        md_cache[key] = table
    return table


def _decompress(comp: CompressionFilter, spec: FilterSpec, info: DataInfo, md, data,
                orig: int, esize: int, md_cache: dict):
    """The one decompressed data part of a chunk, when its compression table is the expected
    one ([the shuffle's table], data) and every check of the general path passes; else
    None."""
    n = len(md)
    if not metadata_decodes(n, table_size(0, 0)):
        return None
    nmd, ndata = _II.unpack_from(md, 0)
    if ndata != 1 or nmd != (1 if esize else 0) or \
            not metadata_decodes(n, table_size(nmd, ndata)):   # bytes after it: ignored
        return None
    view = memoryview(data)
    if esize:
        o1, c1, o2, c2 = _IIII.unpack_from(md, 8)
        if o1 != 8 or o2 != orig or c1 + c2 != len(view):
            return None
        table = _metadata_part(comp, spec, info, view[:c1], 8, md_cache)
        if table != _II.pack(1, orig):
            return None
        part = view[c1:]
    else:
        o2, c2 = _II.unpack_from(md, 8)
        if o2 != orig or c2 != len(view):
            return None
        part = view
    try:
        plain = comp.decompress_part(part, orig, spec, info)
    except Exception:
        return None
    if len(plain) != orig:
        return None
    return plain


_TYPED_TABLE = table_size(0, 1)   # the typed codec's own part table: one data part
# an encoded part longer than the values and this much (DELTA of libtiledb 2.16 keeps one
# value more) is left to the general path's checks; `nativekernels` keeps the same rule
TYPED_SLACK = 64


def _decompress_typed(comp: CompressionFilter, spec: FilterSpec, info: DataInfo,
                      typed: Tuple[CompressionFilter, FilterSpec, DataInfo], md, data,
                      orig: int, md_cache: dict):
    """The cells of a [DELTA/DOUBLE_DELTA, compressor] chunk when both part tables are the
    expected ones — the compressor's (the typed codec's table, its encoded part) and the
    typed codec's (one part, `orig` bytes) — and every check of the general path passes;
    else None (the general path decodes the chunk and reports what is wrong)."""
    if not metadata_decodes(len(md), table_size(1, 1)):
        return None
    nmd, ndata = _II.unpack_from(md, 0)
    if (nmd, ndata) != (1, 1):
        return None
    o1, c1, o2, c2 = _IIII.unpack_from(md, 8)
    view = memoryview(data)
    if o1 != _TYPED_TABLE or c1 + c2 != len(view) or o2 > orig + TYPED_SLACK:
        return None
    table = _metadata_part(comp, spec, info, view[:c1], o1, md_cache)
    if table is None or len(table) != _TYPED_TABLE or _IIII.unpack_from(table, 0) != (0, 1, orig, o2):
        return None
    try:
        encoded = comp.decompress_part(view[c1:], o2, spec, info)
        if len(encoded) != o2:
            return None
        codec, tspec, tinfo = typed
        plain = codec.decompress_part(encoded, orig, tspec, tinfo)
    except Exception:
        return None
    return plain if len(plain) == orig else None
