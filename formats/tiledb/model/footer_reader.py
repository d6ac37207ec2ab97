"""The fragment-metadata footer read with `struct`, no nodes: for the model-only path
(`values` on a thousand fragments reads a thousand footers). Both this reader and
`fragment_footer.parse_footer` take the layout from its one declaration
(`footer_layout.FOOTER`, format_spec/fragment.md "Footer"); anything this
reader does not expect (no schema, format < 5, bytes that stop short or are left over)
returns None, and the caller parses the footer with nodes, which says what is wrong.
tests/tiledb/test_tiledb_footer_reader.py checks both give the same Footer."""
from __future__ import annotations

import functools
import struct
from typing import Dict, List, NamedTuple, Optional, Tuple

from ...filters.enums import BYTE_STRING_TYPES, DATATYPES, Datatype, datatype_size, numpy_dtype
from ..parse.fragment_values import python_value
from .array_model import ArraySchema
from .footer_layout import (
    FOOTER,
    Footer,
    FooterField,
    head_fields,
    null_ned_size,
    section_kinds,
    tail_fields,
    tail_layout,
)
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
        for f in FOOTER[1:]:
            if v < f.since:
                continue
            if f.kind == "name":
                n = u64()
                at = take(n)
                ft.schema_name = bytes(buf[at:at + n]).decode("utf-8", "replace")
            elif f.kind == "ned":
                if not _ned(buf, take, u64, schema, ft):
                    return None
            elif f.kind in ("slots", "section"):
                if not ft.slots:
                    ft.slots = slot_names(schema, v, ft.has_timestamps, ft.has_delete_meta, None)
                ft.set(f, u64s(f.count(v, len(ft.slots))))
            elif f.kind == "bool":
                ft.set(f, buf[take(1)])
            else:
                ft.set(f, u64())
        if v < 7:
            ft.file_validity_sizes = [0] * len(ft.slots)
    except (_Short, struct.error):
        return None
    if pos != size:
        return None  # bytes left over: the annotated parse shows them
    ft.complete = True
    return ft


def marks_nothing(buf: bytes, ft: Footer, schema: ArraySchema) -> bool:
    """Whether the annotated parse (`fragment_footer.parse_footer`) of the footer `buf`,
    which `footer_of` read as `ft` with `schema`, marks none of its nodes: what that parse
    warns of and this reader takes as it comes — a flag byte not 0 or 1, a schema name that
    is not UTF-8 or not the schema's, a range of a var-sized dimension that is not text (not
    read here: the annotated parse says what it is). The flags' places come from `FOOTER`."""
    v = ft.version
    at = 4
    if v >= 10:
        n = _U64.unpack_from(buf, 4)[0]
        try:
            bytes(buf[12:12 + n]).decode("utf-8")
        except UnicodeDecodeError:
            return False
        at = 12 + n
    if ft.schema_name and schema.name and schema.name != ft.schema_name:
        return False
    if any(d.var and d.datatype not in BYTE_STRING_TYPES for d in schema.dimensions):
        return False
    flags = []
    for f in head_fields(v):
        if f.kind == "bool":
            flags.append(buf[at])
            at += 1
    lay = tail_layout(v, len(ft.slots))
    tail = len(buf) - lay[""][0]   # (`ft` read every byte: the tail ends the footer)
    flags += [buf[tail + lay[f.name][0]] for f in tail_fields(v) if f.kind == "bool"]
    return all(b <= 1 for b in flags)


def _ned(buf, take, u64, schema: ArraySchema, ft: Footer) -> bool:
    """The non-empty domain into `ft` (False: a var-sized range that does not fit)."""
    if ft.null_ned:
        take(null_ned_size(schema))
        return True
    ned = []
    for d in schema.dimensions:
        if d.var:
            total, first = u64(), u64()
            if first > total:
                return False
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
            ned.append((python_value(d.datatype, raw_min), python_value(d.datatype, raw_max)))
        ft.ned_raw.append(raw_min + raw_max)
    ft.non_empty_domain = ned
    return True


# The footers of one schema's fragments differ only in their values: their layout — for a
# format, schema-name length and null-domain flag — is worked out once from `FOOTER` into
# one `struct` for the fields from the dense flag to the timestamps flags (the head: the
# slot count depends on those flags) and one for the per-slot rest (a thousand footers are a
# thousand `unpack_from`s, not twenty reads each). Only for fixed-sized dimensions whose
# domain `struct` reads (`_scalar`); anything else takes the reader above.
class _Head(NamedTuple):
    struct: struct.Struct
    names: Tuple[str, ...]                # per value: its field (the domain's: "")
    spans: List[Tuple[int, int, bool]]    # per dimension (offset, size, is BOOL)


_HEADS: Dict[Tuple[int, int, int, bool], Tuple[ArraySchema, Optional[_Head]]] = {}
_RESTS: Dict[Tuple[int, int], Tuple[struct.Struct, Tuple[FooterField, ...]]] = {}
_U32 = struct.Struct("<I")
_CODE = {"bool": "?", "u64": "Q"}


def _head_plan(schema: ArraySchema, v: int, at: int, null_ned: bool) -> Optional[_Head]:
    fmt, names, spans, pos = "<", [], [], at
    for f in FOOTER:
        if v < f.since or f.kind in ("u32", "name"):
            continue
        if f.kind in ("slots", "section"):
            break
        if f.kind != "ned":
            fmt += _CODE[f.kind]
            names.append(f.name)
            pos += struct.calcsize("<" + _CODE[f.kind])
        elif null_ned:
            if any(d.var for d in schema.dimensions):
                return None
            pad = null_ned_size(schema)
            fmt += f"{pad}x" if pad else ""
            pos += pad
        else:
            for d in schema.dimensions:
                sc = _scalar(d.datatype) if not d.var else None
                if sc is None or sc[0].size != d.cell_size:
                    return None
                code = sc[0].format[1:]
                fmt += code + code
                names += ["", ""]
                spans.append((pos, 2 * d.cell_size, sc[1]))
                pos += 2 * d.cell_size
    return _Head(struct.Struct(fmt), tuple(names), spans)


def _rest_plan(v: int, ns: int) -> Tuple[struct.Struct, Tuple[FooterField, ...]]:
    """(struct of the per-slot rest — all u64 — its fields) of format `v` with `ns` slots."""
    t = _RESTS.get((v, ns))
    if t is None:
        lay = tail_layout(v, ns)
        fields = tuple(f for f in FOOTER if v >= f.since and f.name in lay)
        first = next(i for i, f in enumerate(fields) if f.kind in ("slots", "section"))
        n = (lay[""][0] - lay[fields[first].name][0]) // 8
        t = _RESTS[(v, ns)] = (struct.Struct(f"<{n}Q"), fields[first:])
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
    end = at + plan.struct.size
    if end > size:
        return None
    h = plan.struct.unpack_from(buf, at)
    ft = Footer(offset=start, size=size, schema_used=True, version=v)
    for name, value in zip(plan.names, h):
        if name:
            setattr(ft, name, value)
    if v >= 10:
        ft.schema_name = bytes(buf[12:at]).decode("utf-8", "replace")
    ft.slots = slot_names(schema, v, ft.has_timestamps, ft.has_delete_meta, None)
    ns = len(ft.slots)
    rest, fields = _rest_plan(v, ns)
    if end + rest.size != size:
        return None
    t = rest.unpack_from(buf, end)
    if not null_ned:
        ned, k = [], plan.names.index("") if plan.spans else 0
        for i, (pos, n, is_bool) in enumerate(plan.spans):
            lo, hi = h[k + 2 * i], h[k + 1 + 2 * i]
            ned.append((bool(lo), bool(hi)) if is_bool else (lo, hi))
            ft.ned_raw.append(bytes(buf[pos:pos + n]))
        ft.non_empty_domain = ned
    j = 0
    for f in fields:
        if f.kind in ("slots", "section"):
            n = f.count(v, ns)
            ft.set(f, list(t[j:j + n]))
            j += n
        else:
            ft.set(f, t[j])
            j += 1
    if v < 7:
        ft.file_validity_sizes = [0] * ns
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
    lay = tail_layout(v, len(ft.slots))
    rest_at = next(off for name, (off, n) in lay.items() if n)     # the first per-slot field
    ned_end = at + got[1].struct.size - rest_at
    flags = [ned_end + lay[f.name][0] for f in FOOTER if f.kind == "bool" and f.name in lay]
    head_end = ned_end + rest_at
    return FooterShape(len(buf), bytes(buf), ((0, at + 2), (min(flags, default=head_end), head_end)),
                       ned_end + lay["rtree"][0],
                       {k: ned_end + lay[k][0] for k in section_kinds(v)})
