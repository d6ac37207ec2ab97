"""Whole runs of chunks decoded in one compiled call that holds no GIL (`nativekernels.py`).

For [ZSTD] and [BYTESHUFFLE, ZSTD] — the pipelines TileDB and tiledbsoma write most — a
thread hands a kernel the offsets of a file's chunks; the kernel parses each chunk's part
table, calls libzstd into a scratch block that stays in cache, un-shuffles it into the
output, and goes on, so every core decodes at once and nothing is copied between stages.

The kernel only decodes a chunk when the Python path (`batch.reverse_into`, then
`reverse_chunk`) would produce the same bytes; every other chunk is marked and left to it,
so errors are reported exactly as before.
"""
from __future__ import annotations

from typing import Any, Callable, List, Optional, Sequence, Tuple

import numpy as np

from .. import compiled
from ..tiledb.enums import FilterType
from . import native
from .base import DataInfo, FilterSpec
from .compression import Zstd

# (original length, filtered length, metadata offset, metadata length, data offset): the
# chunk tuples `rawtile.chunk_table` gives
Chunk = Tuple[int, int, int, int, int]


def zstd_esize(specs: List[FilterSpec], info: DataInfo) -> Optional[int]:
    """0 for [ZSTD], the element size for [BYTESHUFFLE, ZSTD]; None for any other pipeline
    (or when the shuffle has no element size: the Python path)."""
    from . import get, stage_infos
    if not specs or len(specs) > 2 or not isinstance(get(specs[-1].type), Zstd):
        return None
    if len(specs) == 1:
        return 0
    if specs[0].type != FilterType.BYTESHUFFLE:
        return None
    esize = stage_infos(specs, info)[0].value_size
    return esize if esize > 0 else None


def decoder(nbytes: int) -> Optional[Callable[..., Any]]:
    """The compiled kernel, or None: no numba, `ARRAYSCOPE_NO_JIT=1`, a small decode while
    numba is not loaded, or a zstandard build without its cffi module."""
    if not compiled.kernel_wanted(nbytes) or native.zstd() is None:
        return None
    try:
        from . import nativekernels
    except Exception:   # numba present but unable to build the intrinsics: Python path
        return None
    return nativekernels.zstd_shuffle_chunks


def decode_chunks(kernel: Callable[..., Any], esize: int, src: Any, chunks: Sequence[Chunk],
                  positions: Sequence[int], out: np.ndarray) -> List[int]:
    """Decode `chunks` of the file `src` (bytes-like) into `out` at `positions`; returns
    the indices left to the Python path. Runs without the GIL for the whole run."""
    if not chunks:
        return []
    table = np.array(chunks, dtype=np.int64).reshape(-1, 5)
    pos = np.asarray(positions, dtype=np.int64)
    orig = np.ascontiguousarray(table[:, 0])
    scratch = np.empty(int(orig.max()) if esize else 0, np.uint8)
    status = np.ones(len(table), np.int8)
    fns = np.array(native.zstd(), dtype=np.uint64)
    kernel(fns, native.zstd_dctx(), np.frombuffer(src, np.uint8),
           np.ascontiguousarray(table[:, 2]), np.ascontiguousarray(table[:, 3]),
           np.ascontiguousarray(table[:, 4]), np.ascontiguousarray(table[:, 1]),
           orig, pos, out, esize, scratch, status)
    return np.flatnonzero(status).tolist()
