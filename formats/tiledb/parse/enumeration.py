"""Enumeration files `__schema/__enumerations/__<uuid>_<v>` (format_spec/enumeration.md).

The payload, as written by libtiledb 2.30 (FORMAT_NOTES "Enumeration payload"):
`u32 version | u32+name | u32+path_name | u8 type | u32 cvn | u8 ordered | u64+data | [u64+offsets]`;
the offsets (uint64, one per value) are present only for var-sized values. The values are
decoded here: strings split by their offsets, numbers by the cell size.
"""
from __future__ import annotations

import os
from dataclasses import dataclass, field
from typing import Any, List, Optional

import numpy as np

from ...core.cursor import MAX_VALUE_LIST, Cursor, ParseStop
from ...core.fielddoc import doc
from ...core.node import ERROR, WARNING, LazyChildren, Node, hex_preview
from ...filters.enums import DATATYPE_NAMES, TEXT_TYPES, VAR_NUM, datatype_size, format_value
from .tile import parse_generic_tile_file

SPEC = "enumeration.md"
ENUMERATION_VERSION = 0

D_VERSION = doc("Version number: enumeration format version (0 in libtiledb 2.30; the file "
                "name ends in the same number)", spec=SPEC)
D_NAME_LEN = doc("Name length: characters in the enumeration's name", spec=SPEC,
                 note="not in enumeration.md: the bytes have the name and the path name "
                      "between the version and the datatype (FORMAT_NOTES 3)")
D_NAME = doc("Name: the enumeration's name, as attributes and the schema refer to it",
             spec=SPEC, note="not in enumeration.md (FORMAT_NOTES 3)")
D_PATH_LEN = doc("Path name length: characters in the path name", spec=SPEC,
                 note="not in enumeration.md (FORMAT_NOTES 3)")
D_PATH = doc("Path name: this file's own name in __schema/__enumerations/", spec=SPEC,
             note="not in enumeration.md (FORMAT_NOTES 3)")
D_TYPE = doc("Datatype: the datatype of the enumeration values", spec=SPEC)
D_CVN = doc("Cell Val Num: values per enumeration value; 0xFFFFFFFF (var) for strings",
            spec=SPEC)
D_ORDERED = doc("Ordered: whether the values are to be considered ordered (comparisons on the "
                "codes then follow the value order)", spec=SPEC)
D_DATA_SIZE = doc("Data Size: bytes of the values that follow", spec=SPEC)
D_DATA = doc("Data: the enumeration values back to back (var-sized values are split by the "
             "offsets that follow)", spec=SPEC)
D_VALUE = doc("One enumeration value; its position (from 0) is the code an attribute stores",
              spec=SPEC)
D_OFFSETS_SIZE = doc("Offsets Size: bytes of the uint64 offsets (8 × the number of values); "
                     "present only when Cell Val Num is var", spec=SPEC)
D_OFFSETS = doc("Offsets: start of each value in Data (uint64, the first is 0)", spec=SPEC)


@dataclass
class Enumeration:
    """One enumeration as parsed: `values[i]` is the label of code i."""

    version: int
    name: str = ""
    path_name: str = ""
    datatype: int = 0
    cell_val_num: int = 1
    ordered: bool = False
    values: List[Any] = field(default_factory=list)
    file_name: str = ""

    @property
    def var(self) -> bool:
        return self.cell_val_num == VAR_NUM


def _text_name(cur: Cursor, len_name: str, name: str, len_doc, name_doc) -> str:
    n = cur.length("u32", len_name, 1, len_doc, "bytes").value
    return cur.string(name, n, name_doc).value


def parse_enumeration(cur: Cursor, ctx=None) -> Optional[Enumeration]:
    """Parse an enumeration payload at `cur`; the Enumeration, or None when cut short."""
    e = Enumeration(0)
    try:
        _parse(cur, e)
    except ParseStop:
        return None
    return e


def _parse(cur: Cursor, e: Enumeration) -> None:
    vn = cur.u32("Version number", D_VERSION)
    e.version = vn.value
    if vn.value > ENUMERATION_VERSION:
        vn.mark(WARNING, f"enumeration version {vn.value} is newer than the one known "
                         f"({ENUMERATION_VERSION}); libtiledb 2.30 refuses it")
    e.name = _text_name(cur, "Name length", "Name", D_NAME_LEN, D_NAME)
    e.path_name = _text_name(cur, "Path name length", "Path name", D_PATH_LEN, D_PATH)
    e.datatype = cur.u8("Datatype", D_TYPE, enum=DATATYPE_NAMES).value
    cvn = cur.u32("Cell Val Num", D_CVN)
    e.cell_val_num = cvn.value
    if cvn.value == VAR_NUM:
        cvn.display = "var (0xFFFFFFFF)"
    elif cvn.value == 0:
        cvn.mark(ERROR, "Cell Val Num: 0 values per cell is not valid")
    e.ordered = cur.boolean("Ordered", D_ORDERED).value
    dsize = cur.length("u64", "Data Size", 1, D_DATA_SIZE, "bytes").value
    data_off = cur.pos
    cur.need("Data", dsize, f"{dsize} bytes of values")
    data_node = Node("Data", "array", cur.source, data_off, dsize, doc=D_DATA,
                     type=f"uint8[{dsize}]")
    cur.node.add(data_node)
    cur.pos += dsize
    starts: Optional[List[int]] = None
    if e.var:
        osize = cur.length("u64", "Offsets Size", 1, D_OFFSETS_SIZE, "bytes")
        if osize.value % 8:
            osize.mark(ERROR, f"Offsets Size: {osize.value} is not a multiple of 8")
            cur.fail("Offsets", f"{osize.value} bytes cannot hold uint64 offsets", osize.value)
        on = cur.array("Offsets", "u64", osize.value // 8, D_OFFSETS)
        offs = on.data
        bad = None
        if len(offs) and int(offs[0]) != 0:
            bad = f"the first offset is {int(offs[0])}, not 0"
        elif len(offs) > 1 and bool(np.any(np.diff(offs.astype(np.int64)) < 0)):
            bad = "offsets decrease"
        elif len(offs) and int(offs[-1]) > dsize:
            bad = f"the last offset {int(offs[-1])} is past the {dsize} bytes of data"
        if bad:
            on.mark(ERROR, f"Offsets: {bad}; the values cannot be split")
        else:
            starts = [int(x) for x in offs.tolist()] if len(offs) <= 1 << 20 else None
            if starts is None:
                on.mark(WARNING, "too many values to decode")
    else:
        cs = datatype_size(e.datatype) * max(1, e.cell_val_num)
        if dsize % cs:
            data_node.mark(ERROR, f"Data: {dsize} bytes is not a whole number of {cs}-byte "
                                  f"values")
        elif dsize // cs <= 1 << 20:
            starts = list(range(0, dsize, cs))
    _fill_values(data_node, e, starts, dsize)


def _fill_values(node: Node, e: Enumeration, starts: Optional[List[int]], dsize: int) -> None:
    src, base, dt = node.source, node.offset, e.datatype
    if starts is None:
        node.display = hex_preview(src.read(base, 16)) if dsize else "(empty)"
        return
    ends = starts[1:] + [dsize]
    raw = src.read(base, dsize)
    for a, b in zip(starts, ends):
        v, _ = format_value(dt, raw[a:b])
        e.values.append(v)
    count = len(starts)
    vals = e.values

    def make(i: int) -> Node:
        a, b = starts[i], ends[i]
        v, text = format_value(dt, raw[a:b]) if b > a else (vals[i], "(empty)")
        return Node(f"Value {i}", "string" if dt in TEXT_TYPES else "field", src, base + a,
                    b - a, value=v, display=text, doc=D_VALUE,
                    type=f"{DATATYPE_NAMES.get(dt, '?')}[{(b - a) // max(1, datatype_size(dt))}]")

    node.set_lazy(LazyChildren(count, make, uniform=not e.var))
    node.value = list(vals) if count <= MAX_VALUE_LIST else None
    shown = ", ".join(repr(x) if isinstance(x, str) else str(x) for x in vals[:8])
    node.display = f"[{shown}{', …' if count > 8 else ''}] ({count} values)"


def parse_enumeration_file(document, source, ctx=None) -> Node:
    """The whole enumeration file (a generic tile). The returned node's `data` is the
    Enumeration (or None)."""
    name = os.path.basename(getattr(source, "name", "enumeration")) or "enumeration"

    def parse(c: Cursor, ctx):
        e = parse_enumeration(c, ctx)
        if e is not None:
            e.file_name = name
            if e.path_name and e.path_name != name:
                c.node["Path name"].mark(
                    WARNING, f"Path name {e.path_name!r} differs from the file name {name!r}")
        return e

    root = parse_generic_tile_file(
        document, source, ctx, parse, "Enumeration",
        lambda e: (f"{e.name!r}: {len(e.values)} {DATATYPE_NAMES.get(e.datatype, '?')} value(s)"
                   f"{', ordered' if e.ordered else ''}"))
    if root.data is not None:
        root.display = f"enumeration {root.data.name!r} ({len(root.data.values)} values)"
    return root
