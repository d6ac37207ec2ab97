"""Compiled kernels that call C codecs (`native.py`) with the GIL released: a whole run of
chunks decoded per call. Imported only through `fused.py`, once numba is known to load.

A C function is called through its address, an integer argument (`_c_function`): the
compiled code holds no address, so numba caches it on disk like the other kernels. Pointer
arguments travel as 64-bit integers, which every supported ABI passes as pointers are.

Each chunk kernel is made per form of its pipeline (`_shuffled_kernel(shuffle)` and the
like: a closure whose constants numba prunes on before typing), and the Python-level
`shuffled_chunks`, `typed_chunks`, ... pick the form's kernel: a filter stack's first run
compiles its own decoder only (docs/DESIGN.md, "The first run"). Inside the kernels: no
array slice assignment (`_copy`), no literal argument to another compiled function.
"""
from __future__ import annotations

from typing import Any, Dict, Tuple

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
    unshuffle,
)
from .native import Codec
from .simd import bitunshuffle_blocks, store_fence, unshuffle_into
from .unread import metadata_decodes

# the one rule for chunk metadata longer than its tables (`unread.py`), compiled
_md_decodes: Any = numba.njit(nogil=True, cache=True, inline="always")(metadata_decodes)

# the compiled un-shuffle loop (numba is loaded here: never None)
_unshuffle: Any = unshuffle.get()

# the shuffle before the codec (`fused.FusedPlan.shuffle`)
NONE, BYTES, BITS = 0, 1, 2

ZSTD, LZ4, BZIP2 = int(Codec.ZSTD), int(Codec.LZ4), int(Codec.BZIP2)


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


@numba.njit(nogil=True, cache=True, inline="always")
def _u32(a: Any, i: int) -> Any:
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
    scratch for in/out lengths."""
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


@numba.njit(nogil=True, cache=True)
def _bitunshuffle(src: Any, esize: int, out: Any, streaming: bool = False) -> None:
    """`bits._bit` reversed: whole blocks of `default_block` elements, then one block of
    the remaining multiple of 8 elements, then the last bytes as they are."""
    n = len(src) // esize
    b = max(128, (8192 // esize) // 8 * 8)    # bits.default_block
    full = n // b
    if full:
        bitunshuffle_blocks(src[:full * b * esize], full, b, esize, out[:full * b * esize],
                            streaming)
    last = (n % b) - (n % b) % 8
    lo, hi = full * b * esize, (full * b + last) * esize
    if last:
        one: Any = np.int64(1)   # typed: a literal 1 compiles the callee once more
        bitunshuffle_blocks(src[lo:hi], one, last, esize, out[lo:hi], streaming)
    for t in range(hi, len(src)):
        out[t] = src[t]


def _tables(size: int) -> Tuple[np.ndarray, np.ndarray]:
    """A kernel call's scratch, made here rather than in the kernel (a kernel's `np.zeros`
    compiles numpy's allocation code into it, half a second of a first run): `size` bytes
    for a filter's part table, decompressed, and the uint64[2] in/out lengths of `_part`."""
    return np.zeros(size, np.uint8), np.zeros(2, np.uint64)


def _shuffled_kernel(shuffle: int) -> Any:
    """`shuffled_chunks` for one `shuffle` (NONE, BYTES or BITS), a constant of the closure:
    numba prunes the other shuffles' branches before typing them, so a stack compiles only
    its own un-shuffle (the three in one kernel took 10–20 s to compile on first use)."""

    @numba.njit(nogil=True, cache=True)
    def chunks(codec: int, fns: Any, ctx: int, src: Any, md_off: Any, md_len: Any,
               data_off: Any, data_len: Any, orig: Any, out_pos: Any, out: Any,
               esize: int, scratch: Any, status: Any, streaming: bool, table: Any,
               lengths: Any) -> None:
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
                    or _u32(table, 0) != 1 or _u32(table, 4) != n:
                continue
            if not _part(codec, fns, ctx, base + d + c1, c2, sbase, n, lengths):
                continue
            if shuffle == BITS:
                _bitunshuffle(scratch[:n], esize, out[p:p + n], streaming)
            else:
                k = n // esize
                if not unshuffle_into(scratch[:n], k, esize, out[p:p + n], streaming):
                    _unshuffle(scratch[:n], k, esize, out[p:p + n])
                for t in range(k * esize, n):   # the tail the shuffle leaves as it is
                    out[p + t] = scratch[t]
            status[i] = 0
        if streaming:
            store_fence()
    return chunks


_SHUFFLED = {shuffle: _shuffled_kernel(shuffle) for shuffle in (NONE, BYTES, BITS)}


def shuffled_chunks(codec: int, fns: Any, ctx: int, src: Any, md_off: Any, md_len: Any,
                    data_off: Any, data_len: Any, orig: Any, out_pos: Any, out: Any,
                    shuffle: int, esize: int, scratch: Any, status: Any,
                    streaming: bool) -> None:
    """Decode the [BYTESHUFFLE or BITSHUFFLE, codec] (`shuffle` BYTES or BITS, elements of
    `esize` bytes) or [codec] (`shuffle` NONE) chunks whose metadata and data are at the
    given offsets of the uint8 file `src`, each into `out[out_pos:out_pos + orig]`
    (`streaming`: the byte unshuffle writes around the cache, `simd.py`), by the kernel
    compiled for that shuffle (called from Python: the kernel holds no GIL).
    `status[i]` is 0 when chunk i is decoded, 1 when it is left to the Python path: a part
    table other than the expected one, a range outside the file, any codec disagreement
    (`batch._decompress` makes the same checks), or a BITSHUFFLE chunk that is not whole
    elements of a multiple of 8 bytes (`batch.reverse_into` leaves those too)."""
    table, lengths = _tables(8)
    _SHUFFLED[shuffle](codec, fns, ctx, src, md_off, md_len, data_off, data_len, orig,
                       out_pos, out, esize, scratch, status, bool(streaming), table, lengths)


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

_double_delta: Any = double_delta_decode.get()
_prefix_sum: Any = prefix_sum.get()


@numba.njit(nogil=True, cache=True)
def _undelta(enc: Any, n_enc: int, out: Any) -> bool:
    """The 8-byte values of one DELTA part (`enc[:n_enc]`, bytes) into the uint8 `out`,
    exactly as `deltas.Delta.decompress_part` gives them; False where it raises (or gives
    another length): the Python path reports it."""
    orig = len(out)
    if n_enc < 8:
        return False
    n = _u64(enc, 0)
    if n * 8 != orig or n_enc < 8 + orig:
        return False
    if n:
        _prefix_sum(enc[8:8 + orig].view(np.uint64), out.view(np.uint64))
    return True


@numba.njit(nogil=True, cache=True)
def _undouble_delta(enc: Any, n_enc: int, out: Any) -> bool:
    """`_undelta` for one DOUBLE_DELTA part (`deltas.DoubleDelta.decompress_part`)."""
    orig = len(out)
    if n_enc < 9:
        return False
    bitsize = np.int64(enc[0])
    if bitsize >= 63:                      # stored raw: `data[9:9 + orig + 1]`
        if n_enc - 9 != orig:
            return False
        _copy(out, enc[9:9 + orig])
        return True
    n = _u64(enc, 1)
    if n * 8 != orig:
        return False
    head = min(n, 2)
    if n_enc < 9 + head * 8:
        return False
    if n <= 2:
        _copy(out, enc[9:9 + orig])
        return True
    nwords = ((n - 2) * (bitsize + 1) + 63) // 64
    if n_enc < 25 + 8 * nwords:
        return False
    v = enc[9:25].view(np.int64)
    _double_delta(enc[25:25 + 8 * nwords].view(np.uint64), n, bitsize, v[0], v[1],
                  out.view(np.int64))
    return True


@numba.njit(nogil=True, cache=True, inline="always")
def _u64(a: Any, i: int) -> Any:
    return _u32(a, i) | (_u32(a, i + 4) << 32)


def _typed_kernel(typed: int) -> Any:
    """`typed_chunks` for one typed codec (DELTA or DOUBLE_DELTA), a constant of the
    closure: a stack compiles only its own decoder (see `_shuffled_kernel`)."""

    @numba.njit(nogil=True, cache=True)
    def chunks(codec: int, fns: Any, ctx: int, src: Any, md_off: Any, md_len: Any,
               data_off: Any, data_len: Any, orig: Any, out_pos: Any, out: Any,
               scratch: Any, status: Any, table: Any, lengths: Any) -> None:
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
                    or (out.ctypes.data + p) % 8:
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
            if _u32(table, 0) != 0 or _u32(table, 4) != 1 or _u32(table, 8) != n \
                    or _u32(table, 12) != o2:
                continue
            if not _part(codec, fns, ctx, base + d + c1, c2, sbase, o2, lengths):
                continue
            if typed == DELTA:
                ok = _undelta(scratch[at:at + o2], o2, out[p:p + n])
            else:
                ok = _undouble_delta(scratch[at:at + o2], o2, out[p:p + n])
            if ok:
                status[i] = 0
    return chunks


_TYPED_KERNELS = {typed: _typed_kernel(typed) for typed in (DELTA, DOUBLE_DELTA)}


def typed_chunks(codec: int, fns: Any, ctx: int, src: Any, md_off: Any, md_len: Any,
                 data_off: Any, data_len: Any, orig: Any, out_pos: Any, out: Any,
                 typed: int, scratch: Any, status: Any) -> None:
    """Decode [DELTA or DOUBLE_DELTA (`typed`), codec] chunks of 8-byte values — the codec
    into `scratch`, the typed codec from there into `out[out_pos:out_pos + orig]` — with
    the checks `batch._decompress_typed` and the typed codecs make; `status` as for
    `shuffled_chunks`. `scratch` holds `_ENC_AT + orig + _TYPED_SLACK` bytes."""
    table, lengths = _tables(_TYPED_TABLE)
    _TYPED_KERNELS[typed](codec, fns, ctx, src, md_off, md_len, data_off, data_len, orig,
                          out_pos, out, scratch, status, table, lengths)


_prefix_xor: Any = prefix_xor.get()
_unscale: Any = unscale.get()


def _scaled_kernel(has_scale: bool, has_xor: bool, width: int, fsize: int) -> Any:
    """`scaled_chunks` for one form of the pipeline (constants of the closure: a stack
    compiles its own views and loops only, see `_shuffled_kernel`)."""

    @numba.njit(nogil=True, cache=True)
    def chunks(codec: int, fns: Any, ctx: int, src: Any, md_off: Any, md_len: Any,
               data_off: Any, data_len: Any, orig: Any, out_pos: Any, out: Any,
               scale: float, offset: float, scratch: Any, status: Any, table: Any,
               lengths: Any) -> None:
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
                if size // width * fsize != n or size > len(scratch):
                    continue
            elif size != n:
                continue
            at = d
            for t in range(nmd):    # every table: one part of the data part's length
                c = _u32(src, m + 12 + 8 * t)
                if not _part(codec, fns, ctx, base + at, c, tbase, 8, lengths) \
                        or _u32(table, 0) != 1 or _u32(table, 4) != size:
                    ok = False
                    break
                at += c
            if not ok:
                continue
            dst = scratch[:size] if has_scale else out[p:p + n]
            if not _part(codec, fns, ctx, base + at, clen, dst.ctypes.data, size, lengths):
                continue
            if has_xor:   # XOR's reverse on the whole values (the tail bytes stay)
                k = len(dst) // width * width
                if k and width == 1:
                    _prefix_xor(dst[:k], dst[:k])
                elif k and width == 2:
                    _prefix_xor(dst[:k].view(np.uint16), dst[:k].view(np.uint16))
                elif k and width == 4:
                    _prefix_xor(dst[:k].view(np.uint32), dst[:k].view(np.uint32))
                elif k:
                    _prefix_xor(dst[:k].view(np.uint64), dst[:k].view(np.uint64))
            if has_scale:   # the signed `width`-byte integers into `fsize`-byte floats
                k = len(dst) // width * width
                if fsize == 4:
                    f32 = out[p:p + n].view(np.float32)
                    if width == 1:
                        _unscale(dst[:k].view(np.int8), scale, offset, True, f32)
                    elif width == 2:
                        _unscale(dst[:k].view(np.int16), scale, offset, True, f32)
                    elif width == 4:
                        _unscale(dst[:k].view(np.int32), scale, offset, True, f32)
                    else:
                        _unscale(dst[:k].view(np.int64), scale, offset, True, f32)
                else:
                    f64 = out[p:p + n].view(np.float64)
                    if width == 1:
                        _unscale(dst[:k].view(np.int8), scale, offset, False, f64)
                    elif width == 2:
                        _unscale(dst[:k].view(np.int16), scale, offset, False, f64)
                    elif width == 4:
                        _unscale(dst[:k].view(np.int32), scale, offset, False, f64)
                    else:
                        _unscale(dst[:k].view(np.int64), scale, offset, False, f64)
            status[i] = 0
    return chunks


_SCALED: Dict[Tuple[bool, bool, int, int], Any] = {}   # made on first use: 4 x 4 x 3 forms


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
    form = (bool(has_scale), bool(has_xor), int(width), int(fsize) if has_scale else 0)
    kernel = _SCALED.get(form)
    if kernel is None:
        kernel = _SCALED.setdefault(form, _scaled_kernel(*form))
    table, lengths = _tables(8)
    kernel(codec, fns, ctx, src, md_off, md_len, data_off, data_len, orig, out_pos, out,
           float(scale), float(offset), scratch, status, table, lengths)


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


@numba.njit(nogil=True, cache=True)
def _window_into(values: Any, data: Any, ip: int, cnt: int, w: int, signed: bool,
                 off: Any) -> None:
    """`cnt` reduced values of `w` bytes (1, 2 or 4: less than T) from `data[ip:]`, plus the
    window offset, wrapping, into the T-sized unsigned `values`. One loop per width, so the
    compiler sees a constant width."""
    if w == 1:
        for v in range(cnt):
            values[v] = _reduced_value(data, ip + v, 1, signed) + off
    elif w == 2:
        for v in range(cnt):
            values[v] = _reduced_value(data, ip + 2 * v, 2, signed) + off
    else:
        for v in range(cnt):
            values[v] = _reduced_value(data, ip + 4 * v, 4, signed) + off


def _unreduce_kernel(size: int) -> Any:
    """`_unreduce` for integers of `size` bytes (2, 4 or 8), a constant of the closure: the
    other sizes' views and window loops are pruned before typing (see `_shuffled_kernel`)."""

    @numba.njit(nogil=True, cache=True)
    def unreduce(md: Any, data: Any, out: Any, signed: bool) -> bool:
        """BIT_WIDTH_REDUCTION's reverse (`windows.BitWidthReduction._reverse`) of one chunk:
        the window table `md` (length of input, window count, then per window the value offset
        of `size` bytes, the bit width and the window length) over `data` into `out`. False
        where the Python path raises, or where its table leaves metadata over (the Python path
        decides what that means)."""
        if len(md) < 8:
            return False
        rs = size + 5
        nw = _u32(md, 4)
        if _u32(md, 0) != len(out) or 8 + nw * rs != len(md):
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
        ip: Any = np.int64(0)   # typed: a literal 0 would compile `_window_into` twice
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
            if (out.ctypes.data + op) % size == 0:   # whole values at once (the common case)
                if size == 2:
                    _window_into(out[op:op + ln].view(np.uint16), data, ip, cnt, w, signed, off)
                elif size == 4:
                    _window_into(out[op:op + ln].view(np.uint32), data, ip, cnt, w, signed, off)
                else:
                    _window_into(out[op:op + ln].view(np.uint64), data, ip, cnt, w, signed, off)
                ip += cnt * w
                op += ln
                continue
            top = np.uint64(1) << np.uint64(8 * w - 1)
            for _v in range(cnt):
                x = np.uint64(0)
                for b in range(w):
                    x |= np.uint64(data[ip + b]) << np.uint64(8 * b)
                if signed and x & top:       # sign-extend the reduced value into T
                    x |= ~((top << np.uint64(1)) - np.uint64(1))
                y = x + off                  # wrapping, in T's unsigned type
                for b in range(size):
                    out[op + b] = np.uint8((y >> np.uint64(8 * b)) & np.uint64(0xFF))
                ip += w
                op += size
        return True
    return unreduce


_unreduce2, _unreduce4, _unreduce8 = (_unreduce_kernel(size) for size in (2, 4, 8))


def _reduced_kernel(size: int) -> Any:
    """`reduced_chunks` for integers of `size` bytes, a constant of the closure."""

    @numba.njit(nogil=True, cache=True)
    def chunks(codec: int, fns: Any, ctx: int, src: Any, md_off: Any, md_len: Any,
               data_off: Any, data_len: Any, orig: Any, out_pos: Any, out: Any,
               signed: bool, scratch: Any, status: Any, lengths: Any) -> None:
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
            md, data, dst = scratch[:o1], scratch[cap:cap + o2], out[p:p + n]
            if size == 2:
                ok = _unreduce2(md, data, dst, signed)
            elif size == 4:
                ok = _unreduce4(md, data, dst, signed)
            else:
                ok = _unreduce8(md, data, dst, signed)
            if ok:
                status[i] = 0
    return chunks


_REDUCED = {size: _reduced_kernel(size) for size in (2, 4, 8)}


def reduced_chunks(codec: int, fns: Any, ctx: int, src: Any, md_off: Any, md_len: Any,
                   data_off: Any, data_len: Any, orig: Any, out_pos: Any, out: Any,
                   size: int, signed: bool, scratch: Any, status: Any) -> None:
    """Decode [BIT_WIDTH_REDUCTION, codec] chunks of `size`-byte integers: the codec's two
    parts (BWR's window table, the reduced data) into `scratch`, then `_unreduce` into
    `out[out_pos:out_pos + orig]`; `status` as for `shuffled_chunks`. `scratch` holds
    `8 + (orig + 1) * (size + 5) + orig` bytes."""
    kernel = _REDUCED.get(size)
    if kernel is None:   # not a size BIT_WIDTH_REDUCTION reduces: the Python path
        return
    kernel(codec, fns, ctx, src, md_off, md_len, data_off, data_len, orig, out_pos, out,
           bool(signed), scratch, status, _tables(0)[1])


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
