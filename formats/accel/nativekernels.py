"""Compiled kernels that call C codecs (`native.py`) with the GIL released: a whole run of
chunks decoded per call. Imported only through `fused.py`, once numba is known to load.

A C function is called through its address, an integer argument (`_c_function`): the
compiled code holds no address, so numba caches it on disk like the other kernels. Pointer
arguments travel as 64-bit integers, which every supported ABI passes as pointers are.

Each chunk kernel is made per form of its pipeline — the codec, and the shuffle and its
element size, the typed codec, or the integer size (`_shuffled_kernel(codec, shuffle,
esize)` and the like: a closure whose constants numba prunes on before typing) — by
`_form`, on first use, and the Python-level `shuffled_chunks`, `typed_chunks`, ... pick
the form's kernel: a filter stack's first run compiles its own decoder only, in one
function (its stages inlined: every compiled function of its own costs a first run
tenths of a second more; docs/DESIGN.md, "The first run"). Inside the kernels: no array
slice assignment (`_copy`), no array view or allocation (the Python wrappers pass scratch
arrays and views: each compiles numpy code into a first run), no literal argument to
another compiled function that is not inlined.
"""
from __future__ import annotations

import threading
from typing import Any, Callable, Dict, Tuple

import numba
import numpy as np
from llvmlite import ir
from numba import types
from numba.extending import intrinsic

from .kernels import (
    double_delta_decode,
    prefix_sum,
    prefix_xor,
    unscale,
)
from .native import Codec
from .simd import _elements, bitunshuffle_block, store_fence, unshuffle_inline
from .unread import metadata_decodes

# the one rule for chunk metadata longer than its tables (`unread.py`), compiled
_md_decodes: Any = numba.njit(nogil=True, cache=True, inline="always")(metadata_decodes)

# the shuffle before the codec (`fused.FusedPlan.shuffle`)
NONE, BYTES, BITS = 0, 1, 2

ZSTD, LZ4, BZIP2 = int(Codec.ZSTD), int(Codec.LZ4), int(Codec.BZIP2)

# the kernels made so far, by form (`_form`)
_FORMS: Dict[Tuple[Any, ...], Any] = {}
_forms_lock = threading.Lock()


def _form(make: Callable[..., Any], *key: Any) -> Any:
    """The kernel `make(*key)` makes, made once per form: `make` is a closure factory over
    the form's constants (plain ints and bools, which numba's cache key pickles), so numba
    prunes the other forms' branches before typing and caches each form apart."""
    k = (make.__name__,) + key
    kernel = _FORMS.get(k)
    if kernel is None:
        with _forms_lock:
            kernel = _FORMS.setdefault(k, make(*key))
    return kernel


def _c_function(widths: Tuple[int, ...], ret: int, variadic: bool = False) -> Any:
    """An intrinsic `call(address, (a, b, ...))` of a C function taking integers of these
    bit widths (pointers and size_t 64) and returning one of `ret` bits, sign-extended to
    int64; the arguments are a tuple of uint64. `variadic`: the function is declared with
    `...` after them (libc's `open`), so it is called as C calls such a function."""
    def typer(typingctx: Any, fn: Any, args: Any) -> Any:
        if not (isinstance(args, types.UniTuple) and args.count == len(widths)
                and args.dtype == types.uint64):
            return None

        def codegen(context: Any, builder: Any, signature: Any, llargs: Any) -> Any:
            fnty = ir.FunctionType(ir.IntType(ret), [ir.IntType(w) for w in widths],
                                   var_arg=variadic)
            vals = [builder.extract_value(llargs[1], i) for i in range(len(widths))]
            vals = [v if w == 64 else builder.trunc(v, ir.IntType(w))
                    for v, w in zip(vals, widths)]
            r = builder.call(builder.inttoptr(llargs[0], fnty.as_pointer()), vals)
            return r if ret == 64 else builder.sext(r, ir.IntType(64))
        return types.int64(types.uint64, args), codegen
    return intrinsic(typer)


_size_t5 = _c_function((64, 64, 64, 64, 64), 64)   # ZSTD_decompressDCtx
_lz4_safe = _c_function((64, 64, 32, 32), 32)      # LZ4_decompress_safe(src, dst, n, cap)
_bz2_buff = _c_function((64, 64, 64, 32, 32, 32), 32)   # BZ2_bzBuffToBuffDecompress

_U = np.uint64
_INT_MAX = 0x7FFFFFFF


@numba.njit(nogil=True, cache=True)
def _u32(a: Any, i: Any) -> Any:
    """The little-endian u32 at `i`, as int64. Not inlined by numba (LLVM inlines it): at
    numba's level every call site would translate it again, tenths of a second of a first
    run over a kernel's dozen reads. Callers pass `i` as an int64, never a literal
    (`np.int64(4)`): each literal would compile it once more."""
    return (np.int64(a[i]) | (np.int64(a[i + 1]) << 8) | (np.int64(a[i + 2]) << 16)
            | (np.int64(a[i + 3]) << 24))


@numba.njit(nogil=True, cache=True, inline="always")
def _get64(a: Any, at: int) -> Any:
    v = np.int64(0)
    for k in range(8):
        v |= np.int64(a[at + k]) << (8 * k)
    return v


@numba.njit(nogil=True, cache=True, inline="always")
def _copy(dst: Any, src: Any) -> None:
    """dst[:] = src, as a loop: numba's slice assignment compiles the formatting of its
    shape-mismatch message (string code, about 5 s of a first compile); the callers have
    checked the lengths are equal."""
    for i in range(min(len(dst), len(src))):
        dst[i] = src[i]


@numba.njit(nogil=True, cache=True, inline="always")
def _part(codec: int, fns: Any, ctx: int, src: int, size: int, dst: int, n: int,
          lengths: Any) -> bool:
    """Decompress the part at address `src` (`size` bytes) into `n` bytes at `dst`. True
    only when the Python path (`compression.py`) would return exactly those `n` bytes, by
    libtiledb's rule for what follows the data: ZSTD the whole part through
    `ZSTD_decompressDCtx`, as libtiledb and `compression.Zstd` call it (frames in turn,
    skippable ones skipped, anything else after them an error); LZ4 a block of exactly
    `n`; BZIP2 one complete stream of exactly `n` (what follows its end is ignored, by
    libtiledb and the Python decompressor). Anything else: False — the
    Python path then decodes the part and says what is wrong. `lengths` is a uint64[2]
    scratch for in/out lengths. Inlined: the kernels pass their closure's constant `codec`,
    so the other codecs' calls are pruned before typing."""
    if codec == ZSTD:
        return _size_t5(fns[0], (_U(ctx), _U(dst), _U(n), _U(src), _U(size))) == n
    if codec == LZ4:
        if n == 0:
            return True   # the binding returns b"" without looking
        if n > _INT_MAX or size > _INT_MAX:
            return False
        return _lz4_safe(fns[0], (_U(src), _U(dst), _U(size), _U(n))) == n
    at = lengths.ctypes.data
    if codec == BZIP2:
        if n > 0xFFFFFFFF or size > 0xFFFFFFFF:
            return False
        lengths[0] = n   # read as an unsigned int: the low half on a little-endian machine
        ok = _bz2_buff(fns[0], (_U(dst), _U(at), _U(src), _U(size), _U(0), _U(0))) == 0
        return ok and (lengths[0] & 0xFFFFFFFF) == n
    return False


@numba.njit(nogil=True, cache=True, inline="always")
def _bitunshuffle(src: Any, esize: int, out: Any, streaming: bool, w: Any, wv: Any) -> None:
    """`bits._bit` reversed: whole blocks of `default_block` elements, then one block of
    the remaining multiple of 8 elements, then the last bytes as they are; `w`, `wv` the
    scratch block (`simd.bitunshuffle_block`). One call site of the block's code, so it is
    compiled once into the kernel."""
    n = len(src) // esize
    b = max(128, (8192 // esize) // 8 * 8)    # bits.default_block
    full = n // b
    last = (n % b) - (n % b) % 8
    for blk in range(full + (1 if last else 0)):
        bitunshuffle_block(src, blk * b * esize, b if blk < full else last, esize, out, w, wv,
                           streaming, False)
    for t in range((full * b + last) * esize, len(src)):
        out[t] = src[t]


def _tables(size: int) -> Tuple[np.ndarray, np.ndarray]:
    """A kernel call's scratch, made here rather than in the kernel (a kernel's `np.zeros`
    compiles numpy's allocation code into it, half a second of a first run): `size` bytes
    for a filter's part table, decompressed, and the uint64[2] in/out lengths of `_part`."""
    return np.zeros(size, np.uint8), np.zeros(2, np.uint64)


def _words(a: np.ndarray, dtype: Any) -> np.ndarray:
    """The uint8 array `a` as whole values of `dtype` (a view: the kernels index values
    without making views themselves); empty where `a` does not start at a multiple of the
    value size (the kernels then leave every chunk to the Python path)."""
    size = np.dtype(dtype).itemsize
    if a.ctypes.data % size:
        return np.zeros(0, dtype)
    return a[:len(a) // size * size].view(dtype)


def _shuffled_kernel(codec: int, shuffle: int, esize: int) -> Any:
    """`shuffled_chunks` for one codec, one `shuffle` (NONE, BYTES or BITS) and its element
    size, constants of the closure: numba prunes the other codecs', shuffles' and sizes'
    branches before typing them, so a stack compiles only its own codec call and un-shuffle
    (one kernel for every form took 10–20 s to compile on first use)."""

    @numba.njit(nogil=True, cache=True)
    def chunks(fns: Any, ctx: int, src: Any, md_off: Any, md_len: Any, data_off: Any,
               data_len: Any, orig: Any, out_pos: Any, out: Any, scratch: Any, w: Any,
               wv: Any, status: Any, streaming: bool, table: Any, lengths: Any) -> None:
        nsrc = len(src)
        base = src.ctypes.data
        obase = out.ctypes.data
        sbase = scratch.ctypes.data
        tbase = table.ctypes.data
        want_md = 1 if shuffle != NONE else 0
        for i in range(len(orig)):
            status[i] = 1
            m, ml, d, dl = md_off[i], md_len[i], data_off[i], data_len[i]
            n, p = orig[i], out_pos[i]
            if m < 0 or not _md_decodes(ml, 8) or m + ml > nsrc or d < 0 or dl < 0 \
                    or d + dl > nsrc or n < 0 or p < 0 or p + n > len(out):
                continue
            nmd, ndata = _u32(src, m), _u32(src, m + 4)
            if ndata != 1 or nmd != want_md or not _md_decodes(ml, 8 + 8 * (nmd + ndata)):
                continue
            if shuffle == NONE:
                o2, c2 = _u32(src, m + 8), _u32(src, m + 12)
                if o2 != n or c2 != dl:
                    continue
                if not _part(codec, fns, ctx, base + d, dl, obase + p, n, lengths):
                    continue
                status[i] = 0
                continue
            if shuffle == BITS:
                if n % esize or n % 8:
                    continue
            o1, c1, o2, c2 = _u32(src, m + 8), _u32(src, m + 12), _u32(src, m + 16), \
                _u32(src, m + 20)
            if o1 != 8 or o2 != n or c1 + c2 != dl or n > len(scratch):
                continue
            if not _part(codec, fns, ctx, base + d, c1, tbase, 8, lengths) \
                    or _u32(table, np.int64(0)) != 1 or _u32(table, np.int64(4)) != n:
                continue
            if not _part(codec, fns, ctx, base + d + c1, c2, sbase, n, lengths):
                continue
            if shuffle == BITS:
                _bitunshuffle(scratch[:n], esize, out[p:p + n], streaming, w, wv)
            else:
                k = n // esize
                if not unshuffle_inline(scratch[:n], k, esize, out[p:p + n], streaming):
                    _elements(scratch, k, esize, out[p:p + n], 0, k)   # other sizes
                for t in range(k * esize, n):   # the tail the shuffle leaves as it is
                    out[p + t] = scratch[t]
            status[i] = 0
        if streaming:
            store_fence()
    return chunks


def shuffled_chunks(codec: int, fns: Any, ctx: int, src: Any, md_off: Any, md_len: Any,
                    data_off: Any, data_len: Any, orig: Any, out_pos: Any, out: Any,
                    shuffle: int, esize: int, scratch: Any, status: Any,
                    streaming: bool) -> None:
    """Decode the [BYTESHUFFLE or BITSHUFFLE, codec] (`shuffle` BYTES or BITS, elements of
    `esize` bytes) or [codec] (`shuffle` NONE) chunks whose metadata and data are at the
    given offsets of the uint8 file `src`, each into `out[out_pos:out_pos + orig]`
    (`streaming`: the byte unshuffle writes around the cache, `simd.py`), by the kernel
    compiled for that form (called from Python: the kernel holds no GIL).
    `status[i]` is 0 when chunk i is decoded, 1 when it is left to the Python path: a part
    table other than the expected one, a range outside the file, any codec disagreement
    (`batch._decompress` makes the same checks), or a BITSHUFFLE chunk that is not whole
    elements of a multiple of 8 bytes (`batch.reverse_into` leaves those too)."""
    if shuffle != NONE and esize <= 0:
        return   # no element size: the Python path
    table, lengths = _tables(8)
    # the bit un-shuffle's scratch block (`simd.bitunshuffle_block`: b * esize bytes)
    w = np.zeros(max(8192, 128 * esize) if shuffle == BITS else 8, np.uint8)
    kernel = _form(_shuffled_kernel, int(codec), int(shuffle),
                   int(esize) if shuffle != NONE else 0)
    kernel(fns, ctx, src, md_off, md_len, data_off, data_len, orig, out_pos, out, scratch,
           w, w.view(np.uint64), status, bool(streaming), table, lengths)


# the typed codec before the compressor (`fused.FusedPlan.typed`)
DELTA, DOUBLE_DELTA = 1, 2
# numba constants of `filters/batch.py`'s typed-codec rule (`_TYPED_TABLE`, `TYPED_SLACK`;
# tests/filters/test_kernels.py holds them equal)
_TYPED_TABLE = 16   # the typed codec's own part table: no metadata part, one data part
_TYPED_SLACK = 64   # an encoded part longer than orig + this: the Python path's checks
# where the encoded part lands in scratch, so that its 8-byte values are aligned:
# DELTA's at byte 8 of the part, DOUBLE_DELTA's first values at 9 and words at 25
# (0 for DELTA, 7 for DOUBLE_DELTA: `typed_chunks`)
_ENC_MAX = 7

_double_delta: Any = double_delta_decode.inlined()
_prefix_sum: Any = prefix_sum.inlined()


@numba.njit(nogil=True, cache=True, inline="always")
def _undelta(enc: Any, n_enc: int, words: Any, out: Any, out64: Any) -> bool:
    """The 8-byte values of one DELTA part (`enc[:n_enc]`, bytes; `words` the part as
    uint64, `out64` the uint8 `out` as uint64) into `out`, exactly as
    `deltas.Delta.decompress_part` gives them; False where it raises (or gives another
    length): the Python path reports it."""
    orig = len(out)
    if n_enc < 8:
        return False
    n = _u64(enc, np.int64(0))
    if n * 8 != orig or n_enc < 8 + orig or len(out64) != n or len(words) < 1 + n:
        return False
    if n:
        _prefix_sum(words[1:1 + n], out64)
    return True


@numba.njit(nogil=True, cache=True, inline="always")
def _undouble_delta(enc: Any, n_enc: int, out: Any, out64: Any, st: Any) -> bool:
    """`_undelta` for one DOUBLE_DELTA part (`deltas.DoubleDelta.decompress_part`); `st`
    the decoder's scratch (`kernels.double_delta_decode`)."""
    orig = len(out)
    if n_enc < 9:
        return False
    bitsize = np.int64(enc[0])
    if bitsize >= 63:                      # stored raw: `data[9:9 + orig + 1]`
        if n_enc - 9 != orig:
            return False
        _copy(out, enc[9:9 + orig])
        return True
    n = _u64(enc, np.int64(1))
    if n * 8 != orig or len(out64) != n:
        return False
    head = min(n, 2)
    if n_enc < 9 + head * 8:
        return False
    if n <= 2:
        _copy(out, enc[9:9 + orig])
        return True
    nwords = ((n - 2) * (bitsize + 1) + 63) // 64
    if n_enc < 25 + 8 * nwords or len(st) < 8 * nwords + 16:
        return False
    v0, v1 = _u64(enc, np.int64(9)), _u64(enc, np.int64(17))
    _double_delta(enc[25:25 + 8 * nwords], n, bitsize, v0, v1, out64, st)
    return True


@numba.njit(nogil=True, cache=True)
def _u64(a: Any, i: Any) -> Any:
    return _u32(a, i) | (_u32(a, i + 4) << 32)


def _typed_kernel(codec: int, typed: int) -> Any:
    """`typed_chunks` for one codec and one typed codec (DELTA or DOUBLE_DELTA), constants
    of the closure: a stack compiles only its own decoder (see `_shuffled_kernel`)."""

    @numba.njit(nogil=True, cache=True)
    def chunks(fns: Any, ctx: int, src: Any, md_off: Any, md_len: Any, data_off: Any,
               data_len: Any, orig: Any, out_pos: Any, out: Any, out64: Any, scratch: Any,
               scratch64: Any, st: Any, status: Any, table: Any, lengths: Any) -> None:
        nsrc = len(src)
        base = src.ctypes.data
        at = 0 if typed == DELTA else _ENC_MAX   # where the encoded part lands (see above)
        sbase = scratch.ctypes.data + at
        tbase = table.ctypes.data
        for i in range(len(orig)):
            status[i] = 1
            m, ml, d, dl = md_off[i], md_len[i], data_off[i], data_len[i]
            n, p = orig[i], out_pos[i]
            if m < 0 or not _md_decodes(ml, 24) or m + ml > nsrc or d < 0 or dl < 0 \
                    or d + dl > nsrc or n < 0 or p < 0 or p + n > len(out) \
                    or (out.ctypes.data + p) % 8 or (p + n) // 8 > len(out64):
                continue
            if _u32(src, m) != 1 or _u32(src, m + 4) != 1:
                continue
            o1, c1, o2, c2 = _u32(src, m + 8), _u32(src, m + 12), _u32(src, m + 16), \
                _u32(src, m + 20)
            if o1 != _TYPED_TABLE or c1 + c2 != dl or o2 > n + _TYPED_SLACK \
                    or at + o2 > len(scratch):
                continue
            if not _part(codec, fns, ctx, base + d, c1, tbase, _TYPED_TABLE, lengths):
                continue
            if _u32(table, np.int64(0)) != 0 or _u32(table, np.int64(4)) != 1 \
                    or _u32(table, np.int64(8)) != n or _u32(table, np.int64(12)) != o2:
                continue
            if not _part(codec, fns, ctx, base + d + c1, c2, sbase, o2, lengths):
                continue
            q = p // 8   # out64's value at p (`out` starts at a multiple of 8: checked)
            if typed == DELTA:
                ok = _undelta(scratch[at:at + o2], o2, scratch64, out[p:p + n],
                              out64[q:q + n // 8])
            else:
                ok = _undouble_delta(scratch[at:at + o2], o2, out[p:p + n],
                                     out64[q:q + n // 8], st)
            if ok:
                status[i] = 0
    return chunks


def typed_chunks(codec: int, fns: Any, ctx: int, src: Any, md_off: Any, md_len: Any,
                 data_off: Any, data_len: Any, orig: Any, out_pos: Any, out: Any,
                 typed: int, scratch: Any, status: Any) -> None:
    """Decode [DELTA or DOUBLE_DELTA (`typed`), codec] chunks of 8-byte values — the codec
    into `scratch`, the typed codec from there into `out[out_pos:out_pos + orig]` — with
    the checks `batch._decompress_typed` and the typed codecs make; `status` as for
    `shuffled_chunks`. `scratch` holds `_ENC_MAX + orig + _TYPED_SLACK` bytes."""
    table, lengths = _tables(_TYPED_TABLE)
    kernel = _form(_typed_kernel, int(codec), int(typed))
    st = np.empty(len(scratch) + 16 if typed == DOUBLE_DELTA else 0, np.uint8)
    kernel(fns, ctx, src, md_off, md_len, data_off, data_len, orig, out_pos, out,
           _words(out, np.uint64), scratch, _words(scratch, np.uint64), st, status, table,
           lengths)


_prefix_xor: Any = prefix_xor.inlined()
_unscale: Any = unscale.inlined()


def _scaled_kernel(codec: int, has_scale: bool, has_xor: bool, width: int, fsize: int
                   ) -> Any:
    """`scaled_chunks` for one codec and one form of the pipeline (constants of the
    closure: a stack compiles its own codec call, views and loops only, see
    `_shuffled_kernel`)."""

    @numba.njit(nogil=True, cache=True)
    def chunks(fns: Any, ctx: int, src: Any, md_off: Any, md_len: Any,
               data_off: Any, data_len: Any, orig: Any, out_pos: Any, out: Any,
               scale: float, offset: float, scratch: Any, xv: Any, sv: Any, fv: Any,
               status: Any, table: Any, lengths: Any) -> None:
        nsrc = len(src)
        base = src.ctypes.data
        obase = out.ctypes.data
        tbase = table.ctypes.data
        nmd = np.int64(has_scale) + np.int64(has_xor)
        align = fsize if has_scale else width   # the output viewed as these values
        for i in range(len(orig)):
            status[i] = 1
            m, ml, d, dl = md_off[i], md_len[i], data_off[i], data_len[i]
            n, p = orig[i], out_pos[i]
            if m < 0 or not _md_decodes(ml, 8 + 8 * (nmd + 1)) or m + ml > nsrc or d < 0 or dl < 0 \
                    or d + dl > nsrc or n < 0 or p < 0 or p + n > len(out) \
                    or (obase + p) % align:
                continue
            if _u32(src, m) != nmd or _u32(src, m + 4) != 1:
                continue
            last = m + 8 + 8 * nmd
            size, clen = _u32(src, last), _u32(src, last + 4)   # the data part
            total = clen
            ok = True
            for t in range(nmd):
                total += _u32(src, m + 12 + 8 * t)
                if _u32(src, m + 8 + 8 * t) != 8:
                    ok = False
            if not ok or total != dl or size % width:
                continue
            if has_scale:
                if size // width * fsize != n or size > len(scratch) \
                        or (p + n) // fsize > len(fv):
                    continue
            elif size != n or (p + n) // width > len(xv):
                continue
            at = d
            for t in range(nmd):    # every table: one part of the data part's length
                c = _u32(src, m + 12 + 8 * t)
                if not _part(codec, fns, ctx, base + at, c, tbase, 8, lengths) \
                        or _u32(table, np.int64(0)) != 1 or _u32(table, np.int64(4)) != size:
                    ok = False
                    break
                at += c
            if not ok:
                continue
            dst = scratch[:size] if has_scale else out[p:p + n]
            if not _part(codec, fns, ctx, base + at, clen, dst.ctypes.data, size, lengths):
                continue
            k = size // width   # whole values (the tail bytes stay)
            at_v = 0 if has_scale else p // width   # the values' index in `xv`
            if has_xor and k:   # XOR's reverse on the whole values, in place
                _prefix_xor(xv[at_v:at_v + k], xv[at_v:at_v + k])
            if has_scale:   # the signed `width`-byte integers into `fsize`-byte floats
                _unscale(sv[:k], scale, offset, fsize == 4, fv[p // fsize:p // fsize + k])
            status[i] = 0
    return chunks


_INTS = {1: (np.uint8, np.int8), 2: (np.uint16, np.int16), 4: (np.uint32, np.int32),
         8: (np.uint64, np.int64)}


def scaled_chunks(codec: int, fns: Any, ctx: int, src: Any, md_off: Any, md_len: Any,
                  data_off: Any, data_len: Any, orig: Any, out_pos: Any, out: Any,
                  has_scale: bool, has_xor: bool, width: int, fsize: int, scale: float,
                  offset: float, scratch: Any, status: Any) -> None:
    """Decode [SCALE_FLOAT?, XOR?, codec] chunks: the codec's data part (integers of `width`
    bytes) into `scratch` (or straight into the output when there is no SCALE_FLOAT), XOR's
    prefix xor in place, SCALE_FLOAT's `scale * x + offset` into `fsize`-byte floats in
    `out`. Each earlier filter's part table must be one part of the data part's length;
    `status` as for `shuffled_chunks`."""
    if width not in (1, 2, 4, 8) or (has_scale and fsize not in (4, 8)):
        return   # not a form the filters write: the Python path
    kernel = _form(_scaled_kernel, int(codec), bool(has_scale), bool(has_xor), int(width),
                   int(fsize) if has_scale else 0)
    table, lengths = _tables(8)
    unsigned, signed = _INTS[width]
    # the values as the kernel indexes them (views made here, not in the kernel): the
    # integers where the codec writes them (scratch, or the output without SCALE_FLOAT)
    # as XOR (unsigned) and SCALE_FLOAT (signed) read them, and the output's floats
    ints = scratch if has_scale else out
    xv = _words(ints, unsigned) if has_xor else np.zeros(0, unsigned)
    sv = _words(scratch, signed) if has_scale else np.zeros(0, signed)
    fv = _words(out, np.float32 if fsize == 4 else np.float64) if has_scale \
        else np.zeros(0, np.float32)
    kernel(fns, ctx, src, md_off, md_len, data_off, data_len, orig, out_pos, out,
           float(scale), float(offset), scratch, xv, sv, fv, status, table, lengths)


@numba.njit(nogil=True, cache=True, inline="always")
def _reduced_value(data: Any, at: int, w: int, signed: bool) -> Any:
    """The `w`-byte little-endian value at `at`, sign-extended when `signed`, as uint64."""
    if w == 1:
        x = np.uint64(data[at])
        if signed and x >= np.uint64(0x80):
            x |= ~np.uint64(0xFF)
    elif w == 2:
        x = np.uint64(data[at]) | (np.uint64(data[at + 1]) << np.uint64(8))
        if signed and x >= np.uint64(0x8000):
            x |= ~np.uint64(0xFFFF)
    else:
        x = np.uint64(data[at]) | (np.uint64(data[at + 1]) << np.uint64(8)) \
            | (np.uint64(data[at + 2]) << np.uint64(16)) | (np.uint64(data[at + 3]) << np.uint64(24))
        if signed and x >= np.uint64(0x80000000):
            x |= ~np.uint64(0xFFFFFFFF)
    return x


@numba.njit(nogil=True, cache=True, inline="always")
def _window_into(values: Any, data: Any, ip: int, cnt: int, w: int, signed: bool,
                 off: Any, size: int) -> None:
    """`cnt` reduced values of `w` bytes (1, 2 or 4: less than `size`, the integers' size)
    from `data[ip:]`, plus the window offset, wrapping, into the `size`-byte unsigned
    `values`. One loop per width, so the compiler sees a constant width; a caller whose
    `size` is a constant compiles the widths below it only."""
    if w == 1:
        for v in range(cnt):
            values[v] = _reduced_value(data, ip + v, 1, signed) + off
    elif size > 2 and w == 2:
        for v in range(cnt):
            values[v] = _reduced_value(data, ip + 2 * v, 2, signed) + off
    elif size > 4:
        for v in range(cnt):
            values[v] = _reduced_value(data, ip + 4 * v, 4, signed) + off


@numba.njit(nogil=True, cache=True, inline="always")
def _unreduce(md: Any, data: Any, out: Any, outv: Any, signed: bool, size: int) -> bool:
    """BIT_WIDTH_REDUCTION's reverse (`windows.BitWidthReduction._reverse`) of one chunk of
    `size`-byte integers: the window table `md` (length of input, window count, then per
    window the value offset of `size` bytes, the bit width and the window length) over
    `data` into `out` (`outv`: the same bytes as `size`-byte unsigned values when `out`
    starts at a multiple of `size`, else empty). False where the Python path raises, where
    its table leaves metadata over (the Python path decides what that means), or where a
    reduced window's values do not start at a multiple of their size in memory (never in
    the buffers `values` and verify decode into; a byte loop for it cost a first run
    more compile than it ever saved)."""
    if len(md) < 8:
        return False
    rs = size + 5
    nw = _u32(md, np.int64(4))
    if _u32(md, np.int64(0)) != len(out) or 8 + nw * rs != len(md):
        return False
    total, needed = 0, 0
    for k in range(nw):
        r = 8 + k * rs
        bits, ln = int(md[r + size]), _u32(md, r + size + 1)
        reduced = bits < 8 * size and ln % size == 0
        if reduced and bits != 8 and bits != 16 and bits != 32 and bits != 64:
            return False
        total += ln
        needed += ln // size * (bits // 8) if reduced else ln
    if total != len(out) or needed != len(data):
        return False
    ip: Any = np.int64(0)
    op: Any = np.int64(0)
    for k in range(nw):
        r = 8 + k * rs
        bits, ln = int(md[r + size]), _u32(md, r + size + 1)
        if not (bits < 8 * size and ln % size == 0):    # stored as it is
            _copy(out[op:op + ln], data[ip:ip + ln])
            ip += ln
            op += ln
            continue
        off = np.uint64(0)
        for b in range(size):
            off |= np.uint64(md[r + b]) << np.uint64(8 * b)
        w = bits // 8
        cnt = ln // size
        if op % size or op // size + cnt > len(outv):
            return False   # values not at a multiple of their size: the Python path
        _window_into(outv[op // size:op // size + cnt], data, ip, cnt, w, signed, off, size)
        ip += cnt * w
        op += ln
    return True


def _reduced_kernel(codec: int, size: int) -> Any:
    """`reduced_chunks` for one codec and integers of `size` bytes (2, 4 or 8), constants of
    the closure: the other sizes' views and window loops are pruned before typing (see
    `_shuffled_kernel`)."""

    @numba.njit(nogil=True, cache=True)
    def chunks(fns: Any, ctx: int, src: Any, md_off: Any, md_len: Any, data_off: Any,
               data_len: Any, orig: Any, out_pos: Any, out: Any, outv: Any, signed: bool,
               scratch: Any, status: Any, lengths: Any) -> None:
        nsrc = len(src)
        base = src.ctypes.data
        sbase = scratch.ctypes.data
        for i in range(len(orig)):
            status[i] = 1
            m, ml, d, dl = md_off[i], md_len[i], data_off[i], data_len[i]
            n, p = orig[i], out_pos[i]
            if m < 0 or not _md_decodes(ml, 24) or m + ml > nsrc or d < 0 or dl < 0 \
                    or d + dl > nsrc or n < 0 or p < 0 or p + n > len(out):
                continue
            if _u32(src, m) != 1 or _u32(src, m + 4) != 1:
                continue
            o1, c1, o2, c2 = _u32(src, m + 8), _u32(src, m + 12), _u32(src, m + 16), \
                _u32(src, m + 20)
            cap = 8 + (n + 1) * (size + 5)   # a window holds at least a byte
            if c1 + c2 != dl or o1 > cap or o2 > n or cap + o2 > len(scratch):
                continue
            if not _part(codec, fns, ctx, base + d, c1, sbase, o1, lengths):
                continue
            if not _part(codec, fns, ctx, base + d + c1, c2, sbase + cap, o2, lengths):
                continue
            # the values of `outv` this chunk covers (none where it does not start at one)
            whole = p % size == 0 and (p + n) // size <= len(outv)
            lo, hi = (p // size, (p + n) // size) if whole else (0, 0)
            if _unreduce(scratch[:o1], scratch[cap:cap + o2], out[p:p + n], outv[lo:hi],
                         signed, size):
                status[i] = 0
    return chunks


_UNSIGNED = {2: np.uint16, 4: np.uint32, 8: np.uint64}


def reduced_chunks(codec: int, fns: Any, ctx: int, src: Any, md_off: Any, md_len: Any,
                   data_off: Any, data_len: Any, orig: Any, out_pos: Any, out: Any,
                   size: int, signed: bool, scratch: Any, status: Any) -> None:
    """Decode [BIT_WIDTH_REDUCTION, codec] chunks of `size`-byte integers: the codec's two
    parts (BWR's window table, the reduced data) into `scratch`, then `_unreduce` into
    `out[out_pos:out_pos + orig]`; `status` as for `shuffled_chunks`. `scratch` holds
    `8 + (orig + 1) * (size + 5) + orig` bytes."""
    if size not in _UNSIGNED:   # not a size BIT_WIDTH_REDUCTION reduces: the Python path
        return
    kernel = _form(_reduced_kernel, int(codec), int(size))
    kernel(fns, ctx, src, md_off, md_len, data_off, data_len, orig, out_pos, out,
           _words(out, _UNSIGNED[size]), bool(signed), scratch, status, _tables(0)[1])


# ---- AES-256-GCM (TileDB's encryption filter) through OpenSSL's EVP calls (`native.aes_gcm`)
_evp_init = _c_function((64, 64, 64, 64, 64), 32)   # EVP_DecryptInit_ex(ctx, cipher, 0, key, iv)
_evp_ctrl = _c_function((64, 32, 32, 64), 32)       # EVP_CIPHER_CTX_ctrl(ctx, SET_TAG, 16, tag)
_evp_update = _c_function((64, 64, 64, 64, 32), 32)  # EVP_DecryptUpdate(ctx, out, &n, in, len)
_evp_final = _c_function((64, 64, 64), 32)          # EVP_DecryptFinal_ex(ctx, out, &n)

# one part's record in the AES chunk metadata (`encryption.AES_PART`): u32 plaintext length,
# u32 encrypted length, 12-byte IV, 16-byte tag
_AES_PART, _AES_IV, _AES_TAG = 36, 8, 20


@numba.njit(nogil=True, cache=True)
def decrypt_chunks(fns: Any, ctx: int, key: Any, src: Any, md_off: Any, md_len: Any,
                   data_off: Any, data_len: Any, plain: Any, plain_pos: Any, cap: Any,
                   plain_md: Any, plain_len: Any, status: Any) -> None:
    """Decrypt each chunk's AES-256-GCM parts (their table in the chunk metadata at
    `md_off`, their ciphertexts one after the other at `data_off` of the uint8 file `src`)
    into `plain[plain_pos:plain_pos + cap]`, metadata parts first, then data parts, as
    `encryption.decrypt_chunk` gives them; `plain_md[i]` the metadata parts' bytes,
    `plain_len[i]` all parts' bytes. `status[i]` 0: decrypted; 1: left to the Python path,
    which then says what is wrong — the checks `decrypt_chunk` makes (a table that does
    not fit the metadata, parts running past the data, a plaintext length that is not the
    ciphertext's, a tag that fails) and a part too big for one EVP call."""
    nsrc = len(src)
    base = src.ctypes.data
    pbase = plain.ctypes.data
    kaddr = _U(key.ctypes.data)
    got = np.zeros(2, np.int32)
    gaddr = _U(got.ctypes.data)
    c = _U(ctx)
    for i in range(len(md_off)):
        status[i] = 1
        m, ml, d, dl = md_off[i], md_len[i], data_off[i], data_len[i]
        p = plain_pos[i]
        if m < 0 or ml < 8 or m + ml > nsrc or d < 0 or dl < 0 or d + dl > nsrc or p < 0 \
                or cap[i] < 0 or p + cap[i] > len(plain):
            continue
        nmd, nparts = _u32(src, m), _u32(src, m) + _u32(src, m + 4)
        if nparts * _AES_PART > ml - 8:
            continue
        total = 0
        ok = True
        for k in range(nparts):
            r = m + 8 + k * _AES_PART
            n = _u32(src, r + 4)
            if _u32(src, r) != n or n > _INT_MAX:
                ok = False
            total += n
        if not ok or total > dl or total > cap[i]:
            continue
        at = 0
        for k in range(nparts):
            r = m + 8 + k * _AES_PART
            n = _u32(src, r + 4)
            out = _U(pbase + p + at)
            if _evp_init(fns[0], (c, _U(fns[4]), _U(0), kaddr, _U(base + r + _AES_IV))) != 1 \
                    or _evp_ctrl(fns[1], (c, _U(fns[5]), _U(16), _U(base + r + _AES_TAG))) != 1:
                ok = False
                break
            got[0] = 0
            if n and (_evp_update(fns[2], (c, out, gaddr, _U(base + d + at), _U(n))) != 1
                      or got[0] != n):
                ok = False
                break
            got[1] = -1
            if _evp_final(fns[3], (c, _U(pbase + p + at + n), gaddr + _U(4))) != 1 \
                    or got[1] != 0:   # the tag checked here
                ok = False
                break
            at += n
        if not ok:
            continue
        md = 0
        for k in range(nmd):
            md += _u32(src, m + 8 + k * _AES_PART + 4)
        plain_md[i] = md
        plain_len[i] = total
        status[i] = 0
