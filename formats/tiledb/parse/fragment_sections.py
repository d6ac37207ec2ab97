"""The per-slot sections of fragment metadata (tile offsets, var sizes, mins/maxs, sums, null
counts) and the fragment-wide ones (fragment min/max/sum/null count, processed conditions):
the payload parser of each section kind."""
from __future__ import annotations

import struct
from typing import Any, Callable, List, Optional, Tuple

import numpy as np

from ...core.cursor import Cursor
from ...core.fielddoc import doc
from ...core.node import ERROR, WARNING, LazyChildren, Node, hex_preview
from ...filters.enums import DATATYPE_NAMES, FLOAT_TYPES, VAR_NUM, Datatype, datatype_size, format_value
from ..model.array_model import ArraySchema
from ..model.fragment_slots import slot_field
from .fragment_rtree import rtree_parser
from .fragment_values import python_value, typed_field, typed_field_warns

SPEC = "fragment.md"
SPEC_MINMAX = SPEC + " Tile Mins Maxs"
SPEC_FRAGMENT_MMSN = SPEC + " Tile Fragment Min Max Sum Null Count"
SPEC_PROCESSED = SPEC + " Tile Processed Conditions"

D_NUM_OFFSETS = doc("Num tile offsets: number of tiles of the slot (0 when the slot has no "
                    "such file)", spec=SPEC + " Tile Offsets")
D_OFFSETS = doc("Tile offsets: where each tile starts in the slot's data file",
                spec=SPEC + " Tile Offsets")
D_VAR_OFFSETS = doc("Var tile offsets: where each tile starts in the slot's _var file",
                    spec=SPEC + " Tile Offsets")
D_NUM_SIZES = doc("Num tile sizes", spec=SPEC + " Tile Sizes")
D_VAR_SIZES = doc("Var tile sizes: unfiltered bytes of each var tile", spec=SPEC + " Tile Sizes")
D_VALIDITY_OFFSETS = doc("Validity tile offsets: where each tile starts in the slot's _validity "
                         "file", added_in=7, spec=SPEC + " Tile Offsets")
D_MM_FIXED = doc("Fixed buffer size: bytes of the per-tile values (for var-sized slots: u64 "
                 "offsets into the var buffer)", added_in=11, spec=SPEC_MINMAX,
                 note="The spec puts a value count first and the var size after the values; "
                      "the bytes are u64 fixed size, u64 var size, fixed, var (FORMAT_NOTES 5)")
D_MM_VAR = doc("Var buffer size: bytes of the var-sized values", added_in=11,
               spec=SPEC_MINMAX)
D_MM_VALUES = doc("Per-tile values, in the slot's datatype", added_in=11,
                  spec=SPEC_MINMAX)
D_MM_VAROFFS = doc("Per-tile offsets into the var buffer", added_in=11,
                   spec=SPEC_MINMAX)
D_MM_VARBUF = doc("Var buffer: the var-sized per-tile values, back to back", added_in=11,
                  spec=SPEC_MINMAX)
D_NUM_VALUES = doc("Num values: number of tiles", added_in=11, spec=SPEC + " Tile Sums")
D_SUMS = doc("Tile sums: per tile, the sum of the cells as a 64-bit word (int64 for signed, "
             "uint64 for unsigned, float64 bits for floats)", added_in=11, spec=SPEC + " Tile Sums")
D_NULL_COUNTS = doc("Tile null counts: per tile, the number of null cells", added_in=11,
                    spec=SPEC + " Tile Null Count")
D_F_MIN_SIZE = doc("Min size: bytes of the fragment minimum", added_in=12,
                   spec=SPEC_FRAGMENT_MMSN)
D_F_MIN = doc("Min value: the slot's smallest value in the fragment", added_in=12,
              spec=SPEC_FRAGMENT_MMSN)
D_F_MAX_SIZE = doc("Max size: bytes of the fragment maximum", added_in=12,
                   spec=SPEC_FRAGMENT_MMSN)
D_F_MAX = doc("Max value: the slot's largest value in the fragment", added_in=12,
              spec=SPEC_FRAGMENT_MMSN)
D_F_SUM = doc("Sum: the slot's sum over the fragment (a 64-bit word as for tile sums)",
              added_in=12, spec=SPEC_FRAGMENT_MMSN)
D_F_NULLS = doc("Null count: the slot's null cells in the fragment", added_in=12,
                spec=SPEC_FRAGMENT_MMSN)
D_PC_NUM = doc("Num: number of processed (already applied) delete/update conditions",
               added_in=16, spec=SPEC_PROCESSED)
D_PC_SIZE = doc("Condition size: bytes of the condition marker name", added_in=16,
                spec=SPEC_PROCESSED)
D_PC_NAME = doc("Condition: the condition marker file name", added_in=16,
                spec=SPEC_PROCESSED)

PER_SLOT_KINDS = ("tile_offsets", "tile_var_offsets", "tile_var_sizes", "tile_validity_offsets",
                  "tile_mins", "tile_maxs", "tile_sums", "tile_null_counts")
# The per-slot sections whose payload is `u64 count` then that many 64-bit values:
# kind -> (count name, array name, count doc, array doc, item name)
U64_LIST_SECTIONS = {
    "tile_offsets": ("Num tile offsets", "Tile offsets", D_NUM_OFFSETS, D_OFFSETS,
                     "Tile offset"),
    "tile_var_offsets": ("Num tile offsets", "Tile var offsets", D_NUM_OFFSETS, D_VAR_OFFSETS,
                         "Tile var offset"),
    "tile_var_sizes": ("Num tile sizes", "Tile var sizes", D_NUM_SIZES, D_VAR_SIZES,
                       "Tile var size"),
    "tile_validity_offsets": ("Num tile offsets", "Tile validity offsets", D_NUM_OFFSETS,
                              D_VALIDITY_OFFSETS, "Tile validity offset"),
    "tile_sums": ("Num values", "Tile sums", D_NUM_VALUES, D_SUMS, "Tile"),
    "tile_null_counts": ("Num values", "Tile null counts", D_NUM_VALUES, D_NULL_COUNTS, "Tile"),
}
SECTION_TITLES = {
    "tile_offsets": "Tile offsets", "tile_var_offsets": "Tile var offsets",
    "tile_var_sizes": "Tile var sizes", "tile_validity_offsets": "Tile validity offsets",
    "tile_mins": "Tile mins", "tile_maxs": "Tile maxs", "tile_sums": "Tile sums",
    "tile_null_counts": "Tile null counts",
}
_PRIM_OF = {0: "i32", 1: "i64", 2: "f32", 3: "f64", 5: "i8", 6: "u8", 7: "i16", 8: "u16",
            9: "u32", 10: "u64", 41: "u8"}
for _dt in range(18, 40):
    _PRIM_OF[_dt] = "i64"


def prim_kind(datatype: int) -> Optional[str]:
    return _PRIM_OF.get(datatype)


def sum_kind(datatype: Optional[int]) -> str:
    if datatype in FLOAT_TYPES:
        return "f64"
    if datatype in (Datatype.UINT8, Datatype.UINT16, Datatype.UINT32, Datatype.UINT64, Datatype.BOOL):
        return "u64"
    return "i64"


def _payload_u64_list(num_name: str, arr_name: str, num_doc, arr_doc, item: str,
                      kind: str = "u64", sink: Optional[Callable[[np.ndarray], None]] = None):
    def parse(c: Cursor):
        n = c.length("u64", num_name, 8, num_doc, "values").value
        node = c.array(arr_name, kind, n, arr_doc, item_name=item + " {i}")
        if sink is not None:
            sink(node.data)
    return parse


def _parse_minmax(dt: Optional[int], cvn: int, var: bool, sink=None):
    def parse(c: Cursor):
        fixed = c.u64("Fixed buffer size", D_MM_FIXED).value
        varb = c.u64("Var buffer size", D_MM_VAR).value
        c.need("Fixed buffer", fixed, f"{fixed} bytes")
        if var:
            n = fixed // 8
            offs = c.array("Var offsets", "u64", n, D_MM_VAROFFS, item_name="Tile {i}")
            if fixed % 8:
                c.raw("Fixed buffer (remainder)", fixed % 8).mark(
                    ERROR, "fixed buffer of a var-sized slot must hold u64 offsets")
            c.need("Var buffer", varb, f"{varb} bytes")
            vb = _var_values(c, "Var buffer", offs.data, varb, dt, D_MM_VARBUF)
            if sink is not None:
                sink((offs.data, vb))
        elif fixed:
            node = _typed_array(c, "Values", dt, cvn, fixed, D_MM_VALUES, "Tile {i}")
            if sink is not None:
                sink(node.data)
            if varb:
                c.raw("Var buffer", varb, D_MM_VARBUF).mark(
                    WARNING, "a fixed-sized slot should have no var buffer")
        elif varb:
            c.raw("Var buffer", varb, D_MM_VARBUF)
    return parse


def _typed_array(c: Cursor, name: str, dt: Optional[int], cvn: int, nbytes: int, fdoc,
                 item: str) -> Node:
    if dt is None:
        return c.raw(name, nbytes, fdoc)
    kind = prim_kind(dt)
    if kind is not None and cvn == 1 and nbytes % datatype_size(dt) == 0:
        return c.array(name, kind, nbytes // datatype_size(dt), fdoc, item_name=item)
    cell = datatype_size(dt) * cvn if cvn not in (0, VAR_NUM) else 0
    if not cell or nbytes % cell:
        return c.raw(name, nbytes, fdoc)
    n = nbytes // cell
    base, src = c.pos, c.source

    def make(i: int) -> Node:
        raw = src.read(base + i * cell, cell)
        v, text = format_value(dt, raw)
        return Node(item.format(i=i + 1, i0=i), "field", src, base + i * cell, cell, value=v,
                    display=text, type=DATATYPE_NAMES.get(dt))
    node = c.field(name, nbytes, None, f"{n} × {cell} B", "array", fdoc)
    node.set_lazy(LazyChildren(n, make, elements=True))
    node.data = src.read(base, nbytes)
    return node


def _var_values(c: Cursor, name: str, offsets: np.ndarray, nbytes: int, dt, fdoc) -> Node:
    base, src = c.pos, c.source
    n = len(offsets)

    def bounds(i: int) -> Tuple[int, int]:
        a = int(offsets[i])
        b = int(offsets[i + 1]) if i + 1 < n else nbytes
        return a, b

    ok = n == 0 or (int(offsets[0]) <= nbytes and bool(np.all(offsets[1:] >= offsets[:-1]))
                    and int(offsets[-1]) <= nbytes)
    node = c.field(name, nbytes, None, hex_preview(src.read(base, 16)) if nbytes else "(empty)",
                   "bytes", fdoc)
    if ok and n:
        def make(i: int) -> Node:
            a, b = bounds(i)
            raw = src.read(base + a, b - a)
            v = python_value(dt, raw) if dt is not None else None
            return Node(f"Tile {i + 1}", "string" if isinstance(v, str) else "bytes", src,
                        base + a, b - a, value=v, display=repr(v) if v is not None else
                        hex_preview(raw))
        node.set_lazy(LazyChildren(n, make, uniform=int(offsets[0]) == 0))
    elif not ok:
        node.mark(ERROR, f"{name}: offsets are not increasing within {nbytes} bytes")
    node.data = src.read(base, nbytes)
    return node


def _parse_fmmsn(slots: List[str], schema: Optional[ArraySchema]):
    def parse(c: Cursor):
        for s in slots:
            dt, cvn = slot_field(schema, s)

            def one(sc: Cursor, dt=dt):
                n = sc.length("u64", "Min size", 1, D_F_MIN_SIZE, "bytes").value
                typed_field(sc, "Min value", dt, n, D_F_MIN)
                n = sc.length("u64", "Max size", 1, D_F_MAX_SIZE, "bytes").value
                typed_field(sc, "Max value", dt, n, D_F_MAX)
                sc.prim(sum_kind(dt), "Sum", D_F_SUM)
                sc.u64("Null count", D_F_NULLS)
            c.group(s, one)
        if c.remaining:
            c.raw("unparsed", c.remaining).mark(WARNING, "bytes after the last slot")
    return parse


def _parse_processed(c: Cursor) -> None:
    n = c.length("u64", "Num", 8, D_PC_NUM, "conditions").value
    for i in range(n):
        def one(pc: Cursor):
            k = pc.length("u64", "Condition size", 1, D_PC_SIZE, "bytes").value
            pc.string("Condition", k, D_PC_NAME)
        c.group(f"Condition {i + 1}", one)


_U64 = struct.Struct("<Q")
_U64X2 = struct.Struct("<QQ")
_WORD = {"u64": "<u8", "i64": "<i8", "f64": "<f8"}


def payload_stores(kind: str, slot: int, footer, schema: Optional[ArraySchema], data: bytes
                   ) -> Optional[List[Tuple[str, int, Any]]]:
    """What `section_parser(kind, slot, ...)` hands its loader on the payload `data`, read
    without nodes — where its annotated parse marks nothing and explains every byte — for
    the sections that differ from fragment to fragment (a u64 list, fixed-sized tile mins
    and maxs, the fragment min/max/sum/null count); None for anything else (another kind, a
    count that does not fit, bytes left over, a var buffer, values that are not whole): the
    caller parses it with nodes, which say what it is. The layout is the parsers' above;
    the two are held equal on every committed array and damaged copies
    (tests/tiledb/test_verify_paths_differential.py)."""
    n = len(data)
    slots = footer.slots
    sname = slots[slot] if 0 <= slot < len(slots) else None
    dt, cvn = slot_field(schema, sname) if sname else (None, 1)
    if kind in U64_LIST_SECTIONS:   # `_payload_u64_list`
        if n < 8 or 8 + 8 * _U64.unpack_from(data, 0)[0] != n:
            return None
        word = sum_kind(dt) if kind == "tile_sums" else "u64"
        return [(kind, slot, np.frombuffer(data, _WORD[word], (n - 8) // 8, 8))]
    if kind in ("tile_mins", "tile_maxs"):   # `_parse_minmax`, fixed-sized
        if cvn == VAR_NUM or n < 16:
            return None
        fixed, varb = _U64X2.unpack_from(data, 0)
        # (the payload kept whole: verify's statistics check reads the values)
        return [(kind, slot, data)] if varb == 0 and 16 + fixed == n else None
    if kind == "fmmsn":   # `_parse_fmmsn`: per slot min, max (sized), sum, null count
        pos = 0
        for s in slots:
            sdt = slot_field(schema, s)[0]
            for _ in range(2):
                if pos + 8 > n:
                    return None
                k = _U64.unpack_from(data, pos)[0]
                pos += 8
                if k > n - pos or typed_field_warns(sdt, k):
                    return None
                pos += k
            pos += 16
        return [] if pos == n else None
    return None


def section_parser(kind: str, slot: int, footer, schema: Optional[ArraySchema], loader):
    """The payload parser of section `kind` ("rtree", a per-slot kind of slot number `slot`,
    "fmmsn" or "processed"); u64 lists also hand their array to `loader` (None: unknown kind)."""
    slots = footer.slots
    sname = slots[slot] if 0 <= slot < len(slots) else None
    dt, cvn = slot_field(schema, sname) if sname else (None, 1)
    if kind == "rtree":
        return rtree_parser(schema, footer.version)
    if kind in U64_LIST_SECTIONS:
        # tile sums are 64-bit words typed by the slot's datatype; the rest are u64
        return _payload_u64_list(*U64_LIST_SECTIONS[kind],
                                 kind=sum_kind(dt) if kind == "tile_sums" else "u64",
                                 sink=lambda arr: loader.store(kind, slot, arr))
    if kind in ("tile_mins", "tile_maxs"):
        var = cvn == VAR_NUM
        return _parse_minmax(dt, cvn, var)
    if kind == "fmmsn":
        return _parse_fmmsn(slots, schema)
    if kind == "processed":
        return _parse_processed
    return None
