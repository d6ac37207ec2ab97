"""`__fragment_metadata.tdb` (format_spec/fragment.md, checked on bytes written by 2.30).

The file is a run of generic tiles (the sections), then a plain footer, then `u64 footer
length`. The footer is read first, from the end: it gives the non-empty domain, the file sizes
and the offset of every section. Each section is then parsed as a generic tile at its offset.

Slots: attributes, then the legacy `__coords` slot, then dimensions (format ≥ 5), then
`__timestamps` (when the footer says so) and the two delete-metadata slots.

Big sections (more than `LAZY_BYTES`) are shown as nodes whose children are built when first
asked for, and the model (`FragmentMetadata`) decodes the per-slot arrays on first use, so a
fragment with 100 000 tiles opens at once.

Version differences handled (from upstream `fragment_metadata.cc` / `rtree.cc`):
schema name from v10; timestamps flag from v14; delete-metadata flag from v15; validity file
sizes and validity offsets sections from v7; dimension slots from v5; tile mins/maxs/sums/null
counts from v11; fragment min/max/sum/null count from v12; processed conditions from v16;
R-tree v1–v4 has extra ignored fields and fixed-size ranges only. Format v1–v2 (a single
generic tile, no footer) is not parsed.
"""
from __future__ import annotations

import os
import struct
from dataclasses import dataclass, field
from typing import Any, Callable, Dict, List, Optional, Sequence, Tuple

import numpy as np

from ..cursor import Cursor, ParseStop, format_scalar
from ..engine import run_parser
from ..fielddoc import doc
from ..node import ERROR, WARNING, LazyChildren, Node, hex_preview
from .enums import DATATYPE_NAMES, DATATYPES, VAR_NUM, datatype_size, format_value
from .model import ArraySchema, FragmentMetadata
from .rawtile import TileError, decode_generic_tile, peek_generic_tile
from .tile import parse_generic_tile

SPEC = "fragment.md"
LAZY_BYTES = 64 * 1024  # sections bigger than this are parsed when first expanded

# ---- FieldDocs: footer -------------------------------------------------------------------------
D_VERSION = doc("Version number: format version of the fragment", spec=SPEC + " Footer")
D_SCHEMA_NAME_SIZE = doc("Array schema name size: bytes of the name that follows", added_in=10,
                         spec=SPEC + " Footer",
                         note="The spec lists the name twice (also at the end of the footer); "
                              "2.30 writes it once, here (FORMAT_NOTES 6)")
D_SCHEMA_NAME = doc("Array schema name: the file under __schema/ this fragment was written with",
                    added_in=10, spec=SPEC + " Footer")
D_DENSE = doc("Dense: 1 when the fragment is dense (no coordinates stored)", spec=SPEC + " Footer")
D_NULL_NED = doc("Null non-empty domain: 1 when the fragment has no non-empty domain (then "
                 "dummy zero bytes follow)", spec=SPEC + " Footer")
D_NED = doc("Non-empty domain: per dimension the smallest and largest coordinate written "
            "(an MBR)", spec=SPEC + " MBR")
D_RANGE_MIN = doc("Range minimum, in the dimension's datatype", spec=SPEC + " MBR")
D_RANGE_MAX = doc("Range maximum, in the dimension's datatype", spec=SPEC + " MBR")
D_RANGE_LEN = doc("Range length: bytes of the var-sized range (minimum then maximum)",
                  spec=SPEC + " MBR")
D_RANGE_START = doc("Minimum value length: bytes of the range minimum", spec=SPEC + " MBR")
D_NED_DUMMY = doc("Dummy non-empty domain: zero bytes written when the non-empty domain is null")
D_SPARSE_TILES = doc("Number of sparse tiles (0 for dense fragments)", spec=SPEC + " Footer")
D_LAST_TILE = doc("Last tile cell num: cells in the last tile (sparse); for dense fragments the "
                  "cells per tile", spec=SPEC + " Footer")
D_HAS_TS = doc("Includes timestamps: the fragment stores a per-cell timestamp slot (t.tdb)",
               added_in=14, spec=SPEC + " Footer")
D_HAS_DEL = doc("Includes delete metadata: the fragment stores delete timestamp and delete "
                "condition slots", added_in=15, spec=SPEC + " Footer")
D_FILE_SIZES = doc("File sizes: bytes of each slot's data file (the offsets file for var-sized "
                   "slots)", spec=SPEC + " Footer")
D_FILE_VAR_SIZES = doc("File var sizes: bytes of each slot's _var file", spec=SPEC + " Footer")
D_FILE_VALIDITY_SIZES = doc("File validity sizes: bytes of each slot's _validity file",
                            added_in=7, spec=SPEC + " Footer")
D_RTREE_OFF = doc("R-Tree offset: where the R-tree generic tile starts in this file",
                  spec=SPEC + " Footer")
D_GT_OFFSETS = {
    "tile_offsets": doc("Offsets of the generic tiles holding each slot's tile offsets",
                        spec=SPEC + " Footer"),
    "tile_var_offsets": doc("Offsets of the generic tiles holding each slot's var tile offsets",
                            spec=SPEC + " Footer"),
    "tile_var_sizes": doc("Offsets of the generic tiles holding each slot's var tile sizes",
                          spec=SPEC + " Footer"),
    "tile_validity_offsets": doc("Offsets of the generic tiles holding each slot's validity "
                                 "tile offsets", added_in=7, spec=SPEC + " Footer"),
    "tile_mins": doc("Offsets of the generic tiles holding each slot's tile minimums",
                     added_in=11, spec=SPEC + " Footer"),
    "tile_maxs": doc("Offsets of the generic tiles holding each slot's tile maximums",
                     added_in=11, spec=SPEC + " Footer"),
    "tile_sums": doc("Offsets of the generic tiles holding each slot's tile sums", added_in=11,
                     spec=SPEC + " Footer"),
    "tile_null_counts": doc("Offsets of the generic tiles holding each slot's tile null counts",
                            added_in=11, spec=SPEC + " Footer"),
}
D_FMMSN_OFF = doc("Fragment min max sum null count offset: where that generic tile starts",
                  added_in=12, spec=SPEC + " Footer")
D_PROC_OFF = doc("Processed conditions offset: where that generic tile starts", added_in=16,
                 spec=SPEC + " Footer")
D_FOOTER = doc("Footer: a plain blob (not a generic tile) read first, from the end of the file",
               spec=SPEC + " Footer")
D_FOOTER_LEN = doc("Footer length: bytes of the footer before it. Written by format ≥ 10 (and "
                   "older formats with a var-sized dimension)", spec=SPEC + " Footer",
                   note="The spec says only with var-sized dimensions; since v10 it is always "
                        "written")
D_SLOT_ITEM = doc("One value per slot (attributes, __coords, dimensions, then the optional "
                  "timestamp and delete slots)")

# ---- FieldDocs: sections -----------------------------------------------------------------------
D_FANOUT = doc("Fanout: children per R-tree node (10); dense fragments have 0 levels",
               spec=SPEC + " R-Tree")
D_LEVELS = doc("Num levels: levels of the R-tree, root first", spec=SPEC + " R-Tree")
D_NMBRS = doc("Num MBRs at this level", spec=SPEC + " R-Tree")
D_MBR = doc("MBR: per dimension the range of the coordinates below this node; the last level "
            "has one MBR per data tile", spec=SPEC + " MBR")
D_RT_DIMNUM = doc("Dimension number (format ≤ 4; ignored by readers)", removed_in=5,
                  spec="rtree.cc deserialize_v1_v4")
D_RT_TYPE = doc("Datatype (format ≤ 4; ignored by readers)", removed_in=5,
                spec="rtree.cc deserialize_v1_v4")
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
                 "offsets into the var buffer)", added_in=11, spec=SPEC + " Tile Mins Maxs",
                 note="The spec puts a value count first and the var size after the values; "
                      "the bytes are u64 fixed size, u64 var size, fixed, var (FORMAT_NOTES 5)")
D_MM_VAR = doc("Var buffer size: bytes of the var-sized values", added_in=11,
               spec=SPEC + " Tile Mins Maxs")
D_MM_VALUES = doc("Per-tile values, in the slot's datatype", added_in=11,
                  spec=SPEC + " Tile Mins Maxs")
D_MM_VAROFFS = doc("Per-tile offsets into the var buffer", added_in=11,
                   spec=SPEC + " Tile Mins Maxs")
D_MM_VARBUF = doc("Var buffer: the var-sized per-tile values, back to back", added_in=11,
                  spec=SPEC + " Tile Mins Maxs")
D_NUM_VALUES = doc("Num values: number of tiles", added_in=11, spec=SPEC + " Tile Sums")
D_SUMS = doc("Tile sums: per tile, the sum of the cells as a 64-bit word (int64 for signed, "
             "uint64 for unsigned, float64 bits for floats)", added_in=11, spec=SPEC + " Tile Sums")
D_NULL_COUNTS = doc("Tile null counts: per tile, the number of null cells", added_in=11,
                    spec=SPEC + " Tile Null Count")
D_F_MIN_SIZE = doc("Min size: bytes of the fragment minimum", added_in=12,
                   spec=SPEC + " Tile Fragment Min Max Sum Null Count")
D_F_MIN = doc("Min value: the slot's smallest value in the fragment", added_in=12,
              spec=SPEC + " Tile Fragment Min Max Sum Null Count")
D_F_MAX_SIZE = doc("Max size: bytes of the fragment maximum", added_in=12,
                   spec=SPEC + " Tile Fragment Min Max Sum Null Count")
D_F_MAX = doc("Max value: the slot's largest value in the fragment", added_in=12,
              spec=SPEC + " Tile Fragment Min Max Sum Null Count")
D_F_SUM = doc("Sum: the slot's sum over the fragment (a 64-bit word as for tile sums)",
              added_in=12, spec=SPEC + " Tile Fragment Min Max Sum Null Count")
D_F_NULLS = doc("Null count: the slot's null cells in the fragment", added_in=12,
                spec=SPEC + " Tile Fragment Min Max Sum Null Count")
D_PC_NUM = doc("Num: number of processed (already applied) delete/update conditions",
               added_in=16, spec=SPEC + " Tile Processed Conditions")
D_PC_SIZE = doc("Condition size: bytes of the condition marker name", added_in=16,
                spec=SPEC + " Tile Processed Conditions")
D_PC_NAME = doc("Condition: the condition marker file name", added_in=16,
                spec=SPEC + " Tile Processed Conditions")
D_SECTION = doc("A fragment-metadata section: a generic tile (GZIP) whose payload is described "
                "by its children", spec=SPEC)

PER_SLOT_KINDS = ("tile_offsets", "tile_var_offsets", "tile_var_sizes", "tile_validity_offsets",
                  "tile_mins", "tile_maxs", "tile_sums", "tile_null_counts")
SECTION_TITLES = {
    "tile_offsets": "Tile offsets", "tile_var_offsets": "Tile var offsets",
    "tile_var_sizes": "Tile var sizes", "tile_validity_offsets": "Tile validity offsets",
    "tile_mins": "Tile mins", "tile_maxs": "Tile maxs", "tile_sums": "Tile sums",
    "tile_null_counts": "Tile null counts",
}
FOOTER_GROUP_TITLES = {
    "tile_offsets": "Tile offsets offsets", "tile_var_offsets": "Tile var offsets offsets",
    "tile_var_sizes": "Tile var sizes offsets",
    "tile_validity_offsets": "Tile validity offsets offsets", "tile_mins": "Tile mins offsets",
    "tile_maxs": "Tile maxs offsets", "tile_sums": "Tile sums offsets",
    "tile_null_counts": "Tile null counts offsets",
}
SPECIAL_SLOTS = {"__timestamps": (10, 1), "__delete_timestamps": (10, 1),
                 "__delete_condition_index": (10, 1), "__coords": (None, 1)}

_PRIM_OF = {0: "i32", 1: "i64", 2: "f32", 3: "f64", 5: "i8", 6: "u8", 7: "i16", 8: "u16",
            9: "u32", 10: "u64", 41: "u8"}
for _dt in range(18, 40):
    _PRIM_OF[_dt] = "i64"


def prim_kind(datatype: int) -> Optional[str]:
    return _PRIM_OF.get(datatype)


def sum_kind(datatype: Optional[int]) -> str:
    if datatype in (2, 3):
        return "f64"
    if datatype in (6, 8, 9, 10, 41):
        return "u64"
    return "i64"


# ================================================================================================
# Footer
# ================================================================================================
@dataclass
class Footer:
    """What a footer says, with the layout facts needed to find the sections."""

    version: int = 0
    schema_name: str = ""
    dense: bool = True
    null_ned: bool = False
    non_empty_domain: Optional[list] = None   # per dimension (min, max)
    ned_raw: List[bytes] = field(default_factory=list)
    sparse_tile_num: int = 0
    last_tile_cell_num: int = 0
    has_timestamps: bool = False
    has_delete_meta: bool = False
    slots: List[str] = field(default_factory=list)
    file_sizes: List[int] = field(default_factory=list)
    file_var_sizes: List[int] = field(default_factory=list)
    file_validity_sizes: List[int] = field(default_factory=list)
    rtree: Optional[int] = None
    sections: Dict[str, List[int]] = field(default_factory=dict)   # kind -> per-slot offsets
    fmmsn: Optional[int] = None
    processed_conditions: Optional[int] = None
    offset: int = 0
    size: int = 0
    complete: bool = False
    schema_used: bool = False


def footer_tail_size(version: int, n: int) -> int:
    """Bytes of a footer after the non-empty domain, for `n` slots."""
    size = 16 + (1 if version >= 14 else 0) + (1 if version >= 15 else 0)
    size += 8 * n * (3 if version >= 7 else 2)
    per_slot = 3 + (1 if version >= 7 else 0) + (4 if version >= 11 else 0)
    size += 8 + 8 * n * per_slot
    size += (8 if version >= 12 else 0) + (8 if version >= 16 else 0)
    return size


def section_kinds(version: int) -> List[str]:
    kinds = ["tile_offsets", "tile_var_offsets", "tile_var_sizes"]
    if version >= 7:
        kinds.append("tile_validity_offsets")
    if version >= 11:
        kinds += ["tile_mins", "tile_maxs", "tile_sums", "tile_null_counts"]
    return kinds


def _slot_names(schema: Optional[ArraySchema], version: int, ts: bool, dl: bool,
                n: Optional[int] = None) -> List[str]:
    if schema is not None:
        names = [a.name for a in schema.attributes] + ["__coords"]
        if version >= 5:
            names += [d.name for d in schema.dimensions]
        if ts:
            names.append("__timestamps")
        if dl:
            names += ["__delete_timestamps", "__delete_condition_index"]
        return names
    return [f"slot {i + 1}" for i in range(n or 0)]


def slot_field(schema: Optional[ArraySchema], name: str):
    """(datatype, cell_val_num) of a slot, or (None, 1) when unknown."""
    if schema is not None:
        f = schema.field(name)
        if f is not None:
            return f.datatype, f.cell_val_num
    return SPECIAL_SLOTS.get(name, (None, 1))


def _infer_slot_count(source, start: int, end: int, version: int, head_end: int,
                      sections_here: bool = True) -> Optional[Tuple[int, int]]:
    """Without a schema: (slot count, non-empty-domain bytes) that make the footer consistent.
    When the sections are in the same file (`sections_here`), they must chain exactly: the
    R-tree at 0, each generic tile ending where the next section starts, the last one where
    the footer starts. Otherwise the offsets must start at 0 and increase."""
    total = end - start
    head = head_end - start
    for n in range(1, 4096):
        tail = footer_tail_size(version, n)
        ned = total - head - tail
        if ned < 0:
            return None
        t0 = head_end + ned + 16
        ts = source.read(t0, 1)[0] if version >= 14 else 0
        dl = source.read(t0 + 1, 1)[0] if version >= 15 else 0
        if ts > 1 or dl > 1 or n < 2 + ts + 2 * dl:
            continue
        offs_at = t0 + (1 if version >= 14 else 0) + (1 if version >= 15 else 0)
        offs_at += 8 * n * (3 if version >= 7 else 2)
        count = (end - offs_at) // 8
        offs = np.frombuffer(source.read(offs_at, count * 8), "<u8")
        if len(offs) != count or count == 0 or int(offs[0]) != 0:
            continue
        if not (np.all(offs[1:] > offs[:-1]) and int(offs[-1]) < max(start, 1)):
            if sections_here:
                continue
        if sections_here:
            ok = True
            for i, o in enumerate(offs.tolist()):
                head_ = peek_generic_tile(source, o)
                nxt = int(offs[i + 1]) if i + 1 < len(offs) else start
                if head_ is None or o + head_[0] != nxt:
                    ok = False
                    break
            if not ok:
                continue
        elif not np.all(offs[1:] > offs[:-1]):
            continue
        return n, ned
    return None


def parse_footer(cur: Cursor, schema: Optional[ArraySchema], name: str = "Footer",
                 size: Optional[int] = None, sections_here: bool = True) -> Footer:
    """The footer at `cur` as a group node `name` (bounded by `size` when known). Without a
    schema the slot count is inferred from the section offsets and the non-empty domain is
    shown as raw bytes."""
    ft = Footer(offset=cur.pos)

    def body(c: Cursor):
        ft.version = c.u32("Version number", D_VERSION).value
        v = ft.version
        if v < 3:
            c.fail("Footer (format < 3)", f"format version {v} keeps its metadata in one generic "
                                          f"tile with no footer; arrayscope does not parse it")
        if v >= 10:
            n = c.length("u64", "Array schema name size", 1, D_SCHEMA_NAME_SIZE, "bytes").value
            ft.schema_name = c.string("Array schema name", n, D_SCHEMA_NAME).value
        ft.dense = bool(c.boolean("Dense", D_DENSE).value)
        ft.null_ned = bool(c.boolean("Null non-empty domain", D_NULL_NED).value)
        use = schema
        if use is not None and ft.schema_name and use.name and use.name != ft.schema_name:
            c.node.find("Array schema name").mark(
                WARNING, f"written with schema {ft.schema_name}; parsed with {use.name}")
        n_slots = None
        ned_bytes = None
        if use is None:
            if size is None:
                c.fail("Non-empty domain", "no array schema: the non-empty domain and the rest "
                                           "of the footer cannot be sized")
            guess = _infer_slot_count(c.source, ft.offset, ft.offset + size, v, c.pos,
                                      sections_here)
            if guess is None:
                c.fail("Non-empty domain", "no array schema, and no slot count makes the footer's "
                                           "section offsets consistent")
            n_slots, ned_bytes = guess
            c.raw("Non-empty domain", ned_bytes, D_NED).mark(
                WARNING, "no array schema: the non-empty domain is shown as raw bytes "
                         f"({n_slots} slots inferred from the section offsets)")
        else:
            ft.schema_used = True
            _parse_ned(c, use, ft)
        ft.sparse_tile_num = c.u64("Number of sparse tiles", D_SPARSE_TILES).value
        ft.last_tile_cell_num = c.u64("Last tile cell num", D_LAST_TILE).value
        if v >= 14:
            ft.has_timestamps = bool(c.boolean("Includes timestamps", D_HAS_TS).value)
        if v >= 15:
            ft.has_delete_meta = bool(c.boolean("Includes delete metadata", D_HAS_DEL).value)
        ft.slots = _slot_names(use, v, ft.has_timestamps, ft.has_delete_meta, n_slots)
        if use is None and n_slots is not None and len(ft.slots) != n_slots:
            ft.slots = _slot_names(None, v, False, False, n_slots)
        ns = len(ft.slots)
        ft.file_sizes = _slot_u64s(c, "File sizes", ft.slots, D_FILE_SIZES)
        ft.file_var_sizes = _slot_u64s(c, "File var sizes", ft.slots, D_FILE_VAR_SIZES)
        if v >= 7:
            ft.file_validity_sizes = _slot_u64s(c, "File validity sizes", ft.slots,
                                                D_FILE_VALIDITY_SIZES)
        else:
            ft.file_validity_sizes = [0] * ns
        ft.rtree = c.u64("R-Tree offset", D_RTREE_OFF).value
        for kind in section_kinds(v):
            slots = ft.slots
            if v < 5 and kind != "tile_offsets":
                slots = ft.slots[:-1]  # v3/v4: no var/validity entry for the coords slot
            ft.sections[kind] = _slot_u64s(c, FOOTER_GROUP_TITLES[kind], slots, D_GT_OFFSETS[kind])
        if v >= 12:
            ft.fmmsn = c.u64("Fragment min max sum null count offset", D_FMMSN_OFF).value
        if v >= 16:
            ft.processed_conditions = c.u64("Processed conditions offset", D_PROC_OFF).value
        ft.complete = True

    g = cur.group(name, body, size=size, doc=D_FOOTER)
    ft.size = g.size
    g.value = ft.version
    g.display = (f"version {ft.version}, {'dense' if ft.dense else 'sparse'}, "
                 f"{len(ft.slots)} slots")
    return ft


def _slot_u64s(c: Cursor, title: str, slots: List[str], fdoc) -> List[int]:
    c.need(title, 8 * len(slots), f"{len(slots)} × uint64")
    vals: List[int] = []

    def body(gc: Cursor):
        for s in slots:
            vals.append(gc.u64(s, D_SLOT_ITEM).value)
    g = c.group(title, body, doc=fdoc)
    g.value = vals
    g.display = "[" + ", ".join(str(x) for x in vals[:12]) + (", …" if len(vals) > 12 else "") + "]"
    return vals


def _range(c: Cursor, dim, title: str) -> Tuple[Any, Any, bytes]:
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
            _typed_field(rc, "Range minimum", dim.datatype, start.value, D_RANGE_MIN)
            raw_max = rc.source.read(rc.pos, total - start.value)
            _typed_field(rc, "Range maximum", dim.datatype, total - start.value, D_RANGE_MAX)
        else:
            sz = dim.cell_size
            raw_min = rc.source.read(rc.pos, sz)
            _typed_field(rc, "Range minimum", dim.datatype, sz, D_RANGE_MIN)
            raw_max = rc.source.read(rc.pos, sz)
            _typed_field(rc, "Range maximum", dim.datatype, sz, D_RANGE_MAX)
        out.extend([raw_min, raw_max])
    g = c.group(title, body)
    lo = _pyvalue(dim.datatype, out[0]) if out else None
    hi = _pyvalue(dim.datatype, out[1]) if len(out) > 1 else None
    g.value = [lo, hi]
    g.display = f"[{_short(lo)}, {_short(hi)}]"
    return lo, hi, (out[0] + out[1]) if len(out) > 1 else b""


def _parse_ned(c: Cursor, schema: ArraySchema, ft: Footer) -> None:
    dims = schema.dimensions
    if ft.null_ned:
        if ft.version >= 5 and any(d.var for d in dims):
            return  # nothing is written for a null domain with var-sized dimensions
        size = 2 * len(dims) * (dims[0].cell_size if dims else 0)
        if size:
            c.raw("Non-empty domain (null)", size, D_NED_DUMMY)
        return
    ned: list = []

    def body(nc: Cursor):
        for d in dims:
            if ft.version < 5 and d.var:
                nc.fail(d.name, "var-sized dimensions need format ≥ 5")
            lo, hi, raw = _range(nc, d, d.name)
            ned.append((lo, hi))
            ft.ned_raw.append(raw)
    g = c.group("Non-empty domain", body, doc=D_NED)
    ft.non_empty_domain = ned
    g.value = [list(x) for x in ned]
    g.display = ", ".join(f"{d.name}: [{_short(lo)}, {_short(hi)}]"
                          for d, (lo, hi) in zip(dims, ned))


def _pyvalue(datatype: int, raw: bytes):
    if datatype in (4, 11, 12):
        try:
            return raw.decode("utf-8")
        except UnicodeDecodeError:
            return raw.decode("latin-1")
    v, _ = format_value(datatype, raw)
    return v


def _short(v) -> str:
    if isinstance(v, str):
        return repr(v) if len(v) <= 40 else repr(v[:40]) + "…"
    if isinstance(v, float):
        return format_scalar(v)
    return str(v)


def _typed_field(c: Cursor, name: str, datatype: Optional[int], size: int, fdoc) -> Node:
    """`size` bytes shown as values of `datatype` (raw bytes when unknown)."""
    if datatype is None or datatype not in DATATYPES:
        return c.raw(name, size, fdoc)
    c.need(name, size, f"{size} bytes of {DATATYPE_NAMES[datatype]}")
    raw = c.source.read(c.pos, size)
    if datatype in (4, 11, 12):
        v = _pyvalue(datatype, raw)
        return c.field(name, size, v, repr(v) if size else "''", "string", fdoc,
                       f"{DATATYPE_NAMES[datatype]}[{size}]")
    if datatype in (40, 42, 43, 17):
        return c.raw(name, size, fdoc)
    v, text = format_value(datatype, raw)
    if size % max(1, datatype_size(datatype)):
        n = c.raw(name, size, fdoc)
        n.mark(WARNING, f"{size} bytes is not a whole number of {DATATYPE_NAMES[datatype]}")
        return n
    return c.field(name, size, v, text, "field", fdoc, DATATYPE_NAMES[datatype].lower())


# ================================================================================================
# Sections
# ================================================================================================
def _payload_u64_list(num_name: str, arr_name: str, num_doc, arr_doc, item: str,
                      kind: str = "u64", sink: Optional[Callable[[np.ndarray], None]] = None):
    def parse(c: Cursor):
        n = c.length("u64", num_name, 8, num_doc, "values").value
        node = c.array(arr_name, kind, n, arr_doc, item_name=item + " {i}")
        if sink is not None:
            sink(node.data)
    return parse


def _parse_rtree(schema: Optional[ArraySchema], version: int):
    dims = schema.dimensions if schema is not None else None

    def parse(c: Cursor):
        if version < 5:
            c.u32("Dimension number", D_RT_DIMNUM)
        c.u32("Fanout", D_FANOUT)
        if version < 5:
            c.u8("Datatype", D_RT_TYPE, enum=DATATYPE_NAMES)
        levels = c.u32("Num levels", D_LEVELS).value
        if dims is None:
            if c.remaining:
                c.raw("Levels", c.remaining).mark(
                    WARNING, "no array schema: MBRs cannot be split into dimension ranges")
            return
        for li in range(levels):
            c.group(f"Level {li + 1}", lambda lc: _rtree_level(lc, dims, version))
    return parse


def _rtree_level(c: Cursor, dims, version: int) -> None:
    fixed = all(not d.var for d in dims) or version < 5
    n = c.length("u64", "Num MBRs", 2 if fixed else 16, D_NMBRS, "MBRs").value
    if fixed:
        mbr_size = sum(2 * d.cell_size for d in dims)
        c.need("MBRs", n * mbr_size, f"{n} MBRs × {mbr_size} B")
        base, src = c.pos, c.source

        def make(i: int) -> Node:
            m = Node(f"MBR {i + 1}", "struct", src, base + i * mbr_size, mbr_size, doc=D_MBR)
            run_parser(m.name, "struct", src, lambda mc: _mbr(mc, dims), None,
                       m.offset, m.end, node=m)
            m.value = [r.value for r in m.iter_children()]
            m.display = ", ".join(f"{d.name}: {r.display}" for d, r in zip(dims, m.iter_children()))
            return m
        node = Node("MBRs", "array", src, base, n * mbr_size, display=f"{n} MBRs", doc=D_MBR)
        node.set_lazy(LazyChildren(n, make))
        c.node.add(node)
        c.pos += n * mbr_size
    else:
        for i in range(n):
            g = c.group(f"MBR {i + 1}", lambda mc: _mbr(mc, dims), doc=D_MBR)
            g.display = ", ".join(f"{d.name}: {r.display}" for d, r in zip(dims, g.iter_children()))


def _mbr(c: Cursor, dims) -> None:
    for d in dims:
        _range(c, d, d.name)


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
    kind = prim_kind(dt) if dt is not None else None
    if kind is not None and cvn == 1 and nbytes % datatype_size(dt) == 0:
        return c.array(name, kind, nbytes // datatype_size(dt), fdoc, item_name=item)
    cell = datatype_size(dt) * cvn if dt is not None and cvn not in (0, VAR_NUM) else 0
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
    node.set_lazy(LazyChildren(n, make))
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
            v = _pyvalue(dt, raw) if dt is not None else None
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
                _typed_field(sc, "Min value", dt, n, D_F_MIN)
                n = sc.length("u64", "Max size", 1, D_F_MAX_SIZE, "bytes").value
                _typed_field(sc, "Max value", dt, n, D_F_MAX)
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


# ================================================================================================
# Lazily decoded per-slot arrays (the model side)
# ================================================================================================
class SectionLoader:
    """Decodes a section's payload on first use (no nodes) and caches per-slot arrays."""

    def __init__(self, source, footer: Footer, key: Optional[bytes], schema):
        self.source = source
        self.footer = footer
        self.key = key
        self.schema = schema
        self.cache: Dict[Tuple[str, int], Any] = {}
        self.errors: Dict[Tuple[str, int], str] = {}
        self.encrypted: Optional[bool] = None

    def offset_of(self, kind: str, slot: int) -> Optional[int]:
        offs = self.footer.sections.get(kind)
        if offs is None or slot >= len(offs):
            return None
        return offs[slot]

    def payload(self, offset: int) -> bytes:
        data, enc = decode_generic_tile(self.source, offset, self.key)
        self.encrypted = enc
        return data

    def u64s(self, kind: str, slot: int) -> Optional[np.ndarray]:
        k = (kind, slot)
        if k in self.cache:
            return self.cache[k]
        if k in self.errors:
            return None
        off = self.offset_of(kind, slot)
        if off is None:
            return None
        try:
            p = self.payload(off)
            if len(p) < 8:
                raise TileError("payload shorter than its count")
            n = struct.unpack_from("<Q", p, 0)[0]
            if 8 + 8 * n > len(p):
                raise TileError(f"{n} values do not fit in {len(p)} payload bytes")
            arr = np.frombuffer(p, "<u8", count=n, offset=8)
        except TileError as e:
            self.errors[k] = str(e)
            return None
        except Exception as e:  # corrupt bytes must never escape the model
            self.errors[k] = f"{type(e).__name__}: {e}"
            return None
        self.cache[k] = arr
        return arr

    def store(self, kind: str, slot: int, arr) -> None:
        if arr is not None:
            self.cache[(kind, slot)] = np.asarray(arr)


class SlotArrays(Sequence):
    """`tile_offsets[slot]` etc. of FragmentMetadata, decoded on first access (None when the
    section cannot be read, e.g. encrypted with no key)."""

    def __init__(self, loader: SectionLoader, kind: str, n: int):
        self.loader, self.kind, self.n = loader, kind, n

    def __len__(self) -> int:
        return self.n

    def __getitem__(self, i):
        if isinstance(i, slice):
            return [self[j] for j in range(*i.indices(self.n))]
        if i < 0:
            i += self.n
        if not 0 <= i < self.n:
            raise IndexError(i)
        return self.loader.u64s(self.kind, i)

    def error(self, i: int) -> Optional[str]:
        return self.loader.errors.get((self.kind, i))


# ================================================================================================
# The file
# ================================================================================================
def fragment_layout(schema: Optional[ArraySchema], footer: Footer) -> Dict[str, Any]:
    """Tile count and cells per tile implied by the footer (dense: from the non-empty domain
    expanded to tiles)."""
    out: Dict[str, Any] = {"tile_num": None, "cells_per_tile": None, "cell_num": None}
    if schema is None:
        return out
    if footer.dense:
        try:
            tiles, cpt = 1, 1
            for d, (lo, hi) in zip(schema.dimensions, footer.non_empty_domain or []):
                dlo = d.domain[0]
                ext = int(d.tile_extent)
                tiles *= (int(hi) - dlo) // ext - (int(lo) - dlo) // ext + 1
                cpt *= ext
            if footer.non_empty_domain:
                out.update(tile_num=tiles, cells_per_tile=cpt, cell_num=tiles * cpt)
        except (TypeError, ValueError, ZeroDivisionError):
            pass
    else:
        n = footer.sparse_tile_num
        out["tile_num"] = n
        out["cells_per_tile"] = schema.capacity
        out["cell_num"] = (n - 1) * schema.capacity + footer.last_tile_cell_num if n else 0
    return out


def _schema_for(ctx, name: Optional[str]) -> Optional[ArraySchema]:
    if ctx is None:
        return None
    arr = ctx.extra.get("array") if getattr(ctx, "extra", None) else None
    if arr is not None and hasattr(arr, "schema_for"):
        s = arr.schema_for(name)
        if s is not None:
            return s
    return ctx.schema


def parse_fragment_metadata_file(document, source, ctx) -> Tuple[Node, FragmentMetadata]:
    """Parse `__fragment_metadata.tdb` into (its node, the `FragmentMetadata` model).

    The footer is read from the end (u64 footer length, then the footer before it); every
    section is then parsed as a generic tile at the offset the footer gives. The schema is
    `ctx.extra["array"].schema_for(<footer schema name>)` when the context carries the array
    model, else `ctx.schema`; without one, the slot count is inferred and typed fields
    (non-empty domain, MBRs, mins/maxs) are shown raw with a warning. `ctx.key` decrypts the
    sections of encrypted arrays (the footer is plaintext). Never raises."""
    fm = FragmentMetadata(version=0)
    name = os.path.basename(getattr(source, "name", "__fragment_metadata.tdb")) or \
        "__fragment_metadata.tdb"
    key = getattr(ctx, "key", None)

    def parse(cur: Cursor):
        _parse_file(cur, document, ctx, key, fm)

    root = run_parser(name, "file", source, parse, ctx)
    root.data = fm
    root._children.sort(key=lambda n: (n.source is not source, n.offset))
    return root, fm


def _parse_file(cur: Cursor, document, ctx, key, fm: FragmentMetadata) -> None:
    src = cur.source
    size = src.size
    if size < 8:
        cur.fail("Footer length", f"a fragment metadata file ends with a u64 footer length; this "
                                  f"one has {size} bytes")
    tail = Cursor(src, size - 8, size, cur.node, ctx=ctx)
    flen_node = tail.u64("Footer length", D_FOOTER_LEN)
    flen = flen_node.value
    if flen > size - 8 or flen < 4:
        flen_node.mark(ERROR, f"Footer length {flen} does not fit before it ({size - 8} bytes)")
        raise ParseStop(flen_node)
    fstart = size - 8 - flen
    version = struct.unpack("<I", src.read(fstart, 4))[0]
    schema_name = None
    if version >= 10 and flen >= 12:
        k = struct.unpack("<Q", src.read(fstart + 4, 8))[0]
        if k <= flen - 12:
            schema_name = src.read(fstart + 12, k).decode("utf-8", "replace")
    schema = _schema_for(ctx, schema_name)
    fcur = Cursor(src, fstart, size - 8, cur.node, ctx=ctx)
    footer = parse_footer(fcur, schema, "Footer", size=flen)
    _fill_model(fm, footer, schema, src, key)
    if not footer.complete:
        return
    loader: SectionLoader = fm.extra["loader"]
    add_sections(cur.node, document, src, footer, schema, ctx, key, 0, fstart, loader)
    fm.extra["encrypted"] = _encrypted_of(cur.node, loader)


def _encrypted_of(node: Node, loader: SectionLoader) -> bool:
    src = loader.source
    off = loader.footer.rtree if loader.footer.rtree is not None else 0
    head = peek_generic_tile(src, off)
    return bool(head and head[3])


def _fill_model(fm: FragmentMetadata, footer: Footer, schema, src, key) -> None:
    fm.version = footer.version
    fm.schema_name = footer.schema_name
    fm.dense = footer.dense
    fm.non_empty_domain = footer.non_empty_domain
    fm.sparse_tile_num = footer.sparse_tile_num
    fm.last_tile_cell_num = footer.last_tile_cell_num
    fm.has_timestamps = footer.has_timestamps
    fm.has_delete_meta = footer.has_delete_meta
    fm.file_sizes = list(footer.file_sizes)
    fm.file_var_sizes = list(footer.file_var_sizes)
    fm.file_validity_sizes = list(footer.file_validity_sizes)
    loader = SectionLoader(src, footer, key, schema)
    n = len(footer.slots)
    fm.tile_offsets = SlotArrays(loader, "tile_offsets", n)
    fm.tile_var_offsets = SlotArrays(loader, "tile_var_offsets", n)
    fm.tile_var_sizes = SlotArrays(loader, "tile_var_sizes", n)
    fm.tile_validity_offsets = SlotArrays(loader, "tile_validity_offsets", n)
    layout = fragment_layout(schema, footer)
    fm.tile_num = layout["tile_num"] or 0
    fm.extra.update(loader=loader, footer=footer, slots=list(footer.slots), schema=schema,
                    cells_per_tile=layout["cells_per_tile"], cell_num=layout["cell_num"],
                    tile_sums=SlotArrays(loader, "tile_sums", n),
                    tile_null_counts=SlotArrays(loader, "tile_null_counts", n))


def section_list(footer: Footer) -> List[Tuple[int, str, str, int]]:
    """[(offset, node name, kind, slot)] of every section, in file order."""
    out = []
    if footer.rtree is not None:
        out.append((footer.rtree, "R-Tree", "rtree", -1))
    for kind, offs in footer.sections.items():
        for i, off in enumerate(offs):
            slot = footer.slots[i] if i < len(footer.slots) else f"slot {i + 1}"
            out.append((off, f"{SECTION_TITLES[kind]}: {slot}", kind, i))
    if footer.fmmsn is not None:
        out.append((footer.fmmsn, "Fragment min max sum null count", "fmmsn", -1))
    if footer.processed_conditions is not None:
        out.append((footer.processed_conditions, "Processed conditions", "processed", -1))
    out.sort(key=lambda t: t[0])
    return out


def _section_parser(kind: str, slot: int, footer: Footer, schema, loader: SectionLoader):
    slots = footer.slots
    sname = slots[slot] if 0 <= slot < len(slots) else None
    dt, cvn = slot_field(schema, sname) if sname else (None, 1)

    def sink_for(k):
        return lambda arr: loader.store(k, slot, arr)
    if kind == "rtree":
        return _parse_rtree(schema, footer.version)
    if kind == "tile_offsets":
        return _payload_u64_list("Num tile offsets", "Tile offsets", D_NUM_OFFSETS, D_OFFSETS,
                                 "Tile offset", sink=sink_for(kind))
    if kind == "tile_var_offsets":
        return _payload_u64_list("Num tile offsets", "Tile var offsets", D_NUM_OFFSETS,
                                 D_VAR_OFFSETS, "Tile var offset", sink=sink_for(kind))
    if kind == "tile_var_sizes":
        return _payload_u64_list("Num tile sizes", "Tile var sizes", D_NUM_SIZES, D_VAR_SIZES,
                                 "Tile var size", sink=sink_for(kind))
    if kind == "tile_validity_offsets":
        return _payload_u64_list("Num tile offsets", "Tile validity offsets", D_NUM_OFFSETS,
                                 D_VALIDITY_OFFSETS, "Tile validity offset", sink=sink_for(kind))
    if kind in ("tile_mins", "tile_maxs"):
        var = cvn == VAR_NUM
        return _parse_minmax(dt, cvn, var)
    if kind == "tile_sums":
        return _payload_u64_list("Num values", "Tile sums", D_NUM_VALUES, D_SUMS, "Tile",
                                 kind=sum_kind(dt), sink=sink_for(kind))
    if kind == "tile_null_counts":
        return _payload_u64_list("Num values", "Tile null counts", D_NUM_VALUES, D_NULL_COUNTS,
                                 "Tile", sink=sink_for(kind))
    if kind == "fmmsn":
        return _parse_fmmsn(slots, schema)
    if kind == "processed":
        return _parse_processed
    return None


def add_sections(parent: Node, document, src, footer: Footer, schema, ctx, key, base: int,
                 limit: int, loader: SectionLoader) -> None:
    """Add a node per section under `parent` (offsets relative to `base`, sections must end
    by `limit`)."""
    secs = section_list(footer)
    seen: Dict[int, str] = {}
    ends = [o for o, *_ in secs] + [limit - base]
    for idx, (off, name, kind, slot) in enumerate(secs):
        start = base + off
        nxt = min([base + e for e in ends if e > off] or [limit])
        if off in seen:
            parent.add(Node(name, "error", src, start, 0, status=ERROR,
                            message=f"{name}: offset {off} is also the offset of {seen[off]}"))
            continue
        seen[off] = name
        if start >= limit:
            parent.add(Node(name, "error", src, min(start, src.size), 0, status=ERROR,
                            message=f"{name}: offset {off} is beyond the sections (they end at "
                                    f"{limit - base})"))
            continue
        parse_fn = _section_parser(kind, slot, footer, schema, loader)
        pname = f"{getattr(src, 'name', 'fragment metadata')} {name}"
        head = peek_generic_tile(src, start)
        region = nxt - start
        if head is not None and head[0] == region and max(region, head[4]) > LAZY_BYTES:
            parent.add(_lazy_section(document, src, start, region, name, parse_fn, pname, ctx,
                                     head))
            continue
        sub = Cursor(src, start, nxt, parent, ctx=ctx)
        try:
            gt = parse_generic_tile(sub, document, name, parse_fn, pname, ctx)
            gt.node.doc = D_SECTION
            _section_display(gt.node, kind)
        except ParseStop:
            pass


def _lazy_section(document, src, start, region, name, parse_fn, pname, ctx, head) -> Node:
    node = Node(name, "struct", src, start, region, doc=D_SECTION,
                display=f"generic tile, {head[4]} B → {head[2]} B (expand to decode)")
    built: Dict[str, List[Node]] = {}

    def kids() -> List[Node]:
        if "k" not in built:
            scratch = Node(name, "struct", src, start, region)
            sub = Cursor(src, start, start + region, scratch, ctx=ctx)
            try:
                parse_generic_tile(sub, document, name, parse_fn, pname, ctx)
            except ParseStop:
                pass
            inner = scratch.children[0] if scratch.children else scratch
            ks = list(inner.children)
            for k in ks:
                k.parent = None
            built["k"] = ks
        return built["k"]

    node.set_lazy(LazyChildren(2, lambda i: kids()[i] if i < len(kids()) else
                               Node("missing", "error", src, start, 0, status=ERROR,
                                    message="section could not be parsed")))
    return node


def _section_display(node: Node, kind: str) -> None:
    tile = node.find("Tile")
    payload = tile.find("Payload") if tile is not None else None
    if payload is None:
        return
    if kind in ("tile_offsets", "tile_var_offsets", "tile_var_sizes", "tile_validity_offsets",
                "tile_sums", "tile_null_counts"):
        arr = next((c for c in payload.iter_children() if c.kind == "array"), None)
        if arr is not None:
            node.display = arr.display
    elif kind == "rtree":
        lv = payload.find("Num levels")
        if lv is not None:
            node.display = f"{lv.value} level(s)"
