"""The part table shared by BYTESHUFFLE, BITSHUFFLE, XOR, SCALE_FLOAT and WEBP: `u32 number
of parts`, then `u32 length` of each part (tile.md, "Byteshuffle Filter")."""
from __future__ import annotations

import struct
from typing import List, Tuple

import numpy as np

from ..cursor import Cursor
from ..fielddoc import doc
from .base import FilterError, Stage
from .util import MetaReader

D_NPARTS = doc("Number of parts: data parts this filter processed one by one",
               spec="tile.md: Byteshuffle / Bitshuffle filter")
D_PART_LEN = doc("Length of part: bytes of this data part in the filter's output "
                 "(SCALE_FLOAT: the scaled integers; WEBP: the encoded image)",
                 spec="tile.md: Byteshuffle / Bitshuffle filter")


def parse_parts(cur: Cursor) -> None:
    n = cur.length("u32", "Number of parts", 4, D_NPARTS, "parts").value
    for i in range(n):
        cur.u32(f"Length of part {i + 1}", D_PART_LEN)


def read_parts(stage: Stage, name: str) -> Tuple[List[int], bytes]:
    """(part lengths, the metadata after this filter's table)."""
    r = MetaReader(stage.metadata_bytes, name)
    n = r.count("Number of parts", 4)
    sizes = r.records(np.dtype("<u4"), n, "part lengths").astype(np.int64).tolist()
    return sizes, r.rest()


def table(sizes) -> bytes:
    return struct.pack(f"<I{len(sizes)}I", len(sizes), *sizes)


def split(data: bytes, sizes: List[int], name: str, md_len: int) -> List[memoryview]:
    """The data cut into parts of `sizes`, which must cover it exactly."""
    total = sum(sizes)
    if total != len(data):
        raise FilterError(f"{name}: parts add up to {total} bytes, the data has {len(data)}",
                          md_len + min(total, len(data)))
    mv = memoryview(data)
    out, pos = [], 0
    for s in sizes:
        out.append(mv[pos:pos + s])
        pos += s
    return out


def rest_md(rest: bytes) -> List[bytes]:
    return [rest] if rest else []
