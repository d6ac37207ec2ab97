"""Compiled forward checks: does a typed codec's forward (its newest writer rule) of a
chunk's decoded cells reproduce the stored encoded part exactly? For `verify`'s chunk
windows (tiledb/verify/tile_batch.py), where the per-chunk `check_forward` (numpy, under the GIL,
a `Stage` per filter) cost 1.2 ms of every 64 KiB DOUBLE_DELTA chunk.

A check answers True only when `forward_check.check_forward` would say IDENTICAL with the
filter's first writer rule and no notes — the chunk is then clean; anything else (False)
sends the chunk to the per-chunk checks, which say what differs (another writer's rule, a
forward that refuses the tile, damage). So the findings are the same either way.

- DELTA: the part is `u64 n, v0, v_i - v_(i-1)` in the value type's wrapping arithmetic. The
  decoded cells are the prefix sums of the stored deltas, so forward gives the stored
  deltas back exactly: the part is reproduced iff it holds nothing more than those
  `8 + n * size` bytes (libtiledb 2.16's extra value is the other rule).
- DOUBLE_DELTA: re-encoded and compared word by word in one pass (`double_delta_matches`),
  as `deltas.DoubleDelta.compress_part` encodes with rule DD_FIRST_DELTA_COUNTED; a tile
  that rule refuses (a delta outside int64) is not matched.

The check built from these kernels (which filter, which rule first, the numpy fallback):
`filters/deltas.py typed_check`.
"""
from __future__ import annotations

from typing import Any

import numpy as np

from ..core.compiled import kernel

KIND_OTHER, KIND_I64, KIND_U64 = 0, 1, 2   # which delta overflow check the writer makes


@kernel
def double_delta_matches(v: Any, kind: int, size: int, enc: Any) -> bool:
    """DOUBLE_DELTA forward (rule DD_FIRST_DELTA_COUNTED) of the int64 values `v` (the cells
    widened as numpy's astype widens them) equals the uint8 part `enc`, whose first values
    (`enc[9:9 + 2 * size]`) the caller compared with the cells. False also when the writer
    would refuse the tile (a delta or a delta of deltas outside int64)."""
    n = len(v)
    bitsize = 0
    if n > 2:
        biggest = np.uint64(0)
        d0 = v[1] - v[0]
        prev = d0
        for i in range(1, n):
            d = v[i] - v[i - 1]
            if kind == 1 and ((v[i] ^ v[i - 1]) & (v[i] ^ d)) < 0:
                return False
            if kind == 2:
                a, b = np.uint64(v[i]), np.uint64(v[i - 1])
                if a >= b:
                    if a - b > np.uint64(9223372036854775807):
                        return False
                elif b - a > np.uint64(9223372036854775808):
                    return False
            if i >= 2:
                dd = d - prev
                if ((d ^ prev) & (d ^ dd)) < 0:
                    return False
                m = np.uint64(dd) if dd >= 0 else ~np.uint64(dd) + np.uint64(1)
                if m > biggest:
                    biggest = m
            prev = d
        m0 = np.uint64(d0) if d0 >= 0 else ~np.uint64(d0) + np.uint64(1)
        if m0 > biggest:
            biggest = m0
        bitsize = 1
        while bitsize < 64 and (biggest >> np.uint64(bitsize)) != np.uint64(0):
            bitsize += 1
    if len(enc) < 9 or enc[0] != bitsize:
        return False
    count = np.uint64(0)
    for j in range(8):
        count |= np.uint64(enc[1 + j]) << np.uint64(8 * j)
    if count != np.uint64(n):
        return False
    if bitsize >= 8 * size - 1:
        return False   # stored unencoded: the caller compares those bytes itself
    head = 9 + min(n, 2) * size
    if n <= 2:
        return len(enc) == head
    width = bitsize + 1
    nwords = ((n - 2) * width + 63) // 64
    if len(enc) != head + 8 * nwords:
        return False
    stored = np.empty(nwords, np.uint64)   # the part's words, little-endian
    for w in range(nwords):
        word = np.uint64(0)
        for j in range(8):
            word |= np.uint64(enc[head + 8 * w + j]) << np.uint64(8 * j)
        stored[w] = word
    acc = np.uint64(0)
    used = 0          # bits of `acc` filled, from the top
    k = 0             # words compared
    prev = v[1] - v[0]
    for i in range(2, n):
        d = v[i] - v[i - 1]
        dd = d - prev
        prev = d
        rec = np.uint64(dd) if dd >= 0 else \
            (~np.uint64(dd) + np.uint64(1)) | (np.uint64(1) << np.uint64(bitsize))
        room = 64 - used
        if width < room:
            acc |= rec << np.uint64(room - width)
            used += width
            continue
        over = width - room
        acc |= rec >> np.uint64(over)
        if stored[k] != acc:
            return False
        k += 1
        acc = rec << np.uint64(64 - over) if over else np.uint64(0)
        used = over
    if used:
        if stored[k] != acc:
            return False
        k += 1
    return k == nwords


# ---- forward stages computed in one pass (the per-chunk forward check, the window) -------
@kernel
def scale_forward(x: Any, offset: Any, scale: Any, bits64: bool, out: Any) -> None:
    """SCALE_FLOAT's forward into int64 `out` (the caller narrows to the byte width, keeping
    the low bytes): round((x - offset) / scale) in x's float type, halves away from zero
    (C `round`), then x86's conversion — NaN and values outside the 32- or 64-bit range
    give its minimum ("integer indefinite") — as `scale.c_round` / `scale.c_to_int` do."""
    lim = 9223372036854775808.0 if bits64 else 2147483648.0
    for i in range(len(x)):
        q = (x[i] - offset) / scale
        t = np.trunc(q)
        r = t + np.sign(q) if abs(q - t) >= 0.5 else t
        v = np.float64(r)
        out[i] = np.int64(v) if v >= -lim and v < lim else np.int64(-lim)


@kernel
def xor_forward(v: Any, out: Any) -> None:
    """XOR's forward: out[0] = v[0], out[i] = v[i] ^ v[i - 1]."""
    if len(v):
        out[0] = v[0]
    for i in range(1, len(v)):
        out[i] = v[i] ^ v[i - 1]


@kernel
def bwr_forward_part(vals: Any, raw: Any, ws: int, signed: bool, offs: Any, bits: Any,
                     out: Any) -> int:
    """BIT_WIDTH_REDUCTION's forward of one part (rule BWR_CHECKED_RANGE): `raw` its bytes,
    `vals` its whole values (type T), windows of `ws` bytes. Fills each window's offset
    (its minimum) and bit width, writes the data into `out` and returns its length; -1
    for a part with a window of no whole value or whose range is T's maximum or overflows
    (stored unreduced with an unset offset: the numpy forward says which bytes)."""
    size = vals.itemsize
    n = len(raw)
    nw = (n + ws - 1) // ws
    at = 0
    for k in range(nw):
        a = k * ws
        b = min(a + ws, n)
        lo = a // size
        hi = lo + (b - a) // size
        if hi == lo:
            return -1
        mn = vals[lo]
        mx = vals[lo]
        for i in range(lo + 1, hi):
            x = vals[i]
            if x < mn:
                mn = x
            if x > mx:
                mx = x
        if signed:
            r = np.int64(mx) - np.int64(mn)   # wraps for 8-byte T: the overflow test below
            if size < 8:
                if r >= (np.int64(1) << np.int64(8 * size - 1)) - np.int64(1):
                    return -1
            elif ((np.int64(mx) ^ np.int64(mn)) & (np.int64(mx) ^ r)) < 0 or \
                    r == np.int64(9223372036854775807):
                return -1
            v = r + np.int64(1)
            w = 64
            if -2147483648 <= v <= 2147483647:
                w = 32
            if -32768 <= v <= 32767:
                w = 16
            if -128 <= v <= 127:
                w = 8
        else:
            ru = np.uint64(mx) - np.uint64(mn)
            if ru == (np.uint64(1) << np.uint64(8 * size - 1) << np.uint64(1)) - np.uint64(1):
                return -1
            vu = ru + np.uint64(1)
            w = 64
            if vu < np.uint64(1 << 32):
                w = 32
            if vu < np.uint64(1 << 16):
                w = 16
            if vu < np.uint64(1 << 8):
                w = 8
        offs[k] = mn
        bits[k] = w   # also for a window stored as is for its trailing partial value
        if w < 8 * size and (b - a) % size == 0:
            nb = w // 8
            for i in range(lo, hi):
                if signed:
                    rel = np.uint64(np.int64(vals[i]) - np.int64(mn))
                else:
                    rel = np.uint64(vals[i]) - np.uint64(mn)
                for j in range(nb):
                    out[at + j] = np.uint8((rel >> np.uint64(8 * j)) & np.uint64(255))
                at += nb
        else:
            for i in range(a, b):
                out[at] = raw[i]
                at += 1
    return at


@kernel
def same_as_previous(buf: Any, starts: Any, lens: Any, out: Any) -> None:
    """out[i]: cell i (`buf[starts[i]:starts[i] + lens[i]]`) equals cell i - 1 (out[0]
    False): RLE's runs of strings, without a zero-padded row per cell."""
    if len(lens):
        out[0] = False
    for i in range(1, len(lens)):
        n = lens[i]
        eq = n == lens[i - 1]
        if eq:
            a, b = starts[i], starts[i - 1]
            for j in range(n):
                if buf[a + j] != buf[b + j]:
                    eq = False
                    break
        out[i] = eq
