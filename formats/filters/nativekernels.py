"""Compiled kernels that call C codecs (`native.py`) with the GIL released: a whole run of
chunks decoded per call. Imported only through `fused.py`, once numba is known to load.

A C function is called through its address, an integer argument (`_call2`, `_call5`): the
compiled code holds no address, so numba caches it on disk like the other kernels. Pointer
arguments travel as 64-bit integers, which every supported ABI passes as pointers are.
"""
from __future__ import annotations

from typing import Any

import numba
import numpy as np
from llvmlite import ir
from numba import types
from numba.extending import intrinsic

from .kernels import unshuffle

_unshuffle: Any = unshuffle.get()   # the compiled byte unshuffle (numba is loaded: never None)

_U64 = types.uint64
_CONTENT_UNKNOWN = np.uint64(0xFFFFFFFFFFFFFFFF)   # ZSTD_CONTENTSIZE_UNKNOWN


def _c2(typingctx: Any, fn: Any, a: Any, b: Any) -> Any:
    """size_t fn(a, b) for a C function at address `fn`."""
    def codegen(context: Any, builder: Any, signature: Any, args: Any) -> Any:
        i64 = ir.IntType(64)
        fnty = ir.FunctionType(i64, [i64] * 2)
        return builder.call(builder.inttoptr(args[0], fnty.as_pointer()), args[1:])
    return _U64(_U64, _U64, _U64), codegen


def _c5(typingctx: Any, fn: Any, a: Any, b: Any, c: Any, d: Any, e: Any) -> Any:
    """size_t fn(a, b, c, d, e) for a C function at address `fn`."""
    def codegen(context: Any, builder: Any, signature: Any, args: Any) -> Any:
        i64 = ir.IntType(64)
        fnty = ir.FunctionType(i64, [i64] * 5)
        return builder.call(builder.inttoptr(args[0], fnty.as_pointer()), args[1:])
    return _U64(_U64, _U64, _U64, _U64, _U64, _U64), codegen


_call2: Any = intrinsic(_c2)
_call5: Any = intrinsic(_c5)


@numba.njit(nogil=True, cache=True, inline="always")
def _u32(a: Any, i: int) -> Any:
    return (np.int64(a[i]) | (np.int64(a[i + 1]) << 8) | (np.int64(a[i + 2]) << 16)
            | (np.int64(a[i + 3]) << 24))


@numba.njit(nogil=True, cache=True)
def _zstd_part(fns: Any, dctx: int, src: int, size: int, dst: int, n: int) -> bool:
    """Decompress the zstd part at `src` (`size` bytes) into `n` bytes at `dst`: True only
    when the part is exactly one frame, its declared size (if any) is `n`, and it decodes to
    exactly `n` bytes — what the Python path accepts. Anything else: False (the Python path
    then decodes the chunk and says what is wrong)."""
    s = np.uint64(size)
    if _call2(fns[1], np.uint64(src), s) != s:          # one frame, nothing after it
        return False
    declared = _call2(fns[2], np.uint64(src), s)
    if declared != np.uint64(n) and declared != _CONTENT_UNKNOWN:
        return False
    return _call5(fns[0], np.uint64(dctx), np.uint64(dst), np.uint64(n), np.uint64(src),
                  s) == np.uint64(n)


@numba.njit(nogil=True, cache=True)
def zstd_shuffle_chunks(fns: Any, dctx: int, src: Any, md_off: Any, md_len: Any,
                        data_off: Any, data_len: Any, orig: Any, out_pos: Any, out: Any,
                        esize: int, scratch: Any, status: Any) -> None:
    """Decode the [BYTESHUFFLE, ZSTD] (`esize` > 0) or [ZSTD] (`esize` 0) chunks whose
    metadata and data are at the given offsets of the uint8 file `src`, each into
    `out[out_pos:out_pos + orig]`. `status[i]` is 0 when chunk i is decoded, 1 when it is
    left to the Python path: a part table other than the expected one, a range outside the
    file, or any codec disagreement (`batch._decompress` makes the same checks)."""
    nsrc = len(src)
    base = src.ctypes.data
    obase = out.ctypes.data
    sbase = scratch.ctypes.data
    table = np.zeros(8, np.uint8)   # the shuffle's own part table, decompressed
    tbase = table.ctypes.data
    want_md = 1 if esize else 0
    for i in range(len(orig)):
        status[i] = 1
        m, ml, d, dl = md_off[i], md_len[i], data_off[i], data_len[i]
        n, p = orig[i], out_pos[i]
        if m < 0 or ml < 8 or m + ml > nsrc or d < 0 or dl < 0 or d + dl > nsrc or n < 0 \
                or p < 0 or p + n > len(out):
            continue
        nmd, ndata = _u32(src, m), _u32(src, m + 4)
        if ndata != 1 or nmd != want_md or ml < 8 + 8 * (nmd + ndata):
            continue
        if esize:
            o1, c1, o2, c2 = _u32(src, m + 8), _u32(src, m + 12), _u32(src, m + 16), \
                _u32(src, m + 20)
            if o1 != 8 or o2 != n or c1 + c2 != dl or n > len(scratch):
                continue
            if not _zstd_part(fns, dctx, base + d, c1, tbase, 8) or _u32(table, 0) != 1 \
                    or _u32(table, 4) != n:
                continue
            if not _zstd_part(fns, dctx, base + d + c1, c2, sbase, n):
                continue
            k = n // esize
            _unshuffle(scratch[:n], k, esize, out[p:p + n])
            for t in range(k * esize, n):   # the tail the shuffle leaves as it is
                out[p + t] = scratch[t]
        else:
            o2, c2 = _u32(src, m + 8), _u32(src, m + 12)
            if o2 != n or c2 != dl:
                continue
            if not _zstd_part(fns, dctx, base + d, dl, obase + p, n):
                continue
        status[i] = 0
