"""Vectorised byte and bit transforms used by TileDB's filters (numpy only, no per-byte or
per-value Python loops).

- byte shuffle: blosc's layout, byte j of element i goes to `j*n + i`; the `size % E`
  trailing bytes are copied unchanged.
- bit shuffle: the bitshuffle library's (`bshuf_bitshuffle`, block size 0 = default): blocks of
  `max(128, 8192 // E // 8 * 8)` elements, then one block of the remainder rounded down to a
  multiple of 8 elements, then the last `n % 8` elements copied unchanged. Inside a block,
  bit k (LSB first) of byte j of element i lands in bit-plane `8*j + k` at bit `i` (LSB
  first within each plane byte).
- double-delta bit stream: records of `w` bits packed MSB first into 64-bit words that are
  stored little-endian.
- chains: positions of variable-length records (length read at each position), found by
  pointer doubling.
"""
from __future__ import annotations

import math
import threading

import numpy as np

from ..accel.kernels import bitunshuffle_blocks, unshuffler
from ..core import compiled

_M1, _M2, _M3 = np.uint64(0x00AA00AA00AA00AA), np.uint64(0x0000CCCC0000CCCC), np.uint64(0x00000000F0F0F0F0)
_S7, _S14, _S28 = np.uint64(7), np.uint64(14), np.uint64(28)


def _transpose8(x: np.ndarray) -> np.ndarray:
    """8x8 bit-matrix transpose of every uint64 (byte m bit k <-> byte k bit m), in place
    (three masked swaps, one scratch array)."""
    t = np.empty_like(x)
    for shift, mask in ((_S7, _M1), (_S14, _M2), (_S28, _M3)):
        np.right_shift(x, shift, out=t)
        t ^= x
        t &= mask
        x ^= t
        t <<= shift
        x ^= t
    return x


# ---- byte shuffle ----------------------------------------------------------------------
def byteshuffle(data: np.ndarray, esize: int) -> np.ndarray:
    n = len(data) // esize
    if esize <= 1 or n == 0:
        return data.copy()
    out = np.empty_like(data)
    out[:n * esize] = data[:n * esize].reshape(n, esize).T.ravel()
    out[n * esize:] = data[n * esize:]
    return out


def byteunshuffle(data: np.ndarray, esize: int) -> np.ndarray:
    n = len(data) // esize
    if esize <= 1 or n == 0:
        return data.copy()
    out = np.empty_like(data)
    byteunshuffle_rows(data.reshape(1, -1), esize, out.reshape(1, -1))
    return out


_U16, _U32 = np.uint16, np.uint32
_SCRATCH = threading.local()


def _scratch(name: str, shape, dtype) -> np.ndarray:
    """A per-thread scratch array (reused between calls: no fresh pages to fault in)."""
    cache = getattr(_SCRATCH, "arrays", None)
    if cache is None:
        cache = _SCRATCH.arrays = {}
    size = math.prod(shape)
    a = cache.get((name, np.dtype(dtype).str))
    if a is None or a.size < size:
        a = cache[(name, np.dtype(dtype).str)] = np.empty(max(size, 1), dtype)
    return a[:size].reshape(shape)


def byteunshuffle_rows(src: np.ndarray, esize: int, out: np.ndarray) -> None:
    """`out[g] = byteunshuffle(src[g], esize)` for every row of the (rows, size) uint8 arrays
    (the rows of `out` may be strided; every row the same size). Element sizes 2, 4 and 8
    are rebuilt with widening casts, shifts and ors (numpy's SIMD loops) instead of one
    strided byte copy per byte plane, which is bound at about a byte per cycle."""
    g, size = src.shape
    n = size // esize
    body = n * esize
    if esize <= 1 or n == 0 or g == 0:
        np.copyto(out, src)
        return
    kernel = unshuffler(g * size)
    if kernel is not None:   # one pass, each output byte stored once (kernels.py)
        for r in range(g):
            kernel(src[r], esize, out[r])
        return
    planes = src[:, :body].reshape(g, esize, n)
    dst = out[:, :body]
    wide = dst.strides[1] == 1 and (dst.ctypes.data % esize == 0) and \
        (dst.strides[0] % esize == 0)
    if esize == 2 and wide:
        y = _scratch("y", (g, 2, n), _U16)
        np.copyto(y, planes, casting="unsafe")
        y[:, 1] <<= _U16(8)
        np.bitwise_or(y[:, 0], y[:, 1], out=dst.view(_U16))
    elif esize == 4 and wide and g >= 4:
        y = _scratch("y", (g, 4, n), _U16)
        np.copyto(y, planes, casting="unsafe")
        hi, lo = y[:, 1::2], y[:, 0::2]
        hi <<= _U16(8)
        lo |= hi                                    # byte pairs (0,1) and (2,3) as u16
        z = _scratch("z", (g, 2, n), _U32)
        np.copyto(z, lo, casting="unsafe")
        z[:, 1] <<= _U32(16)
        np.bitwise_or(z[:, 0], z[:, 1], out=dst.view(_U32))
    elif esize == 8 and wide and g >= 4:
        y = _scratch("y", (g, 8, n), _U16)
        np.copyto(y, planes, casting="unsafe")
        hi, lo = y[:, 1::2], y[:, 0::2]
        hi <<= _U16(8)
        lo |= hi                                    # byte pairs as u16
        z = _scratch("z", (g, 4, n), _U32)
        np.copyto(z, lo, casting="unsafe")
        hi, lo = z[:, 1::2], z[:, 0::2]
        hi <<= _U32(16)
        lo |= hi                                    # low and high u32 of every element
        d = dst.view(_U32).reshape(g, n, 2)
        d[:, :, 0] = lo[:, 0]
        d[:, :, 1] = lo[:, 1]
    else:
        grid = dst.reshape(g, n, esize)
        for j in range(esize):  # one strided copy per byte plane
            grid[:, :, j] = planes[:, j]
    if body < size:
        out[:, body:] = src[:, body:]


# ---- bit shuffle -----------------------------------------------------------------------
def default_block(esize: int) -> int:
    """bshuf_default_block_size: elements per block."""
    return max(128, (8192 // esize) // 8 * 8)


def _blocks(n: int, esize: int):
    """(start element, elements) of every transposed block; the rest (n % 8) is raw."""
    b = default_block(esize)
    full = n // b
    out = []
    if full:
        out.append((0, full, b))
    last = (n % b) - (n % b) % 8
    if last:
        out.append((full * b, 1, last))
    return out


# A block of b elements of E bytes is a (8E bit-planes) x (b elements) bit matrix, stored
# plane after plane. Cut every plane into words of w = 8E bits: word q of plane p holds bit p
# of elements w*q .. w*q + w-1, so the block is b/w square w x w bit matrices and shuffling
# is transposing each of them. `_WORD` is the word type per element size; the transpose is
# log2(w) masked swaps (Hacker's Delight 7-3) run over every matrix of many blocks at once,
# with the words of one matrix row gathered into one long contiguous row first (so every
# numpy call streams through long arrays: no per-byte strided copies).
_WORD = {1: np.uint8, 2: np.uint16, 4: np.uint32, 8: np.uint64}
_SWAPS: dict = {}


def _swaps(esize: int):
    """(half distance d, mask of the bits whose index has bit d clear, d) per round."""
    out = _SWAPS.get(esize)
    if out is None:
        t, w = _WORD[esize], 8 * esize
        out = []
        d = w // 2
        while d:
            m = sum(1 << i for i in range(w) if not i & d)
            out.append((d, t(m), t(d)))
            d //= 2
        _SWAPS[esize] = out
    return out


def _transpose_words(x: np.ndarray, esize: int) -> None:
    """In place: x (w, M) words of w = 8*esize bits; the w x w bit matrix of every column
    (row r = word x[r, c]) transposed."""
    w, m = x.shape
    tmp = _scratch("bits swap", ((w // 2) * m,), x.dtype)
    for d, mask, sd in _swaps(esize):
        v = x.reshape(w // (2 * d), 2, d * m)
        a, b = v[:, 0], v[:, 1]
        t = tmp.reshape(w // (2 * d), d * m)
        np.right_shift(a, sd, out=t)
        t ^= b
        t &= mask
        b ^= t
        t <<= sd
        a ^= t


def _full_blocks(src: np.ndarray, dst: np.ndarray, nb: int, esize: int, forward: bool) -> None:
    """Bit (un)shuffle `nb` whole default blocks, flat uint8 `src` -> `dst` (same size)."""
    t, w = _WORD[esize], 8 * esize
    b = default_block(esize)
    words = b // w                                      # words per plane per block
    sv = src.view(t)
    dv = dst.view(t)
    step = compiled.TUNING.bit_blocks_per_step
    for a in range(0, nb, step):
        k = min(step, nb - a)
        lo, hi = a * b, (a + k) * b                     # in words (b elements = b words of E bytes)
        if esize == 1 and not forward:
            # one-byte elements: byte q of the 8 planes gathered into a u64 (the widening
            # byte unshuffle) and 8x8-transposed is elements 8q..8q+7 (no byte-strided copy)
            g = _scratch("bits g", (k, b), np.uint8)
            byteunshuffle_rows(src[lo:hi].reshape(k, b), 8, g)
            dst[lo:hi] = _transpose8(g.reshape(-1).view(np.uint64)).view(np.uint8)
            continue
        x = _scratch("bits x", (w, k, words), t)
        y = _scratch("bits y", (k, w, words), t)
        if forward:   # elements (k, words, w) -> matrices with rows = words of one element row
            np.copyto(y, sv[lo:hi].reshape(k, words, w).transpose(0, 2, 1))
            np.copyto(x, y.transpose(1, 0, 2))
        else:         # planes (k, w, words) -> one row per plane
            np.copyto(x, sv[lo:hi].reshape(k, w, words).transpose(1, 0, 2))
        _transpose_words(x.reshape(w, k * words), esize)
        if forward:
            np.copyto(dv[lo:hi].reshape(k, w, words), x.transpose(1, 0, 2))
        else:
            np.copyto(y, x.transpose(1, 0, 2))
            np.copyto(dv[lo:hi].reshape(k, words, w), y.transpose(0, 2, 1))


def _bytewise(seg: np.ndarray, esize: int, nb: int, b: int, forward: bool) -> np.ndarray:
    """`nb` blocks of `b` elements (a multiple of 8) the byte-plane way: 8x8 bit transposes
    of u64 words gathered by strided byte copies. Fewer numpy calls than the word
    transposes, so faster for a few blocks (one 64 KiB chunk); also the short last block
    and element sizes without a word type."""
    if forward:
        planes = seg.reshape(nb, b, esize).transpose(0, 2, 1).copy()  # (nb, E, b) bytes
        x = _transpose8(planes.view("<u8").reshape(nb, esize, b // 8))
        return x.view(np.uint8).reshape(nb, esize, b // 8, 8).transpose(0, 1, 3, 2).ravel()
    s = seg.reshape(nb, esize, 8, b // 8)
    words = np.empty((nb, esize, b // 8, 8), dtype=np.uint8)
    for k in range(8):  # per-plane strided copies beat one transposing copy
        words[:, :, :, k] = s[:, :, k, :]
    planes = _transpose8(words.view("<u8").reshape(nb, esize, b // 8)).view(np.uint8)
    out = np.empty((nb, b, esize), dtype=np.uint8)
    for j in range(esize):
        out[:, :, j] = planes.reshape(nb, esize, b)[:, j, :]
    return out.ravel()


def bitunshuffle_whole_blocks(src: np.ndarray, esize: int, nb: int, out: np.ndarray) -> None:
    """`nb` equal blocks of flat uint8 `src`, each bit-unshuffled as ONE transposed block of
    all its elements (blosc's bitshuffle: no inner bshuf blocking) into `out`; the element
    count per block must be a multiple of 8."""
    b = len(src) // (nb * esize)
    kernel = bitunshuffle_blocks.get(len(src))
    if kernel is not None:
        kernel(src, nb, b, esize, out)
        return
    out[:] = _bytewise(src, esize, nb, b, False)




def _bit(data: np.ndarray, esize: int, forward: bool, out: np.ndarray) -> None:
    n = len(data) // esize
    done = 0
    kernel = None if forward else bitunshuffle_blocks.get(len(data))
    for start, nb, b in _blocks(n, esize):
        lo, hi = start * esize, (start + nb * b) * esize
        if kernel is not None:   # one pass per block, in L1 (simd.py)
            kernel(data[lo:hi], nb, b, esize, out[lo:hi])
        elif esize in _WORD and b == default_block(esize) and nb >= compiled.TUNING.bit_words_min_blocks:
            _full_blocks(data[lo:hi], out[lo:hi], nb, esize, forward)
        else:
            out[lo:hi] = _bytewise(data[lo:hi], esize, nb, b, forward)
        done = hi
    out[done:] = data[done:]


def bitshuffle(data: np.ndarray, esize: int) -> np.ndarray:
    out = np.empty_like(data)
    _bit(data, esize, True, out)
    return out


def bitunshuffle(data: np.ndarray, esize: int) -> np.ndarray:
    out = np.empty_like(data)
    _bit(data, esize, False, out)
    return out


def bitunshuffle_rows(src: np.ndarray, esize: int, out: np.ndarray) -> None:
    """`out[g] = bitunshuffle(src[g], esize)` for every row of the (rows, size) uint8
    arrays. Rows that are whole blocks run as one flat array (a block never spans rows)."""
    g, size = src.shape
    block = default_block(esize) * esize
    if bitunshuffle_blocks.get(g * size) is not None:   # row by row, each in one pass
        for r in range(g):
            _bit(src[r], esize, False, out[r])
        return
    if esize in _WORD and size % block == 0 and out.flags.c_contiguous and \
            src.flags.c_contiguous and g * (size // block) >= compiled.TUNING.bit_words_min_blocks:
        _full_blocks(src.reshape(-1), out.reshape(-1), g * (size // block), esize, False)
        return
    for r in range(g):
        _bit(src[r], esize, False, out[r])


# ---- double-delta bit stream -----------------------------------------------------------
def pack_msb(records: np.ndarray, width: int) -> bytes:
    """`width`-bit records (uint64, < 2**width) packed MSB first into 64-bit words, stored
    little-endian; the last word zero-padded (none when there are no records)."""
    n = len(records)
    if n == 0:
        return b""
    be = records.astype(">u8").view(np.uint8).reshape(n, 8)
    bits = np.unpackbits(be, axis=1)[:, 64 - width:]
    stream = np.packbits(bits.ravel())  # MSB-first bytes, zero padded to a byte
    nwords = -(-(n * width) // 64)
    buf = np.zeros(nwords * 8, dtype=np.uint8)
    buf[:len(stream)] = stream
    return buf.view(">u8").astype("<u8").tobytes()


def unpack_msb(words: np.ndarray, n: int, width: int) -> np.ndarray:
    """n records of `width` bits (1..63) from MSB-first 64-bit words (native values)."""
    if n == 0:
        return np.zeros(0, dtype=np.uint64)
    if width <= 57:
        return _unpack_msb_strided(words, n, width)
    return _unpack_msb_gather(words, n, width)


def _unpack_msb_strided(words: np.ndarray, n: int, width: int) -> np.ndarray:
    """Every 8 records span exactly `width` bytes, so record j of each group of 8 starts at
    the same bit of its group: one strided, unaligned big-endian 64-bit read per j (a window
    that holds the record whole when width <= 57), then two shifts."""
    groups = -(-n // 8)
    stream = np.zeros(groups * width + 16, np.uint8)
    be = words.astype(">u8", copy=False).view(np.uint8)
    stream[:min(len(be), len(stream))] = be[:len(stream)]
    out = np.empty(groups * 8, np.uint64)
    dt = np.dtype(">u8")
    for j in range(8):
        bit = j * width
        win = np.ndarray((groups,), dt, buffer=stream, offset=bit >> 3, strides=(width,))
        v = win.astype(np.uint64)
        v <<= np.uint64(bit & 7)
        v >>= np.uint64(64 - width)
        out[j::8] = v
    return out[:n]


def _unpack_msb_gather(words: np.ndarray, n: int, width: int) -> np.ndarray:
    w = np.concatenate([words.astype(np.uint64, copy=False), np.zeros(1, dtype=np.uint64)])
    s = np.arange(n, dtype=np.uint64) * np.uint64(width)
    q = (s >> np.uint64(6)).astype(np.intp)
    o = s & np.uint64(63)
    hi = w[q] << o
    lo = (w[q + 1] >> np.uint64(1)) >> (np.uint64(63) - o)
    return (hi | lo) >> np.uint64(64 - width)


# ---- chains of variable-length records -------------------------------------------------
def chain(nxt: np.ndarray, end: int, limit: int):
    """Positions 0, nxt[0], nxt[nxt[0]], ... while < end. `nxt` (length end) must be
    > its index. Returns (positions, final position): final == end when the records tile
    [0, end) exactly. At most `limit` positions are followed."""
    if end <= 0:
        return np.zeros(0, dtype=np.int64), 0
    it = np.int32 if end < (1 << 30) else np.int64
    j = np.empty(end + 1, dtype=it)
    j[:end] = np.minimum(nxt, end + 0)  # anything past the end is absorbed at `end`
    j[end] = end
    levels = [j]
    while levels[-1][0] < end and (1 << (len(levels) - 1)) < limit:
        prev = levels[-1]
        levels.append(prev[prev])
    pos: np.ndarray = np.zeros(1, dtype=it)
    for lv in levels:
        pos = np.concatenate([pos, lv[pos]])
    keep = pos[pos < end]
    if len(keep) > limit:
        keep = keep[:limit]
    final = int(j[keep[-1]]) if len(keep) else 0
    # a record whose length runs past the end was clipped to `end`: report the real end
    raw_final = int(nxt[keep[-1]]) if len(keep) else 0
    return keep.astype(np.int64), (raw_final if raw_final != final else final)
