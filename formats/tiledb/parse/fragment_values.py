"""Values in a slot's datatype inside fragment metadata: typed fields and 1D ranges.

Shared by the footer (non-empty domain), the R-tree (MBRs) and the fragment min/max section.
"""
from __future__ import annotations

from typing import Any, List, Optional, Tuple

from ...core.cursor import Cursor, format_scalar
from ...core.fielddoc import doc
from ...core.node import ERROR, WARNING, Node
from ...filters.enums import BYTE_STRING_TYPES, DATATYPE_NAMES, DATATYPES, Datatype, datatype_size, format_value

SPEC = "fragment.md"
D_RANGE_MIN = doc("Range minimum, in the dimension's datatype", spec=SPEC + " MBR")
D_RANGE_MAX = doc("Range maximum, in the dimension's datatype", spec=SPEC + " MBR")
D_RANGE_LEN = doc("Range length: bytes of the var-sized range (minimum then maximum)",
                  spec=SPEC + " MBR")
D_RANGE_START = doc("Minimum value length: bytes of the range minimum", spec=SPEC + " MBR")


def parse_range(c: Cursor, dim, title: str) -> Tuple[Any, Any, bytes]:
    """One 1D range of `dim` (fixed: min, max; var: u64 length, u64 start size, bytes)."""
    out: List[Any] = []

    def body(rc: Cursor):
        if dim.var:
            total = rc.length("u64", "Range length", 1, D_RANGE_LEN, "bytes").value
            start = rc.u64("Minimum value length", D_RANGE_START)
            if start.value > total:
                start.mark(ERROR, f"Minimum value length {start.value} exceeds the range length "
                                  f"{total}")
                rc.fail("Range", "the range cannot be split")
            raw_min = rc.source.read(rc.pos, start.value)
            typed_field(rc, "Range minimum", dim.datatype, start.value, D_RANGE_MIN)
            raw_max = rc.source.read(rc.pos, total - start.value)
            typed_field(rc, "Range maximum", dim.datatype, total - start.value, D_RANGE_MAX)
        else:
            sz = dim.cell_size
            raw_min = rc.source.read(rc.pos, sz)
            typed_field(rc, "Range minimum", dim.datatype, sz, D_RANGE_MIN)
            raw_max = rc.source.read(rc.pos, sz)
            typed_field(rc, "Range maximum", dim.datatype, sz, D_RANGE_MAX)
        out.extend([raw_min, raw_max])
    g = c.group(title, body)
    lo = python_value(dim.datatype, out[0]) if out else None
    hi = python_value(dim.datatype, out[1]) if len(out) > 1 else None
    g.value = [lo, hi]
    g.display = f"[{short_text(lo)}, {short_text(hi)}]"
    return lo, hi, (out[0] + out[1]) if len(out) > 1 else b""



def python_value(datatype: int, raw: bytes):
    if datatype in BYTE_STRING_TYPES:
        try:
            return raw.decode("utf-8")
        except UnicodeDecodeError:
            return raw.decode("latin-1")
    v, _ = format_value(datatype, raw)
    return v


def short_text(v) -> str:
    if isinstance(v, str):
        return repr(v) if len(v) <= 40 else repr(v[:40]) + "…"
    if isinstance(v, float):
        return format_scalar(v)
    return str(v)


_OPAQUE = (Datatype.BLOB, Datatype.GEOM_WKB, Datatype.GEOM_WKT, Datatype.ANY)


def typed_field_warns(datatype: Optional[int], size: int) -> bool:
    """Whether `typed_field` marks `size` bytes of `datatype`: numbers that are not a whole
    number of values (for the node-free readers, `fragment_sections.payload_stores`)."""
    return datatype is not None and datatype in DATATYPES and \
        datatype not in BYTE_STRING_TYPES and datatype not in _OPAQUE and \
        bool(size % max(1, datatype_size(datatype)))


def typed_field(c: Cursor, name: str, datatype: Optional[int], size: int, fdoc) -> Node:
    """`size` bytes shown as values of `datatype` (raw bytes when unknown)."""
    if datatype is None or datatype not in DATATYPES:
        return c.raw(name, size, fdoc)
    c.need(name, size, f"{size} bytes of {DATATYPE_NAMES[datatype]}")
    raw = c.source.read(c.pos, size)
    if datatype in BYTE_STRING_TYPES:
        v = python_value(datatype, raw)
        return c.field(name, size, v, repr(v) if size else "''", "string", fdoc,
                       f"{DATATYPE_NAMES[datatype]}[{size}]")
    if datatype in _OPAQUE:
        return c.raw(name, size, fdoc)
    v, text = format_value(datatype, raw)
    if typed_field_warns(datatype, size):
        n = c.raw(name, size, fdoc)
        n.mark(WARNING, f"{size} bytes is not a whole number of {DATATYPE_NAMES[datatype]}")
        return n
    return c.field(name, size, v, text, "field", fdoc, DATATYPE_NAMES[datatype].lower())

