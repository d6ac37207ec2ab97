"""BIT_WIDTH_REDUCTION (7) and POSITIVE_DELTA (10): windowed integer encodings.

Each input part is cut into windows of `min(part, max window) // sizeof(T) * sizeof(T)`
bytes (the last window may be shorter). Their metadata (tile.md) is prepended to the
earlier filters' metadata; the output is one buffer. `T` is the datatype the filter sees:
16/32/64-bit integers (BIT_WIDTH_REDUCTION), also 8-bit ones (POSITIVE_DELTA), and
datetimes as int64 from format version 20. Any other datatype passes through unchanged,
with no metadata at all.

BIT_WIDTH_REDUCTION window: `offset` = window minimum; the range `max - min` (wrapping in T)
decides the width: `range + 1` rounded up to 8/16/32/64 bits (for signed T: the smallest
signed type holding it). Values are stored as `value - offset` truncated to that width
(read back sign-extended for signed T). A window whose range is T's maximum, or that is
not a whole number of values, is stored as is.

POSITIVE_DELTA window: `offset` = first value; values are stored as deltas to the previous
value (the first delta is 0); a decreasing window makes the writer fail.
"""
from __future__ import annotations

from typing import List, Optional

import numpy as np

from ..core.cursor import Cursor
from ..core.fielddoc import doc
from .base import DataInfo, Filter, FilterError, FilterSpec, RunContext, Stage, WriterRule
from .enums import DATETIME_TYPES, FilterType
from .enums import Datatype as D
from .options import Editor, Option
from .util import (
    MetaReader,
    check_size,
    int_dtype,
    prim_kind,
    segment_index,
    spec_option,
    u8,
    unsigned_of,
)

D_BWR_INPUT = doc("Length of input: bytes this filter received (all parts)",
                  spec="tile.md: Bit Width Reduction Filter")
D_NWINDOWS = doc("Number of windows: windows in the output, over all input parts",
                 spec="tile.md: Bit Width Reduction / Positive Delta Encoding Filter")
D_BWR_OFFSET = doc("Window value offset: the window's minimum, subtracted from each value "
                   "(type T: the values' datatype). Left uninitialised by the writer when the "
                   "window is stored as is because its range is T's maximum.",
                   spec="tile.md: Bit Width Reduction Filter")
D_BWR_BITS = doc("Bit width of reduced type: 8, 16, 32 or 64; the width of T means the "
                 "window is stored unreduced", spec="tile.md: Bit Width Reduction Filter")
D_WINDOW_LEN = doc("Window length: bytes of input (and of decoded output) in this window",
                   spec="tile.md: Bit Width Reduction / Positive Delta Encoding Filter",
                   note="the document says 'bytes in output window data'; the writer stores "
                        "the window's input length")
D_PD_OFFSET = doc("Window value delta offset: the window's first value; the stored deltas "
                  "add up from it", spec="tile.md: Positive Delta Encoding Filter")


def _datetime_t(datatype: int, run: RunContext) -> Optional[np.dtype]:
    if datatype in DATETIME_TYPES and run.format_version >= 20:
        return np.dtype("<i8")
    return None


def bwr_type(datatype: int, run: RunContext) -> Optional[np.dtype]:
    dt = int_dtype(datatype)
    if dt is not None and dt.itemsize > 1:
        return dt
    return _datetime_t(datatype, run)


def pd_type(datatype: int, run: RunContext) -> Optional[np.dtype]:
    if datatype == D.INT8:
        return np.dtype("i1")
    if datatype in (D.UINT8, D.BLOB, D.BOOL, D.GEOM_WKB, D.GEOM_WKT):
        return np.dtype("u1")
    dt = int_dtype(datatype)
    return dt if dt is not None else _datetime_t(datatype, run)


def _window_plan(size: int, max_window: int, itemsize: int, name: str):
    """(window byte size, number of windows) of one part, as the writer computes them."""
    ws = min(size, max_window) // itemsize * itemsize
    if ws == 0:
        raise FilterError(f"{name}: a part of {size} bytes with max window {max_window} gives "
                          f"0-byte windows (libtiledb divides by zero here)")
    return ws, -(-size // ws)


def _window_lens(size: int, ws: int, nw: int) -> np.ndarray:
    lens = np.full(nw, ws, dtype=np.int64)
    lens[-1] = size - ws * (nw - 1)
    return lens


def _copy_segments(dst: np.ndarray, dst_starts, src: np.ndarray, src_starts, lens) -> None:
    if len(lens):
        dst[segment_index(dst_starts, lens)] = src[segment_index(src_starts, lens)]


def _windowed_parts(parts, max_window: int, itemsize: int, name: str):
    """(bytes, window lengths) of each non-empty input part, cut as the writer cuts it."""
    for part in parts:
        raw = u8(part)
        if len(raw) == 0:
            continue
        ws, nw = _window_plan(len(raw), max_window, itemsize, name)
        yield raw, _window_lens(len(raw), ws, nw)


def _window_fields(cur: Cursor, t: np.dtype, offset_name: str, offset_doc, bits: bool) -> None:
    cur.prim(prim_kind(t), offset_name, offset_doc)
    if bits:
        cur.u8("Bit width of reduced type", D_BWR_BITS)
    cur.u32("Window length", D_WINDOW_LEN)


def _window_groups(cur: Cursor, t: np.dtype, offset_name: str, offset_doc, bits: bool) -> None:
    """The window count, then one group per window (value offset, [bit width,] length)."""
    size = t.itemsize + (5 if bits else 4)
    n = cur.length("u32", "Number of windows", size, D_NWINDOWS, "windows").value
    for i in range(n):
        cur.group(f"Window {i + 1}", lambda c: _window_fields(
            c, t, offset_name, offset_doc, bits), size=size)


D_WINDOW = doc("Max window size in bytes", spec="filter_pipeline.md")


class _WindowedFilter(Filter):
    """Shared by both encodings: `T` comes from the datatype; without one the filter passes
    the data through with no metadata. Subclasses handle the windows of a known `T`."""

    options = (Option("max_window", "Max window size", "u32", D_WINDOW, default=256,
                      shown=lambda v: f"window={v}", editor=Editor("int", 1, 1 << 30, label="Max window")),)

    @staticmethod
    def type_of(datatype: int, run: RunContext) -> Optional[np.dtype]:
        raise NotImplementedError

    def window_type(self, info: DataInfo, run: RunContext) -> Optional[np.dtype]:
        return self.type_of(info.datatype, run)

    def parse_metadata(self, spec: FilterSpec, cur: Cursor, info: DataInfo) -> None:
        t = self.window_type(info, RunContext())
        if t is not None:
            self._parse_windows(cur, t)

    def reverse(self, spec, stage: Stage, info: DataInfo, run: RunContext) -> Stage:
        t = self.window_type(info, run)
        if t is None:
            return Stage(list(stage.metadata), list(stage.data))
        return self._reverse(spec, stage, t, run)

    def forward(self, spec, stage: Stage, info: DataInfo, run: RunContext) -> Stage:
        t = self.window_type(info, run)
        if t is None:
            return stage.passed_on()
        return self._forward(spec, stage, t, run)

    def _parse_windows(self, cur: Cursor, t: np.dtype) -> None:
        raise NotImplementedError

    def _reverse(self, spec, stage: Stage, t: np.dtype, run: RunContext) -> Stage:
        raise NotImplementedError

    def _forward(self, spec, stage: Stage, t: np.dtype, run: RunContext) -> Stage:
        raise NotImplementedError


# ---- BIT_WIDTH_REDUCTION -----------------------------------------------------------------
_INT_MIN_MAX = {8: (-(1 << 7), (1 << 7) - 1), 16: (-(1 << 15), (1 << 15) - 1),
                32: (-(1 << 31), (1 << 31) - 1)}


def _bits_required(v: np.ndarray, signed: bool) -> np.ndarray:
    """bits_required(range + 1) rounded up to a C integer width."""
    out = np.full(v.shape, 64, dtype=np.int64)
    if signed:
        s = v.astype(np.int64)
        for w in (32, 16, 8):
            lo, hi = _INT_MIN_MAX[w]
            out[(s >= lo) & (s <= hi)] = w
    else:
        u = v.astype(np.uint64)
        for w in (32, 16, 8):
            out[u < (np.uint64(1) << np.uint64(w))] = w
    return out


def _full_range(mins: np.ndarray, maxs: np.ndarray, rng: np.ndarray, t: np.dtype) -> np.ndarray:
    """Windows whose range `max - min` is T's maximum, or overflows a signed T. For those,
    x86 builds of libtiledb 2.30 store the window unreduced and never set its value offset
    (observed: stack garbage on disk). Empty windows are the writer rules' business."""
    if t.kind == "u":
        return rng == np.iinfo(t).max
    if t.itemsize < 8:
        r = maxs.astype(np.int64) - mins.astype(np.int64)
        return (r >= np.iinfo(t).max) | (r < np.iinfo(t).min)
    overflow = ((maxs ^ mins) & (maxs ^ rng)) < 0  # max - min overflowed, either way
    return overflow | (rng == np.iinfo(t).max)


# How the window range is taken changed in libtiledb 2.29 without a new format version (22
# covers 2.25-2.30). A part's last window may hold no whole value (a UINT64 input of 33
# bytes ends in a 1-byte window: DOUBLE_DELTA output under BIT_WIDTH_REDUCTION, as
# tiledbsoma's offsets filters make); its min/max keep their C initial values.
BWR_CHECKED_RANGE = WriterRule(
    "libtiledb >= 2.29 (checked range subtraction, TileDB PR 5506: a window with no whole "
    "value, or whose range overflows T, is stored unreduced)", first_format=22)
BWR_WRAPPING_RANGE = WriterRule(
    "libtiledb < 2.29 (wrapping range subtraction: a window with no whole value is stored "
    "with bit width 8 and offset T max)", last_format=22)
BWR_LOSSY_NOTE = ("libtiledb < 2.29 reduced a signed window whose range overflows T "
                  "(wrapping subtraction): values written further than the reduced width from "
                  "the window minimum do not read back as written (the bytes cannot tell "
                  "which); a writer bug, fixed in 2.29 (TileDB PR 5506)")


def _lost_windows(made: Stage, stored: Stage) -> bool:
    """The stored bytes are the wrapping writer's where forward differs only in windows that
    provably lost values: reduced (width w < T) with a range that wrapped (the offset within
    2**(w-1) of T min, a cell within 2**(w-1) of T max), and a cell decodes below the
    window's stored offset - the minimum of the values written, which no lossless window
    decodes below.
    libtiledb < 2.29 does this when a window's range overflows T (a dense tile of 2.3+
    whose zero padding sits beside values near T's limits): forward from the decoded cells
    then takes another minimum. Signed T only: an unsigned range cannot wrap that way."""
    if not made.metadata:
        return False
    n_md = len(made.metadata[0])
    mmd, smd = made.metadata_bytes, stored.metadata_bytes
    if len(mmd) != len(smd) or mmd[n_md:] != smd[n_md:] or mmd[:8] != smd[:8] or n_md < 8:
        return False
    nw = int(np.frombuffer(smd, "<u4", 1, 4)[0])
    if nw == 0 or (n_md - 8) % nw or (n_md - 8) // nw - 5 not in (2, 4, 8):
        return False
    size = (n_md - 8) // nw - 5
    t = np.dtype(f"<i{size}")
    rec_t = BitWidthReduction._rec(t)
    mrec = np.frombuffer(mmd, rec_t, nw, 8)
    srec = np.frombuffer(smd, rec_t, nw, 8)
    if np.any(mrec["length"] != srec["length"]):
        return False
    try:
        cells = BitWidthReduction()._reverse(FilterSpec(FilterType.BIT_WIDTH_REDUCTION),
                                             Stage([smd[:n_md]], [stored.data_bytes]), t,
                                             RunContext()).data_bytes
    except FilterError:
        return False
    lens = srec["length"].astype(np.int64)

    def out_lens(rec: np.ndarray) -> np.ndarray:
        bits = rec["bits"].astype(np.int64)
        red = (bits < 8 * size) & (lens % size == 0)
        return np.where(red, lens // size * (bits // 8), lens)

    m_len, s_len = out_lens(mrec), out_lens(srec)
    m_pos, s_pos, c_pos = 0, 0, 0
    lost = 0
    for i in range(nw):
        m_seg = made.data_bytes[m_pos:m_pos + int(m_len[i])]
        s_seg = stored.data_bytes[s_pos:s_pos + int(s_len[i])]
        vals = np.frombuffer(cells, t, int(lens[i]) // size, c_pos)
        m_pos, s_pos, c_pos = m_pos + int(m_len[i]), s_pos + int(s_len[i]), c_pos + int(lens[i])
        if mrec[i].tobytes() == srec[i].tobytes() and m_seg == s_seg:
            continue
        w, o = int(srec["bits"][i]), int(srec["offset"][i])
        # a wrapped range of w bits needs its minimum within 2**(w-1) of T min and its
        # maximum (which survives: its offset is -1 or so) near T max; damage to a window
        # rarely looks like that
        if w >= 8 * size or not len(vals) or o > -(1 << (8 * size - 1)) + (1 << (w - 1)) or \
                int(vals.max()) - o < (1 << (8 * size)) - (1 << (w - 1)) - 1 or \
                not int(vals.min()) < o:
            return False   # a difference that is not a window that lost values
        lost += 1
    return lost > 0 and m_pos == len(made.data_bytes) and s_pos == len(stored.data_bytes)


BWR_WRAPPING_LOST = WriterRule(
    "libtiledb < 2.29 (wrapping range subtraction), in a window that lost values",
    last_format=22, accepts=_lost_windows,
    note=("libtiledb < 2.29 reduced a signed window whose range overflows T (wrapping "
          "subtraction) and lost values: cells decode below the window's minimum as written "
          "(which the window offset records); a writer bug, fixed in 2.29 (TileDB PR 5506)"))


class BitWidthReduction(_WindowedFilter):
    type = FilterType.BIT_WIDTH_REDUCTION
    type_of = staticmethod(bwr_type)
    writer_rules = (BWR_CHECKED_RANGE, BWR_WRAPPING_RANGE, BWR_WRAPPING_LOST)

    def _parse_windows(self, cur: Cursor, t: np.dtype) -> None:
        cur.u32("Length of input", D_BWR_INPUT)
        _window_groups(cur, t, "Window value offset", D_BWR_OFFSET, True)

    @staticmethod
    def _rec(t: np.dtype) -> np.dtype:
        return np.dtype([("offset", t), ("bits", "u1"), ("length", "<u4")])  # packed

    def _reverse(self, spec, stage: Stage, t: np.dtype, run: RunContext) -> Stage:
        md = stage.metadata_bytes
        r = MetaReader(md, spec.name)
        orig = check_size(r.u32("Length of input"), run, f"{spec.name} length of input", 0)
        nw = r.count("Number of windows", t.itemsize + 5)
        recs = r.records(self._rec(t), nw, "window metadata")
        rest = r.rest()
        data = u8(stage.data_bytes)
        size = t.itemsize
        ut = unsigned_of(t)
        bits = recs["bits"].astype(np.int64)
        lens = recs["length"].astype(np.int64)
        reduced = (bits < 8 * size) & (lens % size == 0)
        bad = reduced & ~np.isin(bits, (8, 16, 32, 64))
        if bad.any():
            i = int(np.argmax(bad))
            raise FilterError(f"{spec.name} window {i + 1}: bit width {bits[i]} is not 8, 16, 32 "
                              f"or 64", 8 + i * (size + 5) + size)
        in_lens = np.where(reduced, lens // size * (bits // 8), lens)
        if int(lens.sum()) != orig:
            raise FilterError(f"{spec.name}: windows add up to {int(lens.sum())} bytes, the "
                              f"length of input is {orig}", 0)
        if int(in_lens.sum()) != len(data):
            raise FilterError(f"{spec.name}: windows need {int(in_lens.sum())} bytes of data, "
                              f"the data has {len(data)}", len(md))
        out = np.empty(orig, dtype=np.uint8)
        in_starts = np.cumsum(in_lens) - in_lens
        out_starts = np.cumsum(lens) - lens
        keep = ~reduced
        _copy_segments(out, out_starts[keep], data, in_starts[keep], lens[keep])
        offs = recs["offset"].view(ut) if nw else np.zeros(0, ut)
        signed = t.kind == "i"
        for w in (8, 16, 32, 64):
            sel = reduced & (bits == w)
            if not sel.any():
                continue
            wt = np.dtype(f"<{'i' if signed else 'u'}{w // 8}")
            if sel.all():
                src = data
            else:
                src = data[segment_index(in_starts[sel], in_lens[sel])]
            vals = src.view(wt).astype(t).view(ut)
            nel = lens[sel] // size
            vals = vals + np.repeat(offs[sel], nel)
            if sel.all():
                out = vals.view(np.uint8)
            else:
                out[segment_index(out_starts[sel], lens[sel])] = vals.view(np.uint8)
        return Stage([rest] if rest else [], [out.tobytes()])

    def _forward(self, spec, stage: Stage, t: np.dtype, run: RunContext) -> Stage:
        max_window = int(spec_option(spec, "max_window", 256))
        size, ut = t.itemsize, unsigned_of(t)
        signed = t.kind == "i"
        tmax = np.iinfo(t).max
        wrapping = run.writer_rule in (BWR_WRAPPING_RANGE.name, BWR_WRAPPING_LOST.name)
        if not wrapping:
            made = _forward_compiled(stage, t, max_window, spec.name)
            if made is not None:
                return made
        lossy = 0
        recs: List[np.ndarray] = []
        outs: List[bytes] = []
        unset: List[int] = []
        for raw, lens in _windowed_parts(stage.data, max_window, size, spec.name):
            nw = len(lens)
            nel = lens // size
            vals = raw[:len(raw) // size * size].view(t)
            # per-window min/max; a window of 0 whole values keeps the C initial values
            mins = np.full(nw, tmax, dtype=t)
            maxs = np.full(nw, np.iinfo(t).min, dtype=t)
            has = nel > 0
            starts = (np.cumsum(nel) - nel)[has]
            if has.any():
                mins[has] = np.minimum.reduceat(vals, starts)
                maxs[has] = np.maximum.reduceat(vals, starts)
            rng = (maxs.view(ut) - mins.view(ut)).view(t)
            # a window of no whole value (a part's last few bytes): libtiledb >= 2.29 stores
            # it unreduced with its offset unset, whatever T (2.30 writes 64-bit offsets of
            # DOUBLE_DELTA'd offsets this way); older writers as the wrapping rule says
            full = _full_range(mins, maxs, rng, t) & has
            wbits = _bits_required((rng.view(ut) + ut.type(1)).view(t), signed)
            if wrapping:  # only a range of exactly T max was stored unreduced
                exact = (rng == tmax) & has
                # an overflowed range reduced to fewer bits may lose values (which, the
                # bytes cannot tell: the cells decode to values that encode the same way);
                # one stored unreduced (width 8 * sizeof(T): e.g. INT64_MIN dense padding of
                # libtiledb < 2.3 beside small values) reads back exactly as written
                lossy += int(np.count_nonzero(full & ~exact & (wbits < 8 * size)))
                full = exact
            wbits[full] = 8 * size
            empty = ~has
            wbits[empty] = 8 if wrapping else 8 * size
            reduced = (wbits < 8 * size) & (lens % size == 0)
            rec = np.zeros(nw, dtype=BitWidthReduction._rec(t))
            rec["offset"] = np.where(full, 0, mins)  # left uninitialised by libtiledb
            rec["offset"][empty] = tmax if wrapping else 0
            if not wrapping:
                full = full | empty  # the offset is never written
            rec["bits"] = wbits
            rec["length"] = lens
            unset.extend((sum(map(len, recs)) + int(i)) for i in np.flatnonzero(full))
            recs.append(rec)
            out_lens = np.where(reduced, nel * (wbits // 8), lens)
            out = np.empty(int(out_lens.sum()), dtype=np.uint8)
            in_starts = np.cumsum(lens) - lens
            out_starts = np.cumsum(out_lens) - out_lens
            keep = ~reduced
            _copy_segments(out, out_starts[keep], raw, in_starts[keep], lens[keep])
            for w in (8, 16, 32, 64):
                sel = reduced & (wbits == w)
                if not sel.any():
                    continue
                idx = segment_index(in_starts[sel] // size, nel[sel])
                rel = vals[idx].view(ut) - np.repeat(mins[sel].view(ut), nel[sel])
                enc = rel.astype(f"<u{w // 8}").view(np.uint8)
                out[segment_index(out_starts[sel], out_lens[sel])] = enc
            outs.append(out.tobytes())
        allrec = np.concatenate(recs) if recs else np.zeros(0, BitWidthReduction._rec(t))
        total_in = sum(len(p) for p in stage.data)
        md = np.array([total_in, len(allrec)], dtype="<u4").tobytes() + allrec.tobytes()
        rs = size + 5
        return Stage([md] + list(stage.metadata), [b"".join(outs)],
                     uninitialised=[(8 + i * rs, size) for i in unset],
                     notes=[f"{lossy} window(s): {BWR_LOSSY_NOTE}"] if lossy else [])


def _forward_compiled(stage: Stage, t: np.dtype, max_window: int, name: str) -> Optional[Stage]:
    """`_forward` with the newest writer's rule in one compiled pass a part, when every
    window holds whole values and none is stored unreduced for its range (then no byte is
    left uninitialised and there is no note); else None (the numpy path)."""
    from ..accel.forward_kernels import bwr_forward_part

    fn = bwr_forward_part.get(sum(len(p) for p in stage.data))
    if fn is None:
        return None
    size = t.itemsize
    recs: List[np.ndarray] = []
    outs: List[bytes] = []
    for raw, lens in _windowed_parts(stage.data, max_window, size, name):
        nw = len(lens)
        offs = np.empty(nw, t)
        bits = np.empty(nw, np.uint8)
        out = np.empty(len(raw), np.uint8)
        got = fn(raw[:len(raw) // size * size].view(t), raw, int(lens[0]), t.kind == "i",
                 offs, bits, out)
        if got < 0:
            return None
        rec = np.zeros(nw, dtype=BitWidthReduction._rec(t))
        rec["offset"], rec["bits"], rec["length"] = offs, bits, lens
        recs.append(rec)
        outs.append(out[:got].tobytes())
    allrec = np.concatenate(recs) if recs else np.zeros(0, BitWidthReduction._rec(t))
    total_in = sum(len(p) for p in stage.data)
    md = np.array([total_in, len(allrec)], dtype="<u4").tobytes() + allrec.tobytes()
    return Stage([md] + list(stage.metadata), [b"".join(outs)], uninitialised=[], notes=[])


# ---- POSITIVE_DELTA --------------------------------------------------------------------
class PositiveDelta(_WindowedFilter):
    type = FilterType.POSITIVE_DELTA
    type_of = staticmethod(pd_type)

    def _parse_windows(self, cur: Cursor, t: np.dtype) -> None:
        _window_groups(cur, t, "Window value delta offset", D_PD_OFFSET, False)

    @staticmethod
    def _rec(t: np.dtype) -> np.dtype:
        return np.dtype([("offset", t), ("length", "<u4")])

    def _reverse(self, spec, stage: Stage, t: np.dtype, run: RunContext) -> Stage:
        md = stage.metadata_bytes
        r = MetaReader(md, spec.name)
        nw = r.count("Number of windows", t.itemsize + 4)
        recs = r.records(self._rec(t), nw, "window metadata")
        rest = r.rest()
        data = u8(stage.data_bytes)
        size, ut = t.itemsize, unsigned_of(t)
        lens = recs["length"].astype(np.int64)
        if int(lens.sum()) != len(data):
            raise FilterError(f"{spec.name}: windows add up to {int(lens.sum())} bytes, the data "
                              f"has {len(data)}", len(md))
        out = data.copy()
        regular = lens % size == 0
        offs = recs["offset"].view(ut) if nw else np.zeros(0, ut)
        starts = np.cumsum(lens) - lens
        # maximal spans of whole-value windows are decoded at once; other windows stay raw
        edges = np.flatnonzero(np.diff(np.concatenate([[0], regular.astype(np.int8), [0]])))
        for a, b in zip(edges[::2], edges[1::2]):
            lo, hi = int(starts[a]), int(starts[b - 1] + lens[b - 1])
            d = data[lo:hi].view(ut)
            cs = np.cumsum(d, dtype=ut)
            nel = lens[a:b] // size
            first = np.cumsum(nel) - nel  # element index of each window's start
            before = np.where(first > 0, cs[np.maximum(first - 1, 0)], ut.type(0))
            vals = cs + np.repeat(offs[a:b] - before, nel)
            out[lo:hi] = vals.view(np.uint8)
        return Stage([rest] if rest else [], [out.tobytes()])

    def _forward(self, spec, stage: Stage, t: np.dtype, run: RunContext) -> Stage:
        max_window = int(spec_option(spec, "max_window", 1024))
        size, ut = t.itemsize, unsigned_of(t)
        recs, outs = [], []
        for raw, lens in _windowed_parts(stage.data, max_window, size, spec.name):
            nw = len(lens)
            starts = np.cumsum(lens) - lens
            # the offset is the value at the window start (read past a short window's end)
            padded = np.concatenate([raw, np.zeros(size, np.uint8)])
            offs = padded[segment_index(starts, np.full(nw, size))].view(t)
            out = raw.copy()
            regular = lens % size == 0
            nreg = int(np.count_nonzero(regular))
            if nreg:
                hi = int(starts[nreg - 1] + lens[nreg - 1])  # regular windows come first
                vals = raw[:hi].view(t)
                prev = np.concatenate([[vals[0]], vals[:-1]]).astype(t)
                nel = lens[:nreg] // size
                first = np.cumsum(nel) - nel
                prev[first] = vals[first]
                if (vals < prev).any():
                    i = int(np.argmax(vals < prev))
                    raise FilterError(f"{spec.name}: value {i} decreases ({vals[i]} after "
                                      f"{prev[i]}); the writer refuses this tile "
                                      f"('Positive delta filter error: delta is not positive')")
                out[:hi] = (vals.view(ut) - prev.view(ut)).view(np.uint8)
            rec = np.zeros(nw, dtype=self._rec(t))
            rec["offset"] = offs
            rec["length"] = lens
            recs.append(rec)
            outs.append(out.tobytes())
        allrec = np.concatenate(recs) if recs else np.zeros(0, self._rec(t))
        md = np.array([len(allrec)], dtype="<u4").tobytes() + allrec.tobytes()
        return Stage([md] + list(stage.metadata), [b"".join(outs)])
