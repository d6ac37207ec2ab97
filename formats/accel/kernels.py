"""Compiled kernels of the filter stages (`formats/core/compiled.py`: numba, nogil; each caller
keeps its numpy path for when `KERNEL.get(nbytes)` gives None).

Byte unshuffle: byte j of element i is at `j*n + i`. numpy rebuilds elements with widening
casts, shifts and ors over whole (rows, planes, n) arrays — several passes through memory —
where one loop stores each output byte once. LLVM vectorises the loop when the element size
is a constant (measured in cache: 25–29 GB/s for sizes 2, 4 and 8; 0.7–2 GB/s when the size
is only known at run time), hence one branch per common size.
"""
from __future__ import annotations

from typing import Any, Callable, Optional

import numpy as np

from ..core.compiled import MIN_BYTES, kernel, kernel_wanted


@kernel(stages=("BYTESHUFFLE",))   # numpy's byte un-shuffle does not load numba (compiled.py)
def unshuffle(src: Any, n: int, esize: int, out: Any) -> None:
    """out[i*esize + j] = src[j*n + i] for the n elements (flat uint8 arrays)."""
    if esize == 2:
        for i in range(n):
            for j in range(2):
                out[2 * i + j] = src[j * n + i]
    elif esize == 4:
        for i in range(n):
            for j in range(4):
                out[4 * i + j] = src[j * n + i]
    elif esize == 8:
        for i in range(n):
            for j in range(8):
                out[8 * i + j] = src[j * n + i]
    else:   # plane after plane: sequential reads (the element-major order does not vectorise)
        for j in range(esize):
            for i in range(n):
                out[esize * i + j] = src[j * n + i]


def unshuffler(nbytes: int) -> Optional[Callable[[np.ndarray, int, np.ndarray], None]]:
    """A compiled `f(src, esize, out)`: byte-unshuffle the flat uint8 `src` into the flat
    uint8 `out` of the same length (the `len % esize` tail bytes copied unchanged); None
    (no numba, `ARRAYSCOPE_NO_JIT=1`, or `nbytes` small while numba is not loaded): take
    the numpy path."""
    fn = unshuffle.get(nbytes)
    if fn is None:
        return None
    from .simd import unshuffle_into  # numba is loaded: the vector shuffles (sizes 2, 4, 8)

    def run(src: np.ndarray, esize: int, out: np.ndarray) -> None:
        n = len(src) // esize
        if not unshuffle_into(src, n, esize, out, False):
            fn(src, n, esize, out)
        body = n * esize
        if body < len(src):
            out[body:] = src[body:]
    return run


class _VectorKernel:
    """A kernel written with vector intrinsics in `simd.py` (numba only: it has no plain
    Python source), asked for like the others: `get(nbytes)` gives it or None."""

    def __init__(self, name: str) -> None:
        self.name = name

    def get(self, nbytes: int = MIN_BYTES) -> Optional[Callable[..., Any]]:
        if not kernel_wanted(nbytes):
            return None
        from . import simd
        return getattr(simd, self.name)


# `f(src, nb, b, esize, out)`: `nb` bitshuffle blocks of `b` elements (simd.py)
bitunshuffle_blocks = _VectorKernel("bitunshuffle_blocks")


# ---- TileDB's delta codecs and XOR: one pass where numpy makes several --------------------
@kernel
def double_delta_decode(wb: Any, n: int, bitsize: int, v0: int, v1: int, out: Any,
                        st: Any) -> None:
    """n int64 values of a DOUBLE_DELTA part into `out` (int64 or uint64, n values): v0,
    v1, then per value a sign bit and `bitsize` bits of |delta of deltas|, records of
    bitsize + 1 <= 63 bits packed MSB first into little-endian uint64 words, given as their
    bytes `wb` (exactly the words the records need); summed twice in wrapping int64 (as the
    writer). `st`: uint8 scratch of `len(wb) + 16` bytes at least. No array views and no
    allocation in here (each compiles numpy code into a first run; the callers pass them).
    One serial pass over the records: measured faster than records first then the sums
    (LLVM does not vectorise the unpack: it would take gathers). The records are read from
    a byte-swapped copy of the words in `st`, the stream as big-endian bytes: one unaligned
    8-byte load covers a record of up to 57 bits whatever its bit offset (7 bits at most +
    57), branch-free; measured 8.8 against 13.4 us per 8192 values for a two-word read with
    its crossing branch. Records of 58-63 bits take a ninth byte."""
    if n > 0:
        out[0] = v0
    if n > 1:
        out[1] = v1
    if n <= 2:
        return
    d = np.int64(v1) - np.int64(v0)
    prev = np.int64(v1)
    o = out[2:n]
    m = n - 2
    if bitsize == 0:             # every record a (signed) zero: the deltas stay d
        for i in range(m):
            prev += d
            o[i] = prev
        return
    # the MSB-first bit stream as bytes in stream order (each word byte-swapped; LLVM
    # vectorises it) and 16 zero bytes, so a 9-byte read at any record's byte is inside
    nb = len(wb)
    for k in range(nb // 8):
        for j in range(8):
            st[8 * k + j] = wb[8 * k + 7 - j]
    for k in range(nb, nb + 16):
        st[k] = 0
    width = np.uint64(bitsize + 1)
    drop = np.uint64(64 - bitsize)
    pos = np.uint64(0)
    if bitsize <= 56:
        for i in range(m):
            at = pos >> np.uint64(3)
            # the 8 bytes at `at` big-endian (LLVM makes it one `movbe` load), record on top
            x = ((np.uint64(st[at]) << np.uint64(56)) | (np.uint64(st[at + 1]) << np.uint64(48))
                 | (np.uint64(st[at + 2]) << np.uint64(40))
                 | (np.uint64(st[at + 3]) << np.uint64(32))
                 | (np.uint64(st[at + 4]) << np.uint64(24))
                 | (np.uint64(st[at + 5]) << np.uint64(16))
                 | (np.uint64(st[at + 6]) << np.uint64(8)) | np.uint64(st[at + 7])) \
                << (pos & np.uint64(7))
            s = np.int64(x) >> np.int64(63)                                # sign: 0 or -1
            mag = np.int64((x << np.uint64(1)) >> drop)
            d += (mag ^ s) - s
            prev += d
            o[i] = prev
            pos += width
        return
    for i in range(m):
        at = pos >> np.uint64(3)
        sh = pos & np.uint64(7)
        x = ((np.uint64(st[at]) << np.uint64(56)) | (np.uint64(st[at + 1]) << np.uint64(48))
             | (np.uint64(st[at + 2]) << np.uint64(40))
             | (np.uint64(st[at + 3]) << np.uint64(32))
             | (np.uint64(st[at + 4]) << np.uint64(24))
             | (np.uint64(st[at + 5]) << np.uint64(16))
             | (np.uint64(st[at + 6]) << np.uint64(8)) | np.uint64(st[at + 7])) << sh
        if sh:   # the top bits of the ninth byte, where the shift made room
            x |= np.uint64(st[at + 8]) >> (np.uint64(8) - sh)
        s = np.int64(x) >> np.int64(63)
        mag = np.int64((x << np.uint64(1)) >> drop)
        d += (mag ^ s) - s
        prev += d
        o[i] = prev
        pos += width


@kernel
def prefix_sum(d: Any, out: Any) -> None:
    """out[i] = d[0] + ... + d[i], wrapping in out's integer type (DELTA's reverse)."""
    s = d[0] - d[0]
    for i in range(len(d)):
        s += d[i]
        out[i] = s


@kernel
def prefix_xor(d: Any, out: Any) -> None:
    """out[i] = d[0] ^ ... ^ d[i] (XOR's reverse)."""
    s = d[0] ^ d[0]
    for i in range(len(d)):
        s ^= d[i]
        out[i] = s


@kernel
def unscale(ints: Any, scale: float, offset: float, via32: bool, out: Any) -> None:
    """SCALE_FLOAT's reverse: out[i] = scale * float(ints[i]) + offset in double precision,
    stored as out's float type; `via32`: the integer is first made a float32 (as numpy's
    `ints.astype(float32).astype(float64)`)."""
    for i in range(len(ints)):
        x = np.float64(np.float32(ints[i])) if via32 else np.float64(ints[i])
        out[i] = scale * x + offset
