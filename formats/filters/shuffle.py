"""BYTESHUFFLE (9) and BITSHUFFLE (8).

Both prepend a part table (`parts.py`) to the earlier filters' metadata and write one
output buffer: every input part shuffled with the element size of the datatype they see
(after SCALE_FLOAT that is the scaled integer width). BITSHUFFLE first splits a part whose
size is not a multiple of 8 into (multiple of 8, rest); a part that is not a multiple of 8
bytes or of the element size is copied unshuffled."""
from __future__ import annotations

from ..core.cursor import Cursor
from .base import DataInfo, Filter, FilterSpec, RunContext, Stage
from .bits import bitshuffle, bitunshuffle, byteshuffle, byteunshuffle
from .enums import FilterType
from .parts import parse_parts, read_parts, rest_md, split, table
from .util import u8


class ByteShuffle(Filter):
    type = FilterType.BYTESHUFFLE

    def parse_metadata(self, spec: FilterSpec, cur: Cursor, info: DataInfo) -> None:
        parse_parts(cur)

    def reverse(self, spec, stage: Stage, info: DataInfo, run: RunContext) -> Stage:
        md = stage.metadata_bytes
        data = stage.data_bytes
        e = info.value_size
        one = table([len(data)])
        if md[:len(one)] == one:  # the common case: one part, the whole data
            rest = md[len(one):]
            return Stage([rest] if rest else [], [byteunshuffle(u8(data), e).tobytes()])
        sizes, rest = read_parts(stage, spec.name)
        parts = split(data, sizes, spec.name, len(md))
        return Stage(rest_md(rest), [b"".join(byteunshuffle(u8(p), e).tobytes() for p in parts)])

    def forward(self, spec, stage: Stage, info: DataInfo, run: RunContext) -> Stage:
        e = info.value_size
        sizes = [len(p) for p in stage.data]
        out = b"".join(byteshuffle(u8(p), e).tobytes() for p in stage.data)
        return Stage([table(sizes)] + list(stage.metadata), [out])


def _shuffles(size: int, e: int) -> bool:
    return size % e == 0 and size % 8 == 0


class BitShuffle(Filter):
    type = FilterType.BITSHUFFLE

    def parse_metadata(self, spec: FilterSpec, cur: Cursor, info: DataInfo) -> None:
        parse_parts(cur)

    def reverse(self, spec, stage: Stage, info: DataInfo, run: RunContext) -> Stage:
        sizes, rest = read_parts(stage, spec.name)
        e = info.value_size
        parts = split(stage.data_bytes, sizes, spec.name, len(stage.metadata_bytes))
        out = b"".join(bitunshuffle(u8(p), e).tobytes() if _shuffles(len(p), e) else bytes(p)
                       for p in parts)
        return Stage(rest_md(rest), [out])

    def forward(self, spec, stage: Stage, info: DataInfo, run: RunContext) -> Stage:
        e = info.value_size
        pieces = []
        for p in stage.data:
            rem = len(p) % 8
            pieces.extend([p] if rem == 0 else [p[:len(p) - rem], p[len(p) - rem:]])
        out = b"".join(bitshuffle(u8(p), e).tobytes() if _shuffles(len(p), e) else bytes(p)
                       for p in pieces)
        return Stage([table([len(p) for p in pieces])] + list(stage.metadata), [out])
