"""The fragment-metadata footer read with `struct`, no nodes: for the model-only path
(`values` on a thousand fragments reads a thousand footers). The layout is the one
`fragment_footer.parse_footer` annotates (format_spec/fragment.md "Footer"); anything this
reader does not expect (no schema, format < 5, bytes that stop short or are left over)
returns None, and the caller parses the footer with nodes, which says what is wrong.
tests/tiledb/test_tiledb_footer_reader.py checks both give the same Footer."""
from __future__ import annotations

import functools
import struct
from typing import Dict, NamedTuple, Optional, Tuple

from ...filters.enums import BYTE_STRING_TYPES, DATATYPES, Datatype, datatype_size, numpy_dtype
from ..parse.fragment_footer import Footer, section_kinds
from ..parse.fragment_values import python_value
from .array_model import ArraySchema
from .fragment_slots import slot_names

_U64 = struct.Struct("<Q")


class _Short(Exception):
    pass


@functools.lru_cache(maxsize=256)
def _u64s(n: int) -> struct.Struct:
    return struct.Struct(f"<{n}Q")


@functools.lru_cache(maxsize=64)
def _scalar(datatype: int) -> Optional[Tuple[struct.Struct, bool]]:
    """(struct of one value, is BOOL) of a fixed-size numeric datatype, or None: the
    non-empty domain of a thousand footers read without numpy (the same values
    `python_value` gives: numpy's `.item()` of the same little-endian type)."""
    if datatype not in DATATYPES or datatype in BYTE_STRING_TYPES or datatype in _TEXT:
        return None
    dt = numpy_dtype(datatype)
    code = _STRUCT_CODES.get((dt.kind, dt.itemsize))
    if code is None or dt.itemsize != datatype_size(datatype) or dt.str[0] == ">":
        return None
    return struct.Struct("<" + code), datatype == Datatype.BOOL


_TEXT = {Datatype.STRING_UTF16, Datatype.STRING_UCS2, Datatype.STRING_UTF32,
         Datatype.STRING_UCS4}   # fixed-size, but `python_value` decodes them to text

# struct's standard-size codes (numpy's `char` is the native one: 'l' is 8 bytes, '<l' 4)
_STRUCT_CODES = {("i", 1): "b", ("i", 2): "h", ("i", 4): "i", ("i", 8): "q",
                 ("u", 1): "B", ("u", 2): "H", ("u", 4): "I", ("u", 8): "Q",
                 ("f", 2): "e", ("f", 4): "f", ("f", 8): "d"}


def read_footer(src, start: int, size: int, schema: Optional[ArraySchema]) -> Optional[Footer]:
    """The footer of `size` bytes at `start` of `src`, or None (see the module doc)."""
    if schema is None or size < 4:
        return None
    buf = src.read(start, size)
    if len(buf) != size:
        return None
    return footer_of(buf, start, schema)


def footer_of(buf: bytes, start: int, schema: ArraySchema) -> Optional[Footer]:
    """`read_footer` of the footer bytes `buf` (read from `start`)."""
    size = len(buf)
    if size < 4:
        return None
    ft = _planned(buf, start, schema)
    if ft is not None:
        return ft
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
        return list(_u64s(n).unpack_from(buf, at))

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
                sc = _scalar(d.datatype) if not d.var else None
                if sc is not None and len(raw_min) == len(raw_max) == sc[0].size:
                    lo, hi = sc[0].unpack(raw_min)[0], sc[0].unpack(raw_max)[0]
                    ned.append((bool(lo), bool(hi)) if sc[1] else (lo, hi))
                else:
                    ned.append((python_value(d.datatype, raw_min),
                                python_value(d.datatype, raw_max)))
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


# The footers of one schema's fragments differ only in their values: their layout — for a
# format, schema-name length and null-domain flag — is worked out once into one `struct`
# for the fields up to the timestamps flags and one for the per-slot tail (a thousand
# footers are a thousand `unpack_from`s, not twenty reads each). Only for fixed-sized
# dimensions whose domain `struct` reads (`_scalar`); anything else takes the reader above.
_Head = Tuple[struct.Struct, list]   # (fields up to the flags, per dim (offset, size, bool))
_HEADS: Dict[Tuple[int, int, int, bool], Tuple[ArraySchema, Optional[_Head]]] = {}
_TAILS: Dict[Tuple[int, int], Tuple[struct.Struct, list]] = {}
_U32 = struct.Struct("<I")


def _head_plan(schema: ArraySchema, v: int, at: int, null_ned: bool) -> Optional[_Head]:
    dims = schema.dimensions
    if any(d.var for d in dims):
        return None
    fmt, spans, pos = "<??", [], at + 2
    if null_ned:
        pad = 2 * len(dims) * (dims[0].cell_size if dims else 0)
        fmt += f"{pad}x" if pad else ""
        pos += pad
    else:
        for d in dims:
            sc = _scalar(d.datatype)
            if sc is None or sc[0].size != d.cell_size:
                return None
            code = sc[0].format[1:]
            fmt += code + code
            spans.append((pos, 2 * d.cell_size, sc[1]))
            pos += 2 * d.cell_size
    fmt += "QQ" + ("?" if v >= 14 else "") + ("?" if v >= 15 else "")
    return struct.Struct(fmt), spans


def _tail_plan(v: int, ns: int) -> Tuple[struct.Struct, list]:
    """(struct of the per-slot tail, its section kinds) of format `v` with `ns` slots."""
    t = _TAILS.get((v, ns))
    if t is None:
        sizes = 3 if v >= 7 else 2
        kinds = section_kinds(v)
        n = sizes * ns + 1 + len(kinds) * ns + (v >= 12) + (v >= 16)
        t = _TAILS[(v, ns)] = (struct.Struct(f"<{n}Q"), kinds)
    return t


def _planned(buf: bytes, start: int, schema: ArraySchema) -> Optional[Footer]:
    """The footer read with the layout of its schema (None: the general reader decides)."""
    size = len(buf)
    v = _U32.unpack_from(buf, 0)[0]
    if v < 5:
        return None
    at = 4
    if v >= 10:
        if size < 12:
            return None
        at = 12 + _U64.unpack_from(buf, 4)[0]
    if at + 2 > size:
        return None
    null_ned = buf[at + 1] != 0
    key = (id(schema), v, at, null_ned)
    got = _HEADS.get(key)
    if got is None or got[0] is not schema:   # (an id reused by another schema: made again)
        if len(_HEADS) > 256:
            _HEADS.clear()
        got = _HEADS[key] = (schema, _head_plan(schema, v, at, null_ned))
    plan = got[1]
    if plan is None:
        return None
    head, spans = plan
    end = at + head.size
    if end > size:
        return None
    h = head.unpack_from(buf, at)
    ts = h[-2] if v >= 15 else (h[-1] if v >= 14 else False)
    dm = h[-1] if v >= 15 else False
    slots = slot_names(schema, v, ts, dm, None)
    ns = len(slots)
    tail, kinds = _tail_plan(v, ns)
    if end + tail.size != size:
        return None
    t = tail.unpack_from(buf, end)
    ft = Footer(offset=start, size=size, schema_used=True, version=v, dense=h[0],
                null_ned=null_ned, has_timestamps=ts, has_delete_meta=dm, slots=slots)
    if v >= 10:
        ft.schema_name = bytes(buf[12:at]).decode("utf-8", "replace")
    k = 2 + 2 * len(spans)
    ft.sparse_tile_num, ft.last_tile_cell_num = h[k], h[k + 1]
    if not null_ned:
        ned = []
        for i, (pos, n, is_bool) in enumerate(spans):
            lo, hi = h[2 + 2 * i], h[3 + 2 * i]
            ned.append((bool(lo), bool(hi)) if is_bool else (lo, hi))
            ft.ned_raw.append(bytes(buf[pos:pos + n]))
        ft.non_empty_domain = ned
    ft.file_sizes = list(t[0:ns])
    ft.file_var_sizes = list(t[ns:2 * ns])
    j = 2 * ns
    if v >= 7:
        ft.file_validity_sizes = list(t[j:j + ns])
        j += ns
    else:
        ft.file_validity_sizes = [0] * ns
    ft.rtree = t[j]
    j += 1
    for kind in kinds:
        ft.sections[kind] = list(t[j:j + ns])
        j += ns
    if v >= 12:
        ft.fmmsn = t[j]
        j += 1
    if v >= 16:
        ft.processed_conditions = t[j]
    ft.complete = True
    return ft


class FooterShape(NamedTuple):
    """The layout `_planned` read one footer with, as positions (for the compiled locate of
    many fragments, `bulk_locate.py`). Another footer of `size` bytes whose bytes in every
    range of `same` are this one's — format, schema name, dense and null-domain flags, the
    timestamps and delete-metadata flags — has the same layout: the same plan reads it."""

    size: int
    template: bytes                      # this footer
    same: Tuple[Tuple[int, int], ...]    # (start, end) in the footer
    rtree_at: int                        # where the R-tree's offset (u64) is
    sections_at: Dict[str, int]          # where sections[kind][0] is; slot s 8 × s after


def footer_shape(buf: bytes, schema: ArraySchema) -> Optional[FooterShape]:
    """The shape of footer `buf` (format 10 or later: its schema named in it), or None when
    `_planned` does not read it."""
    ft = _planned(buf, 0, schema)
    if ft is None or ft.version < 10:
        return None
    v = ft.version
    at = 12 + _U64.unpack_from(buf, 4)[0]
    got = _HEADS.get((id(schema), v, at, ft.null_ned))
    if got is None or got[0] is not schema or got[1] is None:
        return None
    head_end = at + got[1][0].size
    flags = (v >= 14) + (v >= 15)
    ns = len(ft.slots)
    sizes = 3 if v >= 7 else 2
    rtree_at = head_end + 8 * sizes * ns
    kinds = _tail_plan(v, ns)[1]
    return FooterShape(len(buf), bytes(buf), ((0, at + 2), (head_end - flags, head_end)),
                       rtree_at, {k: rtree_at + 8 + 8 * ns * i for i, k in enumerate(kinds)})
