"""SCALE_FLOAT (15): floats stored as integers of `byte width` bytes,
`round((value - offset) / scale)` computed in the float type itself (float_scaling_filter.cc);
read back as `scale * integer + offset` in double precision, cast to the float type. The
float type is picked by size (4: float32, 8: float64), so the filter is lossy by design.

Metadata: the part table (`parts.py`), lengths of the scaled parts. Conversions of values
out of the integer range (and NaN) follow what x86 builds of libtiledb produce:
truncation through a 32-bit (1-, 2-, 4-byte widths) or 64-bit conversion that yields the
"integer indefinite" 0x80...0, then the low bytes are kept."""
from __future__ import annotations

import numpy as np

from ..accel.kernels import unscale
from ..core.cursor import Cursor
from ..core.fielddoc import doc
from .base import DataInfo, Filter, FilterError, FilterSpec, RunContext, Stage
from .enums import FilterType
from .options import Editor, Option
from .parts import parse_parts, parts_of, rest_md, table
from .util import SIGNED_BY_SIZE, spec_option, u8

OUTPUT_TYPE = {1: 5, 2: 7, 4: 0, 8: 1}  # INT8, INT16, INT32, INT64
FLOAT_BY_SIZE = {4: np.dtype("<f4"), 8: np.dtype("<f8")}


def scale_options(spec: FilterSpec, info: DataInfo):
    """(scale, offset, the float type, the integer type of the stored width)."""
    width = int(spec_option(spec, "byte_width", 8))
    if width not in OUTPUT_TYPE:
        raise FilterError(f"SCALE_FLOAT: byte width {width} is not 1, 2, 4 or 8")
    t = FLOAT_BY_SIZE.get(info.value_size)
    if t is None:
        raise FilterError(f"SCALE_FLOAT: values of {info.value_size} bytes are not floats")
    return (float(spec_option(spec, "scale", 1.0)), float(spec_option(spec, "offset", 0.0)),
            t, SIGNED_BY_SIZE[width])


def c_round(q: np.ndarray) -> np.ndarray:
    """C `round`: halves away from zero (numpy rounds them to even)."""
    t = np.trunc(q)
    return np.where(np.abs(q - t) >= 0.5, t + np.sign(q), t)


def c_to_int(r: np.ndarray, w: np.dtype) -> np.ndarray:
    """static_cast<W>(r) as x86 code computes it, including out-of-range values."""
    bits = 64 if w.itemsize == 8 else 32
    lim = float(2 ** (bits - 1))
    with np.errstate(invalid="ignore"):
        ok = (r >= -lim) & (r < lim)
    v = np.where(ok, r, -lim).astype(np.float64)
    if bits == 64:
        big = v >= 2.0 ** 63
        out = np.where(big, 0, v).astype(np.int64)
        out[big] = np.iinfo(np.int64).min
        return out.astype(w)
    return v.astype(np.int64).astype(w)


D_SCALE = doc("Scale: stored integer = round((value - offset) / scale)", spec="filters/float_scale.md")
D_OFFSET = doc("Offset subtracted before scaling", spec="filters/float_scale.md")
D_BYTE_WIDTH = doc("Byte width of the stored integers (1, 2, 4 or 8)", spec="filters/float_scale.md")
_FLOAT = Editor("float", -1e12, 1e12)


class FloatScale(Filter):
    type = FilterType.SCALE_FLOAT
    options = (
        Option("scale", "Scale", "f64", D_SCALE, default=1.0, shown=lambda v: f"scale={v}",
               editor=_FLOAT),
        Option("offset", "Offset", "f64", D_OFFSET, default=0.0, shown=lambda v: f"offset={v}",
               editor=_FLOAT),
        Option("byte_width", "Byte width", "u64", D_BYTE_WIDTH, default=8,
               shown=lambda v: f"width={v}",
               editor=Editor("choice", choices=tuple((str(w), w) for w in (1, 2, 4, 8)))),
    )

    def output_datatype(self, spec: FilterSpec, datatype: int) -> int:
        return OUTPUT_TYPE.get(int(spec_option(spec, "byte_width", 8)), datatype)

    def parse_metadata(self, spec: FilterSpec, cur: Cursor, info: DataInfo) -> None:
        parse_parts(cur)

    def reverse(self, spec, stage: Stage, info: DataInfo, run: RunContext) -> Stage:
        scale, offset, t, w = scale_options(spec, info)
        parts, rest = parts_of(stage, spec.name)
        out = []
        compiled = unscale.get(sum(len(p) for p in parts))
        for p in parts:
            ints = np.frombuffer(p, dtype=w, count=len(p) // w.itemsize)
            if compiled is not None:   # one pass (kernels.py), not four
                vals = np.empty(len(ints), t)
                compiled(ints, scale, offset, t.itemsize == 4, vals)
            else:
                vals = (scale * ints.astype(t).astype(np.float64) + offset).astype(t)
            out.append(vals.tobytes())
        return Stage(rest_md(rest), [b"".join(out)])

    def forward(self, spec, stage: Stage, info: DataInfo, run: RunContext) -> Stage:
        from ..accel.forward_kernels import scale_forward

        scale, offset, t, w = scale_options(spec, info)
        sizes, out = [], []
        compiled = scale_forward.get(sum(len(p) for p in stage.data))
        for p in stage.data:
            if len(p) % t.itemsize:
                raise FilterError(f"SCALE_FLOAT: a part of {len(p)} bytes is not whole values")
            x = u8(p).view(t)
            if compiled is not None:   # one pass (forward_kernels.py), not eight
                ints = np.empty(len(x), np.int64)
                compiled(x, t.type(offset), t.type(scale), w.itemsize == 8, ints)
                enc = ints.astype(w).tobytes()
            else:
                with np.errstate(all="ignore"):
                    q = (x - t.type(offset)) / t.type(scale)
                    enc = c_to_int(c_round(q), w).tobytes()
            sizes.append(len(enc))
            out.append(enc)
        return Stage([table(sizes)] + list(stage.metadata), out)
