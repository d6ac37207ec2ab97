"""DOUBLE_DELTA (6) and DELTA (19): TileDB's own compressors, in the compression framing
(`compression.py`: part table, every metadata part then every data part encoded).

The value type is the reinterpret datatype when set (not 17 = ANY), else the datatype the
filter sees. Both encode in 64-bit wrapping arithmetic and truncate back to the type.

Each decodes a part two ways, over the same checks (`_part`, `_deltas`): `reference_part`,
plain numpy, for the stage-by-stage reversal (`CompressionFilter.reverse`: what the window
shows and verify checks), and `decompress_part` for the planned paths (`batch`, verify's
chunk windows), which runs the compiled kernel of `accel/kernels.py` where numba is loaded
and the reference's numpy elsewhere (`tests/filters/test_deltas_reference.py` holds them
equal on tiledb-py's parts).

DOUBLE_DELTA part (format_spec/filters/double_delta.md): `u8 bitsize, u64 n`, then the
values unchanged when `bitsize >= 8*sizeof(T) - 1`, else `in_0, in_1` and for every later
value a sign bit and `bitsize` bits of |delta of deltas|, packed MSB first into u64 words
written little-endian. libtiledb 2.30 takes bitsize from max(|in_1 - in_0|, |dd_i|), at
least 1 (0 for fewer than 3 values), and refuses deltas outside int64.

DELTA part (format_spec/filters/delta.md): `u64 n, in_0`, then the `n - 1` deltas as T.
"""
from __future__ import annotations

import struct
from typing import Any, Callable, Optional, Tuple, Union

import numpy as np

from ..accel.forward_kernels import KIND_I64, KIND_OTHER, KIND_U64, double_delta_matches
from ..accel.kernels import double_delta_decode, prefix_sum
from .base import DataInfo, FilterError, FilterSpec, RunContext, Stage, WriterRule
from .bits import pack_msb, unpack_msb
from .compression import CompressionFilter, compressor_options
from .enums import DATETIME_TYPES, FLOAT_TYPES, STRING_TYPES, Compressor, FilterType
from .enums import Datatype as D
from .util import (
    datatype_name,
    int_dtype,
    unsigned_of,
)


def reinterpret_of(spec: FilterSpec):
    r = spec.options.get("reinterpret")
    return None if r is None or r == D.ANY else int(r)


def delta_type(datatype: int, name: str) -> np.dtype:
    """The integer type DoubleDelta::/Delta::compress use for a datatype."""
    if datatype in (D.INT8, D.CHAR):
        return np.dtype("i1")
    if datatype in (D.UINT8, D.BOOL, D.BLOB, D.GEOM_WKB, D.GEOM_WKT, D.ANY) or datatype in STRING_TYPES:
        return np.dtype("u1")
    if datatype in DATETIME_TYPES:
        return np.dtype("<i8")
    dt = int_dtype(datatype)
    if dt is None or datatype in FLOAT_TYPES:
        raise FilterError(f"{name} does not support {datatype_name(datatype)} values")
    return dt


def _abs_u64(x: np.ndarray) -> np.ndarray:
    a = x.view(np.uint64)
    return np.where(x < 0, (~a) + np.uint64(1), a)


def _sub_overflows(a: np.ndarray, b: np.ndarray, r: np.ndarray) -> np.ndarray:
    """int64 a - b = r overflowed."""
    return ((a ^ b) & (a ^ r)) < 0


class _TypedCodec(CompressionFilter):
    deterministic = True

    def output_datatype(self, spec: FilterSpec, datatype: int) -> int:
        r = reinterpret_of(spec)
        return datatype if r is None else r

    def value_type(self, spec: FilterSpec, info: DataInfo) -> np.dtype:
        r = reinterpret_of(spec)
        return delta_type(info.datatype if r is None else r, spec.name)


# Both rules write format 22 (libtiledb 2.25-2.30); the stored bit size is all that differs.
DD_FIRST_DELTA_COUNTED = WriterRule(
    "libtiledb >= 2.29 (bit size from the largest of the first delta and the deltas of "
    "deltas)", first_format=22)
DD_DELTAS_OF_DELTAS_ONLY = WriterRule(
    "libtiledb < 2.29 (bit size from the largest delta of deltas only)", last_format=22)


class DoubleDelta(_TypedCodec):
    writer_rules = (DD_FIRST_DELTA_COUNTED, DD_DELTAS_OF_DELTAS_ONLY)
    type = FilterType.DOUBLE_DELTA
    options = compressor_options(Compressor.DOUBLE_DELTA, reinterpret=True)

    def compress_part(self, data: bytes, spec: FilterSpec, info: DataInfo,
                      run: Optional[RunContext] = None) -> bytes:
        t = self.value_type(spec, info)
        size = t.itemsize
        n = len(data) // size
        vals = np.frombuffer(data, dtype=t, count=n)
        v = vals.astype(np.int64)
        bitsize = 0
        old = run is not None and run.writer_rule == DD_DELTAS_OF_DELTAS_ONLY.name
        if n > 2 and old:
            # libtiledb < 2.29 (TileDB PR 5506): deltas and deltas of deltas wrap in int64;
            # it refuses only a delta of deltas whose sign contradicts the deltas' signs, and
            # takes the bit size from max(std::abs(dd)), where abs(INT64_MIN) stays negative
            d = v[1:] - v[:-1]
            dd = d[1:] - d[:-1]
            cur, prev = d[1:], d[:-1]
            if (((cur < 0) & (prev > 0) & (dd > 0)) | ((cur > 0) & (prev < 0) & (dd < 0))).any():
                raise FilterError(f"{spec.name}: some negative double delta is out of bounds; "
                                  f"the writer refuses this tile")
            biggest = max(0, int(np.abs(dd).max())) if len(dd) else 0
            bitsize = max(1, biggest.bit_length())
        elif n > 2:
            d = v[1:] - v[:-1]
            if t == np.dtype("<u8"):
                u = vals
                bad = np.where(u[1:] >= u[:-1], (u[1:] - u[:-1]) > np.uint64(2**63 - 1),
                               (u[:-1] - u[1:]) > np.uint64(2**63))
            elif t == np.dtype("<i8"):
                bad = _sub_overflows(v[1:], v[:-1], d)
            else:
                bad = np.zeros(0, dtype=bool)
            if bad.any():
                raise FilterError(f"{spec.name}: delta at value {int(np.argmax(bad)) + 1} exceeds "
                                  f"int64; the writer refuses this tile")
            dd = d[1:] - d[:-1]
            if _sub_overflows(d[1:], d[:-1], dd).any():
                raise FilterError(f"{spec.name}: a delta of deltas exceeds int64; the writer "
                                  f"refuses this tile")
            biggest = max(int(_abs_u64(dd).max()) if len(dd) else 0,
                          int(_abs_u64(d[:1]).max()))
            bitsize = max(1, biggest.bit_length())
        head = struct.pack("<BQ", bitsize, n)
        if bitsize >= 8 * size - 1:
            return head + bytes(data)
        out = [head, vals[:2].tobytes()]
        if n > 2:
            rec = (dd < 0).astype(np.uint64) << np.uint64(bitsize) | _abs_u64(dd)
            out.append(pack_msb(rec, bitsize + 1))
        return b"".join(out)

    def _part(self, data: bytes | memoryview, original: int, spec: FilterSpec, info: DataInfo
              ) -> Union[bytes, Tuple[np.dtype, int, int, np.ndarray, np.ndarray]]:
        """A part read to its records with every check of the layout: its cells when they
        are stored as they are (a bit size of the whole type, or at most two values), else
        (value type, n, bitsize, the two first values, the record words)."""
        t = self.value_type(spec, info)
        size = t.itemsize
        if len(data) < 9:
            raise FilterError(f"{spec.name}: part of {len(data)} bytes has no header (9 bytes)")
        bitsize, n = struct.unpack_from("<BQ", data, 0)
        if bitsize >= 8 * size - 1:
            return bytes(data[9:9 + original + 1])
        if n * size != original:
            if n * size < original < (n + 1) * size:
                raise FilterError(
                    f"{spec.name}: the part is {original} bytes, not whole {size}-byte values; "
                    f"the writer encoded only {n} values and dropped the last "
                    f"{original - n * size} bytes (a libtiledb defect: libtiledb itself reads "
                    f"garbage back), so they cannot be restored")
            raise FilterError(f"{spec.name}: header says {n} values ({n * size} bytes), the part "
                              f"is {original} bytes")
        head = min(n, 2)
        if len(data) < 9 + head * size:
            raise FilterError(f"{spec.name}: part too short for its first values")
        first = np.frombuffer(data, dtype=t, count=head, offset=9)
        if n <= 2:
            return first.tobytes()
        nwords = -(-((n - 2) * (bitsize + 1)) // 64)
        start = 9 + 2 * size
        if len(data) < start + 8 * nwords:
            raise FilterError(f"{spec.name}: {n - 2} deltas of {bitsize + 1} bits need {nwords} "
                              f"words, the part has {(len(data) - start) // 8}")
        words = np.frombuffer(data, dtype="<u8", count=nwords, offset=start)
        return t, n, bitsize, first.astype(np.int64), words

    def reference_part(self, data: bytes | memoryview, original: int, spec: FilterSpec,
                       info: DataInfo) -> bytes:
        """The reference (the stage-by-stage reversal): numpy only."""
        part = self._part(data, original, spec, info)
        if isinstance(part, bytes):
            return part
        t, n, bitsize, first, words = part
        return _double_delta_values(words, n, bitsize, first).astype(t, copy=False).tobytes()

    def decompress_part(self, data: bytes | memoryview, original: int, spec: FilterSpec,
                        info: DataInfo) -> bytes:
        """The planned paths' decode (`batch`, verify's chunk windows): one compiled pass —
        unpack, sign, both sums (`accel/kernels.py`) — where numba is loaded, else the
        reference's numpy."""
        part = self._part(data, original, spec, info)
        if isinstance(part, bytes):
            return part
        t, n, bitsize, first, words = part
        kernel = double_delta_decode.get(original)
        if kernel is None:
            vals = _double_delta_values(words, n, bitsize, first)
        else:
            vals = np.empty(n, dtype=np.int64)
            wb = words.view(np.uint8)                  # the words as their bytes
            st = np.empty(len(wb) + 16, np.uint8)      # the kernel's scratch
            kernel(wb, n, bitsize, int(first[0]), int(first[1]), vals, st)
        return vals.astype(t, copy=False).tobytes()


def _double_delta_values(words: np.ndarray, n: int, bitsize: int, first: np.ndarray
                         ) -> np.ndarray:
    """The int64 values of a DOUBLE_DELTA part: `n - 2` records of a sign bit and `bitsize`
    bits of magnitude (MSB first in `words`) after the `first` two values."""
    rec = unpack_msb(words, n - 2, bitsize + 1)
    # sign-magnitude to two's complement in place: (mag ^ -s) + s, s the sign bit
    neg = (rec >> np.uint64(bitsize)).view(np.int64)
    rec &= (np.uint64(1) << np.uint64(bitsize)) - np.uint64(1)
    dd = rec.view(np.int64)
    np.negative(neg, out=neg)
    dd ^= neg
    dd -= neg
    # [v0, v1 - v0, dd...] summed twice gives the values (int64 wrap-around as the writer)
    vals = np.empty(n, dtype=np.int64)
    vals[0] = first[0]
    vals[1:2] = first[1:2] - first[:1]   # array arithmetic: wraps without a warning
    np.cumsum(dd, out=vals[2:])
    vals[2:] += vals[1]
    np.cumsum(vals, out=vals)
    return vals


class Delta(_TypedCodec):
    writer_rules = (WriterRule("libtiledb 2.17 and later"),
                    WriterRule("libtiledb 2.16 (one more delta per part than the tile has, "
                               "read past the input; ignored by readers)",
                               first_format=19, last_format=19,
                               accepts=lambda made, stored: delta_216_extra_value(made, stored)))
    type = FilterType.DELTA
    options = compressor_options(Compressor.DELTA, reinterpret=True)

    def compress_part(self, data: bytes, spec: FilterSpec, info: DataInfo,
                      run: Optional[RunContext] = None) -> bytes:
        t = self.value_type(spec, info)
        n = len(data) // t.itemsize
        vals = np.frombuffer(data, dtype=t, count=n)
        ut = unsigned_of(t)
        u = vals.view(ut)
        return struct.pack("<Q", n) + u[:1].tobytes() + (u[1:] - u[:-1]).tobytes()

    def _deltas(self, data: bytes | memoryview, original: int, spec: FilterSpec,
                info: DataInfo) -> np.ndarray:
        """The part's first value and deltas (unsigned: they wrap), every check made."""
        t = self.value_type(spec, info)
        if len(data) < 8:
            raise FilterError(f"{spec.name}: part of {len(data)} bytes has no header (8 bytes)")
        n = struct.unpack_from("<Q", data, 0)[0]
        if n * t.itemsize != original:
            raise FilterError(f"{spec.name}: header says {n} values ({n * t.itemsize} bytes), "
                              f"the part is {original} bytes")
        # A part may hold one value more than n: libtiledb 2.16 (format 19) writes a last
        # delta read past its input (2.17 fixed it); readers ignore it, and so does this.
        if len(data) < 8 + n * t.itemsize:
            raise FilterError(f"{spec.name}: {n} values need {8 + n * t.itemsize} bytes, the "
                              f"part has {len(data)}")
        return np.frombuffer(data, dtype=unsigned_of(t), count=n, offset=8)

    def reference_part(self, data: bytes | memoryview, original: int, spec: FilterSpec,
                       info: DataInfo) -> bytes:
        """The reference (the stage-by-stage reversal): numpy only."""
        d = self._deltas(data, original, spec, info)
        return np.cumsum(d, dtype=d.dtype).tobytes()

    def decompress_part(self, data: bytes | memoryview, original: int, spec: FilterSpec,
                        info: DataInfo) -> bytes:
        """The planned paths' decode: the compiled prefix sum where numba is loaded, else
        the reference's numpy."""
        d = self._deltas(data, original, spec, info)
        kernel = prefix_sum.get(original) if len(d) else None
        if kernel is None:
            return np.cumsum(d, dtype=d.dtype).tobytes()
        out = np.empty(len(d), d.dtype)
        kernel(d, out)
        return out.tobytes()


def delta_216_extra_value(made: Stage, stored: Stage) -> bool:
    """libtiledb 2.16.x (the first with DELTA, and the only writer of format 19) writes each
    part as `u64 n, first value, n - 1 deltas` plus one more delta, taken against whatever
    follows the input in memory (fixed in 2.17, which writes format 20). Checked on 2.16.3
    bytes: 2 int32 cells give a 20-byte part where 2.17 writes 16. True when `stored` is
    `made` with exactly that extra value per part (the same size in every part)."""
    mm, sm = made.metadata_bytes, stored.metadata_bytes
    if len(mm) != len(sm) or len(mm) < 8 or mm[:8] != sm[:8]:
        return False
    nmd, ndata = struct.unpack_from("<II", mm)
    if nmd != 0 or len(mm) != 8 + 8 * ndata:
        return False
    md, sd = made.data_bytes, stored.data_bytes
    extra, mp, sp = None, 0, 0
    for i in range(ndata):
        mo, mc = struct.unpack_from("<II", mm, 8 + 8 * i)
        so, sc = struct.unpack_from("<II", sm, 8 + 8 * i)
        e = sc - mc
        if mo != so or e not in (1, 2, 4, 8) or (extra is not None and e != extra):
            return False
        extra = e
        if md[mp:mp + mc] != sd[sp:sp + mc]:
            return False
        mp, sp = mp + mc, sp + sc
    return mp == len(md) and sp == len(sd)


# ---- the planned forward check (verify's chunk windows, tiledb/verify/tile_batch.py) -------
Check = Callable[[Any, Any], bool]   # (decoded cells, stored encoded part: bytes) -> reproduced


def _first_rule_is_newest(f: _TypedCodec, info: DataInfo) -> bool:
    """`check_forward` tries the newest writer's rule first for this format version (so a
    match is IDENTICAL with the default rule, as the check made here assumes)."""
    return not f.writer_rules or f.rules_for(info.format_version)[0] is f.writer_rules[0]


def typed_check(spec: FilterSpec, info: DataInfo) -> Optional[Check]:
    """The check of a DELTA or DOUBLE_DELTA stage (`info` the DataInfo the filter sees), or
    None when there is none (another filter, another rule first): True only when the
    filter's newest rule reproduces the stored part (`accel/forward_kernels.py` says why
    that is enough). Without numba (or for small chunks before it is loaded) DOUBLE_DELTA's
    check is the filter's numpy forward."""
    from . import get

    if spec.type not in (FilterType.DELTA, FilterType.DOUBLE_DELTA):
        return None
    f = get(spec.type)
    if not isinstance(f, (Delta, DoubleDelta)) or not _first_rule_is_newest(f, info):
        return None
    try:
        t = f.value_type(spec, info)
    except Exception:  # noqa: BLE001 - a type the codec refuses: the per-chunk path says so
        return None
    size = t.itemsize
    if isinstance(f, Delta):
        def delta_ok(cells, enc) -> bool:
            return len(cells) % size == 0 and len(enc) == 8 + len(cells)
        return delta_ok
    kind = KIND_I64 if t == np.dtype("<i8") else KIND_U64 if t == np.dtype("<u8") else \
        KIND_OTHER
    codec = f

    def by_numpy(cells, enc) -> bool:
        """The filter's own forward (its newest rule), compared."""
        try:
            return codec.compress_part(bytes(cells), spec, info) == bytes(enc)
        except Exception:  # noqa: BLE001 - a tile the writer refuses: not reproduced
            return False

    def double_delta_ok(cells, enc) -> bool:
        fn = double_delta_matches.get(len(cells))
        # no numba, or values stored unencoded (a bit size of the whole type): numpy
        if fn is None or (len(enc) and enc[0] >= 8 * size - 1):
            return by_numpy(cells, enc)
        if len(cells) % size:
            return False
        head = min(len(cells) // size, 2) * size
        if len(enc) < 9 + head or enc[9:9 + head] != cells[:head]:
            return False
        return bool(fn(np.frombuffer(cells, t).astype(np.int64), kind, size,
                       np.frombuffer(enc, np.uint8)))
    return double_delta_ok
