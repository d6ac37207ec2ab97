"""The part table shared by BYTESHUFFLE, BITSHUFFLE, XOR, SCALE_FLOAT and WEBP: `u32 number
of parts`, then `u32 length` of each part (tile.md, "Byteshuffle Filter")."""
from __future__ import annotations

from typing import List, Sequence, Tuple

from ..core.cursor import Cursor
from ..core.fielddoc import doc
from ..core.record import Field, Record
from .base import FilterError, Stage
from .util import MetaReader

D_NPARTS = doc("Number of parts: data parts this filter processed one by one",
               spec="tile.md: Byteshuffle / Bitshuffle filter")
D_PART_LEN = doc("Length of part: bytes of this data part in the filter's output "
                 "(SCALE_FLOAT: the scaled integers; WEBP: the encoded image)",
                 spec="tile.md: Byteshuffle / Bitshuffle filter")


PART_LENGTH = Record(Field("Length of part {n}", "u32", D_PART_LEN))
NUM_PARTS = Record(Field("Number of parts", "u32", D_NPARTS, item_size=PART_LENGTH.size,
                         unit="parts"))


def parse_parts(cur: Cursor) -> None:
    (n,) = NUM_PARTS.annotate(cur)
    for i in range(n):
        PART_LENGTH.annotate(cur, n=i + 1)


def read_parts(stage: Stage, name: str) -> Tuple[List[int], bytes]:
    """(part lengths, the metadata after this filter's table)."""
    r = MetaReader(stage.metadata_bytes, name)
    (n,) = r.counts(NUM_PARTS, PART_LENGTH, "Number of parts")
    sizes = PART_LENGTH.array(r.take(n * PART_LENGTH.size, "part lengths"), n)["f0"]
    return sizes.astype("i8").tolist(), r.rest()


def table(sizes: Sequence[int]) -> bytes:
    return NUM_PARTS.pack(len(sizes)) + b"".join(PART_LENGTH.pack(s) for s in sizes)


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


def parts_of(stage: Stage, name: str) -> Tuple[List[memoryview], bytes]:
    """(the data cut into its parts, the metadata after the table): `read_parts` then
    `split`, with the common case — one part, the whole data — read without the general
    table reader (a few microseconds a chunk, more than the kernels that follow)."""
    md, data = stage.metadata_bytes, stage.data_bytes
    one = table([len(data)])
    if md[:len(one)] == one:
        return [memoryview(data)], md[len(one):]
    sizes, rest = read_parts(stage, name)
    return split(data, sizes, name, len(md)), rest


def rest_md(rest: bytes) -> List[bytes]:
    return [rest] if rest else []
