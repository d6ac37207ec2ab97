"""XOR (16): each value XOR the previous one (the first kept), on integers of the size of
the datatype it sees; the next filter sees the signed integer type of that size. Metadata:
the part table (`parts.py`); the output is one buffer."""
from __future__ import annotations

import numpy as np

from ..accel.kernels import prefix_xor
from ..core.cursor import Cursor
from .base import DataInfo, Filter, FilterError, FilterSpec, RunContext, Stage
from .enums import FilterType, datatype_size
from .parts import parse_parts, parts_of, rest_md, table
from .util import UNSIGNED_BY_SIZE, u8

OUTPUT_TYPE = {1: 5, 2: 7, 4: 0, 8: 1}  # INT8, INT16, INT32, INT64


def _type(info: DataInfo) -> np.dtype:
    t = UNSIGNED_BY_SIZE.get(info.value_size)
    if t is None:
        raise FilterError(f"XOR: values of {info.value_size} bytes are not 1, 2, 4 or 8 bytes")
    return t


class Xor(Filter):
    type = FilterType.XOR

    def output_datatype(self, spec: FilterSpec, datatype: int) -> int:
        return OUTPUT_TYPE.get(datatype_size(datatype), datatype)

    def parse_metadata(self, spec: FilterSpec, cur: Cursor, info: DataInfo) -> None:
        parse_parts(cur)

    def reverse(self, spec, stage: Stage, info: DataInfo, run: RunContext) -> Stage:
        t = _type(info)
        parts, rest = parts_of(stage, spec.name)
        out = []
        compiled = prefix_xor.get(sum(len(p) for p in parts))
        for p in parts:
            a = u8(p)
            n = len(a) // t.itemsize
            body = n * t.itemsize
            if compiled is not None and n:   # one pass (kernels.py)
                res = np.empty_like(a)
                compiled(a[:body].view(t), res[:body].view(t))
                res[body:] = a[body:]
            else:
                res = a.copy()
                if n:
                    res[:body] = np.bitwise_xor.accumulate(a[:body].view(t)).view(np.uint8)
            out.append(res.tobytes())
        return Stage(rest_md(rest), [b"".join(out)])

    def forward(self, spec, stage: Stage, info: DataInfo, run: RunContext) -> Stage:
        from ..accel.forward_kernels import xor_forward

        t = _type(info)
        out = []
        compiled = xor_forward.get(sum(len(p) for p in stage.data))
        for p in stage.data:
            a = u8(p)
            n = len(a) // t.itemsize
            res = a.copy()
            if n and compiled is not None:   # one pass (forward_kernels.py)
                compiled(a[:n * t.itemsize].view(t), res[:n * t.itemsize].view(t))
            elif n:
                v = a[:n * t.itemsize].view(t)
                x = v.copy()
                x[1:] ^= v[:-1]
                res[:n * t.itemsize] = x.view(np.uint8)
            out.append(res.tobytes())
        return Stage([table([len(p) for p in stage.data])] + list(stage.metadata),
                     [b"".join(out)])
