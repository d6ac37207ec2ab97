"""Vector code the compiled kernels need but LLVM's loop vectoriser does not find, written as
numba intrinsics in LLVM IR (portable: `shufflevector` lowers to SSE2/AVX on x86 and NEON
on ARM). Imported only where numba loads (`nativekernels.py`, `kernels.unshuffler`).

Byte unshuffle of 2-, 4- and 8-byte elements (byte j of element i at `j*n + i`): 16 elements
a step, one 16-byte load from each byte plane, then log2(esize) rounds of unpack shuffles
(bytes, then pairs, then quads interleaved: an esize x 16 byte transpose). The plain loop
(`kernels.unshuffle`), which LLVM vectorises with byte gathers, measured 8.3 ms per 64 MiB
of int64 in cache on an AMD EPYC (AVX2); this 3.4 ms. 256-bit shuffles measured no faster
(they work within 128-bit lanes and need a lane fix-up).

Streaming stores: where the output is larger than the caches, every line a regular store
writes is first read from memory (read-for-ownership) and later written back, twice the
traffic. Non-temporal stores skip the read: 64 MiB unshuffled to memory measured 10.2 ms
with the plain loop, 7.4 with these shuffles and regular stores, 3.6 streaming. Streamed
lines go around the cache, so the caller streams only outputs too big to stay cached, and
calls `store_fence` before anyone else reads them.
"""
from __future__ import annotations

from typing import Any, List

import numba
import numpy as np
from llvmlite import ir
from numba import types
from numba.extending import intrinsic

# a destination at least this large is written with streaming stores (`fused.decode_chunks`):
# larger than the last-level caches of most machines, so regular stores would reach memory
# anyway

_BLOCK = 16    # elements per unshuffle step (one 16-byte vector per byte plane)
_I8, _I32, _I64 = ir.IntType(8), ir.IntType(32), ir.IntType(64)


def _mask(indices: List[int]) -> ir.Constant:
    return ir.Constant(ir.VectorType(_I32, len(indices)), [ir.Constant(_I32, k) for k in indices])


def _interleave(builder: Any, xs: List[Any], ys: List[Any], unit: int) -> List[Any]:
    """Each pair (x, y) of 16-byte vectors, viewed as items of `unit` bytes, interleaved
    item by item: the low halves' (x0 y0 x1 y1 ...) then the high halves'."""
    k = 16 // unit
    vt = ir.VectorType(ir.IntType(8 * unit), k)
    lo = _mask([i // 2 + (k if i % 2 else 0) for i in range(k)])
    hi = _mask([k // 2 + i // 2 + (k if i % 2 else 0) for i in range(k)])
    out: List[Any] = []
    for x, y in zip(xs, ys):
        x, y = builder.bitcast(x, vt), builder.bitcast(y, vt)
        out += [builder.shuffle_vector(x, y, lo), builder.shuffle_vector(x, y, hi)]
    return out


def _transpose(builder: Any, planes: List[Any]) -> List[Any]:
    """The 16 elements whose byte planes are `planes` (esize vectors), as esize vectors in
    element order: the first half's planes transposed, the second half's, then the two
    interleaved in units of half an element."""
    if len(planes) == 1:
        return planes
    h = len(planes) // 2
    return _interleave(builder, _transpose(builder, planes[:h]), _transpose(builder, planes[h:]), h)


def _unshuffle_block(esize: int, streaming: bool) -> Any:
    """`f(src, n, dst)`, addresses as uint64: 16 elements of `esize` bytes, byte j of
    element i read at `src + j*n + i`, written whole at `dst` (16 * esize bytes; 16-byte
    aligned when `streaming`)."""
    def typer(typingctx: Any, src: Any, n: Any, dst: Any) -> Any:
        def codegen(context: Any, builder: Any, signature: Any, args: Any) -> Any:
            s, n, d = args
            vt = ir.VectorType(_I8, 16)
            planes = [builder.load(builder.inttoptr(builder.add(s, builder.mul(n, ir.Constant(_I64, j))),
                                                    vt.as_pointer()), align=1)
                      for j in range(esize)]
            flag = builder.module.add_metadata([ir.Constant(_I32, 1)]) if streaming else None
            for k, v in enumerate(_transpose(builder, planes)):
                at = builder.inttoptr(builder.add(d, ir.Constant(_I64, 16 * k)), vt.as_pointer())
                st = builder.store(builder.bitcast(v, vt), at, align=16 if streaming else 1)
                if flag is not None:
                    st.set_metadata("nontemporal", flag)
            return context.get_dummy_value()
        return types.none(types.uint64, types.uint64, types.uint64), codegen
    return intrinsic(typer)


_block2, _block2s = _unshuffle_block(2, False), _unshuffle_block(2, True)
_block4, _block4s = _unshuffle_block(4, False), _unshuffle_block(4, True)
_block8, _block8s = _unshuffle_block(8, False), _unshuffle_block(8, True)


def _fence_typer(typingctx: Any) -> Any:
    def codegen(context: Any, builder: Any, signature: Any, args: Any) -> Any:
        builder.fence("seq_cst")
        return context.get_dummy_value()
    return types.none(), codegen


# `store_fence()`: order the streaming stores made so far before any later store (x86
# `mfence`, ARM `dmb`): their lines reach memory before another thread is told the output
# is ready
store_fence: Any = intrinsic(_fence_typer)


@numba.njit(nogil=True, cache=True, inline="always")
def _blocks(esize: int, src: int, n: int, dst: int, first: int, count: int,
            streaming: bool) -> None:
    """Elements `first .. first + count` (count a multiple of 16) through the block
    shuffles; the loop's branches are invariant (LLVM takes them out of the loop)."""
    s, nn, d = np.uint64(src), np.uint64(n), np.uint64(dst)
    for i in range(first, first + count, _BLOCK):
        a, b = s + np.uint64(i), d + np.uint64(esize * i)
        if esize == 8:
            if streaming:
                _block8s(a, nn, b)
            else:
                _block8(a, nn, b)
        elif esize == 4:
            if streaming:
                _block4s(a, nn, b)
            else:
                _block4(a, nn, b)
        elif streaming:
            _block2s(a, nn, b)
        else:
            _block2(a, nn, b)


@numba.njit(nogil=True, cache=True, inline="always")
def _elements(src: Any, n: int, esize: int, out: Any, first: int, stop: int) -> None:
    for i in range(first, stop):
        for j in range(esize):
            out[esize * i + j] = src[j * n + i]


@numba.njit(nogil=True, cache=True, inline="always")
def unshuffle_inline(src: Any, n: int, esize: int, out: Any, streaming: bool) -> bool:
    """Byte-unshuffle the `n` elements of `esize` bytes (2, 4 or 8) in the flat uint8 `src`
    into the flat uint8 `out`; False for another element size (the caller's loop then).
    `streaming`: non-temporal stores where the output lines allow it (call `store_fence`
    before the output is read elsewhere). Inlined: a caller whose `esize` is a constant
    (the fused kernels' closures) compiles the block shuffles of that size only."""
    if esize != 2 and esize != 4 and esize != 8:
        return False
    if n == 0:
        return True
    if len(src) < n * esize or len(out) < n * esize or src.strides[0] != 1 \
            or out.strides[0] != 1:   # the blocks address both as contiguous bytes
        return False
    dst = out.ctypes.data
    head = 0
    if streaming:
        # elements before the first whole 16-byte line of the output
        while head < _BLOCK and head < n and (dst + esize * head) % 16:
            head += 1
        if (dst + esize * head) % 16:   # no element starts a line: regular stores
            head, streaming = 0, False
    _elements(src, n, esize, out, 0, head)
    body = (n - head) // _BLOCK * _BLOCK
    if body:
        _blocks(esize, src.ctypes.data, n, dst, head, body, streaming)
    _elements(src, n, esize, out, head + body, n)
    return True


@numba.njit(nogil=True, cache=True)
def unshuffle_into(src: Any, n: int, esize: int, out: Any, streaming: bool) -> bool:
    """`unshuffle_inline` compiled once for every element size (`kernels.unshuffler`)."""
    return unshuffle_inline(src, n, esize, out, streaming)


@numba.njit(nogil=True, cache=True)
def _unshuffle_any(src: Any, n: int, esize: int, out: Any, streaming: bool) -> None:
    """`unshuffle_into`, or the plain loop for what it declines (other sizes, strides)."""
    if esize == 1:
        _elements(src, n, esize, out, 0, n)   # a copy (a slice assignment compiles its
        # error message's string formatting, seconds of a first compile)
    elif not unshuffle_into(src, n, esize, out, streaming):
        _elements(src, n, esize, out, 0, n)


@numba.njit(nogil=True, cache=True, inline="always")
def bitunshuffle_block(src: Any, base: int, b: int, esize: int, out: Any, w: Any, wv: Any,
                       streaming: bool, fast_planes: bool) -> None:
    """One bitshuffle block of `b` elements (b % 8 == 0) of `esize` bytes at byte `base` of
    the flat uint8 `src`, into `out` at the same byte. Plane p = 8*j + k (bit k of byte j)
    holds b bits (b/8 bytes). Through the scratch `w` (at least b * esize bytes; `wv` the
    same memory as uint64), which stays in L1 (8 KiB): byte q of planes 8j..8j+7 gathered
    into word j*b/8 + q (plane k in byte k: an 8-byte unshuffle of the b/8 bytes of each of
    the 8 planes), every word 8x8 bit-transposed, which leaves byte j of element i at
    j*b + i; then the byte unshuffle of the block into `out`. The unshuffles by the block
    shuffles, addressed directly when the planes are whole steps (every block TileDB
    writes: an array slice per call costs reference counting, 576 calls per 64 KiB);
    measured 30.6 -> 19.9 us per 64 KiB of int64 (12 us of it the bit transpose, 18 vector
    operations per 4 words, on AMD Zen 1). Other blocks (a short last one): by the vector
    shuffles when `fast_planes`, by plain loops otherwise (the fused kernels: less to
    compile, for a block under 8 KiB). Inlined, so `esize` and `fast_planes` constants of
    the caller prune the other sizes' code."""
    pb = b // 8
    bs = b * esize
    direct = src.strides[0] == 1 and out.strides[0] == 1 and pb % _BLOCK == 0 \
        and (esize == 1 or esize == 2 or esize == 4 or esize == 8)
    sbase, obase, wbase = src.ctypes.data, out.ctypes.data, w.ctypes.data
    # constants passed to `_unshuffle_any` as typed values: a literal argument would compile
    # it once more, for that literal (`_blocks` is inlined: its literals fold away)
    eight: Any = np.int64(8)
    regular: Any = np.bool_(False)
    for g in range(esize):
        if direct:
            _blocks(8, sbase + base + 8 * g * pb, pb, wbase + 8 * g * pb, 0, pb, False)
        elif fast_planes:
            _unshuffle_any(src[base + 8 * g * pb:base + 8 * (g + 1) * pb], pb, eight,
                           w[8 * g * pb:8 * (g + 1) * pb], regular)
        else:
            _elements(src[base + 8 * g * pb:base + 8 * (g + 1) * pb], pb, 8,
                      w[8 * g * pb:8 * (g + 1) * pb], 0, pb)
    for i in range(esize * pb):   # LLVM vectorises this loop
        x = wv[i]
        t = (x ^ (x >> np.uint64(7))) & np.uint64(0x00AA00AA00AA00AA)
        x = x ^ t ^ (t << np.uint64(7))
        t = (x ^ (x >> np.uint64(14))) & np.uint64(0x0000CCCC0000CCCC)
        x = x ^ t ^ (t << np.uint64(14))
        t = (x ^ (x >> np.uint64(28))) & np.uint64(0x00000000F0F0F0F0)
        wv[i] = x ^ t ^ (t << np.uint64(28))
    if direct and esize > 1:
        _blocks(esize, wbase, b, obase + base, 0, b, streaming and (obase + base) % 16 == 0)
    elif fast_planes:
        _unshuffle_any(w, b, esize, out[base:base + bs], streaming)
    else:
        _elements(w, b, esize, out[base:base + bs], 0, b)


@numba.njit(nogil=True, cache=True)
def bitunshuffle_blocks(src: Any, nb: int, b: int, esize: int, out: Any,
                        streaming: bool = False) -> None:
    """`nb` bitshuffle blocks of `b` elements (b % 8 == 0) of `esize` bytes, flat uint8
    (`bitunshuffle_block`, each through one scratch block)."""
    w = np.empty(b * esize, np.uint8)
    wv = w.view(np.uint64)
    for blk in range(nb):
        bitunshuffle_block(src, blk * b * esize, b, esize, out, w, wv, streaming, True)
