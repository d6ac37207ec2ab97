"""Object arrays: the `vlen-utf8`, `vlen-bytes` and `vlen-array` codecs (numcodecs; zarr v3's
vlen-utf8 / vlen-bytes array->bytes codecs write the same bytes).

A decoded chunk is `u32 n` (the items of the whole chunk, edge chunks included), then per
item `u32 length` and that many bytes: UTF-8 text, raw bytes, or (vlen-array) the raw
values of a 1-d array of the codec's dtype. Every length is checked against the bytes
present before anything is read; the chunk must hold exactly its chunk shape's items and
end with the last one. Reading a whole object array: `values.read_items`."""
from __future__ import annotations

import struct
from typing import Any, List, Optional, Sequence, Tuple

import numpy as np

from ..core.fielddoc import doc
from ..core.node import ERROR, Node, hex_preview

VLEN_CODECS = ("vlen-utf8", "vlen-bytes", "vlen-array")
# the decoded size of an object chunk is not declared: bound it by the records and a budget
MAX_VLEN_CHUNK = 1 << 28

D_VLEN = doc("Items of an object chunk (numcodecs VLen*): u32 item count, then per item a "
             "u32 byte length and the item's bytes (UTF-8 text for vlen-utf8)",
             spec="numcodecs vlen; zarr v3 vlen-utf8 / vlen-bytes codecs")


class VlenError(ValueError):
    def __init__(self, message: str, offset: int):
        super().__init__(message)
        self.offset = offset


def stage_limit(meta) -> int:
    return min(MAX_VLEN_CHUNK, 64 * meta.records_per_chunk + (1 << 20))


def parse_items(data: bytes, nrec: int, codec: str, dtype: Optional[str] = None) -> List[Any]:
    """The items of one decoded chunk (str, bytes or a list of numbers)."""
    if len(data) < 4:
        raise VlenError(f"{codec}: {len(data)} bytes, no item count (4 bytes)", 0)
    (n,) = struct.unpack_from("<I", data, 0)
    if n != nrec:
        raise VlenError(f"{codec}: the chunk holds {n} items, its chunk shape {nrec}", 0)
    if 4 * n > len(data) - 4:
        raise VlenError(f"{codec}: {n} items need at least {4 * n} bytes of lengths, "
                        f"{len(data) - 4} present", 0)
    npdt = np.dtype(dtype) if codec == "vlen-array" and dtype else None
    out: List[Any] = []
    pos = 4
    for i in range(n):
        if pos + 4 > len(data):
            raise VlenError(f"{codec}: item {i}: its length runs past the {len(data)} bytes", pos)
        (ln,) = struct.unpack_from("<I", data, pos)
        if pos + 4 + ln > len(data):
            raise VlenError(f"{codec}: item {i} of {ln} bytes runs past the {len(data)} bytes",
                            pos)
        raw = data[pos + 4:pos + 4 + ln]
        if codec == "vlen-utf8":
            try:
                out.append(raw.decode("utf-8"))
            except UnicodeDecodeError as e:
                raise VlenError(f"{codec}: item {i} is not UTF-8 ({e.reason} at byte "
                                f"{e.start})", pos + 4 + e.start) from None
        elif npdt is not None:
            if ln % npdt.itemsize:
                raise VlenError(f"{codec}: item {i} of {ln} bytes is not whole {npdt} values",
                                pos)
            out.append(np.frombuffer(raw, npdt).tolist())
        else:
            out.append(raw)
        pos += 4 + ln
    if pos != len(data):
        raise VlenError(f"{codec}: {len(data) - pos} bytes follow the last item", pos)
    return out


def items_into(parent: Node, meta, src, coords: Optional[Sequence[int]]) -> None:
    """The Items node of decoded object chunk `src` (an error node when it does not parse)."""
    data = src.read(0, src.size)
    try:
        items = parse_items(data, meta.records_per_chunk, meta.vlen, meta.vlen_dtype)
    except VlenError as e:
        parent.add(Node("items", "error", src, max(0, min(e.offset, src.size)), 0, status=ERROR,
                        message=str(e), display=hex_preview(src.read(e.offset, 16))))
        return
    head = ", ".join(repr(x)[:30] for x in items[:4])
    parent.add(Node("Items", "records", src, 0, src.size, doc=D_VLEN, value=None,
                    display=f"{len(items)} items: {head}{', …' if len(items) > 4 else ''}"))


def is_object_dtype_v2(value) -> bool:
    return value == "|O" or value == "O"


def vlen_of_filters(filters) -> Tuple[Optional[str], Optional[str], int]:
    """(codec, vlen-array dtype, index in filters) of the object codec of a v2 filter list."""
    for i, f in enumerate(filters or []):
        if isinstance(f, dict) and f.get("id") in VLEN_CODECS:
            dt = f.get("dtype") if isinstance(f.get("dtype"), str) else None
            return f["id"], dt, i
    return None, None, -1


