"""The fragment-metadata footer read with `struct`, no nodes: for the model-only path
(`values` on a thousand fragments reads a thousand footers). The layout is the one
`fragment_footer.parse_footer` annotates (format_spec/fragment.md "Footer"); anything this
reader does not expect (no schema, format < 5, bytes that stop short or are left over)
returns None, and the caller parses the footer with nodes, which says what is wrong.
tests/tiledb/test_tiledb_footer_reader.py checks both give the same Footer."""
from __future__ import annotations

import struct
from typing import Optional

from .fragment_footer import Footer, section_kinds
from .fragment_slots import slot_names
from .fragment_values import python_value
from .model import ArraySchema

_U64 = struct.Struct("<Q")


class _Short(Exception):
    pass


def read_footer(src, start: int, size: int, schema: Optional[ArraySchema]) -> Optional[Footer]:
    """The footer of `size` bytes at `start` of `src`, or None (see the module doc)."""
    if schema is None or size < 4:
        return None
    buf = src.read(start, size)
    if len(buf) != size:
        return None
    pos = 0

    def take(n: int) -> int:
        nonlocal pos
        at = pos
        pos += n
        if pos > size:
            raise _Short
        return at

    def u64() -> int:
        return _U64.unpack_from(buf, take(8))[0]

    def u64s(n: int) -> list:
        at = take(8 * n)
        return list(struct.unpack_from(f"<{n}Q", buf, at))

    try:
        ft = Footer(offset=start, size=size, schema_used=True)
        v = ft.version = struct.unpack_from("<I", buf, take(4))[0]
        if v < 5:
            return None
        if v >= 10:
            n = u64()
            at = take(n)
            ft.schema_name = bytes(buf[at:at + n]).decode("utf-8", "replace")
        ft.dense = bool(buf[take(1)])
        ft.null_ned = bool(buf[take(1)])
        dims = schema.dimensions
        if ft.null_ned:
            if not any(d.var for d in dims):
                take(2 * len(dims) * (dims[0].cell_size if dims else 0))
        else:
            ned = []
            for d in dims:
                if d.var:
                    total, first = u64(), u64()
                    if first > total:
                        return None
                    at = take(total)
                    raw_min, raw_max = buf[at:at + first], buf[at + first:at + total]
                else:
                    sz = d.cell_size
                    at = take(2 * sz)
                    raw_min, raw_max = buf[at:at + sz], buf[at + sz:at + 2 * sz]
                ned.append((python_value(d.datatype, raw_min), python_value(d.datatype, raw_max)))
                ft.ned_raw.append(raw_min + raw_max)
            ft.non_empty_domain = ned
        ft.sparse_tile_num = u64()
        ft.last_tile_cell_num = u64()
        if v >= 14:
            ft.has_timestamps = bool(buf[take(1)])
        if v >= 15:
            ft.has_delete_meta = bool(buf[take(1)])
        ft.slots = slot_names(schema, v, ft.has_timestamps, ft.has_delete_meta, None)
        ns = len(ft.slots)
        ft.file_sizes = u64s(ns)
        ft.file_var_sizes = u64s(ns)
        ft.file_validity_sizes = u64s(ns) if v >= 7 else [0] * ns
        ft.rtree = u64()
        for kind in section_kinds(v):
            ft.sections[kind] = u64s(ns)
        if v >= 12:
            ft.fmmsn = u64()
        if v >= 16:
            ft.processed_conditions = u64()
    except (_Short, struct.error):
        return None
    if pos != size:
        return None  # bytes left over: the annotated parse shows them
    ft.complete = True
    return ft
