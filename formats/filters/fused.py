"""Whole runs of chunks decoded in one compiled call that holds no GIL (`nativekernels.py`).

For [codec] and [BYTESHUFFLE or BITSHUFFLE, codec] with codec ZSTD, LZ4, GZIP or BZIP2 — the pipelines
TileDB and tiledbsoma write most — a thread hands a kernel the offsets of a file's chunks;
the kernel parses each chunk's part table, calls the C codec (`native.py`) into a scratch
block that stays in cache, un-shuffles it into the output, and goes on, so every core
decodes at once and nothing is copied between stages.

The kernel only decodes a chunk when the Python path (`batch.reverse_into`, then
`reverse_chunk`) would produce the same bytes; every other chunk is marked and left to it,
so errors are reported exactly as before.
"""
from __future__ import annotations

from typing import Any, Callable, List, NamedTuple, Optional, Sequence, Tuple, Union

import numpy as np

from ..accel import native
from ..core import compiled
from .base import DataInfo, FilterError, FilterSpec, RunContext
from .compression import LZ4, Bzip2, Gzip, Zstd
from .deltas import Delta, DoubleDelta
from .enums import FilterType, stage_names
from .scale import FloatScale, scale_options
from .windows import BitWidthReduction, bwr_type
from .xor import Xor

# (original length, filtered length, metadata offset, metadata length, data offset): the
# chunk tuples `rawtile.chunk_table` gives
Chunk = Tuple[int, int, int, int, int]

# the filter classes whose `decompress` the kernel's codec calls reproduce
_CODECS: dict = {Zstd: native.Codec.ZSTD, LZ4: native.Codec.LZ4, Gzip: native.Codec.ZLIB,
           Bzip2: native.Codec.BZIP2}


# the shuffle before the codec: nativekernels' NONE, BYTES, BITS
_SHUFFLES = {FilterType.BYTESHUFFLE: 1, FilterType.BITSHUFFLE: 2}


# the filters `_scaled_plan` reproduces
_PRE = {FilterType.SCALE_FLOAT: FloatScale, FilterType.XOR: Xor}

# the typed codec before the compressor: nativekernels' DELTA, DOUBLE_DELTA
_TYPED = {FilterType.DELTA: (Delta, 1), FilterType.DOUBLE_DELTA: (DoubleDelta, 2)}


class FusedPlan(NamedTuple):
    """What the kernel is told about a pipeline: its codec, the shuffle before it (0 none,
    1 BYTESHUFFLE, 2 BITSHUFFLE) and the shuffle's element size, or the typed codec before
    it (0 none, 1 DELTA, 2 DOUBLE_DELTA; 8-byte values)."""

    codec: native.Codec
    shuffle: int
    esize: int
    typed: int = 0
    # [SCALE_FLOAT?, XOR?, codec]: XOR present, and SCALE_FLOAT's (scale, offset, float
    # size); `esize` is then the width of the integers XOR and SCALE_FLOAT see
    xor: bool = False
    scale: Optional[Tuple[float, float, int]] = None
    # [BIT_WIDTH_REDUCTION, codec]: its integers are signed (`esize` their size)
    reduced: Optional[bool] = None


def fused_plan(specs: List[FilterSpec], info: DataInfo) -> Optional[FusedPlan]:
    """The plan for [codec] or [BYTESHUFFLE or BITSHUFFLE, codec]; None for any other pipeline,
    a codec without a kernel (GZIP; with numba loaded, a codec whose library is not
    reachable), or a shuffle without an element size."""
    from . import get, stage_infos
    if not specs or len(specs) > 3:
        return None
    # ZLIB has no kernel (`native._LOADERS`); another codec's C library is looked up (a
    # subprocess) once numba is loaded: before, no kernel runs, and a small decode never
    # pays for the lookup (`decode_chunks` declines the chunks of a missing library)
    codec = _CODECS.get(type(get(specs[-1].type)))
    if codec is None or codec == native.Codec.ZLIB \
            or (compiled.loaded() and native.functions(codec) is None):
        return None
    if len(specs) == 1:
        return FusedPlan(codec, 0, 0)
    if specs[0].type in _TYPED:
        return _typed_plan(codec, specs, info) if len(specs) == 2 else None
    if specs[0].type in (FilterType.SCALE_FLOAT, FilterType.XOR):
        return _scaled_plan(codec, specs, info)
    if specs[0].type == FilterType.BIT_WIDTH_REDUCTION:
        return _reduced_plan(codec, specs, info) if len(specs) == 2 else None
    if len(specs) > 2:
        return None
    shuffle = _SHUFFLES.get(FilterType(specs[0].type)) if specs[0].type in _SHUFFLES else None
    esize = stage_infos(specs, info)[0].value_size
    return FusedPlan(codec, shuffle, esize) if shuffle and esize > 0 else None


def _typed_plan(codec: native.Codec, specs: List[FilterSpec], info: DataInfo
                ) -> Optional[FusedPlan]:
    """[DELTA or DOUBLE_DELTA, codec] of 8-byte integer values (what the kernel decodes;
    narrower types keep `batch`'s typed plan)."""
    from . import get, stage_infos
    cls, typed = _TYPED[FilterType(specs[0].type)]
    f = get(specs[0].type)
    if type(f) is not cls:
        return None
    try:
        t = f.value_type(specs[0], stage_infos(specs, info)[0])
    except Exception:   # a type the codec refuses: the Python path says so
        return None
    if t.itemsize != 8 or t.kind not in "iu":
        return None
    return FusedPlan(codec, 0, 8, typed)


def _scaled_plan(codec: native.Codec, specs: List[FilterSpec], info: DataInfo
                 ) -> Optional[FusedPlan]:
    """[SCALE_FLOAT, XOR, codec], [SCALE_FLOAT, codec] or [XOR, codec]."""
    from . import get, stage_infos
    kinds = [FilterType(s.type) for s in specs[:-1]]
    if kinds not in ([FilterType.SCALE_FLOAT, FilterType.XOR], [FilterType.SCALE_FLOAT],
                     [FilterType.XOR]):
        return None
    if any(type(get(k)) is not c for k, c in zip(kinds, (_PRE[k] for k in kinds))):
        return None
    infos = stage_infos(specs, info)
    xor = FilterType.XOR in kinds
    if kinds[0] == FilterType.SCALE_FLOAT:
        try:
            scale, offset, t, w = scale_options(specs[0], infos[0])
        except FilterError:   # the Python path reports it
            return None
        return FusedPlan(codec, 0, w.itemsize, 0, xor, (scale, offset, t.itemsize))
    width = infos[0].value_size
    return FusedPlan(codec, 0, width, 0, True) if width in (1, 2, 4, 8) else None


def _reduced_plan(codec: native.Codec, specs: List[FilterSpec], info: DataInfo
                  ) -> Optional[FusedPlan]:
    """[BIT_WIDTH_REDUCTION, codec] on integers of 2 to 8 bytes (a type BWR passes through
    untouched keeps the Python path)."""
    from . import get, stage_infos
    if type(get(specs[0].type)) is not BitWidthReduction:
        return None
    seen = stage_infos(specs, info)[0]
    fv = seen.format_version   # the run `reverse_chunk` makes (filters._run_for)
    t = bwr_type(seen.datatype, RunContext() if fv is None else RunContext(format_version=fv))
    if t is None:
        return None
    return FusedPlan(codec, 0, t.itemsize, reduced=t.kind == "i")


def decoder(nbytes: int, specs: Optional[List[FilterSpec]] = None
            ) -> Optional[Callable[..., Any]]:
    """The compiled kernel for `nbytes` through the pipeline `specs` (None: not said), or
    None: no numba, `ARRAYSCOPE_NO_JIT=1`, or a decode the rule leaves to numpy while numba
    is not loaded (small, or byte-wise stages only: `compiled.kernel_wanted`)."""
    if not compiled.kernel_wanted(nbytes, None if specs is None else stage_names(specs)):
        return None
    try:
        from ..accel import nativekernels
    except Exception:   # numba present but unable to build the intrinsics: Python path
        return None
    return nativekernels.shuffled_chunks


def decode_chunks(kernel: Callable[..., Any], plan: FusedPlan, src: Any,
                  chunks: Union[Sequence[Chunk], np.ndarray],
                  positions: Union[Sequence[int], np.ndarray], out: np.ndarray) -> List[int]:
    """Decode `chunks` of the file `src` (bytes-like) into `out` at `positions`; returns
    the indices left to the Python path. Runs without the GIL for the whole run. `chunks`
    may be an int64 array of rows (as `tiledb/locate_kernels` gives them)."""
    if not len(chunks):
        return []
    fns = native.functions(plan.codec)
    if fns is None:
        return list(range(len(chunks)))
    table = np.array(chunks, dtype=np.int64).reshape(-1, 5)
    pos = np.asarray(positions, dtype=np.int64)
    orig = np.ascontiguousarray(table[:, 0])
    status = np.ones(len(table), np.int8)
    args = (int(plan.codec), np.array(fns + (0,) * (3 - len(fns)), dtype=np.uint64),
            native.context(plan.codec), _read_only(src),
            np.ascontiguousarray(table[:, 2]), np.ascontiguousarray(table[:, 3]),
            np.ascontiguousarray(table[:, 4]), np.ascontiguousarray(table[:, 1]), orig, pos, out)
    if plan.reduced is not None:
        from ..accel.nativekernels import reduced_chunks
        most = int(orig.max())
        scratch = np.empty(8 + (most + 1) * (plan.esize + 5) + most, np.uint8)
        reduced_chunks(*args, plan.esize, plan.reduced, scratch, status)
    elif plan.xor or plan.scale is not None:
        from ..accel.nativekernels import scaled_chunks
        scale, offset, fsize = plan.scale if plan.scale is not None else (1.0, 0.0, 0)
        # the integers SCALE_FLOAT reads: `esize` bytes for each `fsize`-byte float
        scratch = np.empty(-(-int(orig.max()) * plan.esize // fsize) if fsize else 0, np.uint8)
        scaled_chunks(*args, plan.scale is not None, plan.xor, plan.esize, fsize,
                      scale, offset, scratch, status)
    elif plan.typed:
        from ..accel.nativekernels import _ENC_MAX, _TYPED_SLACK, typed_chunks
        scratch = np.empty(int(orig.max()) + _ENC_MAX + _TYPED_SLACK, np.uint8)
        typed_chunks(*args, plan.typed, scratch, status)
    else:
        scratch = np.empty(int(orig.max()) if plan.shuffle else 0, np.uint8)
        kernel(*args, plan.shuffle, plan.esize, scratch, status, out.nbytes >= compiled.TUNING.stream_bytes)
    return np.flatnonzero(status).tolist()


def _read_only(src: Any) -> np.ndarray:
    """`src` as a read-only uint8 array, whatever it is (bytes, a writable mmap, a bytearray):
    one argument type, so the kernel is compiled once, not once per kind of buffer."""
    a = np.frombuffer(src, np.uint8)
    a.flags.writeable = False
    return a


def decode_packed(kernel: Callable[..., Any], plan: FusedPlan,
                  chunks: Sequence[Tuple[Any, Any, int, int]], out: np.ndarray) -> List[int]:
    """Chunks given as (metadata, data, original length, output position), bytes-like each
    (decrypted chunks, chunk views of several files): laid end to end in one buffer — a
    copy of the stored bytes, cheaper than a call each — and decoded by one call. Returns
    the indices left to the Python path."""
    blob = bytearray()
    table = []
    for md_obj, data_obj, orig, _pos in chunks:
        md, data = memoryview(md_obj), memoryview(data_obj)
        at = len(blob)
        blob += md
        blob += data
        table.append((orig, data.nbytes, at, md.nbytes, at + md.nbytes))
    return decode_chunks(kernel, plan, blob, table, [c[3] for c in chunks], out)
